"""labdeck's stand-in for the next generation of ivoryOS (the `ivoryos-edge` package).

A next-generation deck script ends with::

    import ivoryos_edge
    ivoryos_edge.run(__name__)                 # or run(instruments={"pump": pump, ...})

Under labdeck, where the real package is not installed, this is what `import ivoryos_edge` finds. `run(...)`
starts no server: it hands the module (or the instruments dict) to labdeck and returns, so the rest of the
script runs as its author wrote it. Keyword arguments labdeck has no use for (port, host, plugins, ...) are
accepted and named in the server log. `Unit` and the labware markers (`ivoryos_edge.labware`) are here too, so
a driver that imports them loads; labdeck reads any marker by its `ivoryos_schema()` method, whoever made it.
"""

__version__ = "labdeck-stand-in"
__all__ = ["run", "Unit"]

# Set by labdeck's host: called with the module, its name or an instruments dict, and run()'s keyword arguments.
_handoff = None


def run(module_name=None, *args, **kwargs):
    """Hand `module_name` (a module, its `__name__`) or `instruments={...}` to labdeck instead of serving."""
    if _handoff is not None:
        _handoff(module_name, kwargs)


def __getattr__(name):
    if name == "Unit":
        from .units import Unit
        return Unit
    raise AttributeError("module 'ivoryos_edge' has no attribute %r" % name)
