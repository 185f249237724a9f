/*
 * tests/sim/test_json_writer.c — the command's JSON writer (cli/json_writer.c) on its own:
 *   - keys and strings of any length come out whole (a 5000-character key), escaped so that a
 *     strict parser reads back exactly what went in (quotes, backslashes, control characters);
 *   - bytes that are not UTF-8 become U+FFFD (the text stays valid JSON), valid UTF-8 passes;
 *   - a non-finite number fails the writer and names its key, whole; nesting past the limit fails
 *     the writer instead of writing text that no longer matches its structure.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_writer.h"
#include "mini_json.h"
#include "test_util.h"

static void check_long_and_escaped(void)
{
    char *long_key = malloc(5001);
    memset(long_key, 'k', 5000);
    long_key[4999] = '2';
    long_key[5000] = '\0';
    const char *tricky = "quote \" backslash \\ newline \n tab \t bell \a end";
    json_writer w;
    jw_init(&w);
    jw_begin_object(&w, NULL);
    jw_number(&w, long_key, 1.5);
    jw_string(&w, "tricky", tricky);
    jw_string(&w, "utf8", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    jw_string(&w, "not utf8", "a\xff" "b\xc3(c\xed\xa0\x80" "d\xe2\x82");
    jw_end_object(&w);
    size_t len = 0;
    const char *text = jw_text(&w, &len);
    CHECK(text != NULL && len == strlen(text));
    mj_value *root = text ? mj_parse(text) : NULL;
    CHECK(root != NULL);
    const mj_value *v = mj_get(root, long_key);
    CHECK(v && v->type == MJ_NUMBER && v->number == 1.5);
    v = mj_get(root, "tricky");
    CHECK(v && v->type == MJ_STRING && strcmp(v->string, tricky) == 0);
    v = mj_get(root, "utf8");
    CHECK(v && v->type == MJ_STRING && strcmp(v->string, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == 0);
    /* each byte that starts no valid sequence becomes one U+FFFD: a, ff, b, c3, (, c, ed a0 80 (a
     * surrogate: three), d, e2 82 (cut short: two) */
    CHECK(text && strstr(text, "\"a\\ufffdb\\ufffd(c\\ufffd\\ufffd\\ufffdd\\ufffd\\ufffd\"") != NULL);
    mj_free(root);
    jw_free(&w);
    free(long_key);
}

static void check_failures(void)
{
    char key[300];
    memset(key, 'n', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    json_writer w;
    jw_init(&w);
    jw_begin_object(&w, NULL);
    jw_number(&w, "fine", 1.0);
    jw_number(&w, key, NAN);
    jw_number(&w, "also bad", INFINITY);
    jw_end_object(&w);
    size_t len;
    CHECK(jw_text(&w, &len) == NULL);
    CHECK(w.failed == 2 && w.bad_key && strcmp(w.bad_key, key) == 0); /* the first, whole */
    jw_free(&w);

    jw_init(&w);
    for (int i = 0; i < JW_MAX_DEPTH + 3; ++i) jw_begin_array(&w, NULL);
    for (int i = 0; i < JW_MAX_DEPTH + 3; ++i) jw_end_array(&w);
    CHECK(jw_text(&w, &len) == NULL && w.failed == 3);
    jw_free(&w);

    jw_init(&w); /* just inside the limit: fine */
    for (int i = 0; i < JW_MAX_DEPTH - 1; ++i) jw_begin_array(&w, NULL);
    for (int i = 0; i < JW_MAX_DEPTH - 1; ++i) jw_end_array(&w);
    const char *text = jw_text(&w, &len);
    mj_value *root = text ? mj_parse(text) : NULL;
    CHECK(root != NULL);
    mj_free(root);
    jw_free(&w);
}

int main(void)
{
    check_long_and_escaped();
    check_failures();
    return test_summary("test_json_writer");
}
