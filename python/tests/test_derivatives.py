"""Model.forward_dynamics_derivatives and Model.inverse_dynamics_derivatives (soadyn/derivatives.h)
against 4th-order central differences of the dynamics on the tangent space (q moved by
model.integrate along e_j), against each other (d qdd/dx = -M^-1 d tau/dx at qdd = FD(tau)) and
against their batched form, on rigid trees and on the bundled flexible models (the flexible arm: a
child on the beam's tip node; the spacecraft: a free bus, three flexible appendages); their
refusals; and the Jacobian choice of Model.simulate."""
import os

import numpy as np
import pytest

import soadyn
from conftest import MODELS


def load(name, **kw):
    return soadyn.load(os.path.join(MODELS, name), **kw)


def state(m, rng):
    q = m.random_configuration(seed=int(rng.integers(1, 2**31)))
    return q, rng.normal(size=m.nv), rng.normal(size=m.nv) * 5.0


def central4(f, x0, n, move):
    """Columns d f(move(x0, eps e_j)) / d eps at 0 by the 4th-order central difference (the step: the
    stiffened modes of the flexible arm make qdd steep in eta, at 1e-3 the truncation was 2.6e-7)."""
    h = 5e-4
    cols = []
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        fs = [f(move(x0, e, s * h)) for s in (2, 1, -1, -2)]
        cols.append((-fs[0] + 8 * fs[1] - 8 * fs[2] + fs[3]) / (12 * h))
    return np.stack(cols, axis=1)


def rel_cols(a, b):
    """Largest relative difference per column (scaled by the column's size, at least 1)."""
    scale = np.maximum(1.0, np.max(np.abs(b), axis=0))
    return float(np.max(np.max(np.abs(a - b), axis=0) / scale))


@pytest.fixture(params=["iiwa14.urdf", "quadruped.urdf", "double_pendulum.urdf", "flexible_arm.urdf",
                        "spacecraft.urdf"])
def model(request):
    return load(request.param)


def test_forward_derivatives_match_differences(model, rng):
    m = model
    q, u, tau = state(m, rng)
    f_ext = rng.normal(size=(m.nbodies, 6))
    d = m.forward_dynamics_derivatives(q, u, tau, f_ext)
    fd = lambda q, u, tau: m.forward_dynamics(q, u, tau, f_ext)  # noqa: E731
    assert np.array_equal(d.qdd, fd(q, u, tau))
    dq = central4(lambda x: fd(x, u, tau), q, m.nv, lambda x, e, s: m.integrate(x, e, s))
    du = central4(lambda x: fd(q, x, tau), u, m.nv, lambda x, e, s: x + s * e)
    dt = central4(lambda x: fd(q, u, x), tau, m.nv, lambda x, e, s: x + s * e)
    assert rel_cols(d.dqdd_dq, dq) < 1e-7
    assert rel_cols(d.dqdd_du, du) < 1e-7
    assert rel_cols(d.dqdd_dtau, dt) < 1e-7


def test_inverse_derivatives_match_differences(model, rng):
    m = model
    q, u, qdd = state(m, rng)
    d = m.inverse_dynamics_derivatives(q, u, qdd)
    assert np.array_equal(d.tau, m.inverse_dynamics(q, u, qdd))
    dq = central4(lambda x: m.inverse_dynamics(x, u, qdd), q, m.nv, lambda x, e, s: m.integrate(x, e, s))
    du = central4(lambda x: m.inverse_dynamics(q, x, qdd), u, m.nv, lambda x, e, s: x + s * e)
    assert rel_cols(d.dtau_dq, dq) < 1e-7
    assert rel_cols(d.dtau_du, du) < 1e-7


def test_identities(model, rng):
    """d qdd/dx = -M^-1 d tau/dx at qdd = FD(tau), x = q, u; d qdd/d tau = M^-1."""
    m = model
    q, u, tau = state(m, rng)
    f = m.forward_dynamics_derivatives(q, u, tau)
    i = m.inverse_dynamics_derivatives(q, u, f.qdd)
    Minv = m.mass_matrix_inverse(q)
    for a, b in ((f.dqdd_dq, -Minv @ i.dtau_dq), (f.dqdd_du, -Minv @ i.dtau_du), (f.dqdd_dtau, Minv)):
        assert np.max(np.abs(a - b)) <= 1e-10 * max(1.0, np.max(np.abs(b)))


def test_batch_equals_single_calls(model, rng):
    m = model
    states = [state(m, rng) for _ in range(5)]
    Q, U, T = (np.stack([s[k] for s in states]) for k in range(3))
    fb = m.forward_dynamics_derivatives(Q, U, T, threads=2)
    ib = m.inverse_dynamics_derivatives(Q, U, fb.qdd)
    assert fb.dqdd_dq.shape == (5, m.nv, m.nv) and ib.dtau_du.shape == (5, m.nv, m.nv)
    for k in range(5):
        f = m.forward_dynamics_derivatives(Q[k], U[k], T[k])
        i = m.inverse_dynamics_derivatives(Q[k], U[k], fb.qdd[k])
        for a, b in zip(f, fb):
            assert np.array_equal(a, b[k])
        for a, b in zip(i, ib):
            assert np.array_equal(a, b[k])
    # a broadcast input (one tau for every state) is the same as the stacked one
    fb1 = m.forward_dynamics_derivatives(Q, U, T[0])
    assert np.array_equal(fb1.dqdd_du[3], m.forward_dynamics_derivatives(Q[3], U[3], T[0]).dqdd_du)


def test_refusals(rng):
    m = load("iiwa14.urdf")
    q, u, tau = state(m, rng)
    bad = q.copy()
    bad[2] = np.nan
    with pytest.raises(soadyn.ArgumentError):
        m.forward_dynamics_derivatives(bad, u, tau)
    with pytest.raises(soadyn.ArgumentError):
        m.inverse_dynamics_derivatives(q, u, np.full(m.nv, np.inf))
    with pytest.raises(soadyn.ArgumentError):
        m.forward_dynamics_derivatives(np.stack([q, bad]), u, tau)
    with pytest.raises(soadyn.ArgumentError, match="shape"):
        m.forward_dynamics_derivatives(q, u[:3], tau)
    flex = load("spacecraft.urdf")  # a NaN modal speed: the usual error, naming it
    bad_u = np.zeros(flex.nv)
    bad_u[-1] = np.nan
    with pytest.raises(soadyn.ArgumentError, match=r"u\[%d\]" % (flex.nv - 1)):
        flex.forward_dynamics_derivatives(flex.neutral(), bad_u, np.zeros(flex.nv))
    loop = load("four_bar.urdf")
    with pytest.raises(soadyn.NotSupportedError, match="closure"):
        loop.forward_dynamics_derivatives(loop.neutral(), np.zeros(loop.nv), np.zeros(loop.nv))


def test_simulate_jacobian_choice(rng):
    """cvode-bdf takes the analytic Jacobian on a tree by default, CVODE's difference quotients with
    jacobian="dq" (which then cost right-hand sides), and refuses a Jacobian where none is used."""
    m = load("double_pendulum.urdf")
    q0 = m.neutral() + 0.5
    a = m.simulate(q0, None, duration=1.0, dt=0.1, integrator="cvode-bdf")
    d = m.simulate(q0, None, duration=1.0, dt=0.1, integrator="cvode-bdf", jacobian="dq")
    assert a.stats["jacobian"] == "analytic" and a.stats["jacobian_evals"] > 0
    assert d.stats["jacobian"] == "dq" and d.stats["jacobian_evals"] > 0
    assert a.stats["rhs_evals"] < d.stats["rhs_evals"]
    assert np.max(np.abs(a.q[-1] - d.q[-1])) < 1e-6
    assert m.simulate(q0, None, duration=0.1, dt=0.1).stats["jacobian"] == "auto"  # rk4: none
    with pytest.raises(soadyn.NotSupportedError, match="cvode-bdf"):
        m.simulate(q0, None, duration=0.1, dt=0.1, integrator="rk4", jacobian="analytic")
    with pytest.raises(soadyn.ArgumentError, match="jacobian"):
        m.simulate(q0, None, duration=0.1, dt=0.1, integrator="cvode-bdf", jacobian="exact")
