#!/usr/bin/python3
"""Write models/spacecraft_deploy_panel.json: the assumed modes of the deployable solar panel of
models/spacecraft_deploy.urdf (soadyn's flexible-body data file, docs/guide.md "Where flexible
models come from").

The panel is 1 m deep (its body x axis, away from the hinge line) and 2 m wide (y, along the hinge
line), 15 kg, cantilevered at its root fitting (x = 0). It is lumped on 11 nodes along x, 10 equal
strips of 1.5 kg (half strips at the ends); each strip spreads across the 2 m width, so a node
carries the rotary inertia m w^2 / 12 about x (torsion) and about z (in-plane rotation).

Four assumed modes, the uniform cantilever's (Euler-Bernoulli flap bending, Saint-Venant torsion):
  flap 1, flap 2    deflection along z (the panel's normal), the cantilever eigenfunctions
                    cosh bx - cos bx - s (sinh bx - sin bx), b L = 1.87510, 4.69409; rotation about
                    y = -dz/dx. f = (b L)^2 / (2 pi L^2) sqrt(EI / mu).
  torsion 1, 2      rotation about x, sin((2k - 1) pi x / 2L); f = (2k - 1) / (4 L) sqrt(GJ / (mu w^2 / 12)).
EI and GJ are chosen for the figures of a light honeycomb panel: flap 1 at 0.60 Hz, torsion 1 at
1.50 Hz; then flap 2 is 3.76 Hz and torsion 2 4.50 Hz. Sampled on the lumped nodes the
eigenfunctions are not exactly mass-orthogonal, so each shape is made so (Gram-Schmidt under the
lumped mass) before it is written: soadyn takes K_m = diag(omega^2 m_r) from the frequencies,
which holds for mass-orthogonal shapes. No damping (the example conserves energy).

Run from the repository's root: /usr/bin/python3 scripts/deploy_panel_modes.py
"""
import json
import math

DEPTH = 1.0          # m, along x
WIDTH = 2.0          # m, along y
MASS = 15.0          # kg
ELEMENTS = 10
F_FLAP1 = 0.60       # Hz
F_TORSION1 = 1.50    # Hz

MU = MASS / DEPTH                       # kg/m
ROT_PER_LENGTH = MU * WIDTH ** 2 / 12   # kg m, the torsional inertia per length
BETA_L = (1.8751040687119611, 4.6940911329741746)  # the cantilever's roots of cos cosh = -1
EI = MU * (2 * math.pi * F_FLAP1 * DEPTH ** 2 / BETA_L[0] ** 2) ** 2
GJ = ROT_PER_LENGTH * (4 * DEPTH * F_TORSION1) ** 2


def flap(n, x):
    """The n-th cantilever eigenfunction and its slope at x."""
    b = BETA_L[n] / DEPTH
    s = (math.cosh(BETA_L[n]) + math.cos(BETA_L[n])) / (math.sinh(BETA_L[n]) + math.sin(BETA_L[n]))
    w = math.cosh(b * x) - math.cos(b * x) - s * (math.sinh(b * x) - math.sin(b * x))
    dw = b * (math.sinh(b * x) + math.sin(b * x) - s * (math.cosh(b * x) - math.cos(b * x)))
    return w, dw


def main():
    xs = [DEPTH * j / ELEMENTS for j in range(ELEMENTS + 1)]
    strip = MASS / ELEMENTS
    masses = [strip * (0.5 if j in (0, ELEMENTS) else 1.0) for j in range(ELEMENTS + 1)]
    spread = [m * WIDTH ** 2 / 12 for m in masses]  # about x and about z
    # the diagonal of the lumped mass per node: [Ixx, Iyy, Izz, m, m, m]
    weights = [[i, 0.0, i, m, m, m] for m, i in zip(masses, spread)]

    modes = []
    for n in range(2):
        f = BETA_L[n] ** 2 / (2 * math.pi * DEPTH ** 2) * math.sqrt(EI / MU)
        shape = [[0.0, -flap(n, x)[1], 0.0, 0.0, 0.0, flap(n, x)[0]] for x in xs]
        modes.append(("flap %d" % (n + 1), f, shape))
    for k in range(2):
        f = (2 * k + 1) / (4 * DEPTH) * math.sqrt(GJ / ROT_PER_LENGTH)
        shape = [[math.sin((2 * k + 1) * math.pi * x / (2 * DEPTH)), 0, 0, 0, 0, 0] for x in xs]
        modes.append(("torsion %d" % (k + 1), f, shape))
    modes.sort(key=lambda mode: mode[1])

    def dot(a, b):
        return sum(w[i] * a[j][i] * b[j][i] for j, w in enumerate(weights) for i in range(6))

    done = []
    for name, f, shape in modes:
        for _, _, kept in done:  # Gram-Schmidt under the lumped mass
            c = dot(shape, kept) / dot(kept, kept)
            shape = [[v - c * u for v, u in zip(row, krow)] for row, krow in zip(shape, kept)]
        shape[0] = [0.0] * 6  # the root node is clamped
        done.append((name, f, shape))

    doc = {
        "format": "soadyn-flex", "version": 1, "mass_model": "full",
        "nodes": [{"position": [x, 0, 0], "mass": m, "inertia": [i, 0, 0, 0, 0, 0, 0, 0, i]}
                  for x, m, i in zip(xs, masses, spread)],
        "modes": [{"frequency_hz": round(f, 6), "shape": [[round(v, 15) for v in row] for row in shape]}
                  for _, f, shape in done],
    }
    with open("models/spacecraft_deploy_panel.json", "w") as out:  # a node, a mode's row per line
        out.write('{"format": "soadyn-flex", "version": 1, "mass_model": "full",\n "nodes": [\n  ')
        out.write(",\n  ".join(json.dumps(node) for node in doc["nodes"]))
        out.write('],\n "modes": [\n')
        out.write(",\n".join('  {"frequency_hz": %s, "shape": [\n   %s]}'
                              % (mode["frequency_hz"], ",\n   ".join(json.dumps(row) for row in mode["shape"]))
                              for mode in doc["modes"]))
        out.write("]}\n")
    for name, f, _ in done:
        print("%-10s %.4f Hz" % (name, f))
    print("EI = %.4g N m^2, GJ = %.4g N m^2" % (EI, GJ))


if __name__ == "__main__":
    main()
