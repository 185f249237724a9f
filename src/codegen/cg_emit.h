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
 *
 * The lane form (cg_emit.lanes 4 or 8) writes the same statements on vectors of 4 or 8 states (GCC
 * and Clang vector extensions, one state per lane): `const sd_v4d t = a op b;` with the same
 * operands in the same order, a constant operand a scalar the compiler repeats in every lane, and
 * libm calls and data-dependent choices lane by lane. Each lane so performs the very operations of
 * the single-state code, and gives the same doubles bit for bit.
 */
#ifndef SOADYN_CG_EMIT_H
#define SOADYN_CG_EMIT_H

#include <stdio.h>

/* The arrays a generated function reads its scalars from besides its temporaries: its arguments, and
 * the workspace w that carries values from one part of a long function to the next (codegen.c). */
typedef enum cg_array { CG_NONE = 0, CG_Q, CG_U, CG_X, CG_FEXT, CG_W } cg_array;

/* A scalar: with arr CG_NONE, t >= 0 names the temporary t<t> of the generated function and t < 0
 * is the constant c; otherwise entry t of array arr. */
typedef struct cg_val {
    int t;
    cg_array arr;
    double c;
} cg_val;

/* Where a generated function's statements go, its temporaries' count and its statements'. */
typedef struct cg_emit {
    FILE *f;
    int ntemp;
    long stmts;
    int lanes; /* 0: one state (double); 4 or 8: the lane form (sd_v4d, sd_v8d) */
} cg_emit;

static inline cg_val cg_const(double c) { return (cg_val){-1, CG_NONE, c}; }
static inline cg_val cg_entry(cg_array arr, int index) { return (cg_val){index, arr, 0.0}; }
static inline int cg_is_const(cg_val a) { return a.arr == CG_NONE && a.t < 0; }
static inline int cg_is_temp(cg_val a) { return a.arr == CG_NONE && a.t >= 0; }
static inline int cg_is(cg_val a, double c) { return cg_is_const(a) && a.c == c; }

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
/* The type of a temporary: "double", or the lane form's vector type. */
const char *cg_type(const cg_emit *e);
/* A scalar as a whole value of the function's type: in the lane form a constant becomes a vector
 * of that constant in every lane (size: at least 64 + 8 * 30 bytes). */
const char *cg_vtext(const cg_emit *e, cg_val a, char *buf, size_t size);
/* The test of a pivot d of a factorisation: one state returns `singular_return` when !(d > 0);
 * the lane form marks the lanes where !(d > 0) in bad[] and goes on with the others. */
void cg_check_pivot(cg_emit *e, cg_val d, const char *singular_return);
/* A statement written as given (indented by the caller's fmt). */
void cg_line(cg_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* sum_i a[i] b[i] with the folding above. */
cg_val cg_dot(cg_emit *e, const cg_val *a, const cg_val *b, int n);

#endif /* SOADYN_CG_EMIT_H */
