"""How a deck script's `ivoryos.run(...)` / `ivoryos_edge.run(...)` reaches labdeck instead of starting a server.

Both halves of ivoryOS end a deck script with a `run` call: Classic's `ivoryos.run(__name__, ...)`, the next
generation's `ivoryos_edge.run(__name__, ...)` or `ivoryos_edge.run(instruments={...})`. Under labdeck the lab's
real package is used when installed (its `run` replaced while the deck loads), else labdeck's stand-in from
python/shims. Either way `run` hands over and returns; the keyword arguments labdeck has no use for are
accepted and named in the server log (stderr).
"""
import importlib
import importlib.util
import os
import sys

SHIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shims")
STAND_IN = "labdeck-stand-in"
# the packages whose `run` hands a deck over, and the run() arguments labdeck reads itself
PACKAGES = ("ivoryos", "ivoryos_edge")
READ = frozenset({"instruments"})


def _stand_in(name):
    path = os.path.join(SHIM_DIR, name, "__init__.py")
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=[os.path.dirname(path)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _package(name):
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    try:
        return importlib.import_module(name)  # the real package, when the lab has it
    except Exception:  # not installed, or broken: the stand-in
        sys.modules.pop(name, None)
        return _stand_in(name)


def prepare(hand_over, log):
    """Make `import ivoryos` and `import ivoryos_edge` hand the deck to `hand_over(target, kwargs)`.

    `log(text)` gets one line per run() call naming the package and the arguments labdeck ignores."""
    for name in PACKAGES:
        mod = _package(name)

        def handoff(target, kwargs, _name=name):
            ignored = sorted(k for k in kwargs if k not in READ)
            if ignored:
                log("%s.run(): labdeck serves the deck itself and ignores %s" % (
                    _name, ", ".join("%s=%s" % (k, _short(kwargs[k])) for k in ignored)))
            if target is None and isinstance(kwargs.get("instruments"), dict):
                target = kwargs["instruments"]
            hand_over(target, kwargs)

        if getattr(mod, "__version__", "") == STAND_IN:
            mod._handoff = handoff
        else:
            mod.run = lambda module=None, *args, _h=handoff, **kwargs: _h(module, kwargs)


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
