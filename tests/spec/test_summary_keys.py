"""Snapshot summary keys are declared once, in spec/snapshot.py (producers and pictures import
them), so a producer and the display can never disagree on a key's spelling."""

from __future__ import annotations

import ast
from pathlib import Path

from icenb.spec import snapshot

PACKAGE = Path(__file__).resolve().parents[2] / "icenb"


def test_summary_keys_are_declared_once() -> None:
    keys = {getattr(snapshot, n): n for n in snapshot.__all__
            if n.isupper() and isinstance(getattr(snapshot, n), str)
            and ("-" in getattr(snapshot, n) or "." in getattr(snapshot, n))}
    assert "added-data-files" in keys and "total-records" in keys and "wap.id" in keys
    elsewhere = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).as_posix() == "spec/snapshot.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in keys:
                elsewhere.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}")
    assert not elsewhere, "summary keys written outside spec/snapshot.py:\n" + \
        "\n".join(elsewhere)
