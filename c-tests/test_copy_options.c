/* Copies with zarr-python 2's options through the public header: zarr_store_copy_options
 * (copy_store: excludes/includes, if_exists raise/skip/replace, dry_run, the log lines and the
 * counts) and zarr_node_copy (copy and copy_all: a group re-encoded with new codecs, shallow,
 * without_attrs, if_exists incl. skip_initialized, dry_run, cancellation), NULL callbacks and
 * counts, and bad options refused with messages naming them. */
#include "check.h"
#include "testutil.h"

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

static zarr_node_kind kind_of(zarr_store *s, const char *path) {
    zarr_node_kind k = -1;
    CHECK_OK(zarr_store_node_kind(s, path, &k));
    return k;
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

int main(void) {
    char *src_dir, *d1, *d2, *d3, *d4;
    zarr_store *src = fresh(&src_dir);
    if (!src) return 1;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 5; j++) A[i][j] = i * 100 + j;
    uint64_t start[2] = {0, 0}, count[2] = {6, 5};
    zarr_group *g = NULL;
    CHECK_OK(zarr_group_create(src, "g", &g));
    CHECK_OK(zarr_group_attrs_set(g, "{\"level\": 1}"));
    zarr_group_close(g);
    zarr_array *a = create_array(src, "g/a", "{\"shape\": [6, 5], \"chunks\": [3, 5], \"dtype\": \"<i4\"}");
    zarr_array *b = create_array(src, "g/sub/b", "{\"shape\": [6, 5], \"chunks\": [2, 2], \"dtype\": \"<i4\"}");
    if (!a || !b) return 1;
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
    return check_summary("test_copy_options");
}
