"""The labware markers of ivoryOS's next generation (labdeck's stand-in): what a liquid handler's arguments are.

`Labware(*categories)`: the name of a labware on the instrument's worktable; `Wells(*categories)`: wells written
with their labware (`plate[A1:H1]`); `PerWell(of)`: one number per well of another argument, or one for all;
`Site()`: a place on the worktable. labdeck reads them by their `ivoryos_schema()` method (duck typing).
"""
from typing import List, Union

WellSelection = Union[str, List[str]]

LAYOUT_METHOD = "__ivoryos_labware__"
STATE_METHOD = "__ivoryos_labware_state__"
EVENTS_METHOD = "__ivoryos_labware_events__"
CATALOG_METHOD = "__ivoryos_labware_catalog__"
EDIT_METHOD = "__ivoryos_labware_edit__"


class Labware:
    def __init__(self, *categories):
        self.categories = list(categories)

    def ivoryos_schema(self):
        return {"labware": list(self.categories)}


class Wells:
    def __init__(self, *categories):
        self.categories = list(categories)

    def ivoryos_schema(self):
        return {"type": "wells", "wells": {"labware": list(self.categories)}}


class PerWell:
    def __init__(self, of):
        self.of = of

    def ivoryos_schema(self):
        return {"type": "float", "numeric": True, "per_well": self.of}


class Site:
    def ivoryos_schema(self):
        return {"labware_site": True}
