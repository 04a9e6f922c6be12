"""What a learner reads in the committed notebooks (issue 22): no temporary path anywhere, no
19-digit snapshot id in a drawing's title, no hex bound where a human value exists, and no engine
warnings (nothing on stderr). Drawings are data-URI SVG images inside the HTML: they are decoded
and read too."""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(p for p in NOTEBOOKS_DIR.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)

TEMP_PATH = re.compile(
    r"(/private)?(/var/folders|/tmp)/|\bicenb-\d\d-[a-z0-9_]{6,}|\btmp[a-z0-9_]{8}\b")
LONG_ID = re.compile(r"(?<![\d.])-?\d{18,19}(?![\d.])")
TITLE = re.compile(r'class="icenb-title"[^>]*>(.*?)</span>', re.S)
SVG_TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)
SVG_URI = re.compile(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)")
HEX_BOUND = re.compile(r"b'\\x[0-9a-f]{2}|\\x[0-9a-f]{2}\\x[0-9a-f]{2}|\b0x[0-9a-fA-F]{8,}\b")


def _texts(output: dict[str, Any]) -> list[str]:
    """Every text of one output: streams, plain text, HTML and the SVGs inside it."""
    if output.get("output_type") == "stream":
        return [str(output.get("text", "") if isinstance(output.get("text"), str)
                    else "".join(output.get("text", [])))]
    found: list[str] = []
    for mime, value in output.get("data", {}).items():
        text = value if isinstance(value, str) else "".join(value) if isinstance(value, list) \
            else json.dumps(value)
        if mime.startswith("text/") or mime.endswith("json"):
            found.append(text)
        found += [base64.b64decode(m).decode("utf-8", "replace") for m in SVG_URI.findall(text)]
    return found


def _outputs(path: Path) -> list[tuple[int, dict[str, Any]]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(i, o) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
            for o in c.get("outputs", [])]


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: str(p.relative_to(NOTEBOOKS_DIR)))
def outputs(request: pytest.FixtureRequest) -> tuple[str, list[tuple[int, dict[str, Any]]]]:
    path: Path = request.param
    return path.name, _outputs(path)


def test_no_temporary_path(outputs: tuple[str, list[tuple[int, dict[str, Any]]]]) -> None:
    name, found = outputs
    bad = [(i, m.group(0)) for i, o in found for text in _texts(o)
           for m in TEMP_PATH.finditer(text)]
    assert not bad, f"{name}: temporary paths in outputs (cell, text): {bad[:5]}"


def test_no_long_id_in_a_drawing_title(outputs: tuple[str, list[tuple[int, dict[str, Any]]]]
                                       ) -> None:
    name, found = outputs
    bad = []
    for i, o in found:
        for text in _texts(o):
            for title in TITLE.findall(text):
                if LONG_ID.search(html.unescape(title)):
                    bad.append((i, html.unescape(title)))
    assert not bad, f"{name}: 19-digit ids in drawing titles (cell, title): {bad[:5]}"


def test_no_hex_bound(outputs: tuple[str, list[tuple[int, dict[str, Any]]]]) -> None:
    name, found = outputs
    bad = [(i, m.group(0)) for i, o in found for text in _texts(o)
           for m in HEX_BOUND.finditer(text)]
    assert not bad, f"{name}: hex values in outputs (cell, text): {bad[:5]}"


def test_no_engine_warnings(outputs: tuple[str, list[tuple[int, dict[str, Any]]]]) -> None:
    name, found = outputs
    bad = [(i, "".join(o.get("text", ""))[:200]) for i, o in found
           if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    assert not bad, f"{name}: stderr output (engine warnings?) in cells: {bad[:3]}"
