"""The safety campaign, bounded for ``make test`` (issue 17); ``python -m tests.campaign``
runs it at full size and prints the figures for a note.

Each part prints its figures (tried / held / failed by kind) in the test output.
"""

from __future__ import annotations

from pathlib import Path

from tests.campaign import bad_inputs, concurrency, corruption, crashes

#: Files with checksums icenb writes and verifies (Parquet page CRCs plus the manifest's record
#: count; the deletion vector's CRC): damage there is never read as data. The Avro metadata
#: files are cross-checked but carry no checksum: their rare silent flips are printed, not
#: asserted (``corruption.py``'s docstring).
CHECKSUMMED = ("data", "position-deletes", "deletion-vector")


def test_bad_inputs_are_refused_by_name_and_change_nothing(tmp_path: Path) -> None:
    counts, failures = bad_inputs.run(tmp_path / "wh")
    print("\n" + bad_inputs.report(counts))
    assert sum(counts.values()) >= 250
    assert counts["held"] == sum(counts.values()), "\n".join(failures)


def test_corrupt_files_are_never_read_as_data() -> None:
    counts = corruption.run(trials=8)
    print("\n" + corruption.report(counts))
    wrong = sum(n for (k, o), n in counts.items() if o == "wrong" and k in CHECKSUMMED)
    assert wrong == 0, corruption.report(counts)
    assert sum(n for (_k, o), n in counts.items() if o == "raw") == 0, corruption.report(counts)


def test_killed_writers_leave_committed_states(tmp_path: Path) -> None:
    counts = crashes.run(4, tmp_path)
    print("\n" + crashes.report(counts))
    assert counts["held"] == 4, crashes.report(counts)


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    counts, acknowledged = concurrency.run(1, tmp_path, workers=3, ops=10)
    print("\n" + concurrency.report(counts, acknowledged))
    assert counts["held"] == 1 and acknowledged == 30, concurrency.report(counts, acknowledged)
