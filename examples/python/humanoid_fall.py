#!/usr/bin/env python3
"""Simulate a humanoid falling, and write the page to watch it (soadyn's viewer).

    python3 examples/python/humanoid_fall.py [--model humanoid.xml] [--duration 2] [--output fall.html]

The MuJoCo humanoid (../shared/models/humanoid_mjcf/humanoid.xml by default: a free-floating torso
and 21 hinges with damping and armature) starts at the pose its file gives (upright, the torso 1.4 m up), pushed: tipping forward at
2 rad/s and moving at 1 m/s. soadyn models no contact, so there is no floor: the body tumbles as it
falls, its limbs swinging out and damped by the joints. The run is RK4 at 1 ms; the program prints
the height of the torso, the energy lost to the joints' damping, and writes the viewer page when
libsoadyn was built with the viewer (SOADYN_WITH_VIEWER), else says so. Exit status 77 when the
default model is absent (the shared models are not there)."""
import argparse
import os
import sys

import numpy as np

import soadyn

here = os.path.dirname(os.path.abspath(__file__))
default = os.environ.get("SOADYN_SHARED_MODELS", os.path.join(here, "..", "..", "..", "shared", "models"))
default = os.path.join(default, "humanoid_mjcf", "humanoid.xml")
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--model", default=None, help=f"default {default}")
ap.add_argument("--duration", type=float, default=2.0)
ap.add_argument("--output", default="humanoid_fall.html")
args = ap.parse_args()
if args.model is None:
    if not os.path.exists(default):
        print(f"skipped: {default} is absent (the shared models); give --model")
        sys.exit(77)
    args.model = default

human = soadyn.load(args.model)
root = 0
if human.hinge_types[root] != "free":
    sys.exit(f"{args.model}: the root hinge is {human.hinge_types[root]}, expected a free-floating humanoid")
q0 = human.reference()  # the pose the file gives (MuJoCo's qpos0: the torso 1.4 m up, upright)
u0 = np.zeros(human.nv)
u0[1] = 2.0  # tipping about the torso's y axis (free-hinge speeds: angular, then linear, body frame)
u0[3] = 1.0  # forward
res = human.simulate(q0, u0, duration=args.duration, dt=1e-3, every=10)
t, q, u = res
R, p = human.body_placements(q)  # every sample at once (batched)
z = p[:, root, 2]
E = res.kinetic + res.potential
print(f"{human.name}: {human.nbodies} bodies, nv {human.nv}; {len(t)} samples over {t[-1]:.2f} s, "
      f"{res.stats['steps']} RK4 steps")
for i in range(0, len(t), max(1, len(t) // 5)):
    print(f"  t = {t[i]:5.2f} s  torso height {z[i]:7.3f} m  lowest body {p[i, :, 2].min():7.3f} m")
print(f"energy {E[0]:.3f} J -> {E[-1]:.3f} J (the joints' damping takes {E[0] - E[-1]:.3f} J)")
if soadyn.has_viewer():
    soadyn.write_view(human, t, q, args.output, u=u, kinetic=res.kinetic, potential=res.potential,
                      title="humanoid falling (soadyn)")
    print(f"wrote {args.output}: open it in a browser")
else:
    print("no viewer page: libsoadyn was built without the viewer (SOADYN_WITH_VIEWER needs npm at build time)")
