/*
 * tests/view/test_cli_view.c — `soadyn view` (argv[1]) as a user runs it, as a child process:
 *   - each mesh not drawn is reported on stderr ("soadyn view: warning: mesh NAME not drawn: WHY"),
 *     the first ten of them, then how many more; a mesh found is not reported;
 *   - --mesh-path and $ROS_PACKAGE_PATH find a package:// mesh kept outside the model's folders;
 *   - --follow / --no-follow set the page's camera (and both together are a usage error);
 * argv[2]: the bundled models' folder.
 */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/config.h>

#include "../sim/cli_child.h"
#include "test_util.h"

static const char *soadyn_path;
static char dir[256], out_path[300], err_path[300], page[300], urdf[300], pkg_root[300];
static char scratch[1024]; /* commands and paths built on the way */

static int run(const char *const *args) { return cli_run(soadyn_path, args, out_path, err_path); }

static int contains(const char *text, const char *what)
{
    const int found = text && strstr(text, what) != NULL;
    if (!found) fprintf(stderr, "lacks \"%s\" in:\n%s\n", what, text ? text : "(nothing)");
    return found;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text ? strstr(text, what) : NULL; p; p = strstr(p + 1, what)) ++n;
    return n;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp) {
        perror(path);
        exit(1);
    }
    fputs(text, fp);
    fclose(fp);
}

/* A model with one package mesh kept under pkg_root/tools_pkg (not beside it) and twelve missing. */
static void make_model(void)
{
    snprintf(pkg_root, sizeof(pkg_root), "%s/elsewhere", dir);
    snprintf(scratch, sizeof(scratch), "mkdir -p '%s/tools_pkg/meshes' '%s/robot'", pkg_root, dir);
    CHECK(system(scratch) == 0);
    snprintf(scratch, sizeof(scratch), "%s/tools_pkg/meshes/tool.stl", pkg_root);
    write_text(scratch, "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
                     "endloop\nendfacet\nendsolid t\n");
    snprintf(urdf, sizeof(urdf), "%s/robot/r.urdf", dir);
    FILE *fp = fopen(urdf, "w");
    CHECK(fp != NULL);
    if (!fp) return;
    fputs("<robot name='r'><link name='a'><inertial><mass value='1'/>"
          "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
          " <visual><geometry><mesh filename='package://tools_pkg/meshes/tool.stl'/></geometry></visual>\n",
          fp);
    for (int i = 0; i < 12; ++i)
        fprintf(fp, " <visual><geometry><mesh filename='missing%d.dae'/></geometry></visual>\n", i);
    fputs("</link></robot>\n", fp);
    fclose(fp);
}

static void check_warnings(void)
{
    const char *args[] = {"view", urdf, "-o", page, NULL};
    CHECK(run(args) == 0);
    char *err = cli_read_all(err_path);
    CHECK(contains(err, "soadyn view: warning: mesh package://tools_pkg/meshes/tool.stl not drawn: not found"));
    CHECK(contains(err, "soadyn view: warning: mesh missing0.dae not drawn: not found"));
    CHECK(count(err, "not drawn: not found") == 10); /* the first ten */
    CHECK(contains(err, "soadyn view: warning: 3 more meshes not drawn"));
    free(err);
}

static void check_mesh_path(void)
{
    const char *args[] = {"view", urdf, "--mesh-path", pkg_root, "-o", page, NULL};
    CHECK(run(args) == 0);
    char *err = cli_read_all(err_path);
    CHECK(count(err, "tool.stl") == 0 && count(err, "not drawn: not found") == 10);
    CHECK(contains(err, "2 more meshes not drawn")); /* the twelve missing ones only */
    free(err);
    /* the same from $ROS_PACKAGE_PATH (a package folder on it, as ROS lists them) */
    snprintf(scratch, sizeof(scratch), "/nonexistent:%s/tools_pkg", pkg_root);
    setenv("ROS_PACKAGE_PATH", scratch, 1);
    const char *plain[] = {"view", urdf, "-o", page, NULL};
    CHECK(run(plain) == 0);
    unsetenv("ROS_PACKAGE_PATH");
    err = cli_read_all(err_path);
    CHECK(count(err, "tool.stl") == 0 && contains(err, "2 more meshes not drawn"));
    free(err);
}

static void check_follow(const char *models)
{
    char spacecraft[1024];
    snprintf(spacecraft, sizeof(spacecraft), "%s/spacecraft.urdf", models);
    static const struct { const char *option, *expect; } cases[] = {
        {NULL, "\"follow\":0"}, /* the model at rest: the root does not travel */
        {"--follow", "\"follow\":1"},
        {"--no-follow", "\"follow\":0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        const char *args[] = {"view", spacecraft, "-o", page, cases[i].option, NULL};
        CHECK(run(args) == 0);
        char *html = cli_read_all(page);
        CHECK(contains(html, cases[i].expect));
        free(html);
    }
    const char *both[] = {"view", spacecraft, "--follow", "--no-follow", "-o", page, NULL};
    CHECK(run(both) == 1); /* CLI_USAGE */
    char *err = cli_read_all(err_path);
    CHECK(contains(err, "--follow and --no-follow: give one"));
    free(err);
}

int main(int argc, char **argv)
{
    if (argc < 3 || !SOADYN_HAS_VIEWER) {
        printf("test_cli_view: %s\n", argc < 3 ? "usage: test_cli_view SOADYN MODELS" : "no viewer in this build");
        return argc < 3 ? 1 : 0;
    }
    soadyn_path = argv[1];
    snprintf(dir, sizeof(dir), "%s/soadyn_cli_view_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(out_path, sizeof(out_path), "%s/out.txt", dir);
    snprintf(err_path, sizeof(err_path), "%s/err.txt", dir);
    snprintf(page, sizeof(page), "%s/page.html", dir);
    make_model();
    check_warnings();
    check_mesh_path();
    check_follow(argv[2]);
    snprintf(scratch, sizeof(scratch), "rm -rf '%s'", dir);
    CHECK(system(scratch) == 0);
    return test_summary("test_cli_view");
}
