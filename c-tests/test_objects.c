/* Object arrays (|O) through the public header: vlen-utf8, vlen-bytes, vlen-array and json2 items
 * in the Arrow-style layout (n + 1 int64 offsets and one data buffer), the size query, fill values
 * for never-written items, partial rewrites, compressors, json2/msgpack2 items of any JSON type as
 * JSON text, and every error path of the vlen calls. */
#include "check.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

enum { N = 7 };

/* Packs items into offsets + data (returns the data length). */
static size_t pack(const char *const *items, const size_t *lens, size_t n, int64_t *offsets, char *data) {
    offsets[0] = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(data + offsets[i], items[i], lens[i]);
        offsets[i + 1] = offsets[i] + (int64_t)lens[i];
    }
    return (size_t)offsets[n];
}

/* Reads all N items; checks item i equals want[i] (length wlen[i]). */
static void expect_items(zarr_array *a, const char *const *want, const size_t *wlen) {
    uint64_t start[1] = {0}, count[1] = {N};
    size_t bytes = 0;
    if (!CHECK_OK(zarr_array_vlen_size(a, 1, start, count, &bytes))) return;
    int64_t offsets[N + 1];
    char *data = malloc(bytes + 1);
    if (CHECK_OK(zarr_array_read_vlen(a, 1, start, count, offsets, N + 1, data, bytes))) {
        CHECK_U64_EQ(offsets[N], bytes);
        for (int i = 0; i < N; i++) {
            CHECK_CTX("item %d", i);
            CHECK_U64_EQ(offsets[i + 1] - offsets[i], wlen[i]);
            CHECK(offsets[i + 1] - offsets[i] == (int64_t)wlen[i] && memcmp(data + offsets[i], want[i], wlen[i]) == 0);
        }
        CHECK_CTX_CLEAR();
    }
    free(data);
}

/* Text items (vlen-utf8 and json2) with a fill value, through several compressors. */
static void test_text(const char *dir) {
    const char *filters[] = {"[{\"id\": \"vlen-utf8\"}]", "[{\"id\": \"json2\"}]", "[{\"id\": \"msgpack2\"}]"};
    const char *compressors[] = {"null", "{\"id\": \"zstd\", \"level\": 1}",
                                 "{\"id\": \"blosc\", \"cname\": \"lz4\", \"clevel\": 5, \"shuffle\": 1, \"blocksize\": 0}"};
    for (int f = 0; f < 3; f++)
        for (int c = 0; c < 3; c++) {
            CHECK_CTX("filters %s compressor %s", filters[f], compressors[c]);
            zarr_store *s = open_store(strf("%s/text%d%d", dir, f, c), ZARR_MODE_WRITE);
            zarr_array *a = create_array(s, "t", strf("{\"shape\": [7], \"chunks\": [3], \"dtype\": \"|O\", "
                                                     "\"filters\": %s, \"compressor\": %s, \"fill_value\": \"-\"}",
                                                     filters[f], compressors[c]));
            if (!a) { zarr_store_close(s); continue; }
            zarr_dtype_kind kind = 0;
            size_t itemsize = 99;
            CHECK_OK(zarr_array_dtype(a, &kind, &itemsize));
            CHECK(kind == ZARR_DTYPE_OBJECT && itemsize == 0);
            char *codec = NULL;
            if (CHECK_OK(zarr_array_object_codec(a, &codec))) CHECK_CONTAINS(codec, f == 0 ? "vlen-utf8" : f == 1 ? "json2" : "msgpack2");
            zarr_string_free(codec);
            const char *items[] = {"h\xc3\xa9llo", "", "\xf0\x9d\x84\x9e music", "xxxxxxxxxxxxxxxxxxxx"};
            size_t lens[] = {6, 0, 10, 20};
            int64_t offsets[5];
            char data[64];
            size_t n = pack(items, lens, 4, offsets, data);
            uint64_t start[1] = {2}, count[1] = {4};
            CHECK_OK(zarr_array_write_vlen(a, 1, start, count, offsets, 5, data, n));
            const char *want[N] = {"-", "-", items[0], items[1], items[2], items[3], "-"};
            size_t wlen[N] = {1, 1, 6, 0, 10, 20, 1};
            expect_items(a, want, wlen);
            /* Rewrite one item in the middle of a chunk: its neighbours stay. */
            const char *one[] = {"Z"};
            size_t one_len[] = {1};
            n = pack(one, one_len, 1, offsets, data);
            start[0] = 4, count[0] = 1;
            CHECK_OK(zarr_array_write_vlen(a, 1, start, count, offsets, 2, data, n));
            want[4] = "Z", wlen[4] = 1;
            expect_items(a, want, wlen);
            zarr_array_close(a);
            /* The same through a fresh read-only handle. */
            zarr_store_close(s);
            s = open_store(strf("%s/text%d%d", dir, f, c), ZARR_MODE_READ);
            a = open_array(s, "t");
            if (a) expect_items(a, want, wlen);
            zarr_array_close(a);
            zarr_store_close(s);
        }
    CHECK_CTX_CLEAR();
}

/* json2 and msgpack2 items of every JSON type, as JSON text once the handle asks for it. */
static void test_json_items(void) {
    const char *filters[] = {"[{\"id\": \"json2\"}]", "[{\"id\": \"msgpack2\"}]"};
    for (int f = 0; f < 2; f++) {
        CHECK_CTX("filters %s", filters[f]);
        zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
        zarr_array *a = create_array(s, "j", strf("{\"shape\": [7], \"chunks\": [3], \"dtype\": \"|O\", "
                                                 "\"filters\": %s, \"compressor\": null, \"fill_value\": 0}",
                                                 filters[f]));
        if (!a) { zarr_store_close(s); continue; }
        bool on = true;
        CHECK_OK(zarr_array_json_items(a, &on));
        CHECK(!on);
        CHECK_OK(zarr_array_set_json_items(a, true));
        const char *items[] = {"1", "\"t\"", "[1,2.5,null]", "{\"k\":true}", "null"};
        size_t lens[] = {1, 3, 12, 10, 4};
        int64_t offsets[6];
        char data[64];
        size_t n = pack(items, lens, 5, offsets, data);
        uint64_t start[1] = {1}, count[1] = {5};
        CHECK_OK(zarr_array_write_vlen(a, 1, start, count, offsets, 6, data, n));
        const char *want[N] = {"0", items[0], items[1], items[2], items[3], items[4], "0"};
        size_t wlen[N] = {1, 1, 3, 12, 10, 4, 1};
        expect_items(a, want, wlen);
        /* As strings, the numbers cannot be read; text that is not JSON cannot be written. */
        CHECK_OK(zarr_array_set_json_items(a, false));
        size_t size = 0;
        CHECK_STATUS(zarr_array_vlen_size(a, 1, start, count, &size), ZARR_ERR_UNSUPPORTED);
        CHECK_CONTAINS(zarr_last_error(), "not strings");
        CHECK_OK(zarr_array_set_json_items(a, true));
        n = pack((const char *[]){"{oops"}, (size_t[]){5}, 1, offsets, data);
        count[0] = 1;
        CHECK_STATUS(zarr_array_write_vlen(a, 1, start, count, offsets, 2, data, n), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(zarr_last_error(), "not JSON text");
        zarr_array_close(a);
        zarr_store_close(s);
    }
    CHECK_CTX_CLEAR();
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "u", "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"|O\", "
                                         "\"filters\": [{\"id\": \"vlen-utf8\"}], \"compressor\": null}");
    if (a) CHECK_STATUS(zarr_array_set_json_items(a, true), ZARR_ERR_INVALID_ARGUMENT);
    zarr_array_close(a);
    zarr_store_close(s);
}

/* vlen-array items arrive in native order whatever the stored order; vlen-bytes hold any bytes. */
static void test_arrays_and_bytes(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "a", "{\"shape\": [7], \"chunks\": [3], \"dtype\": \"|O\", "
                                         "\"filters\": [{\"id\": \"vlen-array\", \"dtype\": \">i4\"}], \"fill_value\": null}");
    int32_t first[3] = {1, -2, 300000};
    int64_t offsets[3] = {0, 12, 12};
    uint64_t start[1] = {0}, count[1] = {2};
    CHECK_OK(zarr_array_write_vlen(a, 1, start, count, offsets, 3, first, sizeof first));
    int32_t back[3] = {0};
    int64_t got[3];
    CHECK_OK(zarr_array_read_vlen(a, 1, start, count, got, 3, back, sizeof back));
    CHECK(got[1] == 12 && got[2] == 12 && memcmp(back, first, sizeof first) == 0);
    /* An item that is not whole elements. */
    int64_t ragged[2] = {0, 5};
    count[0] = 1;
    CHECK_STATUS(zarr_array_write_vlen(a, 1, start, count, ragged, 2, first, sizeof first), ZARR_ERR_INVALID_ARGUMENT);
    zarr_array_close(a);

    a = create_array(s, "b", "{\"shape\": [7], \"chunks\": [3], \"dtype\": \"|O\", \"filters\": [{\"id\": \"vlen-bytes\"}], \"fill_value\": null}");
    const char raw[4] = {0, (char)0xff, 0, 7};
    int64_t offs[3] = {0, 4, 4};
    count[0] = 2;
    CHECK_OK(zarr_array_write_vlen(a, 1, start, count, offs, 3, raw, 4));
    const char *want[N] = {raw, "", "", "", "", "", ""};
    size_t wlen[N] = {4, 0, 0, 0, 0, 0, 0};
    expect_items(a, want, wlen);
    zarr_array_close(a);
    zarr_store_close(s);
}

/* Every error of the vlen calls: outputs untouched, nothing written. */
static void test_errors(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "t", "{\"shape\": [4], \"chunks\": [2], \"dtype\": \"|O\", \"filters\": [{\"id\": \"vlen-utf8\"}]}");
    zarr_array *fixed = create_array(s, "f", "{\"shape\": [4], \"chunks\": [2], \"dtype\": \"<i4\"}");
    uint64_t start[1] = {0}, count[1] = {2}, far[1] = {3};
    int64_t offsets[3] = {0, 2, 4}, out_offsets[3] = {-1, -1, -1};
    char data[8] = "abcd", out[8];
    size_t bytes = 12345;
    const char bad_utf8[4] = {'a', (char)0xff, 'b', 'c'};
    CHECK_STATUS(zarr_array_write_vlen(a, 1, start, count, offsets, 3, bad_utf8, 4), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "UTF-8");
    int64_t decreasing[3] = {0, 3, 1}, past_end[3] = {0, 2, 9};
    CHECK_STATUS(zarr_array_write_vlen(a, 1, start, count, decreasing, 3, data, 4), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_write_vlen(a, 1, start, count, past_end, 3, data, 4), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_write_vlen(a, 1, start, count, offsets, 2, data, 4), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_write_vlen(a, 1, far, count, offsets, 3, data, 4), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_STATUS(zarr_array_write_vlen(a, 2, start, count, offsets, 3, data, 4), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_write_vlen(a, 1, start, count, NULL, 3, data, 4), ZARR_ERR_NULL_POINTER);
    CHECK_OK(zarr_array_write_vlen(a, 1, start, count, offsets, 3, data, 4));
    /* Too small a data buffer: BUFFER_SIZE, offsets untouched. */
    CHECK_STATUS(zarr_array_read_vlen(a, 1, start, count, out_offsets, 3, out, 3), ZARR_ERR_BUFFER_SIZE);
    CHECK(out_offsets[0] == -1 && out_offsets[2] == -1);
    CHECK_STATUS(zarr_array_read_vlen(a, 1, start, count, out_offsets, 2, out, 8), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_vlen_size(a, 1, start, count, NULL), ZARR_ERR_NULL_POINTER);
    /* Fixed-size calls refuse object arrays and vlen calls refuse fixed-size arrays. */
    CHECK_STATUS(zarr_array_read(a, 1, start, count, out, 8), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_vlen_size(fixed, 1, start, count, &bytes), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(bytes == 12345);
    char *codec = NULL;
    if (CHECK_OK(zarr_array_object_codec(fixed, &codec))) CHECK_STR_EQ(codec, "null");
    zarr_string_free(codec);
    /* An object array needs an object codec; object codecs need object arrays. */
    zarr_array *bad = NULL;
    CHECK_STATUS(zarr_array_create(s, "x", "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"|O\"}", &bad), ZARR_ERR_INVALID_METADATA);
    CHECK_STATUS(zarr_array_create(s, "y", "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<i4\", \"filters\": [{\"id\": \"vlen-utf8\"}]}", &bad),
                 ZARR_ERR_INVALID_METADATA);
    CHECK_STATUS(zarr_array_create(s, "z", "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<i4\", \"filters\": [{\"id\": \"pickle\"}]}", &bad),
                 ZARR_ERR_INVALID_METADATA);
    CHECK_STATUS(zarr_array_create(s, "z", "{\"shape\": [2], \"chunks\": [2], \"dtype\": [[\"o\", \"|O\"]]}", &bad),
                 ZARR_ERR_INVALID_METADATA);
    CHECK_CONTAINS(zarr_last_error(), "pickle");
    CHECK(bad == NULL);
    /* Records with object fields (numcodecs' Pickle, as zarr-python 2 stores them): each
     * record passes as a JSON object of its fields. */
    zarr_array *rec = NULL;
    if (CHECK_OK(zarr_array_create(s, "rec", "{\"shape\": [2], \"chunks\": [2], \"dtype\": [[\"x\", \"<f8\"], [\"o\", \"|O\"]], \"filters\": [{\"id\": \"pickle\"}]}", &rec))) {
        const char *two = "{\"x\":1.5,\"o\":[\"a\",null]}{\"x\":\"NaN\",\"o\":{\"k\":2}}";
        int64_t offsets[3] = {0, 24, 47}, got_offsets[3];
        char got[64];
        uint64_t rstart[1] = {0}, rcount[1] = {2};
        CHECK_OK(zarr_array_write_vlen(rec, 1, rstart, rcount, offsets, 3, two, strlen(two)));
        CHECK_OK(zarr_array_read_vlen(rec, 1, rstart, rcount, got_offsets, 3, got, 47));
        CHECK(got_offsets[2] == 47 && memcmp(got, two, 47) == 0);
        CHECK_STATUS(zarr_array_read(rec, 1, rstart, rcount, got, 32), ZARR_ERR_INVALID_ARGUMENT);
        const char *unknown = "{\"x\":1.5,\"oo\":0,\"o\":1}";
        int64_t one_offsets[2] = {0, (int64_t)strlen(unknown)};
        uint64_t one[1] = {1};
        CHECK_STATUS(zarr_array_write_vlen(rec, 1, rstart, one, one_offsets, 2, unknown, strlen(unknown)),
                     ZARR_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(zarr_last_error(), "no field \"oo\"");
        zarr_array_close(rec);
    }
    zarr_array_close(a);
    zarr_array_close(fixed);
    zarr_store_close(s);
}

/* A corrupt object chunk is CORRUPT_CHUNK naming the key. */
static void test_corrupt(const char *dir) {
    zarr_store *s = open_store(strf("%s/corrupt", dir), ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "c", "{\"shape\": [3], \"chunks\": [3], \"dtype\": \"|O\", \"filters\": [{\"id\": \"vlen-utf8\"}]}");
    CHECK(file_write(strf("%s/corrupt/c/0", dir), "\x03\x00\x00\x00\xff\xff\xff\x7f", 8));
    uint64_t start[1] = {0}, count[1] = {3};
    size_t bytes = 0;
    CHECK_STATUS(zarr_array_vlen_size(a, 1, start, count, &bytes), ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "c/0");
    zarr_array_close(a);
    zarr_store_close(s);
}

int main(void) {
    char *dir = tmpdir_make();
    if (!dir) return 1;
    test_text(dir);
    test_arrays_and_bytes();
    test_json_items();
    test_errors();
    test_corrupt(dir);
    tmpdir_remove(dir);
    return check_summary("test_objects");
}
