"""Optional modules of the tests (numpy, pydantic, optuna): the module, or why it does not import, in Python's
own words, so a skipped test says what is wrong (a broken install is not "not installed")."""
import importlib


def optional(name):
    """(module, None) when `name` imports; (None, "<name> does not import: <error>") when it does not."""
    try:
        return importlib.import_module(name), None
    except Exception as e:  # noqa: BLE001 - a broken install raises more than ImportError (an ABI mismatch, a bad config)
        return None, "%s does not import: %s: %s" % (name, type(e).__name__, e)
