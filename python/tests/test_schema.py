"""Tests of labdeck_host.schema: introspection, argument conversion and result conversion."""

import calendar  # noqa: F401 - the standard module, loaded for test_a_lab_module_named_like_the_standard_library
import collections
import dataclasses
import datetime
import decimal
import enum
import logging
import math
import pathlib
import subprocess
import sys
import threading
import types
import typing
import unittest
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Set, Tuple, Union
from unittest import mock

import future_mod
from labdeck_host import schema
from labdeck_host.schema import ArgError

from optional import optional

numpy, NO_NUMPY = optional("numpy")
pydantic, NO_PYDANTIC = optional("pydantic")


# --- drivers used by the tests ----------------------------------------------------------------------

class Mode(enum.Enum):
    FAST = "fast"
    SLOW = "slow"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Shape(enum.Enum):
    SQUARE = (1, 1)
    WIDE = (2, 1)


@dataclasses.dataclass
class Settings:
    speed: int
    mode: Mode = Mode.FAST
    tags: List[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Reading:
    value: float
    unit: str = "V"


UserId = typing.NewType("UserId", int)


class Cell(typing.TypedDict):
    """A cell's reading: the fields a workflow reports (cell.current_ma)."""
    current_ma: float
    power_mw: float


class PartCell(Cell, total=False):
    note: str


class CellMeter:
    def read(self) -> Cell:
        return {"current_ma": 1.0, "power_mw": 2.0}

    def read_more(self) -> PartCell:
        return {"current_ma": 1.0, "power_mw": 2.0}


class Pump:
    """A syringe pump.

    It has a second paragraph.

    Args:
        port (str): serial port,
            e.g. COM3.
        rate: flow rate in mL/min.
    """

    def __init__(self, port: str, rate=1.0, mode: Mode = Mode.FAST, *args, **kwargs):
        self.port = port
        self._temp = 20.0
        self.flow = 0.0

    def dispense(self, volume: float, speed: int = 3) -> None:
        """Dispense a volume.

        Args:
            volume: volume in mL.
            speed (int): plunger speed, 1 to 5,
                where 5 is fastest.

        Returns:
            Nothing.
        """
        self.flow = volume

    def types(self, a: int, b: float, c: str, d: bool, e: Mode, f: Level, g: Shape, h: Literal["x", "y"],
              i: Optional[int], j: Union[int, str], k: List[int], l: list, m: Sequence[float], n: Set[str],
              o: Tuple[int, str], p: Tuple[float, ...], q: dict, r: Dict[str, float], s: Mapping,
              t: Settings, u: datetime.datetime, v: datetime.date, w: datetime.time, x: pathlib.Path,
              y: Any, z: threading.Event, aa: "Pump", ab: typing.Annotated[float, "speed in mm/s"],
              ac: UserId, ad: List, ae: list[int], af: Literal[Mode.FAST]) -> Tuple[float, float]:
        return (0.0, 0.0)

    def inferred(self, a=1, b=2.5, c="s", d=True, e=[1], f={}, g=Mode.SLOW, h=None, i=object(), j=math.inf,
                 k=(1, 2)):
        return a

    def untyped(self, thing):
        return thing

    @property
    def temp(self) -> float:
        """Temperature in °C."""
        return self._temp

    @temp.setter
    def temp(self, value: float):
        self._temp = value

    @property
    def serial(self) -> str:
        """Serial number."""
        return "SN1"

    @property
    def untyped_prop(self):
        return 1

    @untyped_prop.setter
    def untyped_prop(self, value):
        pass

    @property
    def level(self) -> Level:
        return Level.LOW

    @level.setter
    def level(self, value: Level):
        pass

    def set_level(self, value: int) -> None:
        """A method that already has the setter's name."""

    async def wait(self, seconds: float = 0.0) -> str:
        """Wait asynchronously."""
        return "done"

    @staticmethod
    def version() -> str:
        """The driver version."""
        return "1.0"

    @classmethod
    def create(cls, port: str) -> "Pump":
        return cls(port)

    def _private(self):
        pass

    def __repr__(self):
        return "Pump()"

    def transfer(self, to: "Pump", backup: Optional["Pump"] = None, cfg: Optional[Settings] = None,
                 when: Optional[datetime.datetime] = None):
        """Transfer to another pump."""
        return to


class NumpyDoc:
    def go(self, x, y, z):
        """Go somewhere.

        Parameters
        ----------
        x : float
            First coordinate,
            in mm.
        y, z : float
            Other coordinates.

        Returns
        -------
        float
            Distance.
        """


class RestDoc:
    def go(self, x, y):
        """Go somewhere.

        :param x: first coordinate,
            in mm.
        :param float y: second coordinate.
        :returns: distance.
        """


class Base:
    """Base driver."""

    def first(self):
        """First, from the base."""

    def second(self) -> int:
        return 1

    def dropped(self):
        pass


class Child(Base):
    def third(self):
        pass

    def first(self):
        pass

    dropped = None


class Valve:
    def open(self):
        pass


class Motor:
    def __init__(self, pump: Pump, valve: Optional[Valve] = None, name: str = "m"):
        self.pump = pump

    def run(self):
        pass


@dataclasses.dataclass
class DataOnly:
    a: int = 1


@dataclasses.dataclass
class DataWithMethod:
    a: int = 1

    def go(self):
        pass


class Empty:
    pass


class OnlyProperty:
    @property
    def value(self) -> int:
        return 1


class Node:
    def __init__(self):
        self.child = None


if pydantic is not None:
    class Config(pydantic.BaseModel):
        speed: int
        name: str = "x"

    class UsesModel:
        def apply(self, cfg: Config) -> Config:
            return cfg


def params_of(cls, method):
    return next(m for m in schema.describe_class(cls)["methods"] if m["name"] == method)["params"]


def method(cls, name):
    return next(m for m in schema.describe_class(cls)["methods"] if m["name"] == name)


# --- tests ---------------------------------------------------------------------------------------------

class DocstringTest(unittest.TestCase):
    def test_summary_is_the_first_paragraph_on_one_line(self):
        self.assertEqual(schema.summary("Move the\n    stage.\n\nMore text."), "Move the stage.")
        self.assertEqual(schema.summary("Move.\nArgs:\n    x: where."), "Move.")
        self.assertEqual(schema.summary("Move.\n:param x: where."), "Move.")
        self.assertEqual(schema.summary("Move to these modes:\n\nmore"), "Move to these modes:")
        self.assertEqual(schema.summary(None), "")
        self.assertEqual(schema.summary(""), "")

    def test_google(self):
        doc = Pump.dispense.__doc__
        self.assertEqual(schema.param_docs(doc), {"volume": "volume in mL.",
                                                  "speed": "plunger speed, 1 to 5, where 5 is fastest."})
        doc = "Go.\n\nArguments:\n  a: one\nReturns:\n  b: not a param\n"
        self.assertEqual(schema.param_docs(doc), {"a": "one"})

    def test_numpy(self):
        self.assertEqual(schema.param_docs(NumpyDoc.go.__doc__),
                         {"x": "First coordinate, in mm.", "y": "Other coordinates.", "z": "Other coordinates."})
        self.assertEqual(schema.summary(NumpyDoc.go.__doc__), "Go somewhere.")

    def test_rest(self):
        self.assertEqual(schema.param_docs(RestDoc.go.__doc__),
                         {"x": "first coordinate, in mm.", "y": "second coordinate."})

    def test_docs_reach_the_schema(self):
        self.assertEqual(params_of(NumpyDoc, "go")["properties"]["x"]["description"], "First coordinate, in mm.")
        self.assertEqual(params_of(RestDoc, "go")["properties"]["y"]["description"], "second coordinate.")
        self.assertEqual(method(Pump, "dispense")["description"], "Dispense a volume.")


class TypeSchemaTest(unittest.TestCase):
    def setUp(self):
        self.props = params_of(Pump, "types")["properties"]

    def test_scalars(self):
        self.assertEqual([self.props[n] for n in "abcd"],
                         [{"type": "integer"}, {"type": "number"}, {"type": "string"}, {"type": "boolean"}])

    def test_enums_and_literals(self):
        self.assertEqual(self.props["e"], {"enum": ["fast", "slow"], "x-python-enum": "Mode"})
        self.assertEqual(self.props["f"], {"enum": [1, 2], "x-python-enum": "Level"})
        self.assertEqual(self.props["g"], {"enum": ["SQUARE", "WIDE"], "x-python-enum": "Shape"})
        self.assertEqual(self.props["h"], {"enum": ["x", "y"]})
        self.assertEqual(self.props["af"], {"enum": ["fast"]})

    def test_unions(self):
        self.assertEqual(self.props["i"], {"anyOf": [{"type": "integer"}, {"type": "null"}]})
        self.assertEqual(self.props["j"], {"anyOf": [{"type": "integer"}, {"type": "string"}]})

    @unittest.skipUnless(sys.version_info >= (3, 10), "X | Y at runtime needs Python 3.10")
    def test_pep604_union(self):
        namespace = {}
        exec("def f(self, a: int | None, b: str | int): pass", namespace)
        cls = type("Pep604", (), {"f": namespace["f"]})
        self.assertEqual(params_of(cls, "f")["properties"], {
            "a": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]}})

    def test_arrays(self):
        self.assertEqual(self.props["k"], {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(self.props["l"], {"type": "array"})
        self.assertEqual(self.props["ad"], {"type": "array"})
        self.assertEqual(self.props["ae"], {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(self.props["m"], {"type": "array", "items": {"type": "number"}})
        self.assertEqual(self.props["n"], {"type": "array", "items": {"type": "string"}})
        self.assertEqual(self.props["o"], {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                                           "minItems": 2, "maxItems": 2})
        self.assertEqual(self.props["p"], {"type": "array", "items": {"type": "number"}})

    def test_objects(self):
        self.assertEqual(self.props["q"], {"type": "object"})
        self.assertEqual(self.props["r"], {"type": "object", "additionalProperties": {"type": "number"}})
        self.assertEqual(self.props["s"], {"type": "object"})
        self.assertEqual(self.props["t"], {
            "type": "object", "title": "Settings", "additionalProperties": False, "required": ["speed"],
            "properties": {"speed": {"type": "integer"},
                           "mode": {"enum": ["fast", "slow"], "x-python-enum": "Mode", "default": "fast"},
                           "tags": {"type": "array", "items": {"type": "string"}}}})

    def test_formats_and_others(self):
        self.assertEqual(self.props["u"], {"type": "string", "format": "date-time"})
        self.assertEqual(self.props["v"], {"type": "string", "format": "date"})
        self.assertEqual(self.props["w"], {"type": "string", "format": "time"})
        self.assertEqual(self.props["x"], {"type": "string"})
        self.assertEqual(self.props["y"], {})
        self.assertEqual(self.props["z"], {})  # a class that is not the lab's: unknown
        self.assertEqual(self.props["aa"], {"type": "string", "x-instrument": "Pump",
                                            "description": "name of a connected instrument"})
        self.assertEqual(self.props["ab"], {"type": "number", "description": "speed in mm/s"})
        self.assertEqual(self.props["ac"], {"type": "integer"})

    def test_required_inferred_and_returns(self):
        desc = method(Pump, "types")
        self.assertEqual(desc["params"]["required"], list(self.props))
        self.assertFalse(desc["params"]["additionalProperties"])
        self.assertEqual(desc["inferredFields"], ["y", "z"])
        self.assertEqual(desc["returns"], {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}],
                                           "minItems": 2, "maxItems": 2})
        self.assertNotIn("returns", method(Pump, "dispense"))
        self.assertNotIn("returns", method(Pump, "untyped"))

    def test_a_typeddict_result_declares_its_fields(self):
        self.assertEqual(method(CellMeter, "read")["returns"], {
            "type": "object", "title": "Cell", "additionalProperties": False, "required": ["current_ma", "power_mw"],
            "properties": {"current_ma": {"type": "number"}, "power_mw": {"type": "number"}}})
        more = method(CellMeter, "read_more")["returns"]
        self.assertEqual(list(more["properties"]), ["current_ma", "power_mw", "note"])
        self.assertEqual(more["required"], ["current_ma", "power_mw"])

    def test_inferred_from_defaults(self):
        desc = method(Pump, "inferred")
        self.assertEqual(desc["params"]["properties"], {
            "a": {"type": "integer", "default": 1}, "b": {"type": "number", "default": 2.5},
            "c": {"type": "string", "default": "s"}, "d": {"type": "boolean", "default": True},
            "e": {"type": "array", "default": [1]}, "f": {"type": "object", "default": {}},
            "g": {"enum": ["fast", "slow"], "x-python-enum": "Mode", "default": "slow"},
            "h": {"default": None}, "i": {}, "j": {"type": "number"}, "k": {"type": "array", "default": [1, 2]}})
        self.assertEqual(desc["inferredFields"], list("abcdefghijk"))
        self.assertEqual(desc["params"]["required"], [])
        untyped = method(Pump, "untyped")
        self.assertEqual(untyped["params"]["properties"], {"thing": {}})
        self.assertEqual(untyped["params"]["required"], ["thing"])
        self.assertEqual(untyped["inferredFields"], ["thing"])

    def test_none_default_makes_optional(self):
        props = params_of(Pump, "transfer")["properties"]
        self.assertEqual(props["backup"]["anyOf"][0]["x-instrument"], "Pump")
        self.assertEqual(props["when"], {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
                                         "default": None})

    @unittest.skipUnless(pydantic, NO_PYDANTIC)
    def test_pydantic_model(self):
        desc = method(UsesModel, "apply")
        self.assertEqual(desc["params"]["properties"]["cfg"], Config.model_json_schema())
        self.assertEqual(desc["returns"], Config.model_json_schema())
        self.assertEqual(desc["inferredFields"], [])


class DescribeTest(unittest.TestCase):
    def test_describe_instance(self):
        desc = schema.describe_instance(Pump("COM1"))
        self.assertEqual((desc["class"], desc["module"], desc["description"]), ("Pump", __name__, "A syringe pump."))
        self.assertEqual([m["name"] for m in desc["methods"]],
                         ["dispense", "types", "inferred", "untyped", "temp", "set_temp", "serial", "untyped_prop",
                          "set_untyped_prop", "level", "set_level", "wait", "version", "create", "transfer"])
        self.assertEqual([m["order"] for m in desc["methods"]], list(range(15)))
        self.assertFalse(any(m["hidden"] for m in desc["methods"]))
        # declared in full (every parameter and the return hinted, and a docstring): not "inferred"
        self.assertEqual([m["name"] for m in desc["methods"] if not m["inferred"]],
                         ["dispense", "temp", "serial", "set_level", "wait", "version"])
        self.assertEqual(desc["methods"], schema.describe_class(Pump)["methods"])

    def test_lifecycle_hooks_are_no_operations(self):
        class Port:
            def read(self) -> str:
                """Read a line."""
                return ""

            def close(self):
                pass

            def dispose(self):
                pass

            def disconnect(self):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                pass

            def __del__(self):
                pass

        class Reconnecting(Port):
            def connect(self, port: str = "COM1") -> None:
                """Open the port again."""

        self.assertEqual([m["name"] for m in schema.describe_class(Port)["methods"]], ["read"])
        # with connect, disconnect is how an operator recovers an instrument: both stay, disconnect collapsed
        methods = {m["name"]: m for m in schema.describe_class(Reconnecting)["methods"]}
        self.assertEqual(sorted(methods), ["connect", "disconnect", "read"])
        self.assertEqual((methods["disconnect"]["hidden"], methods["connect"]["hidden"]), (True, False))

    def test_properties_and_setters(self):
        temp, set_temp = method(Pump, "temp"), method(Pump, "set_temp")
        self.assertEqual((temp["kind"], temp["target"], temp["safety"], temp["returns"], temp["description"]),
                         ("property", "temp", "readonly", {"type": "number"}, "Temperature in °C."))
        self.assertEqual(temp["params"], {"type": "object", "properties": {}, "required": [],
                                          "additionalProperties": False})
        self.assertEqual((set_temp["kind"], set_temp["target"], set_temp["safety"]), ("setter", "temp", "idempotent"))
        self.assertEqual(set_temp["params"], {"type": "object", "properties": {"value": {"type": "number"}},
                                              "required": ["value"], "additionalProperties": False})
        self.assertNotIn("returns", set_temp)
        self.assertNotIn("set_serial", [m["name"] for m in schema.describe_class(Pump)["methods"]])
        self.assertEqual(method(Pump, "set_untyped_prop")["inferredFields"], ["value"])

    def test_existing_set_method_wins_over_the_setter(self):
        desc = method(Pump, "set_level")
        self.assertEqual((desc["kind"], desc["target"]), ("method", "set_level"))
        self.assertEqual(desc["description"], "A method that already has the setter's name.")

    def test_async_static_and_class_methods(self):
        wait = method(Pump, "wait")
        self.assertTrue(wait["async"])
        self.assertEqual(wait["returns"], {"type": "string"})
        self.assertFalse(method(Pump, "dispense")["async"])
        self.assertEqual(method(Pump, "version")["params"]["properties"], {})
        self.assertEqual(method(Pump, "version")["description"], "The driver version.")
        self.assertEqual(method(Pump, "create")["params"]["properties"], {"port": {"type": "string"}})
        self.assertEqual(method(Pump, "create")["returns"], {})  # a user class is not a return type

    def test_inheritance_order_and_docs(self):
        methods = schema.describe_class(Child)["methods"]
        self.assertEqual([m["name"] for m in methods], ["first", "second", "third"])
        self.assertEqual(methods[0]["description"], "First, from the base.")
        self.assertEqual(schema.describe_class(Child)["description"], "Base driver.")

    def test_describe_class_options(self):
        desc = schema.describe_class(Pump)
        self.assertEqual((desc["name"], desc["module"], desc["description"]), ("Pump", __name__, "A syringe pump."))
        self.assertEqual(desc["options"], {
            "type": "object", "required": ["port"], "additionalProperties": False,
            "properties": {"port": {"type": "string", "description": "serial port, e.g. COM3."},
                           "rate": {"type": "number", "description": "flow rate in mL/min.", "default": 1.0},
                           "mode": {"enum": ["fast", "slow"], "x-python-enum": "Mode", "default": "fast"}}})
        self.assertEqual(desc["inferredFields"], ["rate"])
        self.assertEqual(desc["instrumentParams"], [])
        motor = schema.describe_class(Motor)
        self.assertEqual(motor["instrumentParams"], ["pump", "valve"])
        self.assertEqual(motor["options"]["required"], ["pump"])
        self.assertEqual(schema.describe_class(Empty)["options"]["properties"], {})
        self.assertEqual(schema.describe_class(Empty)["methods"], [])

    def test_dataclass_instrument_has_no_generated_description(self):
        self.assertEqual(schema.describe_class(DataWithMethod)["description"], "")

    def test_postponed_annotations(self):
        desc = schema.describe_class(future_mod.Stage)
        self.assertEqual(desc["options"]["properties"], {
            "port": {"type": "string", "description": "serial port of the controller."},
            "speed": {"type": "integer", "default": 5},
            "axis": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "limit": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None}})
        self.assertEqual(desc["inferredFields"], [])
        move = next(m for m in desc["methods"] if m["name"] == "move")
        self.assertEqual(move["params"]["properties"]["to"]["title"], "Point")
        self.assertEqual(move["params"]["properties"]["color"]["enum"], ["red", "blue"])
        self.assertEqual(move["params"]["properties"]["steps"]["anyOf"][0],
                         {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(move["returns"]["prefixItems"], [{"type": "number"}, {"type": "number"}])
        follow = next(m for m in desc["methods"] if m["name"] == "follow")
        self.assertEqual(follow["params"]["properties"]["other"]["x-instrument"], "Stage")
        partly = next(m for m in desc["methods"] if m["name"] == "partly")
        self.assertEqual(partly["params"]["properties"], {"count": {"type": "integer"}, "thing": {}})
        self.assertEqual(partly["inferredFields"], ["thing"])
        self.assertEqual(partly["returns"], {"type": "integer"})


class IsInstrumentTest(unittest.TestCase):
    def test_instruments(self):
        for value in (Pump("x"), Child(), Valve(), OnlyProperty(), DataWithMethod(), future_mod.Stage("p")):
            self.assertTrue(schema.is_instrument(value), value)

    def test_not_instruments(self):
        values = [None, True, 1, 1.5, 1j, "s", b"b", [], {}, (), set(), frozenset(), Pump, Pump.dispense,
                  Pump("x").dispense, len, print, math, typing, logging.getLogger("x"), threading.Lock(),
                  threading.Event(), Mode.FAST, Level.LOW, DataOnly(), Empty(), Settings(1), lambda: 1,
                  pathlib.Path("."), datetime.datetime.now(), collections.OrderedDict(), decimal.Decimal(1),
                  object(), Node()]
        if numpy is not None:
            values += [numpy.zeros(3), numpy.float64(1)]
        for value in values:
            self.assertFalse(schema.is_instrument(value), value)


    def test_a_lab_module_named_like_the_standard_library(self):
        lab_module = types.ModuleType("calendar")
        lab_module.__file__ = "/lab/drivers/calendar.py"
        booking = type("Booking", (), {"book": lambda self: None, "__module__": "calendar"})()
        self.assertFalse(schema.is_instrument(booking))  # the real calendar module is the standard library's
        with mock.patch.dict(sys.modules, {"calendar": lab_module}):
            self.assertTrue(schema.is_instrument(booking))


class BindCallTest(unittest.TestCase):
    def setUp(self):
        self.pump, self.other, self.valve = Pump("a"), Pump("b"), Valve()
        self.instances = {"p1": self.pump, "p2": self.other, "v": self.valve}
        self.descs = {m["name"]: m for m in schema.describe_instance(self.pump)["methods"]}

    def bind(self, name, args):
        return schema.bind_call(self.pump, self.descs[name], args, self.instances)

    def call(self, name, args):
        fn, kwargs, _ = self.bind(name, args)
        return fn(**kwargs)

    def convert(self, name, value):
        hint = typing.get_type_hints(Pump.types, include_extras=True)[name]
        return schema.convert(hint, value, name, self.instances)

    def error(self, name, args):
        with self.assertRaises(ArgError) as caught:
            self.bind(name, args)
        return caught.exception.field, caught.exception.message

    def test_method_call(self):
        fn, kwargs, is_async = self.bind("dispense", {"volume": 2, "speed": 4.0})
        self.assertEqual(kwargs, {"volume": 2.0, "speed": 4})
        self.assertIsInstance(kwargs["volume"], float)
        self.assertIsInstance(kwargs["speed"], int)
        self.assertFalse(is_async)
        fn(**kwargs)
        self.assertEqual(self.pump.flow, 2.0)
        self.assertTrue(self.bind("wait", {})[2])

    def test_argument_errors(self):
        self.assertEqual(self.error("dispense", {"volume": 1, "spede": 1}),
                         ("spede", "is not a parameter of dispense (parameters: volume, speed)"))
        self.assertEqual(self.error("dispense", {}), ("volume", "is required"))
        self.assertEqual(self.error("temp", {"x": 1}), ("x", "is not a parameter of temp (parameters: none)"))
        self.assertEqual(self.error("dispense", {"volume": "lots"}), ("volume", "must be a number"))
        self.assertEqual(self.error("dispense", {"volume": True}), ("volume", "must be a number"))
        self.assertEqual(self.error("dispense", {"volume": 1, "speed": 1.5}), ("speed", "must be an integer"))
        self.assertEqual(self.error("set_temp", {}), ("value", "is required"))

    def test_scalars(self):
        self.assertEqual(self.convert("a", 3.0), 3)
        self.assertEqual(self.convert("c", "s"), "s")
        self.assertIs(self.convert("d", False), False)
        for name, value, message in (("a", True, "must be an integer"), ("c", 1, "must be a string"),
                                     ("d", 1, "must be a boolean"), ("a", "1", "must be an integer")):
            with self.assertRaises(ArgError) as caught:
                self.convert(name, value)
            self.assertEqual((caught.exception.field, caught.exception.message), (name, message))
            self.assertEqual(str(caught.exception), f"{name} {message}")

    def test_enums_and_literals(self):
        self.assertIs(self.convert("e", "slow"), Mode.SLOW)
        self.assertIs(self.convert("e", "SLOW"), Mode.SLOW)
        self.assertIs(self.convert("f", 2), Level.HIGH)
        self.assertIs(self.convert("g", "WIDE"), Shape.WIDE)
        self.assertEqual(self.convert("h", "y"), "y")
        self.assertIs(self.convert("af", "fast"), Mode.FAST)
        self.assertRaisesRegex(ArgError, 'e must be one of "fast", "slow"$', self.convert, "e", "medium")
        self.assertRaisesRegex(ArgError, "f must be one of 1, 2$", self.convert, "f", 3)
        self.assertRaisesRegex(ArgError, 'h must be one of "x", "y"$', self.convert, "h", "z")

    def test_unions(self):
        self.assertIsNone(self.convert("i", None))
        self.assertEqual(self.convert("i", 4), 4)
        self.assertEqual(self.convert("j", "s"), "s")
        self.assertRaisesRegex(ArgError, "i must be an integer or null$", self.convert, "i", "x")
        self.assertRaisesRegex(ArgError, "j must be an integer or a string$", self.convert, "j", [])

    def test_collections(self):
        self.assertEqual(self.convert("k", [1, 2.0]), [1, 2])
        self.assertEqual(self.convert("n", ["a", "a"]), {"a"})
        self.assertEqual(self.convert("o", [1, "x"]), (1, "x"))
        self.assertEqual(self.convert("p", [1, 2]), (1.0, 2.0))
        self.assertEqual(self.convert("r", {"a": 1}), {"a": 1.0})
        self.assertEqual(self.convert("q", {"a": [1]}), {"a": [1]})
        for name, value, field, message in (
                ("k", [1, "x"], "k.1", "must be an integer"), ("k", 1, "k", "must be a list"),
                ("o", [1], "o", "must be a list of 2 items"), ("r", [], "r", "must be an object"),
                ("r", {"a": "x"}, "r.a", "must be a number")):
            with self.assertRaises(ArgError) as caught:
                self.convert(name, value)
            self.assertEqual((caught.exception.field, caught.exception.message), (field, message))

    def test_dataclass(self):
        self.assertEqual(self.convert("t", {"speed": 2.0, "mode": "slow", "tags": ["a"]}),
                         Settings(2, Mode.SLOW, ["a"]))
        self.assertEqual(self.convert("t", {"speed": 2}), Settings(2))
        for value, field, message in (
                ({"speed": "x"}, "t.speed", "must be an integer"), ({}, "t.speed", "is required"),
                ({"speed": 1, "sped": 2}, "t.sped", "is not a field of Settings (fields: speed, mode, tags)"),
                ({"speed": 1, "tags": [1]}, "t.tags.0", "must be a string"), ("x", "t", "must be an object")):
            with self.assertRaises(ArgError) as caught:
                self.convert("t", value)
            self.assertEqual((caught.exception.field, caught.exception.message), (field, message))

    def test_dates_paths_and_anything(self):
        self.assertEqual(self.convert("u", "2024-05-01T10:00:00Z"),
                         datetime.datetime(2024, 5, 1, 10, tzinfo=datetime.timezone.utc))
        self.assertEqual(self.convert("v", "2024-05-01"), datetime.date(2024, 5, 1))
        self.assertEqual(self.convert("w", "10:30"), datetime.time(10, 30))
        self.assertEqual(self.convert("x", "/tmp/a"), pathlib.Path("/tmp/a"))
        self.assertEqual(self.convert("y", {"any": [1]}), {"any": [1]})
        self.assertEqual(self.convert("ac", 5), 5)
        self.assertEqual(self.convert("ab", 5), 5.0)
        self.assertRaisesRegex(ArgError, "u must be an ISO 8601 date-time string$", self.convert, "u", "yesterday")
        self.assertRaisesRegex(ArgError, "x must be a string$", self.convert, "x", 1)

    def test_instrument_parameters(self):
        self.assertIs(self.bind("transfer", {"to": "p2"})[1]["to"], self.other)
        self.assertIsNone(self.bind("transfer", {"to": "p2", "backup": None})[1]["backup"])
        self.assertEqual(self.error("transfer", {"to": "nope"}),
                         ("to", "must name a connected instrument (one of: p1, p2)"))
        self.assertEqual(self.error("transfer", {"to": "v"}),  # a Valve is not a Pump
                         ("to", "must name a connected instrument (one of: p1, p2)"))
        with self.assertRaises(ArgError) as caught:
            schema.convert(Pump, "p1", "to", {})
        self.assertEqual(caught.exception.message, "must name a connected instrument (no Pump is connected)")
        kwargs = self.bind("transfer", {"to": "p1", "cfg": {"speed": 1}, "when": "2024-01-01T00:00:00"})[1]
        self.assertEqual(kwargs["cfg"], Settings(1))
        self.assertEqual(self.error("transfer", {"to": "p1", "cfg": {"speed": "x"}}),
                         ("cfg.speed", "must be an integer"))

    def test_untyped_parameters(self):
        self.assertEqual(self.bind("untyped", {"thing": [1, "x"]})[1], {"thing": [1, "x"]})
        kwargs = self.bind("inferred", {"a": "not checked", "g": "fast"})[1]
        self.assertEqual(kwargs, {"a": "not checked", "g": Mode.FAST})  # an Enum default still converts

    def test_properties(self):
        fn, kwargs, is_async = self.bind("temp", {})
        self.assertEqual((fn(**kwargs), kwargs, is_async), (20.0, {}, False))
        fn, kwargs, _ = self.bind("set_temp", {"value": 30})
        self.assertIsNone(fn(**kwargs))
        self.assertEqual(self.pump.temp, 30.0)
        self.assertIsInstance(self.pump._temp, float)
        self.assertEqual(self.error("set_temp", {"value": "hot"}), ("value", "must be a number"))

    def test_static_and_class_methods(self):
        self.assertEqual(self.call("version", {}), "1.0")
        self.assertEqual(self.call("create", {"port": "z"}).port, "z")

    def test_convert_kwargs_for_a_connect(self):
        self.assertEqual(schema.convert_kwargs(Pump, {"port": "COM1", "mode": "SLOW"}, {}, "Pump"),
                         {"port": "COM1", "mode": Mode.SLOW})
        self.assertEqual(schema.convert_kwargs(Motor, {"pump": "p1"}, self.instances, "Motor"), {"pump": self.pump})
        with self.assertRaises(ArgError) as caught:
            schema.convert_kwargs(Pump, {"port": "x", "baud": 9600}, {}, "Pump")
        self.assertEqual(caught.exception.message, "is not a parameter of Pump (parameters: port, rate, mode)")
        self.assertRaisesRegex(ArgError, "^port is required$", schema.convert_kwargs, Pump, {}, {}, "Pump")
        self.assertEqual(schema.convert_kwargs(future_mod.Stage, {"port": "a", "limit": 2}, {}, "Stage"),
                         {"port": "a", "limit": 2.0})
        self.assertEqual(schema.convert_kwargs(Empty, {}, {}, "Empty"), {})

    @unittest.skipUnless(pydantic, NO_PYDANTIC)
    def test_pydantic_argument(self):
        obj = UsesModel()
        desc = schema.describe_instance(obj)["methods"][0]
        self.assertEqual(schema.bind_call(obj, desc, {"cfg": {"speed": 3}}, {})[1]["cfg"], Config(speed=3))
        with self.assertRaises(ArgError) as caught:
            schema.bind_call(obj, desc, {"cfg": {"speed": "fast"}}, {})
        self.assertEqual(caught.exception.field, "cfg.speed")
        self.assertTrue(caught.exception.message.startswith("input should be a valid integer"))


class ToJsonTest(unittest.TestCase):
    def test_plain_values(self):
        for value in (None, True, 3, "s", 2.5, [1, "a"], {"a": [None]}):
            self.assertEqual(schema.to_json(value), (value, []))

    def test_converted_values(self):
        value = {"nan": math.nan, "inf": -math.inf, "mode": Mode.FAST, "level": Level.HIGH,
                 "when": datetime.datetime(2024, 1, 2, 3, 4, 5), "day": datetime.date(2024, 1, 2),
                 "at": datetime.time(1, 2), "dec": decimal.Decimal("1.5"), "path": pathlib.PurePosixPath("/a/b"),
                 "tuple": (1, 2), "set": {3, 1, 2}, 4: "int key", Mode.SLOW: "enum key",
                 "reading": Reading(1.5), "nested": [{"x": [Reading(math.nan, "A")]}]}
        self.assertEqual(schema.to_json(value), ({
            "nan": None, "inf": None, "mode": "fast", "level": 2, "when": "2024-01-02T03:04:05",
            "day": "2024-01-02", "at": "01:02:00", "dec": 1.5, "path": "/a/b", "tuple": [1, 2], "set": [1, 2, 3],
            "4": "int key", "slow": "enum key", "reading": {"value": 1.5, "unit": "V"},
            "nested": [{"x": [{"value": None, "unit": "A"}]}]}, []))
        self.assertIs(type(schema.to_json(Level.HIGH)[0]), int)

    def test_bytes_and_unknown_objects(self):
        self.assertEqual(schema.to_json(b"\x00\xff"), ("AP8=", ["returned bytes (not JSON); sent as base64"]))
        self.assertEqual(schema.to_json([Pump("x"), Pump("y")]),
                         (["Pump()", "Pump()"], ["returned a Pump (not JSON); sent as its repr()"]))
        value, warnings = schema.to_json(1j)
        self.assertEqual((value, warnings), ("1j", ["returned a complex (not JSON); sent as its repr()"]))

    def test_cycles_and_depth(self):
        loop = [1]
        loop.append(loop)
        self.assertEqual(schema.to_json(loop), ([1, "[1, [...]]"], [
            "returned a value that contains itself; the repeated part sent as its repr()"]))
        shared = [1]
        self.assertEqual(schema.to_json([shared, shared]), ([[1], [1]], []))
        deep = current = []
        for _ in range(60):
            current.append([])
            current = current[0]
        value, warnings = schema.to_json(deep)
        self.assertEqual(len(warnings), 1)
        self.assertIn("nested more than 50 levels deep", warnings[0])

    @unittest.skipUnless(numpy, NO_NUMPY)
    def test_numpy(self):
        self.assertEqual(schema.to_json(numpy.float32(1.5)), (1.5, []))
        self.assertIs(type(schema.to_json(numpy.int64(3))[0]), int)
        self.assertEqual(schema.to_json(numpy.bool_(True)), (True, []))
        self.assertEqual(schema.to_json(numpy.float64(math.nan)), (None, []))
        self.assertEqual(schema.to_json(numpy.array([[1.0, numpy.nan], [numpy.inf, 2.0]])),
                         ([[1.0, None], [None, 2.0]], []))
        self.assertEqual(schema.to_json({"a": numpy.arange(3)}), ({"a": [0, 1, 2]}, []))

    @unittest.skipUnless(pydantic, NO_PYDANTIC)
    def test_pydantic(self):
        self.assertEqual(schema.to_json(Config(speed=1)), ({"speed": 1, "name": "x"}, []))


class NoHeavyImportsTest(unittest.TestCase):
    def test_numpy_and_pydantic_are_not_imported(self):
        code = ("import sys, future_mod; from labdeck_host import schema; schema.describe_class(future_mod.Stage); "
                "schema.to_json([1.5]); print('numpy' in sys.modules, 'pydantic' in sys.modules)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"PYTHONPATH": ":".join(sys.path)})
        self.assertEqual(out.stdout.strip(), "False False")


if __name__ == "__main__":
    unittest.main()


class SafetyLevels(unittest.TestCase):
    """A method's safety level, declared without importing labdeck (docs/safety.md)."""

    def test_the_attribute_or_a_decorator_of_the_drivers_own_sets_it_and_undeclared_is_unknown(self):
        def hazardous(fn):
            fn.__labdeck_safety__ = "hazardous"
            return fn

        class Pump:
            @hazardous
            def dispense(self, volume_ml: float = 1.0) -> float:
                return volume_ml

            def status(self) -> str:
                return "ok"
            status.__labdeck_safety__ = "readonly"

            def prime(self) -> None:
                pass

            def odd(self) -> None:
                pass
            odd.__labdeck_safety__ = "dangerous"

        levels = {m["name"]: m["safety"] for m in schema.describe_instance(Pump())["methods"]}
        self.assertEqual(levels, {"dispense": "hazardous", "status": "readonly", "prime": "unknown", "odd": "unknown"})


class ConsumptionDeclared(unittest.TestCase):
    """What a method consumes, declared without importing labdeck (docs/resources.md)."""

    def test_the_attribute_one_dict_or_a_list_is_passed_on_and_nothing_declared_is_absent(self):
        def uses_tip(fn):
            fn.__labdeck_consumes__ = {"resource": "tips"}
            return fn

        class Pipette:
            @uses_tip
            def pick_tip(self) -> None:
                pass

            def aspirate(self, source: str = "water", volume_ml: float = 1.0) -> float:
                return volume_ml
            aspirate.__labdeck_consumes__ = [{"resource": {"arg": "source"}, "amount": {"arg": "volume_ml"}}]

            def status(self) -> str:
                return "ok"

        methods = {m["name"]: m for m in schema.describe_instance(Pipette())["methods"]}
        self.assertEqual(methods["pick_tip"]["consumes"], [{"resource": "tips"}])
        self.assertEqual(methods["aspirate"]["consumes"], [{"resource": {"arg": "source"}, "amount": {"arg": "volume_ml"}}])
        self.assertNotIn("consumes", methods["status"])
