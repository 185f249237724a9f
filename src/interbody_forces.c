/*
 * src/interbody_forces.c — reading the inter-body forces f(k) that inverse dynamics or the
 * articulated-body forward dynamics left in the workspace, in the frame the caller asks for, and
 * splitting them into the parts along the hinge's free and constrained directions (003 Prop 5).
 */
#include <math.h>
#include <string.h>

#include "internal.h"

sd_status sd_interbody_force(const sd_model *m, const sd_data *d, int k, sd_force_frame frame, double f[6])
{
    if (!m || !d || !f || k < 0 || k >= m->n) return SD_E_ARGUMENT;
    if (!d->forces_valid) return SD_E_ARGUMENT; /* no dynamics call computed them */
    const double *fk = d->f + 6 * k;
    if (frame == SD_FRAME_BODY) {
        memcpy(f, fk, 6 * sizeof(double));
    } else if (frame == SD_FRAME_WORLD) { /* world axes, still about the body origin */
        double R[9];
        sd_world_rotation(m, d, k, R);
        sd_m3_mul_v(R, fk, f);
        sd_m3_mul_v(R, fk + 3, f + 3);
    } else { /* the joint frame: the body frame is XJ in it, and Xup = placement * XJ */
        sd_transform XJ;
        sd_transform_inverse(&m->placement[k], &XJ);
        sd_transform_compose(&XJ, &d->Xup[k], &XJ);
        sd_force_to_parent(&XJ, fk, f);
    }
    return SD_OK;
}

/* An orthonormal basis of the complement of span(H*(k)) in R^6, by Gram-Schmidt of the unit
 * vectors against an orthonormalised H*(k). Returns the number of columns (6 - nv). */
static int complement(const double *S, int nk, double *W)
{
    double B[36]; /* orthonormal basis, first of span(S), then the complement */
    int nb = 0;
    for (int c = 0; c < nk + 6 && nb < 6; ++c) {
        double v[6] = {0, 0, 0, 0, 0, 0};
        if (c < nk) memcpy(v, S + 6 * c, sizeof v);
        else v[c - nk] = 1.0;
        for (int pass = 0; pass < 2; ++pass) /* twice, for orthogonality to round-off */
            for (int j = 0; j < nb; ++j) {
                const double p = sd_s6_dot(v, B + 6 * j);
                for (int r = 0; r < 6; ++r) v[r] -= p * B[6 * j + r];
            }
        const double norm = sqrt(sd_s6_dot(v, v));
        if (norm < 1e-6) continue; /* already spanned */
        for (int r = 0; r < 6; ++r) B[6 * nb + r] = v[r] / norm;
        ++nb;
    }
    memcpy(W, B + 6 * nk, 6 * (size_t)(6 - nk) * sizeof(double));
    return 6 - nk;
}

sd_status sd_constraint_force_components(const sd_model *m, const sd_data *d, int k, double *free_part,
                                         double *constrained_part, double *constrained_dirs)
{
    if (!m || !d || k < 0 || k >= m->n || !d->forces_valid) return SD_E_ARGUMENT;
    const int nk = m->nv_k[k];
    const double *S = d->S + 6 * m->v_index[k], *f = d->f + 6 * k;
    double W[36];
    const int nc = complement(S, nk, W);
    for (int i = 0; i < nk && free_part; ++i) free_part[i] = sd_s6_dot(S + 6 * i, f); /* H(k) f(k) = T(k) */
    for (int i = 0; i < nc && constrained_part; ++i) constrained_part[i] = sd_s6_dot(W + 6 * i, f);
    if (constrained_dirs) memcpy(constrained_dirs, W, 6 * (size_t)nc * sizeof(double));
    return SD_OK;
}
