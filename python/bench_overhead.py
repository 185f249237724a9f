#!/usr/bin/env python3
"""What a Python call of soadyn costs above the C call: the iiwa 14's forward dynamics (004 Alg 6.1).

    PYTHONPATH=BUILD/python /usr/bin/python3 python/bench_overhead.py [--model M] [--no-callgrind]

1. Instructions per call (valgrind's callgrind, which counts the same on a loaded machine): the
   script runs itself under callgrind twice, with N and 3N calls, so that start-up cancels in the
   difference; per call it reports the C work (the inclusive count of sd_forward_dynamics) and the
   whole call through
     A  soadyn.forward_dynamics(model, q, u, tau)   (the module function)
     B  model.forward_dynamics(q, u, tau, out=out)  (into a given array)
     C  lib.sd_forward_dynamics through cffi         (the bare C call, pointers made once)
   The package's overhead is A - (C work).
2. Batched states per second (wall clock over interleaved rounds, the best and the median round: on a
   shared machine the best is the one least disturbed): one call on S states
   through model.forward_dynamics(Q, U, T, threads=k) against the C batch API
   (sd_forward_dynamics_batch called directly, its arrays made once), k = 1 and 2; the SIMD kernel
   on (the default) and off.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
# this script sits beside the package's sources: import the built package (PYTHONPATH), not them
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != here]
import soadyn  # noqa: E402
from soadyn._soadyn_cffi import ffi, lib  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--model", default=os.path.join(here, "..", "models", "iiwa14.urdf"))
ap.add_argument("--calls", type=int, default=2000, help="N, calls of the shorter callgrind run")
ap.add_argument("--states", type=int, default=4096, help="S, states of a batched call")
ap.add_argument("--rounds", type=int, default=15)
ap.add_argument("--no-callgrind", action="store_true")
ap.add_argument("--inner", nargs=2, metavar=("CASE", "CALLS"), help=argparse.SUPPRESS)
args = ap.parse_args()

m = soadyn.load(args.model)
rng = np.random.default_rng(1)
q = m.random_configuration(3)
u = rng.uniform(-1, 1, m.nv)
tau = rng.uniform(-1, 1, m.nv)
out = np.empty(m.nv)


def run_case(case, n):
    fd = soadyn.forward_dynamics
    if case == "A":
        for _ in range(n):
            fd(m, q, u, tau)
    elif case == "B":
        mfd = m.forward_dynamics
        for _ in range(n):
            mfd(q, u, tau, out=out)
    else:
        pq, pu, pt, po = (ffi.from_buffer("double[]", a) for a in (q, u, tau, out))
        cfd, mm, dd, null = lib.sd_forward_dynamics, m._m, m._d, ffi.NULL
        for _ in range(n):
            cfd(mm, dd, pq, pu, pt, null, po)


if args.inner:
    run_case(args.inner[0], int(args.inner[1]))
    sys.exit(0)


def callgrind(case, n):
    """(total instructions, inclusive instructions of sd_forward_dynamics) of a run of n calls."""
    with tempfile.TemporaryDirectory() as tmp:
        outf = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={outf}", sys.executable,
                        os.path.abspath(__file__), "--model", args.model, "--inner", case, str(n)],
                       check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        txt = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", outf], check=True,
                             capture_output=True, text=True).stdout
    total = int(re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", txt).group(1).replace(",", ""))
    hit = re.search(r"^\s*([\d,]+) \([^)]*\)\s+\S*:sd_forward_dynamics\b", txt, re.M)
    return total, int(hit.group(1).replace(",", "")) if hit else 0


print(f"model {m.name}: nv {m.nv}; soadyn {soadyn.__file__}")
if not args.no_callgrind:
    n = args.calls
    res = {}
    for case in "ABC":
        t1, c1 = callgrind(case, n)
        t3, c3 = callgrind(case, 3 * n)
        res[case] = ((t3 - t1) / (2 * n), (c3 - c1) / (2 * n))
    work = res["C"][1]
    print(f"instructions per call (callgrind, {n} vs {3 * n} calls):")
    print(f"  C work, sd_forward_dynamics inclusive     {work:8.0f}")
    for case, label in (("A", "soadyn.forward_dynamics(model, q, u, tau)"), ("B", "model.forward_dynamics(out=)"),
                        ("C", "bare cffi call of sd_forward_dynamics")):
        print(f"  {label:41s} {res[case][0]:8.0f}  (+{res[case][0] - work:.0f} above the C work)")

S = args.states
Q = m.random_configuration(4, S)
U = rng.uniform(-1, 1, (S, m.nv))
T = rng.uniform(-1, 1, (S, m.nv))
QDD = np.empty((S, m.nv))
ptrs = [ffi.from_buffer("double[]", a) for a in (Q, U, T, QDD)]
contexts = {}
for k in (1, 2):
    for simd in (True, False):
        b = lib.sd_batch_new(m._m, k, ffi.NULL)
        lib.sd_batch_set_simd(b, lib.SD_BATCH_SIMD_AUTO if simd else lib.SD_BATCH_SIMD_OFF)
        contexts[k, simd] = b


def py_batch(k, simd):
    m.forward_dynamics(Q, U, T, threads=k, simd=simd, out=QDD)


def c_batch(k, simd):
    pq, pu, pt, po = ptrs
    assert lib.sd_forward_dynamics_batch(contexts[k, simd], S, pq, pu, pt, ffi.NULL, po, ffi.NULL) == 0


cases = [(who, k, simd) for k in (1, 2) for simd in (True, False) for who in ("python", "C")]
times = {c: [] for c in cases}
for r in range(args.rounds):
    for c in (cases if r % 2 == 0 else cases[::-1]):
        fn = py_batch if c[0] == "python" else c_batch
        t0 = time.perf_counter_ns()
        fn(c[1], c[2])
        times[c].append(time.perf_counter_ns() - t0)
lanes, note = m.simd_lanes()
print(f"batched forward dynamics, {S} states a call, million states/s, best (median) of {args.rounds} rounds; {note}:")
for k in (1, 2):
    for simd in (True, False):
        best = [S / min(times[w, k, simd]) * 1e3 for w in ("python", "C")]
        med = [S / statistics.median(times[w, k, simd]) * 1e3 for w in ("python", "C")]
        print(f"  threads {k}, SIMD {'on ' if simd else 'off'}: Python {best[0]:6.3f} ({med[0]:6.3f}), C batch API "
              f"{best[1]:6.3f} ({med[1]:6.3f}); Python / C {best[0] / best[1]:.3f}")
for b in contexts.values():
    lib.sd_batch_free(b)
