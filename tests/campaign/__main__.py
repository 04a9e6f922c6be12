"""``python -m tests.campaign [scale]``: the safety campaign at full size (issue 17) - 20
concurrent runs, 50 kills, 640 corruptions and every bad input at scale 1 - printing the
figures for a note. It takes a few minutes on two cores."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.campaign import bad_inputs, concurrency, corruption, crashes


def main(scale: int = 1) -> None:
    with tempfile.TemporaryDirectory(prefix="icenb-campaign-") as d:
        root = Path(d)
        for name, part in (
                ("bad inputs", lambda: bad_inputs.report(bad_inputs.run(root / "bad")[0])),
                ("corruption", lambda: corruption.report(corruption.run(trials=40 * scale))),
                ("kills", lambda: crashes.report(crashes.run(50 * scale, _dir(root, "kills")))),
                ("concurrency", lambda: concurrency.report(
                    *concurrency.run(20 * scale, _dir(root, "concurrency"))))):
            start = time.monotonic()
            text = part()
            print(f"{text}\n({name}: {time.monotonic() - start:.0f} s)\n", flush=True)


def _dir(root: Path, name: str) -> Path:
    (root / name).mkdir()
    return root / name


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
