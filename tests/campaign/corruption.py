"""Campaign: corrupt every kind of file a table has and read it back (issue 17).

For each file kind - Parquet data file, position-delete file, deletion vector (Puffin),
manifest, manifest list, table metadata JSON - flip single bits at random positions and
truncate at random lengths, then open and read the table with a fresh handle. Each trial is:

- **held**: the rows read are exactly the rows before, or an ``IcebergError`` names the damage;
- **wrong**: different rows were read without an error (silent wrong data);
- **raw**: an exception that is not an ``IcebergError`` escaped.

Parquet data and delete files have page CRCs and a row count checked against their manifest
entry; deletion vectors their CRC. Avro manifests, manifest lists and the metadata JSON have no
checksum (as in Java); icenb cross-checks them instead - required fields present (a flipped byte
in the Avro schema renames one), a manifest's ADDED/EXISTING/DELETED entries against its
manifest-list counts, its format version against its sequence number, an empty list against the
snapshot summary - so what remains is a flip that still decodes into another plausible value
(a deletion vector's ``referenced_data_file``: about 1 in 2,400 trials).

It prints the figures per kind and in total (tried / held / wrong / raw). ``make test`` runs a
bounded version (``test_campaign.py``); ``python tests/campaign/corruption.py 100`` runs 100
trials per kind and mutation.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

if __name__ == "__main__":  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import icenb
from icenb.errors import IcebergError

KINDS = ("data", "position-deletes", "deletion-vector", "manifest", "manifest-list",
         "metadata-json")


def _build(root: Path) -> None:
    wh = icenb.warehouse(root)
    v2 = wh.create_table("db.v2", "id long, v string", format_version=2,
                         properties={"write.delete.mode": "merge-on-read"})
    v2.append([{"id": i, "v": f"value-{i}"} for i in range(500)])
    v2.delete("id < 10")
    v3 = wh.create_table("db.v3", "id long, v string", format_version=3,
                         properties={"write.delete.mode": "merge-on-read"})
    v3.append([{"id": i, "v": f"value-{i}"} for i in range(500)])
    v3.delete("id < 10")


def _rows(root: Path, name: str) -> list[int]:
    return sorted(r["id"] for r in icenb.warehouse(root).table(name).to_arrow().to_pylist())


def _files(root: Path, table: str, kind: str) -> list[Path]:
    base = root / "db" / table
    out = []
    for d, _x, names in os.walk(base):
        for n in names:
            p = Path(d) / n
            is_manifest_list = n.startswith("snap-") and n.endswith(".avro")
            match = {
                "data": n.endswith(".parquet") and "deletes" not in n,
                "position-deletes": n.endswith("-deletes.parquet"),
                "deletion-vector": n.endswith(".puffin"),
                "manifest": n.endswith(".avro") and not is_manifest_list,
                "manifest-list": is_manifest_list,
                "metadata-json": n.endswith(".metadata.json"),
            }[kind]
            if match:
                out.append(p)
    # the current metadata file only: older ones are not read
    if kind == "metadata-json":
        out = sorted(out)[-1:]
    return out


def run(trials: int = 10, seed: int = 17) -> Counter[tuple[str, str]]:
    """``trials`` bit flips and ``trials`` truncations per file kind; the outcome counts."""
    root = Path(tempfile.mkdtemp(prefix="icenb-campaign-"))
    rnd = random.Random(seed)
    counts: Counter[tuple[str, str]] = Counter()
    try:
        _build(root)
        for kind in KINDS:
            table = "v2" if kind == "position-deletes" else "v3"
            name = f"db.{table}"
            good = _rows(root, name)
            for path in _files(root, table, kind):
                raw = path.read_bytes()
                for mutation in ("flip", "truncate"):
                    for _ in range(trials):
                        damaged = bytearray(raw)
                        if mutation == "flip":
                            pos = rnd.randrange(len(raw))
                            damaged[pos] ^= 1 << rnd.randrange(8)
                        else:
                            damaged = damaged[:rnd.randrange(len(raw))]
                        path.write_bytes(bytes(damaged))
                        try:
                            outcome = "held" if _rows(root, name) == good else "wrong"
                        except IcebergError:
                            outcome = "held"
                        except Exception:
                            outcome = "raw"
                        counts[(kind, outcome)] += 1
                path.write_bytes(raw)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return counts


def report(counts: Counter[tuple[str, str]]) -> str:
    lines = [f"{'file kind':<18} {'tried':>6} {'held':>6} {'wrong':>6} {'raw':>6}"]
    for kind in (*KINDS, "total"):
        pick = [k for k in KINDS] if kind == "total" else [kind]
        c = {o: sum(counts[(k, o)] for k in pick) for o in ("held", "wrong", "raw")}
        lines.append(f"{kind:<18} {sum(c.values()):>6} {c['held']:>6} {c['wrong']:>6} "
                     f"{c['raw']:>6}")
    return "\n".join(lines)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    print(report(run(trials=n)))
