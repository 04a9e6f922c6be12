"""``python -m icenb.demo [PATH] [--force]``: build the demo warehouse (default ``warehouse``)."""

from __future__ import annotations

import argparse
import sys
import time

from icenb.demo import MARKER, build
from icenb.errors import IcebergError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icenb.demo",
                                     description="Build icenb's demo warehouse.")
    parser.add_argument("path", nargs="?", default="warehouse")
    parser.add_argument("--force", action="store_true", help="rebuild an existing demo")
    args = parser.parse_args(argv)
    start = time.monotonic()
    from pathlib import Path

    existed = (Path(args.path) / MARKER).exists()
    try:
        wh = build(args.path, force=args.force)
    except IcebergError as e:
        print(f"icenb.demo: {e}", file=sys.stderr)
        return 2
    if existed and not args.force:
        print(f"the demo warehouse at {wh.location} is ready (rebuild with --force)")
    else:
        print(f"built the demo warehouse at {wh.location} in {time.monotonic() - start:.1f} s: "
              + ", ".join(wh.tables("shop") + wh.views("shop")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
