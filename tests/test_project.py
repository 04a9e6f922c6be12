"""Project-level promises: version, typing marker, layering (DESIGN.md), documented commands."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import icenb

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "icenb"

# DESIGN.md, Architecture: "Dependencies point one way. A lower layer never imports a higher one."
# Rank of each part of the package; a module may import icenb modules of its own rank or lower.
# Modules not listed (icenb/__init__.py, future top-level helpers) are not ranked.
LAYER_RANK = {
    "errors": 0,
    "spec": 1,
    "io": 2,
    "catalog": 3,
    "table": 4,
    "view": 4,
    "spark": 5,
    "display": 5,
    "widgets": 6,
}
# Third-party packages a layer must not import. spec/: no I/O, no Spark, no Jupyter.
# Nothing outside spark/ imports pyspark when it is imported: metadata work never needs Spark.
JUPYTER = {"IPython", "ipywidgets", "anywidget", "ipykernel", "jupyter_client"}
FORBIDDEN = {
    "errors": {"pyspark", "pyarrow", "fastavro"} | JUPYTER,
    "spec": {"pyspark", "fastavro", "pyarrow.fs"} | JUPYTER,
    "io": {"pyspark"} | JUPYTER,
    "catalog": {"pyspark"} | JUPYTER,
    "table": {"pyspark"} | JUPYTER,
    "view": {"pyspark"} | JUPYTER,
    "display": {"pyspark"},
    "widgets": {"pyspark"},
}


def _pyproject_version() -> str:
    tomllib = pytest.importorskip("tomllib")
    with (REPO / "pyproject.toml").open("rb") as f:
        version: str = tomllib.load(f)["project"]["version"]
    return version


def test_version_matches_pyproject() -> None:
    assert icenb.__version__ == _pyproject_version()


def test_package_is_marked_typed() -> None:
    assert (PACKAGE / "py.typed").is_file()


def test_errors_module_is_exported() -> None:
    assert issubclass(icenb.errors.IcebergError, Exception)


def _module_level_imports(tree: ast.Module, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of imports that run when a module of `package` is imported.

    Imports inside functions (lazy imports) and under ``if TYPE_CHECKING:`` do not run at
    import time and are not returned.
    """
    found: list[tuple[int, str]] = []

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.extend(_imported(node, package))
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if test not in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, ast.With):
                visit(node.body)

    visit(tree.body)
    return found


def _modules() -> list[tuple[str, str, Path]]:
    """(module name, package its relative imports start from, path) of every icenb module."""
    result = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
            package = ".".join(parts)
        else:
            package = ".".join(parts[:-1])
        result.append((".".join(parts), package, path))
    return result


def _all_imports(tree: ast.Module, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a module: at module level, inside
    functions (lazy imports) and under ``if TYPE_CHECKING:`` alike."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.extend(_imported(node, package))
    return found


def _imported(node: ast.Import | ast.ImportFrom, package: str) -> list[tuple[int, str]]:
    """(line, absolute name) of what one import statement of ``package`` names."""
    if isinstance(node, ast.Import):
        return [(node.lineno, alias.name) for alias in node.names]
    if node.level:
        base = package.split(".")
        base = base[: len(base) - (node.level - 1)]
        name = ".".join([*base, node.module] if node.module else base)
    else:
        name = node.module or ""
    return [(node.lineno, name), *((node.lineno, f"{name}.{a.name}") for a in node.names)]


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYER_RANK else None


def _matches(name: str, banned: str) -> bool:
    return name == banned or name.startswith(banned + ".")


def test_layers_only_import_downwards() -> None:
    """Every import counts for the layer rule, lazy and ``TYPE_CHECKING`` ones included; only
    the composition root (``icenb/__init__.py``, in no layer) wires layers together. The
    third-party bans apply to what runs at import time."""
    violations: dict[tuple[str, int, str], str] = {}  # first offending name per line and rule
    for module, package, path in _modules():
        layer = _layer(module)
        if layer is None:
            continue
        where = str(path.relative_to(REPO))
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=where)
        for line, name in _all_imports(tree, package):
            target = _layer(name) if name.startswith("icenb.") else None
            if target is not None and LAYER_RANK[target] > LAYER_RANK[layer]:
                rule = f"layer {layer} must not import layer {target}"
                violations.setdefault((where, line, rule), name)
        for line, name in _module_level_imports(tree, package):
            for banned in FORBIDDEN.get(layer, set()):
                if _matches(name, banned):
                    rule = f"{banned} is not allowed in {layer}"
                    violations.setdefault((where, line, rule), name)
    report = [
        f"{where}:{line} imports {name} ({rule})"
        for (where, line, rule), name in violations.items()
    ]
    assert not report, "\n".join(report)


def test_layer_check_sees_violations() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "import pyspark.sql\n"
        "from ..table import Table\n"
        "if TYPE_CHECKING:\n"
        "    from icenb.widgets import W\n"
        "def f():\n"
        "    import IPython\n"
    )
    names = [name for _, name in _module_level_imports(tree, "icenb.spec")]
    assert "pyspark.sql" in names
    assert "icenb.table" in names
    assert not any(n.startswith(("icenb.widgets", "IPython")) for n in names)
    every = [name for _, name in _all_imports(tree, "icenb.spec")]
    assert "icenb.widgets" in every and "IPython" in every   # lazy and TYPE_CHECKING ones


# DESIGN.md: "PyIceberg and Iceberg Java are peers to test against, never runtime dependencies."
# PyIceberg is installed with the dev extra, so only this check catches an import of it.
PEERS = ("pyiceberg",)


def _peer_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of every import of a peer anywhere in a module, lazy imports included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        found += [(node.lineno, n) for n in names if any(_matches(n, p) for p in PEERS)]
    return found


def test_icenb_never_imports_its_peers() -> None:
    report = [
        f"{path.relative_to(REPO)}:{line} imports {name}"
        for _, _, path in _modules()
        for line, name in _peer_imports(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not report, "\n".join(report)
    sample = ast.parse("def f():\n    from pyiceberg.table import metadata\nimport pyicebergx\n")
    assert _peer_imports(sample) == [(2, "pyiceberg.table")]


def test_readme_commands_are_make_targets() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([A-Za-z][\w-]*):", makefile, flags=re.M))
    commands = set(re.findall(r"`make ([\w-]+)`", readme))
    assert commands == {"lab", "test", "test-spark-oldest"}
    assert commands <= targets


def test_no_private_name_is_imported_across_modules() -> None:
    """Issue 16: a ``_name`` is private to its module; what another module needs is public."""
    found = []
    for _module, package, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                name = _imported(node, package)[0][1]
                if name.startswith("icenb"):
                    found += [f"{path.relative_to(REPO)}:{node.lineno} {name}.{a.name}"
                              for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, "\n".join(found)


def test_operations_reach_a_table_through_table_operations() -> None:
    """Issue 16: operations ask ``table.operations`` (TableOperations) for the commit target,
    the current state and how to show a commit, not ``Table``'s private methods."""
    private = {"_writable", "_loaded", "_committed"}
    found = []
    for _module, _package, path in _modules():
        if path.relative_to(PACKAGE).as_posix() in ("table/table.py", "table/view.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in private:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} .{node.attr}")
    assert not found, "\n".join(found)


def _faces() -> set[str]:
    """The package faces: ``icenb``, each top-level package's ``__init__`` and each top-level
    module (``icenb.errors``, ``icenb.options``)."""
    out = {"icenb"}
    for path in PACKAGE.iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            out.add(f"icenb.{path.name}")
        elif path.suffix == ".py" and path.stem != "__init__" and not path.stem.startswith("_"):
            out.add(f"icenb.{path.stem}")
    return out


def test_widgets_import_package_faces_only() -> None:
    """Issue 16: the widget layer uses what a user could (``icenb.display``, ``icenb.table``,
    ``icenb.spec``, ``icenb.errors``...), never a module inside another package."""
    faces = _faces()
    found = []
    for module, package, path in _modules():
        if not module.startswith("icenb.widgets"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            name = _imported(node, package)[0][1]
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [name]
            found += [f"{path.relative_to(REPO)}:{node.lineno} {n}" for n in names
                      if n.startswith("icenb") and n not in faces
                      and not n.startswith("icenb.widgets")]
    assert not found, "\n".join(found)


def _model_modules() -> set[str]:
    """The stems of every module and package of the model layers (spec, io, catalog, table)."""
    out: set[str] = set()
    for layer in ("spec", "io", "catalog", "table"):
        for path in (PACKAGE / layer).rglob("*.py"):
            out.add(path.parent.name if path.stem == "__init__" else path.stem)
    return out


def test_display_modules_are_named_after_what_they_draw() -> None:
    """Issue 16: a display module (or package) is named after the model module it draws,
    with an optional ``_repr`` suffix (``schema_repr`` draws ``spec/schema.py``); the toolkit
    they draw with lives in ``display/kit/`` and the registry of renderers beside them."""
    models = _model_modules()
    infrastructure = {"__init__", "registry"}
    found = []
    for path in sorted((PACKAGE / "display").iterdir()):
        if path.name in ("kit", "static", "__pycache__"):
            continue
        stem = path.stem if path.suffix == ".py" else path.name
        if path.suffix not in (".py", "") or stem in infrastructure:
            continue
        if stem.removesuffix("_repr") not in models:
            found.append(str(path.relative_to(REPO)))
    assert not found, "display modules named after no model module:\n" + "\n".join(found)
