"""Write-audit-publish (issue 22): ``write.wap.enabled`` + ``icenb.set_options(wap_id=...)`` stage
every snapshot-producing write (Java's ``stageOnly()``, summary ``wap.id``, no ref moves); the
staged snapshot is audited with ``t.at(id)`` and published with ``t.publish_changes(wap_id)``
(Spark's ``publish_changes``: a cherry-pick). Java 1.10's side: test_write_audit_publish_java.py.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest

import icenb
from icenb.errors import ValidationError
from icenb.spec.properties import WRITE_DELETE_MODE, WRITE_WAP_ENABLED
from icenb.spec.snapshot import PUBLISHED_WAP_ID, SOURCE_SNAPSHOT_ID, WAP_ID
from icenb.table import Table
from icenb.table.warehouse import Warehouse


def ids(t: Table, when: int | str | None = None) -> list[int]:
    scan = t.at(when) if when is not None else t.scan()
    return sorted(scan.to_arrow().column("id").to_pylist())


def wap_table(tmp_path: Path, version: int = 2, **properties: str) -> tuple[Warehouse, Table]:
    """A table with rows 1, 2 on main and ``write.wap.enabled=true``."""
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long, p string", partition_by=["p"],
                        format_version=version,
                        properties={WRITE_WAP_ENABLED: "true", **properties})
    t.append([{"id": 1, "p": "a"}, {"id": 2, "p": "b"}])
    return wh, t


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_a_staged_append_leaves_main_alone_and_publishing_moves_it(tmp_path: Path,
                                                                   version: int) -> None:
    wh, t = wap_table(tmp_path, version)
    head = t.current_snapshot
    assert head is not None
    with icenb.set_options(wap_id="audit-42"):
        staged = t.append([{"id": 3, "p": "a"}])
    assert icenb.get_options().wap_id is None   # the block restored the option
    # staged: a snapshot of the table, on no ref, with the wap id in its summary
    assert staged.summary is not None and staged.summary[WAP_ID] == "audit-42"
    assert staged.parent_snapshot_id == head.snapshot_id
    assert staged.snapshot_id in {s.snapshot_id for s in t.metadata.snapshots}
    assert t.refs["main"].snapshot_id == head.snapshot_id
    assert len(t.history) == 1   # main's log did not move
    # other readers see main unchanged; the audit reads the staged rows
    fresh = wh.table("db.t")
    assert ids(fresh) == [1, 2]
    assert ids(fresh, staged.snapshot_id) == [1, 2, 3]
    report = t.last_commit
    assert report is not None and report.staged and report.wap_id == "audit-42"
    assert report.snapshot_id == staged.snapshot_id
    # publish: main's parent is still the staged snapshot's parent, so main fast-forwards to it
    published = t.publish_changes("audit-42")
    assert published.snapshot_id == staged.snapshot_id
    assert t.refs["main"].snapshot_id == staged.snapshot_id
    assert ids(wh.table("db.t")) == [1, 2, 3]
    with pytest.raises(ValidationError) as e:
        t.publish_changes("audit-42")
    assert e.value.field == WAP_ID and e.value.value == "audit-42"
    assert "again" in str(e.value)
    assert ids(wh.table("db.t")) == [1, 2, 3]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_row_level_writes_are_staged_too(tmp_path: Path, mode: str) -> None:
    wh, t = wap_table(tmp_path, 2, **{WRITE_DELETE_MODE: mode})
    main = t.refs["main"].snapshot_id
    with icenb.set_options(wap_id="fix-1"):
        staged = t.delete("id = 1")
    assert staged is not None and staged.summary is not None
    assert staged.summary[WAP_ID] == "fix-1"
    assert t.refs["main"].snapshot_id == main
    assert ids(t) == [1, 2] and ids(t, staged.snapshot_id) == [2]
    t.publish_changes("fix-1")
    assert ids(wh.table("db.t")) == [2]


def test_overwrite_and_dynamic_overwrite_are_staged(tmp_path: Path) -> None:
    _, t = wap_table(tmp_path)
    main = t.refs["main"].snapshot_id
    with icenb.set_options(wap_id="w-over"):
        over = t.overwrite([{"id": 9, "p": "a"}], "p = 'a'")
        dyn = t.dynamic_partition_overwrite([{"id": 8, "p": "b"}])
    assert t.refs["main"].snapshot_id == main and ids(t) == [1, 2]
    assert ids(t, over.snapshot_id) == [2, 9] and ids(t, dyn.snapshot_id) == [1, 8]
    # both are staged on main's head: the wap id is not unique
    with pytest.raises(ValidationError) as e:
        t.publish_changes("w-over")
    assert e.value.field == WAP_ID and str(over.snapshot_id) in str(e.value)
    assert t.refs["main"].snapshot_id == main


def test_unknown_wap_id_is_refused(tmp_path: Path) -> None:
    _, t = wap_table(tmp_path)
    before = t.metadata_location
    with pytest.raises(ValidationError) as e:
        t.publish_changes("never-staged")
    assert e.value.field == WAP_ID and e.value.value == "never-staged"
    assert e.value.file == before
    assert t.refresh().metadata_location == before
    with pytest.raises(ValidationError):
        t.publish_changes("")


def test_a_wap_id_on_a_table_without_write_wap_enabled_commits_as_usual(tmp_path: Path) -> None:
    """Java 1.10 stages only when ``wapEnabled() && wapId != null``; otherwise the id is
    ignored (SparkWrite), and so it is here."""
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long", format_version=2)
    with icenb.set_options(wap_id="ignored"):
        snap = t.append([{"id": 1}])
    assert t.refs["main"].snapshot_id == snap.snapshot_id
    assert snap.summary is not None and WAP_ID not in snap.summary
    # write.wap.enabled without a wap id: also as usual
    t.set_properties({WRITE_WAP_ENABLED: "true"})
    snap = t.append([{"id": 2}])
    assert t.refs["main"].snapshot_id == snap.snapshot_id and ids(t) == [1, 2]


def test_a_misspelt_switch_is_refused(tmp_path: Path) -> None:
    wh = icenb.warehouse(tmp_path)
    t = wh.create_table("db.t", "id long", format_version=2)
    with pytest.raises(ValidationError) as e:
        t.set_properties({WRITE_WAP_ENABLED: "yes"})
    assert e.value.field == WRITE_WAP_ENABLED


def test_bad_wap_id_options_change_nothing() -> None:
    for bad in ("", "  ", 42):
        with pytest.raises(ValidationError) as e:
            icenb.set_options(wap_id=bad)
        assert e.value.field == "wap_id"
    assert icenb.get_options().wap_id is None


def test_another_commit_between_stage_and_publish(tmp_path: Path) -> None:
    """The staged append is re-applied on the new head: a new snapshot with
    ``published-wap-id`` and ``source-snapshot-id``; both writers' rows are on main."""
    wh, t = wap_table(tmp_path)
    with icenb.set_options(wap_id="late"):
        staged = t.append([{"id": 3, "p": "a"}])
    other = wh.table("db.t")
    other.append([{"id": 4, "p": "b"}])          # main moves; t is now stale
    published = t.publish_changes("late")
    assert published.snapshot_id != staged.snapshot_id
    assert published.summary is not None
    assert published.summary[PUBLISHED_WAP_ID] == "late"
    assert published.summary[SOURCE_SNAPSHOT_ID] == str(staged.snapshot_id)
    assert WAP_ID not in published.summary
    assert ids(wh.table("db.t")) == [1, 2, 3, 4]
    with pytest.raises(ValidationError) as e:
        t.publish_changes("late")
    assert e.value.field == WAP_ID and str(published.snapshot_id) in str(e.value)


def test_a_staged_delete_cannot_be_published_after_another_commit(tmp_path: Path) -> None:
    """Java's cherry-pick re-applies appends and dynamic overwrites only; a staged delete
    publishes by fast-forward, so once main moved it is refused and main is kept."""
    wh, t = wap_table(tmp_path)
    with icenb.set_options(wap_id="del"):
        t.delete("id = 1")
    wh.table("db.t").append([{"id": 5, "p": "a"}])
    with pytest.raises(ValidationError) as e:
        t.publish_changes("del")
    assert e.value.field == "operation"
    assert ids(wh.table("db.t")) == [1, 2, 5]


def test_staging_on_a_branch_and_publishing_there(tmp_path: Path) -> None:
    _, t = wap_table(tmp_path)
    t.create_branch("dev")
    t.append([{"id": 7, "p": "a"}], branch="dev")
    dev = t.refs["dev"].snapshot_id
    with icenb.set_options(wap_id="on-dev"):
        staged = t.append([{"id": 8, "p": "a"}], branch="dev")
    assert staged.parent_snapshot_id == dev and t.refs["dev"].snapshot_id == dev
    t.publish_changes("on-dev", branch="dev")
    assert ids(t, "dev") == [1, 2, 7, 8] and ids(t) == [1, 2]


def test_the_snapshot_graph_and_the_time_travel_widget_label_staged_snapshots(
        tmp_path: Path) -> None:
    from icenb.widgets import TimeTravel

    _, t = wap_table(tmp_path)
    with icenb.set_options(wap_id="audit-7"):
        t.append([{"id": 3, "p": "a"}])
    assert "staged wap.id audit-7" in html.unescape(TimeTravel(t).tree.svg)
    t.publish_changes("audit-7")   # a fast-forward: main is the staged snapshot now
    assert "staged wap.id audit-7" in html.unescape(TimeTravel(t).tree.svg)
