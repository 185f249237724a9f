/*
 * soadyn/io.h — one entry point for every model file format, chosen by the file's content: the
 * root element of the XML decides, not the file name (<robot>: URDF, urdf.h; <mujoco>: MJCF,
 * mjcf.h; <sdf>: SDF, sdf.h, which answers SD_E_NOT_SUPPORTED in a build without libsdformat).
 * Anything else is refused (SD_E_PARSE) naming the root element found.
 */
#ifndef SOADYN_IO_H
#define SOADYN_IO_H

#include <stddef.h>

#include "export.h"
#include "mjcf.h"
#include "model.h"
#include "sdf.h"
#include "urdf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sd_model_format {
    SD_FORMAT_UNKNOWN = 0,
    SD_FORMAT_URDF,
    SD_FORMAT_MJCF,
    SD_FORMAT_SDF
} sd_model_format;

/* Name of a format ("urdf", "mjcf", "sdf", "unknown"). */
SD_API const char *sd_model_format_name(sd_model_format format);

/* The format of a model text by its root element (the first element after the XML declaration,
 * comments, processing instructions and a DOCTYPE); SD_FORMAT_UNKNOWN when it is none of the three
 * or no element is found. Does not parse the whole text. */
SD_API sd_model_format sd_model_detect_format(const char *text, size_t length);

/* Options of each reader; zero-initialise. MJCF files say everything themselves and take none. */
typedef struct sd_load_options {
    sd_urdf_options urdf;
    sd_sdf_options sdf;
} sd_load_options;

/* Load a model file of any of the formats above; options may be NULL (each reader's defaults).
 * format (may be NULL) receives the format found, also when loading fails. */
SD_API sd_status sd_model_load_file(const char *path, const sd_load_options *options, sd_model **model,
                                    sd_model_format *format, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_IO_H */
