/* test_group_tree.c - a group's subtree: its diagnostics (zarr_group_info_json), its listing as
 * text (zarr-python 2's str(group.tree()) layout) and as nested JSON, whole or to a depth
 * (zarr_group_tree_text_level / zarr_group_tree_json_level: zarr-python's tree(level=)), on
 * directory, memory and zip stores; deep hierarchies, unreadable members and bad arguments; and
 * visiting it (zarr_group_visit: zarr-python 2's visit/visititems: depth first, sorted, paths
 * relative to the group, early stop, a depth limit). */
#include "testutil.h"

#define F8 "{\"shape\":[100],\"chunks\":[10],\"dtype\":\"<f8\"}"
#define I2_NESTED "{\"shape\":[4,6],\"chunks\":[2,3],\"dtype\":\">i2\",\"dimension_separator\":\"/\"}"
#define RECORD "{\"shape\":[3],\"chunks\":[3],\"dtype\":[[\"x\",\"<f4\"],[\"y\",\"|u1\",[2]]]}"

/* The hierarchy of zarr-python's Group.tree() docstring, plus a nested-key array, a record
 * array, a 0-d array and a non-ASCII name. */
static int build(zarr_store *s) {
    static const char *groups[] = {"foo", "bar/baz", "bar/quux", "é"};
    static const struct { const char *path, *meta; } arrays[] = {
        {"bar/quux/baz", F8},
        {"bar/quux/nested", I2_NESTED},
        {"rec", RECORD},
        {"scalar", "{\"shape\":[],\"chunks\":[],\"dtype\":\"|b1\"}"},
    };
    zarr_group *g;
    for (size_t i = 0; i < ARRAY_LEN(groups); i++) {
        if (!CHECK_OK(zarr_group_create(s, groups[i], &g))) return 0;
        zarr_group_close(g);
    }
    for (size_t i = 0; i < ARRAY_LEN(arrays); i++) {
        zarr_array *a = create_array(s, arrays[i].path, arrays[i].meta);
        if (!a) return 0;
        if (i == 1) { /* a written chunk: its "0/0" directory must not show as a member */
            int16_t v[6] = {1, 2, 3, 4, 5, 6};
            uint64_t start[2] = {0, 0}, count[2] = {2, 3};
            CHECK_OK(zarr_array_write(a, 2, start, count, v, sizeof v));
        }
        zarr_array_close(a);
    }
    return 1;
}

static const char *ROOT_TEXT =
    "/\n"
    " ├── bar\n"
    " │   ├── baz\n"
    " │   └── quux\n"
    " │       ├── baz (100,) float64\n"
    " │       └── nested (4, 6) >i2\n"
    " ├── foo\n"
    " ├── rec (3,) [('x', '<f4'), ('y', 'u1', (2,))]\n"
    " ├── scalar () bool\n"
    " └── é";

static const char *BAR_TEXT =
    "bar\n"
    " ├── baz\n"
    " └── quux\n"
    "     ├── baz (100,) float64\n"
    "     └── nested (4, 6) >i2";

static const char *BAR_JSON =
    "{\"name\":\"bar\",\"path\":\"bar\",\"kind\":\"group\",\"children\":["
    "{\"name\":\"baz\",\"path\":\"bar/baz\",\"kind\":\"group\",\"children\":[]},"
    "{\"name\":\"quux\",\"path\":\"bar/quux\",\"kind\":\"group\",\"children\":["
    "{\"name\":\"baz\",\"path\":\"bar/quux/baz\",\"kind\":\"array\",\"shape\":[100],\"chunks\":[10],"
    "\"dtype\":\"<f8\"},"
    "{\"name\":\"nested\",\"path\":\"bar/quux/nested\",\"kind\":\"array\",\"shape\":[4,6],"
    "\"chunks\":[2,3],\"dtype\":\">i2\"}]}]}";

/* The tree text and JSON of `path`, checked against the expected ones. */
static void check_tree(zarr_store *s, const char *path, const char *text, const char *json) {
    zarr_group *g = NULL;
    char *out = NULL;
    CHECK_CTX("group \"%s\"", path);
    if (!CHECK_OK(zarr_group_open(s, path, &g))) return;
    if (CHECK_OK(zarr_group_tree_text(g, &out))) CHECK_STR_EQ(out, text);
    zarr_string_free(out);
    if (json && CHECK_OK(zarr_group_tree_json(g, &out))) {
        CHECK_JSON_EQ(out, json);
        zarr_string_free(out);
    }
    zarr_group_close(g);
    CHECK_CTX_CLEAR();
}

static void check_info(zarr_store *s, const char *path, const char *want) {
    zarr_group *g = NULL;
    char *out = NULL;
    CHECK_CTX("group \"%s\"", path);
    if (CHECK_OK(zarr_group_open(s, path, &g)) && CHECK_OK(zarr_group_info_json(g, &out)))
        CHECK_JSON_SAME_OBJECT(out, want);
    zarr_string_free(out);
    zarr_group_close(g);
    CHECK_CTX_CLEAR();
}

static void test_directory_store(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    if (s && build(s)) {
        check_tree(s, "", ROOT_TEXT, NULL);
        check_tree(s, "/bar/", BAR_TEXT, BAR_JSON);
        check_tree(s, "bar/baz", "baz", "{\"name\":\"baz\",\"path\":\"bar/baz\",\"kind\":\"group\",\"children\":[]}");
        check_info(s, "", strf("{\"name\":\"/\",\"path\":\"\",\"store\":\"%s\",\"store_type\":\"directory\","
                               "\"read_only\":false,\"num_members\":5,\"num_arrays\":2,\"num_groups\":3,"
                               "\"arrays\":[\"rec\",\"scalar\"],\"groups\":[\"bar\",\"foo\",\"é\"]}", dir));
    }
    zarr_store_close(s);
    s = open_store(dir, ZARR_MODE_READ);
    if (s) {
        check_info(s, "bar/quux", strf("{\"name\":\"/bar/quux\",\"path\":\"bar/quux\",\"store\":\"%s\","
                                       "\"store_type\":\"directory\",\"read_only\":true,\"num_members\":2,"
                                       "\"num_arrays\":2,\"num_groups\":0,\"arrays\":[\"baz\",\"nested\"],"
                                       "\"groups\":[]}", dir));
        check_tree(s, "", ROOT_TEXT, NULL);
    }
    zarr_store_close(s);

    /* An unreadable member fails the listing, naming its key; the group's own listing and
     * info still work. */
    CHECK(file_write(strf("%s/bar/quux/baz/.zarray", dir), "{\"zarr_format\": 2", 17));
    s = open_store(dir, ZARR_MODE_READ);
    zarr_group *g = NULL;
    char *out = (char *)"untouched";
    if (s && CHECK_OK(zarr_group_open(s, "bar", &g))) {
        CHECK_STATUS(zarr_group_tree_text(g, &out), ZARR_ERR_INVALID_METADATA);
        CHECK_CONTAINS(zarr_last_error(), "bar/quux/baz/.zarray");
        CHECK_STATUS(zarr_group_tree_json(g, &out), ZARR_ERR_INVALID_METADATA);
        CHECK_CONTAINS(zarr_last_error(), "bar/quux/baz/.zarray");
        CHECK_STR_EQ(out, "untouched");
        out = NULL;
        if (CHECK_OK(zarr_group_info_json(g, &out))) CHECK_JSON_HAS(out, "\"groups\":[\"baz\",\"quux\"]");
        zarr_string_free(out);
        zarr_group_close(g);
    }
    zarr_store_close(s);
    tmpdir_remove(dir);
}

/* The same hierarchy in a memory store and in a zip (written, then read back) lists the same. */
static void test_memory_and_zip_stores(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    if (s && build(s)) {
        check_tree(s, "", ROOT_TEXT, NULL);
        check_tree(s, "bar", BAR_TEXT, BAR_JSON);
        check_info(s, "é", "{\"name\":\"/é\",\"path\":\"é\",\"store\":\"memory:\",\"store_type\":\"memory\","
                           "\"read_only\":false,\"num_members\":0,\"num_arrays\":0,\"num_groups\":0,"
                           "\"arrays\":[],\"groups\":[]}");
    }
    zarr_store_close(s);

    char *dir = tmpdir_make();
    const char *zip = strf("%s/tree.zip", dir);
    s = open_store(zip, ZARR_MODE_WRITE);
    int built = s && build(s);
    CHECK_OK(zarr_store_close(s));
    s = built ? open_store(zip, ZARR_MODE_READ) : NULL;
    if (s) {
        check_tree(s, "", ROOT_TEXT, NULL);
        check_tree(s, "bar", BAR_TEXT, BAR_JSON);
        zarr_group *g = NULL;
        char *out = NULL;
        if (CHECK_OK(zarr_group_open(s, "", &g)) && CHECK_OK(zarr_group_info_json(g, &out))) {
            CHECK_JSON_HAS(out, "\"store_type\":\"zip\"");
            CHECK_JSON_HAS(out, "\"read_only\":true");
            CHECK_JSON_HAS(out, strf("\"store\":\"%s\"", zip));
        }
        zarr_string_free(out);
        zarr_group_close(g);
    }
    zarr_store_close(s);
    tmpdir_remove(dir);
}

/* A chain of 300 nested groups lists as 301 lines, each indented one level more. */
static void test_deep_hierarchy(void) {
    enum { DEPTH = 300 };
    static char path[2 * DEPTH];
    char *end = path;
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_group *g = NULL;
    for (int i = 0; i < DEPTH; i++) end += sprintf(end, i ? "/g" : "g");
    if (!s || !CHECK_OK(zarr_group_create(s, path, &g))) goto out;
    zarr_group_close(g);
    g = NULL;
    char *text = NULL, *json = NULL;
    if (CHECK_OK(zarr_group_open(s, "", &g)) && CHECK_OK(zarr_group_tree_text(g, &text)) &&
        CHECK_OK(zarr_group_tree_json(g, &json))) {
        int lines = 1;
        for (const char *p = text; *p; p++) lines += *p == '\n';
        CHECK(lines == DEPTH + 1);
        const char *last = strrchr(text, '\n');
        CHECK(last && strlen(last + 1) == 4 * (DEPTH - 1) + strlen(" └── g"));
        size_t len = strlen(json), closers = 0;
        while (closers < len && json[len - 1 - closers] == (closers % 2 ? ']' : '}')) closers++;
        CHECK(closers == 2 * (DEPTH + 1));
    }
    zarr_string_free(text);
    zarr_string_free(json);
    zarr_group_close(g);
out:
    zarr_store_close(s);
}

static void test_bad_arguments(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_group *g = NULL;
    char *out = (char *)"untouched";
    if (!s || !CHECK_OK(zarr_group_create(s, "", &g))) goto out;
    CHECK_STATUS(zarr_group_tree_text(NULL, &out), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_group_tree_json(NULL, &out), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_group_info_json(NULL, &out), ZARR_ERR_NULL_POINTER);
    CHECK_STR_EQ(out, "untouched");
    CHECK_STATUS(zarr_group_tree_text(g, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_CONTAINS(zarr_last_error(), "out_text");
    CHECK_STATUS(zarr_group_tree_json(g, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_CONTAINS(zarr_last_error(), "out_json");
    CHECK_STATUS(zarr_group_info_json(g, NULL), ZARR_ERR_NULL_POINTER);
    out = NULL;
    if (CHECK_OK(zarr_group_tree_text(g, &out))) CHECK_STR_EQ(out, "/");
    zarr_string_free(out);
    /* A group deleted after it was opened: its listing is NOT_FOUND, not a crash. */
    zarr_group *sub = NULL;
    if (CHECK_OK(zarr_group_create(s, "gone", &sub))) {
        CHECK_OK(zarr_store_delete(s, "gone"));
        CHECK_STATUS(zarr_group_tree_text(sub, &out), ZARR_ERR_NOT_FOUND);
        CHECK_CONTAINS(zarr_last_error(), "gone");
        zarr_group_close(sub);
    }
out:
    zarr_group_close(g);
    zarr_store_close(s);
}

/* ---- visits and listings to a depth ------------------------------------------------------ */

/* What a visit saw: "kind:format:path" lines joined with ';'. */
typedef struct {
    char seen[4096];
    const char *stop_at; /* stop (returning 7) after this path, or NULL */
} visit_log;

static int32_t record(const char *path, zarr_node_kind kind, int32_t format, void *user_data) {
    visit_log *log = user_data;
    size_t used = strlen(log->seen);
    snprintf(log->seen + used, sizeof log->seen - used, "%s%c%d:%s", used ? ";" : "",
             kind == ZARR_NODE_ARRAY ? 'a' : kind == ZARR_NODE_GROUP ? 'g' : '?', (int)format, path);
    return log->stop_at && strcmp(path, log->stop_at) == 0 ? 7 : 0;
}

/* foo, bar/{baz, quux/{baz, nested}}, scalar: zarr-python's tree() docstring hierarchy, every
 * array 1-d int32 (build() above adds more kinds of member). */
static int build_small(zarr_store *s) {
    zarr_group *g;
    static const char *groups[] = {"foo", "bar/baz", "bar/quux"};
    for (size_t i = 0; i < ARRAY_LEN(groups); i++) {
        if (!CHECK_OK(zarr_group_create(s, groups[i], &g))) return 0;
        zarr_group_close(g);
    }
    static const char *arrays[] = {"bar/quux/baz", "bar/quux/nested", "scalar"};
    for (size_t i = 0; i < ARRAY_LEN(arrays); i++) {
        zarr_array *a = create_array(s, arrays[i], "{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\"}");
        if (!a) return 0;
        zarr_array_close(a);
    }
    return 1;
}

static void visit(zarr_group *g, int32_t depth, const char *stop_at, const char *want, int32_t want_stop) {
    visit_log log = {{0}, stop_at};
    int32_t stopped = -1;
    CHECK_CTX("visit depth %d stop at %s", (int)depth, stop_at ? stop_at : "-");
    if (CHECK_OK(zarr_group_visit(g, depth, record, &log, &stopped))) {
        CHECK_STR_EQ(log.seen, want);
        CHECK(stopped == want_stop);
    }
    CHECK_CTX_CLEAR();
}

static void test_visit(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_group *root = NULL, *bar = NULL;
    if (!s || !build_small(s) || !CHECK_OK(zarr_group_open(s, "", &root)) || !CHECK_OK(zarr_group_open(s, "bar", &bar)))
        goto out;
    visit(root, -1, NULL,
          "g2:bar;g2:bar/baz;g2:bar/quux;a2:bar/quux/baz;a2:bar/quux/nested;g2:foo;a2:scalar", 0);
    visit(bar, -1, NULL, "g2:baz;g2:quux;a2:quux/baz;a2:quux/nested", 0);
    visit(root, 1, NULL, "g2:bar;g2:foo;a2:scalar", 0);
    visit(root, 2, NULL, "g2:bar;g2:bar/baz;g2:bar/quux;g2:foo;a2:scalar", 0);
    visit(root, 0, NULL, "", 0);
    /* Early stop: the callback's value comes back, nothing after it is visited. */
    visit(root, -1, "bar/quux/baz", "g2:bar;g2:bar/baz;g2:bar/quux;a2:bar/quux/baz", 7);
    /* out_stopped may be NULL. */
    visit_log log = {{0}, "foo"};
    CHECK_OK(zarr_group_visit(root, -1, record, &log, NULL));
    CHECK_STR_EQ(log.seen, "g2:bar;g2:bar/baz;g2:bar/quux;a2:bar/quux/baz;a2:bar/quux/nested;g2:foo");

    /* A broken member fails the visit naming its key, but only once it is reached. */
    const char *bad = "{broken";
    CHECK_OK(zarr_store_set(s, "bar/quux/nested/.zarray", bad, strlen(bad)));
    int32_t stopped = -1;
    memset(&log, 0, sizeof log);
    CHECK_STATUS(zarr_group_visit(root, -1, record, &log, &stopped), ZARR_ERR_INVALID_METADATA);
    CHECK_CONTAINS(zarr_last_error(), "bar/quux/nested/.zarray");
    CHECK(stopped == -1);
    visit(root, -1, "bar/quux/baz", "g2:bar;g2:bar/baz;g2:bar/quux;a2:bar/quux/baz", 7);

    CHECK_STATUS(zarr_group_visit(NULL, -1, record, &log, &stopped), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_group_visit(root, -1, NULL, &log, &stopped), ZARR_ERR_INVALID_ARGUMENT);
out:
    zarr_group_close(bar);
    zarr_group_close(root);
    zarr_store_close(s);
}

/* A v3 hierarchy reports format 3 for its nodes. */
static void test_visit_v3(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_group *root = NULL, *g = NULL;
    if (!s || !CHECK_OK(zarr_group_create_format(s, "", 3, &root))) goto out;
    if (CHECK_OK(zarr_group_create(s, "x/y", &g))) zarr_group_close(g);
    zarr_array *a = create_array(s, "x/arr", "{\"zarr_format\":3,\"shape\":[4],\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},\"data_type\":\"int32\"}");
    zarr_array_close(a);
    visit(root, -1, NULL, "g3:x;a3:x/arr;g3:x/y", 0);
out:
    zarr_group_close(root);
    zarr_store_close(s);
}

/* Tree listings to a depth: -1 is the whole tree. */
static void test_tree_level(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_group *root = NULL;
    char *out = NULL;
    if (!s || !build_small(s) || !CHECK_OK(zarr_group_open(s, "", &root))) goto out;
    if (CHECK_OK(zarr_group_tree_text_level(root, 0, &out))) CHECK_STR_EQ(out, "/");
    zarr_string_free(out);
    if (CHECK_OK(zarr_group_tree_text_level(root, 1, &out)))
        CHECK_STR_EQ(out, "/\n ├── bar\n ├── foo\n └── scalar (4,) int32");
    zarr_string_free(out);
    if (CHECK_OK(zarr_group_tree_text_level(root, 2, &out)))
        CHECK_STR_EQ(out, "/\n ├── bar\n │   ├── baz\n │   └── quux\n ├── foo\n └── scalar (4,) int32");
    zarr_string_free(out);
    char *all = NULL;
    if (CHECK_OK(zarr_group_tree_text_level(root, -1, &out)) && CHECK_OK(zarr_group_tree_text(root, &all)))
        CHECK_STR_EQ(out, all);
    zarr_string_free(out);
    zarr_string_free(all);
    if (CHECK_OK(zarr_group_tree_json_level(root, 1, &out))) {
        CHECK_JSON_HAS(out, "{\"name\":\"bar\",\"path\":\"bar\",\"kind\":\"group\",\"children\":[]}");
        CHECK_JSON_LACKS(out, "quux");
    }
    zarr_string_free(out);
    CHECK_STATUS(zarr_group_tree_text_level(root, 1, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_group_tree_json_level(NULL, 1, &out), ZARR_ERR_NULL_POINTER);
out:
    zarr_group_close(root);
    zarr_store_close(s);
}

int main(void) {
    test_directory_store();
    test_memory_and_zip_stores();
    test_deep_hierarchy();
    test_bad_arguments();
    test_visit();
    test_visit_v3();
    test_tree_level();
    return check_summary("test_group_tree");
}
