"""Throughput of Monte Carlo campaigns (a benchmark, not a test): simulations per second of a campaign
spec (default: examples/campaigns/flexible_arm_slew.yaml, 1000 runs of 1 s simulated) on a local
pool of 1 and 2 processes and on a 2-worker Dask LocalCluster, against sd_simulate called in a C loop
(soadyn.campaign._run_cffi.sdc_baseline: each run's model and initial state, with its drawn
parameters, prepared beforehand; the same integrator, step, duration and joint forces; no observer). Each is timed by the wall clock and by the processor time it took
(this process's and its children's, os.times: the pool's workers, the LocalCluster's nannies and
their workers, the scheduler's thread), which a machine shared with other work disturbs far less;
the overheads are of processor time. The C loop and the 1-worker campaigns are timed in turn,
--rounds times (so that the load of a shared machine falls on all alike), and summed. Reported:
  - the machinery: the spec without metrics and histories (bare), 1 worker, against the C loop:
    what drawing, copying and setting the parameters, the task, the store and the summary cost;
  - the full spec's, 1 worker, against the C loop: that plus the metrics' own evaluations (each
    joint-force sample is a forward and an inverse dynamics), and against the campaign's own C on
    the same prepared runs (sdc_simulate_task: sd_simulate with the observer that evaluates the
    metrics and keeps the histories), which leaves the machinery alone.

    PYTHONPATH=build/python /usr/bin/python3 python/bench_campaign.py [--runs 1000] [--rounds 3] [--spec FILE]
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


def cpu_seconds():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def c_loop(spec, runs):
    """(wall, processor) seconds for sd_simulate in a C loop on the campaign's own runs: each run's
    model (a copy with its drawn parameters set) and initial state prepared beforehand, untimed."""
    c = engine.Campaign(spec)
    o = ffi.new("sd_sim_options *", c.options[0])  # before any run: no observer in it
    tau = np.array(c.tau)
    o.tau = ffi.from_buffer("double[]", tau)
    q0, u0 = np.tile(c.q_reference, (runs, 1)), np.zeros((runs, c.nv))
    models = ffi.new("sd_model *[]", runs)
    for i in range(runs):
        models[i] = lib.sd_model_copy(c.model, ffi.NULL)
        c._apply(models[i], c.draw(i), q0[i], u0[i], dict(spec["gains"]))
    err = ffi.new("sd_error *")
    t, cpu = time.perf_counter(), cpu_seconds()
    st = lib.sdc_baseline(models, o, runs, ffi.from_buffer("double[]", q0), ffi.from_buffer("double[]", u0), err)
    wall, cpu = time.perf_counter() - t, cpu_seconds() - cpu
    for i in range(runs):
        lib.sd_model_free(models[i])
    if st != lib.SD_OK:
        sys.exit(f"C loop: {ffi.string(err.message).decode()}")
    return wall, cpu, 0


def c_observed(spec, runs):
    """(wall, processor) seconds of the campaign's own C on its runs (sdc_simulate_task, task by task:
    sd_simulate with the observer evaluating the metrics and keeping the histories), each task's runs
    prepared beforehand, untimed."""
    c = engine.Campaign(spec)
    wall = cpu = 0.0
    for start in range(0, runs, spec["task_size"]):
        task = c.prepare_task(start, min(runs, start + spec["task_size"]))
        try:
            t, t_cpu = time.perf_counter(), cpu_seconds()
            task.simulate()
            wall, cpu = wall + time.perf_counter() - t, cpu + cpu_seconds() - t_cpu
            failed = int((task.results()["status"] == engine.FAILED).sum())
        finally:
            task.release()
    return wall, cpu, failed


def timed_campaign(spec, out, **kw):
    t, cpu = time.perf_counter(), cpu_seconds()
    result = campaign.run(spec, output=out, fresh=True, progress=False, echo=False, **kw)
    return time.perf_counter() - t, cpu_seconds() - cpu, len(result.failed)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spec", default=os.path.join(ROOT, "examples", "campaigns", "flexible_arm_slew.yaml"))
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--no-cluster", action="store_true", help="skip the Dask LocalCluster")
    p.add_argument("--rounds", type=int, default=3, help="the C loops and 1-worker campaigns timed in turn, this often")
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
        # untimed: the first campaign imports pandas, zarr, matplotlib's neighbours; a real one pays it once
        timed_campaign(dict(bare, runs=2, digest="warm-up"), f"{tmp}/warm.zarr", workers=1)
        turns = [("C loop of sd_simulate, 1 process", lambda: c_loop(spec, a.runs)),
                 ("campaign, bare (no metrics), 1 worker", lambda: timed_campaign(bare, f"{tmp}/b1.zarr", workers=1)),
                 ("campaign, full spec, 1 worker", lambda: timed_campaign(spec, f"{tmp}/f1.zarr", workers=1)),
                 ("campaign's C (observer, metrics), 1 process", lambda: c_observed(spec, a.runs))]
        sums = [[name, 0.0, 0.0, 0] for name, _ in turns]
        for _ in range(a.rounds):
            for (name, timed), total in zip(turns, sums):
                wall, cpu, failed = timed()
                total[1] += wall / a.rounds
                total[2] += cpu / a.rounds
                total[3] = failed
        rows.extend(tuple(total) for total in sums)
        rows.append(("campaign, full spec, 2 workers",) + timed_campaign(spec, f"{tmp}/f2.zarr", workers=2))
        if not a.no_cluster:
            import distributed

            # the cluster's processes are this one's children only until it closes: timed across its life
            t, cpu = time.perf_counter(), cpu_seconds()
            with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as client:
                client.run(lambda: None)
                t_run = time.perf_counter()
                failed = len(campaign.run(spec, output=f"{tmp}/d2.zarr", client=client, fresh=True, progress=False,
                                          echo=False).failed)
                wall = time.perf_counter() - t_run
            rows.append(("campaign, full spec, Dask LocalCluster 2 workers", wall,
                         cpu_seconds() - cpu, failed))
            startup = time.perf_counter() - t - wall
    print(f"{'(1-worker rows and C loops: mean of the rounds)':50s} {'wall s':>7s} {'runs/s':>7s} {'cpu s':>7s} {'cpu ms/run':>10s} {'failed':>6s}")
    for name, wall, cpu, failed in rows:
        print(f"{name:50s} {wall:7.2f} {a.runs / wall:7.1f} {cpu:7.2f} {1e3 * cpu / a.runs:10.3f} {failed:6d}")
    base, bare, full, observed = rows[0][2], rows[1][2], rows[2][2], rows[3][2]
    print(f"\nprocessor time per run (mean of {a.rounds} rounds in turn), 1 worker, over the C loop's: machinery "
          f"(bare spec) {1e3 * (bare - base) / a.runs:+.3f} ms = {100 * (bare - base) / base:+.1f}%; "
          f"full spec {1e3 * (full - base) / a.runs:+.3f} ms = {100 * (full - base) / base:+.1f}%, of which the "
          f"metrics' and histories' C {1e3 * (observed - base) / a.runs:+.3f} ms and the machinery "
          f"{1e3 * (full - observed) / a.runs:+.3f} ms = {100 * (full - observed) / observed:+.1f}% over the "
          f"campaign's C")
    if not a.no_cluster:
        print(f"(the LocalCluster's start and stop, {startup:.1f} s of wall clock, are outside its wall time and "
              f"inside its processor time)")


if __name__ == "__main__":
    main()
