"""Write-audit-publish through Spark (issue 22): a Spark DataFrame appended to a
``write.wap.enabled`` table is staged with ``icenb.set_options(wap_id=...)``, with the session's
``spark.wap.id`` (as Iceberg's Spark writer), or with the data source option ``wap-id``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icenb
from icenb.spec.properties import WRITE_WAP_ENABLED
from icenb.spec.snapshot import WAP_ID
from icenb.table import Table


def ids(t: Table, when: int | None = None) -> list[int]:
    scan = t.scan() if when is None else t.at(when)
    return sorted(scan.to_arrow().column("id").to_pylist())


def test_spark_writes_are_staged_by_each_wap_id_source(spark: Any, tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long", format_version=2,
                        properties={WRITE_WAP_ENABLED: "true"})
    t.append([{"id": 1}])
    main = t.refs["main"].snapshot_id
    with icenb.set_options(wap_id="from-icenb"):
        a = t.append(spark.createDataFrame([(2,)], "id long"))
    spark.conf.set("spark.wap.id", "from-session")
    try:
        b = t.append(spark.createDataFrame([(3,)], "id long"))
    finally:
        spark.conf.unset("spark.wap.id")
    (spark.createDataFrame([(4,)], "id long").write.format("icenb").mode("append")
     .option("warehouse", str(tmp_path)).option("wap-id", "from-option").save("db.t"))
    t.refresh()
    c = [s for s in t.metadata.snapshots if s.summary is not None
         and s.summary.get(WAP_ID) == "from-option"]
    assert len(c) == 1
    for snap, wap, row in ((a, "from-icenb", 2), (b, "from-session", 3), (c[0], "from-option", 4)):
        assert snap.summary is not None and snap.summary[WAP_ID] == wap
        assert snap.parent_snapshot_id == main
        assert ids(t, snap.snapshot_id) == [1, row]
    assert t.refs["main"].snapshot_id == main and ids(t) == [1]
    t.publish_changes("from-session")
    assert ids(wh.table("db.t")) == [1, 3]
