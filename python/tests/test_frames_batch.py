"""Named frames, the Pinocchio-style names, and the fast paths:

- a frame (a link merged by a fixed joint) gives the placement, Jacobian, velocity and acceleration
  of the same link loaded as a body of its own (keep_fixed=True, the same coordinates), to 1e-14;
- kinetic_energy = 1/2 u^T M u, potential_energy = energies()["potential"], frame_placement;
- batched forward and inverse dynamics through soadyn/batch.h: with the SIMD kernel each state's
  result is the same bits whatever the number of threads and the batch's size, and the single
  call's up to round-off (the backward error of soadyn/batch.h: ID at the batch's qdd gives back
  tau to 1e-13 of the problem's scale); without it (simd=False) the single calls' bits;
- out= returns the array it was given, filled with the same bits as a new one; a read-only out is
  refused; the fast path (ndarrays) and the general path (lists) agree bit for bit.
"""
import os

import numpy as np
import pytest

import soadyn
from conftest import MODELS, rel


def path(name):
    return os.path.join(MODELS, name)


@pytest.mark.parametrize("name,floating", [("iiwa14.urdf", False), ("quadruped.urdf", True)])
def test_frames_equal_kept_bodies(name, floating):
    merged = soadyn.load(path(name), floating=floating)
    kept = soadyn.load(path(name), floating=floating, keep_fixed=True)
    assert merged.frame_names and merged.nq == kept.nq and merged.nv == kept.nv
    rng = np.random.default_rng(6)
    q = merged.random_configuration(6)
    u, qdd = rng.uniform(-1, 1, merged.nv), rng.uniform(-1, 1, merged.nv)
    R, p, V, A = kept.body_states(q, u, qdd)
    point = np.array([0.1, -0.2, 0.3])
    for f in merged.frame_names:
        if f not in kept.body_names:
            continue
        k = kept.body_index(f)
        body, Rf, pf = merged.frame_placement_in_body(f)
        assert body in merged.body_names and Rf.shape == (3, 3) and pf.shape == (3,)
        Rw, pw = merged.frame_placement(q, f)
        assert rel(Rw, R[k]) < 1e-14 and rel(pw, p[k]) < 1e-14
        assert rel(merged.frame_velocity(q, u, f), V[k]) < 1e-14
        assert rel(merged.frame_acceleration(q, u, qdd, f), A[k]) < 1e-14
        assert rel(merged.jacobian(q, f, point), kept.jacobian(q, k, point)) < 1e-14
        # task frames of the operational space and forces at a point take the frame too
        Rp = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
        assert rel(merged.operational_space_compliance(q, [(f, Rp, point)]),
                   kept.operational_space_compliance(q, [(k, Rp, point)])) < 1e-13
        z = np.zeros(merged.nv)  # the force's generalized force -J^T F, the same on both models
        fm = merged.external_force_at_point(q, f, point, (1.0, 2.0, 3.0))
        fk = kept.external_force_at_point(q, k, point, (1.0, 2.0, 3.0))
        assert rel(merged.inverse_dynamics(q, z, z, fm) - merged.inverse_dynamics(q, z, z),
                   kept.inverse_dynamics(q, z, z, fk) - kept.inverse_dynamics(q, z, z)) < 1e-13
        # batched over q
        Q = np.stack([q, merged.random_configuration(7)])
        assert rel(merged.frame_placement(Q, f)[1][0], pw) == 0
    with pytest.raises(soadyn.ArgumentError, match="no body or frame named 'nope'"):
        merged.jacobian(q, "nope")


def test_pinocchio_names():
    m = soadyn.load(path("iiwa14.urdf"))
    rng = np.random.default_rng(1)
    Q = m.random_configuration(1, 3)
    U = rng.uniform(-1, 1, (3, m.nv))
    for i in range(3):
        assert abs(m.kinetic_energy(Q[i], U[i]) - 0.5 * U[i] @ m.mass_matrix(Q[i]) @ U[i]) < 1e-14 * 10
        assert m.potential_energy(Q[i]) == m.energies(Q[i], U[i])["potential"]
    assert np.array_equal(m.kinetic_energy(Q, U), [m.kinetic_energy(Q[i], U[i]) for i in range(3)])
    assert np.array_equal(m.potential_energy(Q), [m.potential_energy(Q[i]) for i in range(3)])
    tip = m.body_names[-1]
    assert np.array_equal(soadyn.frame_placement(m, Q[0], tip)[1], m.body_placements(Q[0])[1][-1])
    assert np.array_equal(soadyn.center_of_mass(m, Q[0]), m.center_of_mass(Q[0]))


@pytest.mark.parametrize("name,floating", [("iiwa14.urdf", False), ("quadruped.urdf", True)])
def test_batch_threads_and_simd(name, floating):
    m = soadyn.load(path(name), floating=floating)
    lanes, note = m.simd_lanes()
    rng = np.random.default_rng(11)
    n = 37  # not a multiple of the lanes: a part-filled last group
    Q = m.random_configuration(11, n)
    U = rng.uniform(-1, 1, (n, m.nv))
    T = rng.uniform(-1, 1, (n, m.nv))
    F = rng.uniform(-1, 1, (n, m.nbodies, 6))
    for fn, X in (("forward_dynamics", T), ("inverse_dynamics", T)):
        call = getattr(m, fn)
        ref = call(Q, U, X, F)
        single = np.array([call(Q[i], U[i], X[i], F[i]) for i in range(n)])
        for threads in (1, 2):
            assert np.array_equal(call(Q, U, X, F, threads=threads), ref), (fn, threads)
            assert np.array_equal(call(Q, U, X, F, threads=threads, simd=False), single), (fn, threads)
        for lo, hi in ((0, 1), (3, 8), (5, 37)):  # other batch sizes, other lanes: the same bits
            assert np.array_equal(call(Q[lo:hi], U[lo:hi], X[lo:hi], F[lo:hi], threads=2), ref[lo:hi])
        if lanes:
            assert not np.array_equal(ref, single) or fn == "inverse_dynamics"  # the kernel ran
        # backward error of the SIMD results (soadyn/batch.h)
        if fn == "forward_dynamics":
            for i in range(n):
                tau_back = m.inverse_dynamics(Q[i], U[i], ref[i], F[i])
                M = m.mass_matrix(Q[i])
                scale = max(np.max(np.abs(T[i])), np.max(np.abs(M) @ np.abs(ref[i])),
                            np.max(np.abs(m.bias_forces(Q[i], U[i], F[i]))), np.max(np.abs(F[i])))
                assert np.max(np.abs(tau_back - T[i])) <= 1e-13 * scale
        else:
            assert rel(ref, single) < 1e-12
    # mass matrices: the single calls on each thread
    for threads in (1, 2):
        assert np.array_equal(m.mass_matrix(Q, threads=threads), np.array([m.mass_matrix(q) for q in Q]))
        assert np.array_equal(m.mass_matrix_inverse(Q, threads=threads),
                              np.array([m.mass_matrix_inverse(q) for q in Q]))
    with pytest.raises(soadyn.ArgumentError, match="threads"):
        m.forward_dynamics(Q, U, T, threads=0)


def test_batch_errors_name_the_state():
    m = soadyn.load(path("iiwa14.urdf"))
    Q = m.random_configuration(2, 9)
    Q[6, 2] = np.nan
    for threads in (1, 2):
        with pytest.raises(soadyn.ArgumentError, match=r"state 6: sd_forward_dynamics: q\[2\] is not finite"):
            m.forward_dynamics(Q, np.zeros(7), np.zeros(7), threads=threads)


def test_out_and_paths():
    m = soadyn.load(path("iiwa14.urdf"))
    rng = np.random.default_rng(2)
    q, u, tau = m.random_configuration(2), rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
    want = m.forward_dynamics(q, u, tau)
    out = np.empty(7)
    assert m.forward_dynamics(q, u, tau, out=out) is out and np.array_equal(out, want)
    assert np.array_equal(m.forward_dynamics(list(q), tuple(u), list(tau)), want)  # the general path
    f = rng.uniform(-1, 1, (m.nbodies, 6))
    assert np.array_equal(m.forward_dynamics(q, u, tau, f), m.forward_dynamics(q, u, tau, f.tolist()))
    tau_out = np.empty(7)
    assert m.inverse_dynamics(q, u, want, out=tau_out) is tau_out and rel(tau_out, tau) < 1e-12
    ro = np.empty(7)
    ro.flags.writeable = False
    with pytest.raises(soadyn.ArgumentError, match="out"):
        m.forward_dynamics(q, u, tau, out=ro)
    Q = np.tile(q, (4, 1))
    OUT = np.empty((4, 7))
    assert m.forward_dynamics(Q, u, tau, out=OUT) is OUT
    with pytest.raises(soadyn.ArgumentError, match="out"):
        m.forward_dynamics(Q, u, tau, out=np.empty(7))


SITES_MJCF = """<mujoco model="sites">
  <default><default class="s"><site pos="0.1 0.2 0.3" quat="0.5 0.5 -0.5 0.5"/></default></default>
  <worldbody>
    <site name="on_world" pos="1 0 0"/>
    <body name="a" pos="0 0.2 1" euler="10 20 30">
      <joint name="j1" type="hinge" axis="0 0 1" pos="0.1 0 0"/>
      <joint name="j2" type="hinge" axis="0 1 0" pos="0 0.1 0.05"/>
      <geom type="sphere" size="0.1" mass="1"/>
      <site name="by_class" class="s"/>
      <site name="own" pos="0.5 0 -0.2" euler="0 90 0"/>
      <site pos="0 0 0"/>
      <site name="capsule" type="capsule" fromto="0 0 0 0 0 1" size="0.01"/>
    </body>
  </worldbody>
</mujoco>
"""


def _rot(axis, angle):
    """Rotation by `angle` about the unit `axis` (Rodrigues)."""
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def test_mjcf_sites_are_frames(tmp_path):
    """MJCF named sites are frames: placed as MuJoCo places them, written out here from MJCF's rules
    (body pos and euler in degrees about the moving axes x, y, z; each hinge turns the body about its anchor in
    turn; the site's pos and quat, from its class too), on a body whose two joints make soadyn carry
    it on the last link. Sites without a name, on the world or placed by fromto are counted in the
    model's warning."""
    f = tmp_path / "sites.xml"
    f.write_text(SITES_MJCF)
    m = soadyn.load(f)
    assert set(m.frame_names) == {"by_class", "own"}
    assert any("3 sites without a name, on the world or with fromto" in w for w in m.warnings)
    d = np.pi / 180
    R0 = _rot([1, 0, 0], 10 * d) @ _rot([0, 1, 0], 20 * d) @ _rot([0, 0, 1], 30 * d)  # eulerseq "xyz": moving axes
    p0 = np.array([0, 0.2, 1.0])
    w, x, y, z = 0.5, 0.5, -0.5, 0.5
    Rq = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                   [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                   [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    sites = {"by_class": (Rq, np.array([0.1, 0.2, 0.3])), "own": (_rot([0, 1, 0], 90 * d), np.array([0.5, 0, -0.2]))}
    for q in (np.zeros(2), np.array([0.7, -1.1]), np.array([-2.0, 0.4])):
        R, p = R0.copy(), p0.copy()
        for (axis, anchor), angle in zip((([0, 0, 1], [0.1, 0, 0]), ([0, 1, 0], [0, 0.1, 0.05])), q):
            turn = _rot(axis, angle)  # X <- X Trans(anchor) Rot(axis, angle) Trans(-anchor)
            p = p + R @ (np.asarray(anchor) - turn @ anchor)
            R = R @ turn
        for name, (Rs, ps) in sites.items():
            Rw, pw = m.frame_placement(q, name)
            assert np.max(np.abs(Rw - R @ Rs)) < 1e-14 and np.max(np.abs(pw - (p + R @ ps))) < 1e-14, (name, q)
