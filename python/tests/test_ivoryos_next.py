"""ivoryOS's next generation under labdeck: `import ivoryos_edge` decks, deck files, markers and worktables.
The fixtures (test/fixtures/ivoryos-next) define their own markers and dunders: nothing is installed."""
import json
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


class DeckFileTest(unittest.TestCase):
    def setUp(self):
        self.host = HostProcess()
        self.addCleanup(self.host.close)

    def test_one_broken_instrument_never_stops_the_others_and_each_failure_names_its_stage(self):
        reply, _ = self.host.request({"type": "load_deck", "file": fixture("lab.deck.json"), "reserved": []})
        self.assertEqual(reply["type"], "result", reply)
        value = reply["value"]
        self.assertEqual([i["name"] for i in value["instruments"]], ["pump", "liquid_handler"])
        stages = {f["name"]: (f["stage"], f["error"]) for f in value["failed"]}
        self.assertEqual(stages["vendor_pump"][0], "import")
        self.assertIn("vendor_pumps", stages["vendor_pump"][1])
        self.assertEqual(stages["heater"], ("init", "OSError: could not open port COM9"))
        self.assertEqual(stages["reader"][0], "setup")
        self.assertIn("connect(): RuntimeError: no answer from the instrument", stages["reader"][1])
        self.assertNotIn("unplugged", stages)
        # args with $object were built, and calls were made
        probe, _ = self.host.request({"type": "console", "code": "(pump.connected, pump.settings.max_rate)", "timeout_ms": 5000})
        self.assertEqual(probe["value"]["result"], [True, 20])
        call, _ = self.host.request({"type": "call", "instrument": "pump", "method": "dose", "args": {"volume": 1.5}})
        self.assertEqual(call["value"], 1.5)

    def test_a_failed_instrument_can_be_retried_after_the_lab_fixes_it(self):
        import shutil
        import tempfile
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        with open(os.path.join(tmp, "flaky.py"), "w") as f:
            f.write("class Flaky:\n    def __init__(self):\n        raise OSError('cable out')\n    def read(self) -> int:\n        return 7\n")
        deck = os.path.join(tmp, "lab.deck.json")
        with open(deck, "w") as f:
            json.dump({"format": "ivoryos-deck/1", "instruments": [{"name": "flaky", "import": "flaky", "class": "Flaky"}]}, f)
        reply, _ = self.host.request({"type": "load_deck", "file": deck})
        self.assertEqual(reply["value"]["failed"][0]["stage"], "init")
        again, _ = self.host.request({"type": "retry_instrument", "file": deck, "name": "flaky"})
        self.assertEqual(again["type"], "error")
        self.assertEqual((again["error"]["stage"], again["error"]["message"]), ("init", "OSError: cable out"))
        with open(os.path.join(tmp, "flaky.py"), "w") as f:
            f.write("class Flaky:\n    def read(self) -> int:\n        return 7\n")
        fixed, _ = self.host.request({"type": "retry_instrument", "file": deck, "name": "flaky"})
        self.assertEqual(fixed["type"], "result", fixed)
        call, _ = self.host.request({"type": "call", "instrument": "flaky", "method": "read", "args": {}})
        self.assertEqual(call["value"], 7)


class MarkerTest(unittest.TestCase):
    def test_markers_a_driver_defines_itself_are_read_by_their_ivoryos_schema_and_strings_keep_working(self):
        import sys
        sys.path.insert(0, FIXTURES)
        self.addCleanup(sys.path.remove, FIXTURES)
        from labdeck_host import schema
        from drivers.bench import LiquidHandler, Pump
        pump = {m["name"]: m for m in schema.describe_class(Pump)["methods"]}
        volume = pump["dose"]["params"]["properties"]["volume"]
        self.assertEqual((volume["type"], volume["x-unit"], volume["description"]), ("number", "mL", "volume to dispense"))
        self.assertEqual(pump["dose"]["returns"]["x-unit"], "mL")
        lh = {m["name"]: m for m in schema.describe_class(LiquidHandler)["methods"]}
        transfer = lh["transfer"]["params"]["properties"]
        self.assertEqual(transfer["targets"]["x-wells"], ["plate"])
        self.assertEqual((transfer["volumes"]["x-per-well"], transfer["volumes"]["x-unit"]), ("targets", "uL"))
        self.assertEqual(lh["pick_up_tips"]["params"]["properties"]["rack"]["x-labware"], ["tip_rack"])
        self.assertTrue(lh["move_plate"]["params"]["properties"]["to"]["x-site"])
        # the worktable dunders are no methods
        self.assertNotIn("__ivoryos_labware__", lh)
