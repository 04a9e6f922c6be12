"""Tables and views the widget tests share: built once per module with icenb's own API
(no Spark), with branches, tags, a rollback and merge-on-read deletes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

import icenb
from icenb.table import Table, View


@dataclass
class History:
    """A table whose history has every kind of node TimeTravel draws."""

    table: Table
    first: int        # append of ids 1, 2 (tag v1)
    second: int       # append of id 3
    deleted: int      # merge-on-read delete of id 1 (the branch dev starts here)
    dev: int          # append of id 4 on dev
    rolled_back: int  # append of id 5 on main, then rolled back to ``deleted``


def build_history(root: Path, format_version: int = 2) -> History:
    wh = icenb.warehouse(root)
    t = wh.create_table("db.events", "id long, kind string", format_version=format_version,
                        properties={"write.delete.mode": "merge-on-read"})
    t.append([{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}])
    first = t.metadata.current_snapshot_id
    t.create_tag("v1")
    t.append([{"id": 3, "kind": "c"}])
    second = t.metadata.current_snapshot_id
    t.delete("id = 1")
    deleted = t.metadata.current_snapshot_id
    t.create_branch("dev")
    t.append([{"id": 4, "kind": "d"}], branch="dev")
    dev = t.metadata.refs["dev"].snapshot_id
    t.append([{"id": 5, "kind": "e"}])
    rolled_back = t.metadata.current_snapshot_id
    t.rollback_to(deleted)
    assert None not in (first, second, deleted, dev, rolled_back)
    return History(t, first, second, deleted, dev, rolled_back)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return build_history(tmp_path_factory.mktemp("wh"))


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> View:
    wh = icenb.warehouse(tmp_path_factory.mktemp("whv"))
    t = wh.create_table("db.t", "id long, kind string")
    t.append([{"id": 1, "kind": "a"}])
    v = wh.create_view("db.v", "SELECT id FROM db.t", schema="id long")
    v.replace("SELECT id, kind FROM db.t", schema="id long, kind string")
    v.replace({"spark": "SELECT id, kind FROM db.t WHERE id > 0",
               "trino": "SELECT id, kind FROM db.t WHERE id > 0"},
              schema="id long, kind string")
    v.update_properties({"replace.drop-dialect.allowed": "true"})
    v.rollback_to(2)
    return v
