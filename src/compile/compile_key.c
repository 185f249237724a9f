/*
 * src/compile/compile_key.c — the content hash of a model for the compiled-code cache (compile_key.h).
 * FNV-1a (Fowler, Noll, Vo): each byte xor-ed in, then a multiply by the 64-bit FNV prime. Not a
 * cryptographic hash: the cache is the user's own directory, the key only tells models apart.
 */
#include "compile_key.h"

uint64_t sd_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; ++i) {
        h ^= b[i];
        h *= 0x100000001b3u;
    }
    return h;
}

uint64_t sd_hash_text(uint64_t h, const char *s) { return sd_hash_bytes(h, s, strlen(s) + 1); }

uint64_t sd_hash_model(uint64_t h, const sd_model *m)
{
    const size_t n = (size_t)m->n, nv = (size_t)m->nv;
    const int sizes[3] = {m->n, m->nq, m->nv};
    h = sd_hash_bytes(h, sizes, sizeof sizes);
    h = sd_hash_bytes(h, m->parent, n * sizeof *m->parent);
    h = sd_hash_bytes(h, m->hinge, n * sizeof *m->hinge);
    h = sd_hash_bytes(h, m->hinge_axes, 9 * n * sizeof *m->hinge_axes);
    h = sd_hash_bytes(h, m->hinge_turn, 12 * n * sizeof *m->hinge_turn);
    h = sd_hash_bytes(h, m->placement, n * sizeof *m->placement);
    h = sd_hash_bytes(h, m->rigid, 13 * n * sizeof *m->rigid);
    h = sd_hash_bytes(h, m->armature, nv * sizeof *m->armature);
    h = sd_hash_bytes(h, m->damping, nv * sizeof *m->damping);
    h = sd_hash_bytes(h, m->stiffness, nv * sizeof *m->stiffness);
    h = sd_hash_bytes(h, m->spring_ref, nv * sizeof *m->spring_ref);
    return sd_hash_bytes(h, m->gravity, sizeof m->gravity);
}
