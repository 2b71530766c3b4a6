"""The worktable of ivoryOS's next generation, read by duck typing: an instrument that says what is on its
worktable through `__ivoryos_labware__()` (the layout) and `__ivoryos_labware_state__()` (what each well
holds, which tips are left). Nothing is imported from ivoryOS: the names below are looked up on the object.

The layout, as the format has it: `{"deck": {...}, "labware": {name: {"label", "category", "rows", "columns",
"grid", "site", ...}}, "sites": [{"name", "label", ...}], "fixtures": [...]}`; `grid` is the labware's
position names, rows of columns. The state: `{"labware": {name: {well: {"volume_ul", "liquids"} | {"tip":
bool}}}, ...}`.

A wells value names the labware with its wells, as PyLabRobot writes them: `assay_plate[A1:H1]`,
`assay_plate[A1:H1, A3]`, `assay_plate` (every well), several separated by commas, or a list of such. A range
`A1:H1` runs down a column, `A1:A12` along a row; corners that differ in both are the rectangle between them,
column by column; `all` (or `*`) is the whole labware in that order. What is not a position is refused
before the driver is called, naming the argument: a typo must not become a smaller transfer.
"""
import re

from .schema import ArgError

LAYOUT = "__ivoryos_labware__"
STATE = "__ivoryos_labware_state__"
CATALOG = "__ivoryos_labware_catalog__"
EDIT = "__ivoryos_labware_edit__"
EVENTS = "__ivoryos_labware_events__"
DUNDERS = (LAYOUT, STATE, CATALOG, EDIT, EVENTS)

_ROW_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SEPARATORS = " \t\r\n,;"


def has_worktable(obj):
    return callable(getattr(obj, LAYOUT, None))


def _read(obj, method):
    fn = getattr(obj, method, None)
    if not callable(fn):
        return None, None
    try:
        value = fn()
    except Exception as exc:  # a driver that cannot say right now: the view says why, calls go on
        return None, "%s() raised %s: %s" % (method, type(exc).__name__, exc)
    if not isinstance(value, dict):
        return None, "%s() answered %s, not a dict" % (method, type(value).__name__)
    return value, None


def layout_of(obj):
    return _read(obj, LAYOUT)[0]


def _grid(entry):
    grid = entry.get("grid")
    if isinstance(grid, list) and grid and all(isinstance(r, list) for r in grid):
        return [[str(w) for w in row] for row in grid]
    rows, columns = entry.get("rows"), entry.get("columns")
    if isinstance(rows, int) and isinstance(columns, int) and 0 < rows <= 26 and columns > 0:
        return [["%s%d" % (_ROW_LETTERS[r], c + 1) for c in range(columns)] for r in range(rows)]
    return [["A1"]]


def labware_of(layout):
    """{name: {"category", "grid", "label", "site"}} of a layout (each labware's grid filled in)."""
    out = {}
    for name, entry in ((layout or {}).get("labware") or {}).items():
        entry = entry if isinstance(entry, dict) else {}
        out[str(name)] = {"category": entry.get("category"), "grid": _grid(entry),
                          "label": entry.get("label") or str(name), "site": entry.get("site")}
    return out


def sites_of(layout):
    return [str(s.get("label") or s.get("name")) for s in (layout or {}).get("sites") or [] if isinstance(s, dict)]


def _fits(category, wanted):
    return not wanted or category in wanted


def _bounds(grid):
    return "%s to %s" % (grid[0][0], grid[-1][-1]) if grid and grid[0] else "no positions"


# --- schemas: the choices a worktable gives -------------------------------------------------------

def fill_choices(obj, methods):
    """Give each Labware argument its choices (the names on this worktable of its categories), each Site
    argument the worktable's sites, and each Wells argument the labware it can name (`x-wells-of`, for the
    form's hint). Changes the method descriptions in place; nothing when the instrument has no worktable."""
    layout = layout_of(obj)
    if not layout:
        return
    labware, sites = labware_of(layout), sites_of(layout)
    for method in methods:
        props = (method.get("params") or {}).get("properties") or {}
        for schema in props.values():
            if not isinstance(schema, dict):
                continue
            if isinstance(schema.get("x-labware"), list):
                names = [n for n, e in labware.items() if _fits(e["category"], schema["x-labware"])]
                if names:
                    schema["enum"] = names
            elif schema.get("x-site") and sites:
                schema["enum"] = sites
            if isinstance(schema.get("x-wells"), list):
                schema["x-wells-of"] = [{"name": n, "category": e["category"], "rows": len(e["grid"]),
                                         "columns": len(e["grid"][0]) if e["grid"] else 0,
                                         "first": e["grid"][0][0], "last": e["grid"][-1][-1]}
                                        for n, e in labware.items() if _fits(e["category"], schema["x-wells"])]


# --- wells ----------------------------------------------------------------------------------------

def _span(a, b):
    step = 1 if a <= b else -1
    return range(a, b + step, step)


def expand(selection, grid):
    """The positions a selection (`A1:H1, A3`, `all`) names on `grid`, in visiting order; ValueError naming
    the first thing that is not a position."""
    where = {w: (r, c) for r, row in enumerate(grid) for c, w in enumerate(row)}
    text = selection if isinstance(selection, str) else ""
    tokens = [t for t in re.split(r"[,;\s]+", text.strip()) if t]
    if not tokens:
        raise ValueError("no wells are named between the brackets")
    out = []
    for token in tokens:
        if token.lower() in ("all", "*"):
            out.extend(grid[r][c] for c in range(len(grid[0])) for r in range(len(grid)))
            continue
        first, colon, last = token.partition(":")
        corners = [first.strip(), last.strip()] if colon else [token]
        for corner in corners:
            if corner not in where:
                raise ValueError("'%s' is not a position" % corner)
        if not colon:
            out.append(token)
            continue
        (r1, c1), (r2, c2) = where[corners[0]], where[corners[1]]
        out.extend(grid[r][c] for c in _span(c1, c2) for r in _span(r1, r2))
    return out


def references(value):
    """`plate[A1:H1], reservoir[A1]` (or a list of such texts) as [(labware, selection or None)]."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError("must be text such as assay_plate[A1:H1], or a list of such texts")
        i, n = 0, len(item)
        while True:
            while i < n and item[i] in _SEPARATORS:
                i += 1
            if i >= n:
                break
            name = _NAME.match(item, i)
            if not name:
                raise ValueError("'%s' is not written as labware[wells], e.g. assay_plate[A1:H1]" % item.strip())
            i = name.end()
            while i < n and item[i] in " \t":
                i += 1
            selection = None
            if i < n and item[i] == "[":
                end = item.find("]", i)
                if end < 0:
                    raise ValueError("'%s' has a [ without its ]" % item.strip())
                selection, i = item[i + 1:end], end + 1
            out.append((name.group(0), selection))
    if not out:
        raise ValueError("names no wells (write them with their labware, e.g. assay_plate[A1:H1])")
    return out


def wells_of(value, labware, wanted):
    """Every (labware, well) a wells value names, in order; ValueError saying what is wrong, naming the labware."""
    out = []
    for name, selection in references(value):
        entry = labware.get(name)
        if entry is None:
            hint = " (write wells with their labware, e.g. %s[%s])" % (next(iter(labware), "plate"), name) if re.fullmatch(r"[A-Za-z]{1,2}[0-9]{1,3}", name) else ""
            raise ValueError("names '%s', which is not on this worktable%s; it has %s" % (name, hint, ", ".join(labware) or "nothing"))
        if not _fits(entry["category"], wanted):
            raise ValueError("names '%s', a %s, not a %s" % (name, str(entry["category"]).replace("_", " "),
                                                              " or ".join(c.replace("_", " ") for c in wanted)))
        try:
            wells = expand("all" if selection is None else selection, entry["grid"])
        except ValueError as exc:
            raise ValueError("has %s on %s (its positions are %s)" % (exc, name, _bounds(entry["grid"]))) from None
        out.extend((name, w) for w in wells)
    return out


def check_args(obj, desc, args):
    """Refuse (ArgError naming the argument) a Labware, Site, Wells or PerWell argument that does not fit the
    instrument's worktable as it is now, before the driver is called. Nothing when it has no worktable."""
    props = (desc.get("params") or {}).get("properties") or {}
    marked = {k: s for k, s in props.items() if isinstance(s, dict) and k in args and
              ("x-labware" in s or "x-wells" in s or "x-site" in s or "x-per-well" in s)}
    if not marked or not has_worktable(obj):
        return
    layout, problem = _read(obj, LAYOUT)
    if layout is None:
        raise ArgError(next(iter(marked)), "cannot be checked: the instrument's %s" % problem)
    labware, sites = labware_of(layout), sites_of(layout)
    counted = {}
    for field, schema in marked.items():
        value = args[field]
        if isinstance(schema.get("x-wells"), list):
            try:
                counted[field] = len(wells_of(value, labware, schema["x-wells"]))
            except ValueError as exc:
                raise ArgError(field, str(exc)) from None
        elif isinstance(schema.get("x-labware"), list):
            names = [n for n, e in labware.items() if _fits(e["category"], schema["x-labware"])]
            if value not in names:
                raise ArgError(field, "must be labware on this worktable%s: %s (got %r)" % (
                    " of category " + " or ".join(schema["x-labware"]) if schema["x-labware"] else "",
                    ", ".join(names) or "there is none", value))
        elif schema.get("x-site") and sites and value not in sites:
            raise ArgError(field, "must be a site of this worktable: %s (got %r)" % (", ".join(sites), value))
    for field, schema in marked.items():
        of = schema.get("x-per-well")
        value = args[field]
        if isinstance(of, str) and isinstance(value, list) and of in counted and len(value) != counted[of]:
            raise ArgError(field, "has %d values, but %s names %d wells: give one value, or one per well" % (
                len(value), of, counted[of]))


# --- the labware view -----------------------------------------------------------------------------

def view(obj):
    """What the instrument's page shows: each labware with its grid, what each position holds, tips left."""
    layout, problem = _read(obj, LAYOUT)
    if layout is None:
        return {"worktable": False, **({"error": problem} if problem else {})}
    state, state_problem = _read(obj, STATE)
    held = (state or {}).get("labware") or {}
    items = []
    for name, entry in labware_of(layout).items():
        spots = held.get(name) if isinstance(held.get(name), dict) else {}
        contents = {str(w): v for w, v in spots.items() if isinstance(v, dict)}
        item = {"name": name, "label": entry["label"], "category": entry["category"], "site": entry["site"],
                "grid": entry["grid"], "contents": contents}
        tips = [v.get("tip") for v in contents.values() if "tip" in v]
        if entry["category"] == "tip_rack" or tips:
            item["tips_left"] = sum(1 for t in tips if t) if tips else sum(len(r) for r in entry["grid"])
        items.append(item)
    deck = layout.get("deck") if isinstance(layout.get("deck"), dict) else {}
    out = {"worktable": True, "deck": {k: deck[k] for k in ("name", "kind", "label") if k in deck},
           "labware": items, "sites": sites_of(layout),
           "editable": callable(getattr(obj, EDIT, None)), "catalog": callable(getattr(obj, CATALOG, None))}
    if state_problem:
        out["error"] = state_problem
    return out
