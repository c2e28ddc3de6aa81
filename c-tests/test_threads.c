/* test_threads.c - one array handle shared by several pthreads: concurrent writes to
 * disjoint rows that share chunks (partial-chunk read-modify-write must lose nothing),
 * concurrent readers, and the thread-local last error. */
#include "testutil.h"

#include <pthread.h>

enum { NTHREADS = 4, ROWS = 61, COLS = 37, ROUNDS = 3 }; /* chunks 8x8: every write is partial */

struct job {
    zarr_array *a;
    int thread, round;
    int failures;
};

static int32_t value_at(int round, int i, int j) { return round * 1000000 + i * 1000 + j; }

/* Thread t writes rows t, t+4, t+8, ... one row per call, so all threads hit every chunk. */
static void *write_rows(void *arg) {
    struct job *job = arg;
    int32_t row[COLS];
    for (int i = job->thread; i < ROWS; i += NTHREADS) {
        uint64_t start[2] = {(uint64_t)i, 0}, count[2] = {1, COLS};
        for (int j = 0; j < COLS; j++) row[j] = value_at(job->round, i, j);
        if (zarr_array_write(job->a, 2, start, count, row, sizeof row) != ZARR_OK) job->failures++;
    }
    return NULL;
}

/* Same, but column by column in small pieces, in reverse order. */
static void *write_cells(void *arg) {
    struct job *job = arg;
    for (int j = COLS - 1; j >= 0; j -= 3)
        for (int i = job->thread; i < ROWS; i += NTHREADS) {
            uint64_t start[2] = {(uint64_t)i, (uint64_t)(j >= 2 ? j - 2 : 0)};
            uint64_t count[2] = {1, (uint64_t)(j >= 2 ? 3 : j + 1)};
            int32_t v[3];
            for (uint64_t k = 0; k < count[1]; k++) v[k] = value_at(job->round, i, (int)(start[1] + k));
            if (zarr_array_write(job->a, 2, start, count, v, count[1] * 4) != ZARR_OK) job->failures++;
        }
    return NULL;
}

static void run_writers(zarr_array *a, void *(*fn)(void *), int round) {
    pthread_t t[NTHREADS];
    struct job jobs[NTHREADS];
    int32_t *back = malloc(sizeof(int32_t) * ROWS * COLS);
    uint64_t start[2] = {0, 0}, count[2] = {ROWS, COLS};
    int wrong = 0;
    for (int k = 0; k < NTHREADS; k++) {
        jobs[k] = (struct job){a, k, round, 0};
        CHECK(pthread_create(&t[k], NULL, fn, &jobs[k]) == 0);
    }
    for (int k = 0; k < NTHREADS; k++) {
        pthread_join(t[k], NULL);
        CHECK_U64_EQ(jobs[k].failures, 0);
    }
    if (CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof(int32_t) * ROWS * COLS)))
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < COLS; j++)
                if (back[i * COLS + j] != value_at(round, i, j) && wrong++ == 0)
                    check_fail_at(__FILE__, __LINE__, "round %d: [%d][%d] = %d, expected %d", round, i, j,
                                  back[i * COLS + j], value_at(round, i, j));
    CHECK_U64_EQ(wrong, 0);
    free(back);
}

static void test_concurrent_writes(void) {
    static const struct { const char *compressor, *order, *dtype; } cases[] = {
        {"null", "C", "<i4"},
        {"{\"id\":\"zstd\",\"level\":1}", "C", "<i4"},
        {"{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}", "C", ">i4"},
        {"{\"id\":\"zlib\",\"level\":1}", "F", "<i4"},
        {"{\"id\":\"lz4\",\"acceleration\":1}", "F", ">i4"},
    };
    for (size_t c = 0; c < ARRAY_LEN(cases); c++)
        for (int where = 0; where < 2; where++) {
            char *dir = tmpdir_make();
            zarr_store *s = open_store(where ? dir : "memory:", ZARR_MODE_WRITE);
            zarr_array *a = s ? create_array(s, "t", strf("{\"shape\":[%d,%d],\"chunks\":[8,8],\"dtype\":\"%s\","
                                             "\"order\":\"%s\",\"fill_value\":-1,\"compressor\":%s}", ROWS, COLS,
                                             cases[c].dtype, cases[c].order, cases[c].compressor)) : NULL;
            CHECK_CTX("%s store, %s order %s, compressor %s", where ? "directory" : "memory", cases[c].dtype,
                      cases[c].order, cases[c].compressor);
            if (a) {
                for (int round = 0; round < ROUNDS; round++) run_writers(a, write_rows, round);
                run_writers(a, write_cells, ROUNDS);
                CHECK_OK(zarr_array_close(a));
            }
            CHECK_OK(zarr_store_close(s));
            tmpdir_remove(dir);
        }
    CHECK_CTX_CLEAR();
}

/* Readers running while writers rewrite other rows of the same chunks. */
struct rjob {
    zarr_array *a;
    int bad;
};

static void *read_fixed_rows(void *arg) {
    struct rjob *job = arg;
    int32_t row[COLS];
    for (int iter = 0; iter < 200; iter++) {
        uint64_t start[2] = {(uint64_t)(iter % 16) * 4, 0}, count[2] = {1, COLS}; /* rows 0,4,..,60 */
        if (zarr_array_read(job->a, 2, start, count, row, sizeof row) != ZARR_OK) job->bad++;
        for (int j = 0; j < COLS; j++)
            if (row[j] != value_at(0, (int)start[0], j)) job->bad++;
    }
    return NULL;
}

static void *write_other_rows(void *arg) {
    struct rjob *job = arg;
    int32_t row[COLS];
    for (int iter = 0; iter < 100; iter++) {
        int i = 1 + (iter % 60);
        uint64_t start[2] = {(uint64_t)(i % 4 ? i : i - 1), 0}, count[2] = {1, COLS}; /* never a multiple of 4 */
        for (int j = 0; j < COLS; j++) row[j] = iter;
        if (zarr_array_write(job->a, 2, start, count, row, sizeof row) != ZARR_OK) job->bad++;
    }
    return NULL;
}

static void test_readers_and_writers(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "rw", strf("{\"shape\":[%d,%d],\"chunks\":[8,8],\"dtype\":\"<i4\","
                                     "\"compressor\":{\"id\":\"zstd\",\"level\":1}}", ROWS, COLS)) : NULL;
    pthread_t t[4];
    struct rjob jobs[4];
    if (!a) goto out;
    run_writers(a, write_rows, 0);
    for (int k = 0; k < 4; k++) {
        jobs[k] = (struct rjob){a, 0};
        CHECK(pthread_create(&t[k], NULL, k < 2 ? read_fixed_rows : write_other_rows, &jobs[k]) == 0);
    }
    for (int k = 0; k < 4; k++) {
        pthread_join(t[k], NULL);
        CHECK_CTX("thread %d (%s)", k, k < 2 ? "reader" : "writer");
        CHECK_U64_EQ(jobs[k].bad, 0);
    }
    CHECK_CTX_CLEAR();
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
}

/* Each thread sees its own last error, even when they fail at the same time. */
struct ejob {
    int id, ok;
};

static void *fail_and_look(void *arg) {
    struct ejob *job = arg;
    char missing[64];
    zarr_store *s = NULL;
    snprintf(missing, sizeof missing, "/nonexistent-libzarr/thread-%d-path", job->id);
    job->ok = 1;
    for (int i = 0; i < 200; i++) {
        if (zarr_store_open(missing, ZARR_MODE_READ, &s) != ZARR_ERR_NOT_FOUND) job->ok = 0;
        if (!strstr(zarr_last_error(), missing)) job->ok = 0;
    }
    return NULL;
}

static void test_thread_local_errors(void) {
    pthread_t t[8];
    struct ejob jobs[8];
    for (int k = 0; k < 8; k++) {
        jobs[k] = (struct ejob){k, 0};
        CHECK(pthread_create(&t[k], NULL, fail_and_look, &jobs[k]) == 0);
    }
    for (int k = 0; k < 8; k++) {
        pthread_join(t[k], NULL);
        CHECK_CTX("thread %d", k);
        CHECK(jobs[k].ok);
    }
    CHECK_CTX_CLEAR();
}

int main(void) {
    test_concurrent_writes();
    test_readers_and_writers();
    test_thread_local_errors();
    return check_summary("test_threads");
}
