/*
 * src/algorithms/node_energy.c — what follows from the node engine's placements and velocities:
 * centre of mass, spatial momentum, kinetic, gravity and strain energies (node_engine.h says where
 * the FE nodes are counted). The strain energy 1/2 eta^T K_m eta is public (soadyn/flex.h).
 */
#include <string.h>

#include "flex/flex_body.h"
#include "node_engine.h"

/* The mass of body k's nodes and their first moment sum m_j x_j in world coordinates, nodes at their
 * deformed positions l0_j + Pi_t^j eta (F_k axes), the body's rigid part included. */
static double body_first_moment(const sd_model *m, const sd_data *d, int k, double mx[3])
{
    const sd_transform *X = &d->Xworld[k];
    if (m->flex && m->flex[k]) {
        double h[3], w[3];
        const double mass = sd_flex_first_moment(m->flex[k], d->nodes->q + m->mode_q_index[k], h);
        sd_m3_mul_v(X->R, h, w);
        for (int i = 0; i < 3; ++i) mx[i] = w[i] + mass * X->p[i];
        return mass;
    }
    double c[3];
    sd_transform_point(X, m->com + 3 * k, c);
    for (int i = 0; i < 3; ++i) mx[i] = m->mass[k] * c[i];
    return m->mass[k];
}

sd_status sd_nodes_center_of_mass_world(const sd_model *m, sd_data *d, double com[3])
{
    const char *fn = "sd_center_of_mass_world";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD);
    if (st != SD_OK) return st;
    if (!com) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    double mass = 0.0;
    com[0] = com[1] = com[2] = 0.0;
    for (int k = 0; k < m->n; ++k) {
        double mx[3];
        mass += body_first_moment(m, d, k, mx);
        for (int i = 0; i < 3; ++i) com[i] += mx[i];
    }
    if (mass <= 0) {
        com[0] = com[1] = com[2] = 0.0;
        return SD_OK;
    }
    for (int i = 0; i < 3; ++i) com[i] /= mass;
    return sd_check_output(d, fn, "com", com, 3, SD_CAUSE_OVERFLOW);
}

sd_status sd_nodes_potential_energy(const sd_model *m, sd_data *d, double *U)
{
    const char *fn = "sd_potential_energy";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD);
    if (st != SD_OK) return st;
    if (!U) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    double sum = 0.0;
    for (int k = 0; k < m->n; ++k) {
        double mx[3];
        body_first_moment(m, d, k, mx);
        sum -= sd_v3_dot(m->gravity, mx);
    }
    *U = sum;
    return sd_check_output(d, fn, "U", U, 1, SD_CAUSE_OVERFLOW);
}

/* out = M_m(k) V_m(k) (dim entries). */
static void node_momentum(const struct sd_node_data *nd, int k, double *out)
{
    const int dim = nd->dim[k];
    const double *M = nd->Mm + nd->mat_off[k], *V = nd->Vm + nd->vec_off[k];
    for (int i = 0; i < dim; ++i) {
        double s = 0.0;
        for (int j = 0; j < dim; ++j) s += M[i * dim + j] * V[j];
        out[i] = s;
    }
}

sd_status sd_nodes_spatial_momentum_world(const sd_model *m, sd_data *d, double h[6])
{
    const char *fn = "sd_spatial_momentum_world";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_WORLD | SD_CURRENT_VELOCITIES);
    if (st != SD_OK) return st;
    if (!h) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    memset(h, 0, 6 * sizeof(double));
    double *mv = d->nodes->scratch;
    for (int k = 0; k < m->n; ++k) {
        double hw[6];
        node_momentum(d->nodes, k, mv); /* rigid rows: the nodes' momentum about F_k (001 Eq 25) */
        sd_force_to_parent(&d->Xworld[k], mv, hw);
        for (int r = 0; r < 6; ++r) h[r] += hw[r];
    }
    return sd_check_output(d, fn, "h", h, 6, SD_CAUSE_OVERFLOW);
}

sd_status sd_nodes_kinetic_energy(const sd_model *m, sd_data *d, double *T)
{
    const char *fn = "sd_kinetic_energy";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_VELOCITIES);
    if (st != SD_OK) return st;
    if (!T) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    const struct sd_node_data *nd = d->nodes;
    double sum = 0.0, *mv = nd->scratch;
    for (int k = 0; k < m->n; ++k) { /* 1/2 V_m^T M_m V_m (001 Sec 2.2) */
        node_momentum(nd, k, mv);
        const double *V = nd->Vm + nd->vec_off[k];
        for (int i = 0; i < nd->dim[k]; ++i) sum += 0.5 * V[i] * mv[i];
        if (m->has_armature) /* the rotors' 1/2 J u^2 (dynamics.h) */
            for (int i = 0; i < m->nv_k[k]; ++i) {
                const int v = m->v_index[k] + i;
                sum += 0.5 * m->armature[v] * nd->u[v] * nd->u[v];
            }
    }
    *T = sum;
    return sd_check_output(d, fn, "T", T, 1, SD_CAUSE_OVERFLOW);
}

sd_status sd_strain_energy(const sd_model *m, sd_data *d, double *E)
{
    const char *fn = "sd_strain_energy";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_PLACEMENTS);
    if (st != SD_OK) return st;
    if (!E) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    double sum = 0.0;
    for (int k = 0; k < m->n && d->nodes; ++k)
        if (m->flex && m->flex[k]) sum += sd_flex_strain_energy(m->flex[k], d->nodes->q + m->mode_q_index[k]);
    *E = sum;
    return sd_check_output(d, fn, "E", E, 1, SD_CAUSE_OVERFLOW);
}
