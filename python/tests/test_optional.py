"""The probe of an optional module says why it does not import, in Python's own words (a skipped test names
the error, not "not installed")."""
import os
import sys
import tempfile
import unittest

from optional import optional


class OptionalTest(unittest.TestCase):
    def test_a_module_that_imports(self):
        module, why = optional("json")
        self.assertIsNone(why)
        self.assertEqual(module.__name__, "json")

    def test_a_missing_module_reports_the_import_error(self):
        module, why = optional("labdeck_no_such_module")
        self.assertIsNone(module)
        self.assertEqual(why, "labdeck_no_such_module does not import: ModuleNotFoundError: No module named 'labdeck_no_such_module'")

    def test_a_broken_install_reports_its_own_error(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "labdeck_broken_mod.py"), "w") as f:
                f.write("from labdeck_missing_dependency import core\n")
            with open(os.path.join(d, "labdeck_raising_mod.py"), "w") as f:
                f.write("raise RuntimeError('compiled for another numpy')\n")
            sys.path.insert(0, d)
            try:
                _, why = optional("labdeck_broken_mod")
                self.assertEqual(why, "labdeck_broken_mod does not import: ModuleNotFoundError: No module named 'labdeck_missing_dependency'")
                _, why = optional("labdeck_raising_mod")
                self.assertEqual(why, "labdeck_raising_mod does not import: RuntimeError: compiled for another numpy")
            finally:
                sys.path.remove(d)


if __name__ == "__main__":
    unittest.main()
