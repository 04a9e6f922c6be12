"""Tables and views: the facades (Table, View, Scan, Warehouse), scans and scan planning,
and where the widget layer plugs in (``interactive``)."""

from __future__ import annotations

from icenb.table.interactive import build_widget, register_widget
from icenb.table.row_level.dry_run import DeleteDryRun
from icenb.table.scan import Scan
from icenb.table.scan.planning import ScanPlan, plan_files
from icenb.table.table import Table, load_table, open_table, timestamp_to_ms
from icenb.table.view import View, load_view, open_location, open_view

__all__ = ["DeleteDryRun", "Scan", "ScanPlan", "Table", "View", "build_widget", "load_table",
           "load_view", "open_location", "open_table", "open_view", "plan_files", "register_widget",
           "timestamp_to_ms"]
