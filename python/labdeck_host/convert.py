"""JSON arguments -> the Python values a driver's annotations ask for (a call's or a connect's), or ArgError.

Part of what schema.py offers (ArgError, convert, convert_kwargs, bind_call).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import pathlib
import sys
import typing

from .hints import (_DICTS, _EMPTY, _LISTS, _SCALARS, _TEMPORAL, _UNIONS, _call_params, _enum_values, _hints,
                    _is_instrument_class, _is_pydantic_model, _param_hint, _peel, _set_type, _setter_hint)


class ArgError(Exception):
    """A bad argument for a call or a connect.

    ``field`` is the parameter name (dotted for nested values, e.g. ``cfg.speed``) and ``message`` is
    phrased to follow it, e.g. ``must be one of "fast", "slow"``.
    """

    def __init__(self, field: str, message: str):
        super().__init__(f"{field} {message}")
        self.field = field
        self.message = message


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
