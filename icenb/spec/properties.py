"""Every table and view property icenb reads, declared once, with its default, and one set of
typed readers (spec: "Table Metadata Fields" ``properties``; the keys and defaults are Iceberg
Java 1.10's ``TableProperties`` / ``ViewProperties``).

Readers follow Java's ``PropertyUtil``: a missing key gives the default; a boolean is ``true``
when the value is ``true`` ignoring case and ``false`` otherwise (``Boolean.parseBoolean``: so
``gc.enabled=abc`` reads as false, as in Java); an integer must parse as one (optional sign, then
digits, as ``Integer.parseInt``) or the read raises ``ValidationError`` naming the key and value.
Where icenb is stricter than Java it says so at the reader's ``minimum``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from icenb.errors import ValidationError

__all__ = [
    "AVRO_COMPRESSION",
    "AVRO_COMPRESSION_LEVEL",
    "COMMIT_MAX_RETRY_WAIT_MS",
    "COMMIT_MIN_RETRY_WAIT_MS",
    "COMMIT_NUM_RETRIES",
    "COMMIT_TOTAL_RETRY_TIME_MS",
    "DEFAULT_FILE_FORMAT",
    "DELETE_FORMAT_DEFAULT",
    "DELETE_PARQUET_PREFIX",
    "DELETE_TARGET_FILE_SIZE_BYTES",
    "FOLDER_STORAGE_PATH",
    "FORMAT_VERSION",
    "GC_ENABLED",
    "LOCATION_PROVIDER_IMPL",
    "MANIFEST_MERGE_ENABLED",
    "MANIFEST_MIN_MERGE_COUNT",
    "MANIFEST_TARGET_SIZE_BYTES",
    "MAX_REF_AGE_MS",
    "MAX_SNAPSHOT_AGE_MS",
    "METADATA_COMPRESSION",
    "METADATA_DELETE_AFTER_COMMIT",
    "METADATA_PREVIOUS_VERSIONS_MAX",
    "METRICS_COLUMN_PREFIX",
    "METRICS_DEFAULT",
    "METRICS_MAX_INFERRED_COLUMNS",
    "MIN_SNAPSHOTS_TO_KEEP",
    "NAME_MAPPING",
    "OBJECT_STORAGE_ENABLED",
    "OBJECT_STORAGE_PARTITIONED_PATHS",
    "OBJECT_STORAGE_PATH",
    "PARQUET_COMPRESSION",
    "PARQUET_COMPRESSION_LEVEL",
    "PARQUET_DICT_SIZE_BYTES",
    "PARQUET_PAGE_ROW_LIMIT",
    "PARQUET_PAGE_SIZE_BYTES",
    "PARQUET_ROW_GROUP_SIZE_BYTES",
    "READ_SPLIT_OPEN_FILE_COST",
    "READ_SPLIT_TARGET_SIZE",
    "REPLACE_DROP_DIALECT_ALLOWED",
    "V4_COMPACTION_ENABLED",
    "V4_COMPACTION_MIN_COUNT",
    "V4_COMPACTION_TARGET_SIZE_BYTES",
    "V4_MANIFEST_DV_STORAGE",
    "V4_ROOT_ENTRY_LIMIT",
    "VERSION_HISTORY_SIZE",
    "WRITE_DATA_PATH",
    "WRITE_DELETE_MODE",
    "WRITE_MERGE_MODE",
    "WRITE_METADATA_PATH",
    "WRITE_TARGET_FILE_SIZE_BYTES",
    "WRITE_UPDATE_MODE",
    "WRITE_WAP_ENABLED",
    "PropertyWarning",
    "bool_property",
    "check_properties",
    "check_property",
    "int_property",
    "lenient_int_property",
    "optional_int_property",
]

# --------------------------------------------------------------------------- table: format
#: Reserved: the format version a table is created with (not stored as a property).
FORMAT_VERSION = "format-version"
#: A JSON name mapping for files written without field ids (spec: "Column Projection").
NAME_MAPPING = "schema.name-mapping.default"

# --------------------------------------------------------------------------- table: commits
COMMIT_NUM_RETRIES = "commit.retry.num-retries"                  # default 4
COMMIT_MIN_RETRY_WAIT_MS = "commit.retry.min-wait-ms"            # default 100
COMMIT_MAX_RETRY_WAIT_MS = "commit.retry.max-wait-ms"            # default 60,000
COMMIT_TOTAL_RETRY_TIME_MS = "commit.retry.total-timeout-ms"     # default 1,800,000
MANIFEST_MERGE_ENABLED = "commit.manifest-merge.enabled"         # default true
MANIFEST_MIN_MERGE_COUNT = "commit.manifest.min-count-to-merge"  # default 100
MANIFEST_TARGET_SIZE_BYTES = "commit.manifest.target-size-bytes"  # default 8 MiB
#: Write-audit-publish: with a wap id set, writes stage their snapshot (no ref moves).
WRITE_WAP_ENABLED = "write.wap.enabled"                          # default false

# --------------------------------------------------------------------------- table: metadata
METADATA_COMPRESSION = "write.metadata.compression-codec"        # none | gzip
METADATA_PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"  # default 100
METADATA_DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"  # default false
WRITE_METADATA_PATH = "write.metadata.path"
METRICS_DEFAULT = "write.metadata.metrics.default"               # default truncate(16)
METRICS_COLUMN_PREFIX = "write.metadata.metrics.column."
METRICS_MAX_INFERRED_COLUMNS = "write.metadata.metrics.max-inferred-column-defaults"
AVRO_COMPRESSION = "write.avro.compression-codec"                # manifests: default gzip
AVRO_COMPRESSION_LEVEL = "write.avro.compression-level"

# --------------------------------------------------------------------------- table: data files
DEFAULT_FILE_FORMAT = "write.format.default"                     # default parquet
WRITE_TARGET_FILE_SIZE_BYTES = "write.target-file-size-bytes"    # default 512 MiB
WRITE_DATA_PATH = "write.data.path"
OBJECT_STORAGE_ENABLED = "write.object-storage.enabled"          # default false
OBJECT_STORAGE_PARTITIONED_PATHS = "write.object-storage.partitioned-paths"  # default true
OBJECT_STORAGE_PATH = "write.object-storage.path"                # deprecated (refused)
FOLDER_STORAGE_PATH = "write.folder-storage.path"                # deprecated (refused)
LOCATION_PROVIDER_IMPL = "write.location-provider.impl"
PARQUET_PREFIX = "write.parquet."                               # Parquet writer settings
PARQUET_COMPRESSION = "write.parquet.compression-codec"          # default zstd
PARQUET_COMPRESSION_LEVEL = "write.parquet.compression-level"
PARQUET_ROW_GROUP_SIZE_BYTES = "write.parquet.row-group-size-bytes"  # default 128 MiB
PARQUET_PAGE_SIZE_BYTES = "write.parquet.page-size-bytes"        # default 1 MiB
PARQUET_PAGE_ROW_LIMIT = "write.parquet.page-row-limit"          # default 20,000
PARQUET_DICT_SIZE_BYTES = "write.parquet.dict-size-bytes"        # default 2 MiB

# --------------------------------------------------------------------------- table: row-level
WRITE_DELETE_MODE = "write.delete.mode"                          # copy-on-write | merge-on-read
WRITE_UPDATE_MODE = "write.update.mode"
WRITE_MERGE_MODE = "write.merge.mode"                            # Spark's MERGE INTO
DELETE_TARGET_FILE_SIZE_BYTES = "write.delete.target-file-size-bytes"
DELETE_FORMAT_DEFAULT = "write.delete.format.default"
DELETE_PARQUET_PREFIX = "write.delete.parquet."

# --------------------------------------------------------------------------- table: reads
READ_SPLIT_TARGET_SIZE = "read.split.target-size"                # default 128 MiB
READ_SPLIT_OPEN_FILE_COST = "read.split.open-file-cost"          # default 4 MiB

# --------------------------------------------------------------------------- table: maintenance
GC_ENABLED = "gc.enabled"                                        # default true
MIN_SNAPSHOTS_TO_KEEP = "history.expire.min-snapshots-to-keep"   # default 1
MAX_SNAPSHOT_AGE_MS = "history.expire.max-snapshot-age-ms"       # default 5 days
MAX_REF_AGE_MS = "history.expire.max-ref-age-ms"                 # default forever

# ------------------------------------------------------------------ table: v4 (EXPERIMENTAL)
V4_ROOT_ENTRY_LIMIT = "write.v4.root-entry-limit"                # default 2
V4_MANIFEST_DV_STORAGE = "write.v4.manifest-dv.storage"          # inline | puffin
V4_COMPACTION_ENABLED = "write.v4.compaction.enabled"            # default true
V4_COMPACTION_MIN_COUNT = "write.v4.compaction.min-count-to-merge"  # default 100
V4_COMPACTION_TARGET_SIZE_BYTES = "write.v4.compaction.target-size-bytes"  # default 8 MiB

# --------------------------------------------------------------------------- views
VERSION_HISTORY_SIZE = "version.history.num-entries"             # default 10
REPLACE_DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"    # default false

_INT = re.compile(r"[+-]?\d+")


def bool_property(properties: Mapping[str, str], key: str, default: bool, *,
                  strict: bool = False) -> bool:
    """A boolean property as Java's ``PropertyUtil.propertyAsBoolean``: ``true`` ignoring case
    (and surrounding blanks) is true, any other value false, a missing key the default.

    ``strict=True`` (icenb's choice for switches that change what a write produces:
    ``write.object-storage.*``, ``commit.manifest-merge.enabled``, ``write.v4.compaction.*``)
    refuses anything but ``true`` / ``false`` with a ``ValidationError`` naming the key and
    value, rather than silently reading a typo as false. The lenient reading stays where false
    is the safe side (``gc.enabled``, ``write.metadata.delete-after-commit.enabled``).
    """
    value = properties.get(key)
    if value is None:
        return default
    text = str(value).strip().lower()
    if strict and text not in ("true", "false"):
        raise ValidationError("table property must be true or false", field=key, value=value)
    return text == "true"


def optional_int_property(properties: Mapping[str, str], key: str, default: int | None, *,
                          minimum: int | None = None) -> int | None:
    """An integer property (``Integer.parseInt``'s syntax) or ``default`` when missing;
    ``ValidationError`` naming the key and value when it is not an integer or is below
    ``minimum`` (icenb's check where Java would fail later, or silently misbehave)."""
    raw = properties.get(key)
    if raw is None:
        return default
    text = str(raw).strip()
    if not _INT.fullmatch(text):
        raise ValidationError("table property must be an integer", field=key, value=raw)
    value = int(text)
    if minimum is not None and value < minimum:
        raise ValidationError(f"table property must be at least {minimum}", field=key,
                              value=raw)
    return value


def int_property(properties: Mapping[str, str], key: str, default: int, *,
                 minimum: int | None = None) -> int:
    """:func:`optional_int_property` with a default that is an int."""
    value = optional_int_property(properties, key, default, minimum=minimum)
    assert value is not None
    return value


# --------------------------------------------------------------------------- checks at the door


class PropertyWarning(UserWarning):
    """A property already in a table's metadata (written by another engine, or before icenb
    checked it) has a value icenb cannot use: the default is used instead."""


#: Integer properties and their least value (None: any integer).
_INT_MINIMUM: dict[str, int | None] = {
    COMMIT_NUM_RETRIES: 0, COMMIT_MIN_RETRY_WAIT_MS: 0, COMMIT_MAX_RETRY_WAIT_MS: 0,
    COMMIT_TOTAL_RETRY_TIME_MS: 0, MANIFEST_MIN_MERGE_COUNT: 0, MANIFEST_TARGET_SIZE_BYTES: 1,
    METADATA_PREVIOUS_VERSIONS_MAX: 1, METRICS_MAX_INFERRED_COLUMNS: 0,
    AVRO_COMPRESSION_LEVEL: None, WRITE_TARGET_FILE_SIZE_BYTES: 1,
    PARQUET_COMPRESSION_LEVEL: -(2**31), PARQUET_ROW_GROUP_SIZE_BYTES: 1,
    PARQUET_PAGE_SIZE_BYTES: 1, PARQUET_PAGE_ROW_LIMIT: 1, PARQUET_DICT_SIZE_BYTES: 1,
    DELETE_TARGET_FILE_SIZE_BYTES: 1, READ_SPLIT_TARGET_SIZE: 1, READ_SPLIT_OPEN_FILE_COST: 0,
    MIN_SNAPSHOTS_TO_KEEP: 1, MAX_SNAPSHOT_AGE_MS: 0, MAX_REF_AGE_MS: 0,
    V4_ROOT_ENTRY_LIMIT: 0, V4_COMPACTION_MIN_COUNT: 0, V4_COMPACTION_TARGET_SIZE_BYTES: 0,
    VERSION_HISTORY_SIZE: 1,
}
#: Switches: set only to ``true`` / ``false``. Read strictly, except ``gc.enabled`` and
#: ``write.metadata.delete-after-commit.enabled``, which keep Java's reading when another engine
#: wrote them (anything but ``true`` is false, the safe side).
_BOOLEAN = frozenset({
    MANIFEST_MERGE_ENABLED, OBJECT_STORAGE_ENABLED, OBJECT_STORAGE_PARTITIONED_PATHS,
    V4_COMPACTION_ENABLED, REPLACE_DROP_DIALECT_ALLOWED, GC_ENABLED,
    METADATA_DELETE_AFTER_COMMIT, WRITE_WAP_ENABLED,
})
_MODES = ("copy-on-write", "merge-on-read")
#: Properties with a fixed set of values (compared ignoring case and surrounding blanks).
_CHOICES: dict[str, tuple[str, ...]] = {
    METADATA_COMPRESSION: ("none", "gzip"),
    WRITE_DELETE_MODE: _MODES, WRITE_UPDATE_MODE: _MODES, WRITE_MERGE_MODE: _MODES,
    "write.delete.isolation-level": ("serializable", "snapshot"),
    "write.update.isolation-level": ("serializable", "snapshot"),
    "write.merge.isolation-level": ("serializable", "snapshot"),
    DEFAULT_FILE_FORMAT: ("parquet", "avro", "orc"),
    DELETE_FORMAT_DEFAULT: ("parquet", "avro", "orc"),
    PARQUET_COMPRESSION: ("zstd", "gzip", "snappy", "lz4", "brotli", "uncompressed", "none"),
    AVRO_COMPRESSION: ("uncompressed", "none", "snappy", "gzip", "deflate", "zstd"),
    V4_MANIFEST_DV_STORAGE: ("inline", "puffin"),
}


def check_property(key: str, value: str) -> None:
    """Refuse a value icenb could not use for ``key`` (``ValidationError`` naming both): an
    integer property must be an integer of at least its minimum, a switch ``true`` or
    ``false``, a choice one of its values; keys icenb does not read pass. Run when a property
    is set, so a bad value never reaches a table's metadata through icenb."""
    if not isinstance(key, str) or not key.strip():
        raise ValidationError("a property key must be a non-empty string", field="properties",
                              value=key)
    if not isinstance(value, str):
        raise ValidationError("a property value must be a string", field=key, value=value)
    if key in _INT_MINIMUM:
        optional_int_property({key: value}, key, None, minimum=_INT_MINIMUM[key])
    elif key in _BOOLEAN:
        bool_property({key: value}, key, False, strict=True)
    elif key in _CHOICES and value.strip().lower() not in _CHOICES[key]:
        raise ValidationError(f"table property must be one of {', '.join(_CHOICES[key])}",
                              field=key, value=value)
    elif key in (WRITE_DATA_PATH, WRITE_METADATA_PATH) and not _absolute(value):
        raise ValidationError("a path property must be an absolute path or a URI: a relative "
                              "one would resolve against each process's working directory",
                              field=key, value=value)


def _absolute(location: str) -> bool:
    text = location.strip()
    return "://" in text or text.startswith(("/", "file:")) or (
        len(text) > 2 and text[1] == ":" and text[2] in "\\/")  # a Windows drive


def check_properties(properties: Mapping[str, str]) -> None:
    """:func:`check_property` for every entry."""
    for key, value in properties.items():
        check_property(key, value)


def lenient_int_property(properties: Mapping[str, str], key: str, default: int, *,
                         minimum: int | None = None) -> int:
    """:func:`int_property` for settings an operation reads before it writes (commit retries,
    expiry, metadata retention): a value already in the metadata that is not a usable integer
    gives ``default`` and a :class:`PropertyWarning` naming key and value, so a table with a
    bad value can still be changed - and the value removed - through icenb."""
    try:
        return int_property(properties, key, default, minimum=minimum)
    except ValidationError as e:
        import warnings

        warnings.warn(f"{e}; using the default {default}", PropertyWarning, stacklevel=2)
        return default
