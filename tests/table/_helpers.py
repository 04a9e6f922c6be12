"""Helpers shared by the table tests: Java reads of every snapshot, compared with icenb's."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa

from icenb.table import Table
from tests.reference.java_read import normalize
from tests.reference_fixtures import run_reference_batch
from tests.table.explore.test_inspect import compare

T = TypeVar("T")

#: A Java result's key: (table name, "rows" or a metadata table, snapshot id).
Key = tuple[Any, str, int]


def normalized_rows(table: pa.Table) -> list[list[Any]]:
    """Rows as java_read.py normalizes Spark's, sorted by the first column."""
    return sorted(([normalize(v) for v in r.values()] for r in table.to_pylist()),
                  key=lambda r: r[0])


def snapshot_requests(name: Any, metadata_file: str, snapshot_id: int,
                      tables: Iterable[str]) -> dict[Key, dict[str, Any]]:
    """java_read_written.py requests for one snapshot: its rows and its metadata ``tables``."""
    out: dict[Key, dict[str, Any]] = {
        (name, "rows", snapshot_id): {"metadata_file": metadata_file,
                                      "snapshot_id": snapshot_id}}
    for kind in tables:
        out[(name, kind, snapshot_id)] = {"location": metadata_file, "table": kind,
                                          "snapshot_id": snapshot_id}
    return out


def run_keyed(script: str, requests: Mapping[Key, dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """Run ``script`` on the requests in one JVM; each result under its request's key."""
    return dict(zip(requests, run_reference_batch(script, list(requests.values())),
                    strict=True))


def assert_java_reads_snapshot(t: Table, name: Any, snapshot_id: int,
                               java: Mapping[Key, dict[str, Any]], tables: Iterable[str],
                               what: Any = None) -> None:
    """Java's rows of the snapshot equal icenb's, and its metadata ``tables`` agree."""
    theirs = java[(name, "rows", snapshot_id)]
    assert theirs["ok"], theirs
    ours = normalized_rows(t.at(snapshot_id).to_arrow())
    assert sorted(theirs["rows"], key=lambda r: r[0]) == ours, (name, snapshot_id, what)
    for kind in tables:
        assert compare(getattr(t.inspect, kind)(snapshot_id),
                       java[(name, kind, snapshot_id)]) == [], (name, kind, snapshot_id, what)


def write_scenarios(warehouse: Any, scenarios: Iterable[Any], ddl: str,
                    run: Callable[[Table], T]) -> dict[str, T]:
    """Create each scenario's table (its ``name``, ``partition_by`` and ``format_version``)
    with ``ddl`` and run ``run`` on it; what each run returned, by table name."""
    return {sc.name: run(warehouse.create_table(sc.name, ddl, partition_by=list(sc.partition_by),
                                                format_version=sc.format_version))
            for sc in scenarios}


@dataclass(frozen=True)
class Scenario:
    """A table to write: its name, format version and partition terms."""

    name: str
    format_version: int
    partition_by: tuple[str, ...] = ()


def v123_scenarios(partition_column: str) -> list[Scenario]:
    """v1, v2 and v3, each unpartitioned (``db.u<N>``) and by ``partition_column`` (``db.p<N>``)."""
    return [Scenario(f"db.{'p' if part else 'u'}{v}", v, part)
            for v in (1, 2, 3) for part in ((), (partition_column,))]


def written_by_another_engine(t: Table, properties: Mapping[str, str]) -> None:
    """Put table properties into ``t``'s metadata as another engine would: without icenb's
    check at the door (``set_properties`` refuses values icenb cannot use, issue 17), so a
    test can check what icenb does with a bad value it finds."""
    from icenb.spec.table_updates import SetProperties
    from icenb.table.commit.metadata_change import MetadataChange, commit_change, uuid_requirement

    change = MetadataChange([SetProperties(dict(properties))], uuid_requirement(t.metadata))
    commit_change(t, lambda _metadata: change)
