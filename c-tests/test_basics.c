/* test_basics.c - version, status names, last_error, string_free, close(NULL), and the
 * NULL-pointer check of every entry point (with output parameters left untouched). */
#include "testutil.h"

#include <pthread.h>

static void test_version(void) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", ZARR_VERSION_MAJOR, ZARR_VERSION_MINOR,
             ZARR_VERSION_PATCH);
    CHECK_STR_EQ(zarr_version(), "0.1.0");
    CHECK_STR_EQ(zarr_version(), want);
    CHECK(zarr_version() == zarr_version()); /* static string */
    CHECK(ZARR_VERSION_NUMBER == ZARR_VERSION_MAJOR * 10000 + ZARR_VERSION_MINOR * 100 + ZARR_VERSION_PATCH);
    CHECK(zarr_version_number() == ZARR_VERSION_NUMBER);
    CHECK(ZARR_CHECK_VERSION() == ZARR_OK);
    /* A header of the next minor version is not served while 0.x; the message names both. */
    CHECK(zarr_check_version(ZARR_VERSION_NUMBER + 100) == ZARR_ERR_UNSUPPORTED);
    CHECK(strstr(zarr_last_error(), "zarr.h 0.2.0") != NULL);
    CHECK(strstr(zarr_last_error(), "libzarr 0.1.0") != NULL);
}

static void test_status_names(void) {
    static const struct { zarr_status code; const char *name; } names[] = {
        {ZARR_OK, "ZARR_OK"},
        {ZARR_ERR_NULL_POINTER, "ZARR_ERR_NULL_POINTER"},
        {ZARR_ERR_INVALID_ARGUMENT, "ZARR_ERR_INVALID_ARGUMENT"},
        {ZARR_ERR_OUT_OF_BOUNDS, "ZARR_ERR_OUT_OF_BOUNDS"},
        {ZARR_ERR_BUFFER_SIZE, "ZARR_ERR_BUFFER_SIZE"},
        {ZARR_ERR_NOT_FOUND, "ZARR_ERR_NOT_FOUND"},
        {ZARR_ERR_ALREADY_EXISTS, "ZARR_ERR_ALREADY_EXISTS"},
        {ZARR_ERR_READ_ONLY, "ZARR_ERR_READ_ONLY"},
        {ZARR_ERR_INVALID_METADATA, "ZARR_ERR_INVALID_METADATA"},
        {ZARR_ERR_UNSUPPORTED, "ZARR_ERR_UNSUPPORTED"},
        {ZARR_ERR_CORRUPT_CHUNK, "ZARR_ERR_CORRUPT_CHUNK"},
        {ZARR_ERR_IO, "ZARR_ERR_IO"},
        {ZARR_ERR_INVALID_PATH, "ZARR_ERR_INVALID_PATH"},
        {ZARR_ERR_OVERFLOW, "ZARR_ERR_OVERFLOW"},
        {ZARR_ERR_TOO_LARGE, "ZARR_ERR_TOO_LARGE"},
        {ZARR_ERR_CANCELLED, "ZARR_ERR_CANCELLED"},
        {ZARR_ERR_PERMISSION_DENIED, "ZARR_ERR_PERMISSION_DENIED"},
        {ZARR_ERR_UNREACHABLE, "ZARR_ERR_UNREACHABLE"},
        {ZARR_ERR_TIMEOUT, "ZARR_ERR_TIMEOUT"},
        {ZARR_ERR_WRONG_NODE_TYPE, "ZARR_ERR_WRONG_NODE_TYPE"},
        {ZARR_ERR_INTERNAL, "ZARR_ERR_INTERNAL"},
    };
    static const zarr_status unknown[] = {1, 7, -20, -98, -100, INT32_MIN, INT32_MAX};
    /* The numbers are part of the ABI. */
    CHECK(ZARR_ERR_NULL_POINTER == -1 && ZARR_ERR_TOO_LARGE == -14 &&
          ZARR_ERR_CANCELLED == -15 && ZARR_ERR_PERMISSION_DENIED == -16 &&
          ZARR_ERR_UNREACHABLE == -17 && ZARR_ERR_TIMEOUT == -18 &&
          ZARR_ERR_WRONG_NODE_TYPE == -19 && ZARR_ERR_INTERNAL == -99);
    CHECK(ZARR_MODE_READ == 0 && ZARR_MODE_WRITE == 1 && ZARR_ORDER_C == 0 && ZARR_ORDER_F == 1);
    CHECK(ZARR_DTYPE_BOOL == 1 && ZARR_DTYPE_INT == 2 && ZARR_DTYPE_UINT == 3 &&
          ZARR_DTYPE_FLOAT == 4 && ZARR_DTYPE_COMPLEX == 5);
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        CHECK_CTX("status %d", (int)names[i].code);
        CHECK_STR_EQ(zarr_status_name(names[i].code), names[i].name);
    }
    for (size_t i = 0; i < ARRAY_LEN(unknown); i++) {
        CHECK_CTX("status %d", (int)unknown[i]);
        CHECK_STR_EQ(zarr_status_name(unknown[i]), "ZARR_UNKNOWN_STATUS");
    }
    CHECK_CTX_CLEAR();
}

static void *fresh_thread_last_error(void *arg) {
    const char *msg = zarr_last_error();
    *(int *)arg = msg != NULL && msg[0] == '\0';
    return NULL;
}

static void *thread_fails(void *arg) {
    zarr_store *s = NULL;
    *(int *)arg = zarr_store_open("/nonexistent-libzarr-thread-path", ZARR_MODE_READ, &s);
    return NULL;
}

static void test_last_error(void) {
    pthread_t t;
    int fresh_empty = 0, thread_status = 0;
    zarr_store *s = NULL;
    char *dir = tmpdir_make();
    const char *missing = strf("%s/no-such-store-here", dir);

    /* A thread that never failed sees "". */
    CHECK(pthread_create(&t, NULL, fresh_thread_last_error, &fresh_empty) == 0);
    pthread_join(t, NULL);
    CHECK(fresh_empty);

    CHECK(zarr_last_error() != NULL);
    CHECK_STATUS(zarr_store_open(missing, ZARR_MODE_READ, &s), ZARR_ERR_NOT_FOUND);
    CHECK(s == NULL);
    CHECK(zarr_last_error() != NULL);
    CHECK_CONTAINS(zarr_last_error(), "no-such-store-here");

    /* Thread-local: another thread's failure does not replace this thread's message. */
    CHECK(pthread_create(&t, NULL, thread_fails, &thread_status) == 0);
    pthread_join(t, NULL);
    CHECK_STATUS(thread_status, ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "no-such-store-here");
    CHECK_NOT_CONTAINS(zarr_last_error(), "nonexistent-libzarr-thread-path");

    /* Successful calls never make it NULL. */
    CHECK_OK(zarr_store_open("memory:", ZARR_MODE_WRITE, &s));
    CHECK(zarr_last_error() != NULL);
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);

    /* A layer over libzarr sets it (zarr_mpi.h: another rank's message), secrets redacted. */
    zarr_set_last_error("rank 3: no such key at s3://user:hunter2@host/b");
    CHECK_CONTAINS(zarr_last_error(), "rank 3: no such key");
    CHECK_NOT_CONTAINS(zarr_last_error(), "hunter2");
    zarr_set_last_error(NULL);
    CHECK_STR_EQ(zarr_last_error(), "");
}

/* An array opened from the metadata document another handle gives shares its chunks. */
static void test_open_metadata(void) {
    zarr_store *s = NULL;
    zarr_array *a = NULL, *b = NULL, *c = NULL;
    char *doc = NULL, *now = NULL;
    CHECK_OK(zarr_store_open("memory:", ZARR_MODE_WRITE, &s));
    CHECK_OK(zarr_array_create(s, "a", "{\"shape\": [4], \"chunks\": [2], \"dtype\": \"<i4\"}", &a));
    CHECK_OK(zarr_array_opened_metadata_json(a, &doc));
    if (CHECK_OK(zarr_array_metadata_json(a, &now))) CHECK_STR_EQ(doc, now);
    zarr_string_free(now);
    CHECK_OK(zarr_array_open_metadata(s, "a", doc, &b));
    int32_t in[4] = {1, -2, 3, -4}, out[4] = {0};
    uint64_t start[1] = {0}, count[1] = {4};
    CHECK_OK(zarr_array_write(b, 1, start, count, in, sizeof in));
    CHECK_OK(zarr_array_read(a, 1, start, count, out, sizeof out));
    CHECK(memcmp(in, out, sizeof in) == 0);
    CHECK_STATUS(zarr_array_open_metadata(s, "a", "{\"shape\": [4]}", &c), ZARR_ERR_INVALID_METADATA);
    CHECK_STATUS(zarr_array_open_metadata(s, "g", "{\"zarr_format\": 3, \"node_type\": \"group\"}", &c),
                 ZARR_ERR_WRONG_NODE_TYPE);
    CHECK(c == NULL);
    zarr_string_free(doc);
    CHECK_OK(zarr_array_close(b));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
}

static void test_free_and_close_null(void) {
    zarr_string_free(NULL); /* must not crash */
    CHECK_OK(zarr_store_close(NULL));
    CHECK_OK(zarr_array_close(NULL));
    CHECK_OK(zarr_group_close(NULL));
}

/* Every pointer argument of every function, one at a time, gives ZARR_ERR_NULL_POINTER,
 * and the output parameters that were valid stay untouched. */
static void test_null_pointers(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "arr", "{\"shape\":[4,4],\"chunks\":[2,2],\"dtype\":\"<i4\"}");
    zarr_group *g = NULL;
    int sentinel_target;
    void *const SENT = &sentinel_target; /* a recognisable non-NULL pointer */
    zarr_store *os = SENT;
    zarr_array *oa = SENT;
    zarr_group *og = SENT;
    char *ostr = SENT;
    size_t osz = 777;
    uint64_t o64[2] = {777, 777}, start[2] = {0, 0}, count[2] = {1, 1};
    int32_t buf = 12345, kind = 777, order = 777;
    bool is_set = true;
    const char *json = "{\"shape\":[1],\"chunks\":[1],\"dtype\":\"<i4\"}";
#define NULLP(expr) CHECK_STATUS(expr, ZARR_ERR_NULL_POINTER)

    CHECK_OK(zarr_group_create(s, "grp", &g));
    if (!a || !g) return;

    NULLP(zarr_store_open(NULL, ZARR_MODE_WRITE, &os));
    NULLP(zarr_store_open("memory:", ZARR_MODE_WRITE, NULL));
    CHECK(os == SENT);

    NULLP(zarr_array_create(NULL, "x", json, &oa));
    NULLP(zarr_array_create(s, NULL, json, &oa));
    NULLP(zarr_array_create(s, "x", NULL, &oa));
    NULLP(zarr_array_create(s, "x", json, NULL));
    CHECK(oa == SENT);
    CHECK_STATUS(zarr_array_open(s, "x", &oa), ZARR_ERR_NOT_FOUND); /* nothing was created */
    NULLP(zarr_array_open(NULL, "arr", &oa));
    NULLP(zarr_array_open(s, NULL, &oa));
    NULLP(zarr_array_open(s, "arr", NULL));
    NULLP(zarr_array_open_metadata(NULL, "arr", json, &oa));
    NULLP(zarr_array_open_metadata(s, NULL, json, &oa));
    NULLP(zarr_array_open_metadata(s, "arr", NULL, &oa));
    NULLP(zarr_array_open_metadata(s, "arr", json, NULL));
    NULLP(zarr_array_opened_metadata_json(NULL, &ostr));
    NULLP(zarr_array_opened_metadata_json(a, NULL));
    CHECK(oa == SENT);

    NULLP(zarr_array_ndim(NULL, &osz));
    NULLP(zarr_array_ndim(a, NULL));
    NULLP(zarr_array_shape(NULL, 2, o64));
    NULLP(zarr_array_shape(a, 2, NULL));
    NULLP(zarr_array_chunks(NULL, 2, o64));
    NULLP(zarr_array_chunks(a, 2, NULL));
    NULLP(zarr_array_dtype(NULL, &kind, &osz));
    NULLP(zarr_array_dtype(a, NULL, &osz));
    NULLP(zarr_array_dtype(a, &kind, NULL));
    NULLP(zarr_array_dtype_string(NULL, &ostr));
    NULLP(zarr_array_dtype_string(a, NULL));
    CHECK_CONTAINS(zarr_last_error(), "out_typestr");
    NULLP(zarr_array_fill_value(NULL, &buf, 4, &is_set));
    NULLP(zarr_array_fill_value(a, NULL, 4, &is_set));
    NULLP(zarr_array_fill_value(a, &buf, 4, NULL));
    NULLP(zarr_array_order(NULL, &order));
    NULLP(zarr_array_order(a, NULL));
    NULLP(zarr_array_compressor_json(NULL, &ostr));
    NULLP(zarr_array_compressor_json(a, NULL));
    NULLP(zarr_array_filters_json(NULL, &ostr));
    NULLP(zarr_array_filters_json(a, NULL));
    NULLP(zarr_array_metadata_json(NULL, &ostr));
    NULLP(zarr_array_metadata_json(a, NULL));
    NULLP(zarr_array_attrs_get(NULL, &ostr));
    NULLP(zarr_array_attrs_get(a, NULL));
    NULLP(zarr_array_attrs_set(NULL, "{}"));
    NULLP(zarr_array_attrs_set(a, NULL));
    CHECK(osz == 777 && o64[0] == 777 && o64[1] == 777 && kind == 777 && order == 777);
    CHECK(ostr == SENT && buf == 12345 && is_set);

    NULLP(zarr_array_read(NULL, 2, start, count, &buf, 4));
    NULLP(zarr_array_read(a, 2, NULL, count, &buf, 4));
    NULLP(zarr_array_read(a, 2, start, NULL, &buf, 4));
    NULLP(zarr_array_read(a, 2, start, count, NULL, 4));
    NULLP(zarr_array_write(NULL, 2, start, count, &buf, 4));
    NULLP(zarr_array_write(a, 2, NULL, count, &buf, 4));
    NULLP(zarr_array_write(a, 2, start, NULL, &buf, 4));
    NULLP(zarr_array_write(a, 2, start, count, NULL, 4));
    /* Pointers are required even for empty selections. */
    count[0] = 0;
    NULLP(zarr_array_read(a, 2, start, count, NULL, 0));
    NULLP(zarr_array_write(a, 2, start, count, NULL, 0));
    CHECK(buf == 12345);

    NULLP(zarr_group_create(NULL, "g2", &og));
    NULLP(zarr_group_create(s, NULL, &og));
    NULLP(zarr_group_create(s, "g2", NULL));
    NULLP(zarr_group_open(NULL, "grp", &og));
    NULLP(zarr_group_open(s, NULL, &og));
    NULLP(zarr_group_open(s, "grp", NULL));
    CHECK(og == SENT);
    CHECK_STATUS(zarr_group_open(s, "g2", &og), ZARR_ERR_NOT_FOUND);
    NULLP(zarr_group_list(NULL, &ostr));
    NULLP(zarr_group_list(g, NULL));
    NULLP(zarr_group_attrs_get(NULL, &ostr));
    NULLP(zarr_group_attrs_get(g, NULL));
    NULLP(zarr_group_attrs_set(NULL, "{}"));
    NULLP(zarr_group_attrs_set(g, NULL));
    CHECK(ostr == SENT);
    /* A NULL-pointer failure also sets a message. */
    NULLP(zarr_array_ndim(NULL, &osz));
    CHECK(zarr_last_error()[0] != '\0');
#undef NULLP

    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
}

/* Strings returned through char** are heap strings the caller frees. */
static void test_string_outputs(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "", "{\"shape\":[3],\"chunks\":[2],\"dtype\":\"<u2\"}");
    char *str = NULL;
    if (!a) return;
    if (CHECK_OK(zarr_array_dtype_string(a, &str))) {
        CHECK_STR_EQ(str, "<u2");
        str[0] = 'X'; /* ours to modify and free */
        zarr_string_free(str);
    }
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
}

/* The feature query: the JSON lists, and single features by KIND:NAME. */
static void test_features(void) {
    char *json = NULL;
    if (CHECK_OK(zarr_features(&json))) {
        CHECK(strstr(json, "\"zarr_formats\":[2,3]") != NULL);
        CHECK(strstr(json, "\"sharding_indexed\"") != NULL);
        CHECK(strstr(json, "\"s3\"") != NULL);
        zarr_string_free(json);
    }
    static const char *present[] = {"zarr_format:3", "store:zip", "store:dbm", "store:redis",
                                    "compressor:zstd", "blosc_compressor:lz4hc", "filter:delta",
                                    "filter:zlib", /* compressors may be filters too */
                                    "object_codec:vlen-utf8", "codec:numcodecs.bz2"};
    static const char *absent[] = {"zarr_format:1", "store:ftp", "compressor:snappy",
                                   "codec:numcodecs.jpeg2k"};
    bool has = false;
    for (size_t i = 0; i < ARRAY_LEN(present); i++) {
        CHECK_CTX("%s", present[i]);
        CHECK(CHECK_OK(zarr_has_feature(present[i], &has)) && has);
    }
    for (size_t i = 0; i < ARRAY_LEN(absent); i++) {
        CHECK_CTX("%s", absent[i]);
        CHECK(CHECK_OK(zarr_has_feature(absent[i], &has)) && !has);
    }
    CHECK_CTX_CLEAR();
    CHECK_STATUS(zarr_has_feature("zstd", &has), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(strstr(zarr_last_error(), "KIND:NAME") != NULL);
    CHECK_STATUS(zarr_has_feature("colour:red", &has), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_has_feature(NULL, &has), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_has_feature("store:s3", NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_features(NULL), ZARR_ERR_NULL_POINTER);
}

int main(void) {
    test_version();
    test_features();
    test_status_names();
    test_last_error();
    test_open_metadata();
    test_free_and_close_null();
    test_null_pointers();
    test_string_outputs();
    return check_summary("test_basics");
}
