"""Interactive widgets (ipywidgets 8 + anywidget), built on the faces of ``icenb.table`` and
``icenb.display`` (DESIGN.md, widgets/): they act through the API a user calls and draw with
the reprs' renderers.

- :class:`TimeTravel` (``t.time_travel()``): the table as it was at any snapshot, and A/B
  differences.
- :class:`ViewVersions` (``v.versions_widget()``): a view's versions, SQL and differences.
- :class:`SchemaEvolution`, :class:`PartitionEvolution`, :class:`Deletes`: stage a change,
  see why a refused one is refused, preview it, commit it and see what it did.
- :class:`GraphView`: any icenb graph as clickable SVG.
"""

from __future__ import annotations

from icenb.widgets.deletes import Deletes
from icenb.widgets.graph_view import GraphView
from icenb.widgets.partition_evolution import PartitionEvolution
from icenb.widgets.schema_evolution import SchemaEvolution
from icenb.widgets.time_travel import TimeTravel
from icenb.widgets.view_versions import ViewVersions

__all__ = ["Deletes", "GraphView", "PartitionEvolution", "SchemaEvolution", "TimeTravel",
           "ViewVersions"]
