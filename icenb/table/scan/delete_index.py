"""Which delete files apply to which data files (spec: "Scan Planning"), matched on Arrow
columns: a position delete applies to data files of the same spec and partition with a data
sequence number <= its own (narrowed to one file by ``referenced_data_file`` or equal
``file_path`` bounds); an equality delete to data files of the same spec and partition, or to
every data file when its spec is unpartitioned, with a data sequence number < its own; a v3
deletion vector only to its ``referenced_data_file``, and where one applies, position delete
files for that data file are not applied (as the reference implementation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icenb.errors import InvalidMetadata
from icenb.spec.manifest import (
    FileContent,
    FileFormat,
)
from icenb.spec.metadata_columns import DELETE_FILE_PATH
from icenb.spec.partition_spec import PartitionSpec
from icenb.table.scan.pruning import partition_children, struct_array, struct_column

__all__ = ["match_deletes", "partition_keys"]

#: Field id of ``file_path`` in position delete files (spec: "Position Delete Files").
POSITION_DELETE_FILE_PATH_ID = DELETE_FILE_PATH.field_id


def partition_keys(entries: pa.Table, rows: np.ndarray[Any, Any], spec: PartitionSpec
                    ) -> list[tuple[Any, ...]]:
    """Partition tuples (Python values, in spec field order) of some entries of one spec."""
    if not spec.fields:
        return [()] * len(rows)
    partition = struct_array(pc.struct_field(entries.column("data_file"), "partition"))
    children = partition_children(partition.take(pa.array(rows, pa.int64())),
                                   [(pf.field_id, pf.name) for pf in spec.fields])
    if children is None:  # fields missing: every value is unknown (null)
        return [(None,) * len(spec.fields)] * len(rows)
    return list(zip(*(children[pf.field_id].to_pylist() for pf in spec.fields), strict=True))


def _path_bound(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _map_items(raw: Any) -> dict[int, Any] | None:
    """An Arrow map (list of pairs) or Avro key/value records as a dict."""
    if raw is None or isinstance(raw, dict):
        return raw
    return {int(k): v for k, v in (
        (item["key"], item["value"]) if isinstance(item, dict) else item for item in raw)}


def _map_get(raw: Any, key: int) -> Any:
    items = _map_items(raw)
    return None if items is None else items.get(key)


def match_deletes(data: pa.Table, deletes: pa.Table, specs: Mapping[int, PartitionSpec]
                   ) -> tuple[tuple[int, ...], ...]:
    """For each data entry, the delete entries that apply (spec: Scan Planning)."""
    n = int(data.num_rows)
    if deletes.num_rows == 0 or n == 0:
        return ((),) * n
    ddf = struct_array(deletes.column("data_file"))
    dnames = {f.name for f in ddf.type}

    def dcol(name: str) -> list[Any]:
        if name not in dnames:
            return [None] * deletes.num_rows
        return list(pc.struct_field(ddf, name).to_pylist())

    d_content, d_format, d_paths = dcol("content"), dcol("file_format"), dcol("file_path")
    d_ref, d_lower, d_upper = dcol("referenced_data_file"), dcol("lower_bounds"), \
        dcol("upper_bounds")
    d_seq = [0 if s is None else int(s) for s in deletes.column("sequence_number").to_pylist()]
    d_spec = [int(s) for s in deletes.column("partition_spec_id").to_pylist()]
    d_keys: list[tuple[Any, ...] | None] = [None] * deletes.num_rows
    for sid in set(d_spec):
        spec = specs.get(sid)
        if spec is None:
            continue
        rows = np.flatnonzero(np.asarray(d_spec) == sid)
        for r, key in zip(rows, partition_keys(deletes, rows, spec), strict=True):
            d_keys[int(r)] = key

    dv_by_path: dict[str, list[int]] = {}
    pos_by_path: dict[str, list[int]] = {}
    pos_by_part: dict[tuple[int, tuple[Any, ...] | None], list[int]] = {}
    eq_by_part: dict[tuple[int, tuple[Any, ...] | None], list[int]] = {}
    eq_global: list[int] = []
    for j in range(deletes.num_rows):
        part = (d_spec[j], d_keys[j])
        if d_content[j] == FileContent.POSITION_DELETES:
            ref = d_ref[j]
            if ref is None:
                lower = _path_bound(_map_get(d_lower[j], POSITION_DELETE_FILE_PATH_ID))
                upper = _path_bound(_map_get(d_upper[j], POSITION_DELETE_FILE_PATH_ID))
                if lower is not None and lower == upper:
                    ref = lower
            if str(d_format[j]).upper() == FileFormat.PUFFIN.name and d_ref[j] is not None:
                if d_ref[j] in dv_by_path:
                    # spec, "Deletion Vectors": at most one deletion vector per data file
                    raise InvalidMetadata("two live deletion vectors for one data file",
                                          file=str(d_paths[j]), field="referenced_data_file",
                                          value=d_ref[j])
                dv_by_path.setdefault(d_ref[j], []).append(j)
            elif ref is not None:
                pos_by_path.setdefault(ref, []).append(j)
            else:
                pos_by_part.setdefault(part, []).append(j)
        else:
            spec = specs.get(d_spec[j])
            if spec is not None and spec.is_unpartitioned:
                eq_global.append(j)
            else:
                eq_by_part.setdefault(part, []).append(j)

    paths = struct_column(data, "file_path").to_pylist()
    seqs = [0 if s is None else int(s) for s in data.column("sequence_number").to_pylist()]
    spec_ids = [int(s) for s in data.column("partition_spec_id").to_pylist()]
    scoped = {sid for sid, _ in pos_by_part} | {sid for sid, _ in eq_by_part} | \
        {d_spec[j] for js in pos_by_path.values() for j in js}
    keys: list[tuple[Any, ...] | None] = [None] * n
    spec_arr = np.asarray(spec_ids)
    for sid in scoped:
        spec = specs.get(sid)
        if spec is None:
            continue
        rows = np.flatnonzero(spec_arr == sid)
        for r, key in zip(rows, partition_keys(data, rows, spec), strict=True):
            keys[int(r)] = key

    out: list[tuple[int, ...]] = []
    for i in range(n):
        seq, part = seqs[i], (spec_ids[i], keys[i])
        found = [j for j in dv_by_path.get(paths[i], ()) if seq <= d_seq[j]]
        if not found:
            found = [j for j in pos_by_path.get(paths[i], ())
                     if seq <= d_seq[j] and (d_spec[j], d_keys[j]) == part]
            found += [j for j in pos_by_part.get(part, ()) if seq <= d_seq[j]]
        found += [j for j in eq_by_part.get(part, ()) if seq < d_seq[j]]
        found += [j for j in eq_global if seq < d_seq[j]]
        out.append(tuple(sorted(found)) if found else ())
    return tuple(out)
