"""The host's instruments and classes: loading a deck (a deck.py run as __main__, or an `ivoryos-deck/1`
file), importing a driver module (again on a change: hot reload), connecting and disposing instances, and
describing them (schema.py). A mixin of Host (host.py); its operations run on the control thread.
"""
import asyncio
import builtins
import enum
import importlib.util
import inspect
import os
import sys
import traceback
import types

from . import deck_file, handoff as handoff_mod, optimizer, schema, worktable
from .errors import HOST_DIR, HostError, _import_failure
from .output import CallSink, _sink, _write_fd

LOADER_FILE = os.path.abspath(__file__)  # runs the lab's code: a load error's place is never here


def _where(exc, files):
    """(file, line) of a load error: a SyntaxError's own place, else the deepest frame in the lab's files."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename) in files]
    outside = [f for f in frames if os.path.abspath(f.filename) != LOADER_FILE]
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


class Instruments:
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


def _has_methods(cls):
    try:
        return bool(schema.describe_class(cls)["methods"])
    except Exception:
        return False


async def _awaited(awaitable):
    return await awaitable
