"""labdeck's stand-in for ivoryOS.

An ivoryOS deck script ends with::

    if __name__ == "__main__":
        ivoryos.run(__name__)

Under labdeck, where the real ivoryos package is not installed, this module is what `import ivoryos` finds.
`run(...)` does not start a server: it hands the deck module (its top-level instruments) to labdeck and
returns, so the rest of the script runs as its author wrote it. When the real ivoryos is installed, labdeck
replaces its `run` with the same hand-over while the deck loads.
"""

__version__ = "labdeck-stand-in"

# Set by labdeck's host: called with the module (or its name) and run()'s keyword arguments.
_handoff = None


def run(module=None, *args, **kwargs):
    """Hand `module` (a module or its `__name__`) to labdeck instead of serving ivoryOS."""
    if _handoff is not None:
        _handoff(module, kwargs)
