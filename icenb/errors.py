"""Typed errors raised by icenb.

Every error derives from :class:`IcebergError`. A message names the file, field and value
at fault whenever they are known, so a person can find and fix the bad input.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AlreadyExists",
    "CommitConflict",
    "CommitStateUnknown",
    "CorruptFile",
    "ExpressionParseError",
    "FileIOError",
    "IcebergError",
    "IcebergWarning",
    "InvalidMetadata",
    "NamespaceNotEmpty",
    "NoSuchNamespace",
    "NoSuchSnapshot",
    "NoSuchTable",
    "NoSuchView",
    "NotFound",
    "UnsupportedFeature",
    "UnsupportedVersion",
    "ValidationError",
]

_UNSET: Any = object()


def _short(value: Any, limit: int = 120) -> str:
    """A bounded repr of an offending value for an error message."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class IcebergError(Exception):
    """Base of every icenb error.

    ``file``, ``field`` and ``value`` (all optional) locate the fault and are appended to the
    message as ``(file: ..., field: ..., value: ...)``.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        value: Any = _UNSET,
    ) -> None:
        self.message = message
        self.file = file
        self.field = field
        self.value = None if value is _UNSET else value
        self.has_value = value is not _UNSET
        where = []
        if file is not None:
            where.append(f"file: {file}")
        if field is not None:
            where.append(f"field: {field}")
        if value is not _UNSET:
            where.append(f"value: {_short(value)}")
        full = f"{message} ({', '.join(where)})" if where else message
        super().__init__(full)

    def with_file(self, file: str) -> IcebergError:
        """Return a copy of this error that also names ``file`` (used when the caller knows it)."""
        if self.file is not None:
            return self
        kwargs: dict[str, Any] = {"file": file, "field": self.field}
        if self.has_value:
            kwargs["value"] = self.value
        new = type(self).__new__(type(self))
        IcebergError.__init__(new, self.message, **kwargs)
        return new


class ValidationError(IcebergError, ValueError):
    """A request or a value breaks a rule of the spec (nothing was written)."""


class InvalidMetadata(ValidationError):
    """A metadata document is well-formed but misses a required field or has a wrong type."""


class ExpressionParseError(ValidationError):
    """An expression string could not be parsed."""


class UnsupportedFeature(ValidationError):
    """A valid request icenb cannot carry out (e.g. writing with an unknown transform)."""


class UnsupportedVersion(IcebergError):
    """A format version newer (or older) than icenb supports."""


class CorruptFile(IcebergError):
    """A file's bytes cannot be decoded (malformed JSON, bad Avro, wrong magic, CRC mismatch)."""


class FileIOError(IcebergError, OSError):
    """Reading, writing, listing or deleting a file failed (permissions, network, a bad path)."""


class NotFound(IcebergError, LookupError):
    """Something looked up does not exist."""


class NoSuchTable(NotFound):
    """The table does not exist."""


class NoSuchView(NotFound):
    """The view does not exist."""


class NoSuchNamespace(NotFound):
    """The namespace does not exist."""


class NoSuchSnapshot(NotFound):
    """No snapshot matches the given id, ref or timestamp."""


class AlreadyExists(IcebergError):
    """A table, view or namespace with that name already exists."""


class NamespaceNotEmpty(ValidationError):
    """A namespace to drop still holds tables, views or namespaces."""


class CommitConflict(IcebergError):
    """The table changed underneath a commit and the change could not be re-applied."""


class CommitStateUnknown(IcebergError):
    """A commit may or may not have succeeded (e.g. the catalog did not answer)."""


class IcebergWarning(UserWarning):
    """Something works but is probably not what was meant (e.g. a moved table)."""
