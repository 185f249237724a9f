/*
 * fuzz/fuzz_bytes.h — the fuzz input read as a stream of choices, for the structured targets
 * (fuzz_sdf_model, fuzz_loops): each call takes what it needs from the front, and an exhausted
 * input answers zeros, so every input is a whole model. Numbers come from a table of values that
 * break code (0, tiny, huge, negative, just past a bound) or from two bytes scaled to a plain range.
 */
#ifndef SOADYN_FUZZ_BYTES_H
#define SOADYN_FUZZ_BYTES_H

#include <stddef.h>
#include <stdint.h>

typedef struct fuzz_bytes {
    const uint8_t *p;
    size_t n;
} fuzz_bytes;

static inline unsigned fuzz_u8(fuzz_bytes *b)
{
    if (b->n == 0) return 0;
    --b->n;
    return *b->p++;
}

/* An integer in [lo, hi]. */
static inline int fuzz_int(fuzz_bytes *b, int lo, int hi)
{
    return lo + (int)(fuzz_u8(b) % (unsigned)(hi - lo + 1));
}

/* A number: one byte picks a value that breaks code, or a plain one in [-scale, scale]. */
static inline double fuzz_number(fuzz_bytes *b, double scale)
{
    static const double edge[] = {0.0, 1.0, -1.0, 0.5, 1e-300, -1e-300, 1e-12, 1e-9, 1e6, 1e7, 1e12,
                                  1e30, 1e150, 1e155, 1e300, 1e308, -1e308, 3.14159265358979, 1.5707963267949};
    const unsigned pick = fuzz_u8(b);
    if (pick < sizeof edge / sizeof *edge) return edge[pick];
    const unsigned hi = fuzz_u8(b), lo = fuzz_u8(b);
    return scale * ((double)(hi * 256u + lo) / 32767.5 - 1.0);
}

#endif /* SOADYN_FUZZ_BYTES_H */
