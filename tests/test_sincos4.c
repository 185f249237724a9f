/*
 * tests/test_sincos4.c — the vector sine and cosine of the hinge placements (src/common/sincos4.h)
 * against libm's sin and cos: within 2 ulp where the value is not tiny and 2.5e-16 absolutely
 * everywhere, on random angles of up to a few turns and up to 1e5 rad, on angles next to the
 * quadrant boundaries k pi/2 (where the reduction cancels), on zeros (exactly 0 and 1); beyond
 * 1e5 rad, infinities and NaN, libm's own values bit for bit (the per-lane fallback) or NaN. A lane's
 * values do not depend on the other lanes (the batch kernel, the sweeps and the embedded
 * aggregates group angles differently and must agree bit for bit).
 */
#include <float.h>
#include <string.h>

#include "common/sincos4.h"
#include "random_tree.h"
#include "test_util.h"

static double worst_ulps = 0.0, worst_abs = 0.0;

static double ulps(double x, double ref)
{
    const double a = fabs(ref);
    return fabs(x - ref) / (nextafter(a, INFINITY) - a);
}

/* One lane's values against libm. */
static void check_lane(double x, double s, double c)
{
    if (isnan(x) || isinf(x)) {
        CHECK(isnan(s) && isnan(c));
        return;
    }
    const double s_ref = sin(x), c_ref = cos(x);
    if (fabs(x) > 1e5) { /* libm's values */
        CHECK(memcmp(&s, &s_ref, sizeof s) == 0 && memcmp(&c, &c_ref, sizeof c) == 0);
        return;
    }
    const double es = fabs(s - s_ref), ec = fabs(c - c_ref);
    CHECK(es <= 2.5e-16 && ec <= 2.5e-16);
    worst_abs = fmax(worst_abs, fmax(es, ec));
    if (fabs(s_ref) > 1e-8) {
        CHECK(ulps(s, s_ref) <= 2.0);
        worst_ulps = fmax(worst_ulps, ulps(s, s_ref));
    }
    if (fabs(c_ref) > 1e-8) {
        CHECK(ulps(c, c_ref) <= 2.0);
        worst_ulps = fmax(worst_ulps, ulps(c, c_ref));
    }
    if (!(es <= 2.5e-16 && ec <= 2.5e-16)) fprintf(stderr, "x = %.17g: sin %.17g cos %.17g\n", x, s, c);
}

/* Four angles in one call; then each alone in lane 0 (others zero), which must give the same bits. */
static void check4(const double x[4])
{
    double s[4], c[4];
    sd_sincos4(x, s, c);
    for (int l = 0; l < 4; ++l) {
        check_lane(x[l], s[l], c[l]);
        const double one[4] = {x[l], 0.0, 0.0, 0.0};
        double s1[4], c1[4];
        sd_sincos4(one, s1, c1);
        CHECK(memcmp(&s1[0], &s[l], sizeof s[l]) == 0 && memcmp(&c1[0], &c[l], sizeof c[l]) == 0);
    }
}

int main(void)
{
    uint64_t rng = 0x5eed5c4u;
    const double half_pi = 1.5707963267948966;
    for (int i = 0; i < 200000; ++i) {
        double x[4];
        for (int l = 0; l < 4; ++l) {
            const double r = 2 * sd_random_uniform(&rng) - 1;
            switch ((i + l) % 4) {
            case 0: x[l] = 20 * r; break;                             /* a few turns */
            case 1: x[l] = 1e5 * r; break;                            /* up to the fallback */
            case 2: x[l] = floor(4000 * r) * half_pi * (1 + 1e-13 * r); break; /* near k pi/2 */
            default: x[l] = ldexp(r, -(int)(60 * sd_random_uniform(&rng))); /* small angles */
            }
        }
        check4(x);
    }
    const double special[][4] = {
        {0.0, -0.0, half_pi, -half_pi},
        {3.141592653589793, -3.141592653589793, 2 * 3.141592653589793, 1e-300},
        {99999.99, -99999.99, 100000.5, -3e7},        /* both sides of the fallback */
        {1e300, -1e300, DBL_MIN, -DBL_MIN},
        {INFINITY, -INFINITY, NAN, 0.5},
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i) check4(special[i]);
    { /* exact values where they are exact */
        const double x[4] = {0.0, -0.0, 0.0, 0.0};
        double s[4], c[4];
        sd_sincos4(x, s, c);
        CHECK(s[0] == 0.0 && c[0] == 1.0 && s[1] == 0.0 && c[1] == 1.0); /* sin(-0) may be +0 */
    }
    printf("worst: %.3g ulp, %.3g absolute\n", worst_ulps, worst_abs);
    return test_summary("test_sincos4");
}
