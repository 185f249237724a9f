/*
 * src/model/name_table.c — names to indices by open addressing (FNV-1a hash, linear probing, load
 * factor at most 1/2).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "name_table.h"

struct sd_name_table {
    size_t mask;
    int count, capacity;
    const char **names;
    int *indices;
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; ++s) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

sd_name_table *sd_name_table_new(int capacity)
{
    sd_name_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    size_t slots = 16;
    while (slots < 2 * (size_t)(capacity > 0 ? capacity : 1)) slots *= 2;
    t->mask = slots - 1;
    t->capacity = capacity;
    t->names = calloc(slots, sizeof *t->names);
    t->indices = malloc(slots * sizeof *t->indices);
    if (!t->names || !t->indices) {
        sd_name_table_free(t);
        return NULL;
    }
    return t;
}

void sd_name_table_free(sd_name_table *t)
{
    if (!t) return;
    free(t->names);
    free(t->indices);
    free(t);
}

static size_t slot_of(const sd_name_table *t, const char *name)
{
    size_t i = (size_t)fnv1a(name) & t->mask;
    while (t->names[i] && strcmp(t->names[i], name) != 0) i = (i + 1) & t->mask;
    return i;
}

int sd_name_table_insert(sd_name_table *t, const char *name, int index)
{
    const size_t i = slot_of(t, name);
    if (t->names[i]) return t->indices[i];
    if (t->count >= t->capacity) return -2;
    t->names[i] = name;
    t->indices[i] = index;
    t->count++;
    return -1;
}

int sd_name_table_find(const sd_name_table *t, const char *name)
{
    if (!name) return -1;
    const size_t i = slot_of(t, name);
    return t->names[i] ? t->indices[i] : -1;
}
