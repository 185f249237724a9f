/*
 * tests/test_hinge_kernels.c — the rigid fast path's hinge kernels (issue 12 item 1) against the
 * generic computation they replace:
 *   sd_hinge_placement (a plane rotation of two placement columns for a hinge about or along a
 *   coordinate axis, by the angle's sin and cos from sd_hinge_sincos4) = placement *
 *   sd_hinge_transform (libm's sin and cos), for every axis and sign and every hinge type, also
 *   for a revolute about a tilted axis (Rodrigues' formula with the placement folded into the
 *   model's constants, hinge.c's turn_placement: the twin trees' generic side below runs it too),
 *   and that kernel within 3 ulp of the exact product;
 *   sd_motion_cross_axis = sd_motion_cross with the hinge motion;
 *   sd_motion_to_child_plane and sd_force_to_parent_plane (a revolute about e_i on an unrotated
 *   placement) = sd_motion_to_child and sd_force_to_parent, to 4 ulp of their largest term (bit for
 *   bit without fused multiply-adds), and sd_sym6_add_to_parent_plane = sd_sym6_add_to_parent to a
 *   few ulp;
 *   every algorithm on random trees whose revolute and prismatic axes are +-x, +-y, +-z (the fast
 *   path) = the same algorithm on the twin tree whose axes are tilted by 1e-300 (the same physics
 *   through the generic-axis path): ID, bias forces, ABA with inter-body forces, M, M^-1,
 *   placements, velocities and accelerations, at 1e-10; also with every placement unrotated, so
 *   that the plane kernels run in the sweeps.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "random_tree.h"
#include "test_util.h"
#include "workspace_read.h"

static void check_placement_kernel(uint64_t *rng)
{
    sd_model *m = random_tree(rng, 40, 0);
    sd_data *d = sd_data_new(m);
    double *q = malloc((size_t)sd_model_nq(m) * sizeof(double));
    for (int trial = 0; trial < 5; ++trial) {
        sd_configuration_random(m, rng, q);
        for (int k = 0; k < m->n; ++k) /* the generic branch, every hinge type */
            for (int sel = -1; sel < 6; ++sel) {
                if (sel >= 0 && m->hinge[k] != (sel < 3 ? SD_HINGE_REVOLUTE : SD_HINGE_PRISMATIC)) continue;
                for (int sg = 0; sg < 2; ++sg) {
                    /* a model whose hinge k selects: write the selected axis into a copy of it */
                    const double sgn = sg ? -1.0 : 1.0;
                    double saved[9];
                    memcpy(saved, m->hinge_axes + 9 * k, sizeof saved);
                    if (sel >= 0) {
                        memset(m->hinge_axes + 9 * k, 0, 3 * sizeof(double));
                        m->hinge_axes[9 * k + sel % 3] = sgn;
                    }
                    double sgn_found, S_ref[36], S[36];
                    const int found = sd_hinge_select(m, k, &sgn_found);
                    if (sel >= 0) {
                        CHECK(found == sel);
                        CHECK(sgn_found == sgn);
                    } else
                        CHECK(found < 0);
                    sd_transform XJ, Xref, X;
                    sd_hinge_transform(m, k, q + m->q_index[k], &XJ, S_ref);
                    sd_transform_compose(&m->placement[k], &XJ, &Xref);
                    /* the angle's sin and cos as the sweeps get them: k in lane 0 of four bodies */
                    signed char *sel_of = malloc((size_t)m->n);
                    double *sgn_of = malloc((size_t)m->n * sizeof(double)), s4[4], c4[4];
                    for (int j = 0; j < m->n; ++j) sel_of[j] = -1, sgn_of[j] = 1.0;
                    sel_of[k] = (signed char)found;
                    sgn_of[k] = sgn_found;
                    sd_hinge_sincos4(m, sel_of, sgn_of, q, k, s4, c4);
                    sd_hinge_placement(m, k, found, sgn_found, q + m->q_index[k], s4[0], c4[0], &X, S);
                    free(sel_of);
                    free(sgn_of);
                    for (int i = 0; i < 9; ++i) CHECK_CLOSE(X.R[i], Xref.R[i], 1e-14);
                    for (int i = 0; i < 3; ++i) CHECK_CLOSE(X.p[i], Xref.p[i], 1e-14);
                    for (int i = 0; i < 6 * m->nv_k[k]; ++i) CHECK_CLOSE(S[i], S_ref[i], 0.0);
                    if (found >= 0) { /* the cross product with the selected motion */
                        double V[6], w = 2 * sd_random_uniform(rng) - 1, c[6], c_ref[6], mJ[6] = {0};
                        random_vector(rng, V, 6, 2.0);
                        mJ[found] = sgn * w;
                        sd_motion_cross(V, mJ, c_ref);
                        sd_motion_cross_axis(V, found, sgn * w, c);
                        for (int i = 0; i < 6; ++i) CHECK_CLOSE(c[i], c_ref[i], 1e-15);
                    }
                    memcpy(m->hinge_axes + 9 * k, saved, sizeof saved);
                    if (sel < 0) break;
                }
            }
    }
    free(q);
    sd_data_free(d);
    sd_model_free(m);
}

/* The tilted-axis kernel (hinge.c's turn_placement) against the exact product P R_J, evaluated in
 * long double from the same placement, axis, sin and cos: at most 3 ulp of 1 per entry (the
 * composition of Rodrigues' rotation with P is within 2). Angles over a turn and, half of them, within
 * 1e-3 of a half turn, where Rodrigues' (1 - c) terms are largest: a form that adds them to P and
 * cancels there (P + s P [a x] + (1 - c) P [a x]^2) is 5 ulp off. */
static void check_turn_accuracy(uint64_t *rng)
{
    sd_model *m = random_tree(rng, 200, 0);
    sd_data *d = sd_data_new(m);
    double *q = calloc((size_t)sd_model_nq(m), sizeof(double)), worst = 0.0;
    int turns = 0;
    for (int k = 0; k < m->n; ++k) {
        if (m->hinge[k] != SD_HINGE_REVOLUTE || d->hinge_sel[k] != SD_HINGE_SEL_CONSTANT) continue;
        ++turns;
        const double *a = m->hinge_axes + 9 * k, *P = m->placement[k].R;
        for (int trial = 0; trial < 500; ++trial) {
            const double r = 2 * sd_random_uniform(rng) - 1;
            q[m->q_index[k]] = trial % 2 ? SD_PI + 1e-3 * r : SD_PI * r;
            double s4[4], c4[4], S[6];
            sd_transform X;
            sd_hinge_sincos4(m, d->hinge_sel, d->hinge_sgn, q, k, s4, c4);
            sd_hinge_placement(m, k, d->hinge_sel[k], d->hinge_sgn[k], q + m->q_index[k], s4[0], c4[0], &X, S);
            const long double s = s4[0], c = c4[0], t = 1.0L - c;
            long double RJ[9];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) RJ[3 * i + j] = (i == j ? c : 0.0L) + t * a[i] * a[j];
            RJ[1] -= s * a[2], RJ[2] += s * a[1], RJ[3] += s * a[2], RJ[5] -= s * a[0], RJ[6] -= s * a[1], RJ[7] += s * a[0];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) {
                    const long double exact = P[3 * i] * RJ[j] + P[3 * i + 1] * RJ[3 + j] + P[3 * i + 2] * RJ[6 + j];
                    worst = fmax(worst, (double)fabsl(X.R[3 * i + j] - exact));
                }
        }
    }
    CHECK(turns > 10);
    CHECK(worst <= 3 * DBL_EPSILON);
    printf("tilted-axis placements: %d hinges x 500 angles, worst entry %.2g from the exact product\n", turns, worst);
    free(q);
    sd_data_free(d);
    sd_model_free(m);
}

static double max_abs_diff(const double *a, const double *b, int n)
{
    double worst = 0.0;
    for (int i = 0; i < n; ++i) {
        const double e = fabs(a[i] - b[i]);
        if (!(e <= worst)) worst = e; /* NaN sticks */
    }
    return worst;
}

/* acc + phi I phi* by the plane kernel (sd_sym6_add_to_parent_plane) against the general form for a
 * random symmetric I and acc: the same products with R's zeros and ones left out, summed in another
 * order, so within a few ulp of the largest term (|I| (1 + |p|)^2, 9 terms an entry). */
static void check_plane_congruence(uint64_t *rng, const sd_transform *X, int plane)
{
    double I[36], acc0[36], ref[36], out[36];
    for (int r = 0; r < 6; ++r)
        for (int c = r; c < 6; ++c) {
            I[6 * r + c] = I[6 * c + r] = 4.0 * (sd_random_uniform(rng) - 0.5);
            acc0[6 * r + c] = acc0[6 * c + r] = 4.0 * (sd_random_uniform(rng) - 0.5);
        }
    memcpy(ref, acc0, sizeof ref);
    memcpy(out, acc0, sizeof out);
    sd_sym6_add_to_parent(X, I, ref);
    sd_sym6_add_to_parent_plane(X, plane, I, out);
    const double lever = 1.0 + fabs(X->p[0]) + fabs(X->p[1]) + fabs(X->p[2]);
    CHECK(max_abs_diff(out, ref, 36) <= 8 * DBL_EPSILON * 2.0 * lever * lever * 9.0);
}

/* The plane kernels against the 3x3 products they replace, on Xup as the sweeps make it (an
 * unrotated placement with a random origin, angles over several turns, both signs of the axis). */
static void check_plane_kernels(uint64_t *rng)
{
    sd_model *m = random_tree(rng, 12, RT_ONLY_1DOF | RT_AXIS_ALIGNED | RT_UNROTATED);
    sd_data *d = sd_data_new(m);
    int planes = 0;
    for (int k = 0; k < m->n; ++k) {
        const int sel = d->hinge_sel[k];
        CHECK(d->hinge_plane[k] == (sel >= 0 && sel < 3 ? sel : -1));
        if (d->hinge_plane[k] < 0) continue;
        ++planes;
        for (int trial = 0; trial < 200; ++trial) {
            const double theta = 40.0 * (sd_random_uniform(rng) - 0.5);
            sd_transform X;
            double S[6], mp[6], fc[6], out[6], ref[6];
            sd_hinge_placement(m, k, sel, d->hinge_sgn[k], &theta, sin(d->hinge_sgn[k] * theta),
                               cos(d->hinge_sgn[k] * theta), &X, S);
            random_vector(rng, mp, 6, 3.0);
            random_vector(rng, fc, 6, 3.0);
            /* the same sums, fused where the processor has a multiply-add (CMakeLists.txt's
             * -ffp-contract=fast), so a few ulp of the largest term apart; the bits alike without FMA */
            const double terms =
                TEST_FUSED ? (1.0 + 2.0 * (fabs(X.p[0]) + fabs(X.p[1]) + fabs(X.p[2]))) * 3.0 * 3.0 : 0.0;
            sd_motion_to_child(&X, mp, ref);
            sd_motion_to_child_plane(&X, d->hinge_plane[k], mp, out);
            CHECK(max_abs_diff(out, ref, 6) <= 4 * DBL_EPSILON * terms);
            sd_force_to_parent(&X, fc, ref);
            sd_force_to_parent_plane(&X, d->hinge_plane[k], fc, out);
            CHECK(max_abs_diff(out, ref, 6) <= 4 * DBL_EPSILON * terms);
            check_plane_congruence(rng, &X, d->hinge_plane[k]);
        }
    }
    CHECK(planes > 0);
    /* a rotated placement is never taken for a plane */
    sd_model *r = random_tree(rng, 12, RT_ONLY_1DOF | RT_AXIS_ALIGNED);
    for (int k = 0; k < r->n; ++k) CHECK(sd_plane_axis(r, k, 0) == -1);
    sd_model_free(r);
    sd_data_free(d);
    sd_model_free(m);
}

static void check_close_array(const double *a, const double *b, int n, double tol)
{
    for (int i = 0; i < n; ++i) CHECK_CLOSE(a[i], b[i], tol);
}

/* The fast path (aligned) against the generic one (nudged) on one random tree and state. */
static void check_twin_trees(uint64_t seed, int n, int flags)
{
    uint64_t ra = seed, rb = seed;
    sd_model *A = random_tree(&ra, n, flags | RT_AXIS_ALIGNED);
    sd_model *B = random_tree(&rb, n, flags | RT_AXIS_ALIGNED | RT_AXIS_NUDGED);
    sd_data *da = sd_data_new(A), *db = sd_data_new(B);
    int fast = 0, generic_selects = 0, planes = 0;
    for (int k = 0; k < n; ++k) {
        fast += da->hinge_sel[k] >= 0;
        planes += da->hinge_plane[k] >= 0;
        CHECK(db->hinge_plane[k] < 0);
        generic_selects += db->hinge_sel[k] >= 0;
    }
    CHECK(generic_selects == 0);
    const int nq = sd_model_nq(A), nv = sd_model_nv(A);
    CHECK(nq == sd_model_nq(B) && nv == sd_model_nv(B));
    double *q = malloc((size_t)nq * sizeof(double)), *u = malloc((size_t)nv * sizeof(double)),
           *w = malloc((size_t)nv * sizeof(double)), *fext = malloc(6 * (size_t)n * sizeof(double)),
           *xa = malloc((size_t)nv * sizeof(double)), *xb = malloc((size_t)nv * sizeof(double)),
           *Ma = malloc((size_t)nv * nv * sizeof(double)), *Mb = malloc((size_t)nv * nv * sizeof(double));
    random_state(A, &ra, q, u, w);
    random_vector(&ra, fext, 6 * n, 1.0);
    CHECK(sd_inverse_dynamics(A, da, q, u, w, fext, xa) == SD_OK);
    CHECK(sd_inverse_dynamics(B, db, q, u, w, fext, xb) == SD_OK);
    check_close_array(xa, xb, nv, 1e-10);
    for (int k = 0; k < n; ++k) {
        double fa[6], fb[6];
        CHECK(sd_interbody_force(A, da, k, SD_FRAME_BODY, fa) == SD_OK);
        CHECK(sd_interbody_force(B, db, k, SD_FRAME_BODY, fb) == SD_OK);
        check_close_array(fa, fb, 6, 1e-10);
    }
    CHECK(sd_bias_forces(A, da, q, u, NULL, xa) == SD_OK);
    CHECK(sd_bias_forces(B, db, q, u, NULL, xb) == SD_OK);
    check_close_array(xa, xb, nv, 1e-10);
    const sd_fd_options opt = {.interbody_forces = 1, .prescribed = NULL};
    CHECK(sd_forward_dynamics_ex(A, da, q, u, w, fext, xa, &opt) == SD_OK);
    CHECK(sd_forward_dynamics_ex(B, db, q, u, w, fext, xb, &opt) == SD_OK);
    check_close_array(xa, xb, nv, 1e-10);
    for (int k = 0; k < n; ++k) {
        double fa[6], fb[6];
        CHECK(sd_interbody_force(A, da, k, SD_FRAME_WORLD, fa) == SD_OK);
        CHECK(sd_interbody_force(B, db, k, SD_FRAME_WORLD, fb) == SD_OK);
        check_close_array(fa, fb, 6, 1e-10);
    }
    CHECK(sd_mass_matrix(A, da, q, Ma) == SD_OK);
    CHECK(sd_mass_matrix(B, db, q, Mb) == SD_OK);
    check_close_array(Ma, Mb, nv * nv, 1e-10);
    CHECK(sd_mass_matrix_inverse(A, da, q, Ma) == SD_OK);
    CHECK(sd_mass_matrix_inverse(B, db, q, Mb) == SD_OK);
    check_close_array(Ma, Mb, nv * nv, 1e-9);
    CHECK(sd_kinematics(A, da, q, u, w) == SD_OK);
    CHECK(sd_kinematics(B, db, q, u, w) == SD_OK);
    for (int k = 0; k < n; ++k) {
        const sd_transform Xa = world_placement(A, da, k), Xb = world_placement(B, db, k);
        check_close_array(Xa.R, Xb.R, 9, 1e-12);
        check_close_array(Xa.p, Xb.p, 3, 1e-12);
        double va[6], vb[6];
        CHECK(sd_body_velocity(A, da, k, va) == SD_OK && sd_body_velocity(B, db, k, vb) == SD_OK);
        check_close_array(va, vb, 6, 1e-10);
        CHECK(sd_body_acceleration(A, da, k, va) == SD_OK && sd_body_acceleration(B, db, k, vb) == SD_OK);
        check_close_array(va, vb, 6, 1e-10);
    }
    if (n >= 10 && !(flags & RT_ONLY_1DOF)) CHECK(fast > 0);
    if (n >= 10 && (flags & RT_UNROTATED)) CHECK(planes > 0);
    if (!(flags & RT_UNROTATED)) CHECK(planes == 0);
    free(q); free(u); free(w); free(fext); free(xa); free(xb); free(Ma); free(Mb);
    sd_data_free(da); sd_data_free(db);
    sd_model_free(A); sd_model_free(B);
}

int main(void)
{
    uint64_t rng = 0x5eed12;
    check_placement_kernel(&rng);
    check_turn_accuracy(&rng);
    check_plane_kernels(&rng);
    static const int sizes[] = {1, 2, 3, 7, 20, 60, 150};
    static const int flag_sets[] = {0, RT_CHAIN, RT_FREE_ROOT, RT_MASSLESS, RT_ONLY_1DOF, RT_CHAIN | RT_ONLY_1DOF,
                                    RT_FREE_ROOT | RT_ONLY_1DOF | RT_MASSLESS, RT_UNROTATED,
                                    RT_CHAIN | RT_ONLY_1DOF | RT_UNROTATED, RT_FREE_ROOT | RT_MASSLESS | RT_UNROTATED};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; ++f)
            for (int s = 0; s < 3; ++s) check_twin_trees(1000 * i + 10 * f + s + 1, sizes[i], flag_sets[f]);
    return test_summary("test_hinge_kernels");
}
