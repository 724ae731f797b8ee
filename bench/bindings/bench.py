#!/usr/bin/env python3
"""bench/bindings: what the Python binding costs over C, in one run.

    python3 bench/bindings/bench.py [--fits N] [--agents A] [--pending P]
        [--c-bench build/bench/bindings]

Runs the C program first (the same workload: see bench_bindings.c), then
the same from Python through `sokovan`:
  1. Slots.fits calls per second (one ctypes call each);
  2. building the scheduler (A agents of 8 GPUs, P pending sessions) and
     one pass over all of them: the pass is one C call (pass_s), and
     Scheduler.run_pass() adds the copy of its result into Python dicts
     (result_to_python_s).
Prints both sides and ends with one JSON line holding every figure and the
ratios. The library comes from SOKOVAN_LIB / pkg-config / the soname as for
any import; the C program links the static library of the same build.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import sokovan

MIX = ["cuda.shares=0.5,cpu=1,mem=4g", "cuda.shares=0.5,cpu=1,mem=4g",
       "cuda.shares=0.25,cpu=1,mem=2g", "cuda.shares=0.25,cpu=1,mem=2g",
       "cuda.device=1,cpu=4,mem=16g", "cuda.device=2,cpu=8,mem=32g",
       "cuda.device=1,cpu=4,mem=16g", "cuda.device=4,cpu=16,mem=64g",
       "cuda.device=8,cpu=32,mem=256g", "cpu=2,mem=8g"]


def fits_per_s(n):
    req, cap = sokovan.Slots("cpu=2,mem=8g"), sokovan.Slots("cpu=64,mem=512g")
    fits = req.fits
    t0 = time.perf_counter()
    ok = 0
    for _ in range(n):
        ok += fits(cap)
    dt = time.perf_counter() - t0
    assert ok == n
    return n / dt


def scheduler_pass(agents, pending):
    s = sokovan.Scheduler()
    s.add_group("g")
    devs = [{"id": str(d), "whole_slot": "cuda.device",
             "share_slot": "cuda.shares"} for d in range(8)]
    cap = sokovan.Slots("cpu=64,mem=512g")
    t0 = time.perf_counter()
    for i in range(agents):
        s.add_agent(f"a{i}", "g", cap, devices=devs)
    t_agents = time.perf_counter() - t0
    reqs = [sokovan.Slots(m) for m in MIX]
    t0 = time.perf_counter()
    for i in range(pending):
        s.submit(f"s{i}", "g", reqs[i % 10])
    t_submit = time.perf_counter() - t0
    # run_pass() split in its two halves: the C pass (one ctypes call) and
    # the copy of its result into Python dicts
    from sokovan import sched as m
    opts = m._PassOptions(2, None, 0, None, None, False)
    out = m.POINTER(m._Result)()
    t0 = time.perf_counter()
    m.call(m._pass, m.ctypes.byref(out), s.ptr, 1, m.ctypes.byref(opts))
    t_pass = time.perf_counter() - t0
    r = m._take_result(out)
    t_convert = time.perf_counter() - t0 - t_pass
    s.close()
    return {"agents_s": round(t_agents, 4), "submit_s": round(t_submit, 4),
            "pass_s": round(t_pass, 4), "result_to_python_s": round(t_convert, 4),
            "placed": len(r), "considered": r.considered}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fits", type=int, default=2000000)
    ap.add_argument("--agents", type=int, default=10000)
    ap.add_argument("--pending", type=int, default=100000)
    ap.add_argument("--c-bench", default=os.path.join(
        here, "..", "..", "build", "bench", "bindings"))
    a = ap.parse_args()
    c_out = subprocess.run([a.c_bench, str(a.fits), str(a.agents),
                            str(a.pending)], capture_output=True, text=True,
                           check=True).stdout.strip().splitlines()[-1]
    c = json.loads(c_out)
    print("C:     ", c_out)
    py = {"side": "python", "fits_per_s": round(fits_per_s(a.fits))}
    py.update(scheduler_pass(a.agents, a.pending))
    print("Python:", json.dumps(py))
    if (py["placed"], py["considered"]) != (c["placed"], c["considered"]):
        print("bench/bindings: Python and C made different decisions",
              file=sys.stderr)
        return 1
    print(json.dumps({
        "bench": "bindings", "library": sokovan.library_path(),
        "python": platform.python_version(), "c": c, "py": py,
        "fits_ratio_c_over_py": round(c["fits_per_s"] / py["fits_per_s"], 1),
        "pass_overhead_s": round(py["pass_s"] - c["pass_s"], 4),
        "run_pass_total_py_s": round(py["pass_s"] + py["result_to_python_s"], 4),
        "pass_ratio_py_over_c": round(py["pass_s"] / c["pass_s"], 3),
        "submit_ratio_py_over_c": round(py["submit_s"] / c["submit_s"], 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
