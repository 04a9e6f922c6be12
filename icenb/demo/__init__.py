"""The demo warehouse: tables that show every concept the notebooks and widgets teach.

``python -m icenb.demo PATH`` (or :func:`build`) writes it without Spark, in a few seconds:

- ``shop.events`` (v3): appends over four days partitioned by ``day(ts)``; a column rename and
  an ``int`` -> ``long`` promotion; partition evolution to ``bucket(4, id)``; merge-on-read
  deletes (deletion vectors); a copy-on-write update; a ``dev`` branch, tags, a rollback, a
  cherry-pick and an expiry.
- ``shop.orders`` (v2): position deletes (merge-on-read).
- ``shop.customers`` (v2): equality deletes (an upsert), which PyIceberg 0.12 cannot read.
- ``shop.legacy`` (v1, then upgraded to v2).
- ``shop.events_v3`` and ``shop.events_v4``: the same commits on format v3 and on the
  EXPERIMENTAL v4 single-file-commits layout (docs/v4-layout.md), side by side.
- ``shop.big_spenders`` : a view with three versions, the last in two dialects.

The same rows and operations each time (snapshot ids and times are new on each build). A
second build of an existing demo leaves it as it is; ``force=True`` (``--force``) rebuilds it,
deleting only what a build wrote (the ``shop`` namespace's tables, views and folder).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

from icenb.errors import ValidationError
from icenb.progress import BUILDING_DEMO, progress
from icenb.spec.properties import WRITE_DELETE_MODE
from icenb.table.table import Table
from icenb.table.warehouse import Warehouse

__all__ = ["MARKER", "NAMESPACE", "SCRATCH_MARKER", "build", "scratch"]

#: The file that marks a finished demo build (its content: the layout version).
MARKER = ".icenb-demo"
#: The namespace every demo table and view lives in.
NAMESPACE = "shop"
#: The file that marks a folder :func:`scratch` made (and may therefore empty again).
SCRATCH_MARKER = ".icenb-scratch"
_LAYOUT = "1"
_KINDS = ("click", "view", "cart", "buy")
_START = dt.datetime(2026, 3, 2, 8, 0)


def _events(day: int, first_id: int, n: int) -> list[dict[str, object]]:
    """``n`` events of day ``day`` (0-based), ids from ``first_id``: deterministic rows."""
    out: list[dict[str, object]] = []
    for k in range(n):
        i = first_id + k
        out.append({"id": i, "ts": _START + dt.timedelta(days=day, minutes=37 * k),
                    "kind": _KINDS[i % 4], "qty": 1 + i % 5,
                    "price": Decimal(f"{(i * 7) % 50 + 0.99:.2f}")})
    return out


def _renamed(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Rows after the rename of ``kind`` to ``event_type``."""
    return [{("event_type" if k == "kind" else k): v for k, v in r.items()} for r in rows]


def _build_events(t: Table) -> None:
    """The rich v3 history of ``shop.events``."""
    t.append(_events(0, 1, 12))
    t.create_tag("day-1")
    t.append(_events(1, 13, 12))
    with t.update_schema() as u:
        u.rename_column("kind", "event_type")
        u.update_column("qty", "long")  # int -> long: a promotion
    t.append(_renamed(_events(2, 25, 12)))
    with t.update_spec() as s:
        s.add_field("bucket(4, id)")
    t.append(_renamed(_events(3, 37, 12)))
    t.delete("event_type = 'view'", mode="merge-on-read")  # deletion vectors
    t.update({"price": Decimal("0.00")}, "event_type = 'cart' and id < 20",
             mode="copy-on-write")
    t.create_tag("release-1")
    # A mistake, rolled back: the snapshot stays in the history, off main.
    mistake = t.delete("true", mode="copy-on-write")
    t.rollback_to("release-1")
    # Work on a branch; one append is cherry-picked onto main.
    t.create_branch("dev")
    t.append(_renamed(_events(3, 49, 4)), branch="dev")
    picked = t.append(_renamed(_events(3, 53, 2)), branch="dev")
    t.cherry_pick(picked.snapshot_id)  # not main's child: its files are re-added on main
    # Expire the rolled-back mistake (nothing references it any more).
    if mistake is not None:
        t.expire_snapshots(snapshot_ids=[mistake.snapshot_id])


def _build_twins(t: Table) -> None:
    """The same commits on a v3 and a v4 table."""
    rows = [{"id": i, "ts": _START + dt.timedelta(hours=5 * i), "kind": _KINDS[i % 4]}
            for i in range(1, 41)]
    t.append(rows[:20])
    t.append(rows[20:])
    t.delete("kind = 'view'", mode="merge-on-read")
    t.update({"kind": "purchase"}, "kind = 'buy'", mode="merge-on-read")


def _remove_demo(wh: Warehouse, root: Path) -> None:
    """Drop what an earlier build wrote (``--force``): its tables and views from the catalog,
    its namespace folder and its marker; nothing else of the warehouse."""
    for name in wh.tables(NAMESPACE):
        wh.drop_table(name)
    for name in wh.views(NAMESPACE):
        wh.drop_view(name)
    wh.catalog.drop_namespace((NAMESPACE,))
    if (root / NAMESPACE).is_dir():
        shutil.rmtree(root / NAMESPACE)
    (root / MARKER).unlink(missing_ok=True)


@contextlib.contextmanager
def _building(root: Path) -> Iterator[None]:
    """One build at a time per warehouse (two notebooks opening the demo at once: the second
    waits, then finds it built): an exclusive lock on ``<root>/.icenb-demo.lock`` where the
    platform has ``fcntl``."""
    root.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): builds are not serialized
        yield
        return
    with open(root / (MARKER + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(path: str | os.PathLike[str], *, force: bool = False) -> Warehouse:
    """Write the demo warehouse at ``path`` (see the module docstring); the warehouse.

    Idempotent: a finished demo (its marker file present) is left as it is unless ``force``.
    The demo owns the ``shop`` namespace only: other tables of the warehouse are kept, and a
    ``shop`` namespace that is not the demo's is refused, never overwritten. Concurrent builds
    of one warehouse run one after the other.
    """
    import icenb

    root = Path(path)
    marker = root / MARKER
    if marker.exists() and not force:
        return icenb.warehouse(root)
    with _building(root):
        if marker.exists() and not force:  # built while this one waited
            return icenb.warehouse(root)
        return _build(root, marker)


def _build(root: Path, marker: Path) -> Warehouse:
    import icenb

    wh = icenb.warehouse(root)
    if (NAMESPACE,) in wh.namespaces():
        if not marker.exists():
            raise ValidationError(f"the warehouse already has a {NAMESPACE!r} namespace that is "
                                  "not icenb's demo: build the demo elsewhere",
                                  field="path", value=str(root))
        _remove_demo(wh, root)
    ns = NAMESPACE
    with progress(BUILDING_DEMO, total=6) as step:  # a bar when it takes over a second
        events = wh.create_table(f"{ns}.events", "id long not null, ts timestamp, kind string, "
                                 "qty int, price decimal(9, 2)", partition_by=["day(ts)"],
                                 format_version=3)
        _build_events(events)
        step.advance()

        orders = wh.create_table(f"{ns}.orders", "order_id long not null, customer string, "
                                 "status string, total decimal(9, 2)", format_version=2,
                                 properties={WRITE_DELETE_MODE: "merge-on-read"})
        orders.append([{"order_id": i, "customer": f"c{i % 7}", "status": "open",
                        "total": Decimal(f"{i * 3 + 0.5:.2f}")} for i in range(1, 31)])
        orders.delete("order_id in (10, 20, 30)")  # position deletes
        orders.update({"status": "shipped"}, "order_id <= 5")  # merge-on-read: more of them

        customers = wh.create_table(f"{ns}.customers", "customer string not null, tier string",
                                    format_version=2)
        customers.append([{"customer": f"c{i}", "tier": "basic"} for i in range(7)])
        customers.upsert([{"customer": "c1", "tier": "gold"}, {"customer": "c7", "tier": "new"}],
                         on="customer")  # equality deletes + the new rows
        step.advance()

        legacy = wh.create_table(f"{ns}.legacy", "id long, note string", format_version=1)
        legacy.append([{"id": i, "note": f"written in v1 #{i}"} for i in range(1, 11)])
        legacy.upgrade(2)
        legacy.append([{"id": i, "note": f"written in v2 #{i}"} for i in range(11, 16)])
        step.advance()

        for version in (3, 4):
            twin = wh.create_table(f"{ns}.events_v{version}",
                                   "id long, ts timestamp, kind string",
                                   partition_by=["day(ts)"], format_version=version,
                                   properties={WRITE_DELETE_MODE: "merge-on-read"})
            _build_twins(twin)
            step.advance()

        view = wh.create_view(f"{ns}.big_spenders",
                              "SELECT customer, total FROM orders WHERE total > 50",
                              schema="customer string, total decimal(9, 2)",
                              comment="customers whose orders are large")
        view.replace("SELECT customer, total FROM orders WHERE total > 60",
                     schema="customer string, total decimal(9, 2)")
        view.replace({"spark": "SELECT customer, sum(total) AS total FROM orders "
                               "GROUP BY customer HAVING sum(total) > 100",
                      "trino": "SELECT customer, sum(total) AS total FROM orders "
                               "GROUP BY customer HAVING sum(total) > 100"},
                     schema="customer string, total decimal(19, 2)")
        step.advance()
    marker.write_text(f"{_LAYOUT}\n{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    return wh


def scratch(name: str, *, root: str | os.PathLike[str] = "scratch") -> Warehouse:
    """A fresh, empty warehouse at ``root/name`` for a notebook that writes its own tables.

    Notebooks and lessons keep their tables here (``notebooks/scratch/<name>`` when run from
    ``notebooks/``), not in a temporary folder, so what they show names a folder of the project.
    Running the notebook again starts from an empty warehouse: a folder this function made (its
    :data:`SCRATCH_MARKER` file) is removed first. An existing folder without the marker is never
    removed: unless it is empty, it is refused.
    """
    import icenb

    if not name or any(not (c.isalnum() or c in "._-") for c in name) or name.startswith("."):
        raise ValidationError(f"a scratch warehouse name is letters, digits, '.', '_' and '-': "
                              f"{name!r}", field="name", value=name)
    path = Path(root) / name
    if path.exists():
        if (path / SCRATCH_MARKER).is_file():
            shutil.rmtree(path)
        elif not path.is_dir() or any(path.iterdir()):
            raise ValidationError(f"{path} exists and is not a scratch warehouse made by "
                                  "icenb.demo.scratch: refusing to empty it", field="path",
                                  value=str(path))
    path.mkdir(parents=True, exist_ok=True)
    (path / SCRATCH_MARKER).write_text(name + "\n", encoding="utf-8")
    return icenb.warehouse(path)
