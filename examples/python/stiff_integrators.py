#!/usr/bin/env python3
"""Implicit integration on stiff models: CVODE BDF with the analytical Jacobian against CVODE BDF
with its difference quotients and against RK4.

    python3 examples/python/stiff_integrators.py [--models DIR] [--duration T] [--quick]

For each model it integrates the same run (from rest, a smooth torque 1/2 A (1 - cos 2 pi t) on the
first joint, A = 0.5 N m, or 50 N m on the spacecraft's array drive: a torque that starts without
a jump leaves the stiff modes near their quasi-static deflection, where an implicit method may step
over them) with
    bdf analytic   CVODE BDF, Newton's Jacobian from model.forward_dynamics_derivatives (sim.h:
                   sd_sim_jacobian, SD_SIM_JACOBIAN_ANALYTIC)
    bdf dq         CVODE BDF, CVODE's own difference quotients (nv + nv right-hand sides each)
    radau ... H    fixed-step Radau IIA (order 5) at H, BDF's mean step (T / steps), with the
                   analytical Jacobian or forward differences
    rk4 H, H/10    RK4 at H, and at a step 10x smaller
and prints steps, Jacobian evaluations, right-hand-side (forward dynamics) evaluations, wall time
(the best of 3 runs; one with --quick) and the error of the final state against a reference (RK4 at a step of 1e-5 s), as
|q (-) q_ref| on the tangent space and |u - u_ref|, largest entry.

The models, their stiffness raised 100x:
    flexible_arm    models/flexible_arm.urdf, EI x 100 (modal stiffness K_m x 100), modal damping
                    ratio 0.02
    spacecraft      models/spacecraft.urdf, likewise (free-flying bus, quaternions)
    lumped_arm      the flexible arm's beam as 5 rigid segments joined by revolute springs of
                    stiffness 100 EI / l (a rigid tree: the derivatives take it)
    lumped_craft    the spacecraft's bus (free) with two arrays of 5 rigid segments each, springs
                    100 EI / l, bending in two planes
Where the derivatives do not take a model (flexible bodies, as soadyn/derivatives.h says), the
analytical row says so and the others still run. The checks printed at the end are the claims
of docs/derivatives-integrators.md; the program exits 1 if one fails.
The torque comes from a control callback (Python, called at every right-hand side: its cost is in
every wall time). It depends on t alone, so the analytical Jacobian, which leaves a control's
state derivatives out, is exact here: the runs ask for it by name (jacobian="analytic"; "auto"
takes difference quotients whenever there is a control).
"""
import argparse
import os
import re
import tempfile
import time

import numpy as np

import soadyn

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--models", default=os.path.join(here, "..", "..", "models"))
ap.add_argument("--duration", type=float, default=1.0)
ap.add_argument("--rtol", type=float, default=1e-6)
ap.add_argument("--atol", type=float, default=1e-8)
ap.add_argument("--quick", action="store_true", help="only the lumped spacecraft, 0.3 s (for the test)")
args = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="soadyn_stiff_")


def stiffened(name, factor=100.0, zeta=0.02):
    """The bundled flexible model with every beam's EI x factor and modal damping ratio zeta."""
    text = open(os.path.join(args.models, name)).read()
    text = re.sub(r'EI="([0-9.eE+-]+)"', lambda m: f'EI="{float(m.group(1)) * factor:g}" damping_ratio="{zeta}"', text)
    path = os.path.join(tmp, name)
    open(path, "w").write(text)
    return soadyn.load(path)


def segment_chain(prefix, parent, origin, length, mpl, n, axes):
    """URDF of a beam as n rigid segments (mass mpl l/n each) on revolute joints about `axes`
    (one segment per axis in turn), the first at `origin` of `parent`."""
    ls = length / n
    m = mpl * ls
    i_end = m * ls * ls / 12.0
    out, par, org = [], parent, origin
    for k in range(n):
        for a, axis in enumerate(axes):
            last = a == len(axes) - 1
            name = f"{prefix}{k}" + ("" if last else f"_{a}")
            mass, inertia = (m, i_end) if last else (1e-3 * m, 1e-6)
            out.append(f'<joint name="{name}_j" type="revolute"><parent link="{par}"/><child link="{name}"/>'
                       f'<origin xyz="{org}"/><axis xyz="{axis}"/><limit lower="-3" upper="3" effort="0" velocity="0"/>'
                       f'</joint><link name="{name}"><inertial><origin xyz="{ls / 2 if last else 0} 0 0"/>'
                       f'<mass value="{mass}"/><inertia ixx="1e-6" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" '
                       f'iyz="0"/></inertial></link>')
            par, org = name, "0 0 0"
        org = f"{ls} 0 0"
    return "".join(out), par


def lumped(name, body, stiffness_of):
    path = os.path.join(tmp, name + ".urdf")
    open(path, "w").write(f'<robot name="{name}" xmlns:soadyn="https://soadyn.example/urdf">{body}</robot>')
    m = soadyn.load(path)
    k = np.array([stiffness_of(lbl) for lbl in m.speed_labels])
    m.set_stiffness(k)
    m.set_damping(np.where(k > 0, 2 * 0.02 * np.sqrt(k * 1e-3), 0.0))  # light structural damping
    return m


def lumped_arm():
    chain, tip = segment_chain("seg", "hub", "0 0 0", 1.0, 1.0, 5, ["0 0 1"])
    body = ('<link name="world"/><joint name="shoulder" type="continuous"><parent link="world"/><child link="hub"/>'
            '<axis xyz="0 0 1"/></joint><link name="hub"><inertial><mass value="0.5"/><inertia ixx="0.005" '
            'iyy="0.005" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial></link>' + chain +
            f'<joint name="elbow" type="continuous"><parent link="{tip}"/><child link="link2"/>'
            '<origin xyz="0.2 0 0"/><axis xyz="0 0 1"/></joint><link name="link2"><inertial><origin xyz="0.3 0 0"/>'
            '<mass value="0.5"/><inertia ixx="0.0001" iyy="0.015" izz="0.015" ixy="0" ixz="0" iyz="0"/></inertial>'
            '</link>')
    return lumped("lumped_arm", body, lambda lbl: 100 * 50 / 0.2 if lbl.startswith("seg") else 0.0)


def lumped_craft():
    left, _ = segment_chain("left", "yoke_l", "0.1 0 0", 5.0, 4.0, 5, ["0 0 1", "0 1 0"])
    right, _ = segment_chain("right", "yoke_r", "0.1 0 0", 5.0, 4.0, 5, ["0 0 1", "0 1 0"])
    yoke = ('<joint name="sada_{s}" type="continuous"><parent link="bus"/><child link="yoke_{s}"/>'
            '<origin xyz="{x} 0 0" rpy="0 0 {yaw}"/><axis xyz="1 0 0"/></joint><link name="yoke_{s}"><inertial>'
            '<mass value="2"/><inertia ixx="6.667" iyy="0.1" izz="6.667" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    body = ('<soadyn:gravity xyz="0 0 0"/><link name="world"/><joint name="orbit" type="floating"><parent link="world"/>'
            '<child link="bus"/></joint><link name="bus"><inertial><mass value="1000"/><inertia ixx="666.667" '
            'iyy="666.667" izz="666.667" ixy="0" ixz="0" iyz="0"/></inertial></link>' +
            yoke.format(s="r", x=1, yaw=0) + right + yoke.format(s="l", x=-1, yaw=3.141592653589793) + left)
    return lumped("lumped_craft", body, lambda lbl: 100 * 2000 / 1.0 if lbl.startswith(("left", "right")) else 0.0)


def run(m, joint, amp, integrator, dt, jacobian="auto"):
    T = args.duration
    every = max(1, int(round(T / dt)))  # samples cost Python time: the start and the end only
    tau = np.zeros(m.nv)

    def torque(t, q, u):
        tau[joint] = 0.5 * amp * (1.0 - np.cos(2.0 * np.pi * t))
        return tau

    best = np.inf
    for _ in range(1 if args.quick else 3):  # the best of 3: the machine may be shared
        t0 = time.perf_counter()
        r = m.simulate(None, None, duration=T, dt=dt, integrator=integrator, control=torque, rtol=args.rtol,
                       atol=args.atol, every=every, jacobian=jacobian, max_internal_steps=10**7)
        best = min(best, time.perf_counter() - t0)
    return r, best


def error(m, r, ref):
    if not np.all(np.isfinite(r.q[-1])) or not np.all(np.isfinite(r.u[-1])):
        return np.inf
    dq = m.difference(ref.q[-1], r.q[-1])
    return float(max(np.max(np.abs(dq)), np.max(np.abs(r.u[-1] - ref.u[-1]))))


def row(label, integ, jac, dt, m, joint, amp, ref):
    """(label, (steps, Jacobians, RHS evals, wall s, error), note, result) of one run."""
    with np.errstate(all="ignore"):
        try:
            r, wall = run(m, joint, amp, integ, dt, jac)
        except soadyn.NotSupportedError as exc:  # the library's reason, without the advice to take dq
            return label, None, "not offered " + str(exc).split("; jacobian dq")[0].rsplit("not offered ", 1)[-1], None
        except soadyn.Error as exc:
            return label, None, f"failed: {exc}", None
    s = r.stats
    return label, (s["steps"], s["jacobian_evals"], s["rhs_evals"], wall, error(m, r, ref)), None, r


def compare(name, m, h_ref):
    joint = m.v_index[next(k for k in range(m.nbodies) if m.hinge_nv[k] == 1)]  # the first 1-dof joint
    amp = 50.0 if m.hinge_nv[0] == 6 else 0.5
    ref, _ = run(m, joint, amp, "rk4", h_ref)
    rows = [row("bdf analytic", "cvode-bdf", "analytic", args.duration / 100, m, joint, amp, ref),
            row("bdf dq", "cvode-bdf", "dq", args.duration / 100, m, joint, amp, ref)]
    bdf = rows[0][3] or rows[1][3]
    H = args.duration / bdf.stats["steps"]
    rows += [row(f"radau analytic H", "radau-iia", "analytic", H, m, joint, amp, ref),
             row(f"radau dq H", "radau-iia", "dq", H, m, joint, amp, ref),
             row(f"rk4 H", "rk4", "auto", H, m, joint, amp, ref),
             row(f"rk4 H/10", "rk4", "auto", H / 10, m, joint, amp, ref)]
    print(f"\n{name} (nv {m.nv}), {args.duration:g} s, rtol {args.rtol:g}, atol {args.atol:g}; H = BDF's mean step "
          f"= {H:.3g} s; error: against RK4 at {h_ref:g} s")
    print(f"  {'run':18s} {'steps':>8s} {'Jacobians':>9s} {'RHS evals':>10s} {'wall ms':>9s} {'error':>10s}")
    for label, v, note, _ in rows:
        if v is None:
            print(f"  {label:18s} {note}")
        else:
            print(f"  {label:18s} {v[0]:8d} {v[1]:9d} {v[2]:10d} {1e3 * v[3]:9.1f} {v[4]:10.2e}")
    return {label: r for label, _, _, r in rows if r is not None}


failed = []


def check(what, ok):
    print(f"  check: {what}: {'yes' if ok else 'NO'}")
    if not ok:
        failed.append(what)


cases = [("lumped_craft", lumped_craft, 1e-5)]
if not args.quick:
    cases += [("lumped_arm", lumped_arm, 1e-5), ("flexible_arm", lambda: stiffened("flexible_arm.urdf"), 1e-5),
              ("spacecraft", lambda: stiffened("spacecraft.urdf"), 1e-5)]
else:
    args.duration = min(args.duration, 0.3)
for name, make, h_ref in cases:
    m = make()
    out = compare(name, m, h_ref)
    r10 = out["rk4 H/10"]
    tol = 10 * args.rtol * max(1.0, float(np.max(np.abs(r10.u[-1]))))
    for method in ("bdf", "radau"):
        a, d = out.get(f"{method} analytic" + (" H" if method == "radau" else "")), out.get(
            f"{method} dq" + (" H" if method == "radau" else ""))
        if a is None:
            continue  # the derivatives do not take this model: said in its row
        check(f"{method} analytic: fewer RHS evaluations than {method} dq", d is None or
              a.stats["rhs_evals"] < d.stats["rhs_evals"])
        check(f"{method} analytic: final state = RK4 at H/10's to {tol:.1e}", error(m, a, r10) <= tol)
raise SystemExit(1 if failed else 0)
