#!/usr/bin/env python3
"""Load a model and evaluate its dynamics at one state, then at a batch of states.

    python3 examples/python/load_and_evaluate.py models/iiwa14.urdf [--floating]

Prints the model (bodies, joints, coordinates), then at a random configuration with random speeds
and joint forces: the mass matrix (004 Alg 4.2), its log-determinant (004 Eq 53), the bias forces,
the forward dynamics (004 Alg 6.1) and the inverse dynamics of its result (which gives the joint
forces back), the inter-body forces of the hinges (000 Eq 17), the energies; finally the forward
dynamics of 1000 states in one batched call."""
import argparse
import time

import numpy as np

import soadyn

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("model", help="a URDF, MJCF or SDF file")
ap.add_argument("--floating", action="store_true", help="a free hinge on the root link (URDF)")
args = ap.parse_args()

model = soadyn.load(args.model, floating=args.floating)
print(f"{model.name} ({model.format}): {model.nbodies} bodies, nq {model.nq}, nv {model.nv}, "
      f"mass {model.total_mass:.3f} kg")
for k, (body, joint, hinge) in enumerate(zip(model.body_names, model.joint_names, model.hinge_types)):
    parent = model.body_names[model.parents[k]] if model.parents[k] >= 0 else "world"
    print(f"  {body:24s} {hinge:9s} joint {joint} on {parent}")
for w in model.warnings:
    print("warning:", w)

rng = np.random.default_rng(1)
q = model.random_configuration(seed=1)
u = rng.uniform(-1, 1, model.nv)
tau = rng.uniform(-1, 1, model.nv)

np.set_printoptions(precision=4, suppress=True, linewidth=120)
M = model.mass_matrix(q)
print("coordinates:", ", ".join(model.coordinate_labels))
print("M(q) =\n", M)
print("log det M =", model.log_det_mass_matrix(q))
print("C(q, u) =", model.bias_forces(q, u))
qdd = model.forward_dynamics(q, u, tau)
print("qdd =", qdd)
tau_back = model.inverse_dynamics(q, u, qdd)
print(f"inverse dynamics of qdd gives tau back to {np.max(np.abs(tau_back - tau)):.1e}")
forces = model.interbody_forces(q, u, tau, frame="world")
for k, body in enumerate(model.body_names):
    f = forces["forces"][k]
    print(f"  force on {body:24s} moment {f[:3]}  force {f[3:]} (world axes)")
e = model.energies(q, u)
print(f"kinetic {e['kinetic']:.6g} J, potential {e['potential']:.6g} J")

n = 1000
Q = model.random_configuration(seed=2, n=n)
U = rng.uniform(-1, 1, (n, model.nv))
t0 = time.perf_counter()
QDD = model.forward_dynamics(Q, U, tau)  # tau broadcast to every state; SIMD across states where it can
t1 = time.perf_counter()
single = model.forward_dynamics(Q[7], U[7], tau)
print(f"{n} states in one call: {1e6 * (t1 - t0) / n:.2f} us per state ({model.simd_lanes()[1]}); "
      f"state 7 against the single call: {np.max(np.abs(QDD[7] - single)):.1e}; with simd=False, bit for bit: "
      f"{np.array_equal(model.forward_dynamics(Q, U, tau, simd=False)[7], single)}")
