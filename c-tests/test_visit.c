/* test_visit.c - zarr_group_visit (zarr-python 2's visit/visititems: depth first, sorted,
 * paths relative to the group, early stop, a depth limit) and the depth-limited tree listings
 * zarr_group_tree_text_level / zarr_group_tree_json_level (zarr-python's tree(level=)). */
#include "testutil.h"

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

/* foo, bar/{baz, quux/{baz, nested}}, scalar: zarr-python's tree() docstring hierarchy. */
static int build(zarr_store *s) {
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
    if (!s || !build(s) || !CHECK_OK(zarr_group_open(s, "", &root)) || !CHECK_OK(zarr_group_open(s, "bar", &bar)))
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

static void test_tree_level(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_group *root = NULL;
    char *out = NULL;
    if (!s || !build(s) || !CHECK_OK(zarr_group_open(s, "", &root))) goto out;
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
    test_visit();
    test_visit_v3();
    test_tree_level();
    return check_summary("test_visit");
}
