"""Tables on an object store, end to end (issue 17): a local S3-protocol server (moto), a SQLite
catalog whose warehouse is ``s3://``, and every operation: create, append, overwrite,
merge-on-read and copy-on-write deletes, planning, time travel, expiry, views of the rows, and
purge - which leaves the bucket empty."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import icenb
from icenb.catalog import open_catalog
from icenb.catalog.base import Catalog
from icenb.spec.schema_ddl import parse_schema
from icenb.spec.table_updates import new_table_metadata
from tests.s3_server import files, make_bucket, s3_server


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    with s3_server() as properties:
        yield properties


def _catalog(tmp_path: Path, s3: dict[str, str], bucket: str) -> Catalog:
    make_bucket(s3, bucket)
    cat = open_catalog(f"sqlite:///{tmp_path}/catalog.db", warehouse=f"s3://{bucket}/wh",
                       properties=s3)
    cat.create_namespace("db")
    return cat


@pytest.mark.parametrize("version", [2, 3, 4])
def test_every_operation_on_an_s3_table(tmp_path: Path, s3: dict[str, str],
                                        version: int) -> None:
    bucket = f"icenb-v{version}"
    cat = _catalog(tmp_path, s3, bucket)
    location = cat.default_table_location(("db", "t"))
    assert location == f"s3://{bucket}/wh/db/t"
    cat.create_table(("db", "t"), new_table_metadata(
        parse_schema("id long, v string"), location=location, format_version=version))
    t = icenb.load_table(cat, ("db", "t"))
    t.append([{"id": i, "v": str(i)} for i in range(10)])
    first = t.snapshots[0].snapshot_id
    t.delete("id < 3", "merge-on-read")
    t.delete("id = 9", "copy-on-write")
    t.overwrite([{"id": 50, "v": "x"}], "id = 8")
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == [3, 4, 5, 6, 7, 50]
    assert t.scan("id >= 50").plan().files_selected == 1
    assert t.at(first).to_arrow().num_rows == 10  # time travel
    again = icenb.load_table(open_catalog(f"sqlite:///{tmp_path}/catalog.db",
                                          warehouse=f"s3://{bucket}/wh", properties=s3),
                             ("db", "t"))
    assert sorted(r["id"] for r in again.to_arrow().to_pylist()) == [3, 4, 5, 6, 7, 50]
    fs = make_bucket(s3, bucket)
    before = len(files(fs, bucket))
    result = t.expire_snapshots(int(time.time() * 1000) + 1, retain_last=1)
    assert len(result.expired_snapshot_ids) == 3 and len(t.snapshots) == 1
    assert len(files(fs, bucket)) < before  # unreferenced files deleted from the bucket
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == [3, 4, 5, 6, 7, 50]
    orphans = t.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True)
    assert orphans.orphans == ()  # nothing unreferenced left; listing the bucket works
    cat.drop_table(("db", "t"), purge=True)
    assert files(fs, bucket) == []


def test_a_filesystem_catalog_refuses_to_commit_to_an_object_store(
        tmp_path: Path, s3: dict[str, str]) -> None:
    """The Hadoop layout commits by create-if-absent of v<N>.metadata.json; S3 has no atomic
    form of it, so the filesystem catalog refuses (and says to use a SQL catalog) instead of
    risking a lost commit. Nothing is written."""
    from icenb.errors import UnsupportedFeature

    fs = make_bucket(s3, "icenb-fs")
    cat = open_catalog("s3://icenb-fs/wh", properties=s3)
    cat.create_namespace("db")
    with pytest.raises(UnsupportedFeature, match="SQL catalog") as err:
        cat.create_table(("db", "t"), new_table_metadata(
            parse_schema("id long"), location="s3://icenb-fs/wh/db/t", format_version=2))
    assert err.value.file is not None and err.value.file.startswith("s3://icenb-fs/wh/db/t/")
    assert [f for f in files(fs, "icenb-fs") if "/db/t/" in f] == []
