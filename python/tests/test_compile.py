"""soadyn.load(path, compile=True) and Model.compile (soadyn/compile.h), and the command line's
--compiled: the compiled code against the library at random states, the cache, the messages.

Compiled at -O0 into a private cache (SOADYN_CACHE_DIR), with the compiler in $CC (else cc)."""
import json
import os
import subprocess
import warnings

import numpy as np
import pytest

import soadyn
from conftest import CLI, MODELS


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SOADYN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def within(name, a, b, M, Minv):
    """a against the library's b: 1e-13 relative to max(1, b's largest entry); for the solves (FD,
    M^-1), whose factorisations differ, max(1e-13, 16 eps cond1(M)) (as tests/codegen)."""
    bound = 1e-13
    if name in ("forward_dynamics", "mass_matrix_inverse"):
        cond = np.linalg.norm(M, 1) * np.linalg.norm(Minv, 1)
        bound = max(bound, 16 * np.finfo(float).eps * cond)
    err = np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(1.0, np.max(np.abs(b)))
    assert err <= bound, f"{name}: {err:.3g} > {bound:.3g}"


def compiled_iiwa():
    m = soadyn.load(os.path.join(MODELS, "iiwa14.urdf"))
    m.compile(flags="-O0 -std=c99")
    return m


def test_compiled_equals_library(rng):
    lib = soadyn.load(os.path.join(MODELS, "iiwa14.urdf"))
    m = compiled_iiwa()
    assert m.compiled and not lib.compiled
    info = m.compile_info
    assert not info["cache_hit"] and info["self_check_error"] <= 1e-12 and os.path.exists(info["path"])
    for _ in range(50):
        q = rng.uniform(-2, 2, m.nq)
        u, x = rng.uniform(-1, 1, m.nv), rng.uniform(-1, 1, m.nv)
        for name, args in (("forward_dynamics", (q, u, x)), ("inverse_dynamics", (q, u, x)),
                           ("bias_forces", (q, u)), ("mass_matrix", (q,)), ("mass_matrix_inverse", (q,))):
            within(name, getattr(m, name)(*args), getattr(lib, name)(*args), lib.mass_matrix(q),
                   lib.mass_matrix_inverse(q))


def test_load_compile_true_and_cache():
    first = soadyn.load(os.path.join(MODELS, "iiwa14.urdf"), compile=True)
    assert first.compiled and not first.compile_info["cache_hit"]
    second = soadyn.load(os.path.join(MODELS, "iiwa14.urdf"), compile=True)
    assert second.compiled and second.compile_info["cache_hit"]
    assert second.compile_info["key"] == first.compile_info["key"]
    second.set_gravity([0, 0, -1.62])  # the code folded gravity in: switched off
    assert not second.compiled
    assert second.compile()["key"] != first.compile_info["key"]
    second.uncompile()
    assert not second.compiled


def test_no_compiler_warns_and_runs(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.warns(soadyn.CompileWarning, match="/nonexistent/cc"):
        m = soadyn.load(os.path.join(MODELS, "iiwa14.urdf"), compile=True)
    assert not m.compiled
    assert np.all(np.isfinite(m.forward_dynamics(np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv))))
    with pytest.raises(soadyn.NotSupportedError, match="/nonexistent/cc"):
        m.compile()


def test_closed_loop_model_refused():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = soadyn.load(os.path.join(MODELS, "four_bar.urdf"), compile=True)
    assert not m.compiled
    assert any(issubclass(w.category, soadyn.CompileWarning) and "closure" in str(w.message) for w in caught)


def cli(*args, env=None):
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env)


def test_cli_compiled(cache):
    path = os.path.join(MODELS, "iiwa14.urdf")
    env = dict(os.environ)
    plain = cli("eval", path, "--json", env=env)
    first = cli("eval", path, "--json", "--compiled", env=env)
    assert first.returncode == 0 and "compiled now: cache miss" in first.stderr, first.stderr
    again = cli("eval", path, "--compiled", env=env)
    assert again.returncode == 0 and "evaluated by: compiled code, from the cache" in again.stdout
    a, b = json.loads(plain.stdout), json.loads(first.stdout)
    rows = lambda d, key: np.array([d[key][label] for label in a["speeds"]], dtype=float)  # noqa: E731
    M, Minv = rows(a, "mass_matrix"), rows(a, "mass_matrix_inverse")
    for key in ("mass_matrix", "bias_forces", "tau_inverse_dynamics", "mass_matrix_inverse"):
        within("mass_matrix_inverse" if key == "mass_matrix_inverse" else key, rows(b, key), rows(a, key), M, Minv)
    sim = cli("simulate", path, "--duration", "0.01", "--compiled", "--output", str(cache.parent / "s.csv"), env=env)
    assert sim.returncode == 0 and "dynamics         compiled code, from the cache" in sim.stdout, sim.stdout
    bench = cli("bench", path, "--repeats", "1", "--compiled", env=env)
    assert bench.returncode == 0 and "run by compiled code" in bench.stdout
    env["CC"] = "/nonexistent/cc"
    nocc = cli("eval", os.path.join(MODELS, "double_pendulum.urdf"), "--compiled", env=env)
    assert nocc.returncode == 0 and "warning: --compiled" in nocc.stderr and "/nonexistent/cc" in nocc.stderr
    assert "evaluated by: the library" in nocc.stdout
