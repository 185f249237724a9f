/*
 * tests/sim/test_output_marks.c — outputs of a run that did not finish, and outputs that cannot be
 * written, through the library:
 *   - a trajectory's note (sd_trajectory_set_note) is drawn in the plot's title: the SVG of a noted
 *     trajectory has exactly one glyph more per character of " [note]" than the SVG of the
 *     same trajectory without it (cairo draws text as glyphs, so the text itself is not in the file);
 *   - the viewer page of a noted trajectory carries the note in its heading;
 *   - sd_output_probe refuses a path in a missing folder (SD_E_IO, "cannot create", the path) and
 *     leaves nothing behind where it can write; a device is probed without being truncated;
 *   - sd_simulate_check refuses what sd_simulate refuses at once (duration / dt > 1e12).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <soadyn/config.h> /* SOADYN_HAS_VIEWER */
#include <soadyn/soadyn.h>

#include "cli_child.h" /* cli_read_all */
#include "test_util.h"

static const char arm_urdf[] =
    "<robot name=\"marks\">\n"
    "  <link name=\"base\"/>\n"
    "  <joint name=\"shoulder\" type=\"continuous\"><parent link=\"base\"/><child link=\"arm\"/><axis xyz=\"0 1 0\"/></joint>\n"
    "  <link name=\"arm\"><inertial><origin xyz=\"0 0 -0.5\"/><mass value=\"1\"/>\n"
    "    <inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n"
    "</robot>\n";

static char dir[] = "/tmp/soadyn_output_marks_XXXXXX";

static long count(const char *text, const char *what)
{
    long n = 0;
    for (const char *p = text; p && (p = strstr(p, what)) != NULL; p += strlen(what)) ++n;
    return n;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static long glyphs_of_plot(const sd_trajectory *tr, const char *path)
{
    sd_error err;
    const sd_status st = sd_plot_trajectory(tr, path, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "%s\n", err.message);
    char *svg = cli_read_all(path);
    const long n = count(svg, "<use xlink:href=\"#glyph");
    free(svg);
    return n;
}

static void check_marks(const sd_model *m)
{
    sd_trajectory *tr = sd_trajectory_new(m);
    CHECK(tr != NULL);
    if (!tr) return;
    double q = 0.3, u = 0.0;
    for (int i = 0; i <= 20; ++i) {
        q = 0.3 * cos(0.5 * i);
        const sd_sim_sample s = {0.01 * i, &q, &u, 0.1 * i, -0.05 * i, i};
        CHECK(sd_trajectory_append(tr, &s) == SD_OK);
    }
    char plain[256], noted[256], page[256];
    snprintf(plain, sizeof plain, "%s/plain.svg", dir);
    snprintf(noted, sizeof noted, "%s/noted.svg", dir);
    snprintf(page, sizeof page, "%s/page.html", dir);
    CHECK(strcmp(sd_trajectory_note(tr), "") == 0);
    const long g0 = glyphs_of_plot(tr, plain);
    const char *note = "truncated at t = 0.2 s (interrupted by SIGINT)";
    sd_trajectory_set_note(tr, note);
    CHECK(strcmp(sd_trajectory_note(tr), note) == 0);
    const long g1 = glyphs_of_plot(tr, noted);
    const long added = (long)strlen(" [") + (long)strlen(note) + (long)strlen("]"); /* cairo draws spaces too */
    printf("plot title: %ld glyphs without the note, %ld with it (%ld characters added)\n", g0, g1, added);
    CHECK(g0 > 0);
    CHECK(g1 - g0 == added);
    if (SOADYN_HAS_VIEWER) {
        sd_error err;
        CHECK(sd_view_write_html(m, tr, NULL, page, &err) == SD_OK);
        char *html = cli_read_all(page);
        CHECK(html && strstr(html, "marks [truncated at t = 0.2 s (interrupted by SIGINT)]") != NULL);
        free(html);
        remove(page);
    }
    sd_trajectory_set_note(tr, NULL);
    CHECK(strcmp(sd_trajectory_note(tr), "") == 0);
    remove(plain);
    remove(noted);
    sd_trajectory_free(tr);
}

static void check_probe(void)
{
    char missing[256], fine[256], partial[300];
    snprintf(missing, sizeof missing, "%s/no_such_folder/x.png", dir);
    snprintf(fine, sizeof fine, "%s/fine.png", dir);
    snprintf(partial, sizeof partial, "%s.partial", fine);
    sd_error err;
    CHECK(sd_output_probe(missing, &err) == SD_E_IO);
    CHECK(strstr(err.message, "no_such_folder/x.png") != NULL && strstr(err.message, "cannot create") != NULL);
    CHECK(sd_output_probe(fine, &err) == SD_OK);
    CHECK(!exists(fine) && !exists(partial));
    CHECK(sd_output_probe("/dev/null", &err) == SD_OK);
    CHECK(sd_output_probe(NULL, &err) == SD_E_ARGUMENT);
}

static void check_simulate_check(const sd_model *m)
{
    sd_sim_options o;
    sd_sim_options_init(&o);
    double q = 0.0, u = 0.0;
    sd_error err;
    CHECK(sd_simulate_check(m, &o, &q, &u, &err) == SD_OK);
    o.duration = 1e12;
    CHECK(sd_simulate_check(m, &o, &q, &u, &err) == SD_E_ARGUMENT);
    CHECK(strstr(err.message, "too many") != NULL);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_urdf_load_string(arm_urdf, sizeof arm_urdf - 1, "marks.urdf", NULL, &m, &err) == SD_OK);
    if (m) {
        check_marks(m);
        check_simulate_check(m);
    }
    check_probe();
    sd_model_free(m);
    rmdir(dir);
    return test_summary("test_output_marks");
}
