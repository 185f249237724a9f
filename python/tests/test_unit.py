"""The Python package on the bundled models (models/): every function against the command's
`soadyn eval --json` (the same C calls) to 1e-14, against independent identities of the dynamics
(ID(FD(tau)) = tau, M M^-1 = I, M^-1 x, J M^-1 J^T = operational-space compliance, mixed dynamics,
constrained ID), batched calls equal to single calls bit for bit, errors with the C message."""
import os

import numpy as np
import pytest

import soadyn
from conftest import MODELS, rel
from evalcheck import compare_with_cli

BUNDLED = ["double_pendulum.urdf", "iiwa14.urdf", "quadruped.urdf", "pendulum_on_cart.urdf", "four_bar.urdf",
           "slider_crank.urdf", "flexible_arm.urdf", "spacecraft.urdf", "simple_pendulum.urdf"]
TOL = 1e-14


def path(name):
    return os.path.join(MODELS, name)


@pytest.mark.parametrize("name", BUNDLED)
def test_agrees_with_cli(name):
    m, d = compare_with_cli(path(name), floating=name == "quadruped.urdf")
    print(name, {k: f"{v:.1e}" for k, v in d.items()})
    assert max(d.values()) <= TOL, d


def test_same_as_c_api():
    """The wrapper passes the arrays to the C API untouched: bit-identical to calling it directly."""
    from soadyn._soadyn_cffi import ffi, lib
    for name in ("iiwa14.urdf", "quadruped.urdf"):
        m = soadyn.load(path(name), floating=True)
        q, u, tau = state(m)
        f = np.random.default_rng(5).uniform(-1, 1, (m.nbodies, 6))
        qdd = np.empty(m.nv)
        buf = lambda a: ffi.from_buffer("double[]", a)  # noqa: E731
        assert lib.sd_forward_dynamics(m._m, m._d, buf(q), buf(u), buf(tau), buf(f), buf(qdd)) == 0
        assert np.array_equal(m.forward_dynamics(q, u, tau, f), qdd)
        assert np.array_equal(soadyn.forward_dynamics(m, q, u, tau, f), qdd)


def state(m, seed=1):
    rng = np.random.default_rng(seed)
    return m.random_configuration(seed), rng.uniform(-1, 1, m.nv), rng.uniform(-1, 1, m.nv)


@pytest.mark.parametrize("name", ["iiwa14.urdf", "quadruped.urdf", "double_pendulum.urdf"])
def test_identities(name):
    m = soadyn.load(path(name), floating=name == "quadruped.urdf")
    q, u, tau = state(m)
    f = np.random.default_rng(2).uniform(-1, 1, (m.nbodies, 6))
    qdd = m.forward_dynamics(q, u, tau, f)
    assert rel(m.inverse_dynamics(q, u, qdd, f), tau) < 1e-10
    assert rel(m.forward_dynamics_cholesky(q, u, tau, f), qdd) < 1e-10
    M = m.mass_matrix(q)
    assert rel(M @ m.mass_matrix_inverse(q), np.eye(m.nv)) < 1e-10
    assert rel(m.mass_matrix_solve(q, tau), np.linalg.solve(M, tau)) < 1e-10
    assert rel(M @ qdd + m.bias_forces(q, u, f), tau) < 1e-10
    sign, logdet = np.linalg.slogdet(M)
    assert sign > 0 and abs(m.log_det_mass_matrix(q) - logdet) < 1e-10 * max(1, abs(logdet))
    assert abs(m.det_mass_matrix(q) / np.exp(logdet) - 1) < 1e-10
    # innovations factors: [I - H psi K] is the inverse of [I + H phi K] (004 Lemma 11)
    y = m.innovations_apply(q, "ne", tau)
    assert rel(m.innovations_apply(q, "inv", y), tau) < 1e-10
    # Jacobian of the tip and the operational-space compliance J M^-1 J* (004 Eq 59) in world axes
    tip = m.nbodies - 1
    J = m.jacobian(q, tip, (0.1, 0.0, 0.05))
    R, p = m.body_placements(q)
    Rt = R[tip]
    Lam_inv = m.operational_space_compliance(q, [(tip, (0.1, 0.0, 0.05))])
    # the task frame's velocity in its own (body) axes: rotate the world Jacobian's rows
    Jb = np.vstack([Rt.T @ J[:3], Rt.T @ J[3:]])
    assert rel(Lam_inv, Jb @ np.linalg.solve(M, Jb.T)) < 1e-10
    if m.nv >= 6:
        Lam = m.operational_space_inertia(q, [(tip, (0.1, 0.0, 0.05))])
        assert rel(Lam @ Lam_inv, np.eye(6)) < 1e-8
    # Jacobian by finite differences of the point's position
    pt = np.array([0.1, 0.0, 0.05])
    h = 1e-7
    for i in range(min(m.nv, 4)):
        e = np.zeros(m.nv)
        e[i] = h
        Rp, pp = m.body_placements(m.integrate(q, e))
        Rm, pm = m.body_placements(m.integrate(q, -e))
        fd = ((Rp[tip] @ pt + pp[tip]) - (Rm[tip] @ pt + pm[tip])) / (2 * h)
        assert np.max(np.abs(fd - J[3:, i])) < 1e-6
    # kinetic energy 1/2 u M u, momentum's linear part = total mass x com velocity
    e = m.energies(q, u)
    assert abs(e["kinetic"] - 0.5 * u @ M @ u) < 1e-10 * max(1, e["kinetic"])
    com_rate = (m.center_of_mass(m.integrate(q, u * h)) - m.center_of_mass(m.integrate(q, -u * h))) / (2 * h)
    assert np.max(np.abs(m.momentum(q, u)[3:] - m.total_mass * com_rate)) < 1e-5 * max(1, m.total_mass)
    # inter-body forces: ABA by-products = Newton-Euler (000 Eq 17 vs 004 Alg 3.1)
    a = m.interbody_forces(q, u, tau, f)
    b = m.inverse_dynamics_forces(q, u, a["qdd"], f)
    assert rel(a["forces"], b["forces"]) < 1e-10
    # mixed dynamics: prescribe the first moving body's hinge at the accelerations found above
    k = next(i for i in range(m.nbodies) if m.hinge_nv[i])
    qdd_m, tau_m = m.mixed_dynamics(q, u, tau, np.where(np.arange(m.nv) < m.hinge_nv[k] + m.v_index[k], qdd, 0.0), [k], f_ext=f)
    assert rel(qdd_m, qdd) < 1e-10 and rel(tau_m, tau) < 1e-10
    # external force at a point = the equivalent spatial force
    fe = m.external_force_at_point(q, tip, pt, (1.0, 2.0, 3.0))
    assert rel(m.inverse_dynamics(q, u, qdd, fe), m.inverse_dynamics(q, u, qdd) - J.T @ np.r_[0, 0, 0, 1.0, 2.0, 3.0]) < 1e-10


@pytest.mark.parametrize("name", ["iiwa14.urdf", "quadruped.urdf", "four_bar.urdf", "flexible_arm.urdf"])
def test_batched_equals_single(name):
    m = soadyn.load(path(name), floating=name == "quadruped.urdf")
    n = 5
    rng = np.random.default_rng(3)
    Q = m.random_configuration(4, n)
    U = rng.uniform(-1, 1, (n, m.nv))
    T = rng.uniform(-1, 1, (n, m.nv))
    F = rng.uniform(-1, 1, (n, m.nbodies, 6))
    tree = {"tree": True}  # the open tree's answers, asked for by name on the four-bar
    scalar = {"tree": True, "simd": False}  # batch.h's scalar path: the single calls' bits on every thread
    checks = [
        ("forward_dynamics", (Q, U, T, F), scalar), ("inverse_dynamics", (Q, U, T, F), scalar),
        ("bias_forces", (Q, U, F), {}), ("mass_matrix", (Q,), {}), ("log_det_mass_matrix", (Q,), {}),
        ("passive_forces", (Q, U), {}), ("center_of_mass", (Q,), {}), ("momentum", (Q, U), {}),
        ("forward_dynamics_cholesky", (Q, U, T), tree),
    ]
    if m.nflexible == 0:
        checks += [("mass_matrix_inverse", (Q,), {}), ("mass_matrix_solve", (Q, T), {})]
    if m.nconstraints:
        checks += [("constraint_jacobian", (Q,), {})]
    for threads in (1, 2):
        for fn, args, kw in checks:
            kw = dict(kw, threads=threads) if fn.startswith(("forward_dynamics", "inverse", "mass_matrix")) \
                and fn not in ("forward_dynamics_cholesky", "mass_matrix_solve") else kw
            batch = getattr(m, fn)(*args, **kw)
            for i in range(n):
                single = getattr(m, fn)(*[a[i] for a in args], **{k: v for k, v in kw.items() if k == "tree"})
                assert np.array_equal(batch[i], single), (fn, threads, i)
    # broadcast: one tau for every state
    assert np.array_equal(m.forward_dynamics(Q, U, T[0], **scalar)[2], m.forward_dynamics(Q[2], U[2], T[0], **tree))
    R, p, V, A = m.body_states(Q, U, T)
    for i in range(n):
        r1 = m.body_states(Q[i], U[i], T[i])
        assert all(np.array_equal(x[i], y) for x, y in zip((R, p, V, A), r1))
    J = m.jacobian(Q, m.nbodies - 1)
    assert np.array_equal(J[3], m.jacobian(Q[3], m.nbodies - 1))
    a = m.interbody_forces(Q, U, T, tree=True)
    assert np.array_equal(a["forces"][1], m.interbody_forces(Q[1], U[1], T[1], tree=True)["forces"])
    e = m.energies(Q, U)
    assert e["kinetic"][4] == m.energies(Q[4], U[4])["kinetic"]
    if m.nconstraints:
        r = m.closed_loop_forward_dynamics(Q, U, T)
        assert np.array_equal(r["lambda"][2], m.closed_loop_forward_dynamics(Q[2], U[2], T[2])["lambda"])


def test_closed_loops():
    m = soadyn.load(path("four_bar.urdf"))
    assert m.nconstraints == 1 and m.constraint_names == ("rocker_pivot",)
    q, res = m.assemble(m.neutral() + 0.01)
    assert res < 1e-10 and np.max(np.abs(m.constraint_residuals(q)[0])) < 1e-10
    u = m.project_velocities(q, np.array([1.0, 0.0, 0.0]))
    assert np.max(np.abs(m.constraint_residuals(q, u)[1])) < 1e-12
    tau = np.array([0.5, 0.0, 0.0])
    r = m.closed_loop_forward_dynamics(q, u, tau, forces=True)
    G = m.constraint_jacobian(q)
    M = m.mass_matrix(q)
    # 000 Eq 43: M qdd + C - G* lambda = tau
    assert rel(M @ r["qdd"] + m.bias_forces(q, u) - G.T @ r["lambda"], tau) < 1e-10
    assert r["rank"] == 2 and m.constraint_rank(q) == (2, 1)
    # constrained inverse dynamics with the crank actuated gives back the crank torque
    tau_id, lam = m.constrained_inverse_dynamics(q, u, r["qdd"], ["crank_joint"])
    assert abs(tau_id[0] - 0.5) < 1e-9 and np.all(tau_id[1:] == 0)


def test_flexible():
    m = soadyn.load(path("flexible_arm.urdf"))
    k = m.body_index("link1")
    assert m.nflexible == 1 and m.body_nmodes[k] > 0
    w = m.flex_frequencies("link1")
    assert abs(w[0] / (2 * np.pi) - 1.70275) < 1e-5  # link2 riding on the tip node (alone: 3.94 Hz)
    q = m.neutral()
    q[m.mode_q_index[k]] = 0.01
    d = m.node_deflection(q, "link1", m.body_nnodes[k] - 1)
    assert np.any(d != 0)
    assert m.strain_energy(q) > 0 and abs(m.energies(q, np.zeros(m.nv))["strain"] - m.strain_energy(q)) == 0
    assert rel(m.mass_matrix(q) @ m.mass_matrix_inverse(q), np.eye(m.nv)) < 1e-10  # offered on flexible models


def test_properties():
    m = soadyn.load(path("iiwa14.urdf"))
    assert (m.nq, m.nv, m.format) == (7, 7, "urdf")
    assert m.joint_names[1] == "iiwa_joint_1" and m.coordinate_labels[0] == "iiwa_joint_1"
    assert len(m.body_names) == m.nbodies and m.parents[0] == -1
    assert np.array_equal(m.reference(), m.neutral())  # a URDF's reference pose is the neutral one
    f = soadyn.load(path("quadruped.urdf"), floating=True)
    assert f.hinge_types[0] == "free" and f.nq == f.nv + 1
    assert f.coordinate_labels[3:7] == tuple(f.joint_names[0] + ".q" + c for c in "wxyz")


def test_errors():
    m = soadyn.load(path("iiwa14.urdf"))
    q, u, tau = state(m)
    with pytest.raises(soadyn.ArgumentError, match="q has shape"):
        m.forward_dynamics(q[:6], u, tau)
    with pytest.raises(soadyn.ArgumentTypeError, match="dtype int64"):
        m.forward_dynamics(np.zeros(7, dtype=np.int64), u, tau)
    with pytest.raises(soadyn.ArgumentTypeError, match="dtype float32"):
        m.mass_matrix(q.astype(np.float32))
    bad = q.copy()
    bad[3] = np.nan
    with pytest.raises(soadyn.ArgumentError, match=r"sd_forward_dynamics: q\[3\] is not finite"):
        m.forward_dynamics(bad, u, tau)
    Q = np.tile(q, (4, 1))
    Q[2, 1] = np.inf
    with pytest.raises(soadyn.ArgumentError, match=r"state 2: sd_inverse_dynamics: q\[1\] is not finite"):
        m.inverse_dynamics(Q, u, tau)
    with pytest.raises(soadyn.ArgumentError, match="u has 3 states, other arguments 4"):
        m.forward_dynamics(Q, np.zeros((3, 7)), tau)
    with pytest.raises(soadyn.FileError, match="no_such.urdf: cannot open"):
        soadyn.load(path("no_such.urdf"))
    with pytest.raises(soadyn.ArgumentError, match="no body or frame named"):
        m.jacobian(q, "nope")
    with pytest.raises(soadyn.ArgumentError, match="sd_simulate|dt"):
        m.simulate(duration=0.1, dt=1.0)
    assert issubclass(soadyn.FileError, OSError) and issubclass(soadyn.ArgumentError, ValueError)


def test_non_contiguous_and_lists():
    m = soadyn.load(path("iiwa14.urdf"))
    q, u, tau = state(m)
    big = np.zeros((7, 2))
    big[:, 0] = q
    assert np.array_equal(m.forward_dynamics(big[:, 0], u, tau), m.forward_dynamics(q, u, tau))
    assert np.array_equal(m.forward_dynamics(list(q), tuple(u), tau), m.forward_dynamics(q, u, tau))
    out = np.empty(7)
    assert m.forward_dynamics(q, u, tau, out=out) is out


def test_simulate_control():
    m = soadyn.load(path("double_pendulum.urdf"))
    calls = []

    def pd(t, q, u):
        calls.append(t)
        return -5.0 * q - 1.0 * u

    t, q, u = m.simulate([0.5, 0.0], None, duration=0.2, dt=1e-3, control=pd, every=10)
    assert t.shape == (21,) and q.shape == (21, 2) and u.shape == (21, 2)
    assert abs(t[-1] - 0.2) < 1e-12 and len(calls) == 4 * 200
    # the same run with constant forces equals the C run's (no control): energy kept by RK4
    r = m.simulate([0.5, 0.0], None, duration=1.0, dt=1e-3)
    E = r.kinetic + r.potential
    assert abs(E[-1] - E[0]) < 1e-9 * abs(E[0]) and r.stats["steps"] == 1000

    def bad(t, q, u):
        raise RuntimeError("controller broke")

    with pytest.raises(RuntimeError, match="controller broke"):
        m.simulate(duration=0.01, dt=1e-3, control=bad)


def test_write_view(tmp_path):
    m = soadyn.load(path("double_pendulum.urdf"))
    t, q, u = m.simulate([0.5, 0.0], None, duration=0.05, dt=1e-3, every=10)
    out = tmp_path / "view.html"
    if not soadyn.has_viewer():
        with pytest.raises(soadyn.NotSupportedError, match="SOADYN_WITH_VIEWER"):
            soadyn.write_view(m, t, q, out)
        return
    soadyn.write_view(m, t, q, out, u=u)
    assert out.stat().st_size > 1000 and b"<html" in out.read_bytes()[:2000].lower()


def test_info_lists_coordinates():
    """`soadyn info` names the coordinates and speeds (text and --json) as the package does, and each
    name is one `soadyn eval --q NAME=VALUE` takes (the promise of eval --help)."""
    import json
    import subprocess
    from conftest import CLI
    model = path("quadruped.urdf")
    m = soadyn.load(model, floating=True)
    j = json.loads(subprocess.run([CLI, "info", model, "--floating", "--json"], check=True, capture_output=True,
                                  text=True).stdout)
    assert tuple(j["coordinates"]) == m.coordinate_labels and tuple(j["speeds"]) == m.speed_labels
    text = subprocess.run([CLI, "info", model, "--floating"], check=True, capture_output=True, text=True).stdout
    listed = text.split("coordinates q (19):")[1].split("speeds u (18):")
    assert listed[0].split() == list(m.coordinate_labels)
    assert listed[1].split("joint dynamics")[0].split() == list(m.speed_labels)
    for label in (m.coordinate_labels[2], m.coordinate_labels[8]):
        out = json.loads(subprocess.run([CLI, "eval", model, "--floating", "--json", "--q", f"{label}=0.25"],
                                        check=True, capture_output=True, text=True).stdout)
        assert out["q"][label] == 0.25
