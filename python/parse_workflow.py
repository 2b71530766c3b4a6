"""A process that reads workflows written in Python, for labdeck's parse pool (core/hosts/python-parse.ts).

One request at a time, each a JSON line on stdin: `{"id", "source"}` or `{"id", "parts": {prep, script,
cleanup}}`, with an optional `name`. Each answer is a JSON line on stdout: `{"id", "type": "result", "value":
<workflow document>}` or `{"id", "type": "error", "error": {"kind": "invalid_input", "message", "line", ...}}`.
The text is parsed with `ast`, never run (labdeck_host/workflow_py.py). The runtime kills this process when
a parse takes longer than its time limit and starts another: nothing here has to stop a runaway itself.
Standard library only; it imports nothing of the lab's.
"""
import json
import os
import sys

if sys.version_info < (3, 9):
    sys.stderr.write("labdeck needs Python 3.9 or newer to read Python workflows; this is %s.\n" % sys.version.split()[0])
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labdeck_host import workflow_py  # noqa: E402

# a bound on memory where the OS has one (a runaway is killed by the runtime's time limit anyway)
try:
    import resource

    _limit = int(os.environ.get("LABDECK_PARSE_MAX_MEMORY", str(1024 * 1024 * 1024)))
    resource.setrlimit(resource.RLIMIT_AS, (_limit, _limit))
except (ImportError, ValueError, OSError):
    pass


def _channel():
    """The real stdout for answers; anything else that writes to fd 1 goes to stderr instead."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def _answer(msg):
    try:
        if not isinstance(msg, dict):
            raise TypeError("a request is a JSON object")
        parts = msg.get("parts")
        if parts is not None:
            doc = workflow_py.parse_parts(parts, msg.get("name"))
        else:
            doc = workflow_py.parse(msg.get("source"), msg.get("name"))
        return {"id": msg.get("id"), "type": "result", "value": doc}
    except workflow_py.OutsideSubset as exc:
        error = {"kind": "invalid_input", "type": "OutsideSubset", "message": str(exc), "line": exc.line, "construct": exc.construct}
        if exc.field:
            error["field"] = exc.field
        return {"id": msg.get("id") if isinstance(msg, dict) else None, "type": "error", "error": error}
    except Exception as exc:  # noqa: B902 - every request is answered
        return {"id": msg.get("id") if isinstance(msg, dict) else None, "type": "error",
                "error": {"kind": "invalid_input", "type": type(exc).__name__, "message": "cannot be read as a workflow (%s: %s)" % (type(exc).__name__, str(exc)[:200])}}


def _send(out, reply):
    try:
        data = json.dumps(reply, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError) as exc:
        data = json.dumps({"id": reply.get("id"), "type": "error", "error": {"kind": "invalid_input", "type": type(exc).__name__, "message": "the workflow holds a value JSON cannot carry (%s)" % exc}})
    out.write(data.encode("utf-8") + b"\n")
    out.flush()


def main():
    out = _channel()
    _send(out, {"id": None, "type": "ready"})
    for line in sys.stdin.buffer:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            _send(out, {"id": None, "type": "error", "error": {"kind": "invalid_input", "type": "ValueError", "message": "an unreadable request (%s)" % exc}})
            continue
        try:
            _send(out, _answer(msg))
        except (BrokenPipeError, OSError):
            return


if __name__ == "__main__":
    main()
