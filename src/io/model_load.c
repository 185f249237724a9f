/*
 * io/model_load.c — a model file of any format: the root element of the text chooses the reader
 * (soadyn/io.h), so that a URDF named .xml or an MJCF file named .urdf still loads.
 */
#include <stdlib.h>
#include <string.h>

#include <soadyn/io.h>

#include "io/io_common.h"

const char *sd_model_format_name(sd_model_format format)
{
    switch (format) {
    case SD_FORMAT_URDF: return "urdf";
    case SD_FORMAT_MJCF: return "mjcf";
    case SD_FORMAT_SDF: return "sdf";
    default: return "unknown";
    }
}

/* Skip past the first occurrence of `end` at or after s; NULL if none. */
static const char *skip_past(const char *s, const char *limit, const char *end)
{
    const size_t n = strlen(end);
    for (; s + n <= limit; ++s)
        if (memcmp(s, end, n) == 0) return s + n;
    return NULL;
}

sd_model_format sd_model_detect_format(const char *text, size_t length)
{
    if (text == NULL) return SD_FORMAT_UNKNOWN;
    const char *s = text, *limit = text + length;
    if (length >= 3 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB && (unsigned char)s[2] == 0xBF)
        s += 3; /* UTF-8 byte order mark */
    while (s != NULL && s < limit) {
        if (*s != '<') {
            ++s;
            continue;
        }
        if (limit - s >= 4 && memcmp(s, "<!--", 4) == 0) s = skip_past(s + 4, limit, "-->");
        else if (limit - s >= 2 && s[1] == '?') s = skip_past(s + 2, limit, "?>");
        else if (limit - s >= 2 && s[1] == '!') s = skip_past(s + 2, limit, ">"); /* DOCTYPE (no internal subset) */
        else {
            const char *name = s + 1, *e = name;
            while (e < limit && *e != '>' && *e != '/' && *e != ' ' && *e != '\t' && *e != '\n' && *e != '\r') ++e;
            const size_t n = (size_t)(e - name);
            if (n == 5 && memcmp(name, "robot", 5) == 0) return SD_FORMAT_URDF;
            if (n == 6 && memcmp(name, "mujoco", 6) == 0) return SD_FORMAT_MJCF;
            if (n == 3 && memcmp(name, "sdf", 3) == 0) return SD_FORMAT_SDF;
            return SD_FORMAT_UNKNOWN;
        }
    }
    return SD_FORMAT_UNKNOWN;
}

sd_status sd_model_load_file(const char *path, const sd_load_options *options, sd_model **model,
                             sd_model_format *format, sd_error *err)
{
    if (err != NULL) {
        err->status = SD_OK;
        err->message[0] = '\0';
    }
    if (format != NULL) *format = SD_FORMAT_UNKNOWN;
    if (path == NULL || model == NULL)
        return sd_io_fail(err, SD_E_ARGUMENT, "sd_model_load_file", 0, "%s is NULL", path == NULL ? "path" : "model");
    *model = NULL;
    char *text;
    size_t length;
    sd_status st = sd_io_read_model_file(path, &text, &length, err);
    if (st != SD_OK) return st;
    const sd_model_format f = sd_model_detect_format(text, length);
    if (format != NULL) *format = f;
    switch (f) {
    case SD_FORMAT_URDF:
        st = sd_urdf_load_string(text, length, path, options ? &options->urdf : NULL, model, err);
        break;
    case SD_FORMAT_MJCF:
        st = sd_mjcf_load_string(text, length, path, model, err);
        break;
    case SD_FORMAT_SDF:
        /* libsdformat reads the file itself, so that its <include> uris resolve against it */
        st = sd_sdf_load_file(path, options ? &options->sdf : NULL, model, err);
        break;
    default:
        st = sd_io_fail(err, SD_E_PARSE, path, 0,
                        "not a model file soadyn reads: the root element is none of <robot> (URDF), <mujoco> "
                        "(MJCF) and <sdf> (SDF)");
        break;
    }
    free(text);
    return st;
}
