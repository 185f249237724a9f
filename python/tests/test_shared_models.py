"""The Python package on every robot model of ../shared/models (URDF, MJCF, SDF; fixed base, and the
URDFs also floating): each quantity of `soadyn eval --json` (M, C, qdd, inter-body forces with their
free and constrained parts, inverse dynamics, M^-1, det M, log det M, energies; with loops lambda,
the cut-joint forces and the rank) equals the Python call at the same random state to 1e-14
relative (inter-body forces and inverse dynamics 5e-14 of their scale: evalcheck.py says why; the
loops' multipliers and cut-joint forces 5e-14). Models the library refuses (four_bar_loop.sdf,
README) are refused the same way here, with the C message. Batched forward dynamics (the scalar path)
equals the single calls on each. The panda's finger mimic needs the closed system (ClosedLoopError
without tree=True); talos' left_sole_link frame has the Jacobian of the link kept as a body."""
import glob
import os

import numpy as np
import pytest

import soadyn
from conftest import SHARED
from evalcheck import compare_with_cli

FILES = sorted(f for ext in ("urdf", "xml", "sdf") for f in glob.glob(os.path.join(SHARED, "*", "*." + ext)))
LOOSE = ("interbody_forces", "free", "constrained", "inverse_dynamics", "lambda", "cut_force")
CASES = [(f, False) for f in FILES] + [(f, True) for f in FILES if f.endswith(".urdf")]


@pytest.mark.parametrize("path,floating", CASES, ids=[f"{os.path.relpath(f, SHARED)}{'-floating' if fl else ''}"
                                                     for f, fl in CASES])
def test_agrees_with_cli(path, floating):
    try:
        m = soadyn.load(path, floating=floating)
    except soadyn.Error as e:
        assert e.message  # the C loader's reason, e.g. libsdformat's frame-graph error
        pytest.skip(f"refused by the library: {e.message[:200]}")
    if m.nconstraints:
        try:
            m.assemble(m.neutral())
        except soadyn.SingularError as e:
            pytest.skip(f"no closed configuration near the neutral one: {e.message[:200]}")
    m, d = compare_with_cli(path, floating=floating)
    worst = max(d, key=d.get)
    print(f"{os.path.relpath(path, SHARED)} nv {m.nv}: worst {worst} {d[worst]:.1e}")
    # 1e-14; the forces and the inverse dynamics, where the two builds' ulp differences in qdd are
    # carried through the recursions, 5e-14 of their scale (talos floating: 1.9e-14), and the loops'
    # multipliers and cut-joint forces, 5e-14 (cassie: 1.1e-14, where the two link-time optimisations
    # fuse different multiply-adds: CMakeLists.txt's -ffp-contract=fast)
    assert all(v <= (5e-14 if k in LOOSE else 1e-14) for k, v in d.items()), d
    Q = m.random_configuration(9, 3)
    U = np.ones((3, m.nv))
    T = np.zeros(m.nv)
    B = m.forward_dynamics(Q, U, T, tree=True, simd=False)
    assert all(np.array_equal(B[i], m.forward_dynamics(Q[i], U[i], T, tree=True)) for i in range(3))


def test_panda_mimic_needs_the_closed_system():
    """The panda's finger mimic is a closure constraint: forward_dynamics refuses it without tree=True
    and names the closed-system call, whose fingers move together (finger2 = finger1) where the open
    tree's do not."""
    m = soadyn.load(os.path.join(SHARED, "panda", "panda.urdf"))
    q, _ = m.assemble(m.random_configuration(3))
    u = m.project_velocities(q, np.linspace(-0.2, 0.2, m.nv))
    tau = np.linspace(-1.0, 1.0, m.nv)
    with pytest.raises(soadyn.ClosedLoopError, match="panda_finger_joint2.*closed_loop_forward_dynamics"):
        m.forward_dynamics(q, u, tau)
    i1, i2 = m.speed_labels.index("panda_finger_joint1"), m.speed_labels.index("panda_finger_joint2")
    closed = m.closed_loop_forward_dynamics(q, u, tau)["qdd"]
    tree = m.forward_dynamics(q, u, tau, tree=True)
    assert abs(closed[i1] - closed[i2]) < 1e-12 * max(1.0, abs(closed[i1]))
    assert abs(tree[i1] - tree[i2]) > 1e-3


def test_talos_sole_frame():
    """jacobian(q, "left_sole_link") on the merged model is the Jacobian of the link kept as a body."""
    talos = os.path.join(SHARED, "talos", "talos_reduced.urdf")
    merged = soadyn.load(talos, floating=True)
    kept = soadyn.load(talos, floating=True, keep_fixed=True)
    q = merged.random_configuration(5)
    body, R, p = merged.frame_placement_in_body("left_sole_link")
    assert body == "leg_left_6_link" and np.max(np.abs(p - [0.0, 0.0, -0.107])) < 1e-15
    J = merged.jacobian(q, "left_sole_link")
    assert np.max(np.abs(J - kept.jacobian(q, "left_sole_link"))) < 1e-14 * max(1.0, np.max(np.abs(J)))
    Rw, pw = merged.frame_placement(q, "left_sole_link")
    Rk, pk = kept.frame_placement(q, "left_sole_link")
    assert np.max(np.abs(Rw - Rk)) < 1e-14 and np.max(np.abs(pw - pk)) < 1e-14
