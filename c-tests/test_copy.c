/* test_copy.c - copies through the public header: zarr_store_copy (a subtree or a whole store,
 * keys verbatim, between a directory and a zip, nested "/" chunk keys), zarr_array_copy_to
 * (rechunk, new codec and order), progress reports (from the calling thread, monotonic, the last
 * one complete), cancellation (ZARR_ERR_CANCELLED, consistent partial copies) and errors; and
 * copies with zarr-python 2's options: zarr_store_copy_options (copy_store: excludes/includes,
 * if_exists raise/skip/replace, dry_run, the log lines and the counts) and zarr_node_copy (copy
 * and copy_all: a group re-encoded with new codecs, shallow, without_attrs, if_exists incl.
 * skip_initialized, dry_run, cancellation), NULL callbacks and counts, and bad options refused
 * with messages naming them. */
#include "check.h"
#include "testutil.h"

#include <pthread.h>

/* ---- zarr_store_copy, zarr_array_copy_to ------------------------------------------------- */

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

/* zarr_store_copy and zarr_array_copy_to: subtrees and whole stores, progress, cancellation,
 * re-encoding and errors. */
static void test_store_and_array_copy(void) {
    char *src_dir = tmpdir_make(), *dst_dir = tmpdir_make();
    char zip[4096];
    snprintf(zip, sizeof zip, "%s/copy.zip", dst_dir);
    zarr_store *src = open_store(src_dir, ZARR_MODE_WRITE);
    zarr_store *dst = open_store(strf("%s/tree", dst_dir), ZARR_MODE_WRITE);
    if (!src || !dst) return;

    /* The source: g/a with nested keys and 4 x 4 chunks (15 x 13 = 195 of them, plus g/a's
     * metadata, attributes and g/sub/b: more keys than one batch of 256 after g/big). */
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) grid[i][j] = i * 1000 + j;
    uint64_t start[2] = {0, 0}, count[2] = {ROWS, COLS};
    zarr_array *a = create_array(src, "g/a", "{\"shape\": [60, 50], \"chunks\": [4, 4], \"dtype\": \"<i4\", "
                                             "\"dimension_separator\": \"/\", "
                                             "\"compressor\": {\"id\": \"zstd\", \"level\": 1}}");
    zarr_array *b = create_array(src, "g/sub/b", "{\"shape\": [60, 50], \"chunks\": [6, 5], \"dtype\": \"<i4\"}");
    if (!a || !b) return;
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
}

/* ---- zarr-python 2's options: zarr_store_copy_options, zarr_node_copy -------------------- */

#define MAX_LINES 64

/* What a log callback saw. */
typedef struct {
    char lines[MAX_LINES][160];
    size_t n;
} log_lines;

static void record_line(const char *line, void *user_data) {
    log_lines *log = user_data;
    if (log->n < MAX_LINES) snprintf(log->lines[log->n++], sizeof log->lines[0], "%s", line);
}

static int has_line(const log_lines *log, const char *line) {
    for (size_t i = 0; i < log->n; i++)
        if (strcmp(log->lines[i], line) == 0) return 1;
    return 0;
}

static int cancel_second_array(const zarr_progress *p, void *user_data) {
    int *arrays = user_data;
    if (p->items_done == 0) ++*arrays;
    return *arrays >= 2;
}

static int key_exists(zarr_store *s, const char *key) {
    bool exists = false;
    uint64_t size = 0;
    CHECK_OK(zarr_store_value_size(s, key, &exists, &size));
    return exists;
}

static int32_t A[6][5];

/* Reads array `path` of s whole and compares it with A. */
static void check_a(zarr_store *s, const char *path) {
    int32_t back[6][5];
    uint64_t start[2] = {0, 0}, count[2] = {6, 5};
    zarr_array *a = open_array(s, path);
    if (!a) return;
    memset(back, 0, sizeof back);
    CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back));
    CHECK(memcmp(back, A, sizeof A) == 0);
    zarr_array_close(a);
}

static zarr_store *fresh(char **dir) {
    *dir = tmpdir_make();
    return open_store(*dir, ZARR_MODE_WRITE);
}

/* zarr_store_copy_options and zarr_node_copy: zarr-python 2's copy_store, copy and copy_all. */
static void test_copy_options(void) {
    char *src_dir, *d1, *d2, *d3, *d4;
    zarr_store *src = fresh(&src_dir);
    if (!src) return;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 5; j++) A[i][j] = i * 100 + j;
    uint64_t start[2] = {0, 0}, count[2] = {6, 5};
    zarr_group *g = NULL;
    CHECK_OK(zarr_group_create(src, "g", &g));
    CHECK_OK(zarr_group_attrs_set(g, "{\"level\": 1}"));
    zarr_group_close(g);
    zarr_array *a = create_array(src, "g/a", "{\"shape\": [6, 5], \"chunks\": [3, 5], \"dtype\": \"<i4\"}");
    zarr_array *b = create_array(src, "g/sub/b", "{\"shape\": [6, 5], \"chunks\": [2, 2], \"dtype\": \"<i4\"}");
    if (!a || !b) return;
    CHECK_OK(zarr_array_write(a, 2, start, count, A, sizeof A));
    CHECK_OK(zarr_array_write(b, 2, start, count, A, sizeof A));
    CHECK_OK(zarr_array_attrs_set(a, "{\"units\": \"K\"}"));
    zarr_array_close(a);
    zarr_array_close(b);

    /* copy_store: g without g/sub and without attributes, but keeping g/.zattrs; then again,
     * skipping what is there; dry runs write nothing. */
    log_lines log = {0};
    zarr_copy_counts counts = {9, 9, 9};
    zarr_store *dst = fresh(&d1);
    CHECK_OK(zarr_store_copy_options(src, "g", dst, "h",
                                     "{\"excludes\": [\"^g/sub/\", \"zattrs$\"], \"includes\": \"^g/\\\\.zattrs\"}",
                                     record_line, NULL, &log, &counts));
    CHECK_U64_EQ(counts.copied, 5); /* .zgroup .zattrs a/.zarray a/0.0 a/1.0 */
    CHECK_U64_EQ(counts.skipped, 0);
    CHECK(counts.bytes_copied > 0);
    CHECK(has_line(&log, "copy g/.zattrs -> h/.zattrs"));
    CHECK(has_line(&log, "copy g/a/0.0 -> h/a/0.0"));
    CHECK(!key_exists(dst, "h/a/.zattrs"));
    CHECK(!key_exists(dst, ".zgroup")); /* keys only: no ancestor groups */
    CHECK_CONTAINS(log.lines[log.n - 1], "all done: 5 copied, 0 skipped, ");
    check_a(dst, "h/a");

    CHECK_STATUS(zarr_store_copy_options(src, "g", dst, "h", NULL, NULL, NULL, NULL, &counts),
                 ZARR_ERR_ALREADY_EXISTS);
    CHECK_CONTAINS(zarr_last_error(), "h/");
    CHECK_U64_EQ(counts.copied, 0);
    CHECK(!key_exists(dst, "h/sub/.zgroup")); /* refused before anything was written */
    log.n = 0;
    CHECK_OK(zarr_store_copy_options(src, "g", dst, "h", "{\"if_exists\": \"skip\", \"dry_run\": true}",
                                     record_line, NULL, &log, &counts));
    CHECK_U64_EQ(counts.skipped, 5);
    CHECK_U64_EQ(counts.bytes_copied, 0);
    CHECK(has_line(&log, "skip g/a/0.0 -> h/a/0.0"));
    CHECK_CONTAINS(log.lines[log.n - 1], "dry run: ");
    CHECK(!key_exists(dst, "h/sub/.zgroup"));
    CHECK_OK(zarr_store_copy_options(src, "g", dst, "h", "{\"if_exists\": \"skip\"}", NULL, NULL, NULL,
                                     &counts));
    CHECK_U64_EQ(counts.skipped, 5);
    CHECK(key_exists(dst, "h/sub/.zgroup") && key_exists(dst, "h/a/.zattrs"));
    CHECK_OK(zarr_store_copy_options(src, "g", dst, "h", "{\"if_exists\": \"replace\"}", NULL, NULL, NULL,
                                     NULL));

    /* copy: g re-encoded with zstd into another store, as zarr-python logs it. */
    zarr_store *dst2 = fresh(&d2);
    log.n = 0;
    CHECK_OK(zarr_node_copy(src, "g", dst2, "x/g", "{\"overrides\": {\"compressor\": {\"id\": \"zstd\", \"level\": 3}}}",
                            record_line, NULL, &log, &counts));
    CHECK_U64_EQ(counts.copied, 4);
    CHECK_U64_EQ(counts.bytes_copied, 2 * sizeof A);
    if (CHECK(log.n == 5)) {
        CHECK_STR_EQ(log.lines[0], "copy /g");
        CHECK_STR_EQ(log.lines[1], "copy /g/a (6, 5) int32");
        CHECK_STR_EQ(log.lines[2], "copy /g/sub");
        CHECK_STR_EQ(log.lines[3], "copy /g/sub/b (6, 5) int32");
        CHECK_STR_EQ(log.lines[4], "all done: 4 copied, 0 skipped, 240 bytes copied");
    }
    check_a(dst2, "x/g/a");
    check_a(dst2, "x/g/sub/b");
    CHECK(kind_of(dst2, "x") == ZARR_NODE_GROUP);
    size_t len = 0;
    unsigned char *meta = file_read(strf("%s/x/g/sub/b/.zarray", d2), &len);
    if (CHECK(meta)) {
        CHECK_CONTAINS((char *)meta, "\"zstd\"");
        free(meta);
    }
    CHECK(file_exists(strf("%s/x/g/a/.zattrs", d2)));

    /* if_exists: raise (the default), skip, skip_initialized (g/a has every chunk), replace. */
    CHECK_STATUS(zarr_node_copy(src, "g", dst2, "x/g", NULL, NULL, NULL, NULL, &counts),
                 ZARR_ERR_ALREADY_EXISTS);
    CHECK_CONTAINS(zarr_last_error(), "an object 'a' already exists in destination '/x/g'");
    log.n = 0;
    CHECK_OK(zarr_node_copy(src, "g", dst2, "x/g", "{\"if_exists\": \"skip\"}", record_line, NULL, &log,
                            &counts));
    CHECK_U64_EQ(counts.skipped, 2);
    CHECK(has_line(&log, "skip /g/sub/b (6, 5) int32"));
    /* Erase one chunk of x/g/sub/b: skip_initialized copies it again, but not x/g/a. */
    CHECK_OK(zarr_store_erase(dst2, "x/g/sub/b/0.0"));
    log.n = 0;
    CHECK_OK(zarr_node_copy(src, "g", dst2, "x/g", "{\"if_exists\": \"skip_initialized\"}", record_line, NULL,
                            &log, &counts));
    CHECK(has_line(&log, "skip /g/a (6, 5) int32"));
    CHECK(has_line(&log, "copy /g/sub/b (6, 5) int32"));
    CHECK_U64_EQ(counts.skipped, 1);
    check_a(dst2, "x/g/sub/b");
    CHECK_OK(zarr_node_copy(src, "g", dst2, "x/g", "{\"if_exists\": \"replace\", \"dry_run\": true}", NULL,
                            NULL, NULL, &counts));
    CHECK_U64_EQ(counts.copied, 4);
    CHECK_U64_EQ(counts.bytes_copied, 0);

    /* shallow, without_attrs, copy_all. */
    zarr_store *dst3 = fresh(&d3);
    CHECK_OK(zarr_node_copy(src, "g", dst3, "s", "{\"shallow\": true, \"without_attrs\": true}", NULL, NULL,
                            NULL, &counts));
    CHECK_U64_EQ(counts.copied, 2);
    CHECK(kind_of(dst3, "s/sub") == ZARR_NODE_NONE);
    CHECK(!file_exists(strf("%s/s/a/.zattrs", d3)));
    CHECK(!file_exists(strf("%s/s/.zattrs", d3)));
    CHECK_OK(zarr_node_copy(src, "g", dst3, "all", "{\"copy_all\": true}", NULL, NULL, NULL, &counts));
    CHECK_U64_EQ(counts.copied, 3);
    check_a(dst3, "all/a");
    check_a(dst3, "all/sub/b");
    zarr_group *all = NULL;
    if (CHECK_OK(zarr_group_open(dst3, "all", &all))) {
        char *attrs = NULL;
        CHECK_OK(zarr_group_attrs_get(all, &attrs));
        CHECK_JSON_EQ(attrs, "{\"level\":1}");
        zarr_string_free(attrs);
        zarr_group_close(all);
    }

    /* Cancelling stops the whole copy; the arrays done stay. */
    zarr_store *dst4 = fresh(&d4);
    int arrays = 0;
    CHECK_STATUS(zarr_node_copy(src, "g", dst4, "g", NULL, NULL, cancel_second_array, &arrays, &counts),
                 ZARR_ERR_CANCELLED);
    check_a(dst4, "g/a");
    CHECK(kind_of(dst4, "g/sub/b") == ZARR_NODE_NONE);

    /* Bad options name what is wrong. */
    struct {
        const char *options;
        zarr_status status;
        const char *words;
        int node;
    } bad[] = {
        {"{\"if_exist\": \"skip\"}", ZARR_ERR_INVALID_ARGUMENT, "\"if_exist\"", 0},
        {"{\"if_exists\": \"skip_initialized\"}", ZARR_ERR_INVALID_ARGUMENT, "if_exists", 0},
        {"{\"excludes\": [\"(?=a)\"]}", ZARR_ERR_INVALID_ARGUMENT, "look-around", 0},
        {"{\"includes\": [\"(a)\\\\1\"]}", ZARR_ERR_INVALID_ARGUMENT, "backreferences", 0},
        {"{\"flags\": 256}", ZARR_ERR_UNSUPPORTED, "flags", 0},
        {"[]", ZARR_ERR_INVALID_ARGUMENT, "JSON object", 0},
        {"{\"excludes\": []}", ZARR_ERR_INVALID_ARGUMENT, "\"excludes\"", 1},
        {"{\"shallow\": 1}", ZARR_ERR_INVALID_ARGUMENT, "\"shallow\"", 1},
        {"{\"overrides\": []}", ZARR_ERR_INVALID_ARGUMENT, "\"overrides\"", 1},
        {"{", ZARR_ERR_INVALID_ARGUMENT, "not valid JSON", 1},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        CHECK_CTX("%s", bad[i].options);
        zarr_status st = bad[i].node
                             ? zarr_node_copy(src, "g", dst4, "bad", bad[i].options, NULL, NULL, NULL, NULL)
                             : zarr_store_copy_options(src, "g", dst4, "bad", bad[i].options, NULL, NULL, NULL,
                                                       NULL);
        CHECK_STATUS(st, bad[i].status);
        CHECK_CONTAINS(zarr_last_error(), bad[i].words);
        CHECK(kind_of(dst4, "bad") == ZARR_NODE_NONE);
    }
    CHECK_CTX_CLEAR();
    CHECK_STATUS(zarr_node_copy(src, "nope", dst4, "x", NULL, NULL, NULL, NULL, NULL), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_node_copy(src, "g", src, "g/inner", NULL, NULL, NULL, NULL, NULL), ZARR_ERR_INVALID_PATH);
    CHECK_STATUS(zarr_store_copy_options(NULL, "g", dst4, "x", NULL, NULL, NULL, NULL, NULL),
                 ZARR_ERR_NULL_POINTER);

    zarr_store *stores[] = {src, dst, dst2, dst3, dst4};
    for (size_t i = 0; i < ARRAY_LEN(stores); i++) zarr_store_close(stores[i]);
    char *dirs[] = {src_dir, d1, d2, d3, d4};
    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) tmpdir_remove(dirs[i]);
}

int main(void) {
    test_store_and_array_copy();
    test_copy_options();
    return check_summary("test_copy");
}
