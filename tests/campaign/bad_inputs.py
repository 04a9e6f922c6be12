"""Campaign: bad input at every door of the user-facing API (issue 17).

Each case is one call a person could make with a wrong value - a name that would leave the
warehouse, a property no reader accepts, a row that does not fit the schema, a filter, column,
type, transform, snapshot or ref that does not exist. A case **held** when the call raised an
``IcebergError`` whose message names the offending value, and the table is exactly as before: the
same metadata file and the same files under the warehouse (nothing written, nothing lost).
Otherwise it is **accepted** (no error), **wrote** (an error, but files or metadata changed),
**unnamed** (the error does not show the value) or **raw** (not an ``IcebergError``).

``python tests/campaign/bad_inputs.py`` prints the figures and every case that did not hold.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import icenb
from icenb.errors import IcebergError
from icenb.table.table import Table

#: Every column type a row can be wrong for, with values it must refuse.
COLUMNS = "id long not null, i int, f float, d double, n decimal(9, 2), s string, b boolean, " \
          "dt date, ts timestamp, ts_tz timestamptz, u uuid, bin binary, fx fixed[4]"
BAD_VALUES: dict[str, list[Any]] = {
    "id": [1.5, "seven", 2**63, -(2**63) - 1, None, [1], {"a": 1}, Decimal("2.5"), float("nan")],
    "i": [2**31, -(2**31) - 1, 3.25, "12", [1], Decimal("1.5")],
    "f": ["1.0", [1.0], {"x": 1}],
    "d": ["2.5", [2.5], object()],
    "n": [Decimal("12345678.901"), Decimal("1e10"), "abc", 1.005, float("inf")],
    "s": [5, 2.5, [b"x"], {"k": "v"}],
    "b": ["yes", 2, 1.5, [True]],
    "dt": ["yesterday", "2024-13-01", 3.5, [1]],
    "ts": ["not a time", "2024-02-30T00:00:00", [1], 2.5],
    "ts_tz": ["noon", "2024-01-01T25:00:00+00:00", [1]],
    "u": ["not-a-uuid", b"short", 12],
    "bin": [12, 2.5, [1, 2]],
    "fx": [b"toolong", b"ab", "abcdef", 7],
}
BAD_NAMES = ["../../x", "..", ".", "a/b", "a\\b", "x\x00y", "tab\tname", "new\nline", "",
             "x" * 256, "../escape", "/abs", "\x7f"]
BAD_PROPERTIES = {
    "commit.retry.num-retries": ["-1", "abc", "1.5", ""],
    "commit.retry.min-wait-ms": ["-5", "soon"],
    "commit.retry.max-wait-ms": ["x"],
    "commit.retry.total-timeout-ms": ["-1"],
    "write.target-file-size-bytes": ["0", "-1", "big"],
    "write.delete.mode": ["sometimes", "merge_on_read"],
    "write.update.mode": ["fast"],
    "write.merge.mode": ["cow"],
    "write.parquet.compression-codec": ["rar"],
    "write.metadata.delete-after-commit.enabled": ["maybe", "1"],
    "write.metadata.previous-versions-max": ["-3", "ten"],
    "write.metadata.path": ["relative/meta"],
    "write.data.path": ["data-here"],
    "history.expire.max-snapshot-age-ms": ["-1", "old"],
    "history.expire.min-snapshots-to-keep": ["0", "none"],
    "format-version": ["9"],
    "": ["empty key"],
}
BAD_FILTERS = ["id >", "nope = 1", "id = 'abc'", "id in ('x')", "s like", "ts < 'never'",
               "b = 12", "dt = 'x'", "(id = 1", "id = 1 and", "n > 'z'", "id betwixt 1 and 2"]
BAD_COLUMNS: list[Any] = [["nope"], ["id", "nope"], [5], [None], "nope", ["id.x"]]
BAD_TYPES = ["fixed[0]", "decimal(40, 2)", "decimal(5, 6)", "varchar", "list<>", "map<int>",
             "struct<a int", "int64", "decimal(0, 0)"]
BAD_TRANSFORMS = ["bucket[0](id)", "bucket(-1, id)", "truncate(0, s)", "year(s)", "day(b)",
                  "bucket(4, nope)", "hour(dt)", "month(id)", "zorder(id)", "truncate(2, b)"]
BAD_SNAPSHOTS: list[Any] = [123456789, -1, "no-such-ref", "1999-01-01T00:00:00"]
BAD_REF_NAMES = ["", "main", "a\x00b"]


@dataclass(frozen=True)
class Case:
    """One bad call: what it does to a table, and the text its error must show."""
    door: str
    call: Callable[[icenb.Warehouse, Table], Any]
    shows: str


def _state(root: Path) -> frozenset[tuple[str, str]]:
    """Every file under the warehouse (the SQLite catalog's too) with a digest of its bytes."""
    return frozenset((str(p), hashlib.sha1(p.read_bytes()).hexdigest())
                     for p in root.rglob("*") if p.is_file())


def cases() -> Iterator[Case]:
    """Every bad call (about 300)."""
    for column, values in BAD_VALUES.items():
        for value in values:
            row = {"id": 1, column: value}
            yield Case(f"append row {column}", lambda wh, t, r=row: t.append([r]), column)
            yield Case(f"overwrite row {column}",
                       lambda wh, t, r=row: t.overwrite([r], "id = 1"), column)
    for name in BAD_NAMES:
        shown = repr(name)[1:-1][:20] if name else "''"
        yield Case("create_table name", lambda wh, t, n=name: wh.create_table(
            ("db", n), "id long"), shown)
        yield Case("create_namespace", lambda wh, t, n=name: wh.create_namespace(
            ("db", n)), shown)
        yield Case("create_view name", lambda wh, t, n=name: wh.create_view(
            ("db", n), "select 1 as x", schema="x int"), shown)
    for key, values in BAD_PROPERTIES.items():
        for value in values:
            shown = value if key else "key"
            yield Case("set_properties", lambda wh, t, k=key, v=value: t.set_properties(
                {k: v}), shown)
            if key != "format-version":  # in a new namespace: not even it is created
                yield Case("create_table properties",
                           lambda wh, t, k=key, v=value: wh.create_table(
                               "fresh.other", "id long", properties={k: v}), shown)
    for text in BAD_FILTERS:
        shown = text.split()[0].lstrip("(")
        yield Case("scan filter", lambda wh, t, f=text: t.scan(f).to_arrow(), shown)
        yield Case("delete filter", lambda wh, t, f=text: t.delete(f), shown)
        yield Case("update filter", lambda wh, t, f=text: t.update({"s": "x"}, f), shown)
    for columns in BAD_COLUMNS:
        shown = "nope" if "nope" in str(columns) else str(columns[0] if isinstance(
            columns, list) else columns)
        yield Case("scan columns", lambda wh, t, c=columns: t.scan(columns=c).to_arrow(),
                   shown)
    for type_text in BAD_TYPES:
        yield Case("add_column type", lambda wh, t, x=type_text: _add_column(t, x),
                   type_text.split("(")[0].split("[")[0].split("<")[0])
        yield Case("create_table type", lambda wh, t, x=type_text: wh.create_table(
            "fresh.other", f"id long, c {x}"), type_text.split("(")[0].split("[")[0].split("<")[0])
    for term in BAD_TRANSFORMS:
        shown = "nope" if "nope" in term else term.split("(")[0].split("[")[0]
        yield Case("update_spec", lambda wh, t, x=term: _add_partition(t, x), shown)
        yield Case("create_table partition_by", lambda wh, t, x=term: wh.create_table(
            "db.other", COLUMNS, partition_by=[x]), shown)
    for when in BAD_SNAPSHOTS:
        yield Case("time travel", lambda wh, t, w=when: t.at(w).to_arrow(), str(when))
        yield Case("rollback_to", lambda wh, t, w=when: t.rollback_to(w), str(when))
        yield Case("create_tag at", lambda wh, t, w=when: t.create_tag("tg", w), str(when))
    for ref in BAD_REF_NAMES:
        yield Case("create_branch", lambda wh, t, r=ref: t.create_branch(r),
                   repr(ref)[1:-1] or "''")
        yield Case("remove_tag", lambda wh, t, r=ref: t.remove_tag(r or "absent"),
                   repr(ref)[1:-1] or "absent")
    schema_ops: list[tuple[str, Callable[[Any], Any], str]] = [
        ("add existing column", lambda u: u.add_column("s", "string"), "s"),
        ("drop unknown column", lambda u: u.delete_column("nope"), "nope"),
        ("rename unknown column", lambda u: u.rename_column("nope", "x"), "nope"),
        ("rename onto existing", lambda u: u.rename_column("s", "b"), "b"),
        ("narrow a type", lambda u: u.update_column("id", "int"), "int"),
        ("drop the identifier", lambda u: u.delete_column("id"), "id"),
        ("required without default", lambda u: u.add_column("r", "int", required=True), "r"),
    ]
    for what, op, shown in schema_ops:
        yield Case(f"update_schema {what}", lambda wh, t, o=op: _schema(t, o), shown)
    yield Case("expire older_than", lambda wh, t: t.expire_snapshots("not a date"),
               "not a date")
    yield Case("expire retain_last", lambda wh, t: t.expire_snapshots(retain_last=0), "0")
    yield Case("remove_orphan_files older_than",
               lambda wh, t: t.remove_orphan_files(older_than="never"), "never")
    yield Case("upgrade", lambda wh, t: t.upgrade(7), "7")
    yield Case("upgrade down", lambda wh, t: t.upgrade(1), "1")
    yield Case("delete mode", lambda wh, t: t.delete("id = 1", mode="sideways"), "sideways")
    yield Case("update unknown column", lambda wh, t: t.update({"nope": 1}, "id = 1"), "nope")
    yield Case("update bad value", lambda wh, t: t.update({"i": "ten"}, "id = 1"), "ten")
    yield Case("upsert on unknown", lambda wh, t: t.upsert([{"id": 1}], on="nope"), "nope")
    lineage = {"id": 9, "s": "s9", "_row_id": 3}  # new rows get their lineage by inheritance
    yield Case("append _row_id", lambda wh, t: t.append([lineage]), "_row_id")
    yield Case("overwrite _row_id", lambda wh, t: t.overwrite([lineage], "id = 9"), "_row_id")
    yield Case("upsert _row_id", lambda wh, t: t.upsert([lineage]), "_row_id")
    yield Case("load unknown table", lambda wh, t: wh.table("db.nope"), "nope")
    yield Case("drop unknown table", lambda wh, t: wh.drop_table("db.nope"), "nope")
    yield Case("register_view bad file", lambda wh, t: wh.register_view(
        "db.v", str(Path(t.location) / "no-such.metadata.json")), "no-such")


def _add_column(t: Table, type_text: str) -> None:
    with t.update_schema() as u:
        u.add_column("c", type_text)


def _add_partition(t: Table, term: str) -> None:
    with t.update_spec() as u:
        u.add_field(term)


def _schema(t: Table, op: Callable[[Any], Any]) -> None:
    with t.update_schema() as u:
        op(u)


def _build(root: Path) -> None:
    wh = icenb.warehouse(root)
    t = wh.create_table("db.t", COLUMNS, format_version=2,
                        properties={"write.delete.mode": "merge-on-read"})
    with t.update_schema() as u:
        u.set_identifier_fields(["id"])
    t.append([{"id": i, "i": i, "s": f"s{i}", "b": i % 2 == 0} for i in range(5)])
    t.append([{"id": 5, "i": 5, "s": "s5", "b": False}])


def run(root: Path, limit: int | None = None) -> tuple[Counter[str], list[str]]:
    """Try every case (the first ``limit``) on one table; the outcome counts and the cases
    that did not hold."""
    _build(root)
    pristine = root.with_name(root.name + "-pristine")
    shutil.copytree(root, pristine)
    before = _state(root)
    counts: Counter[str] = Counter()
    failures: list[str] = []
    all_cases = list(cases())
    for case in all_cases[:limit]:
        wh = icenb.warehouse(root)
        t = wh.table("db.t")
        try:
            case.call(wh, t)
            outcome, detail = "accepted", "no error"
        except IcebergError as e:
            outcome, detail = "held", f"{type(e).__name__}: {e}"
            if case.shows.lower() not in str(e).lower():
                outcome = "unnamed"
        except Exception as e:  # the campaign counts, it does not stop
            outcome, detail = "raw", f"{type(e).__name__}: {e}"
        changed = _state(root) != before
        if outcome in ("held", "unnamed") and changed:
            outcome = "wrote"
        counts[outcome] += 1
        if outcome != "held":
            failures.append(f"{outcome:8} {case.door} ({case.shows!r}): {detail[:200]}")
        if changed:
            _restore(root, pristine)
    shutil.rmtree(pristine)
    return counts, failures


def _restore(root: Path, pristine: Path) -> None:
    """Put the warehouse back as it was before the case (cases stay independent)."""
    shutil.rmtree(root)
    shutil.copytree(pristine, root)


def report(counts: Counter[str]) -> str:
    total = sum(counts.values())
    return (f"bad inputs: tried {total}, held {counts['held']}, accepted {counts['accepted']}, "
            f"wrote {counts['wrote']}, unnamed {counts['unnamed']}, raw {counts['raw']}")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="icenb-bad-inputs-") as d:
        counts, failures = run(Path(d))
        print("\n".join(failures))
        print(report(counts))
