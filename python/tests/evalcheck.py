"""Every quantity `soadyn eval --json` prints, computed through the Python package at the same
random state and compared (relative to max(1, |value|), forces and inverse dynamics relative to the
size of their terms); returns the largest difference per quantity so that the tests can assert and
print them.

The program links the static libsoadyn.a, the extension the shared libsoadyn.so; the linker's
link-time optimisation treats the two apart, and their results differ in the last bits (up to
~1e-15 relative on a floating UR5's qdd at the same inputs, the same workspace history). So the
comparison with the program is to 1e-14 on the scale of each quantity's terms; the Python layer
itself adds nothing: test_unit.py::test_same_as_c_api checks it bit for bit against the C calls."""
import numpy as np

import soadyn
from conftest import by_label, rel, soadyn_eval


def compare_with_cli(path, floating=False, seed=7):
    m = soadyn.load(path, floating=floating)
    rng = np.random.default_rng(seed)
    q = m.random_configuration(seed)
    u = rng.uniform(-1, 1, m.nv)
    tau = rng.uniform(-1, 1, m.nv)
    if m.nconstraints:  # eval assembles and projects an open state; give it a closed one
        q, _ = m.assemble(m.neutral())
        u = m.project_velocities(q, u)
    j = soadyn_eval(path, q, u, tau, floating=floating)
    cl, sl = j["coordinates"], j["speeds"]
    assert tuple(cl) == m.coordinate_labels and tuple(sl) == m.speed_labels
    qj, uj = by_label(j["q"], cl), by_label(j["u"], sl)
    d = {"q": rel(q, qj), "u": rel(u, uj)}
    q, u = qj, uj  # what the program evaluated at (the same numbers, read back)
    if m.nconstraints:
        r = m.closed_loop_forward_dynamics(q, u, tau, forces=True)
        for c, name in enumerate(m.constraint_names):
            cj = j["loops"]["constraints"][name]
            o = m.constraint_row_offsets[c]
            d["lambda"] = max(d.get("lambda", 0), rel(r["lambda"][o:o + m.constraint_nrows[c]], cj["lambda"]))
            f = cj.get("cut_force_local")  # left out when the program could not read it
            if f is not None:
                d["cut_force"] = max(d.get("cut_force", 0),
                                     rel(r["constraint_forces"][c], f["moment"] + f["force"]))
        d["rank"] = abs(r["rank"] - j["loops"]["rank"])
    else:
        r = m.interbody_forces(q, u, tau)
    qdd = r["qdd"]
    if m.nflexible == 0:
        d["qdd"] = rel(qdd, by_label(j["qdd"], sl))
    # The forces are compared on their own scale (the largest of any body): the program (static
    # library) and the extension (shared library) are optimised apart by the linker, and their
    # forward dynamics differ by an ulp (2e-17 relative on atlas' qdd), which the recursion carries
    # into the forces at the rounding of their largest terms.
    F, free, con = r["forces"], r["free"], r["constrained"]
    scale = max(1.0, float(np.max(np.abs(F)))) if F.size else 1.0
    for k, body in enumerate(m.body_names):
        bj = j["interbody_forces"][body]
        nv = m.hinge_nv[k]
        fk = np.array(bj["moment"] + bj["force"])
        d["interbody_forces"] = max(d.get("interbody_forces", 0), float(np.max(np.abs(F[k] - fk))) / scale)
        if nv:
            d["free"] = max(d.get("free", 0), float(np.max(np.abs(free[k, :nv] - bj["free"]))) / scale)
        if nv < 6:
            d["constrained"] = max(d.get("constrained", 0),
                                   float(np.max(np.abs(con[k, :6 - nv] - bj["constrained"]))) / scale)
    # inverse dynamics at the program's own qdd (the input it used), so the same numbers go in
    qdd_cli = by_label(j["qdd"], sl) if m.nflexible == 0 else qdd
    # (relative to the size of its terms M qdd and C: tau is their difference)
    tau_id = m.inverse_dynamics(q, u, qdd_cli, tree=True)  # the program prints the tree's
    id_scale = max(1.0, float(np.max(np.abs(m.mass_matrix(q) @ qdd_cli))), float(np.max(np.abs(tau_id))))
    d["inverse_dynamics"] = float(np.max(np.abs(tau_id - by_label(j["tau_inverse_dynamics"], sl)))) / id_scale
    # then in the program's order (eval_all: the workspace's last state is the same for each call)
    d["bias_forces"] = rel(m.bias_forces(q, u), by_label(j["bias_forces"], sl))
    d["mass_matrix"] = rel(m.mass_matrix(q), np.array([j["mass_matrix"][k] for k in sl]))
    if j.get("mass_matrix_inverse"):
        d["mass_matrix_inverse"] = rel(m.mass_matrix_inverse(q), np.array([j["mass_matrix_inverse"][k] for k in sl]))
    d["log_det"] = rel(m.log_det_mass_matrix(q), j["log_det_mass_matrix"])
    if j.get("det_mass_matrix") is not None and np.isfinite(j["det_mass_matrix"]) and j["det_mass_matrix"] < 1e300:
        d["det"] = abs(m.det_mass_matrix(q) - j["det_mass_matrix"]) / max(1.0, abs(j["det_mass_matrix"]))
    e = m.energies(q, u)
    d["kinetic"] = rel(e["kinetic"], j["energy"]["kinetic"])
    d["potential"] = rel(e["potential"], j["energy"]["potential"])
    return m, d
