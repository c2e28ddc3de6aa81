/* test_array_rw.c - region writes and reads against a reference model kept in C:
 * 1-4 dimensions, C and F order, both dimension separators, several codecs, unaligned and
 * overhanging boxes, missing chunks read as the fill value, reopen from disk, the on-disk
 * chunk layout, 0-d arrays and empty selections. */
#include "testutil.h"

struct rw_case {
    const char *name;
    size_t ndim;
    uint64_t shape[4], chunks[4];
    const char *dtype, *order, *sep, *compressor, *fill_json;
    double fill;
};

#define ZLIB "{\"id\":\"zlib\",\"level\":1}"
#define BLOSC "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}"
#define ZSTD "{\"id\":\"zstd\",\"level\":1}"
#define LZ4 "{\"id\":\"lz4\",\"acceleration\":1}"

static const struct rw_case CASES[] = {
    {"1d", 1, {100}, {7}, "<i4", "C", ".", "null", "0", 0},
    {"1d-single", 1, {1}, {1}, "<f8", "C", ".", "null", "\"-Infinity\"", -INFINITY},
    {"2d-nan-fill", 2, {37, 23}, {8, 5}, "<f8", "C", ".", ZLIB, "\"NaN\"", NAN},
    {"2d-F-nested", 2, {37, 23}, {8, 5}, "<i2", "F", "/", BLOSC, "-3", -3},
    {"3d-be-nested", 3, {9, 10, 11}, {4, 3, 5}, ">u2", "C", "/", ZSTD, "65535", 65535},
    {"3d-F", 3, {9, 10, 11}, {2, 7, 4}, "<f4", "F", ".", "null", "-2.5", -2.5},
    {"3d-F-be", 3, {6, 7, 5}, {4, 4, 4}, ">f8", "F", "/", LZ4, "1e300", 1e300},
    {"4d", 4, {5, 4, 6, 3}, {2, 3, 4, 2}, "<i8", "C", ".", LZ4, "-7", -7},
    {"chunk-bigger-than-shape", 2, {7, 3}, {100, 100}, "|u1", "C", ".", ZLIB, "200", 200},
    {"chunk-1x1", 2, {5, 6}, {1, 1}, "<i4", "F", "/", "null", "42", 42},
    {"2d-large", 2, {200, 300}, {64, 64}, "<f8", "C", ".", BLOSC, "0.5", 0.5},
    {"bool", 2, {11, 13}, {4, 4}, "|b1", "C", ".", ZLIB, "true", 1},
};

struct model {
    size_t ndim, itemsize;
    zarr_dtype_kind kind;
    uint64_t shape[4];
    unsigned char *ref; /* the whole array, C order, native values */
};

/* Reads box (start, count) and compares it with the reference. */
static int check_box(zarr_array *a, const struct model *m, const uint64_t *start, const uint64_t *count) {
    size_t n = (size_t)prod_u64(m->ndim, count), bytes = n * m->itemsize;
    unsigned char *got = malloc(bytes + 1), *want = malloc(bytes + 1);
    int ok = 0;
    box_copy(m->ndim, m->shape, start, count, m->itemsize, m->ref, want, 1);
    if (CHECK_OK(zarr_array_read(a, m->ndim, start, count, got, bytes)))
        ok = CHECK_ELEMS(m->kind, m->itemsize, got, want, n);
    free(got);
    free(want);
    return ok;
}

static int check_whole(zarr_array *a, const struct model *m) {
    uint64_t start[4] = {0};
    return check_box(a, m, start, m->shape);
}

/* Writes generated data to the box in the array and in the reference. */
static void write_box(zarr_array *a, struct model *m, const uint64_t *start, const uint64_t *count,
                      uint64_t seed) {
    size_t n = (size_t)prod_u64(m->ndim, count);
    unsigned char *data = malloc(n * m->itemsize + 1);
    gen_buffer(m->kind, m->itemsize, seed, data, n);
    if (CHECK_OK(zarr_array_write(a, m->ndim, start, count, data, n * m->itemsize)))
        box_copy(m->ndim, m->shape, start, count, m->itemsize, m->ref, data, 0);
    free(data);
}

static void random_box(const struct model *m, uint64_t *rng, uint64_t *start, uint64_t *count) {
    for (size_t d = 0; d < m->ndim; d++) {
        start[d] = rng_below(rng, m->shape[d]);
        count[d] = 1 + rng_below(rng, m->shape[d] - start[d]);
    }
}

/* "[10,20]" for a list of n numbers. */
static const char *dims_json(size_t n, const uint64_t *v) {
    char buf[256] = "";
    for (size_t d = 0; d < n; d++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%llu", d ? "," : "",
                 (unsigned long long)v[d]);
    return strf("[%s]", buf);
}

static void run_case(const struct rw_case *c, const char *location) {
    const char *json = strf("{\"shape\":%s,\"chunks\":%s,\"dtype\":\"%s\",\"order\":\"%s\","
                            "\"dimension_separator\":\"%s\",\"compressor\":%s,\"fill_value\":%s}",
                            dims_json(c->ndim, c->shape), dims_json(c->ndim, c->chunks), c->dtype,
                            c->order, c->sep, c->compressor, c->fill_json);
    struct model m = {.ndim = c->ndim};
    uint64_t start[4], count[4], rng = 12345;
    unsigned char fill[16];
    zarr_store *s = open_store(location, ZARR_MODE_WRITE);
    zarr_array *a;

    memcpy(m.shape, c->shape, sizeof m.shape);
    a = s ? create_array(s, "arr", json) : NULL;
    if (!a || !CHECK_OK(zarr_array_dtype(a, &m.kind, &m.itemsize))) {
        zarr_store_close(s);
        return;
    }
    /* The reference starts as all fill value: nothing written reads as fill. */
    scalar_to_elem(m.kind, m.itemsize, c->fill, fill);
    m.ref = malloc(prod_u64(m.ndim, m.shape) * m.itemsize);
    fill_elems(m.ref, fill, m.itemsize, prod_u64(m.ndim, m.shape));
    check_whole(a, &m);

    /* Random unaligned boxes: each write is followed by a read of another random box. */
    for (int i = 0; i < 25; i++) {
        random_box(&m, &rng, start, count);
        write_box(a, &m, start, count, rng_next(&rng));
        random_box(&m, &rng, start, count);
        check_box(a, &m, start, count);
    }
    /* The last chunk (overhanging the edge), then a single element in the far corner. */
    for (size_t d = 0; d < m.ndim; d++) {
        start[d] = (m.shape[d] - 1) / c->chunks[d] * c->chunks[d];
        count[d] = m.shape[d] - start[d];
    }
    write_box(a, &m, start, count, 99);
    check_box(a, &m, start, count);
    for (size_t d = 0; d < m.ndim; d++) start[d] = m.shape[d] - 1, count[d] = 1;
    write_box(a, &m, start, count, 7);
    check_box(a, &m, start, count);
    check_whole(a, &m);
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));

    /* Reopen from scratch (a new READ store for directories) and compare everything. */
    if (strcmp(location, "memory:") != 0) {
        s = open_store(location, ZARR_MODE_READ);
        a = s ? open_array(s, "arr") : NULL;
        if (a) check_whole(a, &m);
        CHECK_OK(zarr_array_close(a));
        CHECK_OK(zarr_store_close(s));
    }
    free(m.ref);
}

static void test_cases(void) {
    for (size_t i = 0; i < ARRAY_LEN(CASES); i++) {
        char *dir = tmpdir_make();
        CHECK_CTX("%s in memory", CASES[i].name);
        run_case(&CASES[i], "memory:");
        CHECK_CTX("%s in %s", CASES[i].name, dir);
        run_case(&CASES[i], dir);
        tmpdir_remove(dir);
    }
    CHECK_CTX_CLEAR();
}

/* "." keys are files "i.j"; "/" keys are nested directories "i/j". */
static void test_chunk_files_on_disk(void) {
    static const char *const seps[] = {".", "/"};
    for (size_t k = 0; k < 2; k++) {
        char *dir = tmpdir_make();
        zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
        zarr_array *a = s ? create_array(s, "g/arr", strf("{\"shape\":[10,9],\"chunks\":[4,4],"
                            "\"dtype\":\"<i4\",\"compressor\":" ZLIB ",\"dimension_separator\":\"%s\"}",
                            seps[k])) : NULL;
        int32_t data[90];
        uint64_t start[2] = {0, 0}, count[2] = {10, 9};
        CHECK_CTX("separator %s", seps[k]);
        if (!a) continue;
        for (int i = 0; i < 90; i++) data[i] = i + 1;
        CHECK_OK(zarr_array_write(a, 2, start, count, data, sizeof data));
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                CHECK(file_exists(strf("%s/g/arr/%d%s%d", dir, i, seps[k], j)));
        if (k == 1) {
            CHECK(dir_exists(strf("%s/g/arr/2", dir)));
            CHECK(!file_exists(strf("%s/g/arr/2.2", dir)));
        } else {
            CHECK(!dir_exists(strf("%s/g/arr/2", dir)));
        }
        CHECK_U64_EQ(count_files(strf("%s/g/arr", dir)), 9 + 1); /* chunks + .zarray */
        CHECK_OK(zarr_array_close(a));
        CHECK_OK(zarr_store_close(s));
        tmpdir_remove(dir);
    }
    CHECK_CTX_CLEAR();
}

/* Order "F": the chunk bytes are column-major, while the caller always sees C order. */
static void test_f_order_bytes(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "f", "{\"shape\":[4,6],\"chunks\":[4,6],\"dtype\":\"<i2\","
                                         "\"order\":\"F\",\"compressor\":null}");
    int16_t data[4][6], back[4][6];
    uint64_t start[2] = {0, 0}, count[2] = {4, 6};
    unsigned char *raw;
    size_t len = 0;
    if (!a) goto out;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++) data[i][j] = (int16_t)(i * 10 + j + 1);
    CHECK_OK(zarr_array_write(a, 2, start, count, data, sizeof data));
    CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back));
    CHECK(memcmp(data, back, sizeof data) == 0);
    raw = file_read(strf("%s/f/0.0", dir), &len);
    CHECK_U64_EQ(len, sizeof data);
    if (raw && len == sizeof data)
        for (int j = 0; j < 6; j++)
            for (int i = 0; i < 4; i++) {
                const unsigned char *p = raw + 2 * (j * 4 + i); /* little-endian, column-major */
                CHECK_CTX("element [%d][%d]", i, j);
                CHECK_U64_EQ(p[0] | p[1] << 8, data[i][j]);
            }
    CHECK_CTX_CLEAR();
    free(raw);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* A 0-d array has one element stored under the key "0"; pointers are still required. */
static void test_zero_dim(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "scalar", "{\"shape\":[],\"chunks\":[],\"dtype\":\"<f8\","
                                              "\"fill_value\":3.25}");
    uint64_t dummy = 0;
    double v = 0, w = -8.5;
    size_t ndim = 99;
    if (!a) goto out;
    CHECK_OK(zarr_array_ndim(a, &ndim));
    CHECK_U64_EQ(ndim, 0);
    CHECK_OK(zarr_array_read(a, 0, &dummy, &dummy, &v, sizeof v));
    CHECK(v == 3.25);
    CHECK_OK(zarr_array_write(a, 0, &dummy, &dummy, &w, sizeof w));
    CHECK_OK(zarr_array_read(a, 0, &dummy, &dummy, &v, sizeof v));
    CHECK(v == -8.5);
    CHECK(file_exists(strf("%s/scalar/0", dir)));
    CHECK_STATUS(zarr_array_read(a, 0, &dummy, &dummy, &v, 4), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_read(a, 1, &dummy, &dummy, &v, sizeof v), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* A count of 0 in any dimension is a no-op that succeeds (buffer size 0). */
static void test_empty_selection(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "e", "{\"shape\":[8,8],\"chunks\":[4,4],\"dtype\":\"<i4\","
                                         "\"fill_value\":5}");
    uint64_t start[2] = {2, 3}, count[2] = {0, 4}, all[2] = {8, 8}, zero[2] = {0, 0};
    int32_t buf[64], untouched = 0x5a5a5a5a;
    if (!a) goto out;
    CHECK_OK(zarr_array_write(a, 2, start, count, &untouched, 0));
    CHECK_OK(zarr_array_read(a, 2, start, count, &untouched, 0));
    CHECK(untouched == 0x5a5a5a5a);
    count[0] = 4, count[1] = 0;
    CHECK_OK(zarr_array_write(a, 2, start, count, &untouched, 0));
    CHECK_U64_EQ(count_files(strf("%s/e", dir)), 1); /* only .zarray: nothing written */
    CHECK_OK(zarr_array_read(a, 2, zero, all, buf, sizeof buf));
    for (int i = 0; i < 64; i++) CHECK(buf[i] == 5);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* Rewriting the same region many times keeps only the last values. */
static void test_overwrite(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "o", "{\"shape\":[20],\"chunks\":[6],\"dtype\":\"<u4\","
                                         "\"compressor\":" ZSTD "}");
    uint32_t v[9], back[20];
    uint64_t start = 5, count = 9, zero = 0, all = 20;
    if (!a) goto out;
    for (uint32_t round = 1; round <= 5; round++) {
        for (int i = 0; i < 9; i++) v[i] = round * 100 + (uint32_t)i;
        CHECK_OK(zarr_array_write(a, 1, &start, &count, v, sizeof v));
    }
    CHECK_OK(zarr_array_read(a, 1, &zero, &all, back, sizeof back));
    for (int i = 0; i < 20; i++) {
        CHECK_CTX("index %d", i);
        CHECK_U64_EQ(back[i], i >= 5 && i < 14 ? 500u + (uint32_t)(i - 5) : 0u);
    }
    CHECK_CTX_CLEAR();
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
}

/* Overwriting stored chunks with the fill value reads back as fill (no stale chunk data),
 * whether the chunk is covered by one write or patched piece by piece. */
static void test_overwrite_with_fill(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "w", "{\"shape\":[6,6],\"chunks\":[3,3],\"dtype\":\"<i4\","
                                         "\"fill_value\":9,\"compressor\":" ZLIB "}");
    int32_t data[36], nines[36], back[36];
    uint64_t zero[2] = {0, 0}, all[2] = {6, 6}, start[2], count[2] = {1, 3};
    if (!a) goto out;
    for (int i = 0; i < 36; i++) data[i] = i, nines[i] = 9;
    CHECK_OK(zarr_array_write(a, 2, zero, all, data, sizeof data));
    CHECK_OK(zarr_array_write(a, 2, zero, all, nines, sizeof nines)); /* whole chunks */
    if (CHECK_OK(zarr_array_read(a, 2, zero, all, back, sizeof back))) CHECK(memcmp(back, nines, sizeof back) == 0);
    CHECK_OK(zarr_array_write(a, 2, zero, all, data, sizeof data));
    for (uint64_t r = 0; r < 6; r++) /* row pieces: every chunk is patched three times */
        for (uint64_t c = 0; c < 6; c += 3) {
            start[0] = r, start[1] = c;
            CHECK_OK(zarr_array_write(a, 2, start, count, nines, 3 * sizeof(int32_t)));
        }
    if (CHECK_OK(zarr_array_read(a, 2, zero, all, back, sizeof back))) CHECK(memcmp(back, nines, sizeof back) == 0);
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    /* And from disk. */
    s = open_store(dir, ZARR_MODE_READ);
    a = s ? open_array(s, "w") : NULL;
    if (a && CHECK_OK(zarr_array_read(a, 2, zero, all, back, sizeof back))) CHECK(memcmp(back, nines, sizeof back) == 0);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

int main(void) {
    test_cases();
    test_chunk_files_on_disk();
    test_f_order_bytes();
    test_zero_dim();
    test_empty_selection();
    test_overwrite();
    test_overwrite_with_fill();
    return check_summary("test_array_rw");
}
