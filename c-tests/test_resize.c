/* Resizing and appending through the public header: data and attributes kept, chunks outside
 * the new shape deleted from the store, cut-off parts reading the fill value after growing
 * again, append along each axis, and the errors. */
#include "check.h"
#include "testutil.h"

static void read_all(zarr_array *a, uint64_t rows, uint64_t cols, int32_t *out) {
    uint64_t start[2] = {0, 0}, count[2] = {rows, cols};
    CHECK_OK(zarr_array_read(a, 2, start, count, out, rows * cols * sizeof *out));
}

int main(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "a", "{\"shape\": [6, 6], \"chunks\": [4, 4], \"dtype\": \"<i4\", "
                                         "\"fill_value\": -1, \"compressor\": {\"id\": \"zlib\"}}");
    if (!a) return check_summary("test_resize");
    int32_t data[36], back[64];
    for (int i = 0; i < 36; i++) data[i] = i;
    uint64_t start[2] = {0, 0}, count[2] = {6, 6};
    CHECK_OK(zarr_array_write(a, 2, start, count, data, sizeof data));
    CHECK_OK(zarr_array_attrs_set(a, "{\"units\": \"K\"}"));
    CHECK(file_exists(strf("%s/a/1.1", dir)));

    /* Shrink to 3 x 5: chunk 1.1 and 1.0 lie outside and are deleted. */
    uint64_t small[2] = {3, 5}, shape[2] = {0, 0};
    CHECK_OK(zarr_array_resize(a, 2, small));
    CHECK_OK(zarr_array_shape(a, 2, shape));
    CHECK(shape[0] == 3 && shape[1] == 5);
    CHECK(!file_exists(strf("%s/a/1.1", dir)) && !file_exists(strf("%s/a/1.0", dir)));
    CHECK(file_exists(strf("%s/a/0.1", dir)));
    read_all(a, 3, 5, back);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 5; c++) CHECK(back[r * 5 + c] == r * 6 + c);
    char *meta = NULL;
    if (CHECK_OK(zarr_array_metadata_json(a, &meta))) CHECK_JSON_HAS(meta, "\"shape\":[3,5]");
    zarr_string_free(meta);

    /* Reopened: the new shape and the attributes. */
    zarr_array *b = open_array(s, "a");
    if (b) {
        CHECK_OK(zarr_array_shape(b, 2, shape));
        CHECK(shape[0] == 3 && shape[1] == 5);
        char *attrs = NULL;
        if (CHECK_OK(zarr_array_attrs_get(b, &attrs))) CHECK_JSON_HAS(attrs, "\"units\":\"K\"");
        zarr_string_free(attrs);
        zarr_array_close(b);
    }

    /* Grow to 8 x 8: old data where it was kept, the fill value everywhere else. */
    uint64_t big[2] = {8, 8};
    CHECK_OK(zarr_array_resize(a, 2, big));
    read_all(a, 8, 8, back);
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) {
            int32_t want = (r < 3 && c < 5) ? r * 6 + c : -1;
            if (!CHECK(back[r * 8 + c] == want)) fprintf(stderr, "  at (%d, %d): %d\n", r, c, back[r * 8 + c]);
        }

    /* Append a row block and a column. */
    int32_t rows[2 * 8], col[10];
    for (int i = 0; i < 16; i++) rows[i] = 100 + i;
    for (int i = 0; i < 10; i++) col[i] = 200 + i;
    CHECK_OK(zarr_array_append(a, 0, 2, rows, sizeof rows));
    CHECK_OK(zarr_array_append(a, 1, 1, col, sizeof col));
    CHECK_OK(zarr_array_shape(a, 2, shape));
    CHECK(shape[0] == 10 && shape[1] == 9);
    int32_t all[90];
    uint64_t all_count[2] = {10, 9};
    CHECK_OK(zarr_array_read(a, 2, start, all_count, all, sizeof all));
    CHECK(all[8 * 9 + 0] == 100 && all[9 * 9 + 7] == 115);
    CHECK(all[0 * 9 + 8] == 200 && all[9 * 9 + 8] == 209);

    /* Errors: wrong sizes, dimensions, axes; NULLs; the shape is unchanged after each. */
    CHECK_STATUS(zarr_array_append(a, 0, 1, rows, sizeof rows), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_append(a, 2, 1, rows, sizeof rows), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_append(a, 0, 1, NULL, 36), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_resize(a, 1, big), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_resize(a, 2, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_resize(NULL, 2, big), ZARR_ERR_NULL_POINTER);
    CHECK_OK(zarr_array_shape(a, 2, shape));
    CHECK(shape[0] == 10 && shape[1] == 9);
    zarr_array_close(a);
    CHECK_OK(zarr_store_close(s));

    /* A read-only store refuses both. */
    s = open_store(dir, ZARR_MODE_READ);
    a = open_array(s, "a");
    if (a) {
        CHECK_STATUS(zarr_array_resize(a, 2, big), ZARR_ERR_READ_ONLY);
        CHECK_STATUS(zarr_array_append(a, 0, 1, col, 9 * sizeof(int32_t)), ZARR_ERR_READ_ONLY);
        zarr_array_close(a);
    }
    zarr_store_close(s);

    /* Object arrays append text items. */
    s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *t = create_array(s, "text", "{\"shape\": [1], \"chunks\": [2], \"dtype\": \"|O\", "
                                            "\"fill_value\": \"\", \"filters\": [{\"id\": \"vlen-utf8\"}]}");
    if (t) {
        int64_t offsets[4] = {0, 5, 5, 11};
        CHECK_OK(zarr_array_append_vlen(t, 0, 3, offsets, 4, "alphaomega!", 11));
        CHECK_STATUS(zarr_array_append_vlen(t, 0, 3, offsets, 3, "alphaomega!", 11), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_append(t, 0, 1, col, sizeof(int32_t)), ZARR_ERR_INVALID_ARGUMENT);
        uint64_t tshape[1] = {0}, tstart[1] = {0}, tcount[1] = {4};
        CHECK_OK(zarr_array_shape(t, 1, tshape));
        CHECK(tshape[0] == 4);
        int64_t back_offsets[5];
        char text[16];
        if (CHECK_OK(zarr_array_read_vlen(t, 1, tstart, tcount, back_offsets, 5, text, sizeof text))) {
            CHECK(back_offsets[1] == 0 && back_offsets[2] == 5 && back_offsets[4] == 11);
            CHECK(memcmp(text, "alphaomega!", 11) == 0);
        }
        zarr_array_close(t);
    }
    zarr_store_close(s);
    tmpdir_remove(dir);
    return check_summary("test_resize");
}
