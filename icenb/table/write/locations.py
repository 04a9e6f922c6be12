"""Where new data files go: the default and object-storage layouts and file names of the
reference implementation (Java 1.10's ``LocationProviders`` and ``OutputFileFactory``; spec:
"File System Operations" and the ``write.data.path`` / ``write.object-storage.*`` properties)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import mmh3

from icenb.errors import UnsupportedFeature, ValidationError
from icenb.reprs import safe_repr
from icenb.spec.properties import (
    FOLDER_STORAGE_PATH,
    LOCATION_PROVIDER_IMPL,
    OBJECT_STORAGE_ENABLED,
    OBJECT_STORAGE_PARTITIONED_PATHS,
    OBJECT_STORAGE_PATH,
    WRITE_DATA_PATH,
    bool_property,
)


class LocationProvider(Protocol):
    """Where a new data file goes (the reference implementation's ``LocationProvider``)."""

    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        """The location of a data file called ``filename`` in partition ``partition_path``."""
        ...


def _strip_slash(location: str) -> str:
    while location.endswith("/") and not location.endswith("://"):
        location = location[:-1]
    return location


def _data_location(table_location: str, properties: Mapping[str, str],
                   object_storage: bool) -> str:
    """``write.data.path`` or ``<table>/data``; the deprecated path properties the reference
    implementation would consult instead are refused, as it refuses them."""
    if properties.get(WRITE_DATA_PATH):
        return properties[WRITE_DATA_PATH]
    deprecated = ((OBJECT_STORAGE_PATH, FOLDER_STORAGE_PATH) if object_storage
                  else (FOLDER_STORAGE_PATH,))
    for key in deprecated:
        if key in properties:
            raise ValidationError(f"property {key!r} is deprecated (Java 1.10 refuses it); use "
                                  "'write.data.path' instead", field=key, value=properties[key])
    return f"{table_location}/data"


@safe_repr
@dataclass(frozen=True)
class DefaultLocationProvider:
    """``<data location>/<partition path>/<file>``; the data location is ``write.data.path`` or
    ``<table location>/data``."""

    data_location: str

    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        if partition_path:
            return f"{self.data_location}/{partition_path}/{filename}"
        return f"{self.data_location}/{filename}"


@safe_repr
@dataclass(frozen=True)
class ObjectStoreLocationProvider:
    """Spreads files under hash prefixes (``write.object-storage.enabled``), as Java's
    ``ObjectStoreLocationProvider``: 20 bits of Murmur3 of the file name as
    ``xxxx/xxxx/xxxx/xxxxxxxx`` directories."""

    storage_location: str
    context: str | None
    include_partition_paths: bool = True

    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        name = filename
        if partition_path and self.include_partition_paths:
            name = f"{partition_path}/{filename}"
        digest = _entropy_dirs(name)
        if self.context is not None:
            return f"{self.storage_location}/{digest}/{self.context}/{name}"
        if self.include_partition_paths:
            return f"{self.storage_location}/{digest}/{name}"
        return f"{self.storage_location}/{digest}-{name}"


def _entropy_dirs(name: str) -> str:
    h = mmh3.hash(name.encode("utf-8"), 0, signed=False) | 0x80000000
    bits = format(h, "b")[-20:]
    return f"{bits[0:4]}/{bits[4:8]}/{bits[8:12]}/{bits[12:]}"


def _path_context(table_location: str) -> str:
    """``<parent name>/<name>`` of the table location (Hadoop ``Path`` names)."""
    scheme_end = table_location.find("://")
    path = table_location
    if scheme_end >= 0:
        rest = table_location[scheme_end + 3:]
        slash = rest.find("/")
        path = "/" if slash < 0 else rest[slash:]
    path = path.rstrip("/") or "/"
    name = posixpath.basename(path)
    parent = posixpath.dirname(path)
    if path == "/" or not parent:
        return name
    return f"{posixpath.basename(parent)}/{name}"


def location_provider(table_location: str, properties: Mapping[str, str]) -> LocationProvider:
    """The table's location provider, from ``write.object-storage.enabled``,
    ``write.object-storage.partitioned-paths`` and ``write.data.path`` (Java's defaults)."""
    if properties.get(LOCATION_PROVIDER_IMPL):
        raise UnsupportedFeature("custom location providers cannot be used from Python",
                                 field=LOCATION_PROVIDER_IMPL,
                                 value=properties[LOCATION_PROVIDER_IMPL])
    location = _strip_slash(table_location)
    if bool_property(properties, OBJECT_STORAGE_ENABLED, False, strict=True):
        storage = _strip_slash(_data_location(location, properties, True))
        context = None if storage.startswith(location) else _path_context(location)
        return ObjectStoreLocationProvider(
            storage, context,
            bool_property(properties, OBJECT_STORAGE_PARTITIONED_PATHS, True, strict=True))
    return DefaultLocationProvider(_strip_slash(_data_location(location, properties, False)))


def data_file_name(partition_id: int, task_id: int, operation_id: str, file_count: int,
                   extension: str = "parquet") -> str:
    """``{partitionId:05d}-{taskId}-{operationId}-{fileCount:05d}.parquet`` (Java's
    ``OutputFileFactory``); ``file_count`` starts at 1 for a task's first file."""
    return f"{partition_id:05d}-{task_id}-{operation_id}-{file_count:05d}.{extension}"
