/*
 * src/codegen/cg_emit.h — the generator's scalars: a number the generated C computes at run time (a
 * temporary t<N>) or one the model fixes (a constant, folded at generation time).
 *
 * WHY. The generator runs the node operations on these scalars instead of doubles: every operation
 * whose operands are all constants is done here, and the identities x + 0, x * 1, x * 0, 0 / x are
 * applied before anything is written. So a zero inertia entry, an identity rotation, an
 * axis-selecting H* or an unrelated body's block of M never reach the generated file, with no
 * special case in the operations themselves, and what is written is one `const double t = a op b;`
 * per operation that depends on the state: straight-line code the C compiler schedules across
 * bodies. Folding a constant operation gives the same double the run-time operation would.
 */
#ifndef SOADYN_CG_EMIT_H
#define SOADYN_CG_EMIT_H

#include <stdio.h>

/* A scalar: t >= 0 names the temporary t<t> of the generated function; t < 0 is the constant c. */
typedef struct cg_val {
    int t;
    double c;
} cg_val;

/* Where a generated function's statements go, and its temporaries' count. */
typedef struct cg_emit {
    FILE *f;
    int ntemp;
} cg_emit;

static inline cg_val cg_const(double c) { return (cg_val){-1, c}; }
static inline int cg_is_const(cg_val a) { return a.t < 0; }
static inline int cg_is(cg_val a, double c) { return a.t < 0 && a.c == c; }

/* A new temporary holding `expr` (an entry of an argument array, or a libm call written out). */
cg_val cg_load(cg_emit *e, const char *array, int index);
cg_val cg_add(cg_emit *e, cg_val a, cg_val b);
cg_val cg_sub(cg_emit *e, cg_val a, cg_val b);
cg_val cg_mul(cg_emit *e, cg_val a, cg_val b);
cg_val cg_div(cg_emit *e, cg_val a, cg_val b);
cg_val cg_neg(cg_emit *e, cg_val a);
/* fn(a) and fn(a, b) of libm (sin, cos, sqrt, atan2). */
cg_val cg_call1(cg_emit *e, const char *fn, cg_val a);
cg_val cg_call2(cg_emit *e, const char *fn, cg_val a, cg_val b);
/* cond < 0 ? a : b, a data-dependent choice (the quaternion's sign), not a branch on the model. */
cg_val cg_select_negative(cg_emit *e, cg_val cond, cg_val a, cg_val b);
/* cond > 0 ? a : b. */
cg_val cg_select_positive(cg_emit *e, cg_val cond, cg_val a, cg_val b);

/* The text of a scalar as the generated C spells it (a constant to 17 digits, parenthesised when
 * negative), in buf (at least 40 bytes); returns buf. */
const char *cg_text(cg_val a, char *buf);
/* A statement written as given (indented by the caller's fmt). */
void cg_line(cg_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* sum_i a[i] b[i] with the folding above. */
cg_val cg_dot(cg_emit *e, const cg_val *a, const cg_val *b, int n);

#endif /* SOADYN_CG_EMIT_H */
