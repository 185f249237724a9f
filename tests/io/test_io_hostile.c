/*
 * tests/io/test_io_hostile.c — model files written to hurt: each case a file set on disk that the
 * readers once mishandled, and what they must do with it now.
 *
 *   include amplification  nine MJCF files of some 1.3 kB in all, each including the next four
 *                          times, would expand 4^9-fold (47 s and 949 MB before the bound): refused
 *                          within SD_MJCF_MAX_INCLUDES, in well under a second and 50 MB, the message
 *                          naming the include chain
 *   expanded bytes         an include that would take the expanded text past
 *                          SD_MJCF_MAX_EXPANDED_BYTES is refused before it is read (a sparse file)
 *   flexible data files    a URDF whose <soadyn:flexible file=> references together pass
 *                          SD_URDF_MAX_FLEX_FILE_BYTES is refused before the file is read
 *
 *   huge axes              an MJCF axis="1e308 1e308 0" is a direction like any other (it
 *                          overflowed into "zero length"); an SDF <xyz>0 1e308 0</xyz>, which
 *                          libsdformat's own normalisation overflows, is refused as such (it was
 *                          "zero or not finite")
 *
 *   generated body names   an unnamed MJCF body beside one the file names "body2" gets a name
 *                          of its own (the two were refused as duplicates)
 *
 * Files are written in a fresh folder under /tmp and removed at the end.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, ftruncate */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <soadyn/config.h> /* SOADYN_HAS_SDF */
#include <soadyn/soadyn.h>

#include "test_util.h"

static char dir[] = "/tmp/soadyn_io_hostile_XXXXXX";
static char written[64][64]; /* the names written, removed at the end */
static int nwritten;

static void path_of(const char *name, char *path, size_t size)
{
    const int len = snprintf(path, size, "%s/%s", dir, name);
    if (len < 0 || (size_t)len >= size) {
        fprintf(stderr, "test_io_hostile: the path of '%s' does not fit %zu bytes\n", name, size);
        exit(1);
    }
}

static void remember(const char *name)
{
    if (nwritten < 64) snprintf(written[nwritten++], sizeof written[0], "%s", name);
}

static void write_file(const char *name, const char *text)
{
    char path[256];
    path_of(name, path, sizeof path);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f == NULL) return;
    fputs(text, f);
    CHECK(fclose(f) == 0);
    remember(name);
}

/* A file of `size` bytes that takes no disk space (a hole): its size is all the bounds look at. */
static void write_sparse(const char *name, size_t size)
{
    char path[256];
    path_of(name, path, sizeof path);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f == NULL) return;
    CHECK(ftruncate(fileno(f), (off_t)size) == 0);
    CHECK(fclose(f) == 0);
    remember(name);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int has(const char *message, const char *words)
{
    const int ok = strstr(message, words) != NULL;
    if (!ok) fprintf(stderr, "expected '%s' in: %s\n", words, message);
    return ok;
}

static void include_amplification(void)
{
    enum { LEVELS = 9 };
    char name[32], text[512];
    for (int k = 0; k <= LEVELS; ++k) {
        snprintf(name, sizeof name, "amp%d.xml", k);
        if (k == LEVELS) {
            snprintf(text, sizeof text, "<mujoco><body><geom size=\"0.1\"/></body></mujoco>\n");
        } else {
            const char *open = k == 0 ? "<mujoco model=\"amp\"><worldbody>" : "<mujoco>";
            const char *close = k == 0 ? "</worldbody></mujoco>\n" : "</mujoco>\n";
            snprintf(text, sizeof text, "%s\n<include file=\"amp%d.xml\"/><include file=\"amp%d.xml\"/>"
                     "<include file=\"amp%d.xml\"/><include file=\"amp%d.xml\"/>\n%s",
                     open, k + 1, k + 1, k + 1, k + 1, close);
        }
        write_file(name, text);
    }
    char path[256];
    path_of("amp0.xml", path, sizeof path);
    const long rss0 = peak_rss_kb();
    const double t0 = now();
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_mjcf_load_file(path, &m, &err);
    const double took = now() - t0;
    const long grew_kb = peak_rss_kb() - rss0;
    printf("include amplification: %s (%.3f s, peak RSS +%ld kB)\n", err.message, took, grew_kb);
    CHECK(st == SD_E_PARSE);
    CHECK(m == NULL);
    sd_model_free(m);
    CHECK(took < 1.0);
    CHECK(grew_kb < 50L * 1024);
    CHECK(has(err.message, "more than 1000 <include>s"));
    CHECK(has(err.message, "include chain: "));
    CHECK(has(err.message, "amp0.xml > "));
    CHECK(has(err.message, "amp1.xml > "));
}

static void include_bytes(void)
{
    write_sparse("huge.xml", SD_MJCF_MAX_EXPANDED_BYTES); /* alone it is as large as a file may be */
    write_file("bytes.xml", "<mujoco model=\"bytes\">\n<worldbody>\n<include file=\"huge.xml\"/>\n"
                            "</worldbody>\n</mujoco>\n");
    char path[256];
    path_of("bytes.xml", path, sizeof path);
    sd_model *m = NULL;
    sd_error err;
    const double t0 = now();
    const sd_status st = sd_mjcf_load_file(path, &m, &err);
    printf("expanded bytes: %s (%.3f s)\n", err.message, now() - t0);
    CHECK(st != SD_OK);
    CHECK(m == NULL);
    CHECK(has(err.message, "bytes.xml:3: <include file=\"huge.xml\">: the main file and its includes expand "
                           "to more than 256 MiB"));
    CHECK(now() - t0 < 1.0); /* refused from its size, not read */
}

static void flexible_file_bytes(void)
{
    write_file("small.json", "{\"format\": \"soadyn-flex\", \"version\": 1,\n"
                             " \"nodes\": [{\"position\": [0, 0, 0], \"mass\": 0.5}, {\"position\": [1, 0, 0], \"mass\": 0.5}],\n"
                             " \"modes\": [{\"omega\": 10, \"shape\": [[0,0,0,0,0,0], [0,0,0.8,0,0.3,0]]}]}\n");
    write_sparse("big.json", SD_URDF_MAX_FLEX_FILE_BYTES);
    write_file("flex.urdf",
               "<robot name=\"r\">\n"
               "  <link name=\"a\"><soadyn:flexible file=\"small.json\"/></link>\n"
               "  <link name=\"b\"><soadyn:flexible file=\"big.json\"/></link>\n"
               "  <joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/><axis xyz=\"0 0 1\"/></joint>\n"
               "</robot>\n");
    char path[256];
    path_of("flex.urdf", path, sizeof path);
    sd_model *m = NULL;
    sd_error err;
    const double t0 = now();
    const sd_status st = sd_urdf_load_file(path, NULL, &m, &err);
    printf("flexible data bytes: %s (%.3f s)\n", err.message, now() - t0);
    CHECK(st != SD_OK);
    CHECK(m == NULL);
    CHECK(has(err.message, "flex.urdf:3: link 'b': <soadyn:flexible file=\"big.json\">: the flexible data files "
                           "of this URDF together pass 256 MiB"));
    CHECK(now() - t0 < 1.0);
}

/* The axis of the model's last body. */
static void check_axis(const char *what, sd_status st, sd_model *m, const sd_error *err, const double expect[3])
{
    if (st != SD_OK) fprintf(stderr, "%s: %s\n", what, err->message);
    CHECK(st == SD_OK);
    if (st != SD_OK) return;
    const double *a = sd_model_body_desc(m, sd_model_nbodies(m) - 1)->axis;
    printf("%s: axis %.17g %.17g %.17g\n", what, a[0], a[1], a[2]);
    for (int i = 0; i < 3; ++i) CHECK_CLOSE(a[i], expect[i], 1e-15);
    sd_model_free(m);
}

static void huge_axes(void)
{
    static const char mjcf[] = "<mujoco><worldbody><body name=\"b\"><joint name=\"j\" axis=\"1e308 1e308 0\"/>"
                               "<geom size=\"0.1\"/></body></worldbody></mujoco>";
    sd_model *m = NULL;
    sd_error err;
    const double diagonal[3] = {sqrt(0.5), sqrt(0.5), 0.0};
    sd_status st = sd_mjcf_load_string(mjcf, sizeof mjcf - 1, "huge.xml", &m, &err);
    check_axis("MJCF axis=\"1e308 1e308 0\"", st, m, &err, diagonal);
    if (SOADYN_HAS_SDF) {
        static const char sdf[] =
            "<sdf version=\"1.9\"><model name=\"m\">"
            "<link name=\"a\"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz>"
            "<ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial></link>"
            "<link name=\"b\"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz>"
            "<ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial></link>"
            "<joint name=\"j\" type=\"revolute\"><parent>a</parent><child>b</child>"
            "<axis><xyz>0 1e308 0</xyz></axis></joint></model></sdf>";
        m = NULL;
        st = sd_sdf_load_string(sdf, sizeof sdf - 1, "huge.sdf", NULL, &m, &err);
        printf("SDF <xyz>0 1e308 0</xyz>: %s\n", err.message);
        CHECK(st == SD_E_PARSE && m == NULL);
        CHECK(has(err.message, "joint 'j': <axis> <xyz> has a component beyond 1e150, whose square overflows"));
    }
}

static void generated_names(void)
{
    static const char mjcf[] =
        "<mujoco model=\"names\"><worldbody>"
        "<body name=\"body2\"><joint name=\"a\" axis=\"0 0 1\"/><geom size=\"0.1\"/></body>"
        "<body><joint name=\"b\" axis=\"0 0 1\"/><geom size=\"0.1\"/></body>"
        "<body><joint name=\"c\" axis=\"0 0 1\"/><geom size=\"0.1\"/></body>"
        "</worldbody></mujoco>";
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_mjcf_load_string(mjcf, sizeof mjcf - 1, "names.xml", &m, &err);
    if (st != SD_OK) fprintf(stderr, "generated names: %s\n", err.message);
    CHECK(st == SD_OK);
    if (st != SD_OK) return;
    CHECK(sd_model_nbodies(m) == 3);
    printf("generated names: %s, %s, %s\n", sd_model_body_name(m, 0), sd_model_body_name(m, 1), sd_model_body_name(m, 2));
    CHECK(sd_model_body_index(m, "body2") == 0);
    CHECK(sd_model_body_index(m, "body2_1") == 1); /* body 2 of the file, "body2" taken */
    CHECK(sd_model_body_index(m, "body3") == 2);
    sd_model_free(m);
}

int main(void)
{
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    include_amplification();
    include_bytes();
    flexible_file_bytes();
    huge_axes();
    generated_names();
    char path[256];
    for (int i = 0; i < nwritten; ++i) {
        path_of(written[i], path, sizeof path);
        remove(path);
    }
    rmdir(dir);
    return test_summary("test_io_hostile");
}
