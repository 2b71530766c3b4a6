"""Deck files (`ivoryos-deck/1`, the next generation of ivoryOS): a deck described as data, built here.

    {"format": "ivoryos-deck/1", "name": "...", "packages": [...], "paths": ["drivers"], "plugins": [...],
     "instruments": [{"name", "import", "class", "args": {... {"$object": {import, class, args}} ...},
                      "calls": [{"method", "args"}], "enabled": true}]}

`paths` (relative to the file) go on sys.path; each enabled instrument is imported, constructed with its
`args` (a `{"$object": ...}` value is built first) and its `calls` made in order. One instrument that fails
at any stage (`config`, `import`, `init`, `setup`) never stops the others: it is reported with its stage and
error, and `retry` builds it again from the file as it is now (after the lab fixed it). The TypeScript side
(core/deck/deck-file.ts) has checked the file's shape; `packages` are never installed and `plugins` are not
loaded (they are ivoryOS's web pages).
"""
import asyncio
import importlib
import json
import keyword
import os
import sys
import traceback

FORMAT = "ivoryos-deck/1"


class StageError(Exception):
    def __init__(self, stage, error, detail=""):
        super().__init__(error)
        self.stage = stage
        self.error = error
        self.detail = detail


def read(path):
    with open(path, "r", encoding="utf-8") as f:
        config = json.load(f)
    if not isinstance(config, dict) or config.get("format", FORMAT) != FORMAT:
        raise ValueError("%s is not an %s deck file" % (path, FORMAT))
    base = os.path.dirname(os.path.abspath(path))
    for rel in config.get("paths") or []:
        folder = os.path.normpath(os.path.join(base, str(rel)))
        if folder not in sys.path:
            sys.path.insert(0, folder)
    if base not in sys.path:
        sys.path.insert(0, base)
    return config


def entries(config):
    """The enabled instrument entries, in file order."""
    return [e for e in config.get("instruments") or [] if isinstance(e, dict) and e.get("enabled", True) is not False]


def _name_problem(name):
    if not isinstance(name, str) or not name:
        return "the instrument has no name"
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
        return "%r is not a usable instrument name (an identifier not starting with an underscore)" % name
    return None


def _class(module_name, class_name, fresh=False):
    if not module_name or not class_name:
        raise ValueError("needs both 'import' (a module) and 'class'")
    module = sys.modules.get(str(module_name)) if fresh else None
    # a retry reads the lab's fixed file again (a module that failed to import is not in sys.modules)
    module = importlib.reload(module) if module is not None else importlib.import_module(str(module_name))
    try:
        return getattr(module, str(class_name))
    except AttributeError:
        raise AttributeError("module %r has no class %r" % (module_name, class_name)) from None


def _value(value):
    """`{"$object": {import, class, args}}` becomes that object (recursively); other values stay as they are."""
    if isinstance(value, dict):
        if set(value) == {"$object"} and isinstance(value["$object"], dict):
            spec = value["$object"]
            return _class(spec.get("import"), spec.get("class"))(**{k: _value(v) for k, v in (spec.get("args") or {}).items()})
        return {k: _value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_value(v) for v in value]
    return value


def _detail():
    return traceback.format_exc(limit=6)


def build(entry, run_async, fresh=False):
    """The instrument an entry describes; StageError names the stage that failed."""
    problem = _name_problem(entry.get("name"))
    if problem:
        raise StageError("config", problem)
    try:
        cls = _class(entry.get("import"), entry.get("class"), fresh)
    except Exception as exc:
        raise StageError("import", "%s: %s" % (type(exc).__name__, exc), _detail()) from None
    args = entry.get("args") or {}
    try:
        instance = cls(**{k: _value(v) for k, v in args.items()})
    except Exception as exc:
        raise StageError("init", "%s: %s" % (type(exc).__name__, exc), _detail()) from None
    for i, call in enumerate(entry.get("calls") or []):
        method = call.get("method") if isinstance(call, dict) else None
        try:
            result = getattr(instance, method)(**{k: _value(v) for k, v in (call.get("args") or {}).items()})
            if hasattr(result, "__await__"):
                run_async(result)
        except Exception as exc:
            raise StageError("setup", "calls[%d] %s(): %s: %s" % (i, method, type(exc).__name__, exc), _detail()) from None
    return instance


def failure(entry, exc):
    out = {"name": entry.get("name"), "import": entry.get("import"), "class": entry.get("class"),
           "stage": exc.stage, "error": exc.error}
    if exc.detail:
        out["detail"] = exc.detail
    return out


def load(path, taken, run_async):
    """(instruments [(name, object)], failed [{name, import, class, stage, error, detail}]) of a deck file.
    `taken(name)` says a name is in use (reserved, or another instrument's): such an entry fails at `config`."""
    config = read(path)
    built, failed, seen = [], [], set()
    for entry in entries(config):
        name = entry.get("name")
        try:
            if isinstance(name, str) and (name in seen or taken(name)):
                raise StageError("config", "the name %s is taken (another instrument, or a page of the web app)" % name)
            seen.add(name)
            built.append((name, build(entry, run_async)))
        except StageError as exc:
            failed.append(failure(entry, exc))
    return built, failed


def retry(path, name, run_async):
    """Build one instrument of the deck file again, as the file is now. StageError when it still fails."""
    config = read(path)
    for entry in entries(config):
        if entry.get("name") == name:
            return build(entry, run_async, fresh=True)
    raise StageError("config", "%s is not an enabled instrument of %s any more" % (name, path))
