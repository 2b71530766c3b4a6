"""Parameter descriptions and one-line summaries from a driver's docstrings (Google, NumPy, reST/Sphinx).

Part of what schema.py offers (schema.summary, schema.param_docs). Standard library only.
"""

from __future__ import annotations

import inspect
import re


_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|Returns?|Yields?|"
    r"Raises|Examples?|Notes?|Warnings?|Warns|See Also|References|Attributes|Methods|Todo):\s*$")
_GOOGLE_ARGS = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters):\s*$")
_GOOGLE_ITEM = re.compile(r"^\**(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\**\w+(?:\s*,\s*\**\w+)*)\s*(?::.*)?$")
_REST_ITEM = re.compile(r"^:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\**(\w+)\s*:\s*(.*)$")
_DASHES = re.compile(r"^\s*-{3,}\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def summary(doc: str) -> str:
    """The first paragraph of a docstring as one line (it stops at a section such as ``Args:``)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out = []
    for i, line in enumerate(lines):
        text = line.strip()
        underlined = i + 1 < len(lines) and _DASHES.match(lines[i + 1])
        if not text or text.startswith(":") or _SECTION.match(text) or underlined:
            break
        out.append(text)
    return " ".join(out)


def _google_params(lines: list) -> dict:
    out, name, header, item = {}, None, None, None
    for line in lines:
        text, indent = line.strip(), _indent(line)
        if not text:
            continue
        if header is not None and (indent <= header or (indent == item and _SECTION.match(text))):
            header = None
        if header is None:
            if _GOOGLE_ARGS.match(text):
                header, item, name = indent, None, None
            continue
        item = indent if item is None else item
        match = _GOOGLE_ITEM.match(text) if indent <= item else None
        if match:
            name = match.group(1)
            out[name] = match.group(2).strip()
        elif name:
            out[name] = f"{out[name]} {text}".strip()
    return out


def _numpy_params(lines: list) -> dict:
    out, names, inside, item = {}, [], False, None
    for i, line in enumerate(lines):
        text = line.strip()
        if i + 1 < len(lines) and _DASHES.match(lines[i + 1]) and text and not _DASHES.match(line):
            inside, names, item = text in ("Parameters", "Other Parameters"), [], None
            continue
        if not inside or not text or _DASHES.match(line):
            continue
        item = _indent(line) if item is None else item
        match = _NUMPY_ITEM.match(text) if _indent(line) <= item else None
        if match:
            names = [n.strip().lstrip("*") for n in match.group(1).split(",")]
            out.update((n, "") for n in names)
        else:
            for n in names:
                out[n] = f"{out[n]} {text}".strip()
    return out


def _rest_params(lines: list) -> dict:
    out, name, item = {}, None, 0
    for line in lines:
        text = line.strip()
        match = _REST_ITEM.match(text)
        if match:
            name, item = match.group(1), _indent(line)
            out[name] = match.group(2).strip()
        elif name and text and _indent(line) > item:
            out[name] = f"{out[name]} {text}".strip()
        elif text:
            name = None
    return out


def param_docs(doc: str) -> dict:
    """Parameter descriptions (name -> one-line text) from a Google, NumPy or reST/Sphinx docstring."""
    lines = inspect.cleandoc(doc or "").expandtabs().splitlines()
    return {**_rest_params(lines), **_numpy_params(lines), **_google_params(lines)}
