"""Views run on Spark: schemas derived from the SQL, rows of any version, time travel."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icenb
from icenb.errors import NoSuchTable, ValidationError
from icenb.table import View
from icenb.table.warehouse import Warehouse


@pytest.fixture(scope="module", params=["sql", "filesystem"])
def wh(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
       spark: Any) -> Warehouse:
    w = icenb.warehouse(tmp_path_factory.mktemp("views") / "wh", catalog=request.param)
    t = w.create_table("db.base_tab", "c1 int not null, c2 string")
    t.append(pa.table({"c1": pa.array([1, 2], pa.int32()), "c2": ["one", "two"]}))
    t.create_tag("two_rows")
    time.sleep(0.01)
    t.append(pa.table({"c1": pa.array([3], pa.int32()), "c2": ["three"]}))
    return w


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_appendix_a_with_derived_schemas(wh: Warehouse, spark: Any) -> None:
    v = wh.create_view("db.common_view", "SELECT * FROM base_tab", spark=spark)
    assert [(f.name, str(f.field_type), f.required) for f in v.schema.fields] == [
        ("c1", "int", True), ("c2", "string", False)]
    assert sorted(v.to_pandas(spark=spark)["c1"]) == [1, 2, 3]
    v.replace("SELECT count(*) AS my_cnt FROM base_tab", spark=spark)
    assert [(f.name, str(f.field_type), f.required) for f in v.schema.fields] == [
        ("my_cnt", "long", True)]
    assert v.to_pandas(spark=spark)["my_cnt"].tolist() == [3]
    # an older version still runs as it was defined
    assert sorted(v.to_pandas(1, spark=spark)["c2"]) == ["one", "three", "two"]
    wh.drop_view("db.common_view")


def test_time_travel_and_names_in_the_sql(wh: Warehouse, spark: Any) -> None:
    sql = ("SELECT a.c1, b.c2 FROM db.base_tab VERSION AS OF 'two_rows' a "
           "JOIN base_tab b ON a.c1 = b.c1")
    v = wh.create_view("db.travel", sql, spark=spark)
    rows = v.to_pandas(spark=spark).sort_values("c1")
    assert rows["c1"].tolist() == [1, 2] and rows["c2"].tolist() == ["one", "two"]
    tag_snapshot = wh.table("db.base_tab").metadata.refs["two_rows"].snapshot_id
    v.replace(f"SELECT count(*) AS n FROM {wh.catalog.name}.db.base_tab "
              f"VERSION AS OF {tag_snapshot}", spark=spark)
    assert v.to_pandas(spark=spark)["n"].tolist() == [2]
    wh.drop_view("db.travel")


def test_other_namespaces_resolve_by_default_namespace(wh: Warehouse, spark: Any) -> None:
    v = wh.create_view("other.v", "SELECT max(c1) AS m FROM base_tab",
                       default_namespace=["db"], spark=spark)
    assert isinstance(v, View) and v.current_version.default_namespace == ("db",)
    assert v.to_pandas(spark=spark)["m"].tolist() == [3]
    wh.drop_view("other.v")


def test_bad_sql_is_refused_and_nothing_is_written(wh: Warehouse, spark: Any) -> None:
    before = files_under(Path(wh.location))
    with pytest.raises(ValidationError) as e:
        wh.create_view("db.bad", "SELECT nope FROM base_tab", spark=spark)
    assert e.value.field == "sql" and "nope" in str(e.value)
    with pytest.raises(ValidationError):
        wh.create_view("db.bad", "SELEC 1", spark=spark)
    with pytest.raises(NoSuchTable, match="missing"):
        wh.create_view("db.bad", "SELECT * FROM missing", spark=spark)
    assert files_under(Path(wh.location)) == before
    v = wh.create_view("db.ok", "SELECT c1 FROM base_tab", spark=spark)
    kept = files_under(Path(wh.location))
    with pytest.raises(ValidationError):
        v.replace("SELECT c9 FROM base_tab", spark=spark)
    assert files_under(Path(wh.location)) == kept and v.current_version_id == 1
    wh.drop_view("db.ok")
