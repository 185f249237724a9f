/*
 * src/algorithms/interbody_forces.c — reading the inter-body forces f(k) that inverse dynamics or the
 * articulated-body forward dynamics left in the workspace, in the frame the caller asks for, and
 * splitting them into the parts along the hinge's free and constrained directions (003 Prop 5).
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "node_engine.h"

sd_status sd_interbody_force(const sd_model *m, sd_data *d, int k, sd_force_frame frame, double f[6])
{
    const char *fn = "sd_interbody_force";
    sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_FORCES);
    if (st == SD_OK) st = sd_check_body(m, d, fn, k);
    if (st != SD_OK) return st;
    if (!f) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    const double *fk = d->f + 6 * k;
    if (frame == SD_FRAME_BODY) {
        memcpy(f, fk, 6 * sizeof(double));
    } else if (frame == SD_FRAME_WORLD) { /* world axes, still about the body origin */
        double R[9];
        sd_world_rotation(m, d, k, R);
        sd_m3_mul_v(R, fk, f);
        sd_m3_mul_v(R, fk + 3, f + 3);
    } else if (frame == SD_FRAME_JOINT) { /* the body frame is XJ in the joint frame; Xup = placement * XJ */
        sd_transform Xinv, XJ, Jf = m->placement[k];
        if (m->nflex) sd_nodes_joint_frame(m, d, k, &Jf); /* a hinge on a node moves with it */
        sd_transform_inverse(&Jf, &Xinv);
        sd_transform_compose(&Xinv, &d->Xup[k], &XJ);
        sd_force_to_parent(&XJ, fk, f);
    } else {
        return sd_data_fail(d, SD_E_ARGUMENT, "%s: unknown frame %d", fn, (int)frame);
    }
    return sd_check_output(d, fn, "f", f, 6, SD_CAUSE_OVERFLOW);
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

sd_status sd_constraint_force_components(const sd_model *m, sd_data *d, int k, double *free_part,
                                         double *constrained_part, double *constrained_dirs)
{
    const char *fn = "sd_constraint_force_components";
    sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_FORCES);
    if (st == SD_OK) st = sd_check_body(m, d, fn, k);
    if (st != SD_OK) return st;
    const int nk = m->nv_k[k];
    const double *S = d->S + 6 * m->v_index[k], *f = d->f + 6 * k;
    double W[36];
    const int nc = complement(S, nk, W);
    for (int i = 0; i < nk && free_part; ++i) free_part[i] = sd_s6_dot(S + 6 * i, f); /* H(k) f(k) = T(k) */
    for (int i = 0; i < nc && constrained_part; ++i) constrained_part[i] = sd_s6_dot(W + 6 * i, f);
    if (constrained_dirs) memcpy(constrained_dirs, W, 6 * (size_t)nc * sizeof(double));
    if (free_part && (st = sd_check_output(d, fn, "free_part", free_part, (size_t)nk, SD_CAUSE_OVERFLOW))) return st;
    if (constrained_part) return sd_check_output(d, fn, "constrained_part", constrained_part, (size_t)nc, SD_CAUSE_OVERFLOW);
    return SD_OK;
}
