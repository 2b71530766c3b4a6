"""A driver's Python results -> JSON (with warnings for what had to be sent as its repr()).

Part of what schema.py offers (to_json).
"""

from __future__ import annotations

import base64
import collections.abc
import dataclasses
import datetime
import decimal
import enum
import math
import pathlib

from .hints import _is_pydantic_model

_MAX_DEPTH = 50


def to_json(value) -> tuple:
    """(JSON value, warnings) for a call's result.

    NaN and infinities become null; numpy values, enums, dates, paths, dataclasses and pydantic models
    become their JSON forms; anything else is sent as its repr() with a warning phrased to follow the
    method name (e.g. ``returned a Foo (not JSON); sent as its repr()``).
    """
    warnings = []
    return _to_json(value, warnings, set(), 0), warnings


def _warn(warnings: list, message: str) -> None:
    if message not in warnings:  # once per result, however many items it has
        warnings.append(message)


def _repr(value, warnings: list, message: str) -> str:
    _warn(warnings, message)
    try:
        return repr(value)
    except Exception:  # a failing __repr__, or too deep to print
        return object.__repr__(value)


def _to_json(value, warnings: list, active: set, depth: int):
    if isinstance(value, enum.Enum):
        return _to_json(value.value, warnings, active, depth)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if type(value).__module__.partition(".")[0] == "numpy" and hasattr(value, "tolist"):
        return _to_json(value.tolist(), warnings, active, depth)  # arrays and numpy scalars
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return _to_json(float(value), warnings, active, depth)
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        _warn(warnings, "returned bytes (not JSON); sent as base64")
        return base64.b64encode(value).decode("ascii")
    is_dataclass = dataclasses.is_dataclass(value) and not isinstance(value, type)
    is_model = _is_pydantic_model(type(value))
    if not (is_dataclass or is_model or isinstance(value, (collections.abc.Mapping, list, tuple, set, frozenset))):
        return _repr(value, warnings, f"returned a {type(value).__name__} (not JSON); sent as its repr()")
    if depth >= _MAX_DEPTH:
        return _repr(value, warnings, f"returned a value nested more than {_MAX_DEPTH} levels deep; "
                                      "the deeper part sent as its repr()")
    key = id(value)
    if key in active:
        return _repr(value, warnings, "returned a value that contains itself; the repeated part sent as its repr()")
    active.add(key)
    try:
        if is_dataclass:
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        elif is_model:
            value = value.model_dump(mode="json") if hasattr(value, "model_dump") else value.dict()
        if isinstance(value, collections.abc.Mapping):
            return {str(k.value if isinstance(k, enum.Enum) else k): _to_json(v, warnings, active, depth + 1)
                    for k, v in value.items()}
        if isinstance(value, (set, frozenset)):
            try:
                value = sorted(value)  # a stable order
            except TypeError:
                value = list(value)
        return [_to_json(item, warnings, active, depth + 1) for item in value]
    finally:
        active.discard(key)
