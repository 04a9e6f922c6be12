"""Reprs of view metadata (released and early draft), versions, representations, version log."""

from __future__ import annotations

import copy
import gzip
import html
import json
import re
from typing import Any

import icenb
from icenb.display import render, reset_options
from icenb.display.view_repr import SQL_LIMIT
from icenb.spec.view_metadata import (
    DraftViewMetadata,
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    load_view_metadata,
    view_metadata_from_json,
)
from tests.reference_fixtures import JavaTables
from tests.spec.test_view_metadata import DRAFT_STEP4, RELEASED, _spec_example_json

EVIL = '<b>&"x"'


def _cells(html: str) -> list[list[str]]:
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", html):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", tr)]
        if cells:
            rows.append(cells)
    return rows


def _released(**changes: Any) -> ViewMetadata:
    doc = copy.deepcopy(RELEASED)
    doc.update(changes)
    md = view_metadata_from_json(json.dumps(doc))
    assert isinstance(md, ViewMetadata)
    return md


def test_view_card_shows_current_sql_per_dialect_schema_and_versions() -> None:
    md = _released()
    cur = md.current_version
    with reset_options():
        r = render(md)
    kv = {row[0]: row[1] for row in _cells(r.html) if len(row) == 2}
    assert kv["view uuid"] == md.view_uuid
    assert kv["format version"] == "1"
    assert kv["location"] == md.location
    assert kv["current version"] == str(md.current_version_id)
    assert kv["versions"] == str(len(md.versions))
    for rep in cur.sql_representations:  # every dialect, escaped SQL in <pre>
        assert f">{rep.dialect}</span><pre>" in r.html
        assert f"<pre>{html.escape(rep.sql)}</pre>" in r.html
    assert '<span class="icenb-kind">Schema</span>' in r.html  # the schema via render()
    versions = [row for row in _cells(r.html)
                if len(row) == 5 and re.fullmatch(r"\d{4}-\d\d-\d\d .*", row[1])]
    assert [row[0].split()[0] for row in versions] == [str(v.version_id) for v in md.versions]
    assert "current" in versions[[v.version_id for v in md.versions].index(
        md.current_version_id)][0]
    assert render(md).html == r.html  # deterministic
    assert repr(md).splitlines()[0] == f"ViewMetadata {md.location}"


def test_sql_and_properties_are_escaped_and_long_sql_is_cut() -> None:
    doc = copy.deepcopy(RELEASED)
    cur = next(v for v in doc["versions"] if v["version-id"] == doc["current-version-id"])
    long_sql = "SELECT '<x>' AS " + EVIL + " " + "x" * (SQL_LIMIT + 500)
    cur["representations"] = [{"type": "sql", "dialect": "spark", "sql": long_sql}]
    doc["properties"] = {EVIL: "<v>"}
    md = view_metadata_from_json(json.dumps(doc))
    r = render(md)
    assert "SELECT &#x27;&lt;x&gt;&#x27; AS &lt;b&gt;&amp;&quot;x&quot;" in r.html or \
        "SELECT '&lt;x&gt;' AS &lt;b&gt;&amp;&quot;x&quot;" in r.html
    assert EVIL not in r.html and "<x>" not in r.html
    assert f"… {len(long_sql) - SQL_LIMIT:,} more characters …" in r.html
    assert "x" * (SQL_LIMIT - 100) in r.html  # shown in full up to the limit
    assert "&lt;v&gt;" in r.html


def test_version_card_lists_every_representation() -> None:
    md = _released()
    v = md.current_version
    r = render(v)
    kv = {row[0]: row[1] for row in _cells(r.html) if len(row) == 2}
    assert kv["version id"] == str(v.version_id)
    assert kv["schema id"] == str(v.schema_id)
    assert kv["default namespace"] == ".".join(v.default_namespace) or "(empty)"
    for rep in v.representations:
        assert isinstance(rep, SQLViewRepresentation)
        assert f"[{rep.dialect}]" in r.text
    for key, value in v.summary.items():
        assert [key, value] in _cells(r.html)


def test_small_view_objects() -> None:
    rep = SQLViewRepresentation("SELECT 1 < 2", "trino")
    assert render(rep).html == ('<span class="icenb-badge icenb-b-info">trino</span>'
                                "<pre>SELECT 1 &lt; 2</pre>")
    unknown = UnknownViewRepresentation("substrait", {"type": "substrait", "plan": "..."})
    assert "unknown representation type; keys: plan, type" in render(unknown).text
    assert render(ViewHistoryEntry(0, 3)).text == "1970-01-01 00:00:00.000  version 3"
    assert repr(rep).startswith("SQLViewRepresentation(sql=")


def test_versions_and_log_fold() -> None:
    md = _released()
    base = md.versions[0]
    versions = [json.loads(json.dumps({
        "version-id": i, "timestamp-ms": 1_700_000_000_000 + i, "schema-id": base.schema_id,
        "summary": {"engine-name": "spark"}, "default-namespace": [],
        "representations": [{"type": "sql", "dialect": "spark", "sql": f"SELECT {i}"}]}))
        for i in range(1, 101)]
    doc = copy.deepcopy(RELEASED)
    doc.update({"versions": versions, "current-version-id": 100,
                "version-log": [{"timestamp-ms": 1_700_000_000_000 + i, "version-id": i}
                                for i in range(1, 101)]})
    big = view_metadata_from_json(json.dumps(doc))
    with icenb.set_options(display_max_snapshots=6):
        r = render(big)
    assert "… 94 more versions …" in r.html and "… 94 more versions …" in r.text
    assert "… 94 more log entries …" in r.html
    assert "SELECT 100" in r.html and "SELECT 50" not in r.html


def test_draft_document_renders_as_a_draft() -> None:
    draft = view_metadata_from_json(_spec_example_json(DRAFT_STEP4))
    assert isinstance(draft, DraftViewMetadata)
    r = render(draft)
    assert "View metadata (draft)" in r.html
    assert "(early draft)" in r.text
    cur = draft.current_version
    for rep in cur.representations:
        assert f"<pre>{html.escape(rep.sql)}</pre>" in r.html  # type: ignore[union-attr]
    assert repr(draft).startswith("DraftViewMetadata ")
    converted = draft.to_released()
    assert "from an early-draft document" in render(converted).text


def test_java_views_render(java_tables: JavaTables) -> None:
    files = java_tables.metadata_files(kind="view")
    assert {f.name for f in files} == {"db.sql_view", "db.java_multi_dialect_view"}
    for f in files:
        data = f.path.read_bytes()
        md = load_view_metadata(gzip.decompress(data) if f.gzip else data)
        r = render(md)
        assert "could not be displayed" not in r.html
        for rep in md.current_version.sql_representations:
            assert f"[{rep.dialect}]" in r.text
            assert f"<pre>{html.escape(rep.sql)}</pre>" in r.html
        schema = md.schema_by_id(md.current_version.schema_id)
        assert schema is not None
        for field in schema.fields:
            assert f"<code>{field.name}</code>" in r.html
