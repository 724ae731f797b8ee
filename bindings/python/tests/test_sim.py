import os
import unittest

from sokovan import JobTrace, OpenbWorkload, errors, sim_policies

from skvtest import DGX2, OPENB, PHILLY, need_file

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,65536,2,V100\nn1,32000,65536,2,V100\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
        "p0,1000,1024,1,500\np1,1000,1024,1,1000\np2,1000,1024,2,1000\n"
        "p3,1000,1024,1,250\n")
JOBS = ("submit_time,duration,num_gpus,user\n0,100,1,a\n10,50,2,b\n"
        "20,10,8,a\n30,10,1,b\n")


class SimulatorTest(unittest.TestCase):
    def test_policies(self):
        names = sim_policies()
        self.assertIn("frag", names)
        self.assertIn("fgd", names)

    def test_openb_inline(self):
        with OpenbWorkload(NODES, PODS, text=True) as w:
            self.assertEqual((w.nodes, w.pods), (2, 4))
            self.assertEqual(w.capacity_milli_gpu, 4000)
            r = w.run("bestfit", seed=1)
            self.assertEqual(r["events"], len(r["arrived"]))
            self.assertEqual(r["placed"] + r["dropped"], r["events"])
            self.assertTrue(all(a <= 4000 for a in r["allocated"]))
            self.assertIsInstance(r["columns"], dict)
            with self.assertRaises(errors.NotFoundError):
                w.run("no-such-policy")
        with self.assertRaises(errors.InvalidArgumentError) as ctx:
            OpenbWorkload(NODES, "name,cpu_milli\np0,abc\n", text=True)
        self.assertTrue(ctx.exception.message)

    def test_openb_trace_replay(self):
        nodes = os.path.join(OPENB, "openb_node_list_gpu_node.csv")
        pods = os.path.join(OPENB, "openb_pod_list_default.csv")
        need_file(pods)
        with OpenbWorkload(nodes, pods) as w:
            self.assertEqual(w.nodes, 1213)
            a = w.run("frag", seed=42)
            b = w.run("frag", seed=42)
            self.assertEqual(a, b, "deterministic for one seed")
            self.assertGreater(a["columns"][100], 80.0)

    def test_jobs(self):
        with JobTrace(JOBS, text=True) as j:
            self.assertEqual(len(j), 4)
            r = j.run(n_nodes=1, shape={"cpu": 32000, "mem": 64 << 30, "gpus": 4})
            self.assertEqual(r["n_jobs"], 4)
            self.assertEqual(r["n_rejected"], 1)       # 8 GPUs never fit
            self.assertEqual(r["n_completed"], 3)
            self.assertEqual({o["name"] for o in r["owners"]}, {"a", "b"})
            self.assertEqual(len(r["decisions_digest"]), 16)

    def test_philly_on_dgx2_nodes(self):
        need_file(PHILLY)
        need_file(DGX2)
        with JobTrace(PHILLY) as j:
            r = j.run(n_nodes=4, node_xml=DGX2, max_jobs=2000)
            self.assertEqual(r["n_jobs"], 2000)
            self.assertGreater(r["utilization"], 0)


if __name__ == "__main__":
    unittest.main()
