"""Converters between soadyn's generalized coordinates and Pinocchio's and MuJoCo's.

The three tools agree on revolute and prismatic joints (one angle or displacement, its rate) and
differ on the joints that carry a quaternion:

  soadyn    free       q = (p, w x y z)   u = (omega, v)      omega and v in body axes, v of the origin
            spherical  q = (w x y z)      u = omega           body axes
  Pinocchio free flyer q = (p, x y z w)   v = (v, omega)      both in the local (body) frame
            spherical  q = (x y z w)      v = omega           local frame
            revolute unbounded (a URDF `continuous` joint) q = (cos, sin), v = the rate
  MuJoCo    free       qpos = (p_world, w x y z)  qvel = (v_world, omega)  v in world axes, omega in body axes
            ball       qpos = (w x y z)           qvel = omega             body axes

p and the quaternion are the body's placement in its joint frame (soadyn, Pinocchio) or in the
world (MuJoCo: a free joint hangs from the world, and soadyn's joint frame's placement in the world
is applied). Accelerations are the time derivatives of the speeds in each tool's own convention
(soadyn's qdd = du/dt; Pinocchio's a = dv/dt; MuJoCo's qacc = d qvel/dt, whose world-axes linear part
gains R (omega x v)); generalized forces are the duals of the speeds (power tau . u is the same
number in every tool), so a MuJoCo free joint's force is in world axes.

Coordinates are laid out joint by joint in soadyn's order (model.joint_names, parent-first), or in
`joint_order` (the other tool's joint names in its own order: Pinocchio's model.names[1:], MuJoCo's
joints in document order) when given. Flexible bodies' modal coordinates, universal and planar
hinges have no counterpart there: NotSupportedError names the joint.
"""
import numpy as np

__all__ = ["to_pinocchio", "from_pinocchio", "to_mujoco", "from_mujoco"]


def _quat_mul(a, b):
    """The Hamilton product a b of quaternions (w x y z) along the last axis."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def _quat_to_matrix(qt):
    """Rotation matrices (..., 3, 3) of unit quaternions (w x y z)."""
    w, x, y, z = np.moveaxis(qt, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1)], axis=-2)


def _matrix_to_quat(R):
    """The unit quaternion (w x y z, w >= 0) of a rotation matrix (Shepperd's choice of the largest
    of the four squares, so no division by a small number)."""
    tr = np.trace(R)
    d = np.array([tr, R[0, 0], R[1, 1], R[2, 2]])
    i = int(np.argmax(d))
    if i == 0:
        w = 0.5 * np.sqrt(1 + tr)
        qt = [w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)]
    else:
        j, k = (i % 3, (i + 1) % 3)  # the two axes after axis i - 1
        a = i - 1
        s = 0.5 * np.sqrt(1 + 2 * R[a, a] - tr)
        qt = [0.0] * 4
        qt[1 + a] = s
        qt[0] = (R[k, j] - R[j, k]) / (4 * s)
        qt[1 + j] = (R[j, a] + R[a, j]) / (4 * s)
        qt[1 + k] = (R[k, a] + R[a, k]) / (4 * s)
    qt = np.array(qt)
    return -qt if qt[0] < 0 else qt


def _rotate(R, v):
    return np.einsum("...ij,...j->...i", R, v)


class _Layout:
    """The joints of `model` with coordinates, in soadyn's order or `joint_order`, each with its
    slices in soadyn's q and u and in the other tool's vectors."""

    def __init__(self, model, tool, joint_order, unbounded):
        from . import ArgumentError, NotSupportedError
        moving = [k for k in range(model.nbodies) if model.hinge_nv[k] > 0 or model.body_nmodes[k] > 0]
        for k in moving:
            kind = model.hinge_types[k]
            if model.body_nmodes[k] > 0:
                raise NotSupportedError(f"{tool}: body {model.body_names[k]!r} is flexible: its modal coordinates "
                                        f"have no {tool} counterpart")
            if kind in ("universal", "planar"):
                raise NotSupportedError(f"{tool}: joint {model.joint_names[k]!r} is {kind}: no {tool} joint with "
                                        f"soadyn's coordinates is converted (model it as revolute/prismatic joints)")
        names = [model.joint_names[k] for k in moving]
        if joint_order is None:
            order = moving
        else:
            joint_order = list(joint_order)
            if sorted(joint_order) != sorted(names):
                missing = sorted(set(names) - set(joint_order))
                extra = sorted(set(joint_order) - set(names))
                raise ArgumentError(f"{tool}: joint_order must name each joint with coordinates once: missing "
                                    f"{missing}, not in the model or repeated {extra}")
            order = [moving[names.index(j)] for j in joint_order]
        unbounded = set(unbounded)
        for j in unbounded:
            if j not in names or model.hinge_types[moving[names.index(j)]] != "revolute":
                raise ArgumentError(f"{tool}: unbounded joint {j!r} is not a revolute joint of the model")
        self.joints = []  # (body, kind, soadyn q slice, soadyn u slice, tool q slice, tool v slice)
        iq = iv = 0
        for k in order:
            kind = model.hinge_types[k]
            if model.joint_names[k] in unbounded:
                kind = "unbounded"
            nq, nv = model.hinge_nq[k], model.hinge_nv[k]
            tq = 2 if kind == "unbounded" else nq
            self.joints.append((k, kind, slice(model.q_index[k], model.q_index[k] + nq),
                                slice(model.v_index[k], model.v_index[k] + nv), slice(iq, iq + tq), slice(iv, iv + nv)))
            iq, iv = iq + tq, iv + nv
        self.nq, self.nv = iq, iv


def _arrays(tool, names_sizes):
    """The given arrays as float64 with a common leading batch shape (checked)."""
    from . import ArgumentError, _as_f64
    out, lead = [], None
    for name, a, n in names_sizes:
        if a is None:
            out.append(None)
            continue
        a = _as_f64(name, a)
        if a.shape[-1:] != (n,):
            raise ArgumentError(f"{tool}: {name} has shape {a.shape}, expected ({n},) or (..., {n})")
        if lead is not None and a.shape[:-1] != lead:
            raise ArgumentError(f"{tool}: {name} has shape {a.shape}, the other arguments lead with {lead}")
        lead = a.shape[:-1]
        out.append(a)
    return out, lead


def _result(q, rest):
    """q alone, or (q, u, qdd, tau) up to the last one given (None for one skipped)."""
    given = [i for i, a in enumerate(rest) if a is not None]
    return q if not given else (q,) + tuple(rest[:given[-1] + 1])


def to_pinocchio(model, q, u=None, qdd=None, tau=None, joint_order=None, unbounded=()):
    """soadyn's (q, u, qdd, tau) as Pinocchio's (q, v, a, tau) (module docstring: free flyer and
    spherical quaternions as x y z w, free-flyer speeds as [v; omega]; `unbounded` names the
    revolute joints Pinocchio reads as unbounded, (cos, sin), as it does URDF `continuous` joints).
    Returns q alone, or the tuple up to the last argument given. Any leading batch axes are kept."""
    lay = _Layout(model, "to_pinocchio", joint_order, unbounded)
    (q, u, qdd, tau), lead = _arrays("to_pinocchio", [("q", q, model.nq), ("u", u, model.nv),
                                                      ("qdd", qdd, model.nv), ("tau", tau, model.nv)])
    model._check_quaternions("to_pinocchio", "q", q)
    qo = np.empty(lead + (lay.nq,))
    speeds = [None if a is None else np.empty(lead + (lay.nv,)) for a in (u, qdd, tau)]
    for k, kind, sq, su, tq, tv in lay.joints:
        x = q[..., sq]
        if kind == "free":
            qo[..., tq] = np.concatenate([x[..., :3], x[..., 4:7], x[..., 3:4]], axis=-1)
        elif kind == "spherical":
            qo[..., tq] = np.concatenate([x[..., 1:4], x[..., 0:1]], axis=-1)
        elif kind == "unbounded":
            qo[..., tq] = np.concatenate([np.cos(x), np.sin(x)], axis=-1)
        else:
            qo[..., tq] = x
        for src, dst in zip((u, qdd, tau), speeds):
            if src is not None:  # the free flyer's [v; omega] order, the same body axes (and dv/dt)
                dst[..., tv] = np.roll(src[..., su], 3, axis=-1) if kind == "free" else src[..., su]
    return _result(qo, speeds)


def from_pinocchio(model, q, v=None, a=None, tau=None, joint_order=None, unbounded=()):
    """Pinocchio's (q, v, a, tau) as soadyn's (q, u, qdd, tau): the inverse of to_pinocchio (an
    unbounded joint's angle is atan2(sin, cos), in [-pi, pi])."""
    lay = _Layout(model, "from_pinocchio", joint_order, unbounded)
    (q, v, a, tau), lead = _arrays("from_pinocchio", [("q", q, lay.nq), ("v", v, lay.nv), ("a", a, lay.nv),
                                                      ("tau", tau, lay.nv)])
    qo = np.empty(lead + (model.nq,))
    qo[...] = model.neutral()  # fixed hinges have no coordinate; every other one is written below
    speeds = [None if x is None else np.zeros(lead + (model.nv,)) for x in (v, a, tau)]
    for k, kind, sq, su, tq, tv in lay.joints:
        x = q[..., tq]
        if kind == "free":
            qo[..., sq] = np.concatenate([x[..., :3], x[..., 6:7], x[..., 3:6]], axis=-1)
        elif kind == "spherical":
            qo[..., sq] = np.concatenate([x[..., 3:4], x[..., 0:3]], axis=-1)
        elif kind == "unbounded":
            qo[..., sq] = np.arctan2(x[..., 1:2], x[..., 0:1])
        else:
            qo[..., sq] = x
        for src, dst in zip((v, a, tau), speeds):
            if src is not None:
                dst[..., su] = np.roll(src[..., tv], 3, axis=-1) if kind == "free" else src[..., tv]
    model._check_quaternions("from_pinocchio", "q", qo)
    return _result(qo, speeds)


def _free_root(model, tool, k):
    """(R_J, p_J, quaternion of R_J) of a free joint's frame in the world; MuJoCo's free joints hang
    from the world only."""
    from . import NotSupportedError
    from ._soadyn_cffi import lib
    if model.parents[k] != -1:
        raise NotSupportedError(f"{tool}: free joint {model.joint_names[k]!r} is on a body with a parent "
                                f"({model.body_names[model.parents[k]]!r}); MuJoCo's free joints hang from the world")
    X = lib.sd_model_placement(model._m, k)
    R = np.array([X.R[i] for i in range(9)]).reshape(3, 3)
    p = np.array([X.p[i] for i in range(3)])
    return R, p, _matrix_to_quat(R)


def to_mujoco(model, q, u=None, qdd=None, tau=None, joint_order=None):
    """soadyn's (q, u, qdd, tau) as MuJoCo's (qpos, qvel, qacc, qfrc) (module docstring): a free
    joint's position and orientation in the world, its linear velocity v_world = R v, its linear
    acceleration R (dv/dt + omega x v) and force R f in world axes, R the body's orientation in the
    world; ball joints and the 1-dof joints unchanged. qdd needs u. Returns qpos alone, or the tuple
    up to the last argument given."""
    from . import ArgumentError
    lay = _Layout(model, "to_mujoco", joint_order, ())
    (q, u, qdd, tau), lead = _arrays("to_mujoco", [("q", q, model.nq), ("u", u, model.nv),
                                                   ("qdd", qdd, model.nv), ("tau", tau, model.nv)])
    if qdd is not None and u is None:
        raise ArgumentError("to_mujoco: qdd needs u (a free joint's qacc has the term omega x v)")
    model._check_quaternions("to_mujoco", "q", q)
    qo = np.empty(lead + (lay.nq,))
    vo, ao, fo = (None if x is None else np.empty(lead + (lay.nv,)) for x in (u, qdd, tau))
    for k, kind, sq, su, tq, tv in lay.joints:
        qo[..., tq] = q[..., sq]
        for src, dst in ((u, vo), (qdd, ao), (tau, fo)):
            if src is not None:
                dst[..., tv] = src[..., su]
        if kind != "free":
            continue
        RJ, pJ, quatJ = _free_root(model, "to_mujoco", k)
        quat = _quat_mul(quatJ, q[..., sq][..., 3:7])
        qo[..., tq] = np.concatenate([pJ + _rotate(RJ, q[..., sq][..., :3]), quat], axis=-1)
        R = _quat_to_matrix(quat)  # the body's axes in the world
        if u is not None:
            w, v = u[..., su][..., :3], u[..., su][..., 3:]
            vo[..., tv] = np.concatenate([_rotate(R, v), w], axis=-1)
        if qdd is not None:
            dw, dv = qdd[..., su][..., :3], qdd[..., su][..., 3:]
            ao[..., tv] = np.concatenate([_rotate(R, dv + np.cross(w, v)), dw], axis=-1)
        if tau is not None:
            fo[..., tv] = np.concatenate([_rotate(R, tau[..., su][..., 3:]), tau[..., su][..., :3]], axis=-1)
    return _result(qo, [vo, ao, fo])


def from_mujoco(model, qpos, qvel=None, qacc=None, qfrc=None, joint_order=None):
    """MuJoCo's (qpos, qvel, qacc, qfrc) as soadyn's (q, u, qdd, tau): the inverse of to_mujoco.
    qacc needs qvel."""
    from . import ArgumentError
    lay = _Layout(model, "from_mujoco", joint_order, ())
    (qp, qv, qa, qf), lead = _arrays("from_mujoco", [("qpos", qpos, lay.nq), ("qvel", qvel, lay.nv),
                                                     ("qacc", qacc, lay.nv), ("qfrc", qfrc, lay.nv)])
    if qa is not None and qv is None:
        raise ArgumentError("from_mujoco: qacc needs qvel (a free joint's qacc has the term omega x v)")
    qo = np.empty(lead + (model.nq,))
    qo[...] = model.neutral()
    uo, ao, fo = (None if x is None else np.zeros(lead + (model.nv,)) for x in (qv, qa, qf))
    for k, kind, sq, su, tq, tv in lay.joints:
        qo[..., sq] = qp[..., tq]
        for src, dst in ((qv, uo), (qa, ao), (qf, fo)):
            if src is not None:
                dst[..., su] = src[..., tv]
        if kind != "free":
            continue
        RJ, pJ, quatJ = _free_root(model, "from_mujoco", k)
        quat = qp[..., tq][..., 3:7]
        R = _quat_to_matrix(quat)
        Rt = np.swapaxes(R, -1, -2)
        conj = quatJ * np.array([1.0, -1.0, -1.0, -1.0])
        qo[..., sq] = np.concatenate([_rotate(RJ.T, qp[..., tq][..., :3] - pJ), _quat_mul(conj, quat)], axis=-1)
        if qv is not None:
            w, v = qv[..., tv][..., 3:], _rotate(Rt, qv[..., tv][..., :3])
            uo[..., su] = np.concatenate([w, v], axis=-1)
        if qa is not None:
            ao[..., su] = np.concatenate([qa[..., tv][..., 3:], _rotate(Rt, qa[..., tv][..., :3]) - np.cross(w, v)],
                                         axis=-1)
        if qf is not None:
            fo[..., su] = np.concatenate([qf[..., tv][..., 3:], _rotate(Rt, qf[..., tv][..., :3])], axis=-1)
    model._check_quaternions("from_mujoco", "q", qo)
    return _result(qo, [uo, ao, fo])
