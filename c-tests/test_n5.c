/* test_n5.c - N5 containers through the public header: a directory ending in .n5 (or n5://PATH)
 * is created, written, reopened and read back; the files are N5's (attributes.json with reversed
 * dimensions, blocks at reversed paths with big-endian headers, edge blocks at their actual size);
 * a damaged block header and a bad attributes.json are errors naming the key. */
#include "testutil.h"

static const char *META =
    "{\"shape\":[7,5],\"chunks\":[3,2],\"dtype\":\"<i4\",\"compressor\":{\"id\":\"zstd\",\"level\":1}}";

static int32_t DATA[35];
static uint64_t START[2] = {0, 0}, COUNT[2] = {7, 5};

static int read_matches(zarr_array *a) {
    int32_t back[35];
    memset(back, 0xff, sizeof back);
    return CHECK_OK(zarr_array_read(a, 2, START, COUNT, back, sizeof back)) &&
           CHECK(memcmp(back, DATA, sizeof DATA) == 0);
}

static void test_round_trip(const char *dir) {
    const char *path = strf("%s/data.n5", dir);
    zarr_store *s = open_store(path, ZARR_MODE_WRITE);
    zarr_group *g = NULL;
    if (!s) return;
    CHECK_OK(zarr_group_create(s, "g", &g));
    CHECK_OK(zarr_group_attrs_set(g, "{\"title\":\"n5\"}"));
    zarr_group_close(g);
    zarr_array *a = create_array(s, "g/a", META);
    if (a) {
        CHECK_OK(zarr_array_write(a, 2, START, COUNT, DATA, sizeof DATA));
        CHECK_OK(zarr_array_attrs_set(a, "{\"units\":\"nm\"}"));
        zarr_array_close(a);
    }
    zarr_store_close(s);

    /* N5's files. */
    size_t len = 0;
    char *attrs = (char *)file_read(strf("%s/g/a/attributes.json", path), &len);
    if (CHECK(attrs)) {
        CHECK_JSON_HAS(attrs, "\"dimensions\":[5,7]");
        CHECK_JSON_HAS(attrs, "\"blockSize\":[2,3]");
        CHECK_JSON_HAS(attrs, "\"dataType\":\"int32\"");
        CHECK_JSON_HAS(attrs, "\"units\":\"nm\"");
        free(attrs);
    }
    char *root = (char *)file_read(strf("%s/attributes.json", path), &len);
    if (CHECK(root)) CHECK_JSON_HAS(root, "\"n5\":\"2.0.0\"");
    free(root);
    /* Chunk (2, 1) is the block 1/2: one row of two, N5 order 2 x 1. */
    unsigned char *edge = file_read(strf("%s/g/a/1/2", path), &len);
    if (CHECK(edge && len > 12)) {
        static const unsigned char header[12] = {0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 1};
        CHECK(memcmp(edge, header, 12) == 0);
    }
    free(edge);

    /* Reopened, read-only, also as n5://PATH. */
    const char *locations[2] = {path, strf("n5://%s", path)};
    for (int i = 0; i < 2; i++) {
        CHECK_CTX("%s", locations[i]);
        s = open_store(locations[i], ZARR_MODE_READ);
        if (!s) continue;
        char *json = NULL;
        if (CHECK_OK(zarr_group_open(s, "g", &g))) {
            if (CHECK_OK(zarr_group_list(g, &json))) CHECK_JSON_EQ(json, "{\"arrays\":[\"a\"],\"groups\":[]}");
            zarr_string_free(json);
            if (CHECK_OK(zarr_group_attrs_get(g, &json))) CHECK_JSON_EQ(json, "{\"title\":\"n5\"}");
            zarr_string_free(json);
            zarr_group_close(g);
        }
        if (CHECK_OK(zarr_array_open(s, "g/a", &a))) {
            read_matches(a);
            zarr_array_close(a);
        }
        zarr_store_close(s);
    }
    CHECK_CTX_CLEAR();
}

static void test_damage(const char *dir) {
    const char *path = strf("%s/damaged.n5", dir);
    zarr_store *s = open_store(path, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "a", META) : NULL;
    if (a) CHECK_OK(zarr_array_write(a, 2, START, COUNT, DATA, sizeof DATA));
    zarr_array_close(a);
    zarr_store_close(s);

    /* A header saying three dimensions for a 2-d array. */
    const char *block = strf("%s/a/0/0", path);
    size_t len = 0;
    unsigned char *good = file_read(block, &len);
    if (!CHECK(good && len > 12)) return;
    unsigned char bad[12] = {0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 3};
    file_write(block, bad, sizeof bad);
    int32_t back[35];
    s = open_store(path, ZARR_MODE_READ);
    if (s && CHECK_OK(zarr_array_open(s, "a", &a))) {
        CHECK_STATUS(zarr_array_read(a, 2, START, COUNT, back, sizeof back), ZARR_ERR_CORRUPT_CHUNK);
        CHECK(strstr(zarr_last_error(), "\"a/0.0\"") && strstr(zarr_last_error(), "3 dimensions"));
        /* A block larger than the chunks. */
        unsigned char big[12] = {0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 4};
        file_write(block, big, sizeof big);
        CHECK_STATUS(zarr_array_read(a, 2, START, COUNT, back, sizeof back), ZARR_ERR_CORRUPT_CHUNK);
        CHECK(strstr(zarr_last_error(), "larger than"));
        file_write(block, good, len);
        read_matches(a);
        zarr_array_close(a);
    }
    zarr_store_close(s);
    free(good);

    /* A damaged attributes.json and an unknown compression. */
    const char *attrs = strf("%s/a/attributes.json", path);
    file_write(attrs, "{\"dimensions\": [5", 17);
    s = open_store(path, ZARR_MODE_READ);
    if (s) {
        CHECK_STATUS(zarr_array_open(s, "a", &a), ZARR_ERR_INVALID_METADATA);
        CHECK(strstr(zarr_last_error(), "a/attributes.json"));
        const char *snappy = "{\"dimensions\":[5,7],\"blockSize\":[2,3],\"dataType\":\"int32\","
                             "\"compression\":{\"type\":\"snappy\"}}";
        file_write(attrs, snappy, strlen(snappy));
        CHECK_STATUS(zarr_array_open(s, "a", &a), ZARR_ERR_UNSUPPORTED);
        CHECK(strstr(zarr_last_error(), "a/attributes.json") && strstr(zarr_last_error(), "snappy"));
    }
    zarr_store_close(s);
}

int main(void) {
    for (int i = 0; i < 35; i++) DATA[i] = i * 7 - 40;
    char *dir = tmpdir_make();
    test_round_trip(dir);
    test_damage(dir);
    tmpdir_remove(dir);
    return check_summary("test_n5");
}
