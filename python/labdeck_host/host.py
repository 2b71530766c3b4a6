"""labdeck's Python instrument host: one process that loads a lab's Python decks and driver modules and
answers the runtime's requests (protocol version 1, described in docs/python.md, "The host protocol").

The channel is the process's original stdin (requests) and stdout (replies and events), one JSON object per
line. Both are taken over before any lab code runs: file descriptor 0 then reads /dev/null and descriptor 1
writes to stderr, and `sys.stdout` / `sys.stderr` / logging are routed: what a driver prints or logs during a
call becomes an event of that call; anything else goes to stderr, which the runtime writes to its log.
Standard library only; Python 3.9 or newer.
"""
import builtins
import os
import platform
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from . import optimizer, workflow_py
from .calls import Calls
from .channel import take_over_stdio
from .console import Console
from .errors import HostError, _error_payload
from .instruments import Instruments
from .output import _write_fd

# The host in six modules: output.py (where a driver's output goes), channel.py (the protocol's framing),
# errors.py (errors as the protocol sends them), instruments.py (decks, modules, connect, dispose),
# calls.py (method and optimizer calls, the asyncio loop), console.py; this one reads and dispatches.

PROTOCOL = 1


class Host(Instruments, Calls, Console):
    def __init__(self, channel):
        self.channel = channel
        self.instances = {}  # name -> object
        self.descs = {}  # name -> {method name -> MethodDesc}
        self.classes = {}  # class id ("file::Name") -> class
        self.module_classes = {}  # file -> [class ids]
        self.optimizer_classes = {}  # class id ("file::Name") -> optimizer class
        self.module_optimizers = {}  # file -> [optimizer class ids]
        self.optimizers = optimizer.Instances()
        self.namespace = {"__name__": "__console__", "__builtins__": builtins}
        self.read_lock = threading.Lock()
        self.readers_lock = threading.Lock()
        self.readers = 0
        self.idle = 0
        self.control = ThreadPoolExecutor(max_workers=1, thread_name_prefix="labdeck-control")
        self.loop = None
        self.loop_ready = threading.Lock()
        self.handoff = None

    # ------------------------------------------------------------------ dispatch

    def serve(self):
        self.channel.send({"type": "hello", "protocol": PROTOCOL, "host": "python", "language": "python",
                           "version": platform.python_version(), "executable": sys.executable,
                           "pid": os.getpid()})
        self.spawn_reader()
        threading.Event().wait()  # the readers run the host; the last one exits the process

    # Calls run on the thread that read them (leader/follower): one reader at a time holds `read_lock`; having
    # read a call, it hands reading to an idle thread (starting one when none is idle) and runs the call
    # itself. A call never waits for another thread to wake up, and a slow one never holds reading.
    MAX_READERS = 64

    def spawn_reader(self):
        with self.readers_lock:
            self.readers += 1
            self.idle += 1
        threading.Thread(target=self.reader, name="labdeck-call", daemon=True).start()

    def reader(self):
        while True:
            with self.read_lock:
                msg = self.channel.next_message()
                if msg is None:
                    return self.channel_closed()
                with self.readers_lock:
                    self.idle -= 1
                    more = self.idle == 0 and self.readers < self.MAX_READERS
            if more:
                self.spawn_reader()
            try:
                self.dispatch(msg)
            except Exception as exc:  # a reader must survive anything one message does
                _write_fd(2, "labdeck host: %s failed: %s: %s\n" % (msg.get("type"), type(exc).__name__, exc))
            finally:
                with self.readers_lock:
                    self.idle += 1

    def dispatch(self, msg):
        kind = msg.get("type")
        if kind == "call":
            self.call(msg)
        elif kind in ("optimizer_create", "optimizer_call", "optimizer_dispose"):
            self.optimizer_op(msg)
        elif kind == "console":
            threading.Thread(target=self.console, args=(msg,), name="labdeck-console", daemon=True).start()
        elif kind == "ping":
            self.reply(msg, "pong")
        elif kind == "parse_workflow":
            self.parse_workflow(msg)
        elif kind == "shutdown":
            self.control.submit(self.shutdown, msg)
        elif kind in ("load_deck", "retry_instrument", "load_module", "connect", "dispose", "describe"):
            self.control.submit(self.control_op, msg)
        else:
            self.fail(msg, HostError("invalid", "unknown message type %r (protocol %d)" % (kind, PROTOCOL)))

    def channel_closed(self):
        """The runtime closed the channel: finish what was asked, dispose everything, exit (in 10 s at most)."""
        threading.Timer(10.0, os._exit, (0,)).start()
        self.control.submit(self.shutdown, None)

    def reply(self, msg, value, **extra):
        out = {"id": msg.get("id"), "type": "result", "value": value}
        out.update(extra)
        self.channel.send(out)

    def fail(self, msg, exc, kind="exception"):
        self.channel.send({"id": msg.get("id"), "type": "error", "error": _error_payload(exc, kind)})

    def parse_workflow(self, msg):
        """A Python workflow read with `ast` (never run): `source` a whole script, or `parts` (prep, script, cleanup)."""
        try:
            parts = msg.get("parts")
            doc = workflow_py.parse_parts(parts, msg.get("name")) if parts is not None else workflow_py.parse(msg["source"], msg.get("name"))
            self.reply(msg, doc)
        except workflow_py.OutsideSubset as exc:
            self.fail(msg, HostError("invalid_input", str(exc), line=exc.line, construct=exc.construct, field=exc.field))

    def control_op(self, msg):
        try:
            self.reply(msg, getattr(self, "op_" + msg["type"])(msg))
        except BaseException as exc:  # noqa: B902 - SystemExit from a deck must not end the host
            self.fail(msg, exc)

    # ------------------------------------------------------------------ shutdown

    def shutdown(self, msg):
        disposed = []
        for name in list(self.instances):
            obj = self.instances.pop(name)
            try:
                if self.dispose(obj):
                    disposed.append(name)
            except BaseException as exc:  # noqa: B902
                _write_fd(2, "dispose of %s failed: %s: %s\n" % (name, type(exc).__name__, exc))
        if msg is not None:
            self.reply(msg, {"disposed": disposed})
        os._exit(0)


def main():
    channel = take_over_stdio()
    Host(channel).serve()
