/* Copies through the public header: zarr_store_copy (a subtree or a whole store, keys
 * verbatim, between a directory and a zip, nested "/" chunk keys), zarr_array_copy_to
 * (rechunk, new codec and order), progress reports (from the calling thread, monotonic, the
 * last one complete), cancellation (ZARR_ERR_CANCELLED, consistent partial copies) and errors. */
#include "check.h"
#include "testutil.h"

#include <pthread.h>

#define MAX_REPORTS 4096

/* What a progress callback saw, and when it should cancel. */
typedef struct {
    zarr_progress seen[MAX_REPORTS];
    size_t n;
    uint64_t cancel_at_items; /* cancel once items_done reaches this (UINT64_MAX: never) */
    pthread_t thread;         /* the thread that started the copy */
    int other_thread;         /* set if a call came from another thread */
} recorder;

static void recorder_init(recorder *r, uint64_t cancel_at_items) {
    r->n = 0;
    r->cancel_at_items = cancel_at_items;
    r->thread = pthread_self();
    r->other_thread = 0;
}

static int32_t record(const zarr_progress *p, void *user_data) {
    recorder *r = user_data;
    if (r->n < MAX_REPORTS) r->seen[r->n++] = *p;
    if (!pthread_equal(pthread_self(), r->thread)) r->other_thread = 1;
    return p->items_done >= r->cancel_at_items ? 1 : 0;
}

/* The reports start at nothing done, grow, and end complete with the given totals. */
static void check_reports(const recorder *r, uint64_t items, uint64_t bytes) {
    if (!CHECK(r->n >= 2)) return;
    CHECK(!r->other_thread);
    CHECK_U64_EQ(r->seen[0].items_done, 0);
    CHECK_U64_EQ(r->seen[0].bytes_done, 0);
    for (size_t i = 1; i < r->n; i++) {
        CHECK(r->seen[i].items_done > r->seen[i - 1].items_done);
        CHECK(r->seen[i].bytes_done >= r->seen[i - 1].bytes_done);
        CHECK(r->seen[i].items_total == items && r->seen[i].bytes_total == bytes);
    }
    CHECK_U64_EQ(r->seen[r->n - 1].items_done, items);
    CHECK_U64_EQ(r->seen[r->n - 1].bytes_done, bytes);
}

static uint64_t tree_bytes;
static int add_size(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)path, (void)ftw;
    if (flag == FTW_F) tree_bytes += (uint64_t)sb->st_size;
    return 0;
}

/* Bytes of the regular files below dir. */
static uint64_t dir_bytes(const char *dir) {
    tree_bytes = 0;
    nftw(dir, add_size, 16, FTW_PHYS);
    return tree_bytes;
}

static zarr_node_kind kind_of(zarr_store *s, const char *path) {
    zarr_node_kind k = -1;
    CHECK_OK(zarr_store_node_kind(s, path, &k));
    return k;
}

#define ROWS 60
#define COLS 50
static int32_t grid[ROWS][COLS];

/* Reads array `path` of s whole and compares it with grid. */
static void check_grid(zarr_store *s, const char *path) {
    static int32_t back[ROWS][COLS];
    uint64_t start[2] = {0, 0}, count[2] = {ROWS, COLS};
    zarr_array *a = open_array(s, path);
    if (!a) return;
    memset(back, 0, sizeof back);
    CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back));
    CHECK(memcmp(back, grid, sizeof grid) == 0);
    zarr_array_close(a);
}

static recorder rec;

int main(void) {
    char *src_dir = tmpdir_make(), *dst_dir = tmpdir_make();
    char zip[4096];
    snprintf(zip, sizeof zip, "%s/copy.zip", dst_dir);
    zarr_store *src = open_store(src_dir, ZARR_MODE_WRITE);
    zarr_store *dst = open_store(strf("%s/tree", dst_dir), ZARR_MODE_WRITE);
    if (!src || !dst) return 1;

    /* The source: g/a with nested keys and 4 x 4 chunks (15 x 13 = 195 of them, plus g/a's
     * metadata, attributes and g/sub/b: more keys than one batch of 256 after g/big). */
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) grid[i][j] = i * 1000 + j;
    uint64_t start[2] = {0, 0}, count[2] = {ROWS, COLS};
    zarr_array *a = create_array(src, "g/a", "{\"shape\": [60, 50], \"chunks\": [4, 4], \"dtype\": \"<i4\", "
                                             "\"dimension_separator\": \"/\", "
                                             "\"compressor\": {\"id\": \"zstd\", \"level\": 1}}");
    zarr_array *b = create_array(src, "g/sub/b", "{\"shape\": [60, 50], \"chunks\": [6, 5], \"dtype\": \"<i4\"}");
    if (!a || !b) return 1;
    CHECK_OK(zarr_array_write(a, 2, start, count, grid, sizeof grid));
    CHECK_OK(zarr_array_write(b, 2, start, count, grid, sizeof grid));
    CHECK_OK(zarr_array_attrs_set(a, "{\"units\": \"K\"}"));
    zarr_array_close(b);
    const long keys = count_files(strf("%s/g", src_dir));
    const uint64_t bytes = dir_bytes(strf("%s/g", src_dir));
    CHECK(keys == 15 * 13 + 2 + 1 + 100 + 1 + 1);

    /* A subtree into a directory, under new ancestors. */
    recorder_init(&rec, UINT64_MAX);
    CHECK_OK(zarr_store_copy(src, "g", dst, "x/y", record, &rec));
    check_reports(&rec, (uint64_t)keys, bytes);
    CHECK(rec.n >= 3); /* the start and at least two batches */
    CHECK(kind_of(dst, "x") == ZARR_NODE_GROUP);
    CHECK(file_exists(strf("%s/tree/x/y/a/14/12", dst_dir)));
    CHECK(count_files(strf("%s/tree/x/y", dst_dir)) == keys);
    check_grid(dst, "x/y/a");
    check_grid(dst, "x/y/sub/b");

    /* The whole store into a zip, no callback; zarr_store_close writes it. */
    zarr_store *z = open_store(zip, ZARR_MODE_WRITE);
    CHECK_OK(zarr_store_copy(src, "", z, "", NULL, NULL));
    CHECK_OK(zarr_store_close(z));
    z = open_store(zip, ZARR_MODE_READ);
    if (z) {
        check_grid(z, "g/a");
        check_grid(z, "g/sub/b");
        /* ... and back out of it, within one call per direction. */
        CHECK_OK(zarr_store_copy(z, "g/sub", dst, "from_zip", NULL, NULL));
        check_grid(dst, "from_zip/b");
        CHECK_STATUS(zarr_store_copy(src, "g", z, "again", NULL, NULL), ZARR_ERR_READ_ONLY);
        zarr_store_close(z);
    }

    /* Within one store, to another path. */
    CHECK_OK(zarr_store_copy(src, "g/sub", src, "h", NULL, NULL));
    check_grid(src, "h/b");

    /* Cancelled at the start: nothing happens. */
    recorder_init(&rec, 0);
    CHECK_STATUS(zarr_store_copy(src, "g", dst, "c/d", record, &rec), ZARR_ERR_CANCELLED);
    CHECK(rec.n == 1);
    CHECK_CONTAINS(zarr_last_error(), "cancelled");
    CHECK(kind_of(dst, "c") == ZARR_NODE_NONE);
    /* Cancelled after the first batch: the keys copied stay, but no node is visible until it
     * is complete (its metadata goes last); a retry completes the copy. */
    recorder_init(&rec, 1);
    CHECK_STATUS(zarr_store_copy(src, "g", dst, "c/d", record, &rec), ZARR_ERR_CANCELLED);
    CHECK(rec.n == 2 && rec.seen[1].items_done < (uint64_t)keys);
    CHECK(count_files(strf("%s/tree/c/d", dst_dir)) == (long)rec.seen[1].items_done);
    CHECK(kind_of(dst, "c/d") == ZARR_NODE_NONE);
    CHECK(kind_of(dst, "c/d/a") == ZARR_NODE_NONE);
    CHECK_OK(zarr_store_copy(src, "g", dst, "c/d", NULL, NULL));
    check_grid(dst, "c/d/a");

    /* Store copy errors. */
    CHECK_STATUS(zarr_store_copy(src, "nope", dst, "n", NULL, NULL), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_store_copy(src, "g", dst, "x/y", NULL, NULL), ZARR_ERR_ALREADY_EXISTS);
    CHECK_STATUS(zarr_store_copy(src, "g", dst, "x/y/a/inside", NULL, NULL), ZARR_ERR_ALREADY_EXISTS);
    CHECK_STATUS(zarr_store_copy(src, "g", src, "g/inside", NULL, NULL), ZARR_ERR_INVALID_PATH);
    CHECK_STATUS(zarr_store_copy(src, "", src, "elsewhere", NULL, NULL), ZARR_ERR_INVALID_PATH);
    CHECK_STATUS(zarr_store_copy(src, "g/../x", dst, "n", NULL, NULL), ZARR_ERR_INVALID_PATH);
    CHECK_STATUS(zarr_store_copy(NULL, "g", dst, "n", NULL, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_store_copy(src, NULL, dst, "n", NULL, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_store_copy(src, "g", NULL, "n", NULL, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_store_copy(src, "g", dst, NULL, NULL, NULL), ZARR_ERR_NULL_POINTER);
    CHECK(kind_of(dst, "n") == ZARR_NODE_NONE);

    /* Re-encoding an array: new chunks (not dividing the shape), codec and order. */
    recorder_init(&rec, UINT64_MAX);
    CHECK_OK(zarr_array_copy_to(a, dst, "r/a", "{\"chunks\": [7, 9], \"order\": \"F\", "
                                                "\"compressor\": {\"id\": \"zlib\", \"level\": 5}}",
                                record, &rec));
    check_reports(&rec, ROWS * COLS, sizeof grid);
    check_grid(dst, "r/a");
    zarr_array *r = open_array(dst, "r/a");
    if (r) {
        uint64_t chunks[2] = {0, 0};
        zarr_order order = -1;
        char *comp = NULL, *attrs = NULL;
        CHECK_OK(zarr_array_chunks(r, 2, chunks));
        CHECK(chunks[0] == 7 && chunks[1] == 9);
        CHECK_OK(zarr_array_order(r, &order));
        CHECK(order == ZARR_ORDER_F);
        if (CHECK_OK(zarr_array_compressor_json(r, &comp))) CHECK_JSON_HAS(comp, "\"level\":5");
        if (CHECK_OK(zarr_array_attrs_get(r, &attrs))) CHECK_CONTAINS(attrs, "\"K\"");
        zarr_string_free(comp);
        zarr_string_free(attrs);
        zarr_array_close(r);
    }
    CHECK(count_files(strf("%s/tree/r/a", dst_dir)) == 9 * 6 + 2);
    /* No overrides (NULL) and no callback: the same array elsewhere. */
    CHECK_OK(zarr_array_copy_to(a, dst, "r/same", NULL, NULL, NULL));
    check_grid(dst, "r/same");
    CHECK(file_exists(strf("%s/tree/r/same/14/12", dst_dir)));
    /* Cancelled at the start: no array. */
    recorder_init(&rec, 0);
    CHECK_STATUS(zarr_array_copy_to(a, dst, "r/cancelled", "{}", record, &rec), ZARR_ERR_CANCELLED);
    CHECK(rec.n == 1 && kind_of(dst, "r/cancelled") == ZARR_NODE_NONE);

    /* Array copy errors: nothing is created. */
    CHECK_STATUS(zarr_array_copy_to(a, dst, "e", "{\"shape\": [60, 51]}", NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "shape");
    CHECK_STATUS(zarr_array_copy_to(a, dst, "e", "{\"dtype\": \"<i8\"}", NULL, NULL), ZARR_ERR_UNSUPPORTED);
    CHECK_CONTAINS(zarr_last_error(), "dtype");
    CHECK_OK(zarr_array_copy_to(a, dst, "same_dtype", "{\"dtype\": \"<i4\", \"shape\": [60, 50]}", NULL, NULL));
    CHECK_STATUS(zarr_array_copy_to(a, dst, "e", "{\"colour\": 1}", NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "colour");
    CHECK_STATUS(zarr_array_copy_to(a, dst, "e", "[1]", NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_copy_to(a, dst, "e", "{\"chunks\": [0, 1]}", NULL, NULL), ZARR_ERR_INVALID_METADATA);
    CHECK_STATUS(zarr_array_copy_to(a, dst, "r/a", NULL, NULL, NULL), ZARR_ERR_ALREADY_EXISTS);
    CHECK_STATUS(zarr_array_copy_to(NULL, dst, "e", NULL, NULL, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_copy_to(a, NULL, "e", NULL, NULL, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_copy_to(a, dst, NULL, NULL, NULL, NULL), ZARR_ERR_NULL_POINTER);
    CHECK(kind_of(dst, "e") == ZARR_NODE_NONE);
    zarr_store *ro = open_store(src_dir, ZARR_MODE_READ);
    CHECK_STATUS(zarr_array_copy_to(a, ro, "e", NULL, NULL, NULL), ZARR_ERR_READ_ONLY);
    zarr_store_close(ro);

    zarr_array_close(a);
    zarr_store_close(src);
    zarr_store_close(dst);
    tmpdir_remove(src_dir);
    tmpdir_remove(dst_dir);
    return check_summary("test_copy");
}
