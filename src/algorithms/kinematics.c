/*
 * src/algorithms/kinematics.c — placements, velocities and accelerations (base-to-tips scatters, 004 Alg 3.1
 * first loop), and what follows from them: Jacobians, centre of mass, momentum, energies, external
 * forces at points.
 *
 * Glossary: see internal.h. V(k) = phi*(parent, k) V(parent) + H*(k) u(k);
 * a(k) = V(k) x H*(k) u(k) + d(H*)/dt u(k); b(k) = V(k) x* M(k) V(k) - f_ext(k).
 */
#include <string.h>

#include "internal.h"
#include "node_kinds.h"

void sd_base_acceleration(const sd_model *m, double a0[6])
{
    /* giving the base the acceleration -g puts every body's weight into M alpha (004 Sec 8) */
    a0[0] = a0[1] = a0[2] = 0.0;
    a0[3] = -m->gravity[0];
    a0[4] = -m->gravity[1];
    a0[5] = -m->gravity[2];
}

/* Xworld(k) = Xworld(parent) Xup(k). Out of line: its aligned temporary would otherwise make
 * every body's placement (inlined into the sweeps) realign the stack, also when no world
 * placements are asked for (ID, ABA without world forces). */
SD_NOINLINE static void body_world(const sd_model *m, sd_data *d, int k)
{
    if (m->parent[k] < 0) d->Xworld[k] = d->Xup[k];
    else sd_transform_compose(&d->Xworld[m->parent[k]], &d->Xup[k], &d->Xworld[k]);
}

/* Xup(k) = joint placement * X_J(q), H*(k), and Xworld(k) when asked; s, c: sin and cos of its
 * angle (sd_hinge_sincos4). */
static inline void body_placement(const sd_model *m, sd_data *d, int k, const double *q, double s, double c,
                                  int with_world)
{
    sd_hinge_placement(m, k, d->hinge_sel[k], d->hinge_sgn[k], q + m->q_index[k], s, c, &d->Xup[k],
                       d->S + 6 * m->v_index[k]);
    if (with_world) body_world(m, d, k);
}

/* The sweeps below go in groups of four bodies, whose revolute angles take one vector sincos. */

void sd_update_placements(const sd_model *m, sd_data *d, const double *q, int with_world)
{
    for (int k0 = 0; k0 < m->n; k0 += 4) {
        double s[4], c[4];
        sd_hinge_sincos4(m, d->hinge_sel, d->hinge_sgn, q, k0, s, c);
        for (int k = k0; k < k0 + 4 && k < m->n; ++k) body_placement(m, d, k, q, s[k - k0], c[k - k0], with_world);
    }
    d->current = SD_CURRENT_PLACEMENTS | (with_world ? SD_CURRENT_WORLD : 0u);
    d->params_generation = m->params_generation;
}

void sd_update_world(const sd_model *m, sd_data *d)
{
    for (int k = 0; k < m->n; ++k) {
        if (m->parent[k] < 0) d->Xworld[k] = d->Xup[k];
        else sd_transform_compose(&d->Xworld[m->parent[k]], &d->Xup[k], &d->Xworld[k]);
    }
    d->current |= SD_CURRENT_WORLD;
}

void sd_world_rotation(const sd_model *m, const sd_data *d, int k, double R[9])
{
    if (d->current & SD_CURRENT_WORLD) {
        memcpy(R, d->Xworld[k].R, 9 * sizeof(double));
        return;
    }
    memcpy(R, d->Xup[k].R, 9 * sizeof(double));
    for (int j = m->parent[k]; j >= 0; j = m->parent[j]) { /* R = R_up(j) R */
        double t[9];
        sd_m3_mul(d->Xup[j].R, R, t);
        memcpy(R, t, sizeof t);
    }
}

void sd_hinge_motion(const sd_model *m, const sd_data *d, int k, const double *x, double out[6])
{
    const double *S = d->S + 6 * m->v_index[k], *xk = x + m->v_index[k];
    memset(out, 0, 6 * sizeof(double));
    for (int i = 0; i < m->nv_k[k]; ++i)
        for (int r = 0; r < 6; ++r) out[r] += S[6 * i + r] * xk[i];
}

/* V(k), a(k), b(k) of body k, whose parent's V is known. */
static void body_velocities(const sd_model *m, sd_data *d, int k, const double *q, const double *u,
                            const double *f_ext)
{
    double *V = d->V + 6 * k, *a = d->a + 6 * k, *b = d->b + 6 * k;
    if (!u) {
        memset(V, 0, 6 * sizeof(double));
        memset(a, 0, 6 * sizeof(double));
        memset(b, 0, 6 * sizeof(double));
    } else {
        const int sel = d->hinge_sel[k];
        double MV[6];
        if (m->parent[k] < 0) memset(V, 0, 6 * sizeof(double)); /* the inertial frame does not move */
        else sd_motion_to_child_plane(&d->Xup[k], d->hinge_plane[k], d->V + 6 * m->parent[k], V);
        if (sel >= 0) { /* H* = sgn e_sel: V += H* u, a = V x H* u */
            const double w = d->hinge_sgn[k] * u[m->v_index[k]];
            V[sel] += w;
            sd_motion_cross_axis(V, sel, w, a);
        } else {
            double vJ[6], c[6];
            sd_hinge_motion(m, d, k, u, vJ);
            for (int r = 0; r < 6; ++r) V[r] += vJ[r];
            if (sel == SD_HINGE_SEL_VARYING) sd_hinge_velocity_term(m, k, q + m->q_index[k], u + m->v_index[k], a);
            else memset(a, 0, 6 * sizeof(double)); /* constant H*: no d(H*)/dt u */
            sd_motion_cross(V, vJ, c);
            for (int r = 0; r < 6; ++r) a[r] += c[r];
        }
        sd_rigid_inertia_mul(m->rigid + 13 * k, V, MV);
        sd_force_cross(V, MV, b);
    }
    if (f_ext)
        for (int r = 0; r < 6; ++r) b[r] -= f_ext[6 * k + r];
}

/* The motion scatter over nodes (node_kinds.h), written once: a node riding on a frame is placed and
 * moved by the rigid kernels above, a child riding on a flexible parent's node by the attachment's
 * operation; with a node workspace, each node then leaves its M(k), b(k) and node vectors there (its
 * kind's operation). One pass: on trees past the caches' size, memory traffic is the cost. */
SD_ENGINE_SWEEPS void motion_sweep(const sd_model *m, sd_data *d, const double *q, const double *u,
                                   const double *f_ext, int with_world, struct sd_node_data *nd)
{
    if (nd) sd_node_motion_begin(m, nd, q, u);
    for (int k0 = 0; k0 < m->n; k0 += 4) {
        double s[4], c[4];
        sd_hinge_sincos4(m, d->hinge_sel, d->hinge_sgn, q, k0, s, c);
        for (int k = k0; k < k0 + 4 && k < m->n; ++k) {
            if (sd_node_is_attached(nd, k)) {
                sd_attached_motion(m, d, nd, k, q, u, f_ext, with_world);
            } else {
                body_placement(m, d, k, q, s[k - k0], c[k - k0], with_world);
                body_velocities(m, d, k, q, u, f_ext);
            }
            if (nd) sd_node_motion_store(m, d, nd, k, q, u, f_ext);
        }
    }
}

SD_NOINLINE static void motion_rigid(const sd_model *m, sd_data *d, const double *q, const double *u,
                                     const double *f_ext, int with_world)
{
    motion_sweep(m, d, q, u, f_ext, with_world, NULL);
}
SD_NOINLINE static void motion_nodes(const sd_model *m, sd_data *d, const double *q, const double *u,
                                     const double *f_ext, int with_world)
{
    motion_sweep(m, d, q, u, f_ext, with_world, d->nodes);
}

void sd_update_motion(const sd_model *m, sd_data *d, const double *q, const double *u, const double *f_ext,
                      int with_world)
{
    if (d->nodes) motion_nodes(m, d, q, u, f_ext, with_world); /* the two instances (node_kinds.h) */
    else motion_rigid(m, d, q, u, f_ext, with_world);
    d->current = SD_CURRENT_PLACEMENTS | SD_CURRENT_VELOCITIES | (with_world ? SD_CURRENT_WORLD : 0u);
    d->params_generation = m->params_generation;
}

void sd_update_velocities(const sd_model *m, sd_data *d, const double *q, const double *u, const double *f_ext)
{
    if (d->nodes) {
        sd_update_motion(m, d, q, u, f_ext, 0);
        return;
    }
    for (int k = 0; k < m->n; ++k) body_velocities(m, d, k, q, u, f_ext);
    d->current = (d->current & (SD_CURRENT_PLACEMENTS | SD_CURRENT_WORLD)) | SD_CURRENT_VELOCITIES;
}

/* alpha(k) = phi*(parent, k) alpha(parent) + H*(k) qdd(k) + a(k) over nodes (001 Eq 26; the base at
 * rest, so without gravity), a child on a flexible parent's node with Y(k) eta-ddot(parent); a
 * flexible node keeps alpha_m = [alpha; eta-ddot] in the workspace too. Not a hot path: one instance. */
static void acceleration_sweep(const sd_model *m, sd_data *d, const double *qdd)
{
    struct sd_node_data *nd = d->nodes;
    for (int k = 0; k < m->n; ++k) {
        double *alpha = d->alpha + 6 * k;
        if (m->parent[k] < 0) memset(alpha, 0, 6 * sizeof(double));
        else sd_motion_to_child(&d->Xup[k], d->alpha + 6 * m->parent[k], alpha);
        for (int r = 0; r < 6; ++r) alpha[r] += d->a[6 * k + r];
        sd_node_child_motion_modes(m, nd, k, qdd, alpha);
        if (qdd) {
            double aJ[6];
            sd_hinge_motion(m, d, k, qdd, aJ);
            for (int r = 0; r < 6; ++r) alpha[r] += aJ[r];
        }
        sd_node_acceleration_store(m, nd, k, alpha, qdd);
    }
}

sd_status sd_kinematics(const sd_model *m, sd_data *d, const double *q, const double *u, const double *qdd)
{
    const char *fn = "sd_kinematics";
    sd_status st = sd_check_call(m, d, fn, q, u, qdd, NULL, NULL);
    if (st != SD_OK) return st;
    sd_update_motion(m, d, q, u, NULL, 1);
    acceleration_sweep(m, d, qdd);
    d->alpha_has_gravity = 0;
    d->current |= SD_CURRENT_ACCELERATIONS;
    const size_t n = (size_t)m->n; /* the modal rates are u and qdd's, checked on the way in */
    if ((st = sd_check_output(d, fn, "world placements", (const double *)d->Xworld, 12 * n, SD_CAUSE_OVERFLOW)))
        return st;
    if ((st = sd_check_output(d, fn, "velocities", d->V, 6 * n, SD_CAUSE_OVERFLOW))) return st;
    return sd_check_output(d, fn, "accelerations", d->alpha, 6 * n, SD_CAUSE_OVERFLOW);
}

/* The readers below check what they read is current (sd_check_reader), so a value of an earlier
 * state, or of no state at all, is an error and never a silent answer. */

sd_status sd_body_placement_world(const sd_model *m, sd_data *d, int body, sd_transform *X)
{
    const char *fn = "sd_body_placement_world";
    sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD);
    if (st == SD_OK) st = sd_check_body(m, d, fn, body);
    if (st != SD_OK) return st;
    if (!X) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    *X = d->Xworld[body];
    return sd_check_output(d, fn, "placement", (const double *)X, 12, SD_CAUSE_OVERFLOW);
}

sd_status sd_body_velocity(const sd_model *m, sd_data *d, int body, double V[6])
{
    const char *fn = "sd_body_velocity";
    sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_VELOCITIES);
    if (st == SD_OK) st = sd_check_body(m, d, fn, body);
    if (st != SD_OK) return st;
    if (!V) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    memcpy(V, d->V + 6 * body, 6 * sizeof(double));
    return sd_check_output(d, fn, "V", V, 6, SD_CAUSE_OVERFLOW);
}

sd_status sd_body_acceleration(const sd_model *m, sd_data *d, int body, double acc[6])
{
    const char *fn = "sd_body_acceleration";
    sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_ACCELERATIONS);
    if (st == SD_OK) st = sd_check_body(m, d, fn, body);
    if (st != SD_OK) return st;
    if (!acc) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    memcpy(acc, d->alpha + 6 * body, 6 * sizeof(double));
    if (d->alpha_has_gravity) { /* remove the base's -g, seen in the body's axes */
        double g[3], R[9];
        sd_world_rotation(m, d, body, R);
        sd_m3t_mul_v(R, m->gravity, g);
        for (int i = 0; i < 3; ++i) acc[3 + i] += g[i];
    }
    return sd_check_output(d, fn, "acceleration", acc, 6, SD_CAUSE_OVERFLOW);
}

sd_status sd_frame_placement_world(const sd_model *m, sd_data *d, int frame, sd_transform *X)
{
    const char *fn = "sd_frame_placement_world";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD);
    if (st != SD_OK) return st;
    if (frame < 0 || frame >= m->nframes)
        return sd_data_fail(d, SD_E_ARGUMENT, "%s: frame index %d is out of range (the model has %d frames)", fn,
                            frame, m->nframes);
    if (!X) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    sd_transform_compose(&d->Xworld[m->frame_body[frame]], &m->frame_placement[frame], X);
    return sd_check_output(d, fn, "placement", (const double *)X, 12, SD_CAUSE_OVERFLOW);
}

/* J column col = the world twist s (6, body j's axes) seen at the point p (world). */
static void jacobian_column(const sd_transform *Xw, const double s[6], const double p[3], int nv, int col, double *J)
{
    double sw[6], wxp[3];
    sd_motion_to_parent(Xw, s, sw); /* world axes, about the origin */
    sd_v3_cross(sw, p, wxp);
    for (int r = 0; r < 3; ++r) {
        J[r * nv + col] = sw[r];
        J[(3 + r) * nv + col] = sw[3 + r] + wxp[r];
    }
}

sd_status sd_jacobian_world(const sd_model *m, sd_data *d, int body, const double point[3], double *J)
{
    const char *fn = "sd_jacobian_world";
    sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD);
    if (st == SD_OK) st = sd_check_body(m, d, fn, body);
    if (st != SD_OK) return st;
    if (!point || !J) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL point or J", fn);
    const struct sd_node_data *nd = d->nodes;
    double p[3];
    sd_transform_point(&d->Xworld[body], point, p);
    memset(J, 0, 6 * (size_t)m->nv * sizeof(double));
    /* only the hinges between the base and the body move the point (the path of 004 Sec 7), and the
     * modes of an ancestor the path leaves at a node, by the columns of Y (node_engine.h: a point
     * moves with F_k, so a body's own modes have zero columns) */
    for (int j = body; j >= 0; j = m->parent[j]) {
        for (int i = 0; i < m->nv_k[j]; ++i)
            jacobian_column(&d->Xworld[j], d->S + 6 * (m->v_index[j] + i), p, m->nv, m->v_index[j] + i, J);
        const double *Y = NULL; /* the parent's modes' motion columns at j (001 Eq 14) */
        const int nmp = sd_node_parent_mode_columns(m, nd, j, &Y);
        for (int r = 0; r < nmp; ++r)
            jacobian_column(&d->Xworld[j], Y + 6 * r, p, m->nv, m->mode_v_index[m->parent[j]] + r, J);
    }
    return sd_check_output(d, fn, "J", J, 6 * (size_t)m->nv, SD_CAUSE_OVERFLOW);
}

sd_status sd_center_of_mass_world(const sd_model *m, sd_data *d, double com[3])
{
    const char *fn = "sd_center_of_mass_world";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD);
    if (st != SD_OK) return st;
    if (!com) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    double mass = 0.0;
    com[0] = com[1] = com[2] = 0.0;
    for (int k = 0; k < m->n; ++k) {
        double mx[3];
        mass += sd_node_first_moment(m, d, k, mx);
        for (int i = 0; i < 3; ++i) com[i] += mx[i];
    }
    if (mass <= 0) {
        com[0] = com[1] = com[2] = 0.0;
        return SD_OK;
    }
    for (int i = 0; i < 3; ++i) com[i] /= mass;
    return sd_check_output(d, fn, "com", com, 3, SD_CAUSE_OVERFLOW);
}

sd_status sd_spatial_momentum_world(const sd_model *m, sd_data *d, double h[6])
{
    const char *fn = "sd_spatial_momentum_world";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD | SD_CURRENT_VELOCITIES);
    if (st != SD_OK) return st;
    if (!h) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    memset(h, 0, 6 * sizeof(double));
    for (int k = 0; k < m->n; ++k) {
        double hk[6], hw[6];
        sd_node_momentum(m, d, k, hk);
        sd_force_to_parent(&d->Xworld[k], hk, hw);
        for (int r = 0; r < 6; ++r) h[r] += hw[r];
    }
    return sd_check_output(d, fn, "h", h, 6, SD_CAUSE_OVERFLOW);
}

sd_status sd_kinetic_energy(const sd_model *m, sd_data *d, double *T)
{
    const char *fn = "sd_kinetic_energy";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_VELOCITIES);
    if (st != SD_OK) return st;
    if (!T) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    double sum = 0.0;
    for (int k = 0; k < m->n; ++k) sum += sd_node_kinetic_energy(m, d, k);
    if (m->has_armature) /* 1/2 J u^2 of the rotors, of the u the workspace keeps, else recovered from V */
        sum += d->nodes ? sd_armature_energy_of_speeds(m, d->nodes->u) : sd_armature_energy(m, d);
    *T = sum;
    return sd_check_output(d, fn, "T", T, 1, SD_CAUSE_OVERFLOW);
}

sd_status sd_potential_energy(const sd_model *m, sd_data *d, double *U)
{
    const char *fn = "sd_potential_energy";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD);
    if (st != SD_OK) return st;
    if (!U) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    double sum = 0.0;
    for (int k = 0; k < m->n; ++k) {
        double mx[3];
        sd_node_first_moment(m, d, k, mx);
        sum -= sd_v3_dot(m->gravity, mx);
    }
    *U = sum;
    return sd_check_output(d, fn, "U", U, 1, SD_CAUSE_OVERFLOW);
}

sd_status sd_external_force_at_point(const sd_model *m, sd_data *d, int body, const double point[3],
                                     const double force[3], double *f_ext)
{
    const char *fn = "sd_external_force_at_point";
    sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_PLACEMENTS);
    if (st == SD_OK) st = sd_check_body(m, d, fn, body);
    if (st != SD_OK) return st;
    if (!point || !force || !f_ext) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL point, force or f_ext", fn);
    /* 003 Y^T F-bar: the force in body axes, and its moment about the body origin */
    double R[9], fb[3], n[3];
    sd_world_rotation(m, d, body, R);
    sd_m3t_mul_v(R, force, fb);
    sd_v3_cross(point, fb, n);
    for (int i = 0; i < 3; ++i) {
        f_ext[6 * body + i] += n[i];
        f_ext[6 * body + 3 + i] += fb[i];
    }
    return sd_check_output(d, fn, "f_ext", f_ext + 6 * body, 6, SD_CAUSE_OVERFLOW);
}
