"""Workflows written as Python (labdeck_host.workflow_py): the subset is read with ast into the workflow
document, never run; anything else is refused naming its line and construct; and over the protocol."""
import os
import sys
import tempfile
import textwrap
import unittest

from test_host import HostProcess

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from labdeck_host import workflow_py  # noqa: E402

SCRIPT = textwrap.dedent('''
    """Make and measure"""
    import time
    from labdeck_client import Lab


    def make_prep():
        deck.pump.prime()


    def make(volume: float = 1, n: int = 2, tag="a", *, hot=False, target):
        deck.pump.dose(volume_ml=volume, speed="#speed", extra={"a": [1, -2.5, None]})
        m = lab.balance.weigh()
        time.sleep(1.5)
        for _ in range(3):
            balance.tare()
        if m != "#x":
            pass
        elif m >= target:
            input()
        return {"m": m, "first": m[0]}


    def make_cleanup():
        """Leave it clean"""
        deck.pump.stop()


    if __name__ == "__main__":
        lab = Lab()
        make()
''')


class ParseTest(unittest.TestCase):
    def test_an_input_step(self):
        doc = workflow_py.parse('def read():\n    ph = float(input("Read the pH"))\n    note = input("Notes")\n    n = int(input())\n    return {"ph": ph}\n')
        self.assertEqual(doc["main"], [
            {"kind": "input", "prompt": "Read the pH", "schema": {"type": "number"}, "save_as": "ph"},
            {"kind": "input", "prompt": "Notes", "schema": {"type": "string"}, "save_as": "note"},
            {"kind": "input", "prompt": "Enter a value", "schema": {"type": "integer"}, "save_as": "n"},
        ])
        self.assertEqual(doc["outputs"], ["ph"])

    def test_the_subset(self):
        doc = workflow_py.parse(SCRIPT)
        self.assertEqual(doc["name"], "make")
        self.assertEqual(doc["description"], "Make and measure")
        self.assertEqual(doc["parameters"], [
            {"name": "volume", "type": "number", "default": 1},
            {"name": "n", "type": "integer", "default": 2},
            {"name": "tag", "type": "string", "default": "a"},
            {"name": "hot", "type": "boolean", "default": False},
            {"name": "target", "type": "number"},
            {"name": "speed", "type": "number"},
            {"name": "x", "type": "number"},
        ])
        self.assertEqual(doc["outputs"], ["m", {"name": "first", "from": "m.0"}])
        self.assertEqual(doc["prep"], [{"kind": "call", "instrument": "pump", "method": "prime"}])
        self.assertEqual(doc["cleanup"], [{"kind": "call", "instrument": "pump", "method": "stop"}])
        self.assertEqual(doc["main"], [
            {"kind": "call", "instrument": "pump", "method": "dose", "args": {
                "volume_ml": {"param": "volume"}, "speed": {"param": "speed"}, "extra": {"value": {"a": [1, -2.5, None]}}}},
            {"kind": "call", "instrument": "balance", "method": "weigh", "save_as": "m"},
            {"kind": "wait", "seconds": 1.5},
            {"kind": "repeat", "times": 3, "steps": [{"kind": "call", "instrument": "balance", "method": "tare"}]},
            {"kind": "if", "condition": {"left": {"var": "m"}, "op": "!=", "right": {"param": "x"}}, "then": [], "else": [
                {"kind": "if", "condition": {"left": {"var": "m"}, "op": ">=", "right": {"param": "target"}},
                 "then": [{"kind": "pause"}]}]},
        ])

    def test_a_name_given_wins(self):
        self.assertEqual(workflow_py.parse("def script():\n    pass\n", "other")["name"], "other")

    def test_outside_the_subset_names_line_and_construct(self):
        cases = [
            ("def w():\n    pass\n\n\ndef v():\n    pass\n", 5, "a second main function (v)"),
            ("print('hi')\n", 1, "print('hi') (Expr)"),
            ("def w():\n    try:\n        pass\n    except Exception:\n        pass\n", 2, "try"),
            ("def w():\n    x = deck.a.b()\n    x += 1\n", 3, "an augmented assignment"),
            ("def w():\n    deck.a.b(v=1 + 2)\n", 2, "1 + 2 (BinOp)"),
            ("def w():\n    deck.a.b(v=undefined)\n", 2, "the name undefined"),
            ("def w():\n    deck.a.b(**kw)\n", 2, "**kw"),
            ("def w():\n    x = time.sleep(1)\n", 2, "assigning the result of time.sleep"),
            ("def w():\n    for i in items:\n        pass\n", 2, "for … in items"),
            ("def w():\n    for _ in range(n):\n        pass\n", 2, "n (Name)"),
            ("def w():\n    if a and b:\n        pass\n", 2, "the condition a and b"),
            ("def w():\n    if 1 < 2 < 3:\n        pass\n", 2, "the condition 1 < 2 < 3"),
            ("def w():\n    deck.a.b.c.d()\n", 2, "the call deck.a.b.c.d(…)"),
            ("def w():\n    open('x').read()\n", 2, "the call open('x').read(…)"),
            ("def w():\n    x = deck.a.b()\n    return x\n", 3, "return x"),
            ("def w():\n    return 1\n    deck.a.b()\n", 2, "return"),
            ("def w_prep(x):\n    pass\n\n\ndef w():\n    pass\n", 1, "arguments of w_prep"),
            ("def w(*args):\n    pass\n", 1, "*args / **kwargs / positional-only arguments"),
            ("import time\n", 1, "a script without a main function"),
            ("def w(:\n", 1, "a syntax error"),
        ]
        for source, line, construct in cases:
            with self.subTest(source=source):
                with self.assertRaises(workflow_py.OutsideSubset) as caught:
                    workflow_py.parse(source)
                self.assertEqual((caught.exception.line, caught.exception.construct), (line, construct))
                self.assertTrue(str(caught.exception).startswith("line %d: " % line), str(caught.exception))

    def test_never_runs_the_code(self):
        with tempfile.TemporaryDirectory() as tmp:
            marker = os.path.join(tmp, "ran")
            source = "open(%r, 'w').close()\n\n\ndef w():\n    pass\n" % marker
            with self.assertRaises(workflow_py.OutsideSubset):
                workflow_py.parse(source)
            workflow_py.parse("import os\n\n\ndef w():\n    pass\n\n\nif __name__ == '__main__':\n    open(%r, 'w').close()\n" % marker)
            self.assertFalse(os.path.exists(marker))

    def test_the_return_keys_name_the_outputs(self):
        doc = workflow_py.parse('def w():\n    cell = deck.meter.read()\n'
                                '    return {"power": cell["power_mw"], "cell.current_ma": cell["current_ma"], "cell": cell}\n')
        self.assertEqual(doc["outputs"], [{"name": "power", "from": "cell.power_mw"}, "cell.current_ma", "cell"])
        with self.assertRaises(workflow_py.OutsideSubset) as caught:
            workflow_py.parse('def w():\n    cell = deck.meter.read()\n    return {1: cell}\n')
        self.assertIn("the output name 1", str(caught.exception))

    def test_ivoryos_parts(self):
        doc = workflow_py.parse_parts({"prep": "deck.a.b()", "script": "def s(v=1):\n    r = deck.a.c(v=v)\n    return {'r': r}",
                                       "cleanup": "time.sleep(0)"}, "w")
        self.assertEqual(doc, {
            "name": "w", "description": "", "parameters": [{"name": "v", "type": "integer", "default": 1}], "outputs": ["r"],
            "prep": [{"kind": "call", "instrument": "a", "method": "b"}],
            "main": [{"kind": "call", "instrument": "a", "method": "c", "args": {"v": {"param": "v"}}, "save_as": "r"}],
            "cleanup": [{"kind": "wait", "seconds": 0}]})
        # a variable of prep is known in the script, as in the workflow's order
        self.assertEqual(workflow_py.parse_parts({"prep": "x = deck.a.b()", "script": "deck.a.c(v=x)"}, "w")["main"][0]["args"], {"v": {"var": "x"}})
        with self.assertRaises(workflow_py.OutsideSubset) as caught:
            workflow_py.parse_parts({"script": "deck.a.b()", "cleanup": "deck.a.b()\nwhile 1:\n    pass"}, "w")
        self.assertEqual((caught.exception.field, caught.exception.line), ("cleanup", 2))
        self.assertTrue(str(caught.exception).startswith("cleanup line 2: a while loop"))


class ProtocolTest(unittest.TestCase):
    def test_parse_workflow_request(self):
        host = HostProcess()
        try:
            reply, _ = host.request({"type": "parse_workflow", "source": SCRIPT, "name": "m2"})
            self.assertEqual(reply["type"], "result")
            self.assertEqual(reply["value"]["name"], "m2")
            reply, _ = host.request({"type": "parse_workflow", "parts": {"script": "x = 1"}, "name": "w"})
            self.assertEqual(reply["type"], "error")
            self.assertEqual({k: reply["error"][k] for k in ("kind", "field", "line", "construct")},
                             {"kind": "invalid_input", "field": "script", "line": 1, "construct": "an assignment of 1"})
        finally:
            host.close()


if __name__ == "__main__":
    unittest.main()


class HostileAndClassicTest(unittest.TestCase):
    """Hostile text is answered naming the line (issue 26 #2); ivoryOS Classic's compiled forms are read (issue 29)."""

    def refused(self, source):
        with self.assertRaises(workflow_py.OutsideSubset) as caught:
            workflow_py.parse(source)
        return str(caught.exception)

    def test_hostile_text_is_answered(self):
        self.assertIn("line 2:", self.refused("def w():\n    time.sleep(1e999)\n"))
        self.assertIn("line 2:", self.refused("def w():\n    deck.a.b(x={[]: 1})\n"))
        self.assertRegex(self.refused("def w():\n    deck.a.b(x=%s1)\n" % ("- " * 5000)), r"^line 2: nesting too deep")
        self.assertRegex(self.refused("def w():\n    deck.a.b(x=%s)\n" % "+".join(["1"] * 50000)), r"^line 2: nesting too deep")
        with self.assertRaises(workflow_py.OutsideSubset) as caught:
            workflow_py.parse_parts({"prep": True}, None)
        self.assertIn("prep is not text", str(caught.exception))
        self.assertLess(len(self.refused("def w():\n    x = " + "a" * 10000 + "\n")), 400)

    def test_classic_forms(self):
        doc = workflow_py.parse(textwrap.dedent('''\
            deck = None
            import time


            def pause(reason="Manual intervention required"):
            \tprint(f"\\nHUMAN INTERVENTION REQUIRED: {reason}")
            \tinput("Press Enter to continue...\\n")


            def w(v: Optional[float]):
            \tglobal w
            \tr = deck.pump.dose(**{'volume_ml': v, 'mode': Mode('fast')})
            \tpause(\'\'\'Look\'\'\')
            \treturn {'r':r,}
        '''))
        self.assertEqual(doc["main"], [
            {"kind": "call", "instrument": "pump", "method": "dose", "args": {"volume_ml": {"param": "v"}, "mode": {"value": "fast"}}, "save_as": "r"},
            {"kind": "pause", "message": "Look"},
        ])
        self.assertEqual(doc["parameters"], [{"name": "v", "type": "number"}])
        self.assertEqual(doc["outputs"], ["r"])

    def test_classic_forms_without_a_step_say_what_to_write(self):
        self.assertIn("a result is kept whole", self.refused("def w():\n\t__ivoryos_result = deck.a.b()\n\tx = __ivoryos_result[0]\n"))
        self.assertIn("without batch mode", self.refused("def w(param_list):\n\tfor param in param_list:\n\t\tdeck.a.b()\n"))
        self.assertEqual(workflow_py.parse("def w():\n\tx = input('how much?')\n")["main"], [{"kind": "input", "prompt": "how much?", "schema": {"type": "string"}, "save_as": "x"}])
        self.assertIn("printing is no step", self.refused("def w():\n\tprint('hello')\n"))
