"""Write test/fixtures/ivoryos-classic/*.py with ivoryOS Classic's own script compiler (issue 29 item 0).

Run once, by hand, with a checkout of ivoryOS (AccelerationConsortium/ivoryOS, 1.6.x) whose `ivoryos/script`
folder is at IVORYOS_SRC:  python3 scripts/ivoryos-classic-fixtures.py /path/to/ivoryos-checkout
The outputs are committed; the tests read them and never need ivoryOS. The compiler's database model is
replaced by a plain object (its renderer only reads a script's name, deck, steps and order), so neither
Flask nor SQLAlchemy is needed. Each workflow below is a `script_dict` as ivoryOS's editor stores it, for
labdeck's demo deck (pump, balance, hotplate, reactor, noop).
"""
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "test", "fixtures", "ivoryos-classic")


def load_compiler(src):
    """ivoryOS's ScriptRenderer, with its database modules stood in for."""
    pkg = types.ModuleType("ivoryos")
    pkg.__path__ = [os.path.join(src, "ivoryos")]
    script_pkg = types.ModuleType("ivoryos.script")
    script_pkg.__path__ = [os.path.join(src, "ivoryos", "script")]
    models = types.ModuleType("ivoryos.models")
    models.__path__ = []
    base = types.ModuleType("ivoryos.models.base")
    base.db = types.SimpleNamespace(session=types.SimpleNamespace(get=lambda *a: None))
    script_models = types.ModuleType("ivoryos.script.models")

    class Script:
        stypes = ["prep", "script", "cleanup"]

        def __init__(self, name, script_dict, deck=None):
            self.name = name
            self.deck = deck
            self.script_dict = {k: script_dict.get(k, []) for k in self.stypes}
            self.id_order = {k: [str(a["id"]) for a in self.script_dict[k]] for k in self.stypes}
            self.editing_type = "script"

        def update_time_stamp(self):
            pass

    script_models.Script = Script
    sys.modules.update({"ivoryos": pkg, "ivoryos.script": script_pkg, "ivoryos.models": models,
                        "ivoryos.models.base": base, "ivoryos.script.models": script_models})
    from ivoryos.script.renderer import ScriptRenderer  # noqa: E402
    return Script, ScriptRenderer


def steps(*actions):
    out = []
    for i, a in enumerate(actions, 1):
        a = dict(a)
        a.setdefault("args", {})
        a.setdefault("arg_types", {})
        a.setdefault("return", "")
        a.setdefault("coroutine", False)
        a.setdefault("batch_action", False)
        a["id"], a["uuid"] = i, 1000 + i
        out.append(a)
    return out


def call(instrument, action, args=None, types_=None, ret=""):
    return {"instrument": "deck." + instrument, "action": action, "args": args or {}, "arg_types": types_ or {}, "return": ret}


def flow(instrument, action, statement=None, types_=None):
    return {"instrument": instrument, "action": action, "args": {"statement": statement} if statement is not None else {}, "arg_types": types_ or {}}


WORKFLOWS = {
    # calls with literal and parameter arguments, a result, prep and cleanup
    "dose_weigh": dict(
        prep=steps(call("hotplate", "set_temperature", {"celsius": 25}, {"celsius": "float"})),
        script=steps(
            call("pump", "dose", {"volume_ml": "#volume"}, {"volume_ml": "float"}),
            call("balance", "weigh", ret="mass"),
        ),
        cleanup=steps(call("hotplate", "set_temperature", {"celsius": 20}, {"celsius": "float"})),
    ),
    # parameters of several types, two results returned
    "react": dict(
        script=steps(
            call("reactor", "run", {"temperature": "#temperature", "time": 10}, {"temperature": "float", "time": "int"}, ret="run"),
            call("balance", "weigh", ret="mass"),
            call("noop", "ping"),
        ),
    ),
    # a pause step (the pause helper) and sleeps
    "pause_sleep": dict(
        script=steps(
            call("pump", "dose", {"volume_ml": 1.5}, {"volume_ml": "float"}),
            flow("pause", "pause", "Check the vial, then press Enter"),
            flow("wait", "wait", 2),
            call("balance", "weigh", ret="mass"),
        ),
    ),
    # if / else on a result, and a repeat
    "if_repeat": dict(
        script=steps(
            call("balance", "weigh", ret="mass"),
            flow("if", "if", "mass < 100"),
            call("pump", "dose", {"volume_ml": "#volume"}, {"volume_ml": "float"}),
            flow("if", "else"),
            flow("pause", "pause", "Too heavy"),
            flow("if", "endif"),
            flow("repeat", "repeat", 3),
            call("noop", "ping"),
            flow("repeat", "endrepeat"),
        ),
    ),
    # a deck module named in the script (`import lab_deck as deck`), a parameter of no declared type
    "named_deck": dict(
        deck="lab_deck",
        script=steps(call("pump", "dose", {"volume_ml": "#volume"}), call("noop", "ping")),
    ),
}

# forms labdeck refuses (the test checks that the answer names the line and says what to change)
REFUSED = {
    "while_loop": dict(
        script=steps(
            call("balance", "weigh", ret="mass"),
            flow("while", "while", "mass < 10"),
            call("pump", "dose", {"volume_ml": 1}, {"volume_ml": "float"}),
            flow("while", "endwhile"),
        ),
    ),
    "variable": dict(
        script=steps(
            {"instrument": "variable", "action": "volume", "args": {"statement": 2.5}, "arg_types": {"statement": "float"}},
            call("pump", "dose", {"volume_ml": "#volume"}, {"volume_ml": "float"}),
        ),
    ),
}
WORKFLOWS.update({"refused_" + k: v for k, v in REFUSED.items()})


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ivoryos-classic-fixtures.py IVORYOS_CHECKOUT")
    Script, ScriptRenderer = load_compiler(sys.argv[1])
    os.makedirs(OUT, exist_ok=True)
    for name, script_dict in WORKFLOWS.items():
        script_dict = dict(script_dict)
        script = Script(name, script_dict, deck=script_dict.pop("deck", None))
        ScriptRenderer(script).compile(script_path=OUT + os.sep)
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump({k: script.script_dict[k] for k in Script.stypes}, f, indent=1)
            f.write("\n")
        print("wrote", name)


if __name__ == "__main__":
    main()
