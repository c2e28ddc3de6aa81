/* test_inspect.c - array inspection: ndim, shape, chunks, order, compressor/filters/metadata
 * JSON, the defaults of zarr_array_create, and the .zarray document written to disk. */
#include "testutil.h"

static void check_dims(zarr_array *a, size_t ndim, const uint64_t *shape, const uint64_t *chunks) {
    size_t got_ndim = 99;
    uint64_t got[8], guard[8];
    if (!CHECK_OK(zarr_array_ndim(a, &got_ndim)) || !CHECK_U64_EQ(got_ndim, ndim)) return;
    memset(got, 0xEE, sizeof got);
    if (CHECK_OK(zarr_array_shape(a, ndim, got)))
        for (size_t d = 0; d < ndim; d++) CHECK_U64_EQ(got[d], shape[d]);
    CHECK_U64_EQ(got[ndim], 0xEEEEEEEEEEEEEEEEull); /* nothing written past ndim */
    if (CHECK_OK(zarr_array_chunks(a, ndim, got)))
        for (size_t d = 0; d < ndim; d++) CHECK_U64_EQ(got[d], chunks[d]);
    /* A different ndim is refused and writes nothing. */
    memset(guard, 0xEE, sizeof guard);
    memcpy(got, guard, sizeof got);
    CHECK_STATUS(zarr_array_shape(a, ndim + 1, got), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_chunks(a, ndim + 1, got), ZARR_ERR_INVALID_ARGUMENT);
    if (ndim > 0) {
        CHECK_STATUS(zarr_array_shape(a, ndim - 1, got), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_chunks(a, ndim - 1, got), ZARR_ERR_INVALID_ARGUMENT);
    }
    CHECK(memcmp(got, guard, sizeof got) == 0);
}

static char *get_json(zarr_status (*fn)(const zarr_array *, char **), zarr_array *a) {
    char *s = NULL;
    return CHECK_OK(fn(a, &s)) ? s : NULL;
}

/* Keys of the top-level object appear in sorted order (as zarr-python writes them). */
static void check_sorted_keys(const char *doc) {
    static const char *const keys[] = {"\"chunks\"", "\"compressor\"", "\"dtype\"", "\"fill_value\"",
                                       "\"filters\"", "\"order\"", "\"shape\"", "\"zarr_format\""};
    const char *prev = doc;
    for (size_t i = 0; i < ARRAY_LEN(keys); i++) {
        const char *at = strstr(doc, keys[i]);
        CHECK_CTX("key %s", keys[i]);
        if (CHECK(at != NULL)) CHECK(at >= prev);
        if (at) prev = at;
    }
    CHECK_CTX_CLEAR();
}

static void test_defaults(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "d", "{\"shape\":[10,20,30],\"chunks\":[5,10,7],\"dtype\":\"<i2\"}");
    uint64_t shape[3] = {10, 20, 30}, chunks[3] = {5, 10, 7};
    zarr_order order = -1;
    char *j, *file;
    int16_t fill = -1;
    bool is_set = false;
    if (!a) goto out;
    check_dims(a, 3, shape, chunks);
    CHECK_OK(zarr_array_order(a, &order));
    CHECK_U64_EQ(order, ZARR_ORDER_C);
    j = get_json(zarr_array_compressor_json, a);
    CHECK_JSON_EQ(j, "null");
    zarr_string_free(j);
    j = get_json(zarr_array_filters_json, a);
    CHECK_JSON_EQ(j, "null");
    zarr_string_free(j);
    CHECK_OK(zarr_array_fill_value(a, &fill, sizeof fill, &is_set));
    CHECK(is_set && fill == 0);

    j = get_json(zarr_array_metadata_json, a);
    file = (char *)file_read(strf("%s/d/.zarray", dir), NULL);
    if (j && CHECK(file != NULL)) {
        static const char *const want[] = {"\"zarr_format\":2", "\"shape\":[10,20,30]", "\"chunks\":[5,10,7]",
                                           "\"dtype\":\"<i2\"", "\"compressor\":null", "\"fill_value\":0",
                                           "\"order\":\"C\"", "\"filters\":null"};
        for (size_t i = 0; i < ARRAY_LEN(want); i++) {
            CHECK_JSON_HAS(j, want[i]);
            CHECK_JSON_HAS(file, want[i]);
        }
        CHECK_JSON_SAME_OBJECT(j, file); /* metadata_json is the .zarray document */
        CHECK(strchr(file, '\n') != NULL); /* pretty-printed */
        check_sorted_keys(file);
    }
    free(file);
    zarr_string_free(j);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

static void test_explicit_settings(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "e", "{\"zarr_format\":2,\"shape\":[7,0,3],\"chunks\":[2,4,1],\"dtype\":\">i8\","
                                         "\"order\":\"F\",\"fill_value\":-9,\"dimension_separator\":\"/\","
                                         "\"compressor\":{\"id\":\"zstd\",\"level\":3},\"filters\":null}");
    uint64_t shape[3] = {7, 0, 3}, chunks[3] = {2, 4, 1};
    zarr_order order = -1;
    char *j;
    int64_t fill = 0;
    bool is_set = false;
    if (!a) goto out;
    check_dims(a, 3, shape, chunks); /* a zero-length dimension is allowed */
    CHECK_OK(zarr_array_order(a, &order));
    CHECK_U64_EQ(order, ZARR_ORDER_F);
    CHECK_OK(zarr_array_fill_value(a, &fill, sizeof fill, &is_set));
    CHECK(is_set && fill == -9);
    j = get_json(zarr_array_compressor_json, a);
    CHECK_JSON_HAS(j, "\"id\":\"zstd\"");
    CHECK_JSON_HAS(j, "\"level\":3");
    zarr_string_free(j);
    j = get_json(zarr_array_metadata_json, a);
    CHECK_JSON_HAS(j, "\"dimension_separator\":\"/\"");
    CHECK_JSON_HAS(j, "\"order\":\"F\"");
    CHECK_JSON_HAS(j, "\"fill_value\":-9");
    CHECK_JSON_HAS(j, "\"dtype\":\">i8\"");
    CHECK_JSON_HAS(j, "\"shape\":[7,0,3]");
    zarr_string_free(j);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
}

/* Special float fill values are written with the spec's strings. */
static void test_fill_json(void) {
    static const struct { const char *fill, *want; } cases[] = {
        {"\"NaN\"", "\"fill_value\":\"NaN\""},
        {"\"Infinity\"", "\"fill_value\":\"Infinity\""},
        {"\"-Infinity\"", "\"fill_value\":\"-Infinity\""},
        {"null", "\"fill_value\":null"},
        {"1.5", "\"fill_value\":1.5"},
    };
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        zarr_array *a = create_array(s, strf("f%zu", i), strf("{\"shape\":[2],\"chunks\":[2],"
                                     "\"dtype\":\"<f8\",\"fill_value\":%s}", cases[i].fill));
        char *j = a ? get_json(zarr_array_metadata_json, a) : NULL;
        CHECK_CTX("fill %s", cases[i].fill);
        CHECK_JSON_HAS(j, cases[i].want);
        zarr_string_free(j);
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_CTX_CLEAR();
    CHECK_OK(zarr_store_close(s));
}

/* Inspection on an array opened from a .zarray written by another tool. */
static void test_foreign_zarray(void) {
    char *dir = tmpdir_make();
    zarr_store *s;
    zarr_array *a;
    const char *doc = "{\n    \"chunks\": [\n        3\n    ],\n    \"compressor\": {\n        \"blocksize\": 0,\n"
                      "        \"clevel\": 5,\n        \"cname\": \"lz4\",\n        \"id\": \"blosc\",\n        \"shuffle\": 1\n"
                      "    },\n    \"dtype\": \"<u2\",\n    \"fill_value\": 7,\n    \"filters\": null,\n"
                      "    \"order\": \"C\",\n    \"shape\": [\n        8\n    ],\n    \"zarr_format\": 2\n}";
    uint64_t shape = 8, chunks = 3, start = 0;
    uint16_t vals[8];
    CHECK(mkdir(strf("%s/foreign", dir), 0755) == 0);
    CHECK(file_write(strf("%s/foreign/.zarray", dir), doc, strlen(doc)));
    s = open_store(dir, ZARR_MODE_READ);
    a = s ? open_array(s, "foreign") : NULL;
    if (a) {
        char *j = get_json(zarr_array_compressor_json, a);
        check_dims(a, 1, &shape, &chunks);
        CHECK_JSON_HAS(j, "\"cname\":\"lz4\"");
        zarr_string_free(j);
        CHECK_OK(zarr_array_read(a, 1, &start, &shape, vals, sizeof vals));
        for (int i = 0; i < 8; i++) CHECK_U64_EQ(vals[i], 7); /* no chunks: all fill */
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

int main(void) {
    test_defaults();
    test_explicit_settings();
    test_fill_json();
    test_foreign_zarray();
    return check_summary("test_inspect");
}
