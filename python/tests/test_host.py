"""The Python host as the runtime sees it: a real child process, spoken to over its stdin/stdout."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_HOST = os.path.join(os.path.dirname(HERE), "run_host.py")

DRIVER = textwrap.dedent('''
    import logging, os, sys, time

    class Noisy:
        """Prints the way real drivers do."""

        def talk(self, n: int = 2) -> int:
            for i in range(n):
                print("line", i)
            print("no newline at the end", end="")
            logging.getLogger("noisy").warning("careful")
            os.write(1, b"C-level write to fd 1\\n")
            sys.stderr.write("to stderr\\n")
            return n

        def sleepy(self, seconds: float) -> str:
            time.sleep(seconds)
            return "awake"

        def close(self):
            print("closed")
''')


class HostProcess:
    def __init__(self, python=sys.executable):
        self.proc = subprocess.Popen([python, RUN_HOST], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.next_id = 1
        self.buffered = []
        self.hello = self.read()

    def send(self, msg):
        msg = dict(msg, id=self.next_id)
        self.next_id += 1
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        return msg["id"]

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("host closed its channel; stderr: %s" % self.proc.stderr.read().decode())
        return json.loads(line)

    def until_reply(self, msg_id):
        """The reply to msg_id, and the events of that request that came before it. Other messages (replies
        to other requests, their events) stay buffered for later: replies come in any order."""
        def is_reply(m):
            return m.get("id") == msg_id and m["type"] in ("result", "error")
        while not any(is_reply(m) for m in self.buffered):
            self.buffered.append(self.read())
        reply = next(m for m in self.buffered if is_reply(m))
        events = [m for m in self.buffered if m["type"] == "event" and m.get("call") == msg_id]
        self.buffered = [m for m in self.buffered if m is not reply and m not in events]
        return reply, events

    def request(self, msg):
        return self.until_reply(self.send(msg))

    def close(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        self.proc.wait(10)
        self.proc.stdout.close()
        self.proc.stderr.close()


class HostTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.driver = os.path.join(self.dir.name, "noisy.py")
        with open(self.driver, "w") as f:
            f.write(DRIVER)
        self.host = HostProcess()
        self.addCleanup(self.host.close)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def test_hello_names_the_protocol_and_interpreter(self):
        self.assertEqual(self.host.hello["type"], "hello")
        self.assertEqual(self.host.hello["protocol"], 1)
        self.assertEqual(self.host.hello["host"], "python")
        self.assertTrue(self.host.hello["version"].startswith("3."))

    def test_prints_logs_and_fd_writes_never_reach_the_channel(self):
        reply, _ = self.host.request({"type": "load_module", "file": self.driver})
        self.assertEqual([c["name"] for c in reply["value"]["classes"]], ["Noisy"])
        cid = reply["value"]["classes"][0]["id"]
        self.host.request({"type": "connect", "class": cid, "name": "n", "kwargs": {}})
        reply, events = self.host.request({"type": "call", "instrument": "n", "method": "talk", "args": {"n": 2}})
        self.assertEqual(reply["value"], 2)
        texts = [e["text"] for e in events if e["type"] == "event"]
        self.assertIn("line 0", texts)
        self.assertIn("line 1", texts)
        self.assertIn("no newline at the end", texts)
        self.assertIn("noisy: careful", texts)
        self.assertIn("[stderr] to stderr", texts)
        self.assertTrue(all(e["call"] == reply["id"] for e in events))

    def test_calls_run_concurrently(self):
        reply, _ = self.host.request({"type": "load_module", "file": self.driver})
        cid = reply["value"]["classes"][0]["id"]
        for name in ("a", "b"):
            self.host.request({"type": "connect", "class": cid, "name": name, "kwargs": {}})
        t0 = time.monotonic()
        slow = self.host.send({"type": "call", "instrument": "a", "method": "sleepy", "args": {"seconds": 0.5}})
        fast, _ = self.host.request({"type": "call", "instrument": "b", "method": "sleepy", "args": {"seconds": 0}})
        self.assertEqual(fast["value"], "awake")
        self.assertLess(time.monotonic() - t0, 0.4)
        reply, _ = self.host.until_reply(slow)
        self.assertEqual(reply["value"], "awake")

    def test_many_slow_calls_at_once_each_get_a_thread_and_garbage_is_ignored(self):
        reply, _ = self.host.request({"type": "load_module", "file": self.driver})
        cid = reply["value"]["classes"][0]["id"]
        for i in range(12):
            self.host.request({"type": "connect", "class": cid, "name": "n%d" % i, "kwargs": {}})
        self.host.proc.stdin.write(b"this is not json\n")
        self.host.proc.stdin.flush()
        t0 = time.monotonic()
        ids = [self.host.send({"type": "call", "instrument": "n%d" % i, "method": "sleepy", "args": {"seconds": 0.4}})
               for i in range(12)]
        for i in ids:
            reply, _ = self.host.until_reply(i)
            self.assertEqual(reply["value"], "awake")
        self.assertLess(time.monotonic() - t0, 1.5)  # side by side, not 12 x 0.4 s
        ping, _ = self.host.request({"type": "ping"})
        self.assertEqual(ping["value"], "pong")

    def test_a_deck_runs_as_main_and_ivoryos_run_hands_it_over(self):
        self.write("instruments.py", DRIVER)
        deck = self.write("deck.py", '''
            import ivoryos
            from instruments import Noisy
            early = Noisy()
            if __name__ == "__main__":
                late = Noisy()
                ivoryos.run(__name__, port=8000)
                after_run = "the script goes on after run()"
        ''')
        reply, _ = self.host.request({"type": "load_deck", "file": deck})
        self.assertEqual([i["name"] for i in reply["value"]["instruments"]], ["early", "late"])
        again, _ = self.host.request({"type": "load_deck", "file": deck, "reserved": ["late"]})
        self.assertEqual(again["type"], "error")
        self.assertEqual(again["error"]["kind"], "conflict")
        self.assertIn("late", again["error"]["names"])

    def test_a_decks_own_classes_become_connectable(self):
        os.makedirs(os.path.join(self.dir.name, "drivers"))
        self.write(os.path.join("drivers", "__init__.py"), "")
        self.write(os.path.join("drivers", "noisy.py"), DRIVER)
        deck = self.write("deck.py", '''
            from drivers.noisy import Noisy

            class Stirrer:
                def __init__(self, rpm: int = 100):
                    self.rpm = rpm

                def stir(self, seconds: float = 1.0) -> float:
                    return seconds

            noisy = Noisy()
            other = Noisy()
            stirrer = Stirrer()
        ''')
        reply, _ = self.host.request({"type": "load_deck", "file": deck})
        classes = {c["name"]: c for c in reply["value"]["classes"]}
        self.assertEqual(sorted(classes), ["Noisy", "Stirrer"])
        self.assertEqual(classes["Noisy"]["file"], os.path.join(self.dir.name, "drivers", "noisy.py"))
        self.assertEqual(classes["Stirrer"]["file"], deck)
        self.assertEqual(classes["Stirrer"]["options"]["properties"]["rpm"]["type"], "integer")
        # the deck's own modules (watched with the deck file), not the standard library's
        self.assertEqual(reply["value"]["modules"], [os.path.join(self.dir.name, "drivers", "__init__.py"),
                                                     os.path.join(self.dir.name, "drivers", "noisy.py")])
        made, _ = self.host.request({"type": "connect", "class": classes["Stirrer"]["id"], "name": "stirrer2", "kwargs": {"rpm": 5}})
        self.assertEqual(made["type"], "result", made)
        call, _ = self.host.request({"type": "call", "instrument": "stirrer2", "method": "stir", "args": {"seconds": 2}})
        self.assertEqual(call["value"], 2)

    def test_with_the_real_ivoryos_installed_its_run_hands_over_instead_of_serving(self):
        os.makedirs(os.path.join(self.dir.name, "ivoryos"))
        self.write(os.path.join("ivoryos", "__init__.py"), '''
            def run(module=None, **kwargs):
                raise SystemExit("the real ivoryOS server would start here")
        ''')
        self.write("instruments.py", DRIVER)
        deck = self.write("deck.py", '''
            import ivoryos
            from instruments import Noisy
            if __name__ == "__main__":
                pump = Noisy()
                ivoryos.run(__name__)
        ''')
        reply, _ = self.host.request({"type": "load_deck", "file": deck})
        self.assertEqual(reply["type"], "result", reply)
        self.assertEqual([i["name"] for i in reply["value"]["instruments"]], ["pump"])

    def test_a_missing_package_names_the_drivers_import_line_and_suggests_another_python(self):
        os.makedirs(os.path.join(self.dir.name, "drivers"))
        self.write(os.path.join("drivers", "__init__.py"), "")
        pump = self.write(os.path.join("drivers", "pump.py"), '''
            """A pump on a serial port."""
            import labdeck_no_such_serial_package as serial

            class Pump:
                def dose(self, ml: float) -> float:
                    return ml
        ''')
        deck = self.write("deck.py", '''
            import os
            from drivers.pump import Pump
            pump = Pump()
        ''')
        reply, _ = self.host.request({"type": "load_deck", "file": deck})
        self.assertEqual(reply["type"], "error")
        err = reply["error"]
        self.assertEqual((err["kind"], err["type"]), ("load_error", "ModuleNotFoundError"))
        self.assertEqual((err["import_file"], err["import_line"]), (pump, 3))
        self.assertEqual(err["import_statement"], "import labdeck_no_such_serial_package as serial")
        self.assertIn("the import that failed: %s:3: import labdeck_no_such_serial_package as serial" % pump, err["message"])
        self.assertIn("(deck.py, line 3)", err["message"])  # the deck's line that led there
        self.assertIn("This Python (%s) has no module 'labdeck_no_such_serial_package': install the package there, "
                      "or start labdeck with --python PATH" % sys.executable, err["message"])

    def test_load_errors_name_file_and_line(self):
        bad = self.write("bad.py", '''
            x = 1
            raise RuntimeError("no serial port")
        ''')
        reply, _ = self.host.request({"type": "load_module", "file": bad})
        self.assertEqual(reply["type"], "error")
        self.assertEqual(reply["error"]["kind"], "load_error")
        self.assertEqual(reply["error"]["line"], 3)
        self.assertIn("RuntimeError: no serial port (bad.py, line 3)", reply["error"]["message"])
        exiting = self.write("exits.py", "import sys\nsys.exit(4)\n")
        reply, _ = self.host.request({"type": "load_deck", "file": exiting})
        self.assertEqual(reply["error"]["type"], "SystemExit")
        ping, _ = self.host.request({"type": "ping"})
        self.assertEqual(ping["value"], "pong")  # a deck that calls sys.exit does not end the host

    def test_console_is_a_repl_with_a_time_limit(self):
        reply, _ = self.host.request({"type": "console", "code": "a = 2\nprint('hi')\na * 21", "timeout_ms": 2000})
        self.assertEqual(reply["value"], {"success": True, "result": 42, "stdout": "hi\n", "error": None})
        reply, _ = self.host.request({"type": "console", "code": "a + 1", "timeout_ms": 2000})
        self.assertEqual(reply["value"]["result"], 3)  # the namespace persists between runs
        reply, _ = self.host.request({"type": "console", "code": "def f():\n    raise KeyError('k')\nf()", "timeout_ms": 2000})
        self.assertFalse(reply["value"]["success"])
        self.assertIn('File "<console>", line 2, in f', reply["value"]["error"])
        self.assertIn("KeyError: 'k'", reply["value"]["error"])
        t0 = time.monotonic()
        reply, _ = self.host.request({"type": "console", "code": "while True:\n    pass", "timeout_ms": 300})
        self.assertLess(time.monotonic() - t0, 2)
        self.assertIn("TimeoutError", reply["value"]["error"])
        ping, _ = self.host.request({"type": "ping"})
        self.assertEqual(ping["value"], "pong")

    def test_dispose_calls_close_and_shutdown_exits(self):
        reply, _ = self.host.request({"type": "load_module", "file": self.driver})
        cid = reply["value"]["classes"][0]["id"]
        self.host.request({"type": "connect", "class": cid, "name": "n", "kwargs": {}})
        reply, _ = self.host.request({"type": "dispose", "name": "n"})
        self.assertEqual(reply["value"], "close")
        gone, _ = self.host.request({"type": "call", "instrument": "n", "method": "talk", "args": {}})
        self.assertEqual(gone["error"]["kind"], "not_found")
        self.host.request({"type": "connect", "class": cid, "name": "m", "kwargs": {}})
        reply, _ = self.host.request({"type": "shutdown"})
        self.assertEqual(reply["value"], {"disposed": ["m"]})
        self.assertEqual(self.host.proc.wait(5), 0)

    def test_a_driver_exception_has_the_labs_traceback_not_the_hosts(self):
        failing = self.write("failing.py", '''
            class Pump:
                def jam(self):
                    try:
                        {}["valve"]
                    except KeyError as e:
                        raise RuntimeError("pump jammed") from e
        ''')
        reply, _ = self.host.request({"type": "load_module", "file": failing})
        self.host.request({"type": "connect", "class": reply["value"]["classes"][0]["id"], "name": "p", "kwargs": {}})
        reply, _ = self.host.request({"type": "call", "instrument": "p", "method": "jam", "args": {}})
        err = reply["error"]
        self.assertEqual((err["kind"], err["type"], err["message"]), ("exception", "RuntimeError", "pump jammed"))
        self.assertIn("failing.py", err["traceback"])
        self.assertIn("KeyError: 'valve'", err["traceback"])  # the chained cause is kept
        self.assertNotIn("labdeck_host", err["traceback"])

    def test_unknown_arguments_and_bad_types_are_refused_by_name(self):
        reply, _ = self.host.request({"type": "load_module", "file": self.driver})
        cid = reply["value"]["classes"][0]["id"]
        self.host.request({"type": "connect", "class": cid, "name": "n", "kwargs": {}})
        reply, _ = self.host.request({"type": "call", "instrument": "n", "method": "talk", "args": {"n": "two"}})
        self.assertEqual(reply["error"]["kind"], "invalid_args")
        self.assertEqual(reply["error"]["field"], "n")
        reply, _ = self.host.request({"type": "call", "instrument": "n", "method": "_private", "args": {}})
        self.assertEqual(reply["error"]["kind"], "not_found")


if __name__ == "__main__":
    unittest.main()
