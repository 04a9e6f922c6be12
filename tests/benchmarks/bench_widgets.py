"""Benchmark: the widgets on a table with 10,000 snapshots and 1,000 manifests.

Issue "Widgets, part 1", Done when: print the time to construct each widget, click -> summary
and metadata panels (target <= 150 ms server side), a slider step (<= 100 ms), the A -> B file
difference (<= 1 s), and the size of the first render (bounded like the reprs). The table is
the one ``bench_display.py`` builds (branches, tags, a rollback; the last 5 main snapshots
have real manifest lists, the current one listing all 1,000 manifests). A view with 500
versions stands in for a long view history.

"Server side" is the Python work a click triggers before the kernel is free again: the
widget's trait change handler, synchronously. Rows are read afterwards in a background thread
(measured separately as "rows page ready"). The peer, in the same run: PyIceberg 0.12 doing
what an analyst does without a widget for the same answers (load the table, the snapshot's
files, the files of both snapshots). Nothing asserts on time; figures print with their
targets, and the process's peak RSS at the end.

Issue "Widgets, part 2" adds (``run_authoring``): the preview of a staged schema change
(target <= 150 ms), a pruning-lab count and a delete dry run on the 100,000-file table of
``bench_planning.py`` (metadata only, <= 1 s each), against PyIceberg planning the same filter
(what a dry run by hand is).

Run: ``.venv/bin/python tests/benchmarks/bench_widgets.py [--authoring]`` or
``.venv/bin/python -m pytest -s tests/benchmarks/bench_widgets.py``.
"""

from __future__ import annotations

import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import icenb
from icenb.widgets import PartitionEvolution, SchemaEvolution, TimeTravel, ViewVersions
from tests.benchmarks.bench_display import build
from tests.benchmarks.bench_planning import filters, table_metadata_file

RUNS = 5


def _ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000, out


def _median(fn: Callable[[], Any], runs: int = RUNS) -> float:
    return statistics.median(_ms(fn)[0] for _ in range(runs))


def _state_bytes(widget: Any) -> int:
    """Bytes of every widget model's state sent to the browser on first display."""
    seen: set[str] = set()
    total = 0

    def walk(wd: Any) -> None:
        nonlocal total
        if wd.model_id in seen:
            return
        seen.add(wd.model_id)
        state = wd.get_state()
        total += len(json.dumps(state, default=str).encode())
        for value in wd.__dict__.get("_trait_values", {}).values():
            items = value if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if hasattr(item, "model_id") and hasattr(item, "get_state"):
                    walk(item)

    walk(widget)
    return total


def row(name: str, ms: float | None, target: float | None = None, note: str = "") -> None:
    figure = "n/a" if ms is None else f"{ms:9.1f}"
    tgt = "" if target is None else f"{target:7.0f}"
    flag = "  OVER TARGET" if ms is not None and target is not None and ms > target else ""
    print(f"  {name:<52} {figure:>9} {tgt:>7}{flag}{('  ' + note) if note else ''}",
          flush=True)


def run() -> None:
    directory = Path(tempfile.mkdtemp(prefix="icenb-bench-widgets-"))
    try:
        built = build(directory)
        path = str(built.metadata_file)
        t = icenb.open(path)
        md = t.metadata
        main = [s.snapshot_id for s in md.ancestors(md.current_snapshot_id)]
        real = main[:4]          # newest first, with manifest lists on disk
        print(f"table: {len(md.snapshots):,} snapshots, 1,000 manifests (current), "
              f"{len(md.refs)} refs")
        print(f"  {'step':<52} {'ms':>9} {'target':>7}")

        ms, tt = _ms(lambda: TimeTravel(t))
        row("TimeTravel(t): construct (cold)", ms)
        tt._work.wait()
        warm: list[TimeTravel] = []
        row("TimeTravel(t): construct (warm)",
            _median(lambda: warm.append(TimeTravel(t)), 3))
        for other in warm:   # their row reads run in background threads: not during clicks
            other._work.wait()
        row("first render: widget state sent", None,
            note=f"{_state_bytes(tt) / 1024:,.0f} KiB (tree "
                 f"{len(tt.tree.svg) / 1024:,.0f} KiB SVG, strip {len(tt.strip.svg) / 1024:,.0f}"
                 f" KiB SVG, {len(tt.strip.nodes):,} strip nodes)")
        bundle = tt._repr_mimebundle_()
        row("static snapshot (text/html + text/plain)", None,
            note=f"{len(bundle['text/html']) / 1024:,.0f} KiB + "
                 f"{len(bundle['text/plain']) / 1024:,.1f} KiB")

        # Clicks on the snapshots whose manifest lists exist (1,000 manifests in the current
        # one), first cold, then every tree node (most lists are absent: an error panel).
        cold = []
        for sid in real:
            node = tt.tree.node_for(snapshot_id=sid)
            cold.append(_ms(lambda node=node: setattr(tt.tree, "selected", node))[0])
            tt._work.wait()
        row("click -> summary + metadata panels, first time (max of 4)", max(cold), 150)
        nodes = [k for k, n in tt.tree.nodes.items() if n["snapshot_id"]]
        clicks = []
        for node in nodes * 2:
            clicks.append(_ms(lambda node=node: setattr(tt.tree, "selected", node))[0])
            tt._work.wait()
        row(f"click -> summary + metadata panels (median of {len(clicks)})",
            statistics.median(clicks), 150)
        row(f"click -> summary + metadata panels (max of {len(clicks)})", max(clicks), 150)
        ms, _ = _ms(lambda: (setattr(tt.tree, "selected", f"s{real[0]}"), tt._work.wait()))
        row("click -> rows page ready (1,000 manifests, pyarrow)", ms)
        tt.ref_picker.value = "main"
        steps = []
        for i in range(1, 13):
            value = tt.slider.max - i
            steps.append(_ms(lambda value=value: setattr(tt.slider, "value", value))[0])
        tt._work.wait()
        row("slider step (median)", statistics.median(steps), 100)
        tt.select(real[3])
        ms, d = _ms(lambda: tt.compare(real[3], real[0]))
        row("A -> B file difference (3 commits apart)", ms, 1000,
            note=f"+{d.data_added.count}/-{d.data_removed.count} data files")
        tt._diff_work.wait()
        tt._work.wait()
        ms, _ = _ms(lambda: tt.compare(real[3], real[0]))
        row("A -> B file difference, warm", ms, 1000)
        ms, _ = _ms(lambda: (tt.compare(real[3], real[0]), tt._diff_work.wait()))
        row("A -> B rows removed and added ready (background)", ms)

        folds = [k for k, n in tt.tree.nodes.items() if n["fold"]]
        if folds:
            ms, _ = _ms(lambda: tt.tree.expand(folds[0]))
            row("expand a folded run", ms)

        # a view with a long history
        wh = icenb.warehouse(directory / "views")
        wh.create_table("db.t", "id long")
        v = wh.create_view("db.v", "SELECT id FROM db.t", schema="id long")
        v.update_properties({"version.history.num-entries": "1000"})
        for i in range(499):
            v.replace(f"SELECT id + {i + 1} AS id FROM db.t", schema="id long")
        ms, vv = _ms(lambda: ViewVersions(v))
        row("ViewVersions(v): construct, 500 versions", ms)
        vnodes = [k for k, n in vv.graph.nodes.items() if n["version_id"]]
        ms = statistics.median(_ms(lambda k=k: setattr(vv.graph, "selected", k))[0]
                               for k in vnodes[:10])
        row("ViewVersions: click -> SQL + schema panels (median)", ms, 150)
        ms, _ = _ms(lambda: vv.compare(1, 500))
        row("ViewVersions: compare 1 -> 500", ms, 1000)
        row("ViewVersions first render: widget state sent", None,
            note=f"{_state_bytes(vv) / 1024:,.0f} KiB")

        peer(path, real)
        ms, se = _ms(lambda: SchemaEvolution(t))
        row("SchemaEvolution(t): construct (10,000 snapshots)", ms)
        stage = [_ms(lambda i=i: se.pending.add_column(f"c{i}", "int"))[0] for i in range(5)]
        row("stage a schema change -> preview (median of 5)", statistics.median(stage), 150,
            note=f"{len(se.changes)} staged, preview schema {se.preview.schema_id}"
            if se.preview is not None else "")
        run_authoring()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"\npeak RSS of this process: {peak:,.0f} MiB")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def run_authoring() -> None:
    """The pruning lab and the delete dry run on the 100,000-file table (metadata only)."""
    path = table_metadata_file("100k")
    t = icenb.open(str(path))
    print(f"table: {path.parent.parent.name} (100,000 data files in 100 manifests)")
    ms, pe = _ms(lambda: PartitionEvolution(t))
    row("PartitionEvolution(t): construct", ms)
    for flt in filters()[1:]:
        ms, p = _ms(lambda flt=flt: pe.prune(flt.icenb))
        row(f"pruning lab '{flt.name}' (cold)", ms, 1000,
            note=f"kept {p.kept:,}, pruned {p.pruned:,}")
        row(f"pruning lab '{flt.name}' (warm, median)",
            _median(lambda flt=flt: pe.prune(flt.icenb), 3), 1000)
    for flt in filters()[1:]:
        t = icenb.open(str(path))  # a fresh table: no decoded manifest cached
        ms, d = _ms(lambda flt=flt, t=t: t.delete_dry_run(flt.icenb))
        row(f"delete dry run '{flt.name}' (cold)", ms, 1000,
            note=f"{len(d.candidates):,} candidates, {len(d.whole):,} whole")
        row(f"delete dry run '{flt.name}' (warm, median)",
            _median(lambda flt=flt, t=t: t.delete_dry_run(flt.icenb), 3), 1000)
    try:
        from pyiceberg.table import StaticTable
    except ImportError:
        print("  PyIceberg not importable: peer skipped")
        return
    print("peer: PyIceberg 0.12")
    for flt in filters()[1:]:
        ms, files = _ms(lambda flt=flt: list(
            StaticTable.from_metadata(str(path)).scan(row_filter=flt.pyiceberg()).plan_files()))
        row(f"PyIceberg plan_files '{flt.name}' (the dry run by hand)", ms,
            note=f"{len(files):,} files")


def peer(path: str, real: list[int]) -> None:
    """PyIceberg answering the same questions without a widget (no rich display)."""
    try:
        from pyiceberg.table import StaticTable
    except ImportError:
        print("  PyIceberg not importable: peer skipped")
        return
    print("peer: PyIceberg 0.12")
    ms, table = _ms(lambda: StaticTable.from_metadata(path))
    row("PyIceberg StaticTable.from_metadata", ms)
    ms, _ = _ms(lambda: table.inspect.files(real[0]))
    row("PyIceberg inspect.files(snapshot) (what a click shows)", ms)
    ms, _ = _ms(lambda: (table.inspect.files(real[3]), table.inspect.files(real[0])))
    row("PyIceberg files of A and B (to diff by hand)", ms)


def test_bench_widgets() -> None:
    """Prints the figures (collected only when this file is named explicitly)."""
    run()


if __name__ == "__main__":
    if "--authoring" in sys.argv:
        run_authoring()
        print(f"\npeak RSS of this process: "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")
    else:
        run()
