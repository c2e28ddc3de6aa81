/* test_v3.c - Zarr v3 from C: format detection, v3 groups and arrays created from zarr.json
 * documents, dimension names, sharded arrays (shard and inner chunk shapes, writes that keep
 * the rest of a shard, empty shards erased), rectilinear chunk grids (each chunk's box, the
 * grid's shape, a resize that lengthens it), the small types of zarr-extensions (bfloat16 and
 * float8 codes with their conversions, int4 values and their range), and clear errors for
 * what is malformed or unknown. */
#include "testutil.h"

#define V3_ARRAY(extra)                                                                      \
    "{\"zarr_format\": 3, \"shape\": [10, 9], \"data_type\": \"int32\", \"chunk_grid\":" \
    " {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [4, 6]}}, \"fill_value\": -1" extra "}"

static void test_groups_and_format_detection(const char *dir) {
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_group *g = NULL, *g2 = NULL;
    int32_t format = 0;
    if (!s) return;
    CHECK_OK(zarr_group_create_format(s, "a/b", 3, &g));
    CHECK_OK(zarr_group_zarr_format(g, &format));
    CHECK(format == 3);
    CHECK(file_exists(strf("%s/zarr.json", dir)) && file_exists(strf("%s/a/zarr.json", dir)));
    CHECK(!file_exists(strf("%s/a/.zgroup", dir)));
    /* New groups join the hierarchy in its format. */
    CHECK_OK(zarr_group_create(s, "a/c", &g2));
    CHECK_OK(zarr_group_zarr_format(g2, &format));
    CHECK(format == 3);
    zarr_group_close(g2);
    g2 = NULL;
    CHECK_STATUS(zarr_group_create_format(s, "a/b", 2, &g2), ZARR_ERR_ALREADY_EXISTS);
    CHECK_CONTAINS(zarr_last_error(), "a/b/zarr.json");
    CHECK_STATUS(zarr_group_create_format(s, "x", 4, &g2), ZARR_ERR_INVALID_ARGUMENT);
    zarr_array *a = create_array(s, "a/b/arr", V3_ARRAY(", \"dimension_names\": [\"y\", null]"));
    if (a) {
        char *json = NULL;
        CHECK_OK(zarr_array_zarr_format(a, &format));
        CHECK(format == 3);
        CHECK_OK(zarr_array_dimension_names(a, &json));
        CHECK_STR_EQ(json, "[\"y\",null]");
        zarr_string_free(json);
        CHECK_STATUS(zarr_array_compressor_json(a, &json), ZARR_ERR_UNSUPPORTED);
        CHECK_OK(zarr_array_attrs_set(a, "{\"units\": \"K\", \"bad\": NaN}"));
        CHECK_OK(zarr_array_attrs_get(a, &json));
        CHECK_CONTAINS(json, "NaN");
        zarr_string_free(json);
        /* The handle's metadata document shows the attributes it just wrote. */
        json = NULL;
        CHECK_OK(zarr_array_metadata_json(a, &json));
        CHECK_CONTAINS(json, "\"units\":\"K\"");
        zarr_string_free(json);
        zarr_array_close(a);
    }
    /* Opening what is of the other kind says what it found. */
    zarr_array *wrong = NULL;
    CHECK_STATUS(zarr_array_open(s, "a/b", &wrong), ZARR_ERR_WRONG_NODE_TYPE);
    CHECK_CONTAINS(zarr_last_error(), "a group");
    CHECK_CONTAINS(zarr_last_error(), "a/b/zarr.json");
    CHECK_STATUS(zarr_group_open(s, "a/b/arr", &g2), ZARR_ERR_WRONG_NODE_TYPE);
    CHECK_CONTAINS(zarr_last_error(), "an array");
    CHECK_CONTAINS(zarr_last_error(), "a/b/arr/zarr.json");
    /* A v2 array in a v2 store stays v2; the v3 document wins where both exist. */
    CHECK_STATUS(zarr_array_create(s, "a/b/arr", "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<i4\"}", &wrong),
                 ZARR_ERR_ALREADY_EXISTS);
    file_write(strf("%s/a/b/arr/.zarray", dir), "{}", 2);
    a = open_array(s, "a/b/arr");
    if (a) {
        CHECK_OK(zarr_array_zarr_format(a, &format));
        CHECK(format == 3);
        zarr_array_close(a);
    }
    zarr_group_close(g);
    zarr_store_close(s);
}

static void test_sharded_arrays(const char *dir) {
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    if (!s) return;
    zarr_array *a = create_array(s, "sharded",
        V3_ARRAY(", \"codecs\": [{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": [2, 3],"
                 " \"codecs\": [{\"name\": \"bytes\"}, {\"name\": \"zstd\"}]}}]"));
    if (!a) return;
    uint64_t chunks[2], inner[2];
    CHECK_OK(zarr_array_chunks(a, 2, chunks));
    CHECK_OK(zarr_array_inner_chunks(a, 2, inner));
    CHECK(chunks[0] == 4 && chunks[1] == 6 && inner[0] == 2 && inner[1] == 3);
    int32_t all[90], back[90];
    for (int i = 0; i < 90; i++) all[i] = i * 3;
    uint64_t start[2] = {0, 0}, count[2] = {10, 9};
    CHECK_OK(zarr_array_write(a, 2, start, count, all, sizeof all));
    /* A write inside one shard keeps the rest of it. */
    int32_t patch[4] = {-5, -6, -7, -8};
    uint64_t pstart[2] = {5, 4}, pcount[2] = {2, 2};
    CHECK_OK(zarr_array_write(a, 2, pstart, pcount, patch, sizeof patch));
    CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back));
    int same = 1;
    for (int r = 0; r < 10; r++)
        for (int c = 0; c < 9; c++) {
            int in_patch = r >= 5 && r < 7 && c >= 4 && c < 6;
            int32_t want = in_patch ? patch[(r - 5) * 2 + (c - 4)] : all[r * 9 + c];
            same &= back[r * 9 + c] == want;
        }
    CHECK(same);
    CHECK(file_exists(strf("%s/sharded/c/1/1", dir)));
    /* Only fill values left in a shard: it is erased. */
    int32_t fill[24];
    for (int i = 0; i < 24; i++) fill[i] = -1;
    uint64_t sstart[2] = {4, 6}, scount[2] = {4, 3};
    CHECK_OK(zarr_array_write(a, 2, sstart, scount, fill, 12 * sizeof(int32_t)));
    CHECK(!file_exists(strf("%s/sharded/c/1/1", dir)));
    /* A truncated shard is a corrupt chunk naming its key, never fill values. */
    file_write(strf("%s/sharded/c/0/0", dir), "short", 5);
    CHECK_STATUS(zarr_array_read(a, 2, start, count, back, sizeof back), ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "sharded/c/0/0");
    zarr_array_close(a);
    zarr_store_close(s);
}

/* Rows in chunks of 3, 3 and 4; columns in chunks of 2 and 5: the chunk shape has no one
 * answer, each chunk's box and the grid's shape do. */
static void test_rectilinear_grids(const char *dir) {
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    if (!s) return;
    zarr_array *a = create_array(s, "r",
        "{\"zarr_format\": 3, \"shape\": [10, 7], \"data_type\": \"int32\", \"fill_value\": -1,"
        " \"chunk_grid\": {\"name\": \"rectilinear\", \"configuration\": {\"kind\": \"inline\","
        " \"chunk_shapes\": [[[3, 2], 4], [2, 5]]}}, \"codecs\": [{\"name\": \"bytes\"}, {\"name\": \"gzip\"}]}");
    if (!a) return;
    uint64_t dims[2], start[2] = {0, 0}, count[2] = {10, 7}, block[2] = {1, 1}, one[2] = {1, 1};
    CHECK_STATUS(zarr_array_chunks(a, 2, dims), ZARR_ERR_UNSUPPORTED);
    CHECK_CONTAINS(zarr_last_error(), "rectilinear");
    CHECK_STATUS(zarr_array_inner_chunks(a, 2, dims), ZARR_ERR_UNSUPPORTED);
    CHECK_OK(zarr_array_grid_shape(a, 2, dims));
    CHECK(dims[0] == 3 && dims[1] == 2);
    uint64_t box_start[2], box_count[2];
    CHECK_OK(zarr_array_block_box(a, 2, block, one, box_start, box_count));
    CHECK(box_start[0] == 3 && box_start[1] == 2 && box_count[0] == 3 && box_count[1] == 5);
    int32_t all[70];
    for (int i = 0; i < 70; i++) all[i] = i * 7 - 100;
    CHECK_OK(zarr_array_write(a, 2, start, count, all, sizeof all));
    CHECK(file_exists(strf("%s/r/c/2/1", dir)));
    /* A box across chunks of three lengths. */
    int32_t part[12];
    uint64_t pstart[2] = {2, 1}, pcount[2] = {6, 2};
    CHECK_OK(zarr_array_read(a, 2, pstart, pcount, part, 12 * sizeof(int32_t)));
    int same = 1;
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 2; c++) same &= part[r * 2 + c] == all[(r + 2) * 7 + c + 1];
    CHECK(same);
    /* Growing past the listed rows adds a chunk of 2 rows; the new part reads as the fill value. */
    uint64_t grown[2] = {12, 7};
    CHECK_OK(zarr_array_resize(a, 2, grown));
    CHECK_OK(zarr_array_grid_shape(a, 2, dims));
    CHECK(dims[0] == 4 && dims[1] == 2);
    count[0] = 12;
    int32_t bigger[84];
    CHECK_OK(zarr_array_read(a, 2, start, count, bigger, sizeof bigger));
    CHECK(bigger[0] == all[0] && bigger[69] == all[69] && bigger[70] == -1 && bigger[83] == -1);
    zarr_array_close(a);
    /* The stored grid says so: a new handle sees the same grid. */
    if (CHECK_OK(zarr_array_open(s, "r", &a))) {
        CHECK_OK(zarr_array_grid_shape(a, 2, dims));
        CHECK(dims[0] == 4 && dims[1] == 2);
        CHECK_OK(zarr_array_block_box(a, 2, (uint64_t[]){3, 0}, one, box_start, box_count));
        CHECK(box_start[0] == 10 && box_count[0] == 2);
        zarr_array_close(a);
    }
    /* Lengths that fall short of the shape, or that inner chunks do not divide, are named. */
    CHECK_STATUS(zarr_array_create(s, "short",
        "{\"zarr_format\": 3, \"shape\": [10], \"data_type\": \"int32\", \"fill_value\": 0,"
        " \"chunk_grid\": {\"name\": \"rectilinear\", \"configuration\": {\"kind\": \"inline\","
        " \"chunk_shapes\": [[4, 4]]}}, \"codecs\": [{\"name\": \"bytes\"}]}", &a),
        ZARR_ERR_INVALID_METADATA);
    CHECK_CONTAINS(zarr_last_error(), "add up to 8");
    CHECK_STATUS(zarr_array_create(s, "uneven",
        "{\"zarr_format\": 3, \"shape\": [10], \"data_type\": \"int32\", \"fill_value\": 0,"
        " \"chunk_grid\": {\"name\": \"rectilinear\", \"configuration\": {\"kind\": \"inline\","
        " \"chunk_shapes\": [[6, 12]]}}, \"codecs\": [{\"name\": \"sharding_indexed\","
        " \"configuration\": {\"chunk_shape\": [4]}}]}", &a),
        ZARR_ERR_INVALID_METADATA);
    CHECK_CONTAINS(zarr_last_error(), "shard length 6");
    zarr_store_close(s);
}

#define SMALL_ARRAY(type, fill, codec)                                                            \
    "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [6], \"data_type\": \"" type "\"," \
    " \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [4]}},"         \
    " \"chunk_key_encoding\": {\"name\": \"default\"}, \"fill_value\": " fill ","                  \
    " \"codecs\": [" codec "]}"

static void test_small_types(const char *dir) {
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_dtype_kind kind = 0;
    size_t itemsize = 0;
    char *typestr = NULL;
    if (!s) return;
    /* bfloat16: uint16_t codes, converted exactly; big-endian storage. */
    zarr_array *bf = create_array(s, "bf16", SMALL_ARRAY("bfloat16", "\"NaN\"", "{\"name\": \"bytes\", \"configuration\": {\"endian\": \"big\"}}"));
    if (bf) {
        CHECK_OK(zarr_array_dtype(bf, &kind, &itemsize));
        CHECK(kind == ZARR_DTYPE_SMALL_FLOAT && itemsize == 2);
        CHECK_OK(zarr_array_dtype_string(bf, &typestr));
        CHECK(typestr && strcmp(typestr, "bfloat16") == 0);
        zarr_string_free(typestr);
        const double in[4] = {1.0, -2.5, 1.00390625000001, 3.0e38};
        uint16_t codes[4] = {0}, back[6] = {0};
        double out[6] = {0};
        CHECK_OK(zarr_small_float_from_double("bfloat16", in, 4, codes));
        CHECK(codes[0] == 0x3f80 && codes[1] == 0xc020 && codes[2] == 0x3f81 && codes[3] == 0x7f62);
        uint64_t start = 0, count = 4;
        CHECK_OK(zarr_array_write(bf, 1, &start, &count, codes, sizeof codes));
        size_t n = 0;
        unsigned char *stored = file_read(strf("%s/bf16/c/0", dir), &n);
        CHECK(stored && n == 8 && stored[0] == 0x3f && stored[1] == 0x80);
        free(stored);
        count = 6;
        CHECK_OK(zarr_array_read(bf, 1, &start, &count, back, sizeof back));
        CHECK_OK(zarr_small_float_to_double("bfloat16", back, 6, out));
        CHECK(out[0] == 1.0 && out[1] == -2.5 && out[2] == 1.0078125 && isnan(out[4]) && isnan(out[5]));
        zarr_array_close(bf);
    }
    /* float8_e4m3fnuz: no infinity, no negative zero; what it cannot hold is refused. */
    const double inf = INFINITY, big = 1e6, nzero = -0.0;
    unsigned char code = 0xaa;
    CHECK_STATUS(zarr_small_float_from_double("float8_e4m3fnuz", &inf, 1, &code), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "values[0]");
    CHECK_STATUS(zarr_small_float_from_double("float8_e4m3fnuz", &big, 1, &code), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_OK(zarr_small_float_from_double("float8_e4m3fnuz", &nzero, 1, &code));
    CHECK(code == 0x00);
    CHECK_OK(zarr_small_float_from_double("float8_e4m3", &big, 1, &code));
    CHECK(code == 0x78); /* +infinity */
    CHECK_STATUS(zarr_small_float_from_double("float7", &big, 1, &code), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "float7");
    /* int4: one int8_t per value, packed four bits a value; out of range is refused. */
    zarr_array *i4 = create_array(s, "int4", SMALL_ARRAY("int4", "-3", "{\"name\": \"packbits\"}"));
    if (i4) {
        CHECK_OK(zarr_array_dtype(i4, &kind, &itemsize));
        CHECK(kind == ZARR_DTYPE_INT && itemsize == 1);
        CHECK_OK(zarr_array_check_dtype(i4, ZARR_DTYPE_INT, 1));
        int8_t values[6] = {-8, 7, 0, -1, 5, -6}, back[6] = {0};
        uint64_t start = 0, count = 6;
        CHECK_OK(zarr_array_write(i4, 1, &start, &count, values, sizeof values));
        size_t n = 0;
        unsigned char *stored = file_read(strf("%s/int4/c/0", dir), &n);
        CHECK(stored && n == 2 && stored[0] == 0x78 && stored[1] == 0xf0);
        free(stored);
        CHECK_OK(zarr_array_read(i4, 1, &start, &count, back, sizeof back));
        CHECK(memcmp(values, back, sizeof back) == 0);
        values[2] = 8;
        CHECK_STATUS(zarr_array_write(i4, 1, &start, &count, values, sizeof values), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(zarr_last_error(), "8 is outside int4 [-8, 7]");
        zarr_array_close(i4);
    }
    zarr_array *bad = NULL;
    CHECK_STATUS(zarr_array_create(s, "bad", SMALL_ARRAY("float4_e2m1fn", "\"NaN\"", "{\"name\": \"bytes\"}"), &bad),
                 ZARR_ERR_INVALID_METADATA);
    CHECK_CONTAINS(zarr_last_error(), "float4_e2m1fn has no NaN");
    zarr_store_close(s);
}

static void test_bad_documents(const char *dir) {
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = NULL;
    if (!s) return;
    CHECK_STATUS(zarr_array_create(s, "x", V3_ARRAY(", \"codecs\": [{\"name\": \"bytes\"}, {\"name\": \"lzw\"}]"), &a),
                 ZARR_ERR_UNSUPPORTED);
    CHECK_CONTAINS(zarr_last_error(), "lzw");
    CHECK_STATUS(zarr_array_create(s, "x", V3_ARRAY(", \"codecs\": [{\"name\": \"zstd\"}]"), &a),
                 ZARR_ERR_INVALID_METADATA);
    CHECK_STATUS(zarr_array_create(s, "x", V3_ARRAY(", \"storage_transformers\": [{\"name\": \"t\"}]"), &a),
                 ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_array_create(s, "x", V3_ARRAY(", \"data_type\": \"int128\""), &a), ZARR_ERR_UNSUPPORTED);
    CHECK(!file_exists(strf("%s/x/zarr.json", dir)));
    /* A stored document with an unknown codec: that array fails, its group still lists it. */
    zarr_group *g = NULL;
    CHECK_OK(zarr_group_create_format(s, "g", 3, &g));
    a = create_array(s, "g/ok", V3_ARRAY(""));
    zarr_array_close(a);
    a = create_array(s, "g/bad", V3_ARRAY(""));
    zarr_array_close(a);
    size_t len = 0;
    unsigned char *doc = file_read(strf("%s/g/bad/zarr.json", dir), &len);
    char *text = strndup((const char *)doc, len);
    char *zstd = strstr(text, "\"zstd\"");
    if (CHECK(zstd != NULL)) memcpy(zstd, "\"zzzz\"", 6);
    file_write(strf("%s/g/bad/zarr.json", dir), text, strlen(text));
    CHECK_STATUS(zarr_array_open(s, "g/bad", &a), ZARR_ERR_UNSUPPORTED);
    CHECK_CONTAINS(zarr_last_error(), "zzzz");
    CHECK_CONTAINS(zarr_last_error(), "g/bad/zarr.json");
    char *members = NULL;
    CHECK_OK(zarr_group_list(g, &members));
    CHECK_CONTAINS(members, "\"bad\"");
    CHECK_CONTAINS(members, "\"ok\"");
    zarr_string_free(members);
    free(text);
    free(doc);
    zarr_group_close(g);
    zarr_store_close(s);
}

int main(void) {
    char *dir = tmpdir_make();
    test_groups_and_format_detection(strf("%s/groups.zarr", dir));
    test_sharded_arrays(strf("%s/sharded.zarr", dir));
    test_rectilinear_grids(strf("%s/rectilinear.zarr", dir));
    test_small_types(strf("%s/small.zarr", dir));
    test_bad_documents(strf("%s/bad.zarr", dir));
    tmpdir_remove(dir);
    return check_summary("test_v3");
}
