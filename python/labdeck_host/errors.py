"""The host's errors as the protocol sends them: the kind the runtime maps to a status, the lab's own frames
of a traceback, and what a missing package means.
"""
import os
import sys
import traceback

from . import schema

HOST_DIR = os.path.dirname(os.path.abspath(__file__))  # labdeck_host's folder: its frames are not the lab's


class HostError(Exception):
    """An error the runtime maps to a status: kind is not_found, conflict, load_error or invalid_args."""

    def __init__(self, kind, message, **extra):
        super().__init__(message)
        self.kind = kind
        self.extra = extra


def _error_payload(exc, kind="exception"):
    payload = {"kind": kind, "type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, HostError):
        payload["kind"] = exc.kind
        payload.update(exc.extra)
    elif isinstance(exc, schema.ArgError):
        payload.update(kind="invalid_args", field=exc.field, message=exc.message)
    else:
        payload["traceback"] = _user_traceback(exc)
    return payload


def _user_traceback(exc):
    """The traceback as the lab needs it: its own frames (and chained exceptions), not this host's."""
    top = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    todo, seen = [top], set()
    while todo:
        te = todo.pop()
        if id(te) in seen:
            continue
        seen.add(id(te))
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if not os.path.abspath(f.filename).startswith(HOST_DIR + os.sep)])
        todo.extend(c for c in (te.__cause__, te.__context__) if c is not None)
    return "".join(top.format())


def _import_failure(exc, message):
    """A package the lab's code imports is missing from this interpreter: the message names the import line
    that failed (the driver's file:line and its statement, not only the deck's line that led there) and says
    which Python this is, and how to run another (--python PATH)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<") and not os.path.abspath(f.filename).startswith(HOST_DIR + os.sep)]
    extra = {}
    if frames:
        at = frames[-1]
        statement = (at.line or "").strip()
        message += "; the import that failed: %s:%s: %s" % (at.filename, at.lineno, statement)
        extra = {"import_file": at.filename, "import_line": at.lineno, "import_statement": statement}
    missing = getattr(exc, "name", None)
    what = "has no module %r" % missing if isinstance(exc, ModuleNotFoundError) and missing else "cannot import it"
    message += (". This Python (%s) %s: install the package there, or start labdeck with --python PATH "
                "(or LABDECK_PYTHON) naming the interpreter that has it (the one you run the deck with)") % (sys.executable, what)
    return message, extra
