/*
 * src/flex/flex_body_internal.h — the flexible body's precomputed modal model (flex_body.c's file
 * comment defines every array) and two helpers of its node frames, for the files that work on it
 * besides flex_body.c: its tangent operations (flex_tangent.c).
 */
#ifndef SOADYN_FLEX_BODY_INTERNAL_H
#define SOADYN_FLEX_BODY_INTERNAL_H

#include "flex/flex_body.h"

struct sd_flex_body {
    sd_flex_desc desc; /* points at the owned copies below */
    int n, nm;
    double *pos, *mass, *inertia, *modes, *K, *D; /* copies (inertia, D may be NULL) */
    char *source_file;
    /* precomputed (see the file comment) */
    double m, h0[3], I0[9];
    double *Hp, *JQ, *N0; /* 3 per mode */
    double *A;            /* 9 per mode */
    /* 9 per pair, stored as C_sr at [(r nm + s) 9 + 3a + b] = sum m_j P_j,s[a] P_j,r[b], so that the
     * sum over s of F_r runs through contiguous memory */
    double *C;
    double *G2;           /* 3 per pair: G2_sr at [(r nm + s) 3 + c], contiguous in s likewise */
    double *Mff;          /* nm x nm */
    double *M0;           /* M_m at eta = 0, (6 + nm)^2 */
    size_t bytes;
};

/* The coefficients of exp and of the right Jacobian of SO(3) as functions of s = |theta|^2 (c0, c1,
 * c2) and the derivatives d1 = dc1/ds, d2 = dc2/ds (flex_body.c, node frames). */
void sd_flex_so3_coeffs(double s, double *c0, double *c1, double *c2, double *d1, double *d2);
/* theta = Q_t x and the node's displacement P_t x for the modal vector x. */
void sd_flex_node_deflection(const sd_flex_body *fb, int t, const double *x, double theta[3], double d[3]);

#endif /* SOADYN_FLEX_BODY_INTERNAL_H */
