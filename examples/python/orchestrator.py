#!/usr/bin/env python3
"""A tiny orchestrator that embeds libsokovan: no daemons, its own list of
machines. The cluster scheduler decides which machine and which GPUs a job
gets; the node mapper of that machine turns the decision into exact cores,
NUMA memory and GPU environment; the loop "runs" each job for its duration
in simulated time and gives everything back.

    python3 examples/python/orchestrator.py [--xml TOPOLOGY.xml] [--machines 3]

Without --xml each machine is a synthetic 2-socket box with 8 mock GPUs.
"""
import argparse
import os
import random
import sys

import sokovan

DGX2 = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                    "data", "topologies", "nvidia-dgx2.xml")


class Machine:
    """One machine: its topology, node mapper, and what runs on it."""

    def __init__(self, name, xml):
        self.name = name
        if xml:
            self.topo = sokovan.Topology.from_xml(xml)
            self.node = sokovan.Node(self.topo, gpus="topology")
        else:
            self.topo = sokovan.Topology.synthetic("pack:2 numa:1 core:8 pu:2")
            self.node = sokovan.Node(self.topo, gpus="count=8,prefix=cuda")
        # the GPU plugin's device ids ("0", "1", ...) name the scheduler's
        # devices, so its choice maps straight back onto this node
        self.gpus = [d.id for p in self.node.plugins if p.name == "mock"
                     for d in p.devices()]
        self.running = {}          # job id -> Placement

    def capacity(self):
        cores = len(self.topo.cores())
        mem = self.topo.memory_bytes or (64 << 30)
        return sokovan.Slots({"cpu": cores, "mem": mem})

    def close(self):
        self.node.close()
        self.topo.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xml", default=DGX2 if os.path.exists(DGX2) else None)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--machines", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=24)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    xml = None if args.synthetic else args.xml
    rnd = random.Random(args.seed)
    machines = {f"m{i}": Machine(f"m{i}", xml) for i in range(args.machines)}
    sched = sokovan.Scheduler()
    sched.add_group("default", selector="concentrated", max_reservations=1)
    for name, m in machines.items():
        sched.add_agent(name, "default", m.capacity(), devices=[
            {"id": g, "whole_slot": "cuda.device"} for g in m.gpus])
    # job shapes scaled to the machine: cores and half the memory per GPU
    first = next(iter(machines.values()))
    ngpu, cap = len(first.gpus), first.capacity()
    cores_per_gpu = cap["cpu"].value / ngpu
    mem_per_gpu = (cap["mem"].value // ngpu // 2) >> 20 << 20
    jobs = {}
    for j in range(args.jobs):
        gpus = rnd.choice([1, 1, 2, 4, ngpu // 2])
        cpus = max(1, int(gpus * cores_per_gpu))
        jobs[f"job{j}"] = (f"cuda.device={gpus},cpu={cpus},mem={gpus * mem_per_gpu}",
                           rnd.randint(1, 5) * 1000)
        sched.submit(f"job{j}", "default", jobs[f"job{j}"][0], now_ms=0,
                     estimated_duration_ms=jobs[f"job{j}"][1])
    now, ends, done = 0, {}, 0
    while done < len(jobs):
        for p in sched.run_pass(now):
            jid, k = p["session_id"], p["kernels"][0]
            m = machines[k["agent_id"]]
            fixed = [(m.gpus[d["device"]], d["slot"], d["amount"])
                     for d in k["devices"]]
            pl = m.node.alloc(jobs[jid][0], fixed=fixed)
            env = pl.container_config()["env"]
            print(f"t={now / 1000:4.0f}s {jid:<6} on {m.name}: gpus "
                  f"{','.join(pl.devices('cuda.device')):<16} cpus {pl.cpuset:<14} "
                  f"mems {pl.mems:<4} OMP_NUM_THREADS={env.get('OMP_NUM_THREADS')}")
            m.running[jid] = pl
            sched.mark_started(jid, now)
            ends[jid] = now + jobs[jid][1]
        if not ends:
            waiting = [j for j in jobs if sched.state(j) == "pending"]
            print(f"stuck: {waiting[0]}: {sched.reason(waiting[0]).text}")
            return 1
        now = min(ends.values())
        for jid in [j for j, t in ends.items() if t == now]:
            del ends[jid]
            m = machines[sched.placement(jid)["kernels"][0]["agent_id"]]
            m.running.pop(jid).close()          # release cores, memory, GPUs
            sched.mark_finished(jid, now)
            done += 1
    sched.check()
    sched.close()
    for m in machines.values():
        with m.node.alloc(f"cuda.device={len(m.gpus)}", placement_only=True):
            pass                                # every GPU is free again
        m.close()
    print(f"orchestrator: {done} jobs on {len(machines)} machines, "
          f"makespan {now / 1000:.0f}s (simulated)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
