"""The worktable protocol and the Labware/Wells markers under labdeck (issue 29 items 3 and 4): a plr-style
deck (test/fixtures/ivoryos-next/plr_deck.py) defines the markers and dunders itself; nothing is installed."""
import os
import unittest

from test_host import HostProcess
from labdeck_host import worktable

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "test", "fixtures", "ivoryos-next")
GRID = [["%s%d" % (r, c) for c in range(1, 13)] for r in "ABCDEFGH"]


class ExpandTest(unittest.TestCase):
    def test_ranges_run_down_a_column_along_a_row_or_column_by_column(self):
        self.assertEqual(worktable.expand("A1:H1", GRID), ["A1", "B1", "C1", "D1", "E1", "F1", "G1", "H1"])
        self.assertEqual(worktable.expand("A1:A3", GRID), ["A1", "A2", "A3"])
        self.assertEqual(worktable.expand("A1:B2", GRID), ["A1", "B1", "A2", "B2"])
        self.assertEqual(worktable.expand("A1:H1, A3", GRID)[-1], "A3")
        self.assertEqual(len(worktable.expand("all", GRID)), 96)
        with self.assertRaisesRegex(ValueError, "'I1' is not a position"):
            worktable.expand("A1:I1", GRID)

    def test_references_name_labware_with_their_wells(self):
        self.assertEqual(worktable.references("assay_plate[A1:H1], reservoir[A1]"),
                         [("assay_plate", "A1:H1"), ("reservoir", "A1")])
        self.assertEqual(worktable.references(["assay_plate"]), [("assay_plate", None)])
        with self.assertRaisesRegex(ValueError, "not written as labware"):
            worktable.references("[A1]")


class PlrDeckTest(unittest.TestCase):
    def setUp(self):
        self.host = HostProcess()
        self.addCleanup(self.host.close)
        reply, _ = self.host.request({"type": "load_deck", "file": os.path.join(FIXTURES, "plr_deck.py")})
        self.assertEqual(reply["type"], "result", reply)
        self.methods = {m["name"]: m for m in reply["value"]["instruments"][0]["methods"]}

    def call(self, method, **args):
        reply, _ = self.host.request({"type": "call", "instrument": "liquid_handler", "method": method, "args": args})
        return reply

    def test_labware_and_sites_are_a_choice_of_the_worktable_and_the_dunders_are_no_methods(self):
        self.assertEqual(self.methods["pick_up_tips"]["params"]["properties"]["rack"]["enum"], ["tips_300"])
        self.assertEqual(self.methods["move_plate"]["params"]["properties"]["plate"]["enum"], ["assay_plate"])
        self.assertEqual(self.methods["move_plate"]["params"]["properties"]["to"]["enum"][:2], ["1", "2"])
        of = self.methods["transfer"]["params"]["properties"]["targets"]["x-wells-of"]
        self.assertEqual(of, [{"name": "assay_plate", "category": "plate", "rows": 8, "columns": 12, "first": "A1", "last": "H12"}])
        self.assertFalse([n for n in self.methods if n.startswith("_")])

    def test_a_well_outside_the_grid_is_refused_naming_the_argument_before_the_driver_is_called(self):
        bad = self.call("transfer", source="reservoir[A1]", targets="assay_plate[A1:I1]", volumes=10)
        self.assertEqual(bad["type"], "error")
        self.assertEqual((bad["error"]["kind"], bad["error"]["field"]), ("invalid_args", "targets"))
        self.assertIn("'I1' is not a position on assay_plate", bad["error"]["message"])
        wrong = self.call("transfer", source="reservoir[A1]", targets="reservoir[A1]", volumes=10)
        self.assertIn("a reservoir, not a plate", wrong["error"]["message"])
        lengths = self.call("transfer", source="reservoir[A1]", targets="assay_plate[A1:H1]", volumes=[1, 2])
        self.assertEqual(lengths["error"]["field"], "volumes")
        self.assertEqual(self.call("driver_calls")["value"], 0)
        ok = self.call("transfer", source="reservoir[A1]", targets="assay_plate[A1:H1]", volumes=[1] * 8)
        self.assertEqual(ok["value"], 8.0)
        self.assertEqual(self.call("driver_calls")["value"], 1)

    def test_the_labware_view_has_each_grid_its_contents_and_the_tips_left(self):
        self.call("transfer", source="reservoir[A1]", targets="assay_plate[A1]", volumes=20)
        view = self.call("__ivoryos_labware__")["value"]
        self.assertTrue(view["worktable"])
        self.assertEqual(view["deck"]["label"], "Opentrons OT-2")
        by = {l["name"]: l for l in view["labware"]}
        self.assertEqual(len(by["assay_plate"]["grid"]), 8)
        self.assertEqual(by["assay_plate"]["contents"]["A1"]["volume_ul"], 20.0)
        self.assertEqual(by["tips_300"]["tips_left"], 95)
        self.assertTrue(view["editable"])
