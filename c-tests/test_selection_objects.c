/* Object arrays and field selections through every selection kind with one descriptor
 * (zarr_selection): boxes with steps, orthogonal index lists and Boolean flags, points, masks and
 * blocks; the size query; writes read back through another kind; and the descriptor's errors. */
#include "check.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

/* A 4 x 3 vlen-utf8 array in chunks of 2 x 2 whose element (i, j) holds "i,j" repeated i + 1 times. */
static zarr_array *make_text(zarr_store *s) {
    zarr_array *a = create_array(s, "t", "{\"shape\": [4, 3], \"chunks\": [2, 2], \"dtype\": \"|O\", "
                                         "\"filters\": [{\"id\": \"vlen-utf8\"}], \"fill_value\": \"\", "
                                         "\"compressor\": {\"id\": \"zstd\", \"level\": 1}}");
    if (!a) return NULL;
    int64_t offsets[13];
    char data[256];
    offsets[0] = 0;
    for (int k = 0; k < 12; k++) {
        int len = 0;
        for (int r = 0; r <= k / 3; r++) len += snprintf(data + offsets[k] + len, 8, "%d,%d", k / 3, k % 3);
        offsets[k + 1] = offsets[k] + len;
    }
    uint64_t start[2] = {0, 0}, count[2] = {4, 3};
    CHECK_OK(zarr_array_write_vlen(a, 2, start, count, offsets, 13, data, (size_t)offsets[12]));
    return a;
}

/* Reads `sel` and checks item k is "i,j" (repeated i + 1 times) for (i, j) = want[k]. */
static void expect(zarr_array *a, const zarr_selection *sel, const int (*want)[2], size_t n) {
    size_t items = 0, bytes = 0;
    if (!CHECK_OK(zarr_array_selection_size(a, sel, &items, &bytes))) return;
    CHECK_U64_EQ(items, n);
    int64_t offsets[32];
    char *data = malloc(bytes + 1);
    if (items == n && CHECK_OK(zarr_array_read_vlen_selection(a, sel, offsets, n + 1, data, bytes))) {
        for (size_t k = 0; k < n; k++) {
            char item[64];
            int len = 0;
            for (int r = 0; r <= want[k][0]; r++) len += snprintf(item + len, 8, "%d,%d", want[k][0], want[k][1]);
            CHECK_CTX("item %zu", k);
            CHECK(offsets[k + 1] - offsets[k] == len && memcmp(data + offsets[k], item, (size_t)len) == 0);
        }
        CHECK_CTX_CLEAR();
    }
    free(data);
}

static void test_text_kinds(const char *dir) {
    zarr_store *s = open_store(strf("%s/text", dir), ZARR_MODE_WRITE);
    zarr_array *a = make_text(s);
    if (!a) { zarr_store_close(s); return; }
    uint64_t start[2] = {1, 0}, count[2] = {2, 2}, step[2] = {2, 2};
    zarr_selection box = {.kind = ZARR_SELECT_BOX, .ndim = 2, .start = start, .count = count, .step = step};
    const int box_want[][2] = {{1, 0}, {1, 2}, {3, 0}, {3, 2}};
    expect(a, &box, box_want, 4);

    uint64_t rows[3] = {3, 0, 3};
    uint8_t flags[3] = {0, 1, 1};
    zarr_dim_selection dims[2] = {{.indices = rows, .count = 3}, {.flags = flags, .count = 3}};
    zarr_selection orth = {.kind = ZARR_SELECT_ORTHOGONAL, .ndim = 2, .dims = dims};
    const int orth_want[][2] = {{3, 1}, {3, 2}, {0, 1}, {0, 2}, {3, 1}, {3, 2}};
    expect(a, &orth, orth_want, 6);

    uint64_t coords[] = {2, 2, 0, 0, 2, 2, 3, 1};
    zarr_selection points = {.kind = ZARR_SELECT_POINTS, .ndim = 2, .npoints = 4, .coords = coords};
    const int point_want[][2] = {{2, 2}, {0, 0}, {2, 2}, {3, 1}};
    expect(a, &points, point_want, 4);

    uint8_t mask[12] = {0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0};
    zarr_selection m = {.kind = ZARR_SELECT_MASK, .mask = mask, .mask_size = 12};
    const int mask_want[][2] = {{0, 2}, {1, 0}, {3, 1}};
    expect(a, &m, mask_want, 3);

    uint64_t bstart[2] = {1, 1}, bcount[2] = {1, 1};
    zarr_selection blocks = {.kind = ZARR_SELECT_BLOCKS, .ndim = 2, .start = bstart, .count = bcount};
    const int block_want[][2] = {{2, 2}, {3, 2}};
    expect(a, &blocks, block_want, 2);

    /* Write through points (the last of a repeated point wins), read back through a mask. */
    uint64_t wcoords[] = {1, 1, 3, 2, 1, 1};
    zarr_selection wpoints = {.kind = ZARR_SELECT_POINTS, .ndim = 2, .npoints = 3, .coords = wcoords};
    int64_t woff[4] = {0, 1, 3, 6};
    CHECK_OK(zarr_array_write_vlen_selection(a, &wpoints, woff, 4, "abcdef", 6));
    uint8_t wmask[12] = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    zarr_selection wm = {.kind = ZARR_SELECT_MASK, .mask = wmask, .mask_size = 12};
    int64_t off[3];
    char got[8];
    if (CHECK_OK(zarr_array_read_vlen_selection(a, &wm, off, 3, got, sizeof got)))
        CHECK(off[1] == 3 && off[2] == 5 && memcmp(got, "defbc", 5) == 0);

    /* Errors: an unknown kind, a wrong ndim, a point outside, a short offsets buffer, a fixed-size call. */
    zarr_selection bad = {.kind = 7, .ndim = 2};
    CHECK_STATUS(zarr_array_selection_size(a, &bad, NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "selection kind 7");
    zarr_selection wrong = {.kind = ZARR_SELECT_POINTS, .ndim = 1, .npoints = 1, .coords = coords};
    CHECK_STATUS(zarr_array_selection_size(a, &wrong, NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    uint64_t outside[] = {4, 0};
    zarr_selection out = {.kind = ZARR_SELECT_POINTS, .ndim = 2, .npoints = 1, .coords = outside};
    CHECK_STATUS(zarr_array_read_vlen_selection(a, &out, off, 2, got, sizeof got), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_STATUS(zarr_array_read_vlen_selection(a, &points, off, 3, got, sizeof got), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_selection_size(a, NULL, NULL, NULL), ZARR_ERR_NULL_POINTER);
    const char *names[] = {"x"};
    CHECK_STATUS(zarr_array_read_fields_selection(a, &points, names, 1, got, sizeof got), ZARR_ERR_INVALID_ARGUMENT);
    zarr_array_close(a);
    zarr_store_close(s);
}

/* Fields of a structured array through points and orthogonal flags, both ways. */
static void test_fields(const char *dir) {
    zarr_store *s = open_store(strf("%s/rec", dir), ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "r", "{\"shape\": [5], \"chunks\": [2], "
                                         "\"dtype\": [[\"a\", \"<i4\"], [\"b\", \">f8\"], [\"c\", \"|S2\"]]}");
    if (!a) { zarr_store_close(s); return; }
    struct __attribute__((packed)) { double b; int32_t a; } in[3] = {{1.5, 10}, {2.5, 20}, {3.5, 30}}, outr[5];
    const char *names[] = {"b", "a"};
    uint64_t coords[] = {4, 0, 2};
    zarr_selection points = {.kind = ZARR_SELECT_POINTS, .ndim = 1, .npoints = 3, .coords = coords};
    CHECK_OK(zarr_array_write_fields_selection(a, &points, names, 2, in, sizeof in));
    size_t items = 0, bytes = 0;
    CHECK_OK(zarr_array_selection_size(a, &points, &items, &bytes));
    CHECK(items == 3 && bytes == 3 * 14);
    uint8_t flags[5] = {1, 1, 1, 0, 1};
    zarr_dim_selection dim = {.flags = flags, .count = 5};
    zarr_selection orth = {.kind = ZARR_SELECT_ORTHOGONAL, .ndim = 1, .dims = &dim};
    if (CHECK_OK(zarr_array_read_fields_selection(a, &orth, names, 2, outr, 4 * 12))) {
        CHECK(outr[0].a == 20 && outr[0].b == 2.5 && outr[1].a == 0 && outr[2].a == 30 && outr[3].a == 10);
        CHECK(outr[3].b == 1.5);
    }
    CHECK_STATUS(zarr_array_read_fields_selection(a, &orth, names, 2, outr, 5 * 12), ZARR_ERR_BUFFER_SIZE);
    zarr_array_close(a);
    zarr_store_close(s);
}

int main(void) {
    char *dir = tmpdir_make();
    if (!dir) return 1;
    test_text_kinds(dir);
    test_fields(dir);
    tmpdir_remove(dir);
    return check_summary("test_selection_objects");
}
