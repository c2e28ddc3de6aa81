/* test_codecs.c - every compressor of the contract (zlib, gzip, zstd, blosc with each
 * cname and shuffle, snappy where built, lz4, bz2, lzma .xz and raw): round trips,
 * compressor_json, reopen from disk, and the stored chunk bytes in the codec's real format
 * (magic numbers, blosc header fields); compressors in the filter list; codecs registered by
 * the program (zarr_codec_register) under their v2 ids and v3 names, their failures, and
 * unregistering. */
#include "testutil.h"

enum { ROWS = 70, COLS = 50, CHUNK = 32 }; /* 3x2 chunks, the edge ones partial */

enum magic { M_NONE, M_ZLIB, M_GZIP, M_ZSTD, M_BZ2, M_XZ, M_LZMA_RAW, M_LZ4, M_BLOSC };

struct codec_case {
    const char *json, *dtype;
    enum magic magic;
    const char *expect[3]; /* fragments compressor_json must contain */
    int blosc_code, blosc_shuffle; /* blosc: compressor code in the header flags, shuffle */
};

#define BLOSC(cname, shuffle) \
    "{\"id\":\"blosc\",\"cname\":\"" cname "\",\"clevel\":5,\"shuffle\":" #shuffle ",\"blocksize\":0}"

static const struct codec_case CASES[] = {
    {"null", "<i4", M_NONE, {NULL}, 0, 0},
    {"{\"id\":\"zlib\",\"level\":1}", "<i4", M_ZLIB, {"\"id\":\"zlib\"", "\"level\":1"}, 0, 0},
    {"{\"id\":\"zlib\",\"level\":9}", "<f8", M_ZLIB, {"\"id\":\"zlib\"", "\"level\":9"}, 0, 0},
    {"{\"id\":\"gzip\",\"level\":5}", "<i4", M_GZIP, {"\"id\":\"gzip\"", "\"level\":5"}, 0, 0},
    {"{\"id\":\"zstd\",\"level\":1}", "<i4", M_ZSTD, {"\"id\":\"zstd\"", "\"level\":1"}, 0, 0},
    {"{\"id\":\"zstd\",\"level\":19}", ">f8", M_ZSTD, {"\"id\":\"zstd\"", "\"level\":19"}, 0, 0},
    {"{\"id\":\"lz4\",\"acceleration\":1}", "<i4", M_LZ4, {"\"id\":\"lz4\""}, 0, 0},
    {"{\"id\":\"bz2\",\"level\":1}", "<i4", M_BZ2, {"\"id\":\"bz2\"", "\"level\":1"}, 0, 0},
    {"{\"id\":\"lzma\",\"format\":1,\"check\":-1,\"preset\":null,\"filters\":null}", "<i4", M_XZ,
     {"\"id\":\"lzma\"", "\"format\":1"}, 0, 0},
    /* A raw LZMA stream: no header, its filter chain (delta, LZMA2) is in the metadata only. */
    {"{\"id\":\"lzma\",\"format\":3,\"check\":-1,\"preset\":null,\"filters\":[{\"id\":3,\"dist\":4},"
     "{\"id\":33,\"preset\":1,\"lc\":0,\"lp\":2}]}", "<i4", M_LZMA_RAW, {"\"format\":3", "\"dist\":4"}, 0, 0},
    {BLOSC("lz4", 1), "<i4", M_BLOSC, {"\"cname\":\"lz4\"", "\"shuffle\":1", "\"clevel\":5"}, 1, 1},
    {BLOSC("lz4", 0), "<i4", M_BLOSC, {"\"cname\":\"lz4\"", "\"shuffle\":0"}, 1, 0},
    {BLOSC("lz4", 2), "<f8", M_BLOSC, {"\"cname\":\"lz4\"", "\"shuffle\":2"}, 1, 2},
    {BLOSC("zstd", 1), "<i4", M_BLOSC, {"\"cname\":\"zstd\""}, 4, 1},
    {BLOSC("zstd", 2), ">i8", M_BLOSC, {"\"cname\":\"zstd\"", "\"shuffle\":2"}, 4, 2},
    {BLOSC("blosclz", 0), "<i4", M_BLOSC, {"\"cname\":\"blosclz\""}, 0, 0},
    {BLOSC("blosclz", 1), "<f4", M_BLOSC, {"\"cname\":\"blosclz\""}, 0, 1},
    {BLOSC("lz4hc", 2), "<i4", M_BLOSC, {"\"cname\":\"lz4hc\""}, 1, 2},
    {BLOSC("zlib", 1), "<u2", M_BLOSC, {"\"cname\":\"zlib\""}, 3, 1},
    {BLOSC("zlib", 0), "|u1", M_BLOSC, {"\"cname\":\"zlib\""}, 3, 0},
};

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The stored chunk is in the codec's own format, and smaller than the raw chunk. */
static void check_chunk_file(const struct codec_case *c, const char *path, size_t itemsize) {
    size_t len = 0, raw_len = (size_t)CHUNK * CHUNK * itemsize;
    unsigned char *b = file_read(path, &len);
    if (!CHECK(b != NULL) || !CHECK(len >= 6)) goto out;
    if (c->magic == M_NONE) CHECK_U64_EQ(len, raw_len);
    else CHECK(len < raw_len);
    switch (c->magic) {
    case M_NONE: break;
    case M_ZLIB: CHECK(b[0] == 0x78 && ((b[0] << 8) | b[1]) % 31 == 0); break;
    case M_GZIP: CHECK(b[0] == 0x1f && b[1] == 0x8b); break;
    case M_ZSTD: CHECK(memcmp(b, "\x28\xb5\x2f\xfd", 4) == 0); break;
    case M_BZ2: CHECK(memcmp(b, "BZh", 3) == 0); break;
    case M_XZ: CHECK(memcmp(b, "\xfd" "7zXZ", 6) == 0); break;
    case M_LZMA_RAW: CHECK(memcmp(b, "\xfd" "7zXZ", 6) != 0 && b[0] != 0x5d); break; /* neither .xz nor .lzma */
    case M_LZ4: CHECK_U64_EQ(le32(b), raw_len); break; /* numcodecs: LE uncompressed size first */
    case M_BLOSC:
        if (!CHECK(len >= 16)) break;
        CHECK_U64_EQ(b[0], 2);                  /* format version */
        CHECK_U64_EQ(b[3], itemsize);           /* typesize defaults to the item size */
        CHECK_U64_EQ(le32(b + 4), raw_len);     /* nbytes */
        CHECK_U64_EQ(le32(b + 12), len);        /* cbytes */
        CHECK_U64_EQ(b[2] >> 5, c->blosc_code); /* compressor code in the flags */
        if (itemsize > 1) { /* blosc only records shuffles that it actually applied */
            CHECK_U64_EQ(b[2] & 0x1, c->blosc_shuffle == 1);
            CHECK_U64_EQ((b[2] >> 2) & 0x1, c->blosc_shuffle == 2);
        }
        break;
    }
out:
    free(b);
}

/* Compressible values: blocks of equal numbers. */
static void make_data(zarr_dtype_kind kind, size_t itemsize, unsigned char *buf) {
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            scalar_to_elem(kind, itemsize, (double)((i / 3) * 7 + j / 5), buf + ((size_t)i * COLS + j) * itemsize);
}

static int read_and_compare(zarr_array *a, zarr_dtype_kind kind, size_t itemsize, const unsigned char *want) {
    size_t bytes = (size_t)ROWS * COLS * itemsize;
    unsigned char *got = malloc(bytes);
    uint64_t start[2] = {0, 0}, count[2] = {ROWS, COLS};
    int ok = CHECK_OK(zarr_array_read(a, 2, start, count, got, bytes)) &&
             CHECK_ELEMS(kind, itemsize, got, want, (size_t)ROWS * COLS);
    free(got);
    return ok;
}

static void check_compressor_json(zarr_array *a, const struct codec_case *c) {
    char *cj = NULL;
    if (CHECK_OK(zarr_array_compressor_json(a, &cj))) {
        if (c->magic == M_NONE) CHECK_JSON_EQ(cj, "null");
        for (int k = 0; k < 3 && c->expect[k]; k++) CHECK_JSON_HAS(cj, c->expect[k]);
    }
    zarr_string_free(cj);
}

static void run_codec(const struct codec_case *c, const char *dir) {
    const char *json = strf("{\"shape\":[%d,%d],\"chunks\":[%d,%d],\"dtype\":\"%s\",\"compressor\":%s}",
                            ROWS, COLS, CHUNK, CHUNK, c->dtype, c->json);
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "arr", json) : NULL;
    zarr_dtype_kind kind;
    size_t itemsize = 0;
    unsigned char *data = NULL;
    uint64_t start[2] = {0, 0}, count[2] = {ROWS, COLS}, sub_start[2] = {30, 20}, sub_count[2] = {5, 30};
    if (!a || !CHECK_OK(zarr_array_dtype(a, &kind, &itemsize))) goto out;

    check_compressor_json(a, c);
    data = malloc((size_t)ROWS * COLS * itemsize);
    make_data(kind, itemsize, data);
    CHECK_OK(zarr_array_write(a, 2, start, count, data, (size_t)ROWS * COLS * itemsize));
    read_and_compare(a, kind, itemsize, data);
    { /* a box across four chunks */
        size_t n = 5 * 30;
        unsigned char *got = malloc(n * itemsize), *want = malloc(n * itemsize);
        box_copy(2, count, sub_start, sub_count, itemsize, data, want, 1);
        if (CHECK_OK(zarr_array_read(a, 2, sub_start, sub_count, got, n * itemsize)))
            CHECK_ELEMS(kind, itemsize, got, want, n);
        free(got);
        free(want);
    }
    check_chunk_file(c, strf("%s/arr/0.0", dir), itemsize);
    check_chunk_file(c, strf("%s/arr/2.1", dir), itemsize); /* edge chunk: stored full size */
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));

    s = open_store(dir, ZARR_MODE_READ);
    a = s ? open_array(s, "arr") : NULL;
    if (a) {
        read_and_compare(a, kind, itemsize, data);
        check_compressor_json(a, c); /* the configuration survives the round trip */
        CHECK_OK(zarr_array_close(a));
    }
out:
    free(data);
    CHECK_OK(zarr_store_close(s));
}

static void test_codecs(void) {
    for (size_t i = 0; i < ARRAY_LEN(CASES); i++) {
        char *dir = tmpdir_make();
        CHECK_CTX("compressor %s dtype %s", CASES[i].json, CASES[i].dtype);
        run_codec(&CASES[i], dir);
        tmpdir_remove(dir);
    }
    CHECK_CTX_CLEAR();
}

/* Blosc's snappy: a round trip with the compressor code 2 in the frames where this build has it
 * (the default), ZARR_ERR_UNSUPPORTED saying so where it does not. */
static void test_blosc_snappy(void) {
    static const struct codec_case snappy = {BLOSC("snappy", 1), "<i4", M_BLOSC, {"\"cname\":\"snappy\""}, 2, 1};
    bool has = false;
    if (!CHECK_OK(zarr_has_feature("blosc_compressor:snappy", &has))) return;
    if (has) {
        char *dir = tmpdir_make();
        CHECK_CTX("blosc snappy");
        run_codec(&snappy, dir);
        CHECK_CTX_CLEAR();
        tmpdir_remove(dir);
    } else {
        zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
        zarr_array *a = NULL;
        CHECK_STATUS(zarr_array_create(s, "x", strf("{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\","
                                       "\"compressor\":%s}", snappy.json), &a), ZARR_ERR_UNSUPPORTED);
        CHECK_CONTAINS(zarr_last_error(), "snappy");
        CHECK_OK(zarr_store_close(s));
    }
}

/* Compressors in the filter list (the spec's filters are any codec configurations): they run
 * where they are listed, before the compressor, and are written back with their defaults. */
static void test_compressor_filters(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = NULL;
    char *filters = NULL;
    int32_t data[ROWS * COLS], got[ROWS * COLS];
    uint64_t start[2] = {0, 0}, count[2] = {ROWS, COLS};
    size_t len = 0;
    unsigned char *chunk = NULL;
    for (int i = 0; i < ROWS * COLS; i++) data[i] = (i / 7) * 3 - 100;
    if (!s) goto out;
    a = create_array(s, "f", strf("{\"shape\":[%d,%d],\"chunks\":[%d,%d],\"dtype\":\"<i4\",\"compressor\":%s,"
                                  "\"filters\":[{\"id\":\"delta\",\"dtype\":\"<i4\"},{\"id\":\"zlib\"},{\"id\":\"crc32\"}]}",
                                  ROWS, COLS, CHUNK, CHUNK, BLOSC("lz4", 1)));
    if (!a) goto out;
    if (CHECK_OK(zarr_array_filters_json(a, &filters))) {
        CHECK_JSON_HAS(filters, "{\"id\":\"zlib\",\"level\":1}"); /* zlib's default, filled in */
        CHECK_JSON_HAS(filters, "\"crc32\"");
    }
    CHECK_OK(zarr_array_write(a, 2, start, count, data, sizeof data));
    if (CHECK_OK(zarr_array_read(a, 2, start, count, got, sizeof got))) CHECK(memcmp(got, data, sizeof data) == 0);
    CHECK_OK(zarr_array_close(a));
    /* The stored chunk is a blosc frame of bytes (typesize 1: zlib and crc32 hand on bytes). */
    chunk = file_read(strf("%s/f/0.0", dir), &len);
    if (CHECK(chunk != NULL && len >= 16)) {
        CHECK_U64_EQ(chunk[0], 2);
        CHECK_U64_EQ(chunk[3], 1);
    }
    a = open_array(s, "f");
    if (a && CHECK_OK(zarr_array_read(a, 2, start, count, got, sizeof got))) CHECK(memcmp(got, data, sizeof data) == 0);
    CHECK_OK(zarr_array_close(a));
    /* A compressor filter with a bad setting names its place in the list. */
    a = NULL;
    CHECK_STATUS(zarr_array_create(s, "bad", "{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\","
                                   "\"filters\":[{\"id\":\"zlib\",\"level\":12}]}", &a), ZARR_ERR_INVALID_METADATA);
    CHECK_CONTAINS(zarr_last_error(), "filters[0]");
out:
    free(chunk);
    zarr_string_free(filters);
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* Bad compressor configurations are refused at create time, and nothing is created. */
static void test_bad_configs(void) {
    static const struct { const char *json; zarr_status want1, want2; } bad[] = {
        {"{\"id\":\"no-such-codec\"}", ZARR_ERR_UNSUPPORTED, ZARR_ERR_UNSUPPORTED},
        {"{\"level\":1}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA}, /* no id */
        {"{\"id\":42}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"zlib\"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[1,2]", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {BLOSC("no-such-cname", 1), ZARR_ERR_INVALID_METADATA, ZARR_ERR_UNSUPPORTED},
        {BLOSC("lz4", 7), ZARR_ERR_INVALID_METADATA, ZARR_ERR_UNSUPPORTED},
        {"{\"id\":\"zlib\",\"level\":\"high\"}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        /* A raw LZMA stream cannot be decoded without its filter chain. */
        {"{\"id\":\"lzma\",\"format\":3}", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"id\":\"lzma\",\"format\":3,\"filters\":[{\"id\":3,\"dist\":300}]}", ZARR_ERR_INVALID_METADATA,
         ZARR_ERR_INVALID_METADATA},
    };
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        zarr_array *a = NULL;
        CHECK_CTX("compressor %s", bad[i].json);
        CHECK_STATUS2(zarr_array_create(s, "x", strf("{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\","
                                        "\"compressor\":%s}", bad[i].json), &a), bad[i].want1, bad[i].want2);
        CHECK(a == NULL);
        CHECK_STATUS(zarr_array_open(s, "x", &a), ZARR_ERR_NOT_FOUND);
    }
    CHECK_CTX_CLEAR();
    /* The message names the unknown codec id. */
    {
        zarr_array *a = NULL;
        zarr_array_create(s, "x", "{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"compressor\":{\"id\":\"frobnicate\"}}", &a);
        CHECK_CONTAINS(zarr_last_error(), "frobnicate");
    }
    CHECK_OK(zarr_store_close(s));
}

/* ---- codecs of the program's own ---------------------------------------------------------- */

/* "xor_demo": the bytes XOR the configuration's "key", after the magic "XOR1". */
static int xor_key(const char *config) {
    const char *at = strstr(config, "\"key\":");
    return at ? atoi(at + 6) : 0;
}

static zarr_status xor_encode(void *user, const char *config, const void *input, size_t length,
                              zarr_bytes_sink_fn put, void *sink) {
    (void)user;
    unsigned char *out = malloc(length + 4);
    const unsigned char *in = input;
    int key = xor_key(config);
    memcpy(out, "XOR1", 4);
    for (size_t i = 0; i < length; i++) out[4 + i] = (unsigned char)(in[i] ^ key);
    put(sink, out, 2);                  /* in two pieces: they are appended */
    put(sink, out + 2, length + 2);
    free(out);
    return ZARR_OK;
}

static zarr_status xor_decode(void *user, const char *config, const void *input, size_t length, void *output,
                              size_t capacity, size_t *out_length) {
    (void)user;
    const unsigned char *in = input;
    if (length < 4 || memcmp(in, "XOR1", 4) != 0) {
        zarr_store_callback_error("no XOR1 magic");
        return ZARR_ERR_CORRUPT_CHUNK;
    }
    if (length - 4 > capacity) {
        zarr_store_callback_error("too long");
        return ZARR_ERR_CORRUPT_CHUNK;
    }
    int key = xor_key(config);
    unsigned char *out = output;
    for (size_t i = 4; i < length; i++) out[i - 4] = (unsigned char)(in[i] ^ key);
    *out_length = length - 4;
    return ZARR_OK;
}

/* "flip_demo": a filter that inverts every bit (keeps the size). */
static zarr_status flip_encode(void *user, const char *config, const void *input, size_t length,
                               zarr_bytes_sink_fn put, void *sink) {
    (void)user, (void)config;
    unsigned char *out = malloc(length ? length : 1);
    for (size_t i = 0; i < length; i++) out[i] = (unsigned char)~((const unsigned char *)input)[i];
    put(sink, out, length);
    free(out);
    return ZARR_OK;
}

static zarr_status flip_decode(void *user, const char *config, const void *input, size_t length, void *output,
                               size_t capacity, size_t *out_length) {
    (void)user, (void)config;
    if (length > capacity) return ZARR_ERR_CORRUPT_CHUNK;
    for (size_t i = 0; i < length; i++) ((unsigned char *)output)[i] = (unsigned char)~((const unsigned char *)input)[i];
    *out_length = length;
    return ZARR_OK;
}

static int releases;
static void count_release(void *user) { (void)user, releases++; }

/* Writes 0..63 as <i4 into a new array from `json`, reads it back; returns the array. */
static zarr_array *round_trip(zarr_store *s, const char *path, const char *json) {
    zarr_array *a = create_array(s, path, json);
    int32_t v[64], back[64];
    uint64_t start[1] = {0}, count[1] = {64};
    for (int i = 0; i < 64; i++) v[i] = i * 3 - 7;
    if (a && CHECK_OK(zarr_array_write(a, 1, start, count, v, sizeof v)) &&
        CHECK_OK(zarr_array_read(a, 1, start, count, back, sizeof back)))
        CHECK(memcmp(v, back, sizeof v) == 0);
    return a;
}

static void test_registered_codecs(void) {
    zarr_codec_callbacks xor_codec = {ZARR_CODEC_CALLBACKS_VERSION, 1, ZARR_CODEC_BYTES, "xor_demo", NULL, NULL,
                                      xor_encode, xor_decode, count_release};
    zarr_codec_callbacks flip = {ZARR_CODEC_CALLBACKS_VERSION, 0, ZARR_CODEC_FILTER, "flip_demo", "flip",
                                 NULL, flip_encode, flip_decode, count_release};
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    /* Not registered yet: refused naming the id. */
    zarr_array *a = NULL;
    CHECK_STATUS(zarr_array_create(s, "early", "{\"shape\": [64], \"chunks\": [16], \"dtype\": \"<i4\","
                                               " \"compressor\": {\"id\": \"xor_demo\", \"key\": 90}}", &a),
                 ZARR_ERR_UNSUPPORTED);
    CHECK_CONTAINS(zarr_last_error(), "xor_demo");
    if (!CHECK_OK(zarr_codec_register(&xor_codec)) || !CHECK_OK(zarr_codec_register(&flip))) return;
    /* v2: as the compressor, and the filter before zstd. */
    zarr_array *v2 = round_trip(s, "v2", "{\"shape\": [64], \"chunks\": [16], \"dtype\": \"<i4\","
                                         " \"compressor\": {\"id\": \"xor_demo\", \"key\": 90}}");
    unsigned char stored[68];
    size_t n = 0;
    if (CHECK_OK(zarr_store_get(s, "v2/0", 0, stored, sizeof stored, &n))) {
        int32_t first = -7;
        CHECK(n == 68 && memcmp(stored, "XOR1", 4) == 0 && stored[4] == (((unsigned char *)&first)[0] ^ 90));
    }
    zarr_array *filtered = round_trip(s, "filtered", "{\"shape\": [64], \"chunks\": [16], \"dtype\": \"<i4\","
                                                     " \"filters\": [{\"id\": \"flip_demo\"}],"
                                                     " \"compressor\": {\"id\": \"zstd\"}}");
    /* v3: under its v3 names, with the configuration the metadata gives. */
    zarr_array *v3 = round_trip(s, "v3", "{\"zarr_format\": 3, \"shape\": [64], \"data_type\": \"int32\","
                                         " \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [16]}},"
                                         " \"codecs\": [{\"name\": \"flip\", \"configuration\": {}}, {\"name\": \"bytes\"},"
                                         " {\"name\": \"numcodecs.xor_demo\", \"configuration\": {\"key\": 7}}]}");
    char *json = NULL;
    if (v3 && CHECK_OK(zarr_array_metadata_json(v3, &json))) {
        CHECK_JSON_HAS(json, "{\"name\":\"numcodecs.xor_demo\",\"configuration\":{\"key\":7}}");
        zarr_string_free(json);
    }
    /* A chunk the codec cannot decode: its status and message, naming the codec. */
    int32_t back[16];
    uint64_t start[1] = {0}, count[1] = {16};
    CHECK_OK(zarr_store_set(s, "v2/0", "garbage!", 8));
    if (v2) {
        CHECK_STATUS(zarr_array_read(v2, 1, start, count, back, sizeof back), ZARR_ERR_CORRUPT_CHUNK);
        CHECK_CONTAINS(zarr_last_error(), "no XOR1 magic");
        CHECK_CONTAINS(zarr_last_error(), "xor_demo");
    }
    /* Bad registrations: refused, released. */
    zarr_codec_callbacks bad = xor_codec;
    bad.id = "zstd";
    releases = 0;
    CHECK_STATUS(zarr_codec_register(&bad), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "built into libzarr");
    bad.id = "other", bad.decode = NULL;
    CHECK_STATUS(zarr_codec_register(&bad), ZARR_ERR_INVALID_ARGUMENT);
    bad.decode = xor_decode, bad.kind = 7;
    CHECK_STATUS(zarr_codec_register(&bad), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(releases == 3);
    bad.version = 99;
    CHECK_STATUS(zarr_codec_register(&bad), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(releases == 3); /* a wrong version: nothing of the structure is used */
    /* Unregistered: arrays open keep it, new ones cannot use it; release after the last. */
    releases = 0;
    CHECK_OK(zarr_codec_unregister("xor_demo"));
    CHECK_STATUS(zarr_codec_unregister("xor_demo"), ZARR_ERR_NOT_FOUND);
    if (v3) CHECK_OK(zarr_array_read(v3, 1, start, count, back, sizeof back));
    CHECK(releases == 0);
    if (v2) zarr_array_close(v2);
    if (v3) zarr_array_close(v3);
    CHECK(releases == 1);
    CHECK_STATUS(zarr_array_open(s, "v3", &a), ZARR_ERR_UNSUPPORTED);
    CHECK_OK(zarr_codec_unregister("flip_demo"));
    if (filtered) zarr_array_close(filtered);
    CHECK(releases == 2);
    zarr_store_close(s);
}

int main(void) {
    test_codecs();
    test_blosc_snappy();
    test_compressor_filters();
    test_bad_configs();
    test_registered_codecs();
    return check_summary("test_codecs");
}
