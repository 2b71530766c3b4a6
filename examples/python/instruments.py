"""Simulated instruments, written the way a lab writes Python drivers: plain classes, type hints, docstrings,
print() and logging. Nothing here knows about labdeck. They take time, check their inputs and fail like
instruments do."""
import logging
import random
import time
from enum import Enum
from typing import Literal, Tuple

log = logging.getLogger("sim")


class Solvent(Enum):
    WATER = "water"
    ETHANOL = "ethanol"
    ACETONE = "acetone"


class SyringePump:
    """A syringe pump on a serial port."""

    def __init__(self, port: str = "/dev/ttyUSB0", syringe_ml: float = 10.0):
        self.port = port
        self.syringe_ml = syringe_ml
        self.dispensed_ml = 0.0

    def dose(self, volume_ml: float, solvent: Solvent = Solvent.WATER, rate_ml_min: float = 5.0) -> float:
        """Dispense a volume of solvent.

        Args:
            volume_ml: volume to dispense, in mL (at most one syringe)
            solvent: which reservoir to draw from
            rate_ml_min: flow rate, in mL/min
        """
        if not 0 < volume_ml <= self.syringe_ml:
            raise ValueError(f"volume_ml must be in (0, {self.syringe_ml}], got {volume_ml}")
        print(f"dispensing {volume_ml} mL of {solvent.value} at {rate_ml_min} mL/min")
        time.sleep(min(2.0, volume_ml / rate_ml_min))
        self.dispensed_ml += volume_ml
        return self.dispensed_ml

    @property
    def total_ml(self) -> float:
        """Volume dispensed since start-up."""
        return self.dispensed_ml

    def close(self):
        print(f"closing {self.port}")


class Balance:
    """An analytical balance that shares the bench with the pump."""

    def __init__(self, pump: SyringePump):
        self.pump = pump
        self.zero = 0.0

    def tare(self) -> None:
        """Zero the balance."""
        time.sleep(0.2)
        self.zero = self.pump.dispensed_ml

    def weigh(self) -> float:
        """Mass on the pan, in g (water, with noise)."""
        time.sleep(0.3)
        mass = (self.pump.dispensed_ml - self.zero) * 0.998 + random.gauss(0, 0.002)
        log.info("weighed %.4f g", mass)
        return round(mass, 4)


class Reactor:
    """A heated reactor whose yield peaks at one temperature and time."""

    async def run(self, temperature_c: float = 60.0, minutes: float = 10.0,
                  stirring: Literal["slow", "fast"] = "fast") -> Tuple[float, float]:
        """Run a reaction; returns (yield, purity).

        Parameters
        ----------
        temperature_c : float
            set point, 20-120 C
        minutes : float
            reaction time
        stirring : str
            stirrer speed
        """
        import asyncio
        if not 20 <= temperature_c <= 120:
            raise ValueError("temperature_c must be between 20 and 120")
        await asyncio.sleep(0.5)
        y = max(0.0, 0.9 - ((temperature_c - 78) / 40) ** 2 - ((minutes - 25) / 30) ** 2)
        if stirring == "slow":
            y *= 0.9
        return round(y, 4), round(0.95 - y / 10, 4)
