/* test_errors.c - error paths: read/write argument errors (ndim, bounds, overflow, buffer
 * size), malformed create JSON, corrupt or lying chunks for every codec, and corrupt
 * metadata documents. Every failure must leave outputs untouched and never crash. */
#include "testutil.h"

static const char *A2D = "{\"shape\":[10,12],\"chunks\":[4,5],\"dtype\":\"<i4\",\"fill_value\":1}";

static void test_selection_errors(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "a", A2D);
    zarr_array *huge = create_array(s, "huge", "{\"shape\":[1099511627776,1099511627776],"
                                               "\"chunks\":[1000,1000],\"dtype\":\"<f8\"}");
    static const struct { uint64_t start[2], count[2]; zarr_status want1, want2; } cases[] = {
        {{0, 0}, {11, 1}, ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OUT_OF_BOUNDS},
        {{0, 0}, {1, 13}, ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OUT_OF_BOUNDS},
        {{9, 11}, {2, 1}, ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OUT_OF_BOUNDS},
        {{10, 0}, {1, 1}, ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OUT_OF_BOUNDS},
        {{0, 12}, {1, 1}, ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OUT_OF_BOUNDS},
        {{UINT64_MAX, 0}, {1, 1}, ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OVERFLOW},
        {{0, 0}, {UINT64_MAX, 2}, ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OVERFLOW},
        {{5, 0}, {UINT64_MAX, 2}, ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OVERFLOW}, /* start+count wraps */
        {{2, 0}, {UINT64_MAX - 1, 1}, ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OVERFLOW},
    };
    int32_t buf[16 * 16], guard[16 * 16];
    uint64_t start[3] = {0, 0, 0}, count[3] = {2, 2, 1};
    if (!a || !huge) goto out;
    memset(guard, 0x77, sizeof guard);
    memcpy(buf, guard, sizeof buf);

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        CHECK_CTX("start {%llu,%llu} count {%llu,%llu}", (unsigned long long)cases[i].start[0],
                  (unsigned long long)cases[i].start[1], (unsigned long long)cases[i].count[0],
                  (unsigned long long)cases[i].count[1]);
        CHECK_STATUS2(zarr_array_read(a, 2, cases[i].start, cases[i].count, buf, 4), cases[i].want1, cases[i].want2);
        CHECK_STATUS2(zarr_array_write(a, 2, cases[i].start, cases[i].count, buf, 4), cases[i].want1, cases[i].want2);
    }
    CHECK_CTX_CLEAR();
    /* Wrong ndim. */
    CHECK_STATUS(zarr_array_read(a, 1, start, count, buf, 8), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_read(a, 3, start, count, buf, 16), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_write(a, 1, start, count, buf, 8), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_write(a, 3, start, count, buf, 16), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_read(a, 0, start, count, buf, 4), ZARR_ERR_INVALID_ARGUMENT);
    /* Buffer size must be exactly product(count) * itemsize. */
    CHECK_STATUS(zarr_array_read(a, 2, start, count, buf, 15), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_read(a, 2, start, count, buf, 17), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_read(a, 2, start, count, buf, 12), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_read(a, 2, start, count, buf, 0), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_write(a, 2, start, count, buf, 20), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_write(a, 2, start, count, buf, 1), ZARR_ERR_BUFFER_SIZE);
    CHECK(memcmp(buf, guard, sizeof buf) == 0); /* no failed read touched the buffer */
    /* In-bounds selections whose byte size overflows 64 bits. */
    count[0] = count[1] = 1ull << 40; /* 2^80 elements */
    CHECK_STATUS(zarr_array_read(huge, 2, start, count, buf, 8), ZARR_ERR_OVERFLOW);
    CHECK_STATUS(zarr_array_write(huge, 2, start, count, buf, 8), ZARR_ERR_OVERFLOW);
    count[0] = 1ull << 31, count[1] = 1ull << 30; /* 2^61 elements * 8 bytes = 2^64 */
    CHECK_STATUS(zarr_array_read(huge, 2, start, count, buf, 8), ZARR_ERR_OVERFLOW);
    CHECK(memcmp(buf, guard, sizeof buf) == 0);
    /* The array is unchanged: all fill. */
    count[0] = 10, count[1] = 12;
    if (CHECK_OK(zarr_array_read(a, 2, start, count, buf, 10 * 12 * 4)))
        for (int i = 0; i < 120; i++)
            if (!CHECK(buf[i] == 1)) break;
    CHECK_OK(zarr_array_close(huge));
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
}

/* Malformed or unsupported create documents: refused, nothing created, output untouched. */
static void test_bad_create_json(void) {
    static const struct { const char *json; zarr_status want1, want2; } cases[] = {
        {"not json", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_ARGUMENT},
        {"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_ARGUMENT},
        {"[1,2]", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_ARGUMENT},
        {"{\"chunks\":[2],\"dtype\":\"<i4\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":\"2\",\"dtype\":\"<i4\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2]}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4,4],\"chunks\":[2,0],\"dtype\":\"<i4\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4,4],\"chunks\":[2.5,2],\"dtype\":\"<i4\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2,2],\"dtype\":\"<i4\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[-4],\"chunks\":[2],\"dtype\":\"<i4\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4.5],\"chunks\":[2],\"dtype\":\"<i4\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":\"4\",\"chunks\":[2],\"dtype\":\"<i4\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<x4\"}", ZARR_ERR_UNSUPPORTED, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"|O\"}", ZARR_ERR_UNSUPPORTED, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i3\"}", ZARR_ERR_UNSUPPORTED, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":42}", ZARR_ERR_UNSUPPORTED, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"order\":\"Z\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"dimension_separator\":\"-\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"zarr_format\":3}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_UNSUPPORTED},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_value\":\"abc\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_value\":[1]}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"|u1\",\"fill_value\":256}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"compressor\":{\"id\":\"nonexistent\"}}", ZARR_ERR_UNSUPPORTED, ZARR_ERR_UNSUPPORTED},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"filters\":[{\"id\":\"nonexistent\"}]}", ZARR_ERR_UNSUPPORTED, ZARR_ERR_UNSUPPORTED},
        {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"filters\":\"x\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        /* a chunk of 2^64 elements: its byte size cannot be computed */
        {"{\"shape\":[10,10],\"chunks\":[4294967296,4294967296],\"dtype\":\"<f8\"}", ZARR_ERR_OVERFLOW, ZARR_ERR_INVALID_METADATA},
    };
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    long files = count_files(dir);
    for (size_t i = 0; i < ARRAY_LEN(cases) && s; i++) {
        zarr_array *a = (zarr_array *)&files;
        CHECK_CTX("create %s", cases[i].json);
        CHECK_STATUS2(zarr_array_create(s, "bad", cases[i].json, &a), cases[i].want1, cases[i].want2);
        CHECK(a == (zarr_array *)&files);
        CHECK(zarr_last_error()[0] != '\0');
    }
    CHECK_CTX_CLEAR();
    CHECK_U64_EQ(count_files(dir), files); /* nothing was written */
    CHECK(!dir_exists(strf("%s/bad", dir)));
    /* Messages name the offending field. */
    {
        zarr_array *a = NULL;
        zarr_array_create(s, "bad", "{\"shape\":[4],\"chunks\":[0],\"dtype\":\"<i4\"}", &a);
        CHECK_CONTAINS(zarr_last_error(), "chunks");
        zarr_array_create(s, "bad", "{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<q9\"}", &a);
        CHECK_CONTAINS(zarr_last_error(), "<q9");
    }
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* A chunk of 2^61 bytes can never be allocated: writing into it is refused, not a crash.
 * Reading a missing chunk needs no allocation of the chunk, only of the caller's box. */
static void test_huge_chunk(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "big", "{\"shape\":[10],\"chunks\":[288230376151711744],"
                                           "\"dtype\":\"<f8\",\"fill_value\":2.5}");
    double v[10] = {0}, one = 1;
    uint64_t start = 0, ten = 10, n1 = 1;
    if (a) {
        if (CHECK_OK(zarr_array_read(a, 1, &start, &ten, v, sizeof v))) CHECK(v[0] == 2.5 && v[9] == 2.5);
        CHECK_STATUS2(zarr_array_write(a, 1, &start, &n1, &one, sizeof one), ZARR_ERR_TOO_LARGE, ZARR_ERR_OVERFLOW);
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_OK(zarr_store_close(s));
}

/* ---- corrupt chunks --------------------------------------------------------------------- */

static const char *const CODECS[] = {
    "null",
    "{\"id\":\"zlib\",\"level\":1}",
    "{\"id\":\"gzip\",\"level\":1}",
    "{\"id\":\"zstd\",\"level\":1}",
    "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}",
    "{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":5,\"shuffle\":2,\"blocksize\":0}",
    "{\"id\":\"lz4\",\"acceleration\":1}",
    "{\"id\":\"bz2\",\"level\":1}",
    "{\"id\":\"lzma\",\"format\":1,\"check\":-1,\"preset\":null,\"filters\":null}",
};

enum { R = 12, C = 15, CR = 4, CC = 5 }; /* 3x3 chunks of 4x5 int32 */

/* A directory store holding array "arr" fully written with i*C+j+1. */
static zarr_array *make_filled(const char *dir, const char *codec, zarr_store **s_out) {
    int32_t data[R * C];
    uint64_t start[2] = {0, 0}, count[2] = {R, C};
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "arr", strf("{\"shape\":[%d,%d],\"chunks\":[%d,%d],\"dtype\":\"<i4\","
                                                    "\"compressor\":%s}", R, C, CR, CC, codec)) : NULL;
    for (int i = 0; i < R * C; i++) data[i] = i + 1;
    if (a) CHECK_OK(zarr_array_write(a, 2, start, count, data, sizeof data));
    *s_out = s;
    return a;
}

/* Reading or partially writing chunk 1.2 fails with CORRUPT_CHUNK naming the key, and
 * the other chunks still read fine. (The read buffer's contents after a decode failure are
 * not checked: chunks are decoded into it in parallel, so other chunks may have landed.) */
static void expect_corrupt(zarr_array *a) {
    int32_t buf[R * C], one = 5;
    uint64_t start[2] = {0, 0}, all[2] = {R, C}, box[2] = {CR, CC};
    uint64_t cstart[2] = {CR, 2 * CC}, cone[2] = {1, 1}, ok_start[2] = {0, 0};
    CHECK_STATUS(zarr_array_read(a, 2, start, all, buf, sizeof buf), ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "1.2");
    CHECK_STATUS(zarr_array_read(a, 2, cstart, cone, buf, 4), ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "1.2");
    CHECK_STATUS(zarr_array_write(a, 2, cstart, cone, &one, 4), ZARR_ERR_CORRUPT_CHUNK);
    if (CHECK_OK(zarr_array_read(a, 2, ok_start, box, buf, CR * CC * 4)))
        CHECK(buf[0] == 1 && buf[CR * CC - 1] == (CR - 1) * C + CC);
}

static void corrupt_with(const char *codec, const char *what, const void *bytes, size_t len) {
    char *dir = tmpdir_make();
    zarr_store *s = NULL;
    zarr_array *a = make_filled(dir, codec, &s);
    const char *key = strf("%s/arr/1.2", dir);
    CHECK_CTX("codec %s, chunk %s", codec, what);
    if (a && CHECK(file_exists(key)) && CHECK(file_write(key, bytes, len))) {
        expect_corrupt(a);
        /* The same through a fresh READ store. */
        zarr_store *r = open_store(dir, ZARR_MODE_READ);
        zarr_array *b = r ? open_array(r, "arr") : NULL;
        int32_t v;
        uint64_t cstart[2] = {CR + 1, 2 * CC + 1}, cone[2] = {1, 1};
        if (b) CHECK_STATUS(zarr_array_read(b, 2, cstart, cone, &v, 4), ZARR_ERR_CORRUPT_CHUNK);
        zarr_array_close(b);
        zarr_store_close(r);
    }
    zarr_array_close(a);
    zarr_store_close(s);
    tmpdir_remove(dir);
}

/* The valid stored bytes of chunk 1.2 for a codec (malloc'd). */
static unsigned char *valid_chunk(const char *codec, size_t *len) {
    char *dir = tmpdir_make();
    zarr_store *s = NULL;
    zarr_array *a = make_filled(dir, codec, &s);
    unsigned char *b = file_read(strf("%s/arr/1.2", dir), len);
    zarr_array_close(a);
    zarr_store_close(s);
    tmpdir_remove(dir);
    return b;
}

static void test_corrupt_chunks(void) {
    unsigned char garbage[200];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (unsigned char)(i * 37 + 11);
    for (size_t k = 0; k < ARRAY_LEN(CODECS); k++) {
        size_t len = 0;
        unsigned char *valid = valid_chunk(CODECS[k], &len);
        if (!CHECK(valid != NULL && len > 8)) continue;
        corrupt_with(CODECS[k], "garbage", garbage, sizeof garbage);
        corrupt_with(CODECS[k], "empty", "", 0);
        corrupt_with(CODECS[k], "truncated to half", valid, len / 2);
        corrupt_with(CODECS[k], "last byte missing", valid, len - 1);
        {
            unsigned char *longer = malloc(len + 16);
            memcpy(longer, valid, len);
            memset(longer + len, 0, 16);
            if (strcmp(CODECS[k], "null") == 0) /* raw chunks of the wrong size */
                corrupt_with(CODECS[k], "too long", longer, len + 16);
            free(longer);
        }
        free(valid);
    }
    CHECK_CTX_CLEAR();
}

static void put_le32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Headers that claim a huge decoded size are refused before allocating it. */
static void test_lying_headers(void) {
    unsigned char blosc[64] = {2, 1, 0x21, 4}, lz4[64] = {0};
    memset(blosc + 16, 0xAA, sizeof blosc - 16);
    put_le32(blosc + 4, 0x7FFFFFF0u); /* nbytes */
    put_le32(blosc + 8, 0x10000u);    /* blocksize */
    put_le32(blosc + 12, sizeof blosc);
    corrupt_with(CODECS[4], "blosc header claims 2 GiB", blosc, sizeof blosc);
    put_le32(blosc + 4, 4 * CR * CC + 4); /* a little too big */
    corrupt_with(CODECS[4], "blosc header claims a bit too much", blosc, sizeof blosc);
    put_le32(blosc + 4, 4 * CR * CC);     /* right size, cbytes lies */
    put_le32(blosc + 12, 0xFFFFFFF0u);
    corrupt_with(CODECS[4], "blosc cbytes larger than the file", blosc, sizeof blosc);
    put_le32(lz4, 0xFFFFFFF0u);
    memset(lz4 + 4, 0x1F, sizeof lz4 - 4);
    corrupt_with(CODECS[6], "lz4 header claims 4 GiB", lz4, sizeof lz4);
    CHECK_CTX_CLEAR();
}

/* Broken metadata documents: INVALID_METADATA naming the document. */
static void test_corrupt_metadata(void) {
    static const char *const zarrays[] = {
        "{not json", "[]", "{\"zarr_format\":2}",
        "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"compressor\":null,"
        "\"fill_value\":0,\"order\":\"C\",\"filters\":null,\"extra\":{",
        "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[0],\"dtype\":\"<i4\",\"compressor\":null,"
        "\"fill_value\":0,\"order\":\"C\",\"filters\":null}",
    };
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "arr", A2D) : NULL, *oa = (zarr_array *)&s;
    zarr_group *g = NULL, *og = (zarr_group *)&s;
    char *out = (char *)&s;
    if (!a) goto out;
    CHECK_OK(zarr_group_open(s, "", &g));
    for (size_t i = 0; i < ARRAY_LEN(zarrays); i++) {
        CHECK_CTX(".zarray %s", zarrays[i]);
        CHECK(mkdir(strf("%s/bad%zu", dir, i), 0755) == 0);
        CHECK(file_write(strf("%s/bad%zu/.zarray", dir, i), zarrays[i], strlen(zarrays[i])));
        CHECK_STATUS(zarr_array_open(s, strf("bad%zu", i), &oa), ZARR_ERR_INVALID_METADATA);
        CHECK_CONTAINS(zarr_last_error(), strf("bad%zu", i));
    }
    CHECK_CTX_CLEAR();
    CHECK(oa == (zarr_array *)&s);
    /* .zgroup and .zattrs. */
    CHECK(mkdir(strf("%s/badgroup", dir), 0755) == 0);
    CHECK(file_write(strf("%s/badgroup/.zgroup", dir), "{\"zarr_format\":", 15));
    CHECK_STATUS(zarr_group_open(s, "badgroup", &og), ZARR_ERR_INVALID_METADATA);
    CHECK(og == (zarr_group *)&s);
    CHECK(file_write(strf("%s/arr/.zattrs", dir), "{broken", 7));
    CHECK_STATUS(zarr_array_attrs_get(a, &out), ZARR_ERR_INVALID_METADATA);
    CHECK_CONTAINS(zarr_last_error(), ".zattrs");
    CHECK(file_write(strf("%s/.zattrs", dir), "[1,2,3]", 7)); /* valid JSON, not an object */
    CHECK_STATUS(zarr_group_attrs_get(g, &out), ZARR_ERR_INVALID_METADATA);
    CHECK(out == (char *)&s);
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

int main(void) {
    test_selection_errors();
    test_bad_create_json();
    test_huge_chunk();
    test_corrupt_chunks();
    test_lying_headers();
    test_corrupt_metadata();
    return check_summary("test_errors");
}
