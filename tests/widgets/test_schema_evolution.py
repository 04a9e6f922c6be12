"""SchemaEvolution (issue 18): staged changes validated as they are staged, every refusal
explained with its rule, the preview with field ids, old files read under the new schema, a
commit through t.update_schema(), and undo; on v1, v2, v3 and v4 tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import icenb
from icenb.errors import IcebergError
from icenb.table import Table
from icenb.widgets import SchemaEvolution
from tests.spec.test_schema_update import base_schema


def _table(root: Path, version: int = 3, schema: Any = "id long, name string, ts timestamp"
           ) -> Table:
    t = icenb.warehouse(root).create_table("db.t", schema, format_version=version)
    if isinstance(schema, str):
        t.append([{"id": 1, "name": "a", "ts": None}, {"id": 2, "name": "b", "ts": None}])
    return t


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_add_rename_preview_commit_and_undo(tmp_path: Path, version: int) -> None:
    t = _table(tmp_path, version)
    before = t.metadata
    se = SchemaEvolution(t)
    assert se.preview is None and se.problems == []
    se.pending.add_column("score", "double").rename_column("name", "label")
    schema = se.preview
    assert schema is not None and se.problems == []
    assert schema.find_field("score").field_id == before.last_column_id + 1
    assert schema.find_field("label").field_id == before.schema.find_field("name").field_id
    assert schema.schema_id == max(s.schema_id for s in before.schemas) + 1
    assert se.last_column_id == before.last_column_id + 1
    # old files read by field id under the preview: the rename still reads, the new is null
    rows = se.old_files().to_pylist()
    assert sorted((r["id"], r["label"], r["score"]) for r in rows) == [(1, "a", None),
                                                                       (2, "b", None)]
    assert t.metadata is before  # nothing committed by staging or previewing
    committed = se.commit()
    assert committed == t.schema and committed.find_field("score").field_id == 4
    assert t.metadata.last_column_id == before.last_column_id + 1
    assert "label" in t.to_arrow().column_names
    assert se.changes == [] and "u.add_column('score', 'double')" in se.static_text()
    assert len(t.schema_history().schemas) == 2
    restored = se.undo()
    assert restored.schema_id == before.current_schema_id == t.metadata.current_schema_id
    assert t.metadata.last_column_id == before.last_column_id + 1  # never decreases


def test_v3_defaults_and_what_old_files_read_as(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    se = SchemaEvolution(t)
    se.pending.add_column("region", "string", initial_default="eu").delete_column("ts")
    rows = se.old_files().to_pylist()
    assert [sorted(r) for r in rows] == [["id", "name", "region"]] * 2
    assert {r["region"] for r in rows} == {"eu"}  # the initial default, not null
    se.commit()
    assert {r["region"] for r in t.to_arrow().to_pylist()} == {"eu"}


def test_an_illegal_promotion_is_explained_and_blocks_commit(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    before = t.metadata_location
    se = SchemaEvolution(t)
    se.pending.update_column("name", "int")  # string -> int: not a valid promotion
    assert len(se.problems) == 1
    p = se.problems[0]
    assert p.rule.name == "Type promotion" and p.rule.section == "Schema Evolution"
    assert "int to long" in p.rule.words and p.field == "name"
    assert "update_column('name', 'int')" in str(p) and "Type promotion" in str(p)
    assert se.preview is None
    with pytest.raises(IcebergError, match="refused"):
        se.commit()
    assert se.commit_button.disabled
    assert "Type promotion" in se.staged.value
    se.drop(0)
    assert se.problems == [] and se.commit_button.disabled  # nothing staged
    se.pending.update_column("id", "long").add_column("n", "int")
    assert not se.commit_button.disabled
    se.reset()
    assert se.changes == [] and t.metadata_location == before


#: The rejected cases of tests/spec/test_schema_update.py, as staged calls on a table of its
#: base schema: (format version, allow incompatible changes, identifier ids, calls).
_REJECTED: list[tuple[int, bool, tuple[int, ...], Callable[[Any], Any]]] = [
    (2, False, (), lambda u: u.add_column("n", "timestamp_ns")),
    (3, True, (), lambda u: u.add_column("n", "unknown", required=True)),
    (2, False, (), lambda u: u.add_column("s.a", "int")),
    (2, False, (), lambda u: u.add_column("nope.a", "int")),
    (2, False, (), lambda u: u.add_column("id.a", "int")),
    (2, False, (), lambda u: u.add_column("n", "int").add_column("n", "long")),
    (3, False, (), lambda u: u.update_column("dec", "decimal(10, 3)")),
    (3, False, (), lambda u: u.update_column("dec", "decimal(8, 2)")),
    (3, False, (), lambda u: u.update_column("id", "int")),
    (3, False, (), lambda u: u.update_column("d", "timestamp")),
    (3, False, (), lambda u: u.update_column("i", "string")),
    (3, False, (), lambda u: u.update_column("f", "long")),
    (2, False, (), lambda u: u.rename_column("ts", "d")),
    (2, False, (), lambda u: u.require_column("ts")),
    (2, False, (), lambda u: u.make_column_optional("m.key")),
    (3, False, (), lambda u: u.update_column_default("dec", "1.555")),
    (2, False, (), lambda u: u.move_after("s.a", "id")),
    (2, False, (), lambda u: u.move_before("id", "id")),
    (2, False, (), lambda u: u.move_first("l.element")),
    (2, False, (), lambda u: u.delete_column("nope")),
    (2, False, (), lambda u: u.delete_column("m.key")),
    (2, False, (), lambda u: u.delete_column("l.element")),
    (2, False, (), lambda u: u.rename_column("ts", "t2").delete_column("ts")),
    (2, False, (), lambda u: u.add_column("s.c", "int").delete_column("s")),
    (2, False, (), lambda u: u.set_identifier_fields(["f"])),
    (2, False, (), lambda u: u.set_identifier_fields(["ts"])),
    (2, False, (), lambda u: u.set_identifier_fields(["nope"])),
    (2, True, (), lambda u: u.require_column("f").set_identifier_fields(["f"])),
    (2, True, (), lambda u: u.require_column("s.a").set_identifier_fields(["s.a"])),
    (2, False, (1,), lambda u: u.delete_column("id")),
    (2, False, (17,), lambda u: u.delete_column("rs")),
]


@pytest.mark.parametrize("case", range(len(_REJECTED)))
def test_every_rejected_case_of_the_schema_update_suite_is_explained(
        tmp_path: Path, case: int) -> None:
    version, incompatible, identifier, calls = _REJECTED[case]
    t = icenb.warehouse(tmp_path).create_table("db.t", base_schema(identifier),
                                               format_version=version)
    before = t.metadata_location
    se = SchemaEvolution(t, allow_incompatible_changes=incompatible)
    calls(se.pending)  # never raises out of the widget API
    assert se.problems, "the change should be refused"
    for p in se.problems:
        assert p.rule.name and p.rule.words and p.rule.section
        assert p.rule.name in str(p) and p.message in str(p)
    assert se.preview is None and se.commit_button.disabled
    assert "Problems" in se.staged.value and se.problems[0].rule.name in se.staged.value
    with pytest.raises(IcebergError):
        se.commit()
    assert t.refresh().metadata_location == before


def test_a_failed_commit_leaves_the_table_as_it_was(tmp_path: Path) -> None:
    """The preview is of the state the widget loaded; a concurrent schema change makes the
    commit fail (CommitConflict through t.update_schema) and nothing is half done."""
    t = _table(tmp_path, 2)
    se = SchemaEvolution(t)
    se.pending.add_column("x", "int")
    other = icenb.warehouse(tmp_path).table("db.t")
    with other.update_schema() as u:
        u.add_column("y", "int")
    location = other.metadata_location
    with pytest.raises(IcebergError):
        se.commit()
    assert t.refresh().metadata_location == location
    assert t.schema.find_field("y") is not None and t.schema.field_by_name("x") is None


def test_the_static_snapshot_and_the_form(tmp_path: Path) -> None:
    t = _table(tmp_path, 3)
    se = SchemaEvolution(t)
    se.action.value = "add column"
    se.column.value = "note"
    se.value.value = "string"
    se.doc.value = "free text"
    se.stage_button.click()
    assert [c.code for c in se.changes] == ["add_column('note', 'string', doc='free text')"]
    assert se.preview is not None and se.preview.find_field("note").doc == "free text"
    bundle = se._repr_mimebundle_()
    assert "add_column('note', 'string', doc='free text')" in bundle["text/plain"]
    assert "icenb" in bundle["text/html"]
    se.commit_button.click()  # asks first
    assert t.schema.field_by_name("note") is None
    se.confirm.yes.click()
    assert t.schema.field_by_name("note") is not None
    assert "Committed" in se.effect.value and "u.add_column" in se.effect.value
