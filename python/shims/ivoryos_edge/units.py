"""`Annotated[float, Unit("mL")]`: the unit a value is in (labdeck's stand-in; read by its ivoryos_schema())."""


class Unit:
    def __init__(self, unit):
        text = str(unit).strip()
        if not text:
            raise ValueError("Unit() needs the unit's text, e.g. Unit('mL')")
        self.unit = text

    def ivoryos_schema(self):
        return {"unit": self.unit}

    def __repr__(self):
        return "Unit(%r)" % self.unit
