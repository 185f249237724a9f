/*
 * src/compile/compile.c — sd_model_compile and its cache (soadyn/compile.h): the key, the cache
 * directory, a compile in a private temporary directory renamed into place, loading with dlopen, the
 * object's embedded key, the self-check, and the model's hook (internal.h: sd_compiled_code), which
 * the public entry points test once per call.
 */
#define _GNU_SOURCE /* mkdtemp, dlopen's RTLD_* with -std=c11 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <soadyn/codegen.h>
#include <soadyn/compile.h>

#include "compile_check.h"
#include "compile_key.h"
#include "compile_run.h"

/* The generator's identity: a hash of its sources, taken when soadyn is configured (sources.cmake). */
#ifndef SOADYN_GENERATOR_ID
#error "SOADYN_GENERATOR_ID is set by src/compile/sources.cmake"
#endif

#define DEFAULT_FLAGS "-O2 -std=c99"
#define DEFAULT_SELF_CHECK_STATES 8
/* Lines of the compiler's diagnostics an error quotes. */
#define DIAGNOSTIC_LINES 6

/* A loaded object: the hook the core runs (first, so that the model's pointer is this), its handle
 * and what the compile did. */
typedef struct compiled_object {
    sd_compiled_code code;
    void *handle;
    uint64_t key;
    sd_compile_info info;
} compiled_object;

static long compiler_runs; /* sd_compile_count */

long sd_compile_count(void) { return __atomic_load_n(&compiler_runs, __ATOMIC_RELAXED); }

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void release_object(sd_compiled_code *code)
{
    compiled_object *o = (compiled_object *)code;
    if (o->handle) dlclose(o->handle);
    free(o);
}

/* The cache directory (soadyn/compile.h's order), made with its parents when missing. */
static sd_status cache_directory(const sd_compile_options *o, char *dir, size_t cap, sd_error *err)
{
    const char *given = o && o->cache_dir ? o->cache_dir : getenv("SOADYN_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int len;
    if (given && *given) len = snprintf(dir, cap, "%s", given);
    else if (xdg && *xdg) len = snprintf(dir, cap, "%s/soadyn", xdg);
    else if (home && *home) len = snprintf(dir, cap, "%s/.cache/soadyn", home);
    else
        return sd_error_set(err, SD_E_IO, "sd_model_compile: no cache directory: set SOADYN_CACHE_DIR (or "
                                          "XDG_CACHE_HOME or HOME) or sd_compile_options.cache_dir");
    if (len < 0 || (size_t)len >= cap - 64) return sd_error_set(err, SD_E_IO, "sd_model_compile: the cache path '%s' is too long", dir);
    for (char *s = dir + 1;; ++s) { /* mkdir -p */
        const char c = *s;
        if (c != '/' && c != '\0') continue;
        *s = '\0';
        const int made = mkdir(dir, 0755) == 0 || errno == EEXIST;
        *s = c;
        if (!made) return sd_error_set(err, SD_E_IO, "sd_model_compile: cannot make the cache directory '%s': %s", dir, strerror(errno));
        if (!c) break;
    }
    return SD_OK;
}

/* The compiler's argv words (the command, then the flags) in buffers the caller keeps. */
typedef struct compiler_command {
    char *argv[64];
    int argc;
    char words[2048];
    char flags[2048];
    char version[2048]; /* its `--version` output */
} compiler_command;

static sd_status compiler_setup(const sd_compile_options *o, compiler_command *cc, sd_error *err)
{
    const char *env = getenv("CC");
    const char *compiler = o && o->compiler ? o->compiler : env && *env ? env : "cc";
    const char *flags = o && o->flags ? o->flags : DEFAULT_FLAGS;
    cc->argc = 0;
    if (sd_split_words(compiler, cc->words, sizeof cc->words, cc->argv, &cc->argc, 16) != 0 || cc->argc == 0)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_model_compile: the compiler '%s' is empty or too long", compiler);
    /* `compiler --version`: identifies the compiler in the key, and says whether it runs at all */
    char *probe[20];
    memcpy(probe, cc->argv, (size_t)cc->argc * sizeof *probe);
    probe[cc->argc] = "--version";
    probe[cc->argc + 1] = NULL;
    int status = 0;
    const int e = sd_run_captured(probe, cc->version, sizeof cc->version, &status);
    if (e != 0)
        return sd_error_set(err, SD_E_NOT_SUPPORTED,
                            "sd_model_compile: the C compiler '%s' cannot be run (%s): set CC or "
                            "sd_compile_options.compiler; the library's own code keeps running the model",
                            compiler, strerror(e));
    if (status != 0)
        return sd_error_set(err, SD_E_NOT_SUPPORTED,
                            "sd_model_compile: the C compiler '%s' fails on --version (exit status %d): %.200s; the "
                            "library's own code keeps running the model",
                            compiler, status, cc->version);
    if (sd_split_words(flags, cc->flags, sizeof cc->flags, cc->argv, &cc->argc, 48) != 0)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_model_compile: the flags '%s' are too long", flags);
    return SD_OK;
}

/* The cache key: the model's content, the generator, soadyn's version, the compiler and its flags. */
static uint64_t cache_key(const sd_model *m, const compiler_command *cc)
{
    uint64_t h = sd_hash_model(SD_HASH_START, m);
    h = sd_hash_text(h, SOADYN_GENERATOR_ID);
    h = sd_hash_text(h, SOADYN_VERSION);
    for (int i = 0; i < cc->argc; ++i) h = sd_hash_text(h, cc->argv[i]);
    return sd_hash_text(h, cc->version);
}

/* The text of the symbol the compile adds to the object: its key and soadyn's version. */
static void key_text(uint64_t key, char *out, size_t cap)
{
    snprintf(out, cap, "%016llx soadyn " SOADYN_VERSION " generator " SOADYN_GENERATOR_ID, (unsigned long long)key);
}

/* Load path and check it: every function present, the embedded key this key, the self-check passed.
 * On failure the object is closed and *why says what failed. */
static compiled_object *load_object(const sd_model *m, const char *path, const char *name, uint64_t key,
                                    int states, char *why, size_t cap, sd_error *err, sd_status *check_status)
{
    *check_status = SD_OK;
    const double t0 = now_seconds();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, cap, "%s", dlerror());
        return NULL;
    }
    compiled_object *o = calloc(1, sizeof *o);
    if (!o) {
        dlclose(h);
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    o->handle = h;
    o->key = key;
    o->code.release = release_object;
    char symbol[128];
#define FIND(field, suffix)                                                                                  \
    snprintf(symbol, sizeof symbol, "%s_%s", name, suffix);                                                   \
    *(void **)&o->code.field = dlsym(h, symbol);
    FIND(inverse_dynamics, "inverse_dynamics")
    FIND(mass_matrix, "mass_matrix")
    FIND(forward_dynamics, "forward_dynamics")
    FIND(mass_matrix_inverse, "mass_matrix_inverse")
    FIND(interbody_forces, "interbody_forces")
#undef FIND
    snprintf(symbol, sizeof symbol, "%s_soadyn_key", name);
    const char *embedded = dlsym(h, symbol);
    char expected[256];
    key_text(key, expected, sizeof expected);
    if (!o->code.inverse_dynamics || !o->code.mass_matrix || !o->code.forward_dynamics ||
        !o->code.mass_matrix_inverse || !o->code.interbody_forces || !embedded) {
        snprintf(why, cap, "a generated function or the key symbol is missing");
    } else if (strncmp(embedded, expected, sizeof expected) != 0) {
        snprintf(why, cap, "it was built for another key or soadyn version ('%.120s')", embedded);
    } else {
        *check_status = sd_compiled_self_check(m, &o->code, states, &o->info.self_check_error, err);
        o->info.check_seconds = now_seconds() - t0;
        if (*check_status == SD_OK) return o;
        snprintf(why, cap, "%s", err ? err->message : "the self-check failed");
    }
    release_object(&o->code);
    return NULL;
}

/* Remove the files of a work directory and the directory. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        char path[4400];
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path) remove(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* The first lines of the compiler's output, for an error message. */
static void first_lines(const char *text, char *out, size_t cap)
{
    const char *end = text;
    for (int i = 0; i < DIAGNOSTIC_LINES && *end; ++i) end += strcspn(end, "\n") + (end[strcspn(end, "\n")] != 0);
    snprintf(out, cap, "%.*s", (int)(end - text), text);
}

/* Generate, compile into a private directory and rename the object to path. */
static sd_status build_object(const sd_model *m, compiler_command *cc, const char *dir, const char *name,
                              uint64_t key, const char *path, sd_compile_info *info, sd_error *err)
{
    char work[4200]; /* mkdtemp's template: it replaces the six X by a unique name */
    snprintf(work, sizeof work, "%s/.%s.XXXXXX", dir, name);
    if (!mkdtemp(work)) return sd_error_set(err, SD_E_IO, "sd_model_compile: cannot make a directory in '%s': %s", dir, strerror(errno));
    double t0 = now_seconds();
    sd_status st = sd_codegen_write(m, NULL, work, name, err);
    info->generate_seconds = now_seconds() - t0;
    char source[4300], key_source[4300], object[4300];
    snprintf(source, sizeof source, "%s/%s.c", work, name);
    snprintf(key_source, sizeof key_source, "%s/%s_key.c", work, name);
    snprintf(object, sizeof object, "%s/%s.so", work, name);
    if (st == SD_OK) {
        FILE *f = fopen(key_source, "w");
        char text[256];
        key_text(key, text, sizeof text);
        if (f) fprintf(f, "/* The cache key of %s.c (soadyn/compile.h). */\nconst char %s_soadyn_key[] = \"%s\";\n", name, name, text);
        if (!f || fclose(f) != 0) st = sd_error_set(err, SD_E_IO, "sd_model_compile: cannot write '%s'", key_source);
    }
    if (st == SD_OK) {
        const int argc0 = cc->argc;
        char *extra[] = {"-shared", "-fPIC", "-o", object, source, key_source, "-lm", NULL};
        for (int i = 0; extra[i]; ++i) cc->argv[cc->argc++] = extra[i];
        cc->argv[cc->argc] = NULL;
        char output[8192];
        int status = 0;
        t0 = now_seconds();
        const int e = sd_run_captured(cc->argv, output, sizeof output, &status);
        info->compile_seconds = now_seconds() - t0;
        __atomic_add_fetch(&compiler_runs, 1, __ATOMIC_RELAXED);
        cc->argc = argc0;
        char lines[1024];
        first_lines(output, lines, sizeof lines);
        if (e != 0)
            st = sd_error_set(err, SD_E_NOT_SUPPORTED, "sd_model_compile: the C compiler '%s' cannot be run (%s)",
                              cc->argv[0], strerror(e));
        else if (status != 0)
            st = sd_error_set(err, SD_E_NOT_SUPPORTED,
                              "sd_model_compile: the C compiler '%s' failed (exit status %d) on the generated code; "
                              "its first lines: %s",
                              cc->argv[0], status, lines);
        else if (rename(object, path) != 0) /* atomic: another process's object or ours, complete */
            st = sd_error_set(err, SD_E_IO, "sd_model_compile: cannot move the object to '%s': %s", path, strerror(errno));
    }
    remove_tree(work);
    return st;
}

sd_status sd_model_compile(sd_model *m, const sd_compile_options *o, sd_error *err)
{
    if (!m) return sd_error_set(err, SD_E_ARGUMENT, "sd_model_compile: NULL model");
    if (o && o->self_check_states < 0)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_model_compile: self_check_states = %d is negative", o->self_check_states);
    sd_status st = sd_codegen_check(m, err);
    if (st != SD_OK) {
        if (err) {
            char why[sizeof err->message];
            memcpy(why, err->message, sizeof why);
            sd_error_set(err, st, "sd_model_compile: not offered: %.400s; the library's own code keeps running the model",
                         why);
        }
        return st;
    }
    const int states = o && o->self_check_states ? o->self_check_states : DEFAULT_SELF_CHECK_STATES;
    compiler_command *cc = malloc(sizeof *cc);
    if (!cc) return sd_error_set(err, SD_E_MEMORY, "sd_model_compile: out of memory");
    char dir[4096];
    if ((st = compiler_setup(o, cc, err)) != SD_OK || (st = cache_directory(o, dir, sizeof dir, err)) != SD_OK) {
        free(cc);
        return st;
    }
    const uint64_t key = cache_key(m, cc);
    compiled_object *had = (compiled_object *)m->compiled_code;
    if (had && m->compiled && had->key == key) { /* already running this very code */
        free(cc);
        return SD_OK;
    }
    /* the model runs the library while it is checked; on failure it stays so */
    m->compiled = NULL;
    char name[32], path[sizeof(((sd_compile_info *)0)->path)], why[600];
    snprintf(name, sizeof name, "sdc_%016llx", (unsigned long long)key);
    if (snprintf(path, sizeof path, "%s/%s.so", dir, name) >= (int)sizeof path) { /* cache_directory left room */
        free(cc);
        return sd_error_set(err, SD_E_IO, "sd_model_compile: the cache path '%s' is too long", dir);
    }
    sd_compile_info info = {0};
    sd_status check = SD_OK;
    compiled_object *obj = load_object(m, path, name, key, states, why, sizeof why, err, &check);
    info.cache_hit = obj != NULL;
    if (!obj) {
        if (access(path, F_OK) == 0) remove(path); /* unreadable, stale or wrong: made again below */
        st = build_object(m, cc, dir, name, key, path, &info, err);
        if (st == SD_OK) {
            obj = load_object(m, path, name, key, states, why, sizeof why, err, &check);
            if (!obj && check == SD_OK)
                st = sd_error_set(err, SD_E_NOT_SUPPORTED, "sd_model_compile: the compiled object '%s' does not load: %s",
                                  path, why);
            else if (!obj)
                st = check; /* the self-check's message */
        }
    }
    if (obj) {
        info.compiled = 1;
        info.self_check_error = obj->info.self_check_error;
        info.check_seconds = obj->info.check_seconds;
        snprintf(info.key, sizeof info.key, "%016llx", (unsigned long long)key);
        memcpy(info.path, path, sizeof info.path);
        snprintf(info.compiler, sizeof info.compiler, "%s", cc->argv[0]);
        obj->info = info;
        if (m->compiled_code) m->compiled_code->release(m->compiled_code);
        m->compiled_code = &obj->code;
        m->compiled = &obj->code;
        st = SD_OK;
        if (err) {
            err->status = SD_OK;
            err->message[0] = '\0';
        }
    }
    free(cc);
    return st;
}

int sd_model_compiled(const sd_model *m) { return m && m->compiled; }

void sd_model_uncompile(sd_model *m)
{
    if (!m || !m->compiled_code) return;
    m->compiled = NULL;
    m->compiled_code->release(m->compiled_code);
    m->compiled_code = NULL;
}

sd_status sd_model_compile_info(const sd_model *m, sd_compile_info *info)
{
    if (!m || !info || !m->compiled_code) return SD_E_ARGUMENT;
    *info = ((const compiled_object *)m->compiled_code)->info;
    info->compiled = m->compiled != NULL;
    return SD_OK;
}

sd_status sd_compiled_interbody_forces(const sd_model *m, sd_data *d, const double *q, const double *u,
                                       const double *qdd, const double *f_ext, double *f)
{
    SD_RUN_COMPILED(m, d, interbody_forces, (q, u, qdd, f_ext, f));
    if (!f) return sd_data_fail(d, SD_E_ARGUMENT, "sd_compiled_interbody_forces: NULL f");
    /* tau into the speeds' scratch nu (forward dynamics' eps/nu, which no reader reads); the checks of
     * model, workspace and q come first, so d is the model's own workspace before it is written */
    sd_status st = sd_check_call(m, d, "sd_compiled_interbody_forces", q, NULL, NULL, NULL, NULL);
    if (st == SD_OK) st = sd_inverse_dynamics_library(m, d, q, u, qdd, f_ext, d->nu);
    for (int k = 0; k < m->n && st == SD_OK; ++k) st = sd_interbody_force(m, d, k, SD_FRAME_BODY, f + 6 * k);
    return st;
}
