/*
 * src/codegen/cg_sweeps.c — the algorithms the generator emits, each a walk over the model's node
 * table (parent-first: a scatter is a forward pass, a gather a backward one, node_engine.h) that asks
 * every node's kind for its operations (cg_gen.h). The recursions are those of inverse_dynamics.c
 * (Newton-Euler, 004 Alg 3.1), mass_matrix.c (composite bodies, 004 Alg 4.2), forward_dynamics.c
 * (articulated bodies, 004 Alg 6.1 and Eq 33, 58), with the joint-level terms of dynamics.h; because
 * the generator knows the tree, the walks unroll into straight-line code.
 *
 * Nodes of dimension 6 + nf (node_engine.h; a flexible body's nf modes at speeds vf..): the maps
 * between a child and its parent are phi*(p, c) = [Xup(c), Y(c)] and phi(p, c) f = [Xup^T f; Y^T f]
 * (cg_node_flexible.c's attachment operations: nothing for a child on a frame), the node's own
 * coordinates' blocks sit beside the rigid 6 in cg_node (bf, ff, Rrf, Rff, Prf, Pff, zf), H(k) =
 * diag(H_hinge, I), and a kind with own coordinates eliminates them before its hinge (cg_kind_ops).
 */
#include "cg_sweeps.h"

/* The base's acceleration -g (kinematics.c sd_base_acceleration): gravity enters through M alpha. */
static void base_acceleration(const sd_model *m, cg_val a0[6])
{
    for (int r = 0; r < 3; ++r) {
        a0[r] = cg_const(0.0);
        a0[3 + r] = cg_const(-m->gravity[r]);
    }
}

static void motion_scatter(cg_gen *g, int with_velocities)
{
    for (int k = 0; k < g->m->n; ++k) {
        const cg_kind_ops *kind = cg_kind_of(g->m, k);
        kind->placement(g, k);
        if (with_velocities) kind->velocities(g, k);
        cg_checkpoint(g);
    }
}

/* phi*(p, k) alpha_m(p) of the parent's acceleration (its own coordinates' at x[vf(p)..]), or the
 * base's for a root. */
static void parent_acceleration(cg_gen *g, int k, const cg_val a0[6], const cg_val *x, cg_val out[6])
{
    const int p = g->m->parent[k];
    cg_motion_to_child(&g->e, &g->node[k].Xup, p >= 0 ? g->node[p].alpha : a0, out);
    if (g->node[k].ny) cg_child_motion_modes(g, k, x + g->node[p].vf, out);
}

void cg_sweep_inverse_dynamics(cg_gen *g, cg_val *tau)
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    cg_val a0[6];
    for (int v = 0; v < m->nv; ++v) tau[v] = cg_const(0.0);
    cg_live_push(g, tau, (size_t)m->nv);
    base_acceleration(m, a0);
    motion_scatter(g, 1);
    for (int k = 0; k < m->n; ++k) { /* alpha(k) = phi* alpha(p) + H* qdd + a(k); f(k) = M alpha + b */
        cg_node *nd = &g->node[k];
        const cg_val *qddk = g->w + m->v_index[k];
        cg_val al[6];
        parent_acceleration(g, k, a0, g->w, al);
        for (int r = 0; r < 6; ++r) {
            cg_val s = cg_add(e, al[r], nd->a[r]);
            for (int j = 0; j < nd->nk; ++j) s = cg_add(e, s, cg_mul(e, nd->S[6 * j + r], qddk[j]));
            nd->alpha[r] = s;
        }
        cg_kind_of(m, k)->own_force(g, k, nd->alpha, nd->f);
        cg_checkpoint(g);
    }
    for (int k = m->n - 1; k >= 0; --k) { /* T(k) = H f(k); f(p) += phi(p, k) f(k) */
        cg_node *nd = &g->node[k];
        const int vk = m->v_index[k], p = m->parent[k];
        cg_val passive[6];
        cg_kind_of(m, k)->passive(g, k, passive);
        for (int j = 0; j < nd->nk; ++j) {
            const cg_val J = cg_const(m->armature[vk + j]);
            const cg_val hf = cg_dot(e, nd->S + 6 * j, nd->f, 6);
            tau[vk + j] = cg_sub(e, cg_add(e, hf, cg_mul(e, J, g->w[vk + j])), passive[j]);
        }
        for (int i = 0; i < nd->nf; ++i) tau[nd->vf + i] = nd->ff[i]; /* T_f = f_f (001 Eq 43) */
        if (p >= 0) {
            cg_val fp[6];
            cg_force_to_parent(e, &nd->Xup, nd->f, fp);
            for (int r = 0; r < 6; ++r) g->node[p].f[r] = cg_add(e, g->node[p].f[r], fp[r]);
            cg_force_to_parent_modes(g, k, nd->f, g->node[p].ff);
        }
        cg_checkpoint(g);
    }
    cg_live_pop(g, 1);
}

void cg_sweep_interbody_forces(cg_gen *g, cg_val *tau, cg_val *f)
{
    cg_sweep_inverse_dynamics(g, tau); /* f stays in the node table until it is read here */
    for (int k = 0; k < g->m->n; ++k)
        for (int r = 0; r < 6; ++r) f[6 * k + r] = g->node[k].f[r];
}

void cg_sweep_mass_matrix(cg_gen *g, cg_val *M)
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    const int nv = m->nv;
    for (int i = 0; i < nv * nv; ++i) M[i] = cg_const(0.0);
    cg_live_push(g, M, (size_t)nv * (size_t)nv);
    motion_scatter(g, 0);
    for (int k = 0; k < m->n; ++k) cg_kind_of(m, k)->composite_start(g, k, g->node[k].R);
    for (int k = m->n - 1; k >= 0; --k) { /* R(p) += phi(p, k) R(k) phi*(p, k) (004 Eq 20; 001 Eq 47) */
        const int p = m->parent[k];
        if (p >= 0) {
            cg_rigid_inertia_to_parent_add(e, &g->node[k].Xup, g->node[k].R, g->node[p].R);
            cg_inertia_to_parent_modes(g, k, NULL, g->node[k].R, g->node[p].Rrf, g->node[p].Rff);
        }
        cg_checkpoint(g);
    }
    for (int k = 0; k < m->n; ++k) { /* column j of node k: F = R(k) e_j (rigid part), then M(i, j) = H_i F up the path */
        const cg_node *nd = &g->node[k];
        for (int j = 0; j < nd->nk + nd->nf; ++j) {
            const int own = j >= nd->nk, col = own ? nd->vf + j - nd->nk : m->v_index[k] + j;
            cg_val F[6];
            if (own) { /* an own coordinate s: F = R^rf(k) e_s, M(k's r, s) = R^ff(r, s) for r <= s (001 Eq 50) */
                const int s = j - nd->nk;
                for (int r = 0; r < 6; ++r) F[r] = nd->Rrf[6 * s + r];
                for (int r = 0; r <= s; ++r) M[(nd->vf + r) * nv + col] = M[col * nv + nd->vf + r] = nd->Rff[r * nd->nf + s];
            } else {
                cg_rigid_inertia_mul(e, nd->R, nd->S + 6 * j, F);
            }
            for (int i = 0; i < (own ? nd->nk : j + 1); ++i) {
                const int row = m->v_index[k] + i;
                M[row * nv + col] = M[col * nv + row] = cg_dot(e, nd->S + 6 * i, F, 6);
            }
            for (int c = k, p = m->parent[k]; p >= 0; c = p, p = m->parent[p]) {
                for (int r = 0; r < g->node[c].ny; ++r) { /* p's own coordinates moving c: Y(c)^T F */
                    const int row = g->node[p].vf + r;
                    M[row * nv + col] = M[col * nv + row] = cg_dot(e, g->node[c].Y + 6 * r, F, 6);
                }
                cg_force_to_parent(e, &g->node[c].Xup, F, F);
                for (int i = 0; i < g->node[p].nk; ++i) {
                    const int row = m->v_index[p] + i;
                    M[row * nv + col] = M[col * nv + row] = cg_dot(e, g->node[p].S + 6 * i, F, 6);
                }
            }
            if (!own) M[col * nv + col] = cg_add(e, M[col * nv + col], cg_const(m->armature[col]));
        }
        cg_checkpoint(g);
    }
    cg_live_pop(g, 1);
}

void cg_sweep_forward_dynamics(cg_gen *g, cg_val *qdd)
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    cg_val a0[6];
    for (int v = 0; v < m->nv; ++v) qdd[v] = cg_const(0.0);
    cg_live_push(g, qdd, (size_t)m->nv);
    base_acceleration(m, a0);
    motion_scatter(g, 1);
    for (int k = 0; k < m->n; ++k) {
        cg_node *nd = &g->node[k];
        cg_kind_of(m, k)->articulated_start(g, k, nd->P);
        for (int r = 0; r < 6; ++r) nd->z[r] = nd->b[r];
        for (int i = 0; i < nd->nf; ++i) nd->zf[i] = nd->bf[i];
    }
    for (int k = m->n - 1; k >= 0; --k) { /* the Riccati gather (004 Eq 33, 58a-c) */
        cg_node *nd = &g->node[k];
        const int nk = nd->nk, vk = m->v_index[k], p = m->parent[k];
        const cg_kind_ops *kind = cg_kind_of(m, k);
        cg_val D[36], passive[6];
        if (kind->eliminate) { /* the node's own coordinates first: P <- P_R, z <- z_R (001 Eq 62-63) */
            kind->eliminate(g, k);
            kind->own_residual(g, k, g->w);
        }
        for (int j = 0; j < nk; ++j) cg_m6_mul_v(e, nd->P, nd->S + 6 * j, nd->U + 6 * j); /* U = P H* */
        for (int i = 0; i < nk; ++i)
            for (int j = 0; j < nk; ++j) {
                cg_val d = cg_dot(e, nd->S + 6 * i, nd->U + 6 * j, 6);
                if (i == j) d = cg_add(e, d, cg_const(m->armature[vk + i])); /* D = H P H* + J */
                D[i * nk + j] = d;
            }
        if (nk) cg_spd_inverse(g, D, nk, nd->Dinv, 0);
        kind->passive(g, k, passive);
        for (int i = 0; i < nk; ++i) /* eps = tau + tau_passive - H z */
            nd->eps[i] = cg_sub(e, cg_add(e, g->w[vk + i], passive[i]), cg_dot(e, nd->S + 6 * i, nd->z, 6));
        if (p < 0) {
            cg_checkpoint(g);
            continue;
        }
        /* P+ = P - U D^-1 U^T,  z+ = z + P+ a + U D^-1 eps */
        cg_val G[36], Pplus[36], Pa[6], Dinv_eps[6], zplus[6];
        for (int r = 0; r < 6; ++r)
            for (int j = 0; j < nk; ++j) {
                cg_val s = cg_const(0.0);
                for (int l = 0; l < nk; ++l) s = cg_add(e, s, cg_mul(e, nd->U[6 * l + r], nd->Dinv[l * nk + j]));
                G[6 * j + r] = s; /* G = U D^-1, 6 x nk column-major */
            }
        for (int r = 0; r < 6; ++r)
            for (int c = r; c < 6; ++c) {
                cg_val s = nd->P[6 * r + c];
                for (int j = 0; j < nk; ++j) s = cg_sub(e, s, cg_mul(e, G[6 * j + r], nd->U[6 * j + c]));
                Pplus[6 * r + c] = Pplus[6 * c + r] = s;
            }
        cg_m6_mul_v(e, Pplus, nd->a, Pa);
        for (int i = 0; i < nk; ++i) {
            cg_val s = cg_const(0.0);
            for (int l = 0; l < nk; ++l) s = cg_add(e, s, cg_mul(e, nd->Dinv[i * nk + l], nd->eps[l]));
            Dinv_eps[i] = s;
        }
        for (int r = 0; r < 6; ++r) {
            cg_val s = cg_add(e, nd->z[r], Pa[r]);
            for (int j = 0; j < nk; ++j) s = cg_add(e, s, cg_mul(e, nd->U[6 * j + r], Dinv_eps[j]));
            zplus[r] = s;
        }
        cg_val zp[6];
        cg_sym6_to_parent_add(e, &nd->Xup, Pplus, g->node[p].P);
        cg_inertia_to_parent_modes(g, k, Pplus, NULL, g->node[p].Prf, g->node[p].Pff);
        cg_force_to_parent(e, &nd->Xup, zplus, zp);
        for (int r = 0; r < 6; ++r) g->node[p].z[r] = cg_add(e, g->node[p].z[r], zp[r]);
        cg_force_to_parent_modes(g, k, zplus, g->node[p].zf);
        cg_checkpoint(g);
    }
    for (int k = 0; k < m->n; ++k) { /* the scatter: qdd = D^-1 (eps - U^T alpha+), alpha = alpha+ + H* qdd */
        cg_node *nd = &g->node[k];
        const int nk = nd->nk, vk = m->v_index[k];
        cg_val ap[6], rhs[6];
        parent_acceleration(g, k, a0, qdd, ap);
        for (int r = 0; r < 6; ++r) ap[r] = cg_add(e, ap[r], nd->a[r]);
        for (int i = 0; i < nk; ++i) rhs[i] = cg_sub(e, nd->eps[i], cg_dot(e, nd->U + 6 * i, ap, 6));
        for (int i = 0; i < nk; ++i) {
            cg_val s = cg_const(0.0);
            for (int l = 0; l < nk; ++l) s = cg_add(e, s, cg_mul(e, nd->Dinv[i * nk + l], rhs[l]));
            qdd[vk + i] = s;
        }
        for (int r = 0; r < 6; ++r) {
            cg_val s = ap[r];
            for (int j = 0; j < nk; ++j) s = cg_add(e, s, cg_mul(e, nd->S[6 * j + r], qdd[vk + j]));
            nd->alpha[r] = s;
        }
        const cg_kind_ops *kind = cg_kind_of(m, k);
        if (kind->own_scatter) kind->own_scatter(g, k, nd->alpha, qdd); /* eta-ddot = nu_f - g* alpha (001 Eq 63) */
        cg_checkpoint(g);
    }
    cg_live_pop(g, 1);
}

void cg_sweep_mass_matrix_inverse(cg_gen *g, cg_val *M, cg_val *Minv)
{
    cg_sweep_mass_matrix(g, M);
    cg_spd_inverse(g, M, g->m->nv, Minv, 1);
}
