/* test_engine.c - the parallel engine and chunk storage policy: the worker-thread count
 * (zarr_set_num_threads / zarr_num_threads, the ZARR_NUM_THREADS default, checked in forked
 * children before their first libzarr call), identical results and chunk bytes with 1 or
 * many workers, write_empty_chunks (all-fill chunks are not stored or are erased unless the
 * flag is set; null fill values always store), and several pthreads doing strided,
 * orthogonal and point writes of interleaved elements that share chunks. */
#include "testutil.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

#define ZSTD "{\"id\":\"zstd\",\"level\":1}"
#define ZLIB "{\"id\":\"zlib\",\"level\":1}"
#define BLOSC "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}"

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Threads of this process (Linux /proc), or -1 where unknown. */
static long process_threads(void) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* A small round trip that needs the worker pool (many chunks, compressed). */
static int roundtrip_ok(void) {
    zarr_store *s = NULL;
    zarr_array *a = NULL;
    int32_t data[40 * 40], back[40 * 40];
    uint64_t zero[2] = {0, 0}, all[2] = {40, 40};
    int ok = 0;
    for (int i = 0; i < 1600; i++) data[i] = i * 7 - 3;
    if (zarr_store_open("memory:", ZARR_MODE_WRITE, &s) == ZARR_OK &&
        zarr_array_create(s, "r", "{\"shape\":[40,40],\"chunks\":[7,6],\"dtype\":\"<i4\",\"compressor\":" ZSTD "}", &a) == ZARR_OK &&
        zarr_array_write(a, 2, zero, all, data, sizeof data) == ZARR_OK &&
        zarr_array_read(a, 2, zero, all, back, sizeof back) == ZARR_OK)
        ok = memcmp(data, back, sizeof data) == 0;
    zarr_array_close(a);
    zarr_store_close(s);
    return ok;
}

/* ---- the ZARR_NUM_THREADS default, in fresh child processes --------------------------------- */

/* Runs in a forked child that has not used libzarr yet. */
static int env_child(const char *value, size_t want) {
    size_t n = 0;
    long base = process_threads(), now = -1;
    setenv("ZARR_NUM_THREADS", value, 1);
    CHECK_CTX("child with ZARR_NUM_THREADS=%s", value);
    CHECK(base == 1 || base == -1); /* no libzarr threads before first use */
    if (CHECK_OK(zarr_num_threads(&n))) CHECK_U64_EQ(n, want);
    CHECK(roundtrip_ok());
    if (base == 1) { /* the pool really has that many threads (they name themselves lazily) */
        for (int i = 0; i < 200 && (now = process_threads()) != 1 + (long)want; i++) sleep_ms(10);
        CHECK_U64_EQ(now, 1 + want);
    }
    CHECK_OK(zarr_set_num_threads(want + 2));
    if (CHECK_OK(zarr_num_threads(&n))) CHECK_U64_EQ(n, want + 2);
    CHECK(roundtrip_ok());
    CHECK_OK(zarr_set_num_threads(0)); /* back to the default: the variable */
    if (CHECK_OK(zarr_num_threads(&n))) CHECK_U64_EQ(n, want);
    CHECK(roundtrip_ok());
    return check_summary(strf("test_engine child ZARR_NUM_THREADS=%s", value));
}

/* Must run before the parent's first libzarr call, so that the child starts clean. */
static void test_env_default(const char *value, size_t want) {
    pid_t pid;
    int status = 0;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        int rc = env_child(value, want);
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    CHECK_CTX("child with ZARR_NUM_THREADS=%s", value);
    if (CHECK(pid > 0) && CHECK(waitpid(pid, &status, 0) == pid))
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_CTX_CLEAR();
}

/* ---- the thread count in this process ---------------------------------------------------------- */

static void test_thread_counts(void) {
    size_t n0 = 0, n = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* main() cleared ZARR_NUM_THREADS: the default is the number of (usable) cores. */
    if (!CHECK_OK(zarr_num_threads(&n0))) return;
    CHECK(n0 >= 1);
    CHECK(cores <= 0 || n0 <= (size_t)cores);
    CHECK_OK(zarr_set_num_threads(1));
    if (CHECK_OK(zarr_num_threads(&n))) CHECK_U64_EQ(n, 1);
    CHECK(roundtrip_ok());
    CHECK_OK(zarr_set_num_threads(3));
    if (CHECK_OK(zarr_num_threads(&n))) CHECK_U64_EQ(n, 3);
    CHECK(roundtrip_ok());
    CHECK_OK(zarr_set_num_threads(0));
    if (CHECK_OK(zarr_num_threads(&n))) CHECK_U64_EQ(n, n0);
    CHECK(roundtrip_ok());
    CHECK_STATUS(zarr_num_threads(NULL), ZARR_ERR_NULL_POINTER);
}

/* ---- same results with any number of workers --------------------------------------------- */

enum { WR = 150, WC = 130 };

struct work_result {
    int32_t whole[WR * WC];
    int32_t strided[40 * 40];
    int32_t ortho[30 * 30];
    int32_t points[500];
};

/* A fixed sequence of writes of every kind (with fill values, so chunks get erased), the
 * model of their effect in `ref`, and reads of every kind into `res`. */
static void workload(zarr_array *a, int32_t *ref, struct work_result *res) {
    uint64_t rng = 2024, zero[2] = {0, 0}, all[2] = {WR, WC};
    int32_t *buf = malloc(sizeof(int32_t) * WR * WC);
    for (int i = 0; i < WR * WC; i++) buf[i] = ref[i] = (int32_t)(rng_next(&rng) % 100000);
    CHECK_OK(zarr_array_write(a, 2, zero, all, buf, sizeof(int32_t) * WR * WC));
    for (int k = 0; k < 12; k++) { /* strided writes, some of the fill value (-1) */
        uint64_t step[2] = {1 + rng_below(&rng, 5), 1 + rng_below(&rng, 5)}, start[2], count[2];
        start[0] = rng_below(&rng, WR), start[1] = rng_below(&rng, WC);
        count[0] = 1 + rng_below(&rng, (WR - 1 - start[0]) / step[0] + 1);
        count[1] = 1 + rng_below(&rng, (WC - 1 - start[1]) / step[1] + 1);
        for (uint64_t i = 0; i < count[0]; i++)
            for (uint64_t j = 0; j < count[1]; j++) {
                int32_t v = k % 3 == 0 ? -1 : (int32_t)(k * 1000000 + i * 1000 + j);
                buf[i * count[1] + j] = v;
                ref[(start[0] + i * step[0]) * WC + start[1] + j * step[1]] = v;
            }
        CHECK_OK(zarr_array_write_strided(a, 2, start, count, step, NULL, buf, count[0] * count[1] * 4));
    }
    for (int k = 0; k < 6; k++) { /* orthogonal writes with repeated indices */
        uint64_t rows[30], cols[30];
        zarr_dim_selection sel[2] = {{rows, 1 + rng_below(&rng, 30), 0, 0, NULL}, {cols, 1 + rng_below(&rng, 30), 0, 0, NULL}};
        for (uint64_t i = 0; i < 30; i++) rows[i] = rng_below(&rng, WR), cols[i] = rng_below(&rng, WC);
        rows[sel[0].count - 1] = rows[0];
        for (uint64_t i = 0; i < sel[0].count; i++)
            for (uint64_t j = 0; j < sel[1].count; j++) {
                int32_t v = (int32_t)(-(k + 2) * 100000 - (int64_t)(i * 100 + j));
                buf[i * sel[1].count + j] = v;
                ref[rows[i] * WC + cols[j]] = v;
            }
        CHECK_OK(zarr_array_write_orthogonal(a, 2, sel, NULL, buf, sel[0].count * sel[1].count * 4));
    }
    { /* points, with repeats */
        uint64_t coords[2 * 400];
        for (int i = 0; i < 400; i++) {
            int from = i % 7 == 6 ? i - 3 : i;
            coords[2 * i] = from < i ? coords[2 * from] : rng_below(&rng, WR);
            coords[2 * i + 1] = from < i ? coords[2 * from + 1] : rng_below(&rng, WC);
            buf[i] = i % 5 == 0 ? -1 : 7000000 + i;
            ref[coords[2 * i] * WC + coords[2 * i + 1]] = buf[i];
        }
        CHECK_OK(zarr_array_write_points(a, 2, 400, coords, buf, 400 * 4));
    }
    { /* last, a chunk-aligned box of fill values: those chunks are erased */
        uint64_t start[2] = {32, 16}, count[2] = {48, 64};
        for (uint64_t i = 0; i < count[0] * count[1]; i++) buf[i] = -1;
        for (uint64_t i = 0; i < count[0]; i++)
            for (uint64_t j = 0; j < count[1]; j++) ref[(start[0] + i) * WC + start[1] + j] = -1;
        CHECK_OK(zarr_array_write(a, 2, start, count, buf, count[0] * count[1] * 4));
    }
    /* Reads of every kind. */
    CHECK_OK(zarr_array_read(a, 2, zero, all, res->whole, sizeof res->whole));
    {
        uint64_t start[2] = {3, 5}, count[2] = {40, 40}, step[2] = {3, 2};
        CHECK_OK(zarr_array_read_strided(a, 2, start, count, step, NULL, res->strided, sizeof res->strided));
    }
    {
        uint64_t rows[30];
        zarr_dim_selection sel[2] = {{rows, 30, 0, 0, NULL}, {NULL, 30, 1, 4, NULL}};
        for (int i = 0; i < 30; i++) rows[i] = rng_below(&rng, WR);
        CHECK_OK(zarr_array_read_orthogonal(a, 2, sel, NULL, res->ortho, sizeof res->ortho));
    }
    {
        uint64_t coords[1000];
        for (int i = 0; i < 500; i++) coords[2 * i] = rng_below(&rng, WR), coords[2 * i + 1] = rng_below(&rng, WC);
        CHECK_OK(zarr_array_read_points(a, 2, 500, coords, res->points, sizeof res->points));
    }
    free(buf);
}

/* Whether two directories hold the same chunk files with the same bytes. */
static int same_chunk_files(const char *d1, const char *d2, uint64_t rows, uint64_t cols) {
    int same = 1;
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t j = 0; j < cols; j++) {
            const char *p1 = strf("%s/w/%llu.%llu", d1, (unsigned long long)i, (unsigned long long)j);
            const char *p2 = strf("%s/w/%llu.%llu", d2, (unsigned long long)i, (unsigned long long)j);
            size_t l1 = 0, l2 = 0;
            unsigned char *b1 = file_read(p1, &l1), *b2 = file_read(p2, &l2);
            if (!b1 != !b2 || (b1 && (l1 != l2 || memcmp(b1, b2, l1) != 0))) {
                if (same) fprintf(stderr, "chunk %llu.%llu differs\n", (unsigned long long)i, (unsigned long long)j);
                same = 0;
            }
            free(b1);
            free(b2);
        }
    return same;
}

static void test_same_results_any_threads(void) {
    static const size_t threads[] = {1, 3, 8, 0};
    static const char *const compressors[] = {ZSTD, BLOSC, "null"};
    int32_t *ref = malloc(sizeof(int32_t) * WR * WC);
    struct work_result *res = malloc(sizeof *res * ARRAY_LEN(threads));
    for (size_t c = 0; c < ARRAY_LEN(compressors); c++) {
        char *dirs[ARRAY_LEN(threads)];
        for (size_t t = 0; t < ARRAY_LEN(threads); t++) {
            zarr_store *s;
            zarr_array *a;
            dirs[t] = tmpdir_make();
            CHECK_CTX("%zu threads, compressor %s", threads[t], compressors[c]);
            CHECK_OK(zarr_set_num_threads(threads[t]));
            s = open_store(dirs[t], ZARR_MODE_WRITE);
            a = s ? create_array(s, "w", strf("{\"shape\":[%d,%d],\"chunks\":[16,16],\"dtype\":\"<i4\","
                                              "\"fill_value\":-1,\"compressor\":%s}", WR, WC, compressors[c])) : NULL;
            memset(&res[t], 0, sizeof res[t]);
            if (a) {
                workload(a, ref, &res[t]);
                CHECK_ELEMS(ZARR_DTYPE_INT, 4, res[t].whole, ref, WR * WC); /* right, not just equal */
            }
            CHECK_OK(zarr_array_close(a));
            CHECK_OK(zarr_store_close(s));
            if (t > 0) {
                CHECK(memcmp(&res[t], &res[0], sizeof res[0]) == 0);
                CHECK(same_chunk_files(dirs[0], dirs[t], (WR + 15) / 16, (WC + 15) / 16));
            }
        }
        /* Exactly the chunks that hold something other than fill are stored (the fill box
         * made chunk rows 2..4 x columns 1..4 all fill). */
        CHECK_CTX("compressor %s", compressors[c]);
        {
            int fill_chunks = 0, wrong = 0;
            for (int ci = 0; ci < (WR + 15) / 16; ci++)
                for (int cj = 0; cj < (WC + 15) / 16; cj++) {
                    int all_fill = 1;
                    for (int i = ci * 16; i < WR && i < ci * 16 + 16; i++)
                        for (int j = cj * 16; j < WC && j < cj * 16 + 16; j++) all_fill &= ref[i * WC + j] == -1;
                    fill_chunks += all_fill;
                    if (file_exists(strf("%s/w/%d.%d", dirs[0], ci, cj)) == all_fill && wrong++ == 0)
                        check_fail_at(__FILE__, __LINE__, "chunk %d.%d: all fill %d, file exists %d", ci, cj,
                                      all_fill, !all_fill);
                }
            CHECK_U64_EQ(wrong, 0);
            CHECK(fill_chunks >= 12);
        }
        for (size_t t = 0; t < ARRAY_LEN(threads); t++) tmpdir_remove(dirs[t]);
    }
    CHECK_CTX_CLEAR();
    CHECK_OK(zarr_set_num_threads(0));
    free(res);
    free(ref);
}

/* ---- write_empty_chunks ---------------------------------------------------------------------- */

/* Chunks of a 10x10 array with 4x4 chunks, "." separator: which chunk files exist, as a 9-bit
 * mask (bit 3*i+j for chunk i.j). */
static unsigned chunk_mask(const char *dir, const char *path) {
    unsigned m = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (file_exists(strf("%s/%s/%d.%d", dir, path, i, j))) m |= 1u << (3 * i + j);
    return m;
}

static int check_mask(const char *dir, const char *path, unsigned want, int line) {
    unsigned got = chunk_mask(dir, path);
    check_total++;
    if (got == want) return 1;
    return check_fail_at(__FILE__, line, "chunk files of %s: mask 0x%03x, expected 0x%03x", path, got, want);
}
#define CHECK_MASK(dir, path, want) check_mask((dir), (path), (want), __LINE__)
#define CHUNK(i, j) (1u << (3 * (i) + (j)))

/* Reads the whole 10x10 int32 array and compares it with want. */
static int check_values(zarr_array *a, const int32_t *want, int line) {
    int32_t back[100];
    uint64_t zero[2] = {0, 0}, all[2] = {10, 10};
    if (!check_status(zarr_array_read(a, 2, zero, all, back, sizeof back), ZARR_OK, ZARR_OK, "read all", __FILE__, line))
        return 0;
    return check_elems(ZARR_DTYPE_INT, 4, back, want, 100, __FILE__, line);
}
#define CHECK_VALUES(a, want) check_values((a), (want), __LINE__)

static void test_write_empty_chunks(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "e", "{\"shape\":[10,10],\"chunks\":[4,4],\"dtype\":\"<i4\","
                                             "\"fill_value\":5,\"compressor\":" ZLIB "}") : NULL;
    zarr_array *b = NULL;
    int32_t ref[100], buf[100];
    uint64_t zero[2] = {0, 0}, all[2] = {10, 10}, one[2] = {1, 1};
    bool flag = true;
    if (!a) goto out;
    for (int i = 0; i < 100; i++) ref[i] = 5, buf[i] = 5;

    CHECK_CTX("default");
    if (CHECK_OK(zarr_array_write_empty_chunks(a, &flag))) CHECK(flag == false);
    /* All fill: nothing is stored. */
    CHECK_OK(zarr_array_write(a, 2, zero, all, buf, sizeof buf));
    CHECK_MASK(dir, "e", 0);
    CHECK_U64_EQ(count_files(strf("%s/e", dir)), 1); /* .zarray only */
    CHECK_VALUES(a, ref);
    /* One non-fill element: only its chunk is stored. */
    buf[0] = 1, ref[0] = 1;
    CHECK_OK(zarr_array_write(a, 2, zero, all, buf, sizeof buf));
    CHECK_MASK(dir, "e", CHUNK(0, 0));
    CHECK_VALUES(a, ref);
    /* A partial write that puts the fill value back: the chunk is all fill and goes away. */
    CHECK_CTX("partial write back to fill");
    buf[0] = 5, ref[0] = 5;
    CHECK_OK(zarr_array_write(a, 2, zero, one, buf, 4));
    CHECK_MASK(dir, "e", 0);
    CHECK_VALUES(a, ref);

    /* A full chunk of data, then overwritten with the fill value through write_strided. */
    CHECK_CTX("strided overwrite of a whole chunk");
    {
        uint64_t st[2] = {4, 4}, c[2] = {4, 4};
        int32_t d[16];
        for (int i = 0; i < 16; i++) d[i] = 100 + i, ref[(4 + i / 4) * 10 + 4 + i % 4] = 100 + i;
        CHECK_OK(zarr_array_write_strided(a, 2, st, c, NULL, NULL, d, sizeof d));
        CHECK_MASK(dir, "e", CHUNK(1, 1));
        CHECK_VALUES(a, ref);
        for (int i = 0; i < 16; i++) d[i] = 5, ref[(4 + i / 4) * 10 + 4 + i % 4] = 5;
        CHECK_OK(zarr_array_write_strided(a, 2, st, c, NULL, NULL, d, sizeof d));
        CHECK_MASK(dir, "e", 0);
        CHECK_VALUES(a, ref);
    }
    /* Data scattered over two chunks, removed element by element with a stepped write of a
     * broadcast fill value (zero buffer strides). */
    CHECK_CTX("stepped fill write");
    {
        uint64_t st[2] = {0, 1}, c[2] = {3, 3}, step[2] = {3, 3}, zz[2] = {0, 0};
        int32_t d[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, five = 5;
        /* rows 0,3,6 x columns 1,4,7: chunks 0.0 0.1 1.0 1.1 */
        CHECK_OK(zarr_array_write_strided(a, 2, st, c, step, NULL, d, sizeof d));
        for (int i = 0; i < 9; i++) ref[(3 * (i / 3)) * 10 + 1 + 3 * (i % 3)] = d[i];
        CHECK_MASK(dir, "e", CHUNK(0, 0) | CHUNK(0, 1) | CHUNK(1, 0) | CHUNK(1, 1));
        CHECK_VALUES(a, ref);
        /* d[4] == 5 is the fill value: the element (3,4) in chunk 0.1 was fill anyway. */
        CHECK_OK(zarr_array_write_strided(a, 2, st, c, step, zz, &five, sizeof five));
        for (int i = 0; i < 9; i++) ref[(3 * (i / 3)) * 10 + 1 + 3 * (i % 3)] = 5;
        CHECK_MASK(dir, "e", 0);
        CHECK_VALUES(a, ref);
    }
    /* The edge chunk (2,2) holds rows/columns 8..9 only; points write it, points clear it. */
    CHECK_CTX("edge chunk via points");
    {
        const uint64_t pts[8] = {8, 8, 9, 9, 8, 9, 9, 8};
        const int32_t d[4] = {-1, -2, -3, -4}, fives[4] = {5, 5, 5, 5};
        CHECK_OK(zarr_array_write_points(a, 2, 4, pts, d, sizeof d));
        ref[88] = -1, ref[99] = -2, ref[89] = -3, ref[98] = -4;
        CHECK_MASK(dir, "e", CHUNK(2, 2));
        CHECK_VALUES(a, ref);
        CHECK_OK(zarr_array_write_points(a, 2, 3, pts, fives, 3 * 4)); /* (9,8) still -4 */
        ref[88] = ref[99] = ref[89] = 5;
        CHECK_MASK(dir, "e", CHUNK(2, 2));
        CHECK_VALUES(a, ref);
        CHECK_OK(zarr_array_write_points(a, 2, 1, pts + 6, fives, 4));
        ref[98] = 5;
        CHECK_MASK(dir, "e", 0);
        CHECK_VALUES(a, ref);
    }
    /* Orthogonal write of the fill value over exactly the stored elements. */
    CHECK_CTX("orthogonal fill write");
    {
        const uint64_t rows[2] = {7, 2}, cols[3] = {9, 0, 9};
        zarr_dim_selection sel[2] = {{rows, 2, 0, 0, NULL}, {cols, 3, 0, 0, NULL}};
        int32_t d[6] = {11, 12, 13, 14, 15, 16}, f[6] = {5, 5, 5, 5, 5, 5};
        CHECK_OK(zarr_array_write_orthogonal(a, 2, sel, NULL, d, sizeof d));
        ref[79] = 13, ref[70] = 12, ref[29] = 16, ref[20] = 15; /* repeats: last wins */
        CHECK_MASK(dir, "e", CHUNK(1, 0) | CHUNK(1, 2) | CHUNK(0, 0) | CHUNK(0, 2));
        CHECK_VALUES(a, ref);
        /* Only row 7 back to fill: chunks 1.x go, 0.x stay. */
        sel[0].count = 1;
        CHECK_OK(zarr_array_write_orthogonal(a, 2, sel, NULL, f, 3 * 4));
        ref[79] = ref[70] = 5;
        CHECK_MASK(dir, "e", CHUNK(0, 0) | CHUNK(0, 2));
        CHECK_VALUES(a, ref);
        sel[0].indices = rows + 1;
        CHECK_OK(zarr_array_write_orthogonal(a, 2, sel, NULL, f, 3 * 4));
        ref[29] = ref[20] = 5;
        CHECK_MASK(dir, "e", 0);
        CHECK_VALUES(a, ref);
    }
    /* A partial fill write into a chunk that was never stored does not create it. */
    CHECK_CTX("partial fill write into a missing chunk");
    {
        uint64_t st[2] = {5, 1}, c[2] = {2, 2};
        int32_t f[4] = {5, 5, 5, 5};
        CHECK_OK(zarr_array_write(a, 2, st, c, f, sizeof f));
        CHECK_MASK(dir, "e", 0);
    }

    /* With the flag set, all-fill chunks are written. */
    CHECK_CTX("write_empty_chunks true");
    CHECK_OK(zarr_array_set_write_empty_chunks(a, true));
    if (CHECK_OK(zarr_array_write_empty_chunks(a, &flag))) CHECK(flag == true);
    for (int i = 0; i < 100; i++) buf[i] = 5;
    CHECK_OK(zarr_array_write(a, 2, zero, all, buf, sizeof buf));
    CHECK_MASK(dir, "e", 0x1ff);
    CHECK_VALUES(a, ref);
    {
        uint64_t pt[2] = {9, 9};
        int32_t five = 5;
        CHECK_OK(zarr_array_set_write_empty_chunks(a, false));
        CHECK_OK(zarr_array_write_points(a, 2, 1, pt, &five, 4)); /* chunk 2.2 rewritten: all fill */
        CHECK_MASK(dir, "e", 0x1ff & ~CHUNK(2, 2));
        CHECK_OK(zarr_array_set_write_empty_chunks(a, true));
        CHECK_OK(zarr_array_write_points(a, 2, 1, pt, &five, 4));
        CHECK_MASK(dir, "e", 0x1ff);
    }
    /* The flag belongs to the handle: another handle on the same array has the default. */
    b = open_array(s, "e");
    if (b) {
        if (CHECK_OK(zarr_array_write_empty_chunks(b, &flag))) CHECK(flag == false);
        if (CHECK_OK(zarr_array_write_empty_chunks(a, &flag))) CHECK(flag == true);
        /* Overwriting existing all-fill chunks through it erases them. */
        CHECK_OK(zarr_array_write(b, 2, zero, all, buf, sizeof buf));
        CHECK_MASK(dir, "e", 0);
        CHECK_VALUES(b, ref);
    }
    CHECK_CTX("NULL pointers");
    CHECK_STATUS(zarr_array_set_write_empty_chunks(NULL, true), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_write_empty_chunks(NULL, &flag), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_write_empty_chunks(a, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_OK(zarr_array_close(b));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    /* From disk, read-only. */
    CHECK_CTX("reopened");
    s = open_store(dir, ZARR_MODE_READ);
    a = s ? open_array(s, "e") : NULL;
    if (a) CHECK_VALUES(a, ref);
out:
    CHECK_CTX_CLEAR();
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* A NaN fill value: chunks of NaN hold only the fill value. Nested keys ("/"). */
static void test_empty_chunks_nan_fill(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "n", "{\"shape\":[6,6],\"chunks\":[3,3],\"dtype\":\"<f8\","
                                             "\"fill_value\":\"NaN\",\"dimension_separator\":\"/\"}") : NULL;
    double d[36];
    uint64_t zero[2] = {0, 0}, all[2] = {6, 6}, pt[2] = {4, 4};
    if (!a) goto out;
    for (int i = 0; i < 36; i++) d[i] = NAN;
    CHECK_OK(zarr_array_write(a, 2, zero, all, d, sizeof d));
    CHECK_U64_EQ(count_files(strf("%s/n", dir)), 1);
    d[0] = 1.5;
    CHECK_OK(zarr_array_write_points(a, 2, 1, pt, d, 8));
    CHECK(file_exists(strf("%s/n/1/1", dir)));
    CHECK_U64_EQ(count_files(strf("%s/n", dir)), 2);
    d[0] = NAN;
    CHECK_OK(zarr_array_write_points(a, 2, 1, pt, d, 8));
    CHECK(!file_exists(strf("%s/n/1/1", dir)));
    CHECK_U64_EQ(count_files(strf("%s/n", dir)), 1);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* fill_value null: every written chunk is stored, zeros included, whatever the flag. */
static void test_empty_chunks_null_fill(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "z", "{\"shape\":[10,10],\"chunks\":[4,4],\"dtype\":\"<i4\","
                                             "\"fill_value\":null,\"compressor\":" ZLIB "}") : NULL;
    int32_t zeros[100] = {0}, fv = 99;
    uint64_t zero[2] = {0, 0}, all[2] = {10, 10}, pt[2] = {9, 9}, st[2] = {4, 0}, c[2] = {4, 4};
    bool is_set = true, flag = true;
    if (!a) goto out;
    if (CHECK_OK(zarr_array_fill_value(a, &fv, 4, &is_set))) CHECK(!is_set && fv == 0);
    if (CHECK_OK(zarr_array_write_empty_chunks(a, &flag))) CHECK(flag == false);
    CHECK_OK(zarr_array_write(a, 2, st, c, zeros, 16 * 4)); /* one whole chunk of zeros */
    CHECK_MASK(dir, "z", CHUNK(1, 0));
    CHECK_OK(zarr_array_write_points(a, 2, 1, pt, zeros, 4));
    CHECK_MASK(dir, "z", CHUNK(1, 0) | CHUNK(2, 2));
    CHECK_OK(zarr_array_write(a, 2, zero, all, zeros, sizeof zeros));
    CHECK_MASK(dir, "z", 0x1ff);
    CHECK_VALUES(a, zeros);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* ---- concurrency --------------------------------------------------------------------------- */

enum { NT = 4, CR = 61, CC = 37 }; /* chunks 8x8: every call is partial in every chunk */

struct cjob {
    zarr_array *a;
    int t, phase, failures;
};

static int32_t cval(int phase, uint64_t i, uint64_t j) { return phase * 1000000 + (int32_t)(i * 1000 + j); }

/* The value (i, j) must hold after `phase` (fill -1 where a phase writes fill). */
static int32_t expected(int phase, uint64_t i, uint64_t j) {
    if (phase == 4) return (i % NT) % 2 == 0 ? -1 : cval(4, i, j);
    if (phase == 5) return -1;
    return cval(phase, i, j);
}

static void *cwork(void *arg) {
    struct cjob *job = arg;
    int32_t *buf = malloc(sizeof(int32_t) * CR * CC);
    uint64_t t = (uint64_t)job->t;
    switch (job->phase) {
    case 0: /* rows t, t+NT, ...: one strided call per block of 5 columns */
        for (uint64_t j0 = 0; j0 < CC; j0 += 5) {
            uint64_t start[2] = {t, j0}, count[2] = {(CR - t + NT - 1) / NT, j0 + 5 <= CC ? 5 : CC - j0}, step[2] = {NT, 1};
            for (uint64_t i = 0; i < count[0]; i++)
                for (uint64_t j = 0; j < count[1]; j++) buf[i * count[1] + j] = cval(0, t + i * NT, j0 + j);
            if (zarr_array_write_strided(job->a, 2, start, count, step, NULL, buf, count[0] * count[1] * 4) != ZARR_OK)
                job->failures++;
        }
        break;
    case 1: /* columns t, t+NT, ... from a Fortran-order buffer, in blocks of 7 rows */
        for (uint64_t i0 = 0; i0 < CR; i0 += 7) {
            uint64_t start[2] = {i0, t}, count[2] = {i0 + 7 <= CR ? 7 : CR - i0, (CC - t + NT - 1) / NT};
            uint64_t step[2] = {1, NT}, strides[2] = {1, count[0]};
            for (uint64_t i = 0; i < count[0]; i++)
                for (uint64_t j = 0; j < count[1]; j++) buf[i + j * count[0]] = cval(1, i0 + i, t + j * NT);
            if (zarr_array_write_strided(job->a, 2, start, count, step, strides, buf, count[0] * count[1] * 4) != ZARR_OK)
                job->failures++;
        }
        break;
    case 2: { /* points whose linear index is t mod NT, 50 per call */
        uint64_t coords[100];
        int32_t vals[50];
        size_t n = 0;
        for (uint64_t k = t; k < CR * CC; k += NT) {
            coords[2 * n] = k / CC, coords[2 * n + 1] = k % CC;
            vals[n] = cval(2, k / CC, k % CC);
            if (++n == 50 || k + NT >= CR * CC) {
                if (zarr_array_write_points(job->a, 2, n, coords, vals, n * 4) != ZARR_OK) job->failures++;
                n = 0;
            }
        }
        break;
    }
    case 3: { /* orthogonal: this thread's rows in reverse order x a column range, 3 calls */
        uint64_t rows[CR];
        uint64_t n = 0;
        for (uint64_t i = CR; i-- > 0;)
            if (i % NT == t) rows[n++] = i;
        for (uint64_t j0 = 0; j0 < CC; j0 += 13) {
            zarr_dim_selection sel[2] = {{rows, n, 0, 0, NULL}, {NULL, j0 + 13 <= CC ? 13 : CC - j0, j0, 1, NULL}};
            for (uint64_t i = 0; i < n; i++)
                for (uint64_t j = 0; j < sel[1].count; j++) buf[i * sel[1].count + j] = cval(3, rows[i], j0 + j);
            if (zarr_array_write_orthogonal(job->a, 2, sel, NULL, buf, n * sel[1].count * 4) != ZARR_OK) job->failures++;
        }
        break;
    }
    case 4: /* rows as in phase 0, one call each; even threads write the fill value */
    case 5: /* everyone writes the fill value: every chunk must end up erased */
        for (uint64_t i = t; i < CR; i += NT) {
            uint64_t start[2] = {i, 0}, count[2] = {1, CC}, zstr[2] = {0, 0};
            int32_t fill = -1;
            int fills = job->phase == 5 || t % 2 == 0;
            for (uint64_t j = 0; j < CC; j++) buf[j] = cval(4, i, j);
            if ((fills ? zarr_array_write_strided(job->a, 2, start, count, NULL, zstr, &fill, 4)
                       : zarr_array_write_strided(job->a, 2, start, count, NULL, NULL, buf, CC * 4)) != ZARR_OK)
                job->failures++;
        }
        break;
    }
    free(buf);
    return NULL;
}

static void run_phase(zarr_array *a, int phase) {
    pthread_t th[NT];
    struct cjob jobs[NT];
    int32_t *back = malloc(sizeof(int32_t) * CR * CC);
    uint64_t zero[2] = {0, 0}, all[2] = {CR, CC};
    int wrong = 0;
    for (int k = 0; k < NT; k++) {
        jobs[k] = (struct cjob){a, k, phase, 0};
        CHECK(pthread_create(&th[k], NULL, cwork, &jobs[k]) == 0);
    }
    for (int k = 0; k < NT; k++) {
        pthread_join(th[k], NULL);
        CHECK_U64_EQ(jobs[k].failures, 0);
    }
    if (CHECK_OK(zarr_array_read(a, 2, zero, all, back, sizeof(int32_t) * CR * CC)))
        for (uint64_t i = 0; i < CR; i++)
            for (uint64_t j = 0; j < CC; j++)
                if (back[i * CC + j] != expected(phase, i, j) && wrong++ == 0)
                    check_fail_at(__FILE__, __LINE__, "phase %d: [%llu][%llu] = %d, expected %d", phase,
                                  (unsigned long long)i, (unsigned long long)j, back[i * CC + j], expected(phase, i, j));
    CHECK_U64_EQ(wrong, 0);
    free(back);
}

static void test_concurrent_selection_writes(void) {
    static const size_t workers[] = {1, 4};
    static const struct { const char *compressor, *order, *dtype; } cases[] = {
        {ZSTD, "C", "<i4"},
        {"null", "F", ">i4"},
        {BLOSC, "C", ">i4"},
    };
    for (size_t w = 0; w < ARRAY_LEN(workers); w++)
        for (size_t c = 0; c < ARRAY_LEN(cases); c++)
            for (int where = 0; where < 2; where++) {
                char *dir = tmpdir_make();
                zarr_store *s;
                zarr_array *a;
                CHECK_CTX("%zu workers, %s store, %s order %s, compressor %s", workers[w], where ? "directory" : "memory",
                          cases[c].dtype, cases[c].order, cases[c].compressor);
                CHECK_OK(zarr_set_num_threads(workers[w]));
                s = open_store(where ? dir : "memory:", ZARR_MODE_WRITE);
                a = s ? create_array(s, "c", strf("{\"shape\":[%d,%d],\"chunks\":[8,8],\"dtype\":\"%s\",\"order\":\"%s\","
                                                  "\"fill_value\":-1,\"compressor\":%s}",
                                                  CR, CC, cases[c].dtype, cases[c].order, cases[c].compressor)) : NULL;
                if (a) {
                    for (int phase = 0; phase <= 5; phase++) run_phase(a, phase);
                    if (where) CHECK_U64_EQ(count_files(strf("%s/c", dir)), 1); /* all erased */
                    CHECK_OK(zarr_array_close(a));
                }
                CHECK_OK(zarr_store_close(s));
                tmpdir_remove(dir);
            }
    CHECK_CTX_CLEAR();
    CHECK_OK(zarr_set_num_threads(0));
}

int main(void) {
    /* The children must fork before this process first calls libzarr. */
    test_env_default("3", 3);
    test_env_default("1", 1);
    unsetenv("ZARR_NUM_THREADS");
    test_thread_counts();
    test_same_results_any_threads();
    test_write_empty_chunks();
    test_empty_chunks_nan_fill();
    test_empty_chunks_null_fill();
    test_concurrent_selection_writes();
    return check_summary("test_engine");
}
