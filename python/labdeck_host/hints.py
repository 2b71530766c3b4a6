"""Type hints -> JSON Schema, and which classes are instruments: the type machinery of schema.py.

Resolves a driver's annotations (string ones and ``from __future__ import annotations`` included), tells
instruments from data and library classes, and gives the JSON Schema of a hint. describe.py, convert.py and
encode.py build on it; the underscore names are this package's own, not an API. Standard library only.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import functools
import inspect
import math
import os
import pathlib
import sys
import sysconfig
import types
import typing

from . import markers

_EMPTY = inspect.Parameter.empty
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_UNIONS = (typing.Union,) + ((types.UnionType,) if hasattr(types, "UnionType") else ())
_NO_RESULT = (None, type(None), typing.NoReturn) + ((typing.Never,) if hasattr(typing, "Never") else ())
_LISTS = (list, collections.abc.Sequence, collections.abc.MutableSequence, collections.abc.Collection,
          collections.abc.Iterable)
_SETS = ((set, set), (frozenset, frozenset), (collections.abc.Set, set), (collections.abc.MutableSet, set))
_DICTS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)
_SCALARS = ((bool, "boolean", "a boolean"), (int, "integer", "an integer"), (float, "number", "a number"),
            (str, "string", "a string"))
_TEMPORAL = ((datetime.datetime, "date-time"), (datetime.date, "date"), (datetime.time, "time"))
_PROPERTIES = (property, functools.cached_property)
# Packages whose objects are data, never instrument drivers (the standard library is excluded too).
_DATA_PACKAGES = frozenset({"numpy", "pandas", "scipy", "matplotlib", "xarray", "pint", "pydantic", "pydantic_core"})
_INSTRUMENT_TEXT = "name of a connected instrument"
_NOT_JSON = object()


# --- which objects are instruments ---------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _stdlib_dirs() -> tuple:
    paths = sysconfig.get_paths()
    return tuple({os.path.realpath(paths[key]) + os.sep for key in ("stdlib", "platstdlib")})


def _is_library_class(cls: type) -> bool:
    """True for classes of the standard library or of a data package (object, Logger, Lock, ndarray...).

    A module is told by where its file is, so a lab's ``random.py`` is not taken for the standard one.
    """
    module = str(getattr(cls, "__module__", None) or "builtins")
    top = module.partition(".")[0]
    if top in _DATA_PACKAGES:
        return True
    path = getattr(sys.modules.get(module), "__file__", None)
    if path:
        path = os.path.realpath(path)
        return path.startswith(_stdlib_dirs()) and "-packages" not in path
    return top in sys.builtin_module_names or top in getattr(sys, "stdlib_module_names", ())  # no file: builtin


def _members(cls: type) -> dict:
    """Public methods and properties of ``cls`` by name, in declaration order, library bases skipped.

    The MRO is walked from the most-base class down, so an override keeps its base's position.
    """
    found = {}
    for klass in reversed(cls.__mro__):
        if _is_library_class(klass):
            continue
        for name, raw in vars(klass).items():
            if name.startswith("_"):
                continue
            wrapped = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
            if inspect.isfunction(wrapped) or isinstance(raw, _PROPERTIES):
                found[name] = raw
            else:
                found.pop(name, None)  # a base's method replaced by a plain attribute
    return found


def _is_pydantic_model(hint) -> bool:
    pydantic = sys.modules.get("pydantic")  # only when the lab's code imported it
    return pydantic is not None and isinstance(hint, type) and issubclass(hint, pydantic.BaseModel)


def _is_instrument_class(hint) -> bool:
    """True for a user class whose instances are instruments (a parameter that takes an instrument)."""
    return (isinstance(hint, type) and not issubclass(hint, enum.Enum) and not dataclasses.is_dataclass(hint)
            and not _is_pydantic_model(hint) and not _is_library_class(hint) and bool(_members(hint)))


def is_instrument(value) -> bool:
    """True when a module-level value should become an instrument of a deck.

    That is an instance of a user class (not of the standard library or a data package like numpy)
    with at least one public method or property: modules, classes, functions, plain data, enum
    members, loggers, locks and method-less dataclass instances are not instruments.
    """
    if value is None or inspect.isroutine(value) or isinstance(value, (
            type, types.ModuleType, enum.Enum, int, float, complex, str, bytes, list, dict, tuple, set, frozenset)):
        return False
    cls = type(value)
    return not _is_library_class(cls) and bool(_members(cls))


# --- type hints -> JSON Schema -----------------------------------------------------------------------

def _split_union(text: str) -> list:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in "[(") - (char in "])")
        if char == "|" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [p.strip() for p in parts + [text[start:]]]


def _resolve(annotation, namespace: dict):
    """Evaluate a string annotation (``X | Y`` works on 3.9 too); a string that does not resolve stays."""
    if not isinstance(annotation, str):
        return annotation
    try:
        value = eval(annotation, namespace)  # noqa: S307 - the lab's own annotation, in its own module
        return _resolve(value, namespace) if isinstance(value, str) and value != annotation else value
    except Exception:
        parts = _split_union(annotation)
        resolved = [_resolve(p, namespace) for p in parts] if len(parts) > 1 else [annotation]
        if not any(isinstance(p, str) for p in resolved):
            try:
                return typing.Union[tuple(resolved)]
            except TypeError:
                pass
        return annotation


def _hints(obj) -> dict:
    """Resolved annotations of a function or class (``from __future__ import annotations`` included)."""
    obj = inspect.unwrap(obj) if callable(obj) and not isinstance(obj, type) else obj
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except Exception:  # one unresolvable name: resolve the others one by one
        module = sys.modules.get(getattr(obj, "__module__", None) or "")
        namespace = {**(vars(module) if module else {}), **getattr(obj, "__globals__", {})}
        raw = vars(obj).get("__annotations__", {}) if isinstance(obj, type) else getattr(obj, "__annotations__", {})
        return {name: _resolve(value, namespace) for name, value in (raw or {}).items()}


def _peel(hint) -> tuple:
    """``Annotated[T, "text", ...]`` -> (T, "text"); any other hint -> (hint, None)."""
    if typing.get_origin(hint) is typing.Annotated:
        inner, *metadata = typing.get_args(hint)
        return inner, next((m for m in metadata if isinstance(m, str)), None)
    return hint, None


def _enum_values(cls) -> list:
    values = [member.value for member in cls]
    return values if all(isinstance(v, (str, int, float)) for v in values) else [member.name for member in cls]


def _set_type(container):
    """set or frozenset for a set-like annotation origin, else None."""
    return next((made for typ, made in _SETS if container is typ), None)


def _unknown(schema: dict) -> bool:
    return not set(schema) - {"description"}


def _object_schema(properties: dict, required: list) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _schema(hint, instruments: bool = False, seen: tuple = ()) -> dict:
    """JSON Schema for a type hint ({} when unknown); ``instruments``: a user class is an instrument name."""
    extra = markers.schema_of(typing.get_args(hint)[1:]) if typing.get_origin(hint) is typing.Annotated else {}
    hint, note = _peel(hint)
    schema = _bare_schema(hint, instruments, seen)
    if note:
        schema["description"] = note
    schema.update(extra)  # ivoryOS's markers (markers.py), by duck typing
    return schema


def _bare_schema(hint, instruments: bool, seen: tuple) -> dict:
    def sub(h):
        return _schema(h, instruments, seen)

    if hint in (None, type(None)):
        return {"type": "null"}
    if hasattr(hint, "__supertype__"):  # typing.NewType
        return sub(hint.__supertype__)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return {"enum": [a.value if isinstance(a, enum.Enum) else a for a in args]}
    if origin in _UNIONS:
        options = [sub(a) for a in sorted(args, key=lambda a: a is type(None))]  # null last
        return {} if any(_unknown(o) for o in options) else {"anyOf": options}
    if tuple in (origin, hint):
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": sub(args[0])}
        if args:
            return {"type": "array", "prefixItems": [sub(a) for a in args], "minItems": len(args),
                    "maxItems": len(args)}
        return {"type": "array"}
    container = origin or hint
    if container in _LISTS or _set_type(container):
        return {"type": "array", **({"items": sub(args[0])} if args else {})}
    if container in _DICTS:
        return {"type": "object", **({"additionalProperties": sub(args[1])} if len(args) == 2 else {})}
    if not isinstance(hint, type):
        return {}  # Any, a TypeVar, an unresolved string...
    for typ, name, _ in _SCALARS:
        if hint is typ:
            return {"type": name}
    if issubclass(hint, enum.Enum):
        return {"enum": _enum_values(hint), "x-python-enum": hint.__name__}
    for typ, fmt in _TEMPORAL:
        if issubclass(hint, typ):
            return {"type": "string", "format": fmt}
    if issubclass(hint, pathlib.PurePath):
        return {"type": "string"}
    if dataclasses.is_dataclass(hint):
        return _dataclass_schema(hint, instruments, seen)
    if _is_typeddict(hint):
        return _typeddict_schema(hint, instruments, seen)
    if _is_pydantic_model(hint):
        return dict(hint.model_json_schema() if hasattr(hint, "model_json_schema") else hint.schema())
    if instruments and _is_instrument_class(hint):
        return {"type": "string", "x-instrument": hint.__name__, "description": _INSTRUMENT_TEXT}
    return {}


def _is_typeddict(hint) -> bool:
    """A TypedDict class (typing's or typing_extensions'): a dict with declared keys, the usual driver result."""
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__")


def _typeddict_schema(cls, instruments: bool, seen: tuple) -> dict:
    if cls in seen:  # a recursive TypedDict
        return {"type": "object", "title": cls.__name__}
    hints = _hints(cls)
    properties = {key: _schema(hint, instruments, seen + (cls,)) for key, hint in hints.items()}
    required = [key for key in hints if key in cls.__required_keys__]
    return {**_object_schema(properties, required), "title": cls.__name__}


def _dataclass_schema(cls, instruments: bool, seen: tuple) -> dict:
    if cls in seen:  # a recursive dataclass
        return {"type": "object", "title": cls.__name__}
    hints, properties, required = _hints(cls), {}, []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        schema = properties[field.name] = _schema(hints.get(field.name, typing.Any), instruments, seen + (cls,))
        default = _json_default(field.default)  # _NOT_JSON for MISSING
        if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            required.append(field.name)
        elif default is not _NOT_JSON:
            schema["default"] = default
    return {**_object_schema(properties, required), "title": cls.__name__}


def _json_default(value):
    """A default value as plain JSON (an Enum member as its value), or _NOT_JSON."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _NOT_JSON
    if isinstance(value, (list, tuple)) or (isinstance(value, dict) and all(isinstance(k, str) for k in value)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        converted = {key: _json_default(item) for key, item in items}
        if any(item is _NOT_JSON for item in converted.values()):
            return _NOT_JSON
        return converted if isinstance(value, dict) else list(converted.values())
    return _NOT_JSON


def _param_hint(param: inspect.Parameter, hints: dict):
    """A parameter's annotation, or _EMPTY; a None default makes it Optional (as on Python < 3.11)."""
    hint = hints.get(param.name, _EMPTY)
    if param.default is None and hint not in (_EMPTY, typing.Any):
        try:
            return typing.Optional[hint]
        except TypeError:  # not a type (e.g. an unresolved string)
            pass
    return hint


def _call_params(fn, skip: int) -> list:
    """The named parameters of ``fn`` (``*args``/``**kwargs`` left out), without the first ``skip``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        return []
    if skip and params and params[0].kind not in _VARIADIC:
        params = params[1:]
    return [p for p in params if p.kind not in _VARIADIC]


def _setter_hint(prop: property):
    """The type a property's setter takes: its value annotation, else the getter's return annotation."""
    params = _call_params(prop.fset, 1)
    hint = _hints(prop.fset).get(params[0].name, _EMPTY) if params else _EMPTY
    if hint is _EMPTY and prop.fget is not None:
        hint = _hints(prop.fget).get("return", _EMPTY)
    return typing.Any if hint is _EMPTY else hint
