/* A program built against an installed libzarr (scripts/consumer-test.sh): writes an array
 * to a store in memory and reads it back, and checks that the header and the library it runs
 * with have one version. Prints "ok VERSION" and exits 0, or says what failed and exits 1. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "zarr.h"

static int fail(const char *what) {
    fprintf(stderr, "%s failed: %s\n", what, zarr_last_error());
    return 1;
}

int main(void) {
    if (ZARR_CHECK_VERSION() != ZARR_OK) return fail("ZARR_CHECK_VERSION()");
    if (zarr_version_number() != ZARR_VERSION_NUMBER) {
        fprintf(stderr, "header %d, library %" PRIu32 "\n", ZARR_VERSION_NUMBER, zarr_version_number());
        return 1;
    }
    zarr_store *store = NULL;
    zarr_array *array = NULL;
    if (zarr_store_open("memory:", ZARR_MODE_WRITE, &store) != ZARR_OK) return fail("zarr_store_open");
    const char *zarray = "{\"shape\": [6, 4], \"chunks\": [4, 3], \"dtype\": \"<i4\", "
                         "\"compressor\": {\"id\": \"zstd\", \"level\": 1}}";
    if (zarr_array_create(store, "a", zarray, &array) != ZARR_OK) return fail("zarr_array_create");
    int32_t values[24], back[24];
    for (int i = 0; i < 24; i++) values[i] = i * 7 - 50;
    const uint64_t start[2] = {0, 0}, count[2] = {6, 4};
    if (zarr_array_write(array, 2, start, count, values, sizeof values) != ZARR_OK)
        return fail("zarr_array_write");
    if (zarr_array_read(array, 2, start, count, back, sizeof back) != ZARR_OK)
        return fail("zarr_array_read");
    if (memcmp(values, back, sizeof values) != 0) {
        fprintf(stderr, "read back other values\n");
        return 1;
    }
    zarr_array_close(array);
    zarr_store_close(store);
    printf("ok %s\n", zarr_version());
    return 0;
}
