"""The console: code run in the deck's namespace like a REPL. A mixin of Host (host.py)."""
import ast
import ctypes
import threading
import traceback

from . import schema
from .output import BufferSink, _sink


class Console:
    def console(self, msg):
        """Run code in the deck's namespace like a REPL: printed output, the last expression's value, or the
        exception with its traceback. Past the time limit the answer is sent; a Python loop is interrupted."""
        sink = BufferSink()
        box = {}
        timeout = max(0.05, float(msg.get("timeout_ms") or 10000) / 1000.0)

        def run():
            token = _sink.set(sink)
            try:
                box["value"] = self.run_snippet(msg.get("code") or "")
            except BaseException as exc:  # noqa: B902
                box["error"] = exc
            finally:
                _sink.reset(token)

        worker = threading.Thread(target=run, name="labdeck-console-run", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(TimeoutError))
            answer = {"success": False, "result": None, "stdout": sink.text(),
                      "error": "TimeoutError: stopped after %d ms (a snippet blocked inside a library call stops "
                               "at its next Python instruction)" % int(timeout * 1000)}
        elif "error" in box:
            exc = box["error"]
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<console>"]
            lines = ["Traceback (most recent call last):\n"] + traceback.format_list(frames) if frames else []
            lines += traceback.format_exception_only(type(exc), exc)
            answer = {"success": False, "result": None, "stdout": sink.text(), "error": "".join(lines).rstrip()}
        else:
            value, warnings = schema.to_json(box.get("value"))
            answer = {"success": True, "result": value, "stdout": sink.text(), "error": None}
        self.reply(msg, answer)

    def run_snippet(self, code):
        tree = ast.parse(code, "<console>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        for name, obj in self.instances.items():
            self.namespace[name] = obj
        exec(compile(tree, "<console>", "exec"), self.namespace)
        if last is not None:
            return eval(compile(last, "<console>", "eval"), self.namespace)
        return None
