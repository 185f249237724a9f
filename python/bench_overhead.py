#!/usr/bin/env python3
"""What a Python call of soadyn costs above the C call: iiwa 14 forward dynamics (004 Alg 6.1).

    PYTHONPATH=BUILD/python /usr/bin/python3 python/bench_overhead.py [--cli BUILD/cli/soadyn] [--model M]

Measured in this process, interleaved in rounds (A B C D, then D C B A, ...) so that all four see
the same load of a shared machine, each figure the median over rounds of the mean ns per call of a
batch of calls:
  A  soadyn.forward_dynamics(model, q, u, tau)        the package's call (checks, output array)
  B  model.forward_dynamics(q, u, tau, out=out)       the same writing into a given array
  C  lib.sd_forward_dynamics(...) through cffi         the bare C call from Python (pointers made once)
  D  forward_dynamics on 1000 states in one call, per state: the C work with no per-call overhead
The overhead per call is A - D (and A - C: the package's own layer above cffi). With --cli, the
command's `soadyn bench` figure for the same algorithm is printed beside (another process, the
static library)."""
import argparse
import os
import re
import statistics
import subprocess
import time

import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
# this script sits beside the package's sources: import the built package (PYTHONPATH), not them
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != here]
import soadyn  # noqa: E402
from soadyn._soadyn_cffi import ffi, lib  # noqa: E402
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--model", default=os.path.join(here, "..", "models", "iiwa14.urdf"))
ap.add_argument("--cli", default=None, help="the soadyn program, for its bench figure")
ap.add_argument("--rounds", type=int, default=21)
ap.add_argument("--calls", type=int, default=5000)
args = ap.parse_args()

m = soadyn.load(args.model)
rng = np.random.default_rng(1)
q = m.random_configuration(3)
u = rng.uniform(-1, 1, m.nv)
tau = rng.uniform(-1, 1, m.nv)
out = np.empty(m.nv)
Q = m.random_configuration(4, 1000)
pq, pu, pt, po = (ffi.from_buffer("double[]", a) for a in (q, u, tau, out))
fd = soadyn.forward_dynamics
cfd = lib.sd_forward_dynamics
mm, dd = m._m, m._d
n = args.calls


def a():
    for _ in range(n):
        fd(m, q, u, tau)


def b():
    for _ in range(n):
        m.forward_dynamics(q, u, tau, out=out)


def c():
    for _ in range(n):
        cfd(mm, dd, pq, pu, pt, ffi.NULL, po)


def d():
    for _ in range(n // 1000 or 1):
        m.forward_dynamics(Q, u, tau)


cases = {"A": (a, n), "B": (b, n), "C": (c, n), "D": (d, 1000 * (n // 1000 or 1))}
times = {k: [] for k in cases}
order = list(cases)
for r in range(args.rounds):
    for k in (order if r % 2 == 0 else order[::-1]):
        fn, calls = cases[k]
        t0 = time.perf_counter_ns()
        fn()
        times[k].append((time.perf_counter_ns() - t0) / calls)
med = {k: statistics.median(v) for k, v in times.items()}
print(f"model {m.name}: nv {m.nv}; {args.rounds} rounds of {n} calls, median ns per call")
print(f"  A soadyn.forward_dynamics          {med['A']:9.1f}")
print(f"  B model.forward_dynamics(out=)     {med['B']:9.1f}")
print(f"  C bare cffi call of the C function {med['C']:9.1f}")
print(f"  D per state of a 1000-state batch  {med['D']:9.1f}")
print(f"overhead per call above the C work: A - D = {med['A'] - med['D']:.1f} ns "
      f"(B - D = {med['B'] - med['D']:.1f} ns); above the bare cffi call: A - C = {med['A'] - med['C']:.1f} ns")
if args.cli:
    txt = subprocess.run([args.cli, "bench", args.model], capture_output=True, text=True).stdout
    hit = re.search(r"forward dynamics \(articulated body\)\s+([0-9.]+)", txt)
    if hit:
        print(f"soadyn bench (the program, static library): forward dynamics {hit.group(1)} ns median")
