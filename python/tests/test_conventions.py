"""The convention converters (soadyn/conventions.py) on 100 random states of the floating quadruped,
each output against the convention's definition computed independently from soadyn's kinematics:

- Pinocchio: the quaternion (x y z w) gives the root body's rotation matrix of body_placements; v =
  [v; omega] is the root's body-frame velocity of body_states, [v; omega] swapped; a = dv/dt of the
  same; the power tau . u is kept; the free flyer's linear v is d/dt of the root's world position
  seen in body axes (central differences).
- MuJoCo: qpos is the root's world position and a quaternion of its world rotation (w x y z); qvel
  = (R v_body, omega_body) with R the root's world rotation; qacc's linear part the derivative of
  the world velocity along the motion (central differences) and R (dv/dt + omega x v) exactly;
  the power is kept.
- Round trips are the identity, bit for bit where the converter only permutes.
"""
import os

import numpy as np
import pytest

import soadyn
from conftest import MODELS
from soadyn.conventions import _matrix_to_quat, _quat_to_matrix

N = 100


def quat_matrix_wxyz(qt):
    """The rotation matrix of a unit quaternion (w x y z), written out from its definition
    v -> q v q* (independent of the package's helper)."""
    w, x, y, z = qt
    return np.array([[w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z]])


@pytest.fixture(scope="module")
def quadruped():
    m = soadyn.load(os.path.join(MODELS, "quadruped.urdf"), floating=True)
    assert m.hinge_types[0] == "free" and m.parents[0] == -1
    rng = np.random.default_rng(29)
    Q = m.random_configuration(29, N)
    U = rng.uniform(-2, 2, (N, m.nv))
    A = rng.uniform(-5, 5, (N, m.nv))
    T = rng.uniform(-10, 10, (N, m.nv))
    return m, Q, U, A, T


def few_ulp(a, b):
    """a equals b to a few units in the last place of their scale."""
    return np.max(np.abs(a - b)) <= 4 * np.finfo(float).eps * max(1.0, np.max(np.abs(b)))


def test_pinocchio(quadruped):
    m, Q, U, A, T = quadruped
    qp, vp, ap, tp = soadyn.to_pinocchio(m, Q, U, A, T)
    assert qp.shape == (N, m.nq) and vp.shape == (N, m.nv)
    R, p, V, Acc = m.body_states(Q, U, A)
    for i in range(N):
        x, y, z, w = qp[i, 3:7]
        assert np.max(np.abs(quat_matrix_wxyz((w, x, y, z)) - R[i, 0])) < 1e-15 * 4
        assert np.max(np.abs(qp[i, :3] - p[i, 0])) < 1e-15 * 4  # the joint frame is the world's
        assert np.array_equal(vp[i, :3], V[i, 0, 3:]) and np.array_equal(vp[i, 3:6], V[i, 0, :3])
        # the root's body acceleration comes from sd_kinematics' sweep (qdd + its bias term, zero for a
        # root), where a build with FMA may round it apart from qdd: a few ulp, not bit for bit
        assert few_ulp(ap[i, :3], Acc[i, 0, 3:]) and few_ulp(ap[i, 3:6], Acc[i, 0, :3])
    # the joints after the root keep their coordinates
    assert np.array_equal(qp[:, 7:], Q[:, 7:]) and np.array_equal(vp[:, 6:], U[:, 6:])
    # power: the generalized forces are the speeds' duals
    assert np.max(np.abs(np.sum(tp * vp, axis=1) - np.sum(T * U, axis=1))) < 1e-12 * np.max(np.abs(T * U)) * m.nv
    # the linear speed is the world position's rate seen in body axes (central differences)
    h = 1e-6
    for i in range(5):
        pp = m.body_placements(m.integrate(Q[i], U[i], h))[1][0]
        pm = m.body_placements(m.integrate(Q[i], U[i], -h))[1][0]
        assert np.max(np.abs(R[i, 0].T @ (pp - pm) / (2 * h) - vp[i, :3])) < 1e-6
    # round trip, bit for bit (permutations only)
    back = soadyn.from_pinocchio(m, qp, vp, ap, tp)
    assert all(np.array_equal(a, b) for a, b in zip(back, (Q, U, A, T)))


def test_pinocchio_unbounded_and_order():
    m = soadyn.load(os.path.join(MODELS, "iiwa14.urdf"))
    Q = m.random_configuration(3, N)
    moving = [j for k, j in enumerate(m.joint_names) if m.hinge_nv[k]]
    qp = soadyn.to_pinocchio(m, Q, unbounded=moving[:2])
    assert qp.shape == (N, m.nq + 2)
    assert np.array_equal(qp[:, 0], np.cos(Q[:, 0])) and np.array_equal(qp[:, 1], np.sin(Q[:, 0]))
    assert np.max(np.abs(soadyn.from_pinocchio(m, qp, unbounded=moving[:2]) - Q)) < 1e-15 * 8
    # the other tool's joint order: reversed here, the blocks follow
    rev = soadyn.to_pinocchio(m, Q, joint_order=moving[::-1])
    assert np.array_equal(rev, Q[:, ::-1])
    assert np.array_equal(soadyn.from_pinocchio(m, rev, joint_order=moving[::-1]), Q)
    with pytest.raises(soadyn.ArgumentError, match="must name each joint"):
        soadyn.to_pinocchio(m, Q, joint_order=moving[1:])


def test_mujoco(quadruped):
    m, Q, U, A, T = quadruped
    qpos, qvel, qacc, qfrc = soadyn.to_mujoco(m, Q, U, A, T)
    R, p, V, Acc = m.body_states(Q, U, A)
    for i in range(N):
        assert np.max(np.abs(qpos[i, :3] - p[i, 0])) < 1e-15 * 4
        assert np.max(np.abs(quat_matrix_wxyz(qpos[i, 3:7]) - R[i, 0])) < 1e-15 * 4
        assert np.max(np.abs(qvel[i, :3] - R[i, 0] @ V[i, 0, 3:])) < 1e-14 * max(1, np.max(np.abs(V[i, 0])))
        assert np.array_equal(qvel[i, 3:6], V[i, 0, :3])
        w, v = V[i, 0, :3], V[i, 0, 3:]
        want = R[i, 0] @ (Acc[i, 0, 3:] + np.cross(w, v))
        assert np.max(np.abs(qacc[i, :3] - want)) < 1e-14 * max(1, np.max(np.abs(want)))
        assert few_ulp(qacc[i, 3:6], Acc[i, 0, :3])
    assert np.array_equal(qpos[:, 7:], Q[:, 7:]) and np.array_equal(qvel[:, 6:], U[:, 6:])
    assert np.max(np.abs(np.sum(qfrc * qvel, axis=1) - np.sum(T * U, axis=1))) < 1e-12 * np.max(np.abs(T * U)) * m.nv
    # qacc is d qvel / dt along the motion (constant qdd over +-h; central differences)
    h = 1e-4
    for i in range(5):
        def qvel_at(s):
            q = m.integrate(Q[i], U[i] * s + 0.5 * A[i] * s * s)
            return soadyn.to_mujoco(m, q, U[i] + A[i] * s)[1]
        fd = (qvel_at(h) - qvel_at(-h)) / (2 * h)
        assert np.max(np.abs(fd[:6] - qacc[i, :6])) < 1e-5 * max(1, np.max(np.abs(qacc[i, :6])))
    back = soadyn.from_mujoco(m, qpos, qvel, qacc, qfrc)
    for a, b in zip(back, (Q, U, A, T)):
        assert np.max(np.abs(a - b)) < 1e-14 * max(1, np.max(np.abs(b)))


def test_matrix_to_quaternion():
    rng = np.random.default_rng(4)
    for _ in range(N):
        qt = rng.normal(size=4)
        qt /= np.linalg.norm(qt)
        got = _matrix_to_quat(_quat_to_matrix(qt))
        assert np.max(np.abs(got - qt * np.sign(qt[0]))) < 1e-15 * 8
    # the four branches of the largest square: rotations by pi about x, y, z and the identity
    for R in (np.diag([1.0, -1, -1]), np.diag([-1.0, 1, -1]), np.diag([-1.0, -1, 1]), np.eye(3)):
        assert np.max(np.abs(_quat_to_matrix(_matrix_to_quat(R)) - R)) < 1e-15


def test_refusals():
    flex = soadyn.load(os.path.join(MODELS, "flexible_arm.urdf"))
    with pytest.raises(soadyn.NotSupportedError, match="flexible"):
        soadyn.to_mujoco(flex, flex.neutral())
    m = soadyn.load(os.path.join(MODELS, "quadruped.urdf"), floating=True)
    q = m.neutral()
    q[3] = 2.0  # a quaternion of norm 2
    with pytest.raises(soadyn.ArgumentError, match="norm 2"):
        soadyn.to_pinocchio(m, q)
    with pytest.raises(soadyn.ArgumentError, match="qdd needs u"):
        soadyn.to_mujoco(m, m.neutral(), qdd=np.zeros(m.nv))
    # one return value for q alone; the tuple up to the last one given
    assert isinstance(soadyn.to_mujoco(m, m.neutral()), np.ndarray)
    r = soadyn.to_mujoco(m, m.neutral(), tau=np.zeros(m.nv))
    assert len(r) == 4 and r[1] is None and r[2] is None
