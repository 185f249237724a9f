/*
 * src/codegen/codegen.c — sd_codegen_write (soadyn/codegen.h): the generated files' frame around
 * the sweeps of cg_sweeps.c. Each generated function checks its arguments, runs the emitted
 * straight-line code (in parts, cg_gen.h) into temporaries and its workspace, checks the results and
 * only then stores them, so a failing call leaves its outputs untouched (dynamics.h's contract).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/codegen.h>

#include "cg_sweeps.h"

/* Statements per part of a generated function (cg_gen.h): on Talos reduced, GCC 12 -O2 compiles the
 * unsplit file in 23 s of CPU, most of it in register allocation; in parts of 2000, 15 s (of 800: 14.5). */
#define CG_PART_STATEMENTS 2000

/* The generated functions, in the order they are written. */
typedef enum { FN_ID, FN_M, FN_FD, FN_MINV, FN_FORCES, FN_COUNT } fn_id;

static const struct {
    unsigned flag;
    const char *name, *list_name, *params, *library;
} functions[FN_COUNT] = {
    [FN_ID] = {SD_CODEGEN_ID, "inverse_dynamics", "id",
               "const double *q, const double *u, const double *qdd, const double *f_ext, double *tau",
               "sd_inverse_dynamics"},
    [FN_M] = {SD_CODEGEN_M, "mass_matrix", "m", "const double *q, double *M", "sd_mass_matrix"},
    [FN_FD] = {SD_CODEGEN_FD, "forward_dynamics", "fd",
               "const double *q, const double *u, const double *tau, const double *f_ext, double *qdd",
               "sd_forward_dynamics"},
    [FN_MINV] = {SD_CODEGEN_MINV, "mass_matrix_inverse", "minv", "const double *q, double *Minv",
                 "sd_mass_matrix_inverse"},
    [FN_FORCES] = {SD_CODEGEN_FORCES, "interbody_forces", "forces",
                   "const double *q, const double *u, const double *qdd, const double *f_ext, double *f",
                   "sd_inverse_dynamics and sd_interbody_force (SD_FRAME_BODY) of every body"},
};

sd_status sd_codegen_parse_algorithms(const char *list, unsigned *flags, sd_error *err)
{
    if (!list || !flags) return sd_error_set(err, SD_E_ARGUMENT, "sd_codegen_parse_algorithms: NULL argument");
    unsigned out = 0;
    for (const char *s = list; *s;) {
        const size_t len = strcspn(s, ",");
        int found = 0;
        for (int f = 0; f < FN_COUNT; ++f)
            if (strlen(functions[f].list_name) == len && strncmp(s, functions[f].list_name, len) == 0) {
                out |= functions[f].flag;
                found = 1;
            }
        if (!found)
            return sd_error_set(err, SD_E_ARGUMENT, "--algorithms: unknown algorithm '%.*s' (known: id, m, fd, minv, forces)",
                                (int)len, s);
        s += len + (s[len] == ',');
    }
    if (!out) return sd_error_set(err, SD_E_ARGUMENT, "--algorithms: the list is empty (known: id, m, fd, minv, forces)");
    *flags = out;
    return SD_OK;
}

static int is_identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (; *s; ++s)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

/* What the model must be for the generator (the message names the body or the feature). */
static sd_status check_model(const sd_model *m, sd_error *err)
{
    if (m->loops)
        return sd_error_set(err, SD_E_NOT_SUPPORTED,
                            "sd_codegen_write: model '%s' has closure constraints; generated code covers trees only "
                            "(the library's functions handle closed loops)",
                            m->name);
    for (int k = 0; k < m->n; ++k)
        if (!cg_kind_of(m, k))
            return sd_error_set(err, SD_E_NOT_SUPPORTED,
                                "sd_codegen_write: body '%s' is an aggregate of constraint embedding; generated code "
                                "covers rigid and flexible bodies only",
                                m->desc[k].name);
    if (m->n > SD_CODEGEN_MAX_BODIES)
        return sd_error_set(err, SD_E_NOT_SUPPORTED,
                            "sd_codegen_write: model '%s' has %d bodies, more than the %d of straight-line code "
                            "(the loop form for long chains is not offered)",
                            m->name, m->n, SD_CODEGEN_MAX_BODIES);
    return SD_OK;
}

sd_status sd_codegen_check(const sd_model *m, sd_error *err)
{
    if (!m) return sd_error_set(err, SD_E_ARGUMENT, "sd_codegen_check: NULL model");
    return check_model(m, err);
}

static int max3(int a, int b, int c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

/* The scalars of a node the sweeps keep: visited to clear them and to carry them over a part's end. */
static void node_fields(cg_gen *g, cg_node *nd, void (*visit)(cg_gen *, cg_val *, size_t))
{
    visit(g, nd->Xup.R, 9);
    visit(g, nd->Xup.p, 3);
    visit(g, nd->S, 36);
    visit(g, nd->aux, 9);
    visit(g, nd->V, 6);
    visit(g, nd->a, 6);
    visit(g, nd->b, 6);
    visit(g, nd->alpha, 6);
    visit(g, nd->f, 6);
    visit(g, nd->R, 13);
    visit(g, nd->P, 36);
    visit(g, nd->z, 6);
    visit(g, nd->U, 36);
    visit(g, nd->Dinv, 36);
    visit(g, nd->eps, 6);
    visit(g, nd->ext, nd->next);
}

static void clear(cg_gen *g, cg_val *v, size_t n)
{
    (void)g;
    for (size_t i = 0; i < n; ++i) v[i] = cg_const(0.0);
}

/* Every temporary of v into the workspace w (each value is stored once: it then reads w). */
static void carry(cg_gen *g, cg_val *v, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (cg_is_temp(v[i])) {
            fprintf(g->e.f, "    w[%d] = t%d;\n", g->nslot, v[i].t);
            v[i] = cg_entry(CG_W, g->nslot++);
        }
}

static void part_begin(cg_gen *g)
{
    if (g->e.lanes) {
        const char *T = cg_type(&g->e);
        fprintf(g->e.f,
                "\nSD_GENERATED_PART int %s_part%d(const %s *q, const %s *u, const %s *x, const %s *f_ext,\n"
                "    %s *w, %s *out, int *bad)\n{\n    (void)q, (void)u, (void)x, (void)f_ext, (void)w, (void)out, (void)bad;\n",
                g->fn_name, g->part, T, T, T, T, T, T);
    } else {
        fprintf(g->e.f,
                "\nSD_GENERATED_PART int %s_part%d(const double *q, const double *u, const double *x, const double *f_ext,\n"
                "    double *w, double *out)\n{\n    (void)q, (void)u, (void)x, (void)f_ext, (void)w, (void)out;\n",
                g->fn_name, g->part);
    }
    g->e.ntemp = 0;
    g->e.stmts = 0;
}

void cg_checkpoint(cg_gen *g)
{
    if (g->e.stmts < g->part_limit) return;
    for (int k = 0; k < g->m->n; ++k) node_fields(g, &g->node[k], carry);
    for (int l = 0; l < g->nlive; ++l) carry(g, g->live[l].v, g->live[l].n);
    fprintf(g->e.f, "    return 0;\n}\n");
    ++g->part;
    part_begin(g);
}

/* n entries of an input array as scalars (or zeros when the function does not read it). */
static void input(cg_val *dst, cg_array arr, int n)
{
    for (int i = 0; i < n; ++i) dst[i] = arr != CG_NONE ? cg_entry(arr, i) : cg_const(0.0);
}

/* What a generated function reads and writes: the names of its arrays (NULL: not an argument). */
typedef struct fn_shape {
    const char *u, *w, *out;
    int nout;
} fn_shape;

static fn_shape shape_of(const sd_model *m, fn_id id)
{
    const int nv = m->nv, n = m->n;
    switch (id) {
    case FN_ID: return (fn_shape){"u", "qdd", "tau", nv};
    case FN_FORCES: return (fn_shape){"u", "qdd", "f", 6 * n};
    case FN_FD: return (fn_shape){"u", "tau", "qdd", nv};
    case FN_M: return (fn_shape){NULL, NULL, "M", nv * nv};
    default: return (fn_shape){NULL, NULL, "Minv", nv * nv};
    }
}

/* The parts of one generated function (lanes 0: one state; 4, 8: the lane form): the sweep, its
 * results stored by the last part (one state: checked, then copied to out; lanes: into the caller's
 * vectors, checked lane by lane there). */
static void write_parts(FILE *f, const sd_model *m, const char *fn_name, const char *name, fn_id id, int lanes, cg_gen *g)
{
    const int nq = m->nq, nv = m->nv, n = m->n;
    const fn_shape sh = shape_of(m, id);
    const int nout = sh.nout;
    g->e = (cg_emit){f, 0, 0, lanes};
    g->fn_name = fn_name;
    g->part = g->nslot = g->nlive = 0;
    for (int k = 0; k < n; ++k) node_fields(g, &g->node[k], clear);
    input(g->q, CG_Q, nq);
    input(g->u, sh.u ? CG_U : CG_NONE, nv);
    input(g->w, sh.w ? CG_X : CG_NONE, nv);
    input(g->f_ext, sh.u ? CG_FEXT : CG_NONE, 6 * n);
    cg_val *res = malloc((size_t)(nout > 0 ? nout : 1) * sizeof *res);
    cg_val *scratch = malloc((size_t)(nv * nv > 6 ? nv * nv : 6) * sizeof *scratch);
    cg_val *tau = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *tau);
    if (!res || !scratch || !tau) {
        free(res), free(scratch), free(tau);
        g->out_of_memory = 1;
        return;
    }
    part_begin(g);
    switch (id) {
    case FN_ID: cg_sweep_inverse_dynamics(g, res); break;
    case FN_FORCES: cg_sweep_interbody_forces(g, tau, res); break;
    case FN_FD: cg_sweep_forward_dynamics(g, res); break;
    case FN_M: cg_sweep_mass_matrix(g, res); break;
    case FN_MINV: cg_sweep_mass_matrix_inverse(g, scratch, res); break;
    default: break;
    }
    char buf[320];
    if (lanes) {
        for (int i = 0; i < nout; ++i) fprintf(f, "    out[%d] = %s;\n", i, cg_vtext(&g->e, res[i], buf, sizeof buf));
        fprintf(f, "    return %s_OK;\n}\n", name);
    } else {
        fprintf(f, "    double r[%d];\n", nout > 0 ? nout : 1);
        for (int i = 0; i < nout; ++i) fprintf(f, "    r[%d] = %s;\n", i, cg_text(res[i], buf));
        fprintf(f, "    if (!%s_finite(r, %d)) return %s_E_NOT_FINITE;\n", name, nout, name);
        if (nout) fprintf(f, "    memcpy(out, r, sizeof(double) * %d);\n", nout);
        fprintf(f, "    return %s_OK;\n}\n", name);
    }
    free(res);
    free(scratch);
    free(tau);
}

/* One generated function: its parts, then the public function (argument checks, the parts in order). */
static void write_function(FILE *f, const sd_model *m, const char *name, fn_id id, cg_gen *g)
{
    const int nq = m->nq, nv = m->nv, n = m->n;
    const fn_shape sh = shape_of(m, id);
    char fn_name[256];
    snprintf(fn_name, sizeof fn_name, "%s_%s", name, functions[id].name);
    write_parts(f, m, fn_name, name, id, 0, g);
    fprintf(f, "\n/* The generated counterpart of %s. */\nint %s(%s)\n{\n", functions[id].library, fn_name,
            functions[id].params);
    fprintf(f, "    if (!q || !%s) return %s_E_ARGUMENT;\n", sh.out, name);
    if (sh.u)
        fprintf(f, "    if (!u) u = %s_zero;\n    if (!%s) %s = %s_zero;\n    if (!f_ext) f_ext = %s_zero;\n", name, sh.w,
                sh.w, name, name);
    fprintf(f, "    if (!%s_finite(q, %d)", name, nq);
    if (sh.u)
        fprintf(f, " || !%s_finite(u, %d) || !%s_finite(%s, %d) || !%s_finite(f_ext, %d)", name, nv, name, sh.w, nv,
                name, 6 * n);
    fprintf(f, ") return %s_E_ARGUMENT;\n", name);
    fprintf(f, "    double w[%d];\n    int st;\n", g->nslot > 0 ? g->nslot : 1);
    for (int p = 0; p <= g->part; ++p)
        fprintf(f, "    if ((st = %s_part%d(q, %s, %s, %s, w, %s)) != 0) return st;\n", fn_name, p, sh.u ? "u" : "NULL",
                sh.w ? sh.w : "NULL", sh.u ? "f_ext" : "NULL", sh.out);
    fprintf(f, "    return %s_OK;\n}\n", name);
}

/* The lane form of one function (GCC and Clang: vector extensions): its parts on vectors of `lanes`
 * states, and NAME_fn_xL, which takes the states' arrays lane-minor (entry i of state l at
 * [i * lanes + l]), copies them into vectors, runs the parts, and per lane checks and stores: a lane
 * whose inputs are not finite (E_ARGUMENT), whose pivot failed (E_SINGULAR) or whose result is not
 * (E_NOT_FINITE) leaves its outputs untouched, as the single-state call would; the others are stored. */
static void write_lanes_function(FILE *f, const sd_model *m, const char *name, fn_id id, int lanes, cg_gen *g)
{
    const int nq = m->nq, nv = m->nv, n = m->n;
    const fn_shape sh = shape_of(m, id);
    const int nout = sh.nout;
    char fn_name[256];
    snprintf(fn_name, sizeof fn_name, "%s_%s_x%d", name, functions[id].name, lanes);
    write_parts(f, m, fn_name, name, id, lanes, g);
    const char *T = cg_type(&g->e);
    fprintf(f, "\n/* %s_%s on %d states per call, lane-minor arrays (entry i of state l at [i * %d + l]). */\n", name,
            functions[id].name, lanes, lanes);
    fprintf(f, "int %s(%s, int *status)\n{\n", fn_name, functions[id].params);
    fprintf(f, "    int st[%d], bad[%d] = {0}, ret = %s_OK;\n", lanes, lanes, name);
    fprintf(f, "    if (!q || !%s) {\n        for (int l = 0; status && l < %d; ++l) status[l] = %s_E_ARGUMENT;\n"
               "        return %s_E_ARGUMENT;\n    }\n",
            sh.out, lanes, name, name);
    if (sh.u)
        fprintf(f, "    if (!u) u = %s_zero;\n    if (!%s) %s = %s_zero;\n    if (!f_ext) f_ext = %s_zero;\n", name, sh.w,
                sh.w, name, name);
    fprintf(f, "    %s vq[%d], vu[%d], vx[%d], vf[%d], w[%d], r[%d];\n", T, nq > 0 ? nq : 1, nv > 0 ? nv : 1,
            nv > 0 ? nv : 1, n > 0 ? 6 * n : 1, g->nslot > 0 ? g->nslot : 1, nout > 0 ? nout : 1);
    fprintf(f, "    memcpy(vq, q, sizeof(double) * %d);\n", nq * lanes);
    if (sh.u)
        fprintf(f, "    memcpy(vu, u, sizeof(double) * %d);\n    memcpy(vx, %s, sizeof(double) * %d);\n"
                   "    memcpy(vf, f_ext, sizeof(double) * %d);\n",
                nv * lanes, sh.w, nv * lanes, 6 * n * lanes);
    fprintf(f, "    for (int l = 0; l < %d; ++l)\n        st[l] = %s_finite_lane(q, %d, %d, l)", lanes, name, nq, lanes);
    if (sh.u)
        fprintf(f, " && %s_finite_lane(u, %d, %d, l) && %s_finite_lane(%s, %d, %d, l) && %s_finite_lane(f_ext, %d, %d, l)",
                name, nv, lanes, name, sh.w, nv, lanes, name, 6 * n, lanes);
    fprintf(f, "\n                    ? %s_OK : %s_E_ARGUMENT;\n", name, name);
    for (int p = 0; p <= g->part; ++p)
        fprintf(f, "    %s_part%d(vq, vu, vx, vf, w, r, bad);\n", fn_name, p);
    fprintf(f,
            "    for (int l = 0; l < %d; ++l) {\n"
            "        if (st[l] == %s_OK && bad[l]) st[l] = %s_E_SINGULAR;\n"
            "        for (int i = 0; i < %d && st[l] == %s_OK; ++i)\n"
            "            if (!isfinite(r[i][l])) st[l] = %s_E_NOT_FINITE;\n"
            "        if (st[l] == %s_OK)\n            for (int i = 0; i < %d; ++i) %s[i * %d + l] = r[i][l];\n"
            "        else if (ret == %s_OK)\n            ret = st[l];\n"
            "        if (status) status[l] = st[l];\n    }\n    return ret;\n}\n",
            lanes, name, name, nout, name, name, name, nout, sh.out, lanes, name);
}

/* Where the compiler has no vector extensions: the lane form as a loop over the single-state
 * function, one lane at a time (the same operations, so the same results). */
static void write_lanes_fallback(FILE *f, const sd_model *m, const char *name, fn_id id, int lanes)
{
    const int nq = m->nq, nv = m->nv, n = m->n;
    const fn_shape sh = shape_of(m, id);
    const int nout = sh.nout;
    fprintf(f, "\nint %s_%s_x%d(%s, int *status)\n{\n", name, functions[id].name, lanes, functions[id].params);
    fprintf(f, "    double sq[%d], su[%d], sx[%d], sf[%d], so[%d];\n    int ret = %s_OK, l, i, st;\n", nq > 0 ? nq : 1,
            nv > 0 ? nv : 1, nv > 0 ? nv : 1, n > 0 ? 6 * n : 1, nout > 0 ? nout : 1, name);
    fprintf(f, "    if (!q || !%s) {\n        for (l = 0; status && l < %d; ++l) status[l] = %s_E_ARGUMENT;\n"
               "        return %s_E_ARGUMENT;\n    }\n",
            sh.out, lanes, name, name);
    fprintf(f, "    for (l = 0; l < %d; ++l) {\n        for (i = 0; i < %d; ++i) sq[i] = q[i * %d + l];\n", lanes, nq, lanes);
    if (sh.u) {
        fprintf(f, "        for (i = 0; u && i < %d; ++i) su[i] = u[i * %d + l];\n", nv, lanes);
        fprintf(f, "        for (i = 0; %s && i < %d; ++i) sx[i] = %s[i * %d + l];\n", sh.w, nv, sh.w, lanes);
        fprintf(f, "        for (i = 0; f_ext && i < %d; ++i) sf[i] = f_ext[i * %d + l];\n", 6 * n, lanes);
        fprintf(f, "        st = %s_%s(sq, u ? su : NULL, %s ? sx : NULL, f_ext ? sf : NULL, so);\n", name,
                functions[id].name, sh.w);
    } else {
        fprintf(f, "        (void)su, (void)sx, (void)sf;\n        st = %s_%s(sq, so);\n", name, functions[id].name);
    }
    fprintf(f, "        if (st == %s_OK)\n            for (i = 0; i < %d; ++i) %s[i * %d + l] = so[i];\n"
               "        else if (ret == %s_OK)\n            ret = st;\n        if (status) status[l] = st;\n    }\n"
               "    return ret;\n}\n",
            name, nout, sh.out, lanes, name);
}

/* The widths of the lane form to write: 4 and/or 8 (SD_CODEGEN_LANES_*). */
static int lane_width(unsigned lanes, int i)
{
    const unsigned width = i ? 8u : 4u;
    return lanes & width ? (int)width : 0;
}

static void write_header(FILE *f, const sd_model *m, const char *name, unsigned algorithms, unsigned lanes)
{
    fprintf(f, "/* %s.h — generated by soadyn %s (soadyn codegen) for model '%s'. Do not edit: generate again. */\n",
            name, SOADYN_VERSION, m->name);
    fprintf(f, "#ifndef %s_GENERATED_H\n#define %s_GENERATED_H\n\n", name, name);
    fprintf(f, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    fprintf(f, "/* The model's sizes: q has NQ entries, u, qdd, tau NV, f_ext and f 6 per body (NBODIES). */\n");
    fprintf(f, "enum { %s_NQ = %d, %s_NV = %d, %s_NBODIES = %d };\n\n", name, m->nq, name, m->nv, name, m->n);
    fprintf(f, "/* Return values: soadyn's sd_status values. */\n");
    fprintf(f, "enum { %s_OK = %d, %s_E_ARGUMENT = %d, %s_E_SINGULAR = %d, %s_E_NOT_FINITE = %d };\n\n", name, SD_OK,
            name, SD_E_ARGUMENT, name, SD_E_SINGULAR, name, SD_E_NOT_FINITE);
    for (int id = 0; id < FN_COUNT; ++id)
        if (algorithms & functions[id].flag)
            fprintf(f, "/* as %s */\nint %s_%s(%s);\n", functions[id].library, name, functions[id].name,
                    functions[id].params);
    if (lanes) {
        fprintf(f, "\n/* The lane form: L states per call (L = 4 or 8, the suffix _xL). Each array holds the L states'\n"
                   " * arrays lane-minor: entry i of state l at [i * L + l] (q: NQ * L doubles, M: NV * NV * L). status\n"
                   " * (L ints, may be NULL) receives each state's return value; the function returns the first\n"
                   " * failing lane's, or OK. A lane whose input is not finite, whose pivot fails or whose result\n"
                   " * is not finite leaves its outputs untouched; the others are stored. Each lane gives the\n"
                   " * single-state function's result bit for bit when nothing is contracted into FMAs: compile\n"
                   " * with -ffp-contract=off (GCC: the default of -std=c99, not of -std=gnu99), never -ffast-math.\n"
                   " * GCC and Clang run it on vector extensions; another compiler gets a loop over the\n"
                   " * single-state function. */\n");
        for (int i = 0; i < 2; ++i)
            for (int id = 0; lane_width(lanes, i) && id < FN_COUNT; ++id)
                if (algorithms & functions[id].flag)
                    fprintf(f, "int %s_%s_x%d(%s, int *status);\n", name, functions[id].name, lane_width(lanes, i),
                            functions[id].params);
    }
    fprintf(f, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

/* The lane form's frame: the vector types, the per-lane finiteness test, contraction off. */
static void write_lanes_preamble(FILE *f, const char *name)
{
    fprintf(f, "/* The lane form gives each lane the single-state result bit for bit only when no operation is\n"
               " * fused or reassociated: compile with -ffp-contract=off (GCC's default in ISO C, -std=c99), not\n"
               " * -ffast-math. */\n"
               "#if defined(__FAST_MATH__)\n#error \"compile the generated code without -ffast-math (the lane form must equal the single-state form)\"\n#endif\n\n");
    fprintf(f, "#if defined(__GNUC__) && !defined(SD_GENERATED_NO_VECTORS)\n"
               "/* GCC and Clang vector extensions: 4 or 8 states, one per lane (-DSD_GENERATED_NO_VECTORS: the\n"
               " * loop over the single-state functions that other compilers get). */\n"
               "typedef double sd_v4d __attribute__((vector_size(32)));\n"
               "typedef double sd_v8d __attribute__((vector_size(64)));\n\n"
               "static int %s_finite_lane(const double *x, int n, int lanes, int l)\n{\n"
               "    for (int i = 0; i < n; ++i)\n        if (!isfinite(x[i * lanes + l])) return 0;\n    return 1;\n}\n"
               "#endif\n",
            name);
}

static sd_status write_source(FILE *f, const sd_model *m, const char *name, unsigned algorithms, unsigned lanes)
{
    const int nzero = max3(m->nv, 6 * m->n, 1) * (lanes & 8 ? 8 : lanes & 4 ? 4 : 1);
    cg_gen g = {.m = m, .part_limit = CG_PART_STATEMENTS};
    size_t next = 1; /* the nodes' blocks beyond the rigid kind's fixed sizes (cg_gen.h) */
    for (int k = 0; k < m->n; ++k) next += cg_node_ext_size(m, k);
    g.node = calloc((size_t)m->n + 1, sizeof *g.node);
    g.q = malloc(((size_t)m->nq + 2 * (size_t)m->nv + 6 * (size_t)m->n + 1) * sizeof *g.q);
    cg_val *ext = malloc(next * sizeof *ext);
    if (!g.node || !g.q || !ext) {
        free(g.node);
        free(g.q);
        free(ext);
        return SD_E_MEMORY;
    }
    size_t off = 0;
    for (int k = 0; k < m->n; ++k) {
        cg_node_ext_layout(m, k, &g.node[k], ext + off);
        off += g.node[k].next;
    }
    g.u = g.q + m->nq;
    g.w = g.u + m->nv;
    g.f_ext = g.w + m->nv;
    char singular[64];
    snprintf(singular, sizeof singular, "return %s_E_SINGULAR;", name);
    g.singular_return = singular;
    fprintf(f, "/* %s.c — generated by soadyn %s (soadyn codegen) for model '%s': straight-line code,\n"
               " * the model's constants folded in. Do not edit: generate again. C99, libm only. */\n",
            name, SOADYN_VERSION, m->name);
    fprintf(f, "#include <math.h>\n#include <string.h>\n\n#include \"%s.h\"\n\n", name);
    if (lanes) write_lanes_preamble(f, name);
    fprintf(f, "/* The recursions compute values no output reads (the base's force, a leaf's bias before its\n"
               " * children's): the compiler drops them; they are not warned about. */\n"
               "#if defined(__GNUC__)\n#pragma GCC diagnostic ignored \"-Wunused-variable\"\n#endif\n\n");
    fprintf(f, "/* What a NULL u, f_ext (and qdd, tau) read. */\nstatic const double %s_zero[%d];\n\n", name, nzero);
    fprintf(f, "static int %s_finite(const double *x, int n)\n{\n    for (int i = 0; i < n; ++i)\n"
               "        if (!isfinite(x[i])) return 0;\n    return 1;\n}\n\n",
            name);
    fprintf(f, "/* A long function is written in parts, each compiled on its own (inlined, the compiler would\n"
               " * allocate registers over the whole again); values pass from part to part in w. */\n"
               "#if defined(__GNUC__)\n#define SD_GENERATED_PART static __attribute__((noinline))\n#else\n"
               "#define SD_GENERATED_PART static\n#endif\n");
    for (int id = 0; id < FN_COUNT && !g.out_of_memory; ++id) {
        if (!(algorithms & functions[id].flag)) continue;
        write_function(f, m, name, (fn_id)id, &g);
        if (!lanes) continue;
        fprintf(f, "\n#if defined(__GNUC__) && !defined(SD_GENERATED_NO_VECTORS)\n");
        for (int i = 0; i < 2 && !g.out_of_memory; ++i)
            if (lane_width(lanes, i)) write_lanes_function(f, m, name, (fn_id)id, lane_width(lanes, i), &g);
        fprintf(f, "\n#else\n");
        for (int i = 0; i < 2; ++i)
            if (lane_width(lanes, i)) write_lanes_fallback(f, m, name, (fn_id)id, lane_width(lanes, i));
        fprintf(f, "#endif\n");
    }
    free(g.node);
    free(g.q);
    free(ext);
    return g.out_of_memory ? SD_E_MEMORY : SD_OK;
}

/* Write one file through DIR/FILE.partial, renamed when complete. */
static sd_status write_file(const char *dir, const char *name, const char *ext, const sd_model *m, unsigned algorithms,
                            unsigned lanes, sd_error *err)
{
    char path[4096], partial[4200];
    if (snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext) >= (int)sizeof path)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_codegen_write: the output path '%s/%s.%s' is too long", dir, name, ext);
    snprintf(partial, sizeof partial, "%s.partial", path);
    FILE *f = fopen(partial, "w");
    if (!f) return sd_error_set(err, SD_E_IO, "sd_codegen_write: cannot write '%s': %s", partial, strerror(errno));
    sd_status st = SD_OK;
    if (ext[0] == 'h') write_header(f, m, name, algorithms, lanes);
    else st = write_source(f, m, name, algorithms, lanes);
    const int bad = ferror(f);
    if (fclose(f) != 0 || bad || st != SD_OK) {
        remove(partial);
        if (st == SD_E_MEMORY) return sd_error_set(err, st, "sd_codegen_write: out of memory generating '%s'", path);
        return sd_error_set(err, SD_E_IO, "sd_codegen_write: writing '%s' failed", path);
    }
    if (rename(partial, path) != 0) {
        const int e = errno;
        remove(partial);
        return sd_error_set(err, SD_E_IO, "sd_codegen_write: cannot rename '%s' to '%s': %s", partial, path, strerror(e));
    }
    return SD_OK;
}

sd_status sd_codegen_write(const sd_model *m, const sd_codegen_options *o, const char *dir, const char *name,
                           sd_error *err)
{
    if (!m || !dir) return sd_error_set(err, SD_E_ARGUMENT, "sd_codegen_write: NULL model or directory");
    if (!is_identifier(name))
        return sd_error_set(err, SD_E_ARGUMENT, "sd_codegen_write: name '%s' is not a C identifier (letters, digits, _)",
                            name ? name : "(null)");
    const unsigned algorithms = o && o->algorithms ? o->algorithms : SD_CODEGEN_ALL;
    if (algorithms & ~(unsigned)SD_CODEGEN_ALL)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_codegen_write: unknown algorithm flags 0x%x", algorithms);
    const unsigned lanes = o ? o->lanes : 0;
    if (lanes & ~(unsigned)(SD_CODEGEN_LANES_4 | SD_CODEGEN_LANES_8))
        return sd_error_set(err, SD_E_ARGUMENT, "sd_codegen_write: lanes %u: the lane form has 4 or 8 lanes (or both, 12)",
                            lanes);
    sd_status st = check_model(m, err);
    if (st != SD_OK) return st;
    /* the source first: the header appears only beside a complete source */
    if ((st = write_file(dir, name, "c", m, algorithms, lanes, err)) != SD_OK) return st;
    if ((st = write_file(dir, name, "h", m, algorithms, lanes, err)) != SD_OK) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.c", dir, name);
        remove(path);
        return st;
    }
    if (err) {
        err->status = SD_OK;
        err->message[0] = '\0';
    }
    return SD_OK;
}
