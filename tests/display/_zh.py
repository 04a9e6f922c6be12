"""Helpers of the Chinese-label tests (tests/display and tests/widgets): what a person reads in
a rendering, and which English labels of the catalog are left in it."""

from __future__ import annotations

import html
import re
import string
from collections.abc import Iterable

from icenb.labels import ZH

#: Words that are labels in one place and values (spec enum values, operations, dialects,
#: content kinds, type and transform names) in another: a zh rendering keeps the values.
VALUE_WORDS = frozenset({
    "data", "deletes", "delete", "append", "replace", "overwrite", "root", "spark", "trino",
    "identity", "bucket", "void", "struct", "list", "map", "long", "string", "double",
    "timestamp", "asc", "desc", "null", "true", "false", "utc",
})

#: Small words that say nothing alone (a fragment of a template between two fields).
STOPWORDS = frozenset({"with", "of", "and", "the", "for", "in", "on", "at", "to", "by", "from",
                       "or", "per", "as", "is", "not", "no", "all", "its", "it", "a", "an"})

_CJK = re.compile(r"[\u4e00-\u9fff]")


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def fragments(key: str) -> list[str]:
    """The literal text of a catalog key, split at its ``{fields}``."""
    return [lit for lit, *_ in string.Formatter().parse(key) if lit]


def _english_phrases() -> list[tuple[str, re.Pattern[str]]]:
    """Each English fragment of the catalog worth looking for: at least one word of three or
    more letters that is not also a value; matched on word boundaries."""
    out: dict[str, re.Pattern[str]] = {}
    for key in ZH:
        for frag in fragments(key):
            phrase = " ".join(re.findall(r"[A-Za-z][A-Za-z'-]*", frag))
            words = phrase.split()
            if not words or not any(len(w) >= 3 and w.lower() not in STOPWORDS for w in words):
                continue
            if len(words) == 1 and words[0].lower() in VALUE_WORDS:
                continue
            out[phrase] = re.compile(r"(?<![\w-])" + r"\s+".join(map(re.escape, words))
                                     + r"(?![\w-])")
    return sorted(out.items(), key=lambda kv: -len(kv[0]))


PHRASES = _english_phrases()


def _dot_labels(dot: str) -> str:
    """The label texts of a DOT source (record syntax and escapes removed)."""
    out = []
    for m in re.finditer(r'label="((?:[^"\\]|\\.)*)"', dot):
        s = re.sub(r"\\[nl]", " ", m.group(1))
        s = re.sub(r"\\(.)", r"\1", s)
        s = re.sub(r"<[^>]*>", " ", s)  # record ports
        out.append(re.sub(r"[{}|]", " ", s))
    return "\n".join(out)


def visible_text(rendered: str, *, is_html: bool) -> str:
    """What a person reads: tags, style blocks, code font and preformatted text (SQL, JSON,
    diffs) removed; the labels of a DOT source kept."""
    if not is_html:
        return rendered
    s = re.sub(r"<style>.*?</style>", " ", rendered, flags=re.S)
    dots = [_dot_labels(html.unescape(m))
            for m in re.findall(r"<pre>(digraph.*?)</pre>", s, flags=re.S)]
    s = re.sub(r"<pre>.*?</pre>", " ", s, flags=re.S)
    s = re.sub(r"<code>.*?</code>", " ", s, flags=re.S)
    s = re.sub(r"<title>.*?</title>", " ", s, flags=re.S)
    s = re.sub(r"<[^>]+>", " ", s)
    return html.unescape(s) + "\n" + "\n".join(dots)


def english_labels(text: str, values: Iterable[str] = ()) -> list[str]:
    """The catalog's English phrases found in ``text`` once ``values`` (names, ids, paths,
    spec field names) and identifier-like tokens (``a_b``, ``a.b``, ``a-b``, ``a=b``) are
    taken out."""
    for v in sorted(set(values), key=len, reverse=True):
        if v:
            text = re.sub(r"(?<![\w-])" + re.escape(v) + r"(?![\w-])", " ", text)
    while True:  # nested values of metadata tables: {field: value, ...}, maybe cut (…)
        text, n = re.subn(r"\{[^{}\n]*?(?:\}|…)", " ", text)
        if not n:
            break
    text = re.sub(r"\S*[A-Za-z0-9][/\\._=:-]+[A-Za-z0-9]\S*", " ", text)
    text = re.sub(r"\S*=\S*|\w+\(\S*", " ", text)  # a=b, call(...)
    found = []
    for phrase, pattern in PHRASES:
        if pattern.search(text):
            found.append(phrase)
            text = pattern.sub(" ", text)
    return found
