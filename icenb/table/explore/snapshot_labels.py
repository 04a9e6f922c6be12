"""Short snapshot labels (``S1``, ``S2``, ...) for drawings of small tables.

One rule, so the same snapshot carries the same label in every view (snapshot tree, metadata
tree, diff, changelog, logs) and keeps it after older snapshots expire:

- a snapshot with a sequence number > 0 (format v2+; spec "Sequence Numbers": each commit takes
  the next one, so they are unique in a table) is ``S<sequence number>``;
- a v1 snapshot (sequence number 0) is ``S<n>``, ``n`` its 1-based position by timestamp among
  the table's sequence-number-0 snapshots; a table upgraded to v2 numbers its v1 snapshots
  ``S0.<n>`` so they never meet a v2 ``S<n>``. Only these positions can shift when an older v1
  snapshot expires (v1 metadata holds nothing else that orders snapshots for good);
- two snapshots with one sequence number (not written by a spec-following writer) are told
  apart by a letter: ``S5``, ``S5b``.

Labels are used only while the table has at most ``display_short_ids_max`` snapshots (0: never);
above that, drawings show full ids. Here, in the table layer, so the builders of pictures
(metadata trees) can name their snapshot too; the display layer reads it through
``icenb.display.kit.fmt.snapshot_label``.
"""

from __future__ import annotations

from collections.abc import Iterable

from icenb.options import get_options
from icenb.spec.snapshot import Snapshot

__all__ = ["label_for", "snapshot_labels"]


def snapshot_labels(snapshots: Iterable[Snapshot], limit: int | None = None) -> dict[int, str]:
    """Snapshot id -> short label for a table's snapshots; ``{}`` when there are more than
    ``limit`` (default: the ``display_short_ids_max`` option; 0 means never)."""
    snaps = list({s.snapshot_id: s for s in snapshots}.values())
    limit = get_options().display_short_ids_max if limit is None else limit
    if limit <= 0 or len(snaps) > limit:
        return {}
    v1 = sorted((s for s in snaps if not s.sequence_number),
                key=lambda s: (s.timestamp_ms, s.snapshot_id))
    upgraded = len(v1) < len(snaps)
    out = {s.snapshot_id: (f"S0.{i}" if upgraded else f"S{i}") for i, s in enumerate(v1, 1)}
    by_seq: dict[int, list[Snapshot]] = {}
    for s in snaps:
        if s.sequence_number:
            by_seq.setdefault(s.sequence_number, []).append(s)
    for seq, group in by_seq.items():
        group.sort(key=lambda s: (s.timestamp_ms, s.snapshot_id))
        for i, s in enumerate(group):
            out[s.snapshot_id] = f"S{seq}" + ("" if i == 0 else chr(ord("a") + min(i, 25)))
    return out


def label_for(snapshots: Iterable[Snapshot], snapshot_id: int | None) -> str:
    """The short label of ``snapshot_id`` among ``snapshots``, else its full id (``-`` for
    None)."""
    if snapshot_id is None:
        return "-"
    return snapshot_labels(snapshots).get(snapshot_id, str(snapshot_id))
