import os
import subprocess
import sys
import unittest

import sokovan
from sokovan import errors


class ErrorMappingTest(unittest.TestCase):
    def test_one_class_per_code(self):
        names = set()
        for code in range(-1, -18, -1):
            cls = errors.BY_CODE[code]
            self.assertTrue(issubclass(cls, sokovan.SokovanError))
            self.assertEqual(cls.code, code)
            names.add(cls.__name__)
            # the library's own name for the code maps to the same class
            name = sokovan._lib._err_name(code).decode()
            self.assertIs(errors.BY_NAME[name], cls)
            self.assertEqual(getattr(errors, name[4:]), code)
        self.assertEqual(len(names), 17)

    def test_library_errors_map_to_classes(self):
        with self.assertRaises(errors.NotFoundError) as ctx:
            sokovan.Topology.from_xml("/nonexistent/topo.xml")
        self.assertEqual(ctx.exception.name, "SKV_ENOENT")
        self.assertIn("/nonexistent/topo.xml", ctx.exception.message)
        self.assertIsInstance(ctx.exception, LookupError)
        with sokovan.Scheduler() as s:
            s.add_group("g")
            with self.assertRaises(errors.ExistsError):
                s.add_group("g")
            with self.assertRaises(errors.NotFoundError):
                s.add_group("h", selector="no-such-selector")
            with self.assertRaises(errors.NotFoundError):
                s.reason("nobody")
            s.add_agent("a", "g", "cpu=1")
            s.submit("x", "g", "cpu=1")
            s.run_pass(0)
            with self.assertRaises(errors.StateError) as ctx:
                s.reason("x")                 # scheduled, not pending
            self.assertEqual(ctx.exception.name, "SKV_ESTATE")

    def test_unknown_code_gives_base_class(self):
        e = errors.from_code(-99, "SKV_E?", "x")
        self.assertIs(type(e), sokovan.SokovanError)


class LoaderTest(unittest.TestCase):
    def run_import(self, env):
        full = dict(os.environ)
        full.update(env)
        return subprocess.run([sys.executable, "-c",
                               "import sokovan; print(sokovan.library_path())"],
                              env=full, capture_output=True, text=True,
                              cwd="/")

    def test_sokovan_lib_wins_and_bad_path_is_clear(self):
        r = self.run_import({"SOKOVAN_LIB": "/nonexistent/libsokovan.so.0"})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ImportError", r.stderr)
        self.assertIn("/nonexistent/libsokovan.so.0", r.stderr)
        r = self.run_import({"SOKOVAN_LIB": sokovan.library_path()})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), sokovan.library_path())

    def test_soname_through_the_loader(self):
        libdir = os.path.dirname(sokovan.library_path())
        r = self.run_import({"SOKOVAN_LIB": "", "PKG_CONFIG": "/bin/false",
                             "LD_LIBRARY_PATH": libdir})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "libsokovan.so.0")
        r = self.run_import({"SOKOVAN_LIB": "", "PKG_CONFIG": "/bin/false",
                             "LD_LIBRARY_PATH": "/nonexistent"})
        if r.returncode != 0:      # no system-wide install: a clear error
            self.assertIn("cannot load libsokovan", r.stderr)

    def test_pkg_config_is_used_without_sokovan_lib(self):
        if "PKG_CONFIG_PATH" not in os.environ:
            raise unittest.SkipTest("SKIP: no PKG_CONFIG_PATH naming an "
                                    "installed sokovan.pc")
        env = {k: v for k, v in os.environ.items() if k != "SOKOVAN_LIB"}
        r = subprocess.run([sys.executable, "-c",
                            "import sokovan; print(sokovan.library_path())"],
                           env=env, capture_output=True, text=True, cwd="/")
        self.assertEqual(r.returncode, 0, r.stderr)
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "sokovan"],
                                env=env, capture_output=True,
                                text=True).stdout.strip()
        self.assertEqual(r.stdout.strip(),
                         os.path.join(libdir, "libsokovan.so.0"))


if __name__ == "__main__":
    unittest.main()
