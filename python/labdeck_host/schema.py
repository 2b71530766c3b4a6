"""What a Python instrument driver offers, as JSON Schema, and JSON <-> Python value conversion.

The instrument host uses this module to describe a lab's driver classes and instances (methods,
properties, parameters, docstrings), to convert the JSON arguments of a call or a connect to what
the Python annotations ask for, and to turn results back into JSON. Standard library only; it runs
on Python 3.9+, and never imports numpy or pydantic itself (it uses them only when the lab's code did).
"""

from __future__ import annotations

import base64
import collections.abc
import dataclasses
import datetime
import decimal
import enum
import functools
import inspect
import json
import math
import os
import pathlib
import re
import sys
import sysconfig
import types
import typing

from . import markers

__all__ = [
    "ArgError", "is_instrument", "describe_instance", "describe_class", "bind_call", "convert",
    "convert_kwargs", "to_json", "summary", "param_docs",
]

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
_MAX_DEPTH = 50
_NOT_JSON = object()


class ArgError(Exception):
    """A bad argument for a call or a connect.

    ``field`` is the parameter name (dotted for nested values, e.g. ``cfg.speed``) and ``message`` is
    phrased to follow it, e.g. ``must be one of "fast", "slow"``.
    """

    def __init__(self, field: str, message: str):
        super().__init__(f"{field} {message}")
        self.field = field
        self.message = message


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


# --- docstrings ------------------------------------------------------------------------------------

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


def _default_schema(default) -> dict:
    """The schema guessed from a default value when a parameter has no annotation."""
    if isinstance(default, enum.Enum):
        return _schema(type(default))
    guesses = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), ((list, tuple), "array"),
               (dict, "object"))
    return next(({"type": name} for typ, name in guesses if isinstance(default, typ)), {})


def _takes_instrument(hint) -> bool:
    hint = _peel(hint)[0]
    if typing.get_origin(hint) in _UNIONS:
        others = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = others[0] if len(others) == 1 else None
    return _is_instrument_class(hint)


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


def _params_schema(fn, docs: dict, skip: int) -> tuple:
    """(JSON Schema object of fn's parameters, inferred field names, instrument parameter names)."""
    hints, properties, required, inferred, instruments = _hints(fn), {}, [], [], []
    for param in _call_params(fn, skip):
        hint = _param_hint(param, hints)
        schema = _default_schema(param.default) if hint is _EMPTY else _schema(hint, instruments=True)
        if hint is _EMPTY or _unknown(schema):
            inferred.append(param.name)
        if hint is not _EMPTY and _takes_instrument(hint):
            instruments.append(param.name)
        if docs.get(param.name):
            schema["description"] = docs[param.name]
        default = _json_default(param.default)  # _NOT_JSON for _EMPTY
        if param.default is _EMPTY:
            required.append(param.name)
        elif default is not _NOT_JSON:
            schema["default"] = default
        properties[param.name] = schema
    return _object_schema(properties, required), inferred, instruments


def _return_schema(fn):
    hints = _hints(fn)
    if "return" not in hints or _peel(hints["return"])[0] in _NO_RESULT:
        return None
    return _schema(hints["return"])


# --- describing classes and instances --------------------------------------------------------------

def _class_doc(cls) -> str:
    """The docstring of ``cls`` or of its nearest user base (not a library base, nor a dataclass's generated one)."""
    for klass in cls.__mro__:
        doc = vars(klass).get("__doc__")
        generated = dataclasses.is_dataclass(klass) and (doc or "").startswith(klass.__name__ + "(")
        if doc and not generated and not _is_library_class(klass):
            return inspect.cleandoc(doc)
    return ""


# Lifecycle hooks: labdeck calls them itself (Host.dispose: before a reload, at shutdown), so they are no
# operation of the instrument: not in its method list, its page, the builder's palette or the API. A workflow
# step that closed the port would break every later step. Dunders (__enter__, __exit__, __del__) are out as
# every underscore name is. `disconnect` is a hook only in a class without `connect`: with both, the pair is
# how an operator brings an instrument back after a cable was pulled, so both stay (`disconnect` collapsed on
# the page, as it ends what the instrument can do until `connect`).
LIFECYCLE = ("close", "dispose")


def lifecycle(name: str, members) -> bool:
    """Is ``name`` a lifecycle hook of a class whose public members are ``members`` (names)?"""
    return name in LIFECYCLE or (name == "disconnect" and "connect" not in members)


def _desc(name: str, description: str, params: dict, inferred: list, returns, *, kind: str, target: str,
          is_async: bool = False, safety: str = "unknown", declared: bool = False, consumes=None) -> dict:
    desc = {"name": name, "description": description, "params": params}
    if returns is not None:
        desc["returns"] = returns
    if consumes is not None:
        desc["consumes"] = consumes
    # `inferred` says labdeck guessed: false when the author declared it all (every parameter and the return
    # type-hinted, and a docstring), as a schema in TypeScript would
    desc.update({"safety": safety, "hidden": name == "disconnect", "order": 0, "inferred": not declared,
                 "inferredFields": inferred, "async": is_async, "kind": kind, "target": target})
    return desc


SAFETY_LEVELS = ("readonly", "idempotent", "hazardous")


def safety_of(fn) -> str:
    """A method's safety level as its author declared it, without importing labdeck: the function attribute
    ``__labdeck_safety__`` ("readonly", "idempotent" or "hazardous"; a decorator the driver defines can set
    it). Anything else, or nothing, is "unknown" (docs/safety.md)."""
    level = getattr(fn, "__labdeck_safety__", None)
    return level if level in SAFETY_LEVELS else "unknown"


def consumes_of(fn):
    """What a call of the method uses, makes or moves of the lab's resources, as its author declared it without
    importing labdeck: the function attribute ``__labdeck_consumes__``, one dict or a list of them, each
    ``{"resource": "tips" | {"arg": "source"}, "amount": 1 | {"arg": "volume_ml"}, "to": {"arg": "target"}}``
    (docs/resources.md). Passed on as declared; labdeck checks it (one that does not fit is logged and not
    counted). None when nothing is declared."""
    declared = getattr(fn, "__labdeck_consumes__", None)
    if declared is None:
        return None
    items = [declared] if isinstance(declared, dict) else declared
    if not isinstance(items, (list, tuple)):
        return [{"invalid": repr(declared)[:80]}]
    try:
        return json.loads(json.dumps(list(items)))
    except (TypeError, ValueError):
        return [{"invalid": repr(declared)[:80]}]


def _declared(fn, doc, inferred: list) -> bool:
    """Every parameter typed (nothing inferred), the return type-hinted (``-> None`` too), and a docstring."""
    return bool(doc) and not inferred and "return" in _hints(fn)


def _setter_hint(prop: property):
    """The type a property's setter takes: its value annotation, else the getter's return annotation."""
    params = _call_params(prop.fset, 1)
    hint = _hints(prop.fset).get(params[0].name, _EMPTY) if params else _EMPTY
    if hint is _EMPTY and prop.fget is not None:
        hint = _hints(prop.fget).get("return", _EMPTY)
    return typing.Any if hint is _EMPTY else hint


def _property_descs(cls, name: str, prop) -> list:
    """The MethodDesc of a readable property, and of its setter ``set_<name>`` unless cls has one already."""
    descs = []
    getter = prop.fget if isinstance(prop, property) else prop.func
    if getter is not None:
        doc = inspect.getdoc(prop)
        descs.append(_desc(name, summary(doc), _object_schema({}, []), [], _return_schema(getter),
                           kind="property", target=name, safety="readonly", declared=_declared(getter, doc, [])))
    if getattr(prop, "fset", None) is not None and not hasattr(cls, "set_" + name):
        value = _schema(_setter_hint(prop), instruments=True)
        descs.append(_desc("set_" + name, summary(prop.fset.__doc__) or f"Set {name}.",
                           _object_schema({"value": value}, ["value"]), ["value"] if _unknown(value) else [], None,
                           kind="setter", target=name, safety="idempotent"))
    return descs


def _method_descs(cls) -> list:
    descs = []
    members = _members(cls)
    for name, raw in members.items():
        if isinstance(raw, _PROPERTIES):
            descs += _property_descs(cls, name, raw)
            continue
        if lifecycle(name, members):
            continue
        fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
        doc = inspect.getdoc(fn)
        params, inferred, _ = _params_schema(fn, param_docs(doc), 0 if isinstance(raw, staticmethod) else 1)
        descs.append(_desc(name, summary(doc), params, inferred, _return_schema(fn), kind="method", target=name,
                           is_async=inspect.iscoroutinefunction(fn), declared=_declared(fn, doc, inferred),
                           safety=safety_of(fn), consumes=consumes_of(fn)))
    for order, desc in enumerate(descs):
        desc["order"] = order
    return descs


def describe_instance(obj) -> dict:
    """Class, module, description and methods (MethodDesc list) of an instrument instance."""
    cls = type(obj)
    return {"class": cls.__name__, "module": cls.__module__, "description": summary(_class_doc(cls)),
            "methods": _method_descs(cls)}


def describe_class(cls) -> dict:
    """A driver class: its ``__init__`` options as JSON Schema, and the methods its instances would have."""
    doc = _class_doc(cls)
    docs = {**param_docs(doc), **param_docs(inspect.getdoc(cls.__init__))}
    options, inferred, instrument_params = _params_schema(cls.__init__, docs, 1)
    return {"name": cls.__name__, "module": cls.__module__, "description": summary(doc), "options": options,
            "inferredFields": inferred, "instrumentParams": instrument_params, "methods": _method_descs(cls)}


# --- JSON arguments -> Python values -------------------------------------------------------------

def _choices(values) -> str:
    return ", ".join(json.dumps(v, default=str) for v in values)


def _check_names(args: dict, names: list, required: list, label: str) -> None:
    for key in args:
        if key not in names:
            raise ArgError(key, f"is not a parameter of {label} (parameters: {', '.join(names) or 'none'})")
    for name in required:
        if name not in args:
            raise ArgError(name, "is required")


def convert_kwargs(fn_or_cls, kwargs: dict, instances: dict, label: str) -> dict:
    """Check and convert keyword arguments for a function, or for a class's ``__init__`` (a connect).

    Unknown and missing names raise ArgError; ``label`` names the function or class in messages.
    """
    is_class = isinstance(fn_or_cls, type)
    fn = fn_or_cls.__init__ if is_class else fn_or_cls
    params, hints = _call_params(fn, 1 if is_class else 0), _hints(fn)
    _check_names(kwargs, [p.name for p in params], [p.name for p in params if p.default is _EMPTY], label)
    converted = {}
    for param in params:
        if param.name in kwargs:
            hint = _param_hint(param, hints)
            if hint is _EMPTY:  # no annotation: an Enum default still says what the value means
                hint = type(param.default) if isinstance(param.default, enum.Enum) else typing.Any
            converted[param.name] = convert(hint, kwargs[param.name], param.name, instances)
    return converted


def bind_call(obj, desc: dict, args: dict, instances: dict) -> tuple:
    """(fn, kwargs, is_async) for calling the method ``desc`` (a MethodDesc) of ``obj`` with JSON ``args``.

    Call it as ``fn(**kwargs)`` (and await the result when is_async). A property reads the attribute;
    a setter assigns it and returns None.
    """
    kind, target, label = desc["kind"], desc["target"], desc["name"]
    if kind == "property":
        _check_names(args, [], [], label)
        return (lambda: getattr(obj, target)), {}, False
    if kind == "setter":
        _check_names(args, ["value"], ["value"], label)

        def assign(value):
            setattr(obj, target, value)

        value = convert(_setter_hint(getattr(type(obj), target)), args["value"], "value", instances)
        return assign, {"value": value}, False
    fn = getattr(obj, target)
    return fn, convert_kwargs(fn, args, instances, label), bool(desc.get("async"))


def convert(hint, value, field: str, instances: dict):
    """Convert a JSON value to what the annotation ``hint`` asks for; raise ArgError(field, ...) when it can't.

    A user class (a parameter taking an instrument) takes the name of one of ``instances``.
    Unknown hints and Any leave the value unchanged.
    """
    hint = _peel(hint)[0]
    if hasattr(hint, "__supertype__"):
        return convert(hint.__supertype__, value, field, instances)
    if hint in (None, type(None)):
        if value is None:
            return None
        raise ArgError(field, "must be null")
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return _convert_literal(args, value, field)
    if origin in _UNIONS:
        return _convert_union(args, value, field, instances)
    if tuple in (origin, hint):
        return _convert_tuple(args, value, field, instances)
    container = origin or hint
    if container in _LISTS:
        return _convert_items(args[0] if args else typing.Any, value, field, instances)
    if _set_type(container):
        return _set_type(container)(_convert_items(args[0] if args else typing.Any, value, field, instances))
    if container in _DICTS:
        if not isinstance(value, dict):
            raise ArgError(field, "must be an object")
        if len(args) != 2:
            return dict(value)
        return {key: convert(args[1], item, f"{field}.{key}", instances) for key, item in value.items()}
    if not isinstance(hint, type):
        return value
    for typ, _, noun in _SCALARS:
        if hint is typ:
            return _convert_scalar(typ, noun, value, field)
    if issubclass(hint, enum.Enum):
        return _convert_enum(hint, value, field)
    for typ, fmt in _TEMPORAL:
        if issubclass(hint, typ):
            return _convert_temporal(hint, fmt, value, field)
    if issubclass(hint, pathlib.PurePath):
        return hint(_convert_scalar(str, "a string", value, field))
    if dataclasses.is_dataclass(hint):
        return _convert_dataclass(hint, value, field, instances)
    if _is_pydantic_model(hint):
        return _convert_model(hint, value, field)
    if _is_instrument_class(hint):
        return _convert_instrument(hint, value, field, instances)
    return value


def _convert_scalar(typ: type, noun: str, value, field: str):
    if isinstance(value, bool) and typ is not bool:
        raise ArgError(field, f"must be {noun}")
    if typ is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if typ is float and isinstance(value, int):
        return float(value)
    if isinstance(value, typ):
        return value
    raise ArgError(field, f"must be {noun}")


def _convert_literal(args: tuple, value, field: str):
    for choice in args:
        if isinstance(choice, enum.Enum) and value in (choice.value, choice.name):
            return choice
        if value == choice and type(value) is type(choice):
            return choice
    raise ArgError(field, "must be one of " + _choices(a.value if isinstance(a, enum.Enum) else a for a in args))


def _convert_union(args: tuple, value, field: str, instances: dict):
    if value is None and type(None) in args:
        return None
    errors = []
    for option in args:
        if option is not type(None):
            try:
                return convert(option, value, field, instances)
            except ArgError as error:
                errors.append(error)
    nested = [e for e in errors if e.field != field]  # e.g. a field of a dataclass: the most precise error
    messages = [e.message for e in errors] + (["must be null"] if type(None) in args else [])
    if nested or not all(m.startswith("must be ") for m in messages):
        raise (nested or errors)[0]
    raise ArgError(field, "must be " + " or ".join(m[len("must be "):] for m in messages))


def _convert_items(hint, value, field: str, instances: dict) -> list:
    if not isinstance(value, (list, tuple)):
        raise ArgError(field, "must be a list")
    return [convert(hint, item, f"{field}.{i}", instances) for i, item in enumerate(value)]


def _convert_tuple(args: tuple, value, field: str, instances: dict) -> tuple:
    if not args or (len(args) == 2 and args[1] is Ellipsis):
        return tuple(_convert_items(args[0] if args else typing.Any, value, field, instances))
    if not isinstance(value, (list, tuple)):
        raise ArgError(field, "must be a list")
    if len(value) != len(args):
        raise ArgError(field, f"must be a list of {len(args)} items")
    return tuple(convert(h, item, f"{field}.{i}", instances) for i, (h, item) in enumerate(zip(args, value)))


def _convert_enum(cls, value, field: str):
    try:
        return cls(value)
    except (ValueError, TypeError):
        if isinstance(value, str) and value in cls.__members__:
            return cls[value]
    raise ArgError(field, "must be one of " + _choices(_enum_values(cls)))


def _convert_temporal(cls, fmt: str, value, field: str):
    if isinstance(value, str):
        text = value[:-1] + "+00:00" if value.endswith("Z") and fmt != "date" else value  # 'Z' before 3.11
        try:
            return cls.fromisoformat(text)
        except ValueError:
            pass
    raise ArgError(field, f"must be an ISO 8601 {fmt} string")


def _convert_dataclass(cls, value, field: str, instances: dict):
    if not isinstance(value, dict):
        raise ArgError(field, "must be an object")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in value:
        if key not in fields:
            raise ArgError(f"{field}.{key}", f"is not a field of {cls.__name__} (fields: {', '.join(fields)})")
    kwargs = {}
    for name, f in fields.items():
        if name in value:
            kwargs[name] = convert(hints.get(name, typing.Any), value[name], f"{field}.{name}", instances)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ArgError(f"{field}.{name}", "is required")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as error:  # e.g. a check in __post_init__
        raise ArgError(field, f"is invalid: {error}") from None


def _convert_model(cls, value, field: str):
    pydantic = sys.modules["pydantic"]
    try:
        return cls.model_validate(value) if hasattr(cls, "model_validate") else cls.parse_obj(value)
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        message = first.get("msg", "is invalid")
        raise ArgError(f"{field}.{where}" if where else field, message[:1].lower() + message[1:]) from None


def _fits(instance, cls) -> bool:
    try:
        return isinstance(instance, cls)
    except TypeError:  # a Protocol that is not runtime_checkable: trust the caller
        return True


def _convert_instrument(cls, value, field: str, instances: dict):
    names = [name for name, instance in instances.items() if _fits(instance, cls)]
    if isinstance(value, str) and value in names:
        return instances[value]
    if names:
        raise ArgError(field, f"must name a connected instrument (one of: {', '.join(names)})")
    raise ArgError(field, f"must name a connected instrument (no {cls.__name__} is connected)")


# --- Python results -> JSON --------------------------------------------------------------------------

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
