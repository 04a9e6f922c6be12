"""Reprs of v4 objects (EXPERIMENTAL single-file-commits proposal): a content entry, a root or
leaf manifest (:class:`~icenb.io.root_manifest.ContentManifest`) and a leaf read through its
root entry (:class:`~icenb.io.root_manifest.LeafManifest`, rows its manifest DV removes
marked). Field names are the proposal's ("V4 content entry structure"); nothing is read here,
an inline manifest DV's ordinals are decoded from the bytes the entry holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from icenb.display.kit import html as h
from icenb.display.kit import text as tx
from icenb.display.kit.fmt import count, cut, file_name, fold, hidden, plural, size
from icenb.display.manifest_repr import status_badge
from icenb.display.registry import Rendered, register
from icenb.io.root_manifest import ContentManifest, LeafManifest
from icenb.labels import t
from icenb.options import get_options
from icenb.spec.content_entry import ContentEntry, ContentType
from icenb.spec.deletion_vector import deserialize_deletion_vector

__all__ = ["content_type_word", "dv_ordinals_text"]

_WORDS = {ContentType.DATA: "Data file", ContentType.POSITION_DELETE: "Deletion vector",
          ContentType.EQUALITY_DELETE: "Equality delete file",
          ContentType.DATA_MANIFEST: "Data manifest",
          ContentType.DELETE_MANIFEST: "Delete manifest",
          ContentType.MANIFEST_DV: "Manifest DV"}
_MAX_ORDINALS = 16


def content_type_word(kind: ContentType) -> str:
    """What an entry of ``content_type`` is, in words."""
    word = _WORDS.get(kind)
    return t(word) if word is not None else t("content type {n}", n=int(kind))


def _content_type_noun(kind: ContentType) -> str:
    """:func:`content_type_word` in lower case, inside a sentence."""
    word = _WORDS.get(kind)
    return t(word.lower()) if word is not None else t("content type {n}", n=int(kind))


def dv_ordinals_text(e: ContentEntry, limit: int = _MAX_ORDINALS) -> str:
    """The ordinals an inline manifest DV removes (``#1, #3``), decoded from the entry only;
    a Puffin DV says where its blob is (reading it is I/O)."""
    dv = e.deletion_vector
    if dv is None:
        return ""
    if dv.inline_content is None:
        return t("in {file} at {offset} ({size})", file=cut(file_name(e.location)),
                 offset=count(dv.offset), size=size(dv.size_in_bytes))
    try:
        values = deserialize_deletion_vector(dv.inline_content).to_numpy()
    except Exception as err:  # a corrupt blob is shown, never raised
        return t("inline, unreadable ({error})", error=type(err).__name__)
    shown = [f"#{int(v)}" for v in values[:limit]]
    more = len(values) - len(shown)
    return (t("inline: ") + ", ".join(shown)
            + (", " + t("+{n:,} more", n=more) if more > 0 else ""))


def _entry_facts(e: ContentEntry) -> list[tuple[str, str]]:
    vi = e.version_info
    rows = [("content_type", f"{int(e.content_type)} ({content_type_word(e.content_type)})"),
            ("status", vi.status.name),
            ("location", cut(e.location)),
            ("file_format", e.file_format.value.upper()),
            ("partition_spec_id", str(e.partition_spec_id)),
            ("record_count", count(e.record_count)),
            ("file_size_in_bytes", size(e.file_size_in_bytes)),
            ("snapshot_id", t("inherited") if vi.snapshot_id is None else str(vi.snapshot_id)),
            ("sequence_number", t("inherited") if vi.sequence_number is None
             else str(vi.sequence_number)),
            ("file_sequence_number", t("inherited") if vi.file_sequence_number is None
             else str(vi.file_sequence_number))]
    if e.referenced_file is not None:
        rows.append(("referenced_file", cut(e.referenced_file)))
    if e.deletion_vector is not None:
        rows.append(("deletion_vector", dv_ordinals_text(e)))
    ms = e.manifest_stats
    if ms is not None:
        rows.append(("manifest_stats",
                     t("files {added} added / {existing} existing / {deleted} deleted; rows "
                       "{added_rows:,} / {existing_rows:,} / {deleted_rows:,}; min seq {seq}",
                       added=ms.added_files_count, existing=ms.existing_files_count,
                       deleted=ms.deleted_files_count, added_rows=ms.added_rows_count,
                       existing_rows=ms.existing_rows_count, deleted_rows=ms.deleted_rows_count,
                       seq=ms.min_sequence_number)))
    cs = e.content_stats
    if cs is not None:
        parts = []
        if cs.partition is not None:
            parts.append(plural(len(cs.partition), "partition value"))
        if cs.value_counts is not None:
            parts.append(plural(len(cs.value_counts), "column"))
        if cs.lower_bounds is not None:
            parts.append(plural(len(cs.lower_bounds), "lower bound"))
        if cs.partitions is not None:
            parts.append(plural(len(cs.partitions), "partition summary", "partition summaries"))
        rows.append(("content_stats", ", ".join(parts) or t("empty")))
    if e.first_row_id is not None:
        rows.append(("first_row_id", f"{e.first_row_id:,}"))
    if e.sort_order_id is not None:
        rows.append(("sort_order_id", str(e.sort_order_id)))
    if e.equality_ids is not None:
        rows.append(("equality_ids", cut(", ".join(str(i) for i in e.equality_ids))))
    if e.split_offsets is not None:
        rows.append(("split_offsets", plural(len(e.split_offsets), "offset")))
    if e.key_metadata is not None:
        rows.append(("key_metadata", size(len(e.key_metadata))))
    return rows


@register(ContentEntry)
def _render_entry(e: ContentEntry) -> Rendered:
    facts = _entry_facts(e)
    text = (f"{t('v4 content entry')}: {content_type_word(e.content_type)} "
            f"{e.status.name} {cut(file_name(e.location))}\n" + tx.kv(facts, indent="  "))
    body = h.kv((k, h.esc(v)) for k, v in facts)
    return Rendered(h.card(t("v4 content entry"), cut(file_name(e.location)),
                           status_badge(e.status) + h.muted(
                               " " + content_type_word(e.content_type)), body), text)


def _type_counts(entries: Sequence[ContentEntry]) -> str:
    counts: dict[ContentType, int] = {}
    for e in entries:
        counts[e.content_type] = counts.get(e.content_type, 0) + 1
    return ", ".join(f"{n} {_content_type_noun(k)}" for k, n in sorted(counts.items()))


_Numbered = list[tuple[int, ContentEntry]]


def _rows(entries: Sequence[ContentEntry]) -> tuple[_Numbered, int, _Numbered]:
    head, n, tail = fold(list(enumerate(entries)), get_options().display_max_rows)
    return list(head), n, list(tail)


def _entry_cells(i: int, e: ContentEntry, removed: bool) -> list[str]:
    what = e.referenced_file if e.content_type == ContentType.MANIFEST_DV else e.location
    name = h.code(cut(file_name(what or "")))
    if removed:
        name = f"<s>{name}</s>"
    return [h.esc(f"#{i}"), status_badge(e.status) + (h.badge(t("removed by DV"), "deleted")
                                                      if removed else ""),
            h.esc(content_type_word(e.content_type)), name, h.esc(count(e.record_count)),
            h.esc(size(e.file_size_in_bytes))]


def _entry_line(i: int, e: ContentEntry, removed: bool) -> list[str]:
    what = e.referenced_file if e.content_type == ContentType.MANIFEST_DV else e.location
    return [f"#{i}", e.status.name + (f" ({t('removed by DV')})" if removed else ""),
            _content_type_noun(e.content_type), cut(file_name(what or "")),
            count(e.record_count), size(e.file_size_in_bytes)]


_HEADERS = ["ord", "status", "type", "file", "records", "size"]


def _manifest_parts(location: str, kind: str, entries: Sequence[ContentEntry], length: int,
                    removed: frozenset[int], extra: list[tuple[str, str]]
                    ) -> tuple[str, str]:
    head, n, tail = _rows(entries)
    html_rows = [_entry_cells(i, e, i in removed) for i, e in head]
    text_rows = [_entry_line(i, e, i in removed) for i, e in head]
    if n:
        html_rows.append([h.muted(hidden(n, "entries")), "", "", "", "", ""])
        text_rows.append([hidden(n, "entries"), "", "", "", "", ""])
    html_rows += [_entry_cells(i, e, i in removed) for i, e in tail]
    text_rows += [_entry_line(i, e, i in removed) for i, e in tail]
    facts = [(t("location"), cut(location)), (t("content"), kind), (t("size"), size(length)),
             (t("entries"), f"{len(entries):,}" + (f" ({_type_counts(entries)})" if entries
                                                    else "")), *extra]
    headers = [t(x) for x in _HEADERS]
    html = h.kv((k, h.esc(v)) for k, v in facts) + h.table(headers, html_rows)
    text = tx.kv(facts, indent="  ") + "\n" + tx.table(headers, text_rows, indent="  ")
    return html, text


@register(ContentManifest, text_repr=True)
def _render_manifest(m: ContentManifest) -> Rendered:
    word = t("root manifest" if m.kind.value == "root" else f"{m.kind.value} manifest")
    html, text = _manifest_parts(m.location, m.kind.value, m.entries, m.length, frozenset(), [])
    return Rendered(h.card(f"v4 {word}", cut(file_name(m.location)),
                           h.muted(plural(len(m.entries), "entry", "entries")), html),
                    f"v4 {word} {cut(file_name(m.location))}\n{text}")


@register(LeafManifest, text_repr=True)
def _render_leaf(leaf: LeafManifest) -> Rendered:
    m = leaf.manifest
    removed = frozenset(int(v) for v in leaf.deleted.to_numpy()) if leaf.deleted else frozenset()
    shown = sorted(removed)[:_MAX_ORDINALS]
    more = len(removed) - len(shown)
    dv = (t("none") if not removed else ", ".join(f"#{v}" for v in shown)
          + (", " + t("+{n:,} more", n=more) if more > 0 else ""))
    extra = [(t("root entry"), f"{leaf.root_entry.status.name} "
                               f"{_content_type_noun(leaf.root_entry.content_type)}"),
             (t("removed by its manifest DV"), dv),
             (t("live entries"), f"{len(leaf.live_entries()):,}")]
    html, text = _manifest_parts(m.location, m.kind.value, m.entries, m.length, removed, extra)
    return Rendered(h.card(t("v4 leaf manifest"), cut(file_name(m.location)),
                           h.muted(t("{n:,} removed by manifest DV", n=len(removed))), html),
                    f"{t('v4 leaf manifest')} {cut(file_name(m.location))}\n{text}")
