/*
 * src/common/status.c — status names and the two ways a failure is reported: into the caller's sd_error,
 * or onto the workspace (sd_data_error()). Nothing global.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

const char *sd_status_name(sd_status status)
{
    switch (status) {
    case SD_OK: return "ok";
    case SD_E_ARGUMENT: return "invalid argument";
    case SD_E_MODEL: return "invalid model";
    case SD_E_SINGULAR: return "singular";
    case SD_E_MEMORY: return "out of memory";
    case SD_E_IO: return "input/output error";
    case SD_E_PARSE: return "malformed model file";
    case SD_E_NOT_SUPPORTED: return "not supported";
    case SD_E_SOLVER: return "integrator failure";
    case SD_E_NOT_FINITE: return "result not finite";
    }
    return "unknown status";
}

sd_status sd_error_set(sd_error *err, sd_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

sd_status sd_data_fail(sd_data *data, sd_status status, const char *fmt, ...)
{
    if (data) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(data->error, sizeof data->error, fmt, ap);
        va_end(ap);
    }
    return status;
}
