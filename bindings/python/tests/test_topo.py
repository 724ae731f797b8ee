import unittest

from sokovan import Node, Plugin, Slots, Topology, errors

from skvtest import DGX2, need_file


class TopologyTest(unittest.TestCase):
    def test_synthetic(self):
        with Topology.synthetic("pack:2 numa:1 core:4 pu:2") as t:
            self.assertEqual(t.pu_count, 16)
            self.assertEqual(len(t.cores()), 8)
            self.assertEqual([n.id for n in t.numa_nodes()], [0, 1])
            self.assertEqual(t.cpuset, "0-15")
            self.assertEqual(t.accelerators(), [])
        with self.assertRaises(errors.InvalidArgumentError):
            Topology.synthetic("bogus:what")

    def test_dgx2_accelerators(self):
        need_file(DGX2)
        with Topology.from_xml(DGX2) as t:
            gpus = [a for a in t.accelerators() if a.compute]
            self.assertEqual(len(gpus), 16)
            self.assertTrue(all(a.prefix == "cuda" for a in gpus))
            self.assertIn("V100", gpus[0].model)
            self.assertEqual(t.link(0, 0), "self")
            self.assertIn(t.link(0, 1), ("pix", "pxb", "phb", "node", "sys"))
            self.assertGreater(t.nvlink_bandwidth(0, 1), 0)
            self.assertTrue(t.source.startswith("xml:"))


class NodeMapperTest(unittest.TestCase):
    def test_dgx2_allocation(self):
        need_file(DGX2)
        with Topology.from_xml(DGX2) as t, Node(t, gpus="topology") as node:
            with node.alloc("cuda.device=2,cpu=2,mem=32g") as p:
                gpus = p.devices("cuda.device")
                self.assertEqual(len(gpus), 2)
                self.assertTrue(p.cpuset)
                self.assertTrue(p.mems)
                numa = {a.numa_node for a in p if a.slot == "cuda.device"}
                self.assertEqual(len(numa), 1, "two close GPUs on one node")
                mem = [a for a in p if a.plugin == "mem"]
                self.assertEqual(sum(a.qty for a in mem), 32 << 30)
                env = p.container_config()["env"]
                self.assertIn("CUDA_VISIBLE_DEVICES", env)
            # released: all 16 GPUs are free again
            with node.alloc("cuda.device=16") as p:
                self.assertEqual(len(p.devices("cuda.device")), 16)

    def test_errors_and_ownership(self):
        with Topology.synthetic("pack:1 numa:1 core:2 pu:1") as t:
            node = Node(t)
            with self.assertRaises(errors.InvalidArgumentError):
                node.alloc("cuda.device=1")      # no such slot on this node
            with self.assertRaises(errors.RangeError):
                node.alloc("cpu=3")              # never fits
            p = node.alloc("cpu=2", placement_only=True)
            with self.assertRaises(errors.NoSpaceError):
                node.alloc("cpu=1")              # not now
            self.assertEqual(p.container_config(), {})
            with self.assertRaises(ValueError):
                node.alloc("cpu=1", policy="nearest")
            # the node borrows the topology; the placement the node
            with self.assertRaises(errors.BusyError):
                t.close()
            with self.assertRaises(errors.BusyError):
                node.close()
            p.release()
            with self.assertRaises(errors.StateError):
                p.release()
            p.close()
            node.close()
            with self.assertRaises(ValueError):
                node.alloc("cpu=1")

    def test_dropped_placement_gives_resources_back(self):
        with Topology.synthetic("pack:1 numa:1 core:2 pu:1") as t, Node(t) as node:
            node.alloc("cpu=2")            # dropped at once
            with node.alloc("cpu=2") as p:
                self.assertEqual(p.cpuset, "0-1")

    def test_explicit_plugins(self):
        with Topology.synthetic("pack:1 numa:2 core:2 pu:1") as t:
            cpu, mem = Plugin("cpu", t), Plugin("mem", t)
            gpu = Plugin("mock", t, "count=2,prefix=cuda")
            with Node(t, plugins=[cpu, mem, gpu]) as node:
                self.assertEqual([p.name for p in node.plugins],
                                 ["cpu", "mem", "mock"])
                devs = gpu.devices()
                self.assertEqual([d.id for d in devs], ["0", "1"])
                self.assertEqual(devs[0].capacity["cuda.device"], 1000)
                self.assertEqual(len(cpu.devices()), 4)   # one per core
                req = node.request("cuda.device=1,cpu=1")
                self.assertIsInstance(req, Slots)
                with node.alloc(req, policy="interleaved") as p:
                    self.assertEqual(len(p.devices("cuda.device")), 1)
            for p in (gpu, mem, cpu):
                p.close()


if __name__ == "__main__":
    unittest.main()
