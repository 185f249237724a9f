/*
 * soadyn/export.h — SD_API marks the library's public functions. The library is built with hidden
 * visibility (GCC, Clang) so that only these are exported from the shared object; on Windows they are
 * exported when building and imported when using the DLL. A static build defines SOADYN_STATIC
 * (pkg-config --static and the CMake target of the static library do) so nothing is decorated.
 */
#ifndef SOADYN_EXPORT_H
#define SOADYN_EXPORT_H

#if defined(SOADYN_STATIC)
#  define SD_API
#elif defined(_WIN32) || defined(__CYGWIN__)
#  ifdef SOADYN_BUILDING
#    define SD_API __declspec(dllexport)
#  else
#    define SD_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define SD_API __attribute__((visibility("default")))
#else
#  define SD_API
#endif

#endif /* SOADYN_EXPORT_H */
