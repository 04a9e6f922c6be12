"""A local S3-protocol server for the object-store tests: moto's standalone server (PyPI
``moto[server]``) on 127.0.0.1, one per test session. Credentials and endpoint reach icenb as a
catalog's FileIO properties (``s3.endpoint``, ``s3.access-key-id``, ``s3.secret-access-key``,
``s3.region``: Iceberg's names)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow.fs as pafs

REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def s3_server() -> Iterator[dict[str, str]]:
    """Start moto's server; yield the FileIO properties that reach it."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's S3 server did not start (is moto[server] "
                                       "installed in .venv?)") from None
                time.sleep(0.1)
        yield {"s3.endpoint": f"http://127.0.0.1:{port}", "s3.access-key-id": "test",
               "s3.secret-access-key": "test", "s3.region": REGION}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def make_bucket(properties: dict[str, str], bucket: str) -> pafs.S3FileSystem:
    """Create ``bucket`` on the server; the pyarrow filesystem that lists it."""
    endpoint = properties["s3.endpoint"].split("://", 1)[1]
    fs = pafs.S3FileSystem(access_key="test", secret_key="test", endpoint_override=endpoint,
                           scheme="http", region=REGION, allow_bucket_creation=True)
    fs.create_dir(bucket)
    return fs


def files(fs: pafs.S3FileSystem, bucket: str) -> list[str]:
    return sorted(f.path for f in fs.get_file_info(pafs.FileSelector(bucket, recursive=True))
                  if f.type == pafs.FileType.File)
