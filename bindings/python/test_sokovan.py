"""Tests for the Python bindings; run by `make check` (check-bindings)."""
import sys
import unittest

import sokovan


class SlotsTest(unittest.TestCase):
    def test_version(self):
        self.assertRegex(sokovan.version(), r"^\d+\.\d+\.\d+$")

    def test_parse_format_roundtrip(self):
        s = sokovan.Slots("mem=16g, cpu=4,cuda.shares=0.5")
        self.assertEqual(str(s), "cpu=4,cuda.shares=0.5,mem=16g")
        self.assertEqual(s["cpu"], 4000)
        self.assertEqual(s["mem"], 16 << 30)
        self.assertEqual(s["missing"], 0)
        self.assertEqual(sokovan.Slots(str(s)), s)

    def test_arithmetic_and_fits(self):
        cap = sokovan.Slots("cpu=8,mem=32g")
        req = sokovan.Slots("cpu=2.5,mem=8g")
        self.assertTrue(req.fits(cap))
        rest = cap - req
        self.assertEqual(str(rest), "cpu=5.5,mem=24g")
        self.assertEqual(rest + req, cap)
        self.assertFalse(sokovan.Slots("cpu=9").fits(cap))

    def test_errors(self):
        for bad in ("cpu=-1", "cpu=0.0001", "cpu=1,cpu=2", "mem=12q", "=3"):
            with self.assertRaises(sokovan.SokovanError) as ctx:
                sokovan.Slots(bad)
            self.assertEqual(ctx.exception.name, "SKV_EINVAL")
            self.assertTrue(ctx.exception.message)
        with self.assertRaises(sokovan.SokovanError) as ctx:
            sokovan.Slots("cpu=1") - sokovan.Slots("cpu=2")
        self.assertEqual(ctx.exception.name, "SKV_ERANGE")


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=1).result
    sys.exit(0 if result.wasSuccessful() else 1)
