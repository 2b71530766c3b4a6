"""Describing a driver class or instance: its methods and properties as MethodDescs, its options as JSON Schema.

Part of what schema.py offers (describe_class, describe_instance, lifecycle, safety_of, consumes_of).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import typing

from .docstrings import param_docs, summary
from .hints import (_EMPTY, _NO_RESULT, _NOT_JSON, _PROPERTIES, _UNIONS, _call_params, _hints, _is_instrument_class,
                    _is_library_class, _json_default, _members, _object_schema, _param_hint, _peel, _schema,
                    _setter_hint, _unknown)


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
