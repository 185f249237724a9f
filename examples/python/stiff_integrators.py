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

The models, the bundled flexible ones with their stiffness raised 100x:
    flexible_arm    models/flexible_arm.urdf, EI x 100 (modal stiffness K_m x 100), modal damping
                    ratio 0.02
    spacecraft      models/spacecraft.urdf, likewise (free-flying bus, quaternions, three flexible
                    appendages)
    ..., zeta 1     the same with modal damping ratio 1: the stiff modes die out, BDF steps over
                    them, and RK4 at BDF's mean step is unstable (checked); where RK4 at H/10 is
                    unstable too, the implicit runs' final state is checked against the reference
The analytical Jacobian is that of the flexible bodies' modal coordinates too (soadyn/derivatives.h).
The checks printed at the end are the claims of docs/derivatives-integrators.md; the program exits
1 if one fails.
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
ap.add_argument("--quick", action="store_true", help="only the flexible arm, 0.3 s (for the test)")
args = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="soadyn_stiff_")


def stiffened(name, factor=100.0, zeta=0.02):
    """The bundled flexible model with every beam's EI x factor and modal damping ratio zeta."""
    text = open(os.path.join(args.models, name)).read()
    text = re.sub(r'EI="([0-9.eE+-]+)"', lambda m: f'EI="{float(m.group(1)) * factor:g}" damping_ratio="{zeta}"', text)
    path = os.path.join(tmp, name)
    open(path, "w").write(text)
    return soadyn.load(path)


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
    out = {label: r for label, _, _, r in rows if r is not None}
    out["reference"] = ref
    return out


failed = []


def check(what, ok):
    print(f"  check: {what}: {'yes' if ok else 'NO'}")
    if not ok:
        failed.append(what)


# (name, model, reference step, whether RK4 must fail at BDF's mean step)
cases = [("flexible_arm", lambda: stiffened("flexible_arm.urdf"), 1e-5, False)]
if not args.quick:
    cases += [("spacecraft", lambda: stiffened("spacecraft.urdf"), 1e-5, False),
              ("flexible_arm, zeta 1", lambda: stiffened("flexible_arm.urdf", zeta=1.0), 1e-5, True),
              ("spacecraft, zeta 1", lambda: stiffened("spacecraft.urdf", zeta=1.0), 1e-5, True)]
else:
    args.duration = min(args.duration, 0.3)
for name, make, h_ref, stiff in cases:
    m = make()
    out = compare(name, m, h_ref)
    if stiff:
        check("rk4 at H fails (H is past its stability bound)", "rk4 H" not in out)
    # the final state of RK4 at H/10; where that is unstable too, of the reference (RK4 at h_ref)
    r10 = out.get("rk4 H/10", out["reference"])
    against = "RK4 at H/10's" if "rk4 H/10" in out else f"RK4 at {h_ref:g} s's (RK4 at H/10 fails too)"
    tol = 10 * args.rtol * max(1.0, float(np.max(np.abs(r10.u[-1]))))
    for method in ("bdf", "radau"):
        a, d = out.get(f"{method} analytic" + (" H" if method == "radau" else "")), out.get(
            f"{method} dq" + (" H" if method == "radau" else ""))
        check(f"{method} analytic: offered on this model", a is not None)
        if a is None:
            continue
        if method == "radau":  # the same fixed steps: the totals compare the Jacobians alone
            check(f"{method} analytic: fewer RHS evaluations than {method} dq", d is None or
                  a.stats["rhs_evals"] < d.stats["rhs_evals"])
        else:  # BDF's step sequence differs between the runs (docs/derivatives-integrators.md): per step
            check(f"{method} analytic: fewer RHS evaluations per step than {method} dq", d is None or
                  a.stats["rhs_evals"] / a.stats["steps"] < d.stats["rhs_evals"] / d.stats["steps"])
        check(f"{method} analytic: final state = {against} to {tol:.1e}", error(m, a, r10) <= tol)
raise SystemExit(1 if failed else 0)
