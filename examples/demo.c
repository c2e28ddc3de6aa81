/* demo.c - libzarr in one page.
 *
 * Creates a Zarr v2 store on disk with a group and a chunked, blosc-compressed 2-D array,
 * writes most of it, reads a box back (rows never written read as the fill value, NaN),
 * and prints the metadata and the group listing. Exits 0 only if every value checks out.
 *
 *   gcc -std=c11 -Wall -Iinclude examples/demo.c -Ltarget/release -lzarr \
 *       -Wl,-rpath,$PWD/target/release -o zarr_demo && ./zarr_demo demo.zarr
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "zarr.h"

enum { ROWS = 1000, COLS = 1000, WRITTEN_ROWS = 900 };

static const char *TEMPERATURE_META =
    "{\"shape\": [1000, 1000], \"chunks\": [100, 100], \"dtype\": \"<f8\", \"fill_value\": \"NaN\","
    " \"compressor\": {\"id\": \"blosc\", \"cname\": \"lz4\", \"clevel\": 5, \"shuffle\": 1, \"blocksize\": 0}}";

/* Reports a failed call with the library's message; returns 1 if the call succeeded. */
static int ok(zarr_status status, const char *what) {
    if (status != ZARR_OK)
        fprintf(stderr, "%s failed: %s: %s\n", what, zarr_status_name(status), zarr_last_error());
    return status == ZARR_OK;
}

/* The value we store at (i, j). */
static double temperature(uint64_t i, uint64_t j) {
    return 15.0 + 0.01 * (double)i - 0.005 * (double)j + 0.1 * (double)((i * j) % 7);
}

int main(int argc, char **argv) {
    const char *location = argc > 1 ? argv[1] : "demo.zarr";
    zarr_store *store = NULL;
    zarr_group *group = NULL, *root = NULL;
    zarr_array *array = NULL;
    double *data = malloc(sizeof(double) * WRITTEN_ROWS * COLS);
    double box[4][3];
    uint64_t start[2] = {0, 0}, count[2] = {WRITTEN_ROWS, COLS};
    char *json = NULL;
    int good = 0, bad_values = 0;

    printf("libzarr %s, store %s\n", zarr_version(), location);
    if (!data) return 1;

    /* A store is a directory (created if missing); a group holds arrays and attributes. */
    if (!ok(zarr_store_open(location, ZARR_MODE_WRITE, &store), "open store") ||
        !ok(zarr_group_create(store, "measurements", &group), "create group") ||
        !ok(zarr_group_attrs_set(group, "{\"site\": \"demo\", \"units\": \"degC\"}"), "set attributes") ||
        !ok(zarr_array_create(store, "measurements/temperature", TEMPERATURE_META, &array), "create array"))
        goto done;

    /* Write rows 0..899 in one call: caller buffers are C order, native byte order. */
    for (uint64_t i = 0; i < WRITTEN_ROWS; i++)
        for (uint64_t j = 0; j < COLS; j++) data[i * COLS + j] = temperature(i, j);
    if (!ok(zarr_array_write(array, 2, start, count, data, sizeof(double) * WRITTEN_ROWS * COLS), "write"))
        goto done;
    printf("wrote %d x %d of %d x %d float64 values\n", WRITTEN_ROWS, COLS, ROWS, COLS);

    /* Read a 4 x 3 box straddling the last written row. */
    start[0] = 898, start[1] = 500, count[0] = 4, count[1] = 3;
    if (!ok(zarr_array_read(array, 2, start, count, box, sizeof box), "read")) goto done;
    printf("box [898:902, 500:503]:\n");
    for (int r = 0; r < 4; r++) {
        uint64_t i = start[0] + (uint64_t)r;
        printf("  row %llu:", (unsigned long long)i);
        for (int c = 0; c < 3; c++) {
            double want = i < WRITTEN_ROWS ? temperature(i, start[1] + (uint64_t)c) : NAN;
            printf(" %8.3f", box[r][c]);
            bad_values += i < WRITTEN_ROWS ? box[r][c] != want : !isnan(box[r][c]);
        }
        printf("\n");
    }

    /* Read everything written back and compare. */
    start[0] = start[1] = 0, count[0] = WRITTEN_ROWS, count[1] = COLS;
    if (!ok(zarr_array_read(array, 2, start, count, data, sizeof(double) * WRITTEN_ROWS * COLS), "read all"))
        goto done;
    for (uint64_t i = 0; i < WRITTEN_ROWS; i++)
        for (uint64_t j = 0; j < COLS; j++) bad_values += data[i * COLS + j] != temperature(i, j);

    /* Metadata and listings come back as JSON text, freed with zarr_string_free. */
    if (!ok(zarr_array_metadata_json(array, &json), "metadata")) goto done;
    printf("measurements/temperature/.zarray:\n%s\n", json);
    zarr_string_free(json);
    if (!ok(zarr_group_list(group, &json), "list")) goto done;
    printf("measurements contains: %s\n", json);
    zarr_string_free(json);
    if (!ok(zarr_group_attrs_get(group, &json), "get attributes")) goto done;
    printf("measurements attributes: %s\n", json);
    zarr_string_free(json);

    /* Consolidate the metadata into .zmetadata (zarr-python's open_consolidated reads it) and
     * show the hierarchy as zarr-python's group.tree() prints it. */
    if (!ok(zarr_consolidate_metadata(store), "consolidate metadata") ||
        !ok(zarr_group_open(store, "", &root), "open root") || !ok(zarr_group_tree_text(root, &json), "tree"))
        goto done;
    printf("tree:\n%s\n", json);
    zarr_string_free(json);

    good = bad_values == 0;
    if (good)
        printf("all values check out\n");
    else
        printf("%d values are wrong\n", bad_values);

done:
    zarr_group_close(root);
    zarr_array_close(array);
    zarr_group_close(group);
    zarr_store_close(store);
    free(data);
    return good ? 0 : 1;
}
