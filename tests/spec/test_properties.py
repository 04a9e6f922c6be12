"""Table and view properties: each key declared once (spec/properties.py), one set of readers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from icenb.errors import ValidationError
from icenb.spec import properties as P

PACKAGE = Path(__file__).resolve().parents[2] / "icenb"
KEY = re.compile(r"(write|commit|gc|history|read\.split|schema\.name-mapping|version\.history|"
                 r"replace\.drop-dialect)\.[a-z0-9.-]+")


def test_every_property_key_is_declared_once_in_spec_properties() -> None:
    declared: dict[str, str] = {}
    for name in P.__all__:
        value = getattr(P, name)
        if isinstance(value, str):
            assert value not in declared, f"{value} declared as {declared[value]} and {name}"
            declared[value] = name
    elsewhere = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "properties.py" and path.parent.name == "spec":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and KEY.fullmatch(node.value):
                elsewhere.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value}")
    assert not elsewhere, "property keys written outside spec/properties.py:\n" + \
        "\n".join(elsewhere)


@pytest.mark.parametrize(("raw", "expected"), [("true", True), (" TRUE ", True),
                                                ("false", False), ("abc", False), ("", False)])
def test_booleans_read_as_java_does(raw: str, expected: bool) -> None:
    assert P.bool_property({P.GC_ENABLED: raw}, P.GC_ENABLED, True) is expected
    assert P.bool_property({}, P.GC_ENABLED, True) is True


def test_strict_booleans_refuse_anything_but_true_or_false() -> None:
    assert P.bool_property({P.OBJECT_STORAGE_ENABLED: "False"}, P.OBJECT_STORAGE_ENABLED,
                           True, strict=True) is False
    with pytest.raises(ValidationError) as e:
        P.bool_property({P.OBJECT_STORAGE_ENABLED: "yes"}, P.OBJECT_STORAGE_ENABLED, False,
                        strict=True)
    assert e.value.field == P.OBJECT_STORAGE_ENABLED and e.value.value == "yes"


@pytest.mark.parametrize(("raw", "expected"), [("4", 4), (" +7 ", 7), ("-1", -1)])
def test_integers_parse_as_integer_parse_int(raw: str, expected: int) -> None:
    assert P.int_property({P.COMMIT_NUM_RETRIES: raw}, P.COMMIT_NUM_RETRIES, 4) == expected


@pytest.mark.parametrize("raw", ["abc", "1_000", "1.5", "", "0x10"])
def test_bad_integers_name_the_key_and_value(raw: str) -> None:
    with pytest.raises(ValidationError) as e:
        P.int_property({P.COMMIT_NUM_RETRIES: raw}, P.COMMIT_NUM_RETRIES, 4)
    assert e.value.field == P.COMMIT_NUM_RETRIES and e.value.value == raw


def test_minimum_and_optional_defaults() -> None:
    with pytest.raises(ValidationError, match="at least 0"):
        P.int_property({P.COMMIT_NUM_RETRIES: "-1"}, P.COMMIT_NUM_RETRIES, 4, minimum=0)
    assert P.optional_int_property({}, P.PARQUET_COMPRESSION_LEVEL, None) is None
