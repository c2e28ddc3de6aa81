/* test_view.c - views (zarr_array_view) and type conversions (zarr_array_astype), as zarr-python 2's
 * Array.view and Array.astype: the stored chunks read through metadata only the handle holds,
 * values and fill values converted as NumPy converts them, writes through writable views,
 * refusals (read-only views, resizing a view, unknown members, non-numeric types), v2 and v3. */
#include "testutil.h"

#include <string.h>

static const char *V2 = "{\"shape\":[6,4],\"chunks\":[2,4],\"dtype\":\"<f8\",\"fill_value\":-1.5,"
                        "\"compressor\":{\"id\":\"zlib\",\"level\":1}}";
static const char *V3 = "{\"zarr_format\":3,\"shape\":[6,4],\"data_type\":\"float64\",\"fill_value\":-1.5,"
                        "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2,4]}},"
                        "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]}";

/* Rows 0..3 hold i * 1.75 - 5; rows 4 and 5 (one chunk) are never written. */
static void fill_source(zarr_array *a) {
    double v[16];
    for (int i = 0; i < 16; i++) v[i] = i * 1.75 - 5;
    uint64_t start[2] = {0, 0}, count[2] = {4, 4};
    CHECK_OK(zarr_array_write(a, 2, start, count, v, sizeof v));
}

static void test_astype(zarr_array *a) {
    zarr_array *v = NULL;
    if (!CHECK_OK(zarr_array_astype(a, "<i2", &v))) return;
    int32_t kind = 0;
    size_t size = 0;
    CHECK_OK(zarr_array_dtype(v, &kind, &size));
    CHECK(kind == ZARR_DTYPE_INT && size == 2);
    int16_t got[24];
    uint64_t start[2] = {0, 0}, count[2] = {6, 4};
    CHECK_OK(zarr_array_read(v, 2, start, count, got, sizeof got));
    for (int i = 0; i < 16; i++) CHECK(got[i] == (int16_t)(i * 1.75 - 5)); /* truncated, as NumPy */
    for (int i = 16; i < 24; i++) CHECK(got[i] == -1);                      /* the fill value -1.5 */
    /* Read-only, and the conversion is its first filter (the first codec in v3). */
    CHECK_STATUS(zarr_array_write(v, 2, start, count, got, sizeof got), ZARR_ERR_READ_ONLY);
    CHECK_CONTAINS(zarr_last_error(), "read-only view");
    uint64_t points[4] = {0, 1, 5, 3};
    CHECK_STATUS(zarr_array_write_points(v, 2, 2, points, got, 2 * sizeof got[0]), ZARR_ERR_READ_ONLY);
    CHECK_CONTAINS(zarr_last_error(), "read-only view");
    char *json = NULL;
    if (CHECK_OK(zarr_array_metadata_json(v, &json))) {
        CHECK_CONTAINS(json, "astype");
        CHECK_CONTAINS(json, "\"decode_dtype\"");
        zarr_string_free(json);
    }
    if (CHECK_OK(zarr_array_info_json(v, &json))) {
        CHECK_JSON_HAS(json, "\"read_only\":true");
        zarr_string_free(json);
    }
    CHECK_OK(zarr_array_close(v));
    /* Floats to unsigned bytes and to Booleans. */
    if (CHECK_OK(zarr_array_astype(a, "|b1", &v))) {
        uint8_t b[4];
        uint64_t c1[2] = {1, 4};
        CHECK_OK(zarr_array_read(v, 2, start, c1, b, sizeof b));
        CHECK(b[0] == 1 && b[1] == 1 && b[2] == 1 && b[3] == 1); /* -5, -3.25, -1.5, 0.25 */
        CHECK_OK(zarr_array_close(v));
    }
    CHECK_STATUS(zarr_array_astype(a, "|S4", &v), ZARR_ERR_INVALID_METADATA);
    CHECK_CONTAINS(zarr_last_error(), "astype");
    CHECK_STATUS(zarr_array_astype(a, "<M8[s]", &v), ZARR_ERR_INVALID_METADATA);
    CHECK(zarr_array_astype(a, "nonsense", &v) != ZARR_OK);
    CHECK_STATUS(zarr_array_astype(a, NULL, &v), ZARR_ERR_NULL_POINTER);
}

static void test_views(zarr_store *s, zarr_array *a, int format) {
    zarr_array *v = NULL;
    /* The same bytes as 64-bit integers. */
    const char *as_int = format == 3 ? "{\"data_type\":\"int64\"}" : "{\"dtype\":\"<i8\"}";
    if (CHECK_OK(zarr_array_view(a, as_int, &v))) {
        int64_t got[4];
        uint64_t start[2] = {0, 0}, count[2] = {1, 4};
        CHECK_OK(zarr_array_read(v, 2, start, count, got, sizeof got));
        double want = -5;
        int64_t bits;
        memcpy(&bits, &want, sizeof bits);
        CHECK(got[0] == bits);
        uint64_t s4[2] = {4, 0};
        CHECK_OK(zarr_array_read(v, 2, s4, count, got, sizeof got));
        CHECK(got[0] == -1); /* the fill value cast: -1.5 as an int64 */
        CHECK_OK(zarr_array_close(v));
    }
    /* A smaller shape; a writable view writes through the source's codecs. */
    if (CHECK_OK(zarr_array_view(a, "{\"shape\":[4,4]}", &v))) {
        uint64_t shape[2];
        CHECK_OK(zarr_array_shape(v, 2, shape));
        CHECK(shape[0] == 4 && shape[1] == 4);
        double one[1] = {42};
        uint64_t start[2] = {3, 3}, count[2] = {1, 1};
        CHECK_OK(zarr_array_write(v, 2, start, count, one, sizeof one));
        CHECK_STATUS(zarr_array_resize(v, 2, shape), ZARR_ERR_UNSUPPORTED);
        CHECK_CONTAINS(zarr_last_error(), "view");
        double back[1] = {0};
        CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back));
        CHECK(back[0] == 42);
        /* A view of a view, read-only. */
        zarr_array *w = NULL;
        if (CHECK_OK(zarr_array_view(v, "{\"read_only\":true}", &w))) {
            CHECK_STATUS(zarr_array_write(w, 2, start, count, one, sizeof one), ZARR_ERR_READ_ONLY);
            CHECK_STATUS(zarr_array_attrs_update(w, "{\"a\":1}"), ZARR_ERR_READ_ONLY);
            CHECK_OK(zarr_array_read(w, 2, start, count, back, sizeof back));
            CHECK(back[0] == 42);
            CHECK_OK(zarr_array_close(w));
        }
        CHECK_OK(zarr_array_close(v));
    }
    /* The stored metadata is untouched. */
    zarr_array *again = NULL;
    uint64_t shape[2];
    if (CHECK_OK(zarr_array_open(s, format == 3 ? "v3" : "v2", &again))) {
        CHECK_OK(zarr_array_shape(again, 2, shape));
        CHECK(shape[0] == 6);
        CHECK_OK(zarr_array_close(again));
    }
    /* Refusals, each naming what is wrong. */
    CHECK_STATUS(zarr_array_view(a, "{\"compressor\":null}", &v), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "compressor");
    CHECK_STATUS(zarr_array_view(a, "{\"read_only\":1}", &v), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_view(a, "[1]", &v), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_view(a, "{", &v), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_view(a, "{\"shape\":[-1,4]}", &v), ZARR_ERR_INVALID_METADATA);
    /* Chunks that do not decode to the view's chunk size fail; never the fill value. */
    const char *halves = format == 3 ? "{\"data_type\":\"int32\"}" : "{\"dtype\":\"<i4\"}";
    if (CHECK_OK(zarr_array_view(a, halves, &v))) {
        int32_t got[4];
        uint64_t start[2] = {0, 0}, count[2] = {1, 4};
        CHECK(zarr_array_read(v, 2, start, count, got, sizeof got) != ZARR_OK);
        CHECK_OK(zarr_array_close(v));
    }
}

int main(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    for (int format = 2; s && format <= 3; format++) {
        CHECK_CTX("v%d", format);
        zarr_array *a = create_array(s, format == 3 ? "v3" : "v2", format == 3 ? V3 : V2);
        if (!a) continue;
        fill_source(a);
        test_astype(a);
        test_views(s, a, format);
        /* A view stays valid after its source is closed. */
        zarr_array *v = NULL;
        CHECK_OK(zarr_array_astype(a, "<f4", &v));
        CHECK_OK(zarr_array_close(a));
        float f[1];
        uint64_t start[2] = {0, 1}, count[2] = {1, 1};
        if (v) CHECK_OK(zarr_array_read(v, 2, start, count, f, sizeof f));
        CHECK(f[0] == -3.25f);
        CHECK_OK(zarr_array_close(v));
    }
    CHECK_CTX_CLEAR();
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
    return check_summary("test_view");
}
