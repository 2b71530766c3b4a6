"""Optimizers written in Python (docs/optimizers.md, "Wrapping a Python optimizer").

A plugin file's class that subclasses ``Optimizer`` is an optimizer, never an instrument driver. It has the
contract of a TypeScript ``defineOptimizer``:

    name          the name campaigns choose it by (optimizer_type); default: the class name
    description   the docstring's first paragraph
    capabilities  which parameter types and campaign shapes it honours (CAPABILITIES, snake_case)
    __init__(self, setup, **options)
                  one optimizer state per campaign; ``setup`` has space, objectives, seed, constraints and
                  outcome_constraints (already checked by labdeck), the other parameters are its options
                  (each with a type hint and a default: the campaign page's form)
    suggest(n)    the next n parameter sets, a list of {name: value}
    observe(rows) measured results, a list of {"params": {...}, "values": {...}}
    snapshot()    a JSON summary for the campaign page (optional)

labdeck refuses what the capabilities do not cover before the optimizer is created (constraints given to
one without ``constraints``, a batch to one without ``batch`` ...), and rebuilds the state from the records
(create, then observe every measurement) whenever it needs to: after a restart of the server or the host.
"""
import inspect
import threading

from . import schema

CAPABILITIES = {
    "parameter_types": ("range", "int", "choice"),
    "multi_objective": False,
    "batch": False,
    "constraints": False,
    "outcome_constraints": False,
    "log_scale": False,
    "steps": False,
}


class Setup:
    """What a campaign gives its optimizer: the searched space (fixed parameters taken out), the objectives,
    the seed, linear constraints and outcome constraints, all as labdeck checked them (plain dicts)."""

    def __init__(self, space, objectives, seed=0, constraints=(), outcome_constraints=()):
        self.space = list(space)
        self.objectives = list(objectives)
        self.seed = seed
        self.constraints = list(constraints)
        self.outcome_constraints = list(outcome_constraints)

    def __repr__(self):
        return "Setup(space=%r, objectives=%r, seed=%r)" % (self.space, self.objectives, self.seed)


class Optimizer:
    """Base class of Python optimizers (see this module's docstring)."""

    name = None
    capabilities = {}

    def __init__(self, setup):
        self.setup = setup

    def suggest(self, n):
        raise NotImplementedError("%s.suggest(n) is required" % type(self).__name__)

    def observe(self, rows):
        raise NotImplementedError("%s.observe(rows) is required" % type(self).__name__)

    def snapshot(self):
        return {}


def is_optimizer_class(cls):
    return inspect.isclass(cls) and issubclass(cls, Optimizer) and cls is not Optimizer


def describe(cls):
    """What the runtime needs to define the optimizer: name, description, capabilities, options (JSON Schema).
    Raises ValueError naming what is wrong with the class."""
    where = "optimizer class %s" % cls.__name__
    caps = cls.capabilities
    if not isinstance(caps, dict):
        raise ValueError("%s: capabilities must be a dict (keys: %s)" % (where, ", ".join(CAPABILITIES)))
    unknown = sorted(set(caps) - set(CAPABILITIES))
    if unknown:
        raise ValueError("%s: unknown capabilities %s (known: %s)" % (where, ", ".join(unknown), ", ".join(CAPABILITIES)))
    merged = dict(CAPABILITIES, **caps)
    merged["parameter_types"] = list(merged["parameter_types"])
    for verb in ("suggest", "observe"):
        if getattr(cls, verb) is getattr(Optimizer, verb):
            raise ValueError("%s: define %s()" % (where, verb))
    d = schema.describe_class(cls)
    options = d["options"]
    props = options.get("properties", {})
    if "setup" not in props:
        raise ValueError("%s: __init__ must take setup as its first parameter: __init__(self, setup, **options)" % where)
    props.pop("setup")
    options["required"] = [r for r in options.get("required", []) if r != "setup"]
    if options["required"]:
        raise ValueError("%s: give every option a default (%s has none)" % (where, ", ".join(options["required"])))
    del options["required"]
    return {"name": cls.name or cls.__name__, "class": cls.__name__, "description": d["description"],
            "capabilities": merged, "options": options}


class Instances:
    """The live optimizer states of the host, by the handle the runtime gave each."""

    def __init__(self):
        self.items = {}  # handle -> (instance, lock)
        self.lock = threading.Lock()

    def create(self, cls, handle, setup, config):
        obj = cls(Setup(**setup), **config)
        with self.lock:
            self.items[handle] = (obj, threading.Lock())

    def call(self, handle, method, args):
        """suggest(n) or observe(rows): its checked result, and the optimizer's snapshot after it."""
        with self.lock:
            entry = self.items.get(handle)
        if entry is None:
            return None
        obj, lock = entry
        with lock:
            if method == "suggest":
                value = _suggestions(obj, args.get("n"))
            elif method == "observe":
                obj.observe(args.get("rows") or [])
                value = None
            else:
                raise ValueError("an optimizer has no method %r (suggest, observe)" % method)
            snap, _ = schema.to_json(obj.snapshot() or {})
        return {"value": value, "snapshot": snap}

    def dispose(self, handle):
        with self.lock:
            return self.items.pop(handle, None) is not None


def _suggestions(obj, n):
    out = obj.suggest(n)
    name = type(obj).__name__
    if not isinstance(out, (list, tuple)) or not all(isinstance(p, dict) for p in out):
        raise TypeError("%s.suggest(%d) must return a list of dicts {parameter: value}, got %r" % (name, n, out))
    value, warnings = schema.to_json(list(out))
    if warnings:
        raise TypeError("%s.suggest(%d) returned values that are not JSON: %s" % (name, n, "; ".join(warnings)))
    return value
