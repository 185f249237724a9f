/*
 * src/codegen/cg_emit.c — the generator's scalars (cg_emit.h): constant folding and one statement per
 * operation left for run time.
 */
#include "cg_emit.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

const char *cg_text(cg_val a, char *buf)
{
    static const char *const arrays[] = {[CG_Q] = "q", [CG_U] = "u", [CG_X] = "x", [CG_FEXT] = "f_ext", [CG_W] = "w"};
    if (a.arr != CG_NONE) {
        snprintf(buf, 40, "%s[%d]", arrays[a.arr], a.t);
        return buf;
    }
    if (a.t >= 0) {
        snprintf(buf, 40, "t%d", a.t);
        return buf;
    }
    char num[32];
    snprintf(num, sizeof num, "%.17g", fabs(a.c));
    /* a bare integer is an int in C: give it a decimal point so that every constant is a double */
    const char *dot = strpbrk(num, ".e") ? "" : ".0";
    if (a.c < 0 || (a.c == 0.0 && signbit(a.c))) snprintf(buf, 40, "(-%s%s)", num, dot);
    else snprintf(buf, 40, "%s%s", num, dot);
    return buf;
}

const char *cg_type(const cg_emit *e) { return e->lanes == 8 ? "sd_v8d" : e->lanes == 4 ? "sd_v4d" : "double"; }

const char *cg_vtext(const cg_emit *e, cg_val a, char *buf, size_t size)
{
    char x[40];
    cg_text(a, x);
    if (!e->lanes || !cg_is_const(a)) {
        snprintf(buf, size, "%s", x);
        return buf;
    }
    size_t len = (size_t)snprintf(buf, size, "(%s){", cg_type(e));
    for (int l = 0; l < e->lanes && len < size; ++l) len += (size_t)snprintf(buf + len, size - len, l ? ", %s" : "%s", x);
    if (len < size) snprintf(buf + len, size - len, "}");
    return buf;
}

/* A scalar as one lane's double in the lane form's per-lane loop (index sd_l): a constant as such. */
static const char *lane_text(cg_val a, char *buf)
{
    char x[40];
    if (cg_is_const(a)) return cg_text(a, buf);
    snprintf(buf, 48, "%s[sd_l]", cg_text(a, x));
    return buf;
}

void cg_check_pivot(cg_emit *e, cg_val d, const char *singular_return)
{
    char x[48];
    if (!e->lanes) {
        fprintf(e->f, "    if (!(%s > 0.0)) %s\n", cg_text(d, x), singular_return);
        return;
    }
    fprintf(e->f, "    for (int sd_l = 0; sd_l < %d; ++sd_l)\n        if (!(%s > 0.0)) bad[sd_l] = 1;\n", e->lanes,
            lane_text(d, x));
}

void cg_line(cg_emit *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(e->f, fmt, ap);
    va_end(ap);
}

/* A new temporary (its statement is the caller's). */
static cg_val fresh(cg_emit *e)
{
    ++e->stmts;
    return (cg_val){e->ntemp++, CG_NONE, 0.0};
}

/* In the lane form a vector operand with a scalar constant: the compiler repeats the constant in
 * every lane, so the lane's operation is the single state's. */
static cg_val binary(cg_emit *e, cg_val a, char op, cg_val b)
{
    char x[40], y[40];
    const cg_val r = fresh(e);
    fprintf(e->f, "    const %s t%d = %s %c %s;\n", cg_type(e), r.t, cg_text(a, x), op, cg_text(b, y));
    return r;
}

cg_val cg_neg(cg_emit *e, cg_val a)
{
    if (cg_is_const(a)) return cg_const(-a.c);
    char x[40];
    const cg_val r = fresh(e);
    fprintf(e->f, "    const %s t%d = -%s;\n", cg_type(e), r.t, cg_text(a, x));
    return r;
}

cg_val cg_add(cg_emit *e, cg_val a, cg_val b)
{
    if (cg_is_const(a) && cg_is_const(b)) return cg_const(a.c + b.c);
    if (cg_is(a, 0.0)) return b;
    if (cg_is(b, 0.0)) return a;
    return binary(e, a, '+', b);
}

cg_val cg_sub(cg_emit *e, cg_val a, cg_val b)
{
    if (cg_is_const(a) && cg_is_const(b)) return cg_const(a.c - b.c);
    if (cg_is(b, 0.0)) return a;
    if (cg_is(a, 0.0)) return cg_neg(e, b);
    return binary(e, a, '-', b);
}

cg_val cg_mul(cg_emit *e, cg_val a, cg_val b)
{
    if (cg_is_const(a) && cg_is_const(b)) return cg_const(a.c * b.c);
    if (cg_is(a, 0.0) || cg_is(b, 0.0)) return cg_const(0.0);
    if (cg_is(a, 1.0)) return b;
    if (cg_is(b, 1.0)) return a;
    if (cg_is(a, -1.0)) return cg_neg(e, b);
    if (cg_is(b, -1.0)) return cg_neg(e, a);
    return binary(e, a, '*', b);
}

cg_val cg_div(cg_emit *e, cg_val a, cg_val b)
{
    if (cg_is_const(a) && cg_is_const(b)) return cg_const(a.c / b.c);
    if (cg_is(a, 0.0)) return cg_const(0.0);
    if (cg_is(b, 1.0)) return a;
    return binary(e, a, '/', b);
}

/* The lane form's statement opening a temporary set lane by lane (libm, choices): the vector is
 * zeroed first so that no compiler sees it read before every lane is written. */
static void lane_loop(cg_emit *e, cg_val r)
{
    fprintf(e->f, "    %s t%d = {0};\n    for (int sd_l = 0; sd_l < %d; ++sd_l) t%d[sd_l] = ", cg_type(e), r.t, e->lanes,
            r.t);
}

cg_val cg_call1(cg_emit *e, const char *fn, cg_val a)
{
    char x[48];
    const cg_val r = fresh(e);
    if (e->lanes) {
        lane_loop(e, r);
        fprintf(e->f, "%s(%s);\n", fn, lane_text(a, x));
    } else {
        fprintf(e->f, "    const double t%d = %s(%s);\n", r.t, fn, cg_text(a, x));
    }
    return r;
}

cg_val cg_call2(cg_emit *e, const char *fn, cg_val a, cg_val b)
{
    char x[48], y[48];
    const cg_val r = fresh(e);
    if (e->lanes) {
        lane_loop(e, r);
        fprintf(e->f, "%s(%s, %s);\n", fn, lane_text(a, x), lane_text(b, y));
    } else {
        fprintf(e->f, "    const double t%d = %s(%s, %s);\n", r.t, fn, cg_text(a, x), cg_text(b, y));
    }
    return r;
}

static cg_val select_sign(cg_emit *e, cg_val cond, const char *test, cg_val a, cg_val b)
{
    char c[48], x[48], y[48];
    const cg_val r = fresh(e);
    if (e->lanes) {
        lane_loop(e, r);
        fprintf(e->f, "%s %s ? %s : %s;\n", lane_text(cond, c), test, lane_text(a, x), lane_text(b, y));
    } else {
        fprintf(e->f, "    const double t%d = %s %s ? %s : %s;\n", r.t, cg_text(cond, c), test, cg_text(a, x),
                cg_text(b, y));
    }
    return r;
}

cg_val cg_select_negative(cg_emit *e, cg_val cond, cg_val a, cg_val b)
{
    if (cg_is_const(cond)) return cond.c < 0 ? a : b;
    return select_sign(e, cond, "< 0", a, b);
}

cg_val cg_select_positive(cg_emit *e, cg_val cond, cg_val a, cg_val b)
{
    if (cg_is_const(cond)) return cond.c > 0 ? a : b;
    return select_sign(e, cond, "> 0", a, b);
}

cg_val cg_dot(cg_emit *e, const cg_val *a, const cg_val *b, int n)
{
    cg_val s = cg_const(0.0);
    for (int i = 0; i < n; ++i) s = cg_add(e, s, cg_mul(e, a[i], b[i]));
    return s;
}
