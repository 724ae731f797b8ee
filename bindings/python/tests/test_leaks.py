"""Every handle is freed: 100k create/free cycles per kind of handle keep
the process's RSS flat. The bound is generous (allocator noise, Python's
own caches) yet a leak of one small C object per cycle (a slot vector is
well over 40 bytes with malloc's header) overshoots it, as
test_detector_sees_a_real_leak shows by leaking on purpose."""
import ctypes
import gc
import os
import unittest

import sokovan
from sokovan import (Client, JobTrace, Node, OpenbWorkload, Scheduler, Slots,
                     Topology, _lib)
from sokovan import client as client_mod

from skvtest import rss_bytes

CYCLES = int(os.environ.get("SKV_LEAK_CYCLES", "100000"))
BOUND = 3 << 20          # bytes of RSS growth allowed over all cycles


def growth(step, cycles=CYCLES):
    for _ in range(2000):           # warm caches and allocator pools
        step()
    gc.collect()
    before = rss_bytes()
    for _ in range(cycles):
        step()
    gc.collect()
    return rss_bytes() - before


class LeakTest(unittest.TestCase):
    def assertFlat(self, step):
        g = growth(step)
        self.assertLess(g, BOUND, f"RSS grew {g} bytes over {CYCLES} cycles "
                        f"({g / CYCLES:.1f} B/cycle)")

    def test_detector_sees_a_real_leak(self):
        # the same measurement over a loop that never frees its vector
        parse = _lib.lib.skv_slots_parse
        out = ctypes.c_void_p()

        def leak():
            parse(ctypes.byref(out), b"cpu=4,mem=16g,cuda.shares=0.5",
                  None, None)
        self.assertGreater(growth(leak), BOUND)

    def test_slots(self):
        def step():
            with Slots("cpu=4,mem=16g") as a, Slots({"cpu": 1}) as b:
                c = a - b
                str(c)
                c.close()
        self.assertFlat(step)

    def test_slots_garbage_collected(self):
        def step():
            (Slots("cpu=4,mem=16g") + Slots("cuda.shares=0.5"))["cpu"]
        self.assertFlat(step)

    def test_errors(self):
        def step():
            try:
                Slots("cpu=-1")
            except sokovan.errors.InvalidArgumentError:
                pass
        self.assertFlat(step)

    def test_topology(self):
        def step():
            with Topology.synthetic("pack:1 numa:2 core:2 pu:1") as t:
                t.numa_nodes()
        self.assertFlat(step)

    def test_placement(self):
        with Topology.synthetic("pack:1 numa:2 core:4 pu:1") as t, \
                Node(t, gpus="count=2,prefix=cuda") as node:
            def step():
                with node.alloc("cuda.device=1,cpu=1,mem=1m") as p:
                    p.amounts()
            self.assertFlat(step)

    def test_scheduler(self):
        dev = [{"whole_slot": "cuda.device"}]

        def step():
            with Scheduler() as s:
                s.add_group("g")
                s.add_agent("a", "g", "cpu=4", devices=dev)
                s.submit("x", "g", "cpu=1,cuda.device=1")
                s.submit("y", "g", "cpu=8")
                s.run_pass(0)
                s.reason("y")
        self.assertFlat(step)

    def test_simulator_inputs(self):
        nodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,65536,2,V100\n"
        pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\n"
        jobs = "submit_time,duration,num_gpus,user\n0,100,1,a\n"

        def step():
            with OpenbWorkload(nodes, pods, text=True) as w, \
                    JobTrace(jobs, text=True) as j:
                w.pods + len(j)
        self.assertFlat(step)

    def test_client_failed_connect_and_messages(self):
        def step():
            try:
                Client.connect("unix:/nonexistent/m.sock",
                               access_key="AKIAAAAAAAAAAAAAAAAA",
                               secret_key="x" * 40)
            except sokovan.errors.SystemCallError:
                pass
            keep = []
            m = client_mod.from_dict(client_mod.Submit, {
                "image": "busybox", "command": ["sh", "-c", "true"],
                "kernels": [{"role": "main", "slots": "cpu=1,mem=1g"}],
                "env": [{"key": "A", "value": "b"}]}, keep)
            client_mod.to_dict(m)
        self.assertFlat(step)


if __name__ == "__main__":
    unittest.main()
