"""What a Python instrument driver offers, as JSON Schema, and JSON <-> Python value conversion.

The instrument host uses this module to describe a lab's driver classes and instances (methods,
properties, parameters, docstrings), to convert the JSON arguments of a call or a connect to what
the Python annotations ask for, and to turn results back into JSON. Standard library only; it runs
on Python 3.9+, and never imports numpy or pydantic itself (it uses them only when the lab's code did).

The work is done in five modules, one per seam; this one names what the rest of labdeck uses:
  docstrings.py  summaries and parameter descriptions from Google, NumPy and reST docstrings
  hints.py       type hints -> JSON Schema, and which classes are instruments
  describe.py    a driver class or instance as its options and MethodDescs
  convert.py     JSON arguments -> Python values (ArgError when they do not fit)
  encode.py      Python results -> JSON
"""

from __future__ import annotations

from .convert import ArgError, bind_call, convert, convert_kwargs
from .describe import LIFECYCLE, SAFETY_LEVELS, consumes_of, describe_class, describe_instance, lifecycle, safety_of
from .docstrings import param_docs, summary
from .encode import to_json
from .hints import is_instrument

__all__ = [
    "ArgError", "is_instrument", "describe_instance", "describe_class", "bind_call", "convert",
    "convert_kwargs", "to_json", "summary", "param_docs",
    "LIFECYCLE", "SAFETY_LEVELS", "lifecycle", "safety_of", "consumes_of",
]
