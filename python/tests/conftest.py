"""Where the tests find the program, the bundled models and the shared ones (set by ctest, see
python/CMakeLists.txt; defaults for a run by hand from the source tree with build-python)."""
import json
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.environ.get("SOADYN_MODELS", os.path.join(ROOT, "models"))
SHARED = os.environ.get("SOADYN_SHARED_MODELS", os.path.join(ROOT, "..", "shared", "models"))
CLI = os.environ.get("SOADYN_CLI", os.path.join(ROOT, "build", "cli", "soadyn"))


def soadyn_eval(path, q, u, tau, floating=False):
    """`soadyn eval --json` at (q, u, tau), values given as full-precision lists."""
    fmt = lambda a: ",".join(repr(float(x)) for x in a)  # noqa: E731
    cmd = [CLI, "eval", path, "--json"]
    if floating:
        cmd.append("--floating")
    if len(q):
        cmd += ["--q", fmt(q), "--u", fmt(u), "--tau", fmt(tau)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def by_label(d, labels):
    return np.array([d[k] for k in labels], dtype=float)


def rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b))))) if a.size else 0.0


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
