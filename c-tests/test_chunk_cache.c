/* test_chunk_cache.c - the per-handle chunk cache (zarr_array_set_chunk_cache,
 * zarr_array_chunk_cache_stats): repeated reads hit, the handle's own writes (whole, partial,
 * points, erasing fill-only chunks) are seen at once, another handle's writes are not until the
 * cache is dropped, the budget and turning it off, object arrays, bad arguments, and pthread
 * readers racing a writer never reading older data than the last completed write. */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>

#define N 32
#define CHUNK 8
#define ENTRY (CHUNK * CHUNK * 4 + 64) /* a decoded chunk plus the per-entry charge */
#define META                                                                                 \
    "{\"shape\":[32,32],\"chunks\":[8,8],\"dtype\":\"<i4\",\"fill_value\":-1,"                 \
    "\"compressor\":{\"id\":\"zstd\",\"level\":1}}"

static uint64_t zero2[2] = {0, 0}, all2[2] = {N, N};

static int32_t read_one(zarr_array *a, uint64_t i, uint64_t j) {
    uint64_t start[2] = {i, j}, one[2] = {1, 1};
    int32_t v = 0;
    CHECK_OK(zarr_array_read(a, 2, start, one, &v, sizeof v));
    return v;
}

static void write_one(zarr_array *a, uint64_t i, uint64_t j, int32_t v) {
    uint64_t start[2] = {i, j}, one[2] = {1, 1};
    CHECK_OK(zarr_array_write(a, 2, start, one, &v, sizeof v));
}

static void check_stats(zarr_array *a, uint64_t hits, uint64_t misses, uint64_t bytes, int line) {
    uint64_t h = 0, m = 0, b = 0;
    CHECK_CTX("stats checked at line %d", line);
    if (CHECK_OK(zarr_array_chunk_cache_stats(a, &h, &m, &b))) {
        CHECK_U64_EQ(h, hits);
        CHECK_U64_EQ(m, misses);
        CHECK_U64_EQ(b, bytes);
    }
    CHECK_CTX_CLEAR();
}
#define CHECK_STATS(a, hits, misses, bytes) check_stats((a), (hits), (misses), (bytes), __LINE__)

static void test_hits_and_own_writes(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "a", META) : NULL;
    int32_t data[N * N], back[N * N];
    if (!a) return;
    for (int i = 0; i < N * N; i++) data[i] = i;
    CHECK_OK(zarr_array_write(a, 2, zero2, all2, data, sizeof data));
    CHECK_STATS(a, 0, 0, 0); /* off by default */
    CHECK_OK(zarr_array_set_chunk_cache(a, 1 << 20));

    int32_t first = read_one(a, 9, 10), again = first;
    for (int k = 0; k < 99; k++) again = read_one(a, 9, 10);
    CHECK_U64_EQ(first, 9 * N + 10);
    CHECK_U64_EQ(again, 9 * N + 10);
    CHECK_STATS(a, 99, 1, ENTRY);

    /* A partial write of that chunk through this handle: the next read sees it. */
    write_one(a, 9, 10, 12345);
    CHECK_U64_EQ(read_one(a, 9, 10), 12345);
    CHECK_U64_EQ(read_one(a, 9, 11), 9 * N + 11);
    CHECK_STATS(a, 100, 2, ENTRY);

    /* A whole-chunk write, then a point write. */
    int32_t block[CHUNK * CHUNK];
    uint64_t bstart[2] = {8, 8}, bcount[2] = {CHUNK, CHUNK};
    for (int k = 0; k < CHUNK * CHUNK; k++) block[k] = 5000 + k;
    CHECK_OK(zarr_array_write(a, 2, bstart, bcount, block, sizeof block));
    CHECK_U64_EQ(read_one(a, 9, 10), 5000 + 1 * CHUNK + 2);
    uint64_t point[2] = {9, 10};
    int32_t pv = 777;
    CHECK_OK(zarr_array_write_points(a, 2, 1, point, &pv, sizeof pv));
    CHECK_U64_EQ(read_one(a, 9, 10), 777);

    /* Writing the fill value everywhere in it erases the chunk; it reads as the fill value. */
    for (int k = 0; k < CHUNK * CHUNK; k++) block[k] = -1;
    CHECK_OK(zarr_array_write(a, 2, bstart, bcount, block, sizeof block));
    CHECK_U64_EQ(read_one(a, 9, 10), (uint64_t)(int64_t)-1);
    CHECK_U64_EQ(read_one(a, 8, 8), (uint64_t)(int64_t)-1);

    /* A whole read through the cache equals the data (with the erased chunk as fill). */
    for (int i = 8; i < 16; i++)
        for (int j = 8; j < 16; j++) data[i * N + j] = -1;
    CHECK_OK(zarr_array_read(a, 2, zero2, all2, back, sizeof back));
    CHECK(memcmp(back, data, sizeof data) == 0);

    /* Another handle's writes are not seen while the chunk stays cached... */
    zarr_array *other = open_array(s, "a");
    if (other) {
        write_one(other, 0, 0, 4242);
        CHECK_U64_EQ(read_one(a, 0, 0), 0);
        /* ...until the cache is dropped (off, then on again). */
        CHECK_OK(zarr_array_set_chunk_cache(a, 0));
        CHECK_STATS(a, 0, 0, 0);
        CHECK_U64_EQ(read_one(a, 0, 0), 4242);
        CHECK_STATS(a, 0, 0, 0); /* off: nothing counted */
        CHECK_OK(zarr_array_set_chunk_cache(a, 1 << 20));
        CHECK_U64_EQ(read_one(a, 0, 0), 4242);
        CHECK_STATS(a, 0, 1, ENTRY);
        zarr_array_close(other);
    }

    /* Room for two chunks: a third evicts the least recently used. */
    CHECK_OK(zarr_array_set_chunk_cache(a, 2 * ENTRY));
    read_one(a, 0, 0);  /* hit: cached above */
    read_one(a, 0, 8);  /* miss */
    read_one(a, 0, 16); /* miss, evicts chunk (0, 0) */
    read_one(a, 0, 9);  /* hit */
    read_one(a, 0, 1);  /* miss, evicts chunk (0, 2) */
    CHECK_STATS(a, 2, 3, 2 * ENTRY);

    /* A budget below one chunk: reads are correct and bypass the cache. */
    CHECK_OK(zarr_array_set_chunk_cache(a, ENTRY - 1));
    CHECK_U64_EQ(read_one(a, 0, 1), 1);
    CHECK_STATS(a, 0, 0, 0);
    zarr_array_close(a);
    zarr_store_close(s);
}

static void test_object_array_and_bad_arguments(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "o", "{\"shape\":[4],\"chunks\":[2],\"dtype\":\"|O\","
                                             "\"filters\":[{\"id\":\"vlen-utf8\"}]}")
                      : NULL;
    uint64_t h, m, b, start[1] = {0}, count[1] = {2};
    int64_t offsets[3] = {0, 1, 3}, got[3];
    char text[3];
    if (!a) return;
    CHECK_OK(zarr_array_set_chunk_cache(a, 1 << 20));
    CHECK_OK(zarr_array_write_vlen(a, 1, start, count, offsets, 3, "abc", 3));
    for (int k = 0; k < 2; k++) {
        CHECK_OK(zarr_array_read_vlen(a, 1, start, count, got, 3, text, sizeof text));
        CHECK(memcmp(text, "abc", 3) == 0);
    }
    CHECK_STATS(a, 0, 0, 0); /* object arrays are not cached */

    CHECK_STATUS(zarr_array_set_chunk_cache(NULL, 1 << 20), ZARR_ERR_NULL_POINTER);
    CHECK_CONTAINS(zarr_last_error(), "array");
    CHECK_STATUS(zarr_array_chunk_cache_stats(NULL, &h, &m, &b), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_chunk_cache_stats(a, NULL, &m, &b), ZARR_ERR_NULL_POINTER);
    CHECK_CONTAINS(zarr_last_error(), "out_hits");
    CHECK_STATUS(zarr_array_chunk_cache_stats(a, &h, NULL, &b), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_chunk_cache_stats(a, &h, &m, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_CONTAINS(zarr_last_error(), "out_bytes");
    /* A budget beyond memory is only an upper bound: nothing is allocated up front. */
    CHECK_OK(zarr_array_set_chunk_cache(a, UINT64_MAX));
    zarr_array_close(a);
    zarr_store_close(s);
}

/* ---- readers racing a writer ---------------------------------------------------------------- */

enum { VERSIONS = 600, READERS = 3 };

struct race {
    zarr_array *a;
    atomic_int completed; /* the last version whose write returned (-1: none) */
    atomic_int done;
};

struct reader {
    struct race *race;
    uint64_t seed;
    int stale, failures;
};

static void *race_reader(void *arg) {
    struct reader *r = arg;
    int32_t box[9];
    for (int reads = 0; !atomic_load(&r->race->done) || reads < 100; reads++) {
        int before = atomic_load(&r->race->completed);
        uint64_t start[2] = {rng_below(&r->seed, N - 2), rng_below(&r->seed, N - 2)};
        uint64_t count[2] = {3, 3};
        if (zarr_array_read(r->race->a, 2, start, count, box, sizeof box) != ZARR_OK) {
            r->failures++;
            continue;
        }
        for (int k = 0; k < 9; k++)
            if (box[k] < before) r->stale++;
    }
    return NULL;
}

static void test_readers_racing_a_writer(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    struct race race = {s ? create_array(s, "r", META) : NULL, -1, 0};
    struct reader readers[READERS];
    pthread_t t[READERS];
    static int32_t data[N * N];
    /* Rows [0, 12) and [12, 32): the chunks of rows 8-15 are written in two parts. */
    uint64_t upper[2] = {12, N}, lower[2] = {N - 12, N}, top[2] = {0, 0}, middle[2] = {12, 0};
    if (!race.a) return;
    CHECK_OK(zarr_array_set_chunk_cache(race.a, 1 << 20));
    for (int k = 0; k < READERS; k++) {
        readers[k] = (struct reader){&race, 17 + (uint64_t)k, 0, 0};
        CHECK(pthread_create(&t[k], NULL, race_reader, &readers[k]) == 0);
    }
    for (int v = 0; v < VERSIONS; v++) {
        for (int i = 0; i < N * N; i++) data[i] = v;
        if (v % 2) { /* partial chunks: read, patched and re-encoded */
            CHECK_OK(zarr_array_write(race.a, 2, middle, lower, data, (N - 12) * N * 4));
            CHECK_OK(zarr_array_write(race.a, 2, top, upper, data, 12 * N * 4));
        } else {
            CHECK_OK(zarr_array_write(race.a, 2, zero2, all2, data, sizeof data));
        }
        atomic_store(&race.completed, v);
    }
    atomic_store(&race.done, 1);
    for (int k = 0; k < READERS; k++) {
        pthread_join(t[k], NULL);
        CHECK_U64_EQ(readers[k].failures, 0);
        CHECK_U64_EQ(readers[k].stale, 0);
    }
    zarr_array_close(race.a);
    zarr_store_close(s);
}

int main(void) {
    test_hits_and_own_writes();
    test_object_array_and_bad_arguments();
    test_readers_racing_a_writer();
    return check_summary("test_chunk_cache");
}
