/*
 * src/compile/compile_key.h — the cache key of a compiled model (soadyn/compile.h): a 64-bit FNV-1a
 * hash over everything the generated code depends on, and the strings that name how it was built.
 */
#ifndef SOADYN_COMPILE_KEY_H
#define SOADYN_COMPILE_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "../internal.h"

/* The FNV-1a offset basis: a hash's start. */
#define SD_HASH_START 0xcbf29ce484222325u

/* The hash h continued over n bytes at p. */
uint64_t sd_hash_bytes(uint64_t h, const void *p, size_t n);
/* The hash h continued over the NUL-terminated text s (the NUL included, so "ab","c" != "a","bc"). */
uint64_t sd_hash_text(uint64_t h, const char *s);
/* The hash h continued over what a rigid tree's generated code folds in: sizes, topology, hinges and
 * their axes, placements, inertias, joint terms, gravity. */
uint64_t sd_hash_model(uint64_t h, const sd_model *m);

#endif /* SOADYN_COMPILE_KEY_H */
