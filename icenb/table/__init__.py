"""Tables and views: read-only tables, scans, scan planning (more to come: transactions,
snapshot producers)."""

from __future__ import annotations

from icenb.table.scan import Scan
from icenb.table.scan_planning import ScanPlan, plan_files
from icenb.table.table import Table, load_table, open_table
from icenb.table.view import View, load_view, open_location, open_view

__all__ = ["Scan", "ScanPlan", "Table", "View", "load_table", "load_view", "open_location",
           "open_table", "open_view", "plan_files"]
