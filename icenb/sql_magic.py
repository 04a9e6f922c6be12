"""The ``%%sql`` cell magic: ``%load_ext icenb``, then a cell of Spark SQL over a warehouse.

::

    %%sql [WAREHOUSE] [--limit N] [--out NAME] [--namespace NS]
    SELECT * FROM db.events VERSION AS OF 'audit' WHERE id < 10

The cell runs through :meth:`icenb.Warehouse.sql` (names, time travel, metadata tables and
views as there) and shows a bounded table: the first ``N`` rows (``--limit``, default 20),
saying whether more exist (only ``N + 1`` rows are read; the total is not counted). The output
is a :class:`SqlResult`: HTML in JupyterLab, text in a console; it holds the rows
(``.rows``, Arrow) and the DataFrame (``.df``). ``--out NAME`` (``-o``) also binds the Spark
DataFrame to the variable ``NAME``; ``--namespace`` (``-n``) is where one-part names are looked
up.

Which warehouse: ``WAREHOUSE`` names a variable of the notebook holding an
:class:`icenb.Warehouse` (``%%sql wh``); without it, the warehouse opened last in the kernel
(``icenb.warehouse(path)``, :func:`icenb.table.warehouse.current_warehouse`).

An error shows as one short line ``icenb: <error class>: <message>`` (no traceback) and stops a
"run all" like any failed cell: icenb errors as they are (a missing table, ref or snapshot),
Spark's errors reduced to their message.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from icenb.errors import IcebergError
from icenb.labels import t
from icenb.reprs import safe_repr
from icenb.table.warehouse import Warehouse, current_warehouse

__all__ = ["DEFAULT_LIMIT", "SqlCellError", "SqlResult", "load_ipython_extension", "run_sql_cell"]

#: Rows a cell shows unless ``--limit`` says otherwise.
DEFAULT_LIMIT = 20
#: Characters of the query a result shows as its title.
_TITLE_CHARS = 160


class SqlCellError(Exception):
    """A ``%%sql`` cell that failed: IPython shows :meth:`_render_traceback_`, one short line,
    instead of a traceback."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message

    def _render_traceback_(self) -> list[str]:
        return [f"icenb: {self.kind}: {self.message}"]


@safe_repr
class SqlResult:
    """The result of a ``%%sql`` cell: at most ``limit`` rows, and whether more exist."""

    def __init__(self, query: str, df: Any, rows: pa.Table, limit: int, more: bool) -> None:
        self.query = query
        self.df = df
        self.rows = rows
        self.limit = limit
        self.more = more

    def _subtitle(self) -> str:
        n = self.rows.num_rows
        if self.more:
            return t("first {n:,} rows; more exist (see --limit)", n=n)
        return t("{n:,} rows", n=n)

    def _rendered(self) -> Any:
        from icenb.display.inspect_repr import arrow_table_rendered
        from icenb.options import set_options

        title = " ".join(self.query.split())
        if len(title) > _TITLE_CHARS:  # a long query: its start names it
            title = title[:_TITLE_CHARS - 1] + "…"
        with set_options(display_max_rows=max(self.rows.num_rows, 1)):
            return arrow_table_rendered(self.rows, title, kind="SQL", subtitle=self._subtitle())

    def _repr_html_(self) -> str:
        from icenb.display.kit import html as h

        html: str = h.document(self._rendered().html)
        return html

    def __repr__(self) -> str:
        text: str = self._rendered().text
        return text


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would print and exit
        raise SqlCellError("usage", f"{message}; %%sql [WAREHOUSE] [--limit N] [--out NAME] "
                           "[--namespace NS]")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="%%sql", add_help=False)
    parser.add_argument("warehouse", nargs="?", default=None)
    parser.add_argument("-l", "--limit", type=int, default=DEFAULT_LIMIT)
    parser.add_argument("-o", "--out", default=None)
    parser.add_argument("-n", "--namespace", default=None)
    return parser


def _arguments(line: str) -> argparse.Namespace:
    try:
        words = shlex.split(line)
    except ValueError as e:
        raise SqlCellError("usage", str(e)) from None
    args = _parser().parse_args(words)
    if args.limit < 0:
        raise SqlCellError("usage", f"--limit must be 0 or more, not {args.limit}")
    if args.out is not None and not args.out.isidentifier():
        raise SqlCellError("usage", f"--out needs a variable name, not {args.out!r}")
    return args


def _warehouse(name: str | None, user_ns: Mapping[str, Any]) -> Warehouse:
    if name is not None:
        if name not in user_ns:
            raise SqlCellError("usage", f"no variable named {name!r} in the notebook")
        found = user_ns[name]
        if not isinstance(found, Warehouse):
            raise SqlCellError("usage", f"{name} is not an icenb warehouse (it holds a "
                               f"{type(found).__name__})")
        return found
    current = current_warehouse()
    if current is None:
        raise SqlCellError("usage", "no warehouse is open: open one (wh = "
                           "icenb.warehouse(path)) or name it (%%sql wh)")
    return current


#: Where an icenb error's own line starts in a message Spark wraps around it.
_ICENB_ERROR = re.compile(r"icenb\.errors\.(\w+): (.+)")


def _spark_error(e: BaseException) -> SqlCellError | None:
    """A Spark error (analysis, a failed Python data source or task) as one short line."""
    from icenb.spark.view_sql import is_spark_error

    if not is_spark_error(e):
        return None
    get = getattr(e, "getMessage", None)
    text = str(get() if callable(get) else e)
    found = _ICENB_ERROR.search(text)
    if found is not None:
        return SqlCellError(found.group(1), found.group(2).strip())
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return SqlCellError(type(e).__name__, lines[0] if lines else type(e).__name__)


def run_sql_cell(line: str, cell: str, user_ns: dict[str, Any]) -> SqlResult:
    """Run one ``%%sql`` cell (the magic line's arguments, the cell's SQL) in ``user_ns``."""
    args = _arguments(line)
    if not cell.strip():
        raise SqlCellError("usage", "the cell has no SQL")
    wh = _warehouse(args.warehouse, user_ns)
    try:
        df = wh.sql(cell, namespace=args.namespace)
        rows = df.limit(args.limit + 1).toArrow()
    except IcebergError as e:
        raise SqlCellError(type(e).__name__, str(e)) from None
    except Exception as e:
        short = _spark_error(e)
        if short is None:
            raise
        raise short from None
    more = rows.num_rows > args.limit
    if args.out is not None:
        user_ns[args.out] = df
    return SqlResult(cell.strip(), df, rows.slice(0, args.limit), args.limit, more)


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%sql`` with an IPython shell (``%load_ext icenb`` calls this)."""

    def sql(line: str, cell: str | None = None) -> SqlResult:
        if cell is None:
            raise SqlCellError("usage", "%%sql is a cell magic: put the query on the lines "
                               "below %%sql")
        return run_sql_cell(line, cell, ipython.user_ns)

    ipython.register_magic_function(sql, "line_cell", "sql")
