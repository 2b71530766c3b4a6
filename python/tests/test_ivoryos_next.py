"""ivoryOS's next generation under labdeck: `import ivoryos_edge` decks, deck files, markers and worktables.
The fixtures (test/fixtures/ivoryos-next) define their own markers and dunders: nothing is installed."""
import os
import unittest

from test_host import HostProcess

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "test", "fixtures", "ivoryos-next")


def fixture(name):
    return os.path.join(FIXTURES, name)


class EdgeDeckScriptTest(unittest.TestCase):
    def setUp(self):
        self.host = HostProcess()
        self.addCleanup(self.host.close)

    def load(self, name):
        reply, _ = self.host.request({"type": "load_deck", "file": fixture(name)})
        self.assertEqual(reply["type"], "result", reply)
        return reply["value"]

    def stderr_so_far(self):
        self.host.proc.stdin.close()
        self.host.proc.wait(10)
        return self.host.proc.stderr.read().decode()

    def test_import_ivoryos_edge_and_run_name_hand_the_module_over(self):
        value = self.load("edge_deck.py")
        self.assertEqual([i["name"] for i in value["instruments"]], ["pump", "liquid_handler"])
        call, _ = self.host.request({"type": "call", "instrument": "pump", "method": "dose", "args": {"volume": 2}})
        self.assertEqual(call["value"], 2.0)
        log = self.stderr_so_far()
        self.assertIn("ivoryos_edge.run(): labdeck serves the deck itself and ignores plugins=['labware_view'], port=8083", log)

    def test_run_instruments_dict_as_ivoryos_names_the_instruments_by_key(self):
        value = self.load("edge_deck_dict.py")
        self.assertEqual([i["name"] for i in value["instruments"]], ["syringe"])
        self.assertIn("ignores host='0.0.0.0'", self.stderr_so_far())
