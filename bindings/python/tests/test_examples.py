"""examples/python/orchestrator.py: the embedded scheduler + node mapper."""
import os
import subprocess
import sys
import unittest

from skvtest import DGX2, SRC

SCRIPT = os.path.join(SRC, "examples", "python", "orchestrator.py")


class OrchestratorExampleTest(unittest.TestCase):
    def run_it(self, *args):
        r = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"orchestrator: 24 jobs on 3 machines")
        return r.stdout

    def test_synthetic_machines(self):
        out = self.run_it("--synthetic")
        self.assertIn("OMP_NUM_THREADS=", out)

    def test_dgx2_machines(self):
        if not os.path.exists(DGX2):
            raise unittest.SkipTest(f"SKIP: needs {DGX2}")
        out = self.run_it("--xml", DGX2)
        self.assertRegex(out, r"job\d+ +on m\d: gpus \d")


if __name__ == "__main__":
    unittest.main()
