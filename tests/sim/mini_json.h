/*
 * tests/sim/mini_json.h — a strict little JSON reader for the tests: parses a whole text into a
 * tree (rejecting trailing garbage, bad escapes, NaN), with lookups by key.
 */
#ifndef SOADYN_TEST_MINI_JSON_H
#define SOADYN_TEST_MINI_JSON_H

typedef enum mj_type { MJ_NULL, MJ_BOOL, MJ_NUMBER, MJ_STRING, MJ_ARRAY, MJ_OBJECT } mj_type;

typedef struct mj_value {
    mj_type type;
    double number;            /* MJ_NUMBER, MJ_BOOL */
    char *string;             /* MJ_STRING */
    int n;                    /* entries of an array or object */
    char **keys;              /* MJ_OBJECT */
    struct mj_value *items;   /* MJ_ARRAY, MJ_OBJECT */
} mj_value;

/* Parse text; NULL on a syntax error (a message with the offset goes to stderr). */
mj_value *mj_parse(const char *text);
void mj_free(mj_value *v);
/* The member `key` of an object, or NULL. */
const mj_value *mj_get(const mj_value *object, const char *key);

#endif
