"""Throughput of Monte Carlo campaigns (a benchmark, not a test): simulations per second of a campaign
spec (default: examples/campaigns/flexible_arm_slew.yaml, 1000 runs of 1 s simulated) on a local
pool of 1 and 2 processes and on a 2-worker Dask LocalCluster, against sd_simulate called in a C loop
(soadyn.campaign._run_cffi.sdc_baseline: the nominal model, the same integrator, step, duration
and joint forces, no observer). Two overheads are reported:
  - the machinery: the spec without metrics and histories (bare), 1 worker, against the C loop:
    what drawing, copying and setting the parameters, the task, the store and the bar cost per run;
  - the full spec's, 1 worker, against the C loop: that plus the metrics' own evaluations (each
    joint-force sample is a forward and an inverse dynamics) and the energies of the samples.

    PYTHONPATH=build/python /usr/bin/python3 python/bench_campaign.py [--runs 1000] [--spec FILE]
"""
import argparse
import copy
import os
import sys
import tempfile
import time

import numpy as np

# this file's folder holds the package's sources, not its build (PYTHONPATH=BUILD/python): off the path
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
import soadyn.campaign as campaign  # noqa: E402
from soadyn.campaign import engine  # noqa: E402
from soadyn.campaign._run_cffi import ffi, lib  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def c_loop(spec, runs):
    """Seconds for `runs` calls of sd_simulate in C on the nominal model."""
    c = engine.Campaign(spec)
    o = ffi.new("sd_sim_options *", c.options[0])
    tau = np.array(c.tau)
    o.tau = ffi.from_buffer("double[]", tau)
    q0, u0 = c.q_reference.copy(), np.zeros(c.nv)
    q, u = q0.copy(), u0.copy()
    err = ffi.new("sd_error *")
    t = time.perf_counter()
    st = lib.sdc_baseline(c.model, o, runs, ffi.from_buffer("double[]", q0), ffi.from_buffer("double[]", u0),
                          ffi.from_buffer("double[]", q), ffi.from_buffer("double[]", u), err)
    seconds = time.perf_counter() - t
    if st != lib.SD_OK:
        sys.exit(f"C loop: {ffi.string(err.message).decode()}")
    return seconds


def timed_campaign(spec, out, **kw):
    t = time.perf_counter()
    result = campaign.run(spec, output=out, fresh=True, progress=False, echo=False, **kw)
    seconds = time.perf_counter() - t
    failed = len(result.failed)
    return seconds, failed


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spec", default=os.path.join(ROOT, "examples", "campaigns", "flexible_arm_slew.yaml"))
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--no-cluster", action="store_true", help="skip the Dask LocalCluster")
    a = p.parse_args()
    spec = campaign.load(a.spec)
    spec["runs"] = a.runs
    spec["digest"] = campaign.spec.digest(spec)
    bare = copy.deepcopy(spec)
    bare["metrics"], bare["history_every"] = [], 0
    bare["simulation"]["sample_every"] = 10 ** 9  # the observer sees the start and the end only
    bare["digest"] = campaign.spec.digest(bare)
    sim = spec["simulation"]
    print(f"spec {os.path.relpath(a.spec, ROOT)}: {a.runs} runs of {sim['duration']} s, {sim['integrator']} "
          f"dt {sim['dt']}; {os.cpu_count()} processors")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = c_loop(spec, a.runs)
        rows.append(("C loop of sd_simulate, 1 process", base, 0))
        rows.append(("campaign, bare (no metrics), 1 worker",) + timed_campaign(bare, f"{tmp}/b1.zarr", workers=1))
        rows.append(("campaign, full spec, 1 worker",) + timed_campaign(spec, f"{tmp}/f1.zarr", workers=1))
        rows.append(("campaign, full spec, 2 workers",) + timed_campaign(spec, f"{tmp}/f2.zarr", workers=2))
        if not a.no_cluster:
            import distributed

            with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as client:
                client.run(lambda: None)  # workers up before the clock starts
                rows.append(("campaign, full spec, Dask LocalCluster 2 workers",)
                            + timed_campaign(spec, f"{tmp}/d2.zarr", client=client))
    print(f"{'':52s} {'seconds':>8s} {'runs/s':>8s} {'ms/run':>8s} {'failed':>6s}")
    for name, seconds, failed in rows:
        print(f"{name:52s} {seconds:8.2f} {a.runs / seconds:8.1f} {1e3 * seconds / a.runs:8.3f} {failed:6d}")
    bare_s, full_s = rows[1][1], rows[2][1]
    print(f"\noverhead per run against the C loop, 1 worker: machinery (bare spec) "
          f"{1e3 * (bare_s - base) / a.runs:.3f} ms = {100 * (bare_s - base) / base:.1f}%; "
          f"full spec {1e3 * (full_s - base) / a.runs:.3f} ms = {100 * (full_s - base) / base:.1f}%")


if __name__ == "__main__":
    main()
