import unittest

import sokovan
from sokovan import Quantity, Slots, errors


class SlotsTest(unittest.TestCase):
    def test_version(self):
        self.assertRegex(sokovan.version(), r"^\d+\.\d+\.\d+$")

    def test_parse_format_roundtrip(self):
        s = Slots("mem=16g, cpu=4,cuda.shares=0.5")
        self.assertEqual(str(s), "cpu=4,cuda.shares=0.5,mem=16g")
        self.assertEqual(Slots(str(s)), s)
        self.assertEqual(list(s), ["cpu", "cuda.shares", "mem"])
        self.assertEqual(len(s), 3)
        self.assertEqual(s.to_dict(), {"cpu": "4", "cuda.shares": "0.5",
                                       "mem": "16g"})

    def test_quantities_have_units(self):
        s = Slots("cpu=2.5,mem=1536m")
        self.assertEqual(s["cpu"], Quantity(2500, "count"))
        self.assertEqual(s["cpu"].value, 2.5)
        self.assertEqual(str(s["cpu"]), "2.5")
        self.assertEqual(s["mem"].kind, "bytes")
        self.assertEqual(s["mem"].value, 1536 << 20)
        self.assertEqual(str(s["mem"]), "1536m")
        self.assertEqual(Quantity.parse("1.5T", "bytes").raw, 3 << 39)
        self.assertTrue(Quantity.parse("unlimited").unlimited)
        self.assertLess(Quantity.parse("1"), Quantity.parse("2"))
        with self.assertRaises(TypeError):
            Quantity.parse("1") < Quantity.parse("1g", "bytes")
        with self.assertRaises(TypeError):
            Quantity.parse("1") < 1

    def test_missing_slot_is_keyerror(self):
        s = Slots("cpu=1")
        with self.assertRaises(KeyError):
            s["missing"]
        self.assertIsNone(s.get("missing"))
        self.assertNotIn("missing", s)
        with self.assertRaises(KeyError):
            del s["missing"]

    def test_build_from_mapping_and_set(self):
        s = Slots({"cpu": 4, "mem": "16g", "cuda.shares": 0.25})
        self.assertEqual(str(s), "cpu=4,cuda.shares=0.25,mem=16g")
        s["cpu"] = "0.125"
        s["mem"] = 1024
        del s["cuda.shares"]
        self.assertEqual(str(s), "cpu=0.125,mem=1k")
        with self.assertRaises(ValueError):
            s["cpu"] = 0.0001            # finer than the quantum
        with self.assertRaises(TypeError):
            s["cpu"] = [1]

    def test_arithmetic_and_fits(self):
        cap = Slots("cpu=8,mem=32g")
        req = Slots("cpu=2.5,mem=8g")
        self.assertTrue(req.fits(cap))
        self.assertTrue(req <= cap)
        self.assertTrue(cap >= req)
        rest = cap - req
        self.assertEqual(str(rest), "cpu=5.5,mem=24g")
        self.assertEqual(rest + req, cap)
        self.assertEqual(str(req * 2), "cpu=5,mem=16g")
        self.assertFalse(Slots("cpu=9").fits(cap))
        self.assertEqual(Slots("cpu=9").first_short(cap)[0], "cpu")
        self.assertEqual(str(Slots("cpu=9").first_short(cap)[1]), "1")
        self.assertIsNone(req.first_short(cap))
        share, slot = req.dominant_share(cap)
        self.assertAlmostEqual(share, 2.5 / 8)
        self.assertEqual(slot, "cpu")
        self.assertEqual(str(Slots("cpu=1").sub_clamped(Slots("cpu=2"))), "cpu=0")
        self.assertFalse(Slots(""))
        self.assertTrue(Slots("cpu=1"))

    def test_wrong_operand_types(self):
        s = Slots("cpu=1")
        for bad in (1, "cpu=1", None, 1.5):
            with self.assertRaises(TypeError):
                s + bad
            with self.assertRaises(TypeError):
                s - bad
        with self.assertRaises(TypeError):
            s.fits("cpu=2")
        with self.assertRaises(TypeError):
            s * 1.5
        with self.assertRaises(TypeError):
            Slots(42)
        self.assertNotEqual(s, "cpu=1")

    def test_errors_carry_code_name_and_message(self):
        for bad in ("cpu=-1", "cpu=0.0001", "cpu=1,cpu=2", "mem=12q", "=3"):
            with self.assertRaises(errors.InvalidArgumentError) as ctx:
                Slots(bad)
            e = ctx.exception
            self.assertIsInstance(e, sokovan.SokovanError)
            self.assertIsInstance(e, ValueError)
            self.assertEqual(e.name, "SKV_EINVAL")
            self.assertEqual(e.code, -1)
            self.assertTrue(e.message)
            self.assertIn("SKV_EINVAL", str(e))
        with self.assertRaises(errors.RangeError) as ctx:
            Slots("cpu=1") - Slots("cpu=2")
        self.assertEqual(ctx.exception.name, "SKV_ERANGE")
        self.assertIn("cpu", ctx.exception.message)

    def test_context_manager_and_close(self):
        with Slots("cpu=1") as s:
            self.assertEqual(str(s), "cpu=1")
        self.assertTrue(s.closed)
        with self.assertRaises(ValueError):
            str(s)
        s.close()   # idempotent


if __name__ == "__main__":
    unittest.main()
