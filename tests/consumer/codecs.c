/* A program that links libzarr together with the system's codec libraries: zlib, zstd, lz4,
 * bzip2, liblzma and c-blosc (scripts/consumer-test.sh builds it against libzarr.a and against
 * libzarr.so). libzarr bundles its own copies of them; the program must get the system's
 * (each function it calls lies in the system's shared library, and reports the version the
 * system's header states), and libzarr must still use its own (an array round-trips with
 * each codec, blosc with each of its compressors). Prints one line per library and per codec
 * and exits 0, or says what failed and exits 1. */
#define _GNU_SOURCE
#include <blosc.h>
#include <bzlib.h>
#include <dlfcn.h>
#include <lz4.h>
#include <lzma.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "zarr.h"

static int failures = 0;

/* Checks that `function` (named `name`) lies in the shared library `library` and that the
 * version it reports (`linked`) is the header's (`header`). */
static void check_system(const char *name, void (*function)(void), const char *library,
                         const char *header, const char *linked) {
    Dl_info info;
    const char *file = dladdr((void *)function, &info) && info.dli_fname ? info.dli_fname : "?";
    int ok = strstr(file, library) != NULL && strcmp(header, linked) == 0;
    printf("%s %s: %s, version %s (header %s)\n", ok ? "ok" : "FAILED", name, file, linked,
           header);
    failures += !ok;
}

/* Writes and reads back an array compressed with `compressor` (a numcodecs JSON object). */
static void check_codec(zarr_store *store, const char *name, const char *compressor) {
    char zarray[512];
    snprintf(zarray, sizeof zarray,
             "{\"shape\": [64, 64], \"chunks\": [32, 32], \"dtype\": \"<i4\", "
             "\"compressor\": %s}",
             compressor);
    static int values[64 * 64], back[64 * 64];
    for (int i = 0; i < 64 * 64; i++) values[i] = (i % 97) * (i / 64) - 1000;
    const uint64_t start[2] = {0, 0}, count[2] = {64, 64};
    zarr_array *array = NULL;
    int ok = zarr_array_create(store, name, zarray, &array) == ZARR_OK &&
             zarr_array_write(array, 2, start, count, values, sizeof values) == ZARR_OK &&
             zarr_array_read(array, 2, start, count, back, sizeof back) == ZARR_OK &&
             memcmp(values, back, sizeof values) == 0;
    printf("%s libzarr's %s\n", ok ? "ok" : "FAILED", name);
    if (!ok) fprintf(stderr, "%s: %s\n", name, zarr_last_error());
    zarr_array_close(array);
    failures += !ok;
}

int main(void) {
    char header[32], linked[32];
    check_system("zlibVersion", (void (*)(void))zlibVersion, "libz.so", ZLIB_VERSION,
                 zlibVersion());
    snprintf(header, sizeof header, "%d", ZSTD_VERSION_NUMBER);
    snprintf(linked, sizeof linked, "%u", ZSTD_versionNumber());
    check_system("ZSTD_versionNumber", (void (*)(void))ZSTD_versionNumber, "libzstd.so", header,
                 linked);
    snprintf(header, sizeof header, "%d", LZ4_VERSION_NUMBER);
    snprintf(linked, sizeof linked, "%d", LZ4_versionNumber());
    check_system("LZ4_versionNumber", (void (*)(void))LZ4_versionNumber, "liblz4.so", header,
                 linked);
    /* bzip2's header states no version: the library's own string serves as both. */
    check_system("BZ2_bzlibVersion", (void (*)(void))BZ2_bzlibVersion, "libbz2.so",
                 BZ2_bzlibVersion(), BZ2_bzlibVersion());
    snprintf(header, sizeof header, "%u", (unsigned)LZMA_VERSION);
    snprintf(linked, sizeof linked, "%u", (unsigned)lzma_version_number());
    check_system("lzma_version_number", (void (*)(void))lzma_version_number, "liblzma.so",
                 header, linked);
    check_system("blosc_get_version_string", (void (*)(void))blosc_get_version_string,
                 "libblosc.so", BLOSC_VERSION_STRING, blosc_get_version_string());

    zarr_store *store = NULL;
    if (zarr_store_open("memory:", ZARR_MODE_WRITE, &store) != ZARR_OK) {
        fprintf(stderr, "zarr_store_open: %s\n", zarr_last_error());
        return 1;
    }
    check_codec(store, "zlib", "{\"id\": \"zlib\", \"level\": 5}");
    check_codec(store, "gzip", "{\"id\": \"gzip\", \"level\": 5}");
    check_codec(store, "zstd", "{\"id\": \"zstd\", \"level\": 3}");
    check_codec(store, "lz4", "{\"id\": \"lz4\", \"acceleration\": 1}");
    check_codec(store, "bz2", "{\"id\": \"bz2\", \"level\": 5}");
    check_codec(store, "lzma", "{\"id\": \"lzma\", \"preset\": 1}");
    const char *cnames[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
    for (size_t i = 0; i < sizeof cnames / sizeof cnames[0]; i++) {
        char name[32], blosc[128];
        snprintf(name, sizeof name, "blosc-%s", cnames[i]);
        snprintf(blosc, sizeof blosc,
                 "{\"id\": \"blosc\", \"cname\": \"%s\", \"clevel\": 5, \"shuffle\": 1}",
                 cnames[i]);
        check_codec(store, name, blosc);
    }
    zarr_store_close(store);
    return failures == 0 ? 0 : 1;
}
