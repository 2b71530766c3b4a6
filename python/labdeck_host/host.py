"""labdeck's Python instrument host: one process that loads a lab's Python decks and driver modules and
answers the runtime's requests (protocol version 1, described in docs/python.md, "The host protocol").

The channel is the process's original stdin (requests) and stdout (replies and events), one JSON object per
line. Both are taken over before any lab code runs: file descriptor 0 then reads /dev/null and descriptor 1
writes to stderr, and `sys.stdout` / `sys.stderr` / logging are routed: what a driver prints or logs during a
call becomes an event of that call; anything else goes to stderr, which the runtime writes to its log.
Standard library only; Python 3.9 or newer.
"""
import ast
import asyncio
import builtins
import contextvars
import enum
import ctypes
import importlib.util
import inspect
import io
import json
import logging
import os
import platform
import sys
import threading
import traceback
import types
from concurrent.futures import ThreadPoolExecutor

from . import deck_file, handoff as handoff_mod, optimizer, schema, workflow_py, worktable

PROTOCOL = 1
MAX_EVENT_LINES = 2000  # per call; more is dropped with one notice
MAX_LINE = 8000
HOST_FILE = os.path.abspath(__file__)
HOST_DIR = os.path.dirname(HOST_FILE)


class HostError(Exception):
    """An error the runtime maps to a status: kind is not_found, conflict, load_error or invalid_args."""

    def __init__(self, kind, message, **extra):
        super().__init__(message)
        self.kind = kind
        self.extra = extra


# --------------------------------------------------------------------------------------- output routing

_sink = contextvars.ContextVar("labdeck_sink", default=None)


class StderrSink:
    """Outside any call: text goes to the host's stderr (the server log)."""

    def write(self, stream, text):
        _write_fd(2, text)

    def log(self, level, text):
        _write_fd(2, "%s %s\n" % (level.upper(), text))

    def close(self):
        pass


def _write_fd(fd, text):
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    except OSError:
        pass


class CallSink:
    """During a call: whole lines become `event` messages of that call (partial lines wait for a newline)."""

    def __init__(self, channel, call_id):
        self.channel = channel
        self.call_id = call_id
        self.partial = {}
        self.lines = 0
        self.lock = threading.Lock()

    def _event(self, kind, text, level=None):
        with self.lock:
            self.lines += 1
            if self.lines > MAX_EVENT_LINES:
                if self.lines == MAX_EVENT_LINES + 1:
                    text, kind, level = "[more output dropped: over %d lines in one call]" % MAX_EVENT_LINES, "log", "warning"
                else:
                    return
        msg = {"type": "event", "call": self.call_id, "kind": kind, "text": text[:MAX_LINE]}
        if level:
            msg["level"] = level
        self.channel.send(msg)

    def write(self, stream, text):
        buf = self.partial.get(stream, "") + text
        *lines, rest = buf.split("\n")
        self.partial[stream] = rest
        for line in lines:
            self._event("output", line if stream == "stdout" else "[stderr] " + line)

    def log(self, level, text):
        self._event("log", text, level)

    def close(self):
        for stream, rest in self.partial.items():
            if rest:
                self._event("output", rest if stream == "stdout" else "[stderr] " + rest)
        self.partial = {}


class BufferSink:
    """In the console: output is collected and sent back with the answer."""

    def __init__(self):
        self.parts = []

    def write(self, stream, text):
        self.parts.append(text)

    def log(self, level, text):
        self.parts.append("%s %s\n" % (level.upper(), text))

    def close(self):
        pass

    def text(self):
        return "".join(self.parts)


_stderr_sink = StderrSink()


class RoutedStream(io.TextIOBase):
    """sys.stdout / sys.stderr: writes go to the sink of the current call (or console run)."""

    def __init__(self, name):
        self.name = name

    def write(self, text):
        if not isinstance(text, str):
            text = str(text)
        (_sink.get() or _stderr_sink).write(self.name, text)
        return len(text)

    def writable(self):
        return True

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        return 2

    @property
    def encoding(self):
        return "utf-8"


class RoutedLogHandler(logging.Handler):
    def emit(self, record):
        try:
            text = "%s: %s" % (record.name, self.format(record))
            (_sink.get() or _stderr_sink).log(record.levelname.lower(), text)
        except Exception:  # a log line must never fail a call
            pass


# -------------------------------------------------------------------------------------------- channel

class Channel:
    def __init__(self, rfile, wfile):
        self.rfile = rfile
        self.wfile = wfile
        self.lock = threading.Lock()

    def send(self, msg):
        data = (json.dumps(msg, separators=(",", ":"), allow_nan=False, default=str) + "\n").encode("utf-8")
        with self.lock:
            try:
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ValueError, OSError):
                os._exit(0)  # the runtime is gone

    def next_message(self):
        """The next request, or None when the runtime has closed the channel."""
        for line in iter(self.rfile.readline, b""):
            line = line.strip()
            if not line:
                continue
            try:
                return json.loads(line.decode("utf-8"))
            except ValueError:
                _write_fd(2, "labdeck host: an unreadable request was ignored: %r\n" % line[:200])
        return None


def take_over_stdio():
    """The protocol gets the real stdin/stdout; lab code gets /dev/null and routed streams."""
    rfile = os.fdopen(os.dup(0), "rb")
    wfile = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # C libraries that write to fd 1 reach stderr, never the channel
    sys.stdin = open(os.devnull, "r")
    sys.stdout = RoutedStream("stdout")
    sys.stderr = RoutedStream("stderr")
    root = logging.getLogger()
    handler = RoutedLogHandler()
    root.addHandler(handler)
    if root.level == logging.WARNING:
        root.setLevel(logging.INFO)
    logging.basicConfig = _basic_config(handler)
    return Channel(rfile, wfile)


def _basic_config(handler):
    """A deck's logging.basicConfig(...) keeps our routing but still sets its level and format."""
    def basic_config(**kwargs):
        if "level" in kwargs:
            logging.getLogger().setLevel(kwargs["level"])
        if "format" in kwargs:
            handler.setFormatter(logging.Formatter(kwargs["format"], kwargs.get("datefmt"), kwargs.get("style", "%")))
    return basic_config


# ----------------------------------------------------------------------------------------------- host

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


def _where(exc, files):
    """(file, line) of a load error: a SyntaxError's own place, else the deepest frame in the lab's files."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename) in files]
    outside = [f for f in frames if os.path.abspath(f.filename) != HOST_FILE]
    frame = (mine or outside or frames or [None])[-1]
    return (frame.filename, frame.lineno) if frame else (None, None)


def _local_modules(deck_path):
    """The deck's own modules: files under its folder that are imported now (drivers/pump.py of an ivoryOS
    layout), not installed packages. labdeck watches them with the deck file."""
    folder = os.path.dirname(os.path.abspath(deck_path)) + os.sep
    found = set()
    for mod in list(sys.modules.values()):
        file = getattr(mod, "__file__", None)
        if not file:
            continue
        file = os.path.abspath(file)
        if file.startswith(folder) and file.endswith(".py") and "-packages" + os.sep not in file \
                and not file.startswith(HOST_DIR + os.sep) and file != os.path.abspath(deck_path):
            found.add(file)
    return sorted(found)


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


class Host:
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

    # ------------------------------------------------------------------ instruments

    def op_describe(self, msg):
        return {"instruments": [self.instrument_desc(n) for n in self.instances],
                "classes": [self.class_desc(cid) for cid in self.classes]}

    def instrument_desc(self, name):
        obj = self.instances[name]
        d = schema.describe_instance(obj)
        worktable.fill_choices(obj, d["methods"])  # Labware/Site choices, Wells' labware (worktable.py)
        self.descs[name] = {m["name"]: m for m in d["methods"]}
        d["name"] = name
        return d

    def class_desc(self, cid):
        d = schema.describe_class(self.classes[cid])
        d["id"] = cid
        d["file"] = cid.split("::", 1)[0]
        return d

    def op_load_deck(self, msg):
        path = os.path.abspath(msg["file"])
        if path.lower().endswith(".json"):
            return self.load_deck_file(path, set(msg.get("reserved") or ()))
        module = self.run_deck(path)
        named = module if isinstance(module, dict) else vars(module)
        found = [(n, v) for n, v in named.items() if isinstance(n, str) and not n.startswith("_") and schema.is_instrument(v)]
        reserved = set(msg.get("reserved") or ())
        taken = [n for n, v in found if n in reserved or (n in self.instances and self.instances[n] is not v)]
        if taken:
            raise HostError("conflict", "the deck already has %s; rename %s in %s" % (
                ", ".join(taken), "them" if len(taken) > 1 else "it", path), names=taken)
        for name, value in found:
            self.instances[name] = value
        self.namespace.update(named)
        classes = self.deck_classes(path, [v for _, v in found])
        return {"file": path, "instruments": [self.instrument_desc(n) for n, _ in found],
                "classes": [self.class_desc(cid) for cid in classes], "modules": _local_modules(path)}

    def load_deck_file(self, path, reserved):
        """An `ivoryos-deck/1` file (deck_file.py): what loaded, and each instrument that did not with its stage."""
        try:
            built, failed = deck_file.load(path, lambda n: n in reserved or n in self.instances, self.run_async)
        except (OSError, ValueError) as exc:
            raise HostError("load_error", "%s: %s" % (type(exc).__name__, exc), file=path)
        for name, value in built:
            self.instances[name] = value
            self.namespace[name] = value
        classes = self.deck_classes(path, [v for _, v in built])
        return {"file": path, "instruments": [self.instrument_desc(n) for n, _ in built], "failed": failed,
                "classes": [self.class_desc(cid) for cid in classes], "modules": _local_modules(path)}

    def op_retry_instrument(self, msg):
        """Build an instrument of a deck file again (the lab fixed its driver, cable or entry)."""
        path, name = os.path.abspath(msg["file"]), msg["name"]
        if name in self.instances:
            return self.instrument_desc(name)
        try:
            value = deck_file.retry(path, name, self.run_async)
        except deck_file.StageError as exc:
            raise HostError("load_error", exc.error, stage=exc.stage, detail=exc.detail, file=path)
        except (OSError, ValueError) as exc:
            raise HostError("load_error", "%s: %s" % (type(exc).__name__, exc), stage="deck", file=path)
        self.instances[name] = value
        self.namespace[name] = value
        return self.instrument_desc(name)

    def run_async(self, awaitable):
        """A deck file's async setup call (an async connect()), run on the host's loop to its end."""
        return asyncio.run_coroutine_threadsafe(_awaited(awaitable), self.event_loop()).result()

    def deck_classes(self, path, instances):
        """The classes of a deck's instruments (its own drivers, from deck.py or the modules it imports) become
        connectable too, so Connect device offers a second pump like the first. A class some module already
        made connectable (a plugin file) keeps that entry."""
        ids = []
        for obj in instances:
            cls = type(obj)
            mod = sys.modules.get(cls.__module__)
            file = path if cls.__module__ == "__main__" else getattr(mod, "__file__", None) or path
            cid = "%s::%s" % (os.path.abspath(file), cls.__qualname__)
            if cid in ids or "<locals>" in cls.__qualname__:
                continue
            if cid not in self.classes:
                if not _has_methods(cls):
                    continue
                self.classes[cid] = cls
            ids.append(cid)
        return ids

    def run_deck(self, path):
        """Run a deck file as `python deck.py` would: as __main__, its folder first on sys.path."""
        with open(path, "rb") as f:
            source = f.read()
        folder = os.path.dirname(path)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        module = types.ModuleType("__main__")
        module.__file__ = path
        module.__builtins__ = builtins
        handed = []
        self.prepare_ivoryos(lambda mod, kwargs: handed.append(mod))
        saved_main, saved_argv = sys.modules.get("__main__"), sys.argv
        sys.modules["__main__"] = module
        sys.argv = [path]
        try:
            code = compile(source, path, "exec")
            exec(code, module.__dict__)
        except SystemExit as exc:
            if exc.code not in (None, 0):
                raise self.load_error(path, exc, [path])
        except BaseException as exc:
            raise self.load_error(path, exc, [path])
        finally:
            sys.argv = saved_argv
            self.handoff = None
            if saved_main is not None and sys.modules.get("__main__") is not module:
                sys.modules["__main__"] = saved_main
        if handed and isinstance(handed[-1], (types.ModuleType, dict)):
            return handed[-1]  # a dict: ivoryos_edge.run(instruments={...})
        if handed and isinstance(handed[-1], str) and handed[-1] in sys.modules and handed[-1] != "__main__":
            return sys.modules[handed[-1]]
        return module

    def prepare_ivoryos(self, handoff):
        """`import ivoryos` and `import ivoryos_edge` find the real package when the lab has it (its run() is
        replaced), else labdeck's stand-in; either way run(...) hands the module over and returns."""
        self.handoff = handoff
        handoff_mod.prepare(self.hand_over, lambda text: _write_fd(2, text + "\n"))

    def hand_over(self, module, kwargs):
        """What ivoryos.run(...) does under labdeck: tell the deck being loaded which module it is."""
        if self.handoff:
            self.handoff(module, kwargs)

    def load_error(self, path, exc, files):
        file, line = _where(exc, set(files))
        where = " (%s, line %s)" % (os.path.basename(file), line) if file and line else ""
        message = "%s: %s%s" % (type(exc).__name__, exc, where)
        extra = {}
        if isinstance(exc, ImportError) and not isinstance(exc, SyntaxError):
            message, extra = _import_failure(exc, message)
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return HostError("load_error", message, file=file, line=line, traceback=tb, type=type(exc).__name__, **extra)

    def op_load_module(self, msg):
        """Import a driver module (a plugin or an API module); its public classes become connectable. Loading
        the same file again replaces its classes (hot reload); instances keep their old class until replaced."""
        path = os.path.abspath(msg["file"])
        stem = os.path.splitext(os.path.basename(path))[0]
        if os.path.basename(path) == "__init__.py":
            stem = os.path.basename(os.path.dirname(path))
            folder = os.path.dirname(os.path.dirname(path))
        else:
            folder = os.path.dirname(path)
        name = stem if stem.isidentifier() and stem not in getattr(sys, "stdlib_module_names", ()) \
            and stem not in sys.builtin_module_names else "labdeck_module_%x" % (hash(path) & 0xFFFFFFFF)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        previous = sys.modules.get(name)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:
            if previous is not None:
                sys.modules[name] = previous
            else:
                sys.modules.pop(name, None)
            raise self.load_error(path, exc, [path])
        ids, optimizers = [], {}
        for cname, cls in vars(module).items():
            if cname.startswith("_") or not inspect.isclass(cls) or cls.__module__ != module.__name__:
                continue
            cid = "%s::%s" % (path, cname)
            if optimizer.is_optimizer_class(cls):  # an Optimizer subclass is an optimizer, never a driver
                try:
                    optimizers[cid] = dict(optimizer.describe(cls), id=cid)
                except ValueError as exc:
                    raise HostError("load_error", str(exc), file=path)
                continue
            if issubclass(cls, (BaseException, enum.Enum)) or not _has_methods(cls):
                continue
            ids.append(cid)
        for cid in self.module_classes.pop(path, []):
            self.classes.pop(cid, None)
        for cid in self.module_optimizers.pop(path, []):
            self.optimizer_classes.pop(cid, None)
        self.classes.update((cid, vars(module)[cid.split("::")[-1]]) for cid in ids)
        self.optimizer_classes.update((cid, vars(module)[cid.split("::")[-1]]) for cid in optimizers)
        self.module_classes[path] = ids
        self.module_optimizers[path] = list(optimizers)
        return {"file": path, "classes": [self.class_desc(cid) for cid in ids], "optimizers": list(optimizers.values())}

    def op_connect(self, msg):
        cid, name = msg["class"], msg["name"]
        cls = self.classes.get(cid)
        if cls is None:
            raise HostError("not_found", "no class %s in this host" % cid.split("::")[-1])
        if name in self.instances:
            raise HostError("conflict", "the host already has an instrument named %s" % name)
        kwargs = schema.convert_kwargs(cls, msg.get("kwargs") or {}, self.instances, cls.__name__)
        sink = CallSink(self.channel, msg.get("id"))
        token = _sink.set(sink)
        try:
            obj = cls(**kwargs)
        finally:
            sink.close()
            _sink.reset(token)
        self.instances[name] = obj
        return self.instrument_desc(name)

    def op_dispose(self, msg):
        obj = self.instances.pop(msg["name"], None)
        self.descs.pop(msg["name"], None)
        return self.dispose(obj) if obj is not None else None

    def dispose(self, obj):
        """close(), disconnect() or __exit__(): the first the instance has (awaited when async)."""
        for hook in ("close", "disconnect", "__exit__"):
            fn = getattr(obj, hook, None)
            if callable(fn):
                result = fn(None, None, None) if hook == "__exit__" else fn()
                if inspect.isawaitable(result):
                    asyncio.run_coroutine_threadsafe(_awaited(result), self.event_loop()).result(30)
                return hook
        return None

    # ------------------------------------------------------------------ calls

    def call(self, msg):
        sink = CallSink(self.channel, msg.get("id"))
        try:
            name, method = msg["instrument"], msg["method"]
            obj = self.instances.get(name)
            if obj is None:
                raise HostError("not_found", "no instrument %s in this host" % name)
            if method == worktable.LAYOUT:  # the labware view (no driver method: dunders are never methods)
                sink.close()
                self.reply(msg, worktable.view(obj))
                return
            desc = self.descs.get(name, {}).get(method)
            if desc is None:
                raise HostError("not_found", "%s has no method %s" % (name, method))
            fn, kwargs, is_async = schema.bind_call(obj, desc, msg.get("args") or {}, self.instances)
            worktable.check_args(obj, desc, msg.get("args") or {})  # wells and labware against the worktable, before the driver
            if is_async:
                value = asyncio.run_coroutine_threadsafe(self.with_sink(sink, fn(**kwargs)), self.event_loop()).result()
            else:
                token = _sink.set(sink)
                try:
                    value = fn(**kwargs)
                    if inspect.isawaitable(value):
                        value = asyncio.run_coroutine_threadsafe(self.with_sink(sink, value), self.event_loop()).result()
                finally:
                    _sink.reset(token)
            sink.close()
            out, warnings = schema.to_json(value)
            for w in warnings:
                sink.log("warning", "%s.%s %s" % (name, method, w))
            self.reply(msg, out)
        except BaseException as exc:  # noqa: B902 - SystemExit/KeyboardInterrupt from a driver fail the call only
            sink.close()
            self.fail(msg, exc)

    def optimizer_op(self, msg):
        """Create an optimizer state, call its suggest / observe, or drop it; what it prints is the call's."""
        sink = CallSink(self.channel, msg.get("id"))
        token = _sink.set(sink)
        try:
            kind, handle = msg["type"], msg["handle"]
            if kind == "optimizer_create":
                cls = self.optimizer_classes.get(msg["class"])
                if cls is None:
                    raise HostError("not_found", "no optimizer class %s in this host" % msg["class"].split("::")[-1])
                self.optimizers.create(cls, handle, msg["setup"], msg.get("config") or {})
                value = None
            elif kind == "optimizer_call":
                value = self.optimizers.call(handle, msg["method"], msg.get("args") or {})
                if value is None:
                    raise HostError("not_found", "no optimizer %s in this host" % handle)
            else:
                value = self.optimizers.dispose(handle)
            sink.close()
            self.reply(msg, value)
        except BaseException as exc:  # noqa: B902 - an optimizer's exception fails its request only
            sink.close()
            self.fail(msg, exc)
        finally:
            _sink.reset(token)

    @staticmethod
    async def with_sink(sink, awaitable):
        _sink.set(sink)
        return await awaitable

    def event_loop(self):
        """One asyncio loop, in its own thread, for every async method."""
        with self.loop_ready:
            if self.loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="labdeck-asyncio", daemon=True).start()
                self.loop = loop
        return self.loop

    # ------------------------------------------------------------------ console

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


def _has_methods(cls):
    try:
        return bool(schema.describe_class(cls)["methods"])
    except Exception:
        return False


async def _awaited(awaitable):
    return await awaitable


def main():
    channel = take_over_stdio()
    Host(channel).serve()
