"""No leak over 10^5 calls: the resident set size (/proc/self/statm) after 10^5 forward-dynamics
calls (and as many inverse dynamics into out=, 10^4 mass matrices, batched calls, errors) stays
within 1 MiB of what it was after a warm-up. A leak of even one 8-byte allocation per call would
show as 0.8 MB or more."""
import os

import numpy as np
import pytest

import soadyn
from conftest import MODELS


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc/self/statm")
def test_rss_stable():
    m = soadyn.load(os.path.join(MODELS, "iiwa14.urdf"))
    q, u, tau = m.random_configuration(5), np.full(7, 0.1), np.zeros(7)
    bad = q.copy()
    bad[0] = np.nan
    Q = np.tile(q, (10, 1))

    out = np.empty(7)

    def work(n):
        for _ in range(n):
            m.forward_dynamics(q, u, tau)
            m.inverse_dynamics(q, u, tau, out=out)  # the fast path (soadyn._fast) both ways
        for _ in range(n // 10):
            m.mass_matrix(q)
            m.forward_dynamics(Q, u, tau)
            m.interbody_forces(q, u, tau)
            try:
                m.forward_dynamics(bad, u, tau)
            except soadyn.ArgumentError:
                pass

    work(20000)
    before = rss()
    work(100000)
    after = rss()
    print(f"RSS before {before / 1e6:.2f} MB, after 1e5 calls {after / 1e6:.2f} MB")
    assert after - before < 1 << 20
