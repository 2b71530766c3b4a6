"""Annotated metadata of ivoryOS's next generation, read by duck typing: any object with an `ivoryos_schema()`
method (`Unit("mL")`, `Labware("plate")`, `Wells(...)`, `PerWell("targets")`, `Site()`), whoever defined it, so a
driver package imports nothing of labdeck or ivoryOS. What labdeck keeps of each, on the JSON Schema:

- `{"unit": "mL"}` -> `x-unit` (and `unit`), shown beside the field and with results;
- `{"labware": [...]}` -> `x-labware` (categories), `{"labware_site": true}` -> `x-site`;
- `{"type": "wells", "wells": {"labware": [...]}}` -> `x-wells` (categories);
- `{"per_well": "targets"}` -> `x-per-well`.
A marker whose ivoryos_schema() raises or answers no dict is ignored (the parameter stays as its type says).
"""


def schema_of(metadata):
    """The labdeck schema keywords of the markers in `metadata` (an Annotated's extra arguments)."""
    out = {}
    for item in metadata:
        method = getattr(item, "ivoryos_schema", None)
        if isinstance(item, type) or not callable(method):
            continue
        try:
            said = method()
        except Exception:
            continue
        if not isinstance(said, dict):
            continue
        if isinstance(said.get("unit"), str) and said["unit"].strip():
            out["x-unit"] = out["unit"] = said["unit"].strip()
        if "labware" in said and isinstance(said["labware"], list):
            out["x-labware"] = [str(c) for c in said["labware"]]
        if said.get("labware_site"):
            out["x-site"] = True
        if said.get("type") == "wells" or isinstance(said.get("wells"), dict):
            wells = said.get("wells") if isinstance(said.get("wells"), dict) else {}
            out["x-wells"] = [str(c) for c in wells.get("labware") or []]
        if isinstance(said.get("per_well"), str):
            out["x-per-well"] = said["per_well"]
    return out
