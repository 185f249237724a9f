/*
 * src/common/sincos4.h — sin x and cos x of four angles at once, for the hinge placements of the
 * single-state sweeps (kinematics.c: four bodies' angles per call) and of the batch kernel
 * (lanes_dynamics.c: one angle per state).
 *
 * Why not libm: a revolute hinge needs one sine and one cosine per evaluation, and libm's sincos
 * (correctly rounded in practice, branchy argument reduction) cost ~85 instructions an angle, 10%
 * of a robot arm's inverse dynamics. Here x = n pi/2 + r with |r| <= pi/4 (Cody-Waite reduction in
 * three parts, exact products for |n| < 2^29), the minimax polynomials of Cephes' sin.c and cos.c
 * on r, and the quadrant n mod 4 choosing and signing them: within 2 ulp of libm's values
 * (tests/test_sincos4.c), ~40 instructions an angle with the gathering of the angles
 * (sd_hinge_sincos4). An angle beyond |x| = 1e5 (thousands of turns) takes libm's sin and cos, whose
 * reduction is exact everywhere.
 *
 * Every lane's result depends on its own angle only (the fallback is chosen per lane), so an
 * angle gets the same bits whichever other angles share its call: the sweeps and the embedded
 * aggregates' placements agree bit for bit. Written with GCC/Clang vector extensions. Where the
 * processor has FMA the library fuses a * b + c (CMakeLists.txt), so the polynomials' and the
 * reduction's sums are rounded once: the bits depend on the build, each within 2 ulp of libm.
 */
#ifndef SOADYN_SINCOS4_H
#define SOADYN_SINCOS4_H

#include <math.h>
#include <string.h>

typedef double sd_d4 __attribute__((vector_size(32)));
typedef long long sd_i4 __attribute__((vector_size(32)));

/* Vectors go by pointer, never by value: without -mavx the by-value ABI of a 32-byte vector differs
 * between compilers (-Wpsabi). */
#define sd_d4_splat(x) ((sd_d4){(x), (x), (x), (x)})

/* *s = sin x, *c = cos x for the four angles *xp. */
static inline void sd_sincos4_v(const sd_d4 *xp, sd_d4 *s, sd_d4 *c)
{
    const sd_d4 x = *xp;
    const double DP1 = 2 * 7.85398125648498535156E-1, DP2 = 2 * 3.77489470793079817668E-8,
                 DP3 = 2 * 2.69515142907905952645E-15; /* pi/2 = DP1 + DP2 + DP3 */
    const sd_d4 magic = sd_d4_splat(0x1.8p52);          /* adding it rounds to an integer */
    const sd_d4 t = x * sd_d4_splat(0.63661977236758134308) + magic; /* 2/pi */
    const sd_d4 n = t - magic;
    const sd_i4 j = (sd_i4)t; /* the low bits of t's mantissa are n's, two's complement */
    const sd_d4 r = ((x - n * sd_d4_splat(DP1)) - n * sd_d4_splat(DP2)) - n * sd_d4_splat(DP3);
    const sd_d4 z = r * r;
    const sd_d4 ps = ((((sd_d4_splat(1.58962301576546568060E-10) * z + sd_d4_splat(-2.50507477628578072866E-8)) * z +
                        sd_d4_splat(2.75573136213857245213E-6)) * z + sd_d4_splat(-1.98412698295895385996E-4)) * z +
                      sd_d4_splat(8.33333333332211858878E-3)) * z + sd_d4_splat(-1.66666666666666307295E-1);
    const sd_d4 pc = ((((sd_d4_splat(-1.13585365213876817300E-11) * z + sd_d4_splat(2.08757008419747316778E-9)) * z +
                        sd_d4_splat(-2.75573141792967388112E-7)) * z + sd_d4_splat(2.48015872888517045348E-5)) * z +
                      sd_d4_splat(-1.38888888888730564116E-3)) * z + sd_d4_splat(4.16666666666665929218E-2);
    const sd_d4 sr = r + r * z * ps;
    const sd_d4 cr = (sd_d4_splat(1.0) - sd_d4_splat(0.5) * z) + z * z * pc;
    const sd_i4 odd = (j & 1) != 0; /* quadrants 1, 3: sine and cosine trade places */
    const sd_i4 sv = (odd & (sd_i4)cr) | (~odd & (sd_i4)sr), cv = (odd & (sd_i4)sr) | (~odd & (sd_i4)cr);
    *s = (sd_d4)(sv ^ ((j & 2) << 62));       /* sin negative in quadrants 2, 3 */
    *c = (sd_d4)(cv ^ (((j + 1) & 2) << 62)); /* cos negative in quadrants 1, 2 */
    /* |x| > 1e5 (or NaN), tested on the bits: a positive double's bits order as its value */
    const sd_i4 large = ((sd_i4)x & 0x7FFFFFFFFFFFFFFFLL) > 0x40F86A0000000000LL; /* 1e5 */
    if (large[0] | large[1] | large[2] | large[3])
        for (int l = 0; l < 4; ++l)
            if (large[l]) { /* rare: the lane's libm values instead */
                (*s)[l] = sin(x[l]);
                (*c)[l] = cos(x[l]);
            }
}

/* The same on arrays of four; the vector is built from the four numbers (storing them and loading
 * one vector would stall the load on the four stores). */
static inline void sd_sincos4(const double x[4], double s[4], double c[4])
{
    const sd_d4 xv = {x[0], x[1], x[2], x[3]};
    sd_d4 sv, cv;
    sd_sincos4_v(&xv, &sv, &cv);
    memcpy(s, &sv, sizeof sv);
    memcpy(c, &cv, sizeof cv);
}

#endif
