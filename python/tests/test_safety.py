"""No silent wrong answers from the Python package:

- loops: every tree-only function refuses a model with closure constraints (ClosedLoopError naming
  the function for the closed system) unless tree=True asks for the tree by name; the tree answer
  is then the one of the same model without the rule (checked against the closed system's
  equation M qdd + C - G^T lambda = tau, which the tree's qdd does not satisfy);
- quaternions: one of norm 2, or zero, is refused (every path: fast single call, general path,
  batch, matrices, kinematics), naming the joint and the state; a unit one within the tolerance
  passes;
- model arrays refuse writes; setters change the model and every later call sees the change
  (single, batched, the fast path), checked against independent formulas (M + diag(d armature),
  qdd = M^-1 tau at rest without gravity); a refused value leaves the model as it was.
"""
import os

import numpy as np
import pytest

import soadyn
from conftest import MODELS, rel


def path(name):
    return os.path.join(MODELS, name)


# ---------------------------------------------------------------- loops

TREE_ONLY = [
    ("forward_dynamics", lambda m, q, u, t, kw: m.forward_dynamics(q, u, t, **kw), "closed_loop_forward_dynamics"),
    ("forward_dynamics_cholesky", lambda m, q, u, t, kw: m.forward_dynamics_cholesky(q, u, t, **kw),
     "closed_loop_forward_dynamics"),
    ("inverse_dynamics", lambda m, q, u, t, kw: m.inverse_dynamics(q, u, t, **kw), "constrained_inverse_dynamics"),
    ("forward_dynamics_ex", lambda m, q, u, t, kw: m.forward_dynamics_ex(q, u, t, **kw),
     "closed_loop_forward_dynamics"),
    ("interbody_forces", lambda m, q, u, t, kw: m.interbody_forces(q, u, t, **kw), "closed_loop_forward_dynamics"),
    ("inverse_dynamics_forces", lambda m, q, u, t, kw: m.inverse_dynamics_forces(q, u, t, **kw),
     "constrained_inverse_dynamics"),
    ("mixed_dynamics", lambda m, q, u, t, kw: m.mixed_dynamics(q, u, t, np.zeros(m.nv), [1], **kw),
     "closed_loop_forward_dynamics"),
    ("module forward_dynamics", lambda m, q, u, t, kw: soadyn.forward_dynamics(m, q, u, t, **kw),
     "closed_loop_forward_dynamics"),
]


@pytest.mark.parametrize("name,call,closed", TREE_ONLY, ids=[c[0] for c in TREE_ONLY])
def test_loops_refused_without_tree(name, call, closed):
    m = soadyn.load(path("four_bar.urdf"))
    q, _ = m.assemble(m.neutral() + 0.1)
    u = m.project_velocities(q, np.array([1.0, 0.0, 0.0]))
    tau = np.array([0.5, 0.0, 0.0])
    for args in ((q, u, tau), (np.tile(q, (3, 1)), u, tau)):  # one state and a batch
        with pytest.raises(soadyn.ClosedLoopError, match=f"rocker_pivot.*call {closed}.*tree=True"):
            call(m, *args, {})
        call(m, *args, {"tree": True})  # asked for by name: the tree's answer


def test_tree_answer_is_not_the_closed_one():
    """What tree=True gives is the open tree's qdd, which breaks the loop's equation; the closed
    system's satisfies it (000 Eq 43)."""
    m = soadyn.load(path("four_bar.urdf"))
    q, _ = m.assemble(m.neutral() + 0.1)
    u = m.project_velocities(q, np.array([1.0, 0.0, 0.0]))
    tau = np.array([0.5, 0.0, 0.0])
    G, M, C = m.constraint_jacobian(q), m.mass_matrix(q), m.bias_forces(q, u)
    closed = m.closed_loop_forward_dynamics(q, u, tau)
    assert rel(M @ closed["qdd"] + C - G.T @ closed["lambda"], tau) < 1e-12
    tree = m.forward_dynamics(q, u, tau, tree=True)
    assert rel(M @ tree + C, tau) < 1e-12  # the open tree's equation
    # the closed qdd keeps G qdd + dG/dt u = 0; the tree's differs from it along G: the loop opens
    assert np.max(np.abs(G @ (tree - closed["qdd"]))) > 1e-3


# ---------------------------------------------------------------- quaternions


@pytest.fixture
def floating():
    m = soadyn.load(path("quadruped.urdf"), floating=True)
    rng = np.random.default_rng(8)
    return m, m.random_configuration(8), rng.uniform(-1, 1, m.nv), rng.uniform(-1, 1, m.nv)


QUAT_CALLS = [
    ("forward_dynamics", lambda m, q, u, t: m.forward_dynamics(q, u, t)),
    ("forward_dynamics out=", lambda m, q, u, t: m.forward_dynamics(q, u, t, out=np.empty(m.nv))),
    ("inverse_dynamics", lambda m, q, u, t: m.inverse_dynamics(q, u, t)),
    ("mass_matrix", lambda m, q, u, t: m.mass_matrix(q)),
    ("body_placements", lambda m, q, u, t: m.body_placements(q)),
    ("jacobian", lambda m, q, u, t: m.jacobian(q, 0)),
    ("energies", lambda m, q, u, t: m.energies(q, u)),
    ("integrate", lambda m, q, u, t: m.integrate(q, u, 0.1)),
    ("simulate", lambda m, q, u, t: m.simulate(q, u, duration=0.01, dt=1e-3)),
    ("assemble", lambda m, q, u, t: m.assemble(q)),
    ("write_view", lambda m, q, u, t: write_view(m, q)),
]


def write_view(m, q):
    """The page of one sample; a build without the viewer says so after the checks."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        try:
            soadyn.write_view(m, [0.0], [q], os.path.join(tmp, "view.html"))
        except soadyn.NotSupportedError:
            assert not soadyn.has_viewer()


@pytest.mark.parametrize("name,call", QUAT_CALLS, ids=[c[0] for c in QUAT_CALLS])
def test_quaternion_refused(floating, name, call):
    m, q, u, tau = floating
    joint = m.joint_names[0]
    for scale in (2.0, 0.0):
        bad = q.copy()
        bad[3:7] *= scale
        with pytest.raises(soadyn.ArgumentError, match=f"quaternion of joint '{joint}'.*norm {scale:g}"):
            call(m, bad, u, tau)
    # within the tolerance: accepted, as the C call takes it
    near = q.copy()
    near[3:7] *= 1 + 0.5 * soadyn.QUATERNION_TOLERANCE
    call(m, near, u, tau)
    near[3:7] = q[3:7] * (1 + 2 * soadyn.QUATERNION_TOLERANCE)
    with pytest.raises(soadyn.ArgumentError, match="model.normalize"):
        call(m, near, u, tau)


def test_quaternion_refused_in_a_batch(floating):
    m, q, u, tau = floating
    Q = np.tile(q, (5, 1))
    Q[3, 3:7] *= 2
    with pytest.raises(soadyn.ArgumentError, match="state 3: the quaternion"):
        m.forward_dynamics(Q, u, tau)
    with pytest.raises(soadyn.ArgumentError, match="state 3: the quaternion"):
        m.mass_matrix(Q)
    # normalize() repairs it, and is the one call that takes it
    assert np.max(np.abs(m.normalize(Q[3]) - q)) < 1e-15


# ---------------------------------------------------------------- read-only arrays, setters


def test_arrays_are_read_only():
    m = soadyn.load(path("iiwa14.urdf"))
    for name in ("gravity", "armature", "damping", "stiffness", "spring_ref", "body_masses"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(m, name)[:] = 0
    with pytest.raises(TypeError):
        m.body_names[0] = "x"  # a tuple


def test_set_gravity():
    m = soadyn.load(path("iiwa14.urdf"))
    q, u, tau = m.random_configuration(2), np.zeros(7), np.linspace(-1, 1, 7)
    g0 = m.forward_dynamics(q, u, tau)
    m.set_gravity([0.0, 0.0, 0.0])
    assert np.array_equal(m.gravity, [0.0, 0.0, 0.0])
    # at rest without gravity qdd = M^-1 tau: the fast path, the general path and a batch see it
    want = np.linalg.solve(m.mass_matrix(q), tau)
    assert rel(m.forward_dynamics(q, u, tau), want) < 1e-12
    assert rel(m.forward_dynamics(list(q), u, tau), want) < 1e-12
    assert rel(m.forward_dynamics(np.tile(q, (4, 1)), u, tau)[2], want) < 1e-12
    assert rel(m.bias_forces(q, u), np.zeros(7)) == 0
    assert m.potential_energy(q) == 0.0
    # soadyn.load(gravity=) is the same model
    z = soadyn.load(path("iiwa14.urdf"), gravity=(0, 0, 0))
    assert np.array_equal(z.forward_dynamics(q, u, tau), m.forward_dynamics(q, u, tau))
    m.set_gravity([0.0, 0.0, -9.81])
    assert np.array_equal(m.forward_dynamics(q, u, tau), g0)
    with pytest.raises(soadyn.ArgumentError, match="not finite"):
        m.set_gravity([0.0, np.nan, 0.0])
    assert np.array_equal(m.gravity, [0.0, 0.0, -9.81])


def test_set_joint_terms():
    m = soadyn.load(path("iiwa14.urdf"))
    q, u, tau = m.random_configuration(2), np.linspace(-1, 1, 7), np.linspace(1, -1, 7)
    M0 = m.mass_matrix(q)
    d = np.linspace(0.1, 0.7, 7)
    m.set_armature(d)
    assert np.array_equal(m.armature, d)
    assert rel(m.mass_matrix(q), M0 + np.diag(d)) < 1e-14
    C = m.bias_forces(q, u)
    want = np.linalg.solve(m.mass_matrix(q), tau - C)
    assert rel(m.forward_dynamics(q, u, tau), want) < 1e-12
    assert rel(m.forward_dynamics(np.tile(q, (5, 1)), u, tau, threads=2)[4], want) < 1e-12
    # damping by joint name: tau_passive = -damping u on that speed only
    d0 = m.damping.copy()
    m.set_damping({"iiwa_joint_3": 2.0})
    assert m.damping[2] == 2.0 and np.count_nonzero(m.damping != d0) == 1
    assert rel(m.passive_forces(q, u), -m.damping * u) < 1e-15
    # a refusal (negative armature) changes nothing, even the values before it in the array
    before = m.armature.copy()
    with pytest.raises(soadyn.ModelError, match="iiwa_joint_7.*negative armature"):
        m.set_armature(np.r_[np.full(6, 9.0), -1.0])
    assert np.array_equal(m.armature, before)
    assert rel(m.forward_dynamics(q, u, tau), np.linalg.solve(m.mass_matrix(q), tau - m.bias_forces(q, u))) < 1e-12
    # the copy is independent
    c = m.copy()
    c.set_armature(np.zeros(7))
    assert np.array_equal(m.armature, before) and np.array_equal(c.armature, np.zeros(7))
