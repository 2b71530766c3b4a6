"""A Python deck for labdeck — and an ivoryOS deck, unchanged: `lab serve --deck examples/python/deck.py`.

Every top-level instance is an instrument, named by its variable."""
import ivoryos
from instruments import Balance, Reactor, SyringePump

pump = SyringePump(port="/dev/ttyUSB0")
balance = Balance(pump)

if __name__ == "__main__":
    reactor = Reactor()
    ivoryos.run(__name__)
