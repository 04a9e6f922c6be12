"""Tables and views: scan planning (more to come: transactions, snapshot producers)."""

from __future__ import annotations

from icenb.table.scan_planning import ScanPlan, plan_files

__all__ = ["ScanPlan", "plan_files"]
