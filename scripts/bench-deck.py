"""The Python deck `npm run bench -- python` serves (scripts/bench.mjs): four instruments of one class, each
with a no-op method (the cost of a call itself) and one that blocks for a while (does it hold up the others?)."""
import time


class Bench:
    """A stand-in instrument for the bench."""

    def noop(self):
        """Do nothing and return None."""
        return None

    def slow(self, seconds: float = 1.0):
        """Block for `seconds` (time.sleep), as a driver waiting on its instrument does."""
        time.sleep(seconds)


i0 = Bench()
i1 = Bench()
i2 = Bench()
i3 = Bench()
