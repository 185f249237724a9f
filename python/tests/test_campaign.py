"""Monte Carlo campaigns (soadyn.campaign): the spec's refusals before any run (file:line and item);
runs reproducible one by one; a failing run recorded with the library's message while the others go
on; the same spec bit for bit on a local pool, on a 2-worker Dask LocalCluster (loopback), and on
that cluster again with one worker killed by its pid mid-campaign; and a campaign killed after about
half of its runs, started again, ending with exactly its N runs, equal to an uninterrupted one's,
the finished tasks not redone. Small campaigns of short runs, every wait bounded."""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import zarr

from conftest import CLI, MODELS
import soadyn.campaign as campaign
from soadyn.campaign import engine

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # campaign_helpers.py: the controllers the workers import by name
    sys.path.insert(0, HERE)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH", "")) if p)

ARM = os.path.join(MODELS, "flexible_arm.urdf")

# 16 runs of 0.2 s; the first mode's frequency scaled up to 150 times makes RK4 at 1 ms unstable for
# part of the runs (a state that leaves the finite numbers: those runs fail, the campaign goes on).
SPEC = f"""
model: {ARM}
runs: {{runs}}
seed: 7
task_size: {{task_size}}
simulation: {{{{integrator: rk4, dt: 0.001, duration: 0.2, sample_every: 5}}}}
inputs:
  tau: {{{{shoulder: 0.3}}}}
  controller: campaign_helpers:slow_zero
  gains: {{{{delay: {{delay}}}}}}
dispersions:
  body.link2.mass: {{{{how: scale, truncnormal: {{{{mean: 1, std: 0.05, low: 0.8, high: 1.2}}}}}}}}
  body.link2.com.x: {{{{how: offset, uniform: [-0.01, 0.01]}}}}
  flex.link1.frequency.1: {{{{how: scale, uniform: [1, 150]}}}}
  flex.link1.damping_ratio.2: {{{{uniform: [0.0, 0.05]}}}}
  joint.shoulder.damping: {{{{uniform: [0.0, 0.01]}}}}
  gravity.z: {{{{uniform: [-10, -9]}}}}
  q0.elbow: {{{{how: offset, normal: {{{{mean: 0, std: 0.05}}}}}}}}
  u0.shoulder: {{{{how: offset, uniform: [-0.1, 0.1]}}}}
outputs:
  history_every: 4
  metrics:
    tip: {{{{kind: max_node_deflection, body: link1, node: 10}}}}
    elbow_force: {{{{kind: max_joint_force, joint: elbow}}}}
    elbow_moment: {{{{kind: max_joint_moment, joint: elbow}}}}
    drift: {{{{kind: energy_drift}}}}
"""


def write_spec(tmp_path, runs=16, task_size=2, delay=0.0, name="spec.yaml"):
    path = tmp_path / name
    path.write_text(SPEC.format(runs=runs, task_size=task_size, delay=delay))
    return str(path)


def arrays(store):
    """Every per-run array of a store (what must agree bit for bit between two campaigns)."""
    g = zarr.open_group(store, mode="r")
    return {k: g[k][:] for k in ("status", "message", "params", "metrics", "q", "u", "history_t", "history_q",
                                 "history_u")}


def assert_same(a, b):
    for k in a:
        if a[k].dtype == object:
            assert list(a[k]) == list(b[k]), k
        else:
            assert np.array_equal(a[k], b[k], equal_nan=True), k


# ---------------------------------------------------------------- the spec's refusals


@pytest.mark.parametrize("change, line, expected", [
    ("  body.link2.mas: {how: scale, uniform: [0.9, 1.1]}\n", 12, "'body.link2.mas': unknown parameter"),
    ("  body.nobody.mass: {uniform: [1, 2]}\n", 12, "the model has no body 'nobody'"),
    ("  body.link2.mass: {how: scale, normal: {mean: 1, std: 0.1}}\n", 12,
     "gives values down to -inf, and a mass is >= 0"),
    ("  joint.elbow.damping: {uniform: [-0.1, 0.2]}\n", 12, "a damping is >= 0"),
    ("  flex.link1.frequency.3: {how: scale, uniform: [0.9, 1.1]}\n", 12, "mode '3': the body has modes 1 to 2"),
    ("  gravity.z: {uniform: [1, 1]}\n", 12, "uniform [1.0, 1.0] has no support"),
    ("  gravity.z: {truncnormal: {mean: 0, std: 1, low: 30, high: 40}}\n", 12, "no usable support"),
    ("  gravity.z: {normal: {mean: 0, std: 0}}\n", 12, "has no spread"),
    ("  q0.nojoint: {uniform: [0, 1]}\n", 12, "the model has no coordinate 'nojoint'"),
])
def test_bad_dispersions_refused_before_any_run(tmp_path, change, line, expected):
    key = change.split(":")[0]  # the entry replaces the spec's own of that name, if any
    lines = [ln for ln in SPEC.format(runs=4, task_size=2, delay=0.0).splitlines(True) if ln.split(":")[0] != key]
    text = "".join(lines).replace("dispersions:\n", "dispersions:\n" + change, 1)
    spec_path = tmp_path / "bad.yaml"
    spec_path.write_text(text)
    assert text.splitlines()[line - 1] == change.rstrip("\n")
    with pytest.raises(campaign.SpecError) as info:
        campaign.run(str(spec_path), workers=1, progress=False, echo=False)
    assert f"bad.yaml:{line}:" in str(info.value) and expected in str(info.value), str(info.value)
    assert not os.path.exists(tmp_path / "bad.zarr")  # refused before any run: no store


def test_bad_specs_name_file_and_line(tmp_path):
    cases = [
        (SPEC.replace(f"model: {ARM}", "model: missing.urdf"), 2, "model: no file"),
        (SPEC.replace("runs: {runs}", "runs: many"), 3, "runs: expected an integer"),
        (SPEC.replace("campaign_helpers:slow_zero", "campaign_helpers:no_such_law"), 9,
         "inputs: controller: campaign_helpers:no_such_law: module 'campaign_helpers' has no attribute"),
        (SPEC.replace("    tip: {{kind: max_node_deflection, body: link1, node: 10}}",
                      "    tip: {{kind: max_node_deflection, body: link1, node: 11}}"), 23,
         "node 11: body 'link1' has nodes 0 to 10"),
        (SPEC.replace("    drift: {{kind: energy_drift}}", "    drift: {{kind: drift}}"), 26, "kind 'drift' is not one of"),
        (SPEC.replace("  integrator: rk4", "  integrator: euler").replace("{{integrator: rk4,", "{{integrator: euler,"),
         6, "integrator: 'euler' is not one of"),
    ]
    for text, line, expected in cases:
        path = tmp_path / "bad.yaml"
        path.write_text(text.format(runs=4, task_size=2, delay=0.0))
        with pytest.raises(campaign.SpecError) as info:
            campaign.load(str(path)) if "model: no file" in expected else campaign.run(
                str(path), workers=1, progress=False, echo=False)
        assert f"bad.yaml:{line}:" in str(info.value) and expected in str(info.value), str(info.value)


def test_command_line(tmp_path):
    """`soadyn campaign` runs python3 -m soadyn.campaign: its help says so; a bad spec exits 2 with file:line."""
    if not os.access(CLI, os.X_OK):
        pytest.skip(f"no soadyn program at {CLI}")
    out = subprocess.run([CLI, "campaign", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "/usr/bin/python3 -m soadyn.campaign" in out.stdout and "--scheduler" in out.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.format(runs=0, task_size=2, delay=0.0))
    out = subprocess.run([CLI, "campaign", str(bad), "--no-progress"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "bad.yaml:3: runs: 0 must be > 0" in out.stderr, out.stderr


# ---------------------------------------------------------------- runs


def test_runs_reproducible_one_by_one_and_failures_recorded(tmp_path):
    spec_path = write_spec(tmp_path, runs=16, task_size=4)
    result = campaign.run(spec_path, workers=2, progress=False, echo=False)
    runs = result.runs
    assert len(runs) == 16
    failed = runs[runs["status"] == "failed"]
    assert 0 < len(failed) < 16  # the unstable runs fail, the campaign goes on
    # the library's message: a result or the state came out inf or NaN (RK4 unstable at that frequency)
    assert all("came out" in m or "not finite" in m for m in failed["message"]), list(failed["message"])
    assert runs.loc[runs["status"] == "ok", "tip"].notna().all()
    # run i's parameters and outputs depend on (seed, i) only: run alone, or in a campaign of 5 runs
    c = engine.Campaign(campaign.load(spec_path))
    stored = arrays(result.path)
    for i in (0, 5, 13):
        status, message, params, metrics, q, u, ht, hq, hu = c.run(i)
        assert status == stored["status"][i] and message == stored["message"][i]
        for mine, theirs in ((params, "params"), (metrics, "metrics"), (q, "q"), (u, "u"), (hq, "history_q")):
            assert np.array_equal(mine, stored[theirs][i], equal_nan=True), theirs
        # drawn from the stream of a new numpy Philox keyed (seed, i), in the order of the file
        rng = np.random.Generator(np.random.Philox(key=[7, i]))
        drawn = [p.value(campaign.spec.draw(rng, p.distribution, p.parameters)) for p in c.parameters]
        assert np.array_equal(stored["params"][i], drawn)
    small = write_spec(tmp_path, runs=5, task_size=5, name="small.yaml")
    first = arrays(campaign.run(small, workers=1, progress=False, echo=False).path)
    for k in first:
        assert list(first[k]) == list(stored[k][:5]) if first[k].dtype == object else \
            np.array_equal(first[k], stored[k][:5], equal_nan=True), k
    # the summary: each metric's percentiles, the failed runs with their messages
    assert set(result.table.index) == {"tip", "elbow_force", "elbow_moment", "drift"}
    assert "p99.865" in result.table.columns
    assert f"failed runs ({len(failed)}):" in result.summary and failed["message"].iloc[0] in result.summary


def test_unphysical_draw_fails_that_run_with_the_builder_message(tmp_path):
    text = SPEC.format(runs=8, task_size=4, delay=0.0).replace(
        "  body.link2.mass: {how: scale, truncnormal: {mean: 1, std: 0.05, low: 0.8, high: 1.2}}",
        "  body.link2.mass: {uniform: [0.0, 3.0e-14]}")  # below 1.5e-14 kg its inertia exceeds m (1e6 m)^2
    path = tmp_path / "unphysical.yaml"
    path.write_text(text)
    runs = campaign.run(str(path), workers=1, progress=False, echo=False).runs
    bad = runs[runs["message"].str.contains("rotational inertia entry", regex=False)]
    assert 0 < len(bad) < len(runs), list(runs["message"])
    assert all("body 'link2'" in m and "the bound of physical models" in m for m in bad["message"])
    assert (runs.loc[bad.index, "body.link2.mass"] < 1.5e-14).all()


def test_controller_gains_and_metrics_against_soadyn_simulate(tmp_path):
    """A dispersed gain of a Python controller, the energy drift and the closure residual, against
    soadyn.Model.simulate (the package's own sd_simulate call) with the same law and state."""
    import soadyn
    from campaign_helpers import pd_shoulder

    path = tmp_path / "pd.yaml"
    path.write_text(f"""
model: {ARM}
runs: 3
seed: 1
simulation: {{integrator: rk4, dt: 0.001, duration: 0.1}}
inputs:
  controller: campaign_helpers:pd_shoulder
  gains: {{kp: 5.0, kd: 1.0, target: 0.5}}
dispersions:
  gain.kp: {{uniform: [4.0, 6.0]}}
outputs:
  metrics:
    drift: {{kind: energy_drift}}
""")
    result = campaign.run(str(path), workers=1, progress=False, echo=False)
    g = zarr.open_group(result.path, mode="r")
    arm = soadyn.load(ARM)
    for i in range(3):
        kp = g["params"][i, 0]
        sim = arm.simulate(duration=0.1, dt=0.001, control=pd_shoulder({"kp": kp, "kd": 1.0, "target": 0.5}))
        assert np.array_equal(g["q"][i], sim.q[-1]) and np.array_equal(g["u"][i], sim.u[-1])
        energy = sim.kinetic + sim.potential
        assert g["metrics"][i, 0] == np.max(np.abs(energy - energy[0]))
    assert len(set(g["params"][:, 0])) == 3
    path.write_text(path.read_text().replace("outputs:\n", "outputs:\n  final_state: false\n"))
    with pytest.raises(campaign.SpecError, match="the store holds another campaign"):
        campaign.run(str(path), workers=1, progress=False, echo=False)  # the spec changed: not resumed
    g = zarr.open_group(campaign.run(str(path), workers=1, fresh=True, progress=False, echo=False).path, mode="r")
    assert "q" not in g and "u" not in g and g["metrics"].shape == (3, 1)

    loop = tmp_path / "loop.yaml"
    loop.write_text(f"""
model: {os.path.join(MODELS, "four_bar.urdf")}
runs: 2
seed: 3
simulation: {{integrator: rk4, dt: 0.002, duration: 0.1}}
dispersions:
  u0.crank_joint: {{uniform: [0.5, 1.5]}}
outputs:
  metrics:
    closure: {{kind: closure_residual}}
""")
    result = campaign.run(str(loop), workers=1, progress=False, echo=False)
    g = zarr.open_group(result.path, mode="r")
    bar = soadyn.load(os.path.join(MODELS, "four_bar.urdf"))
    for i in range(2):
        u0 = np.zeros(bar.nv)
        u0[0] = g["params"][i, 0]
        sim = bar.simulate(u0=u0, duration=0.1, dt=0.002)
        assert g["metrics"][i, 0] == sim.stats["max_position_residual"] and np.array_equal(g["q"][i], sim.q[-1])


# ---------------------------------------------------------------- local pool, Dask cluster, a worker killed


def run_in_thread(fn):
    out = {}

    def target():
        try:
            out["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test
            out["error"] = exc
    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t, out


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def done_runs(store):
    try:
        return int((zarr.open_group(store, mode="r")["status"][:] != 0).sum())
    except Exception:  # noqa: BLE001 - not created yet
        return 0


def test_local_pool_and_dask_cluster_agree_also_after_a_worker_is_killed(tmp_path):
    distributed = pytest.importorskip("distributed")
    spec_path = write_spec(tmp_path, runs=24, task_size=2, delay=0.1)
    pool = arrays(campaign.run(spec_path, output=str(tmp_path / "pool.zarr"), workers=2, progress=False,
                               echo=False).path)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, protocol="tcp") as cluster, \
            distributed.Client(cluster) as client:
        cluster_run = campaign.run(spec_path, client=client, output=str(tmp_path / "cluster.zarr"), progress=False,
                                   echo=False)
        assert_same(pool, arrays(cluster_run.path))
        # again, one worker killed by its pid once a few tasks are in
        pids = list(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        store = str(tmp_path / "killed.zarr")
        thread, out = run_in_thread(lambda: campaign.run(spec_path, client=client, output=store, progress=False,
                                                         echo=False))
        wait_for(lambda: done_runs(store) >= 4, 60, "the first tasks")
        assert done_runs(store) < 24, "the campaign ended before the worker could be killed"
        os.kill(pids[0], signal.SIGKILL)
        thread.join(120)
        assert not thread.is_alive(), "the campaign did not end after a worker was killed"
        if "error" in out:
            raise out["error"]
        assert pids[0] not in client.run(os.getpid).values()  # the killed worker is gone
        assert_same(pool, arrays(store))


def test_interrupted_campaign_resumes_without_losing_or_repeating_runs(tmp_path):
    spec_path = write_spec(tmp_path, runs=24, task_size=2, delay=0.1)
    whole = arrays(campaign.run(spec_path, output=str(tmp_path / "whole.zarr"), workers=2, progress=False,
                                echo=False).path)
    store = str(tmp_path / "resumed.zarr")
    cmd = [sys.executable, "-m", "soadyn.campaign", spec_path, "--output", store, "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: done_runs(store) >= 10, 60, "about half of the runs")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the campaign and its pool, at once
        proc.wait(30)
    interrupted = done_runs(store)
    assert 10 <= interrupted < 24, interrupted
    status_chunks = os.path.join(store, "status")
    before = {f: os.stat(os.path.join(status_chunks, f)).st_mtime_ns for f in os.listdir(status_chunks)
              if ".partial" not in f}
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert "runs: 24, ok" in rerun.stdout
    after = {f: os.stat(os.path.join(status_chunks, f)).st_mtime_ns for f in before}
    assert before == after  # the finished tasks were not run again
    assert_same(whole, arrays(store))
