/* test_keys.c - raw keys of a store: zarr_store_value_size, _get (whole, ranges, offsets),
 * _set, _erase, _list_keys, _list_dir, _getsize and _rmdir (of a prefix and of the root), on a
 * directory store, a memory store and Python dbm databases (dbm:// in GDBM's format, the default,
 * and dbm.dumb's), with read-only refusals and bad keys. */
#include "testutil.h"

static const char *ARRAY = "{\"shape\":[4,4],\"chunks\":[2,2],\"dtype\":\"<i4\",\"fill_value\":0,"
                           "\"dimension_separator\":\"/\"}";

static void test_values(zarr_store *s) {
    char buf[16];
    size_t len = 99;
    uint64_t size = 99;
    bool exists = true;
    CHECK_OK(zarr_store_value_size(s, "raw/blob", &exists, &size));
    CHECK(!exists && size == 0);
    CHECK_STATUS(zarr_store_get(s, "raw/blob", 0, buf, sizeof buf, &len), ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "raw/blob");
    CHECK_OK(zarr_store_set(s, "raw/blob", "0123456789", 10));
    CHECK_OK(zarr_store_value_size(s, "raw/blob", &exists, &size));
    CHECK(exists && size == 10);
    /* Whole, a range, the tail past a small buffer, at the very end, past the end. */
    CHECK_OK(zarr_store_get(s, "raw/blob", 0, buf, sizeof buf, &len));
    CHECK(len == 10 && memcmp(buf, "0123456789", 10) == 0);
    CHECK_OK(zarr_store_get(s, "raw/blob", 3, buf, 4, &len));
    CHECK(len == 4 && memcmp(buf, "3456", 4) == 0);
    CHECK_OK(zarr_store_get(s, "raw/blob", 8, buf, sizeof buf, &len));
    CHECK(len == 2 && memcmp(buf, "89", 2) == 0);
    CHECK_OK(zarr_store_get(s, "raw/blob", 10, NULL, 0, &len));
    CHECK(len == 0);
    CHECK_STATUS(zarr_store_get(s, "raw/blob", 11, buf, sizeof buf, &len), ZARR_ERR_OUT_OF_BOUNDS);
    /* Replacing, an empty value, erasing, erasing again. */
    CHECK_OK(zarr_store_set(s, "raw/blob", "xy", 2));
    CHECK_OK(zarr_store_get(s, "raw/blob", 0, buf, sizeof buf, &len));
    CHECK(len == 2 && memcmp(buf, "xy", 2) == 0);
    CHECK_OK(zarr_store_set(s, "raw/empty", NULL, 0));
    CHECK_OK(zarr_store_value_size(s, "raw/empty", &exists, &size));
    CHECK(exists && size == 0);
    CHECK_OK(zarr_store_erase(s, "raw/empty"));
    CHECK_STATUS(zarr_store_erase(s, "raw/empty"), ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "raw/empty");
    /* Keys are exact: no normalisation, nothing outside the store. */
    const char *bad[] = {"", "/abs", "a//b", "a/../b", "..", "a/./b", "trailing/"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        CHECK_CTX("key \"%s\"", bad[i]);
        CHECK_STATUS(zarr_store_set(s, bad[i], "z", 1), ZARR_ERR_INVALID_PATH);
        CHECK_STATUS(zarr_store_value_size(s, bad[i], &exists, &size), ZARR_ERR_INVALID_PATH);
    }
    CHECK_CTX_CLEAR();
    CHECK_STATUS(zarr_store_set(s, "k", NULL, 3), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_store_get(s, "raw/blob", 0, NULL, 3, &len), ZARR_ERR_NULL_POINTER);
}

/* An array and a group written through the node calls are keys like any other. */
static void test_listing_sizes_and_rmdir(zarr_store *s) {
    char *json = NULL;
    uint64_t size = 0, total = 0;
    zarr_group *g = NULL;
    zarr_array *a = create_array(s, "g/a", ARRAY);
    int32_t values[16];
    uint64_t start[2] = {0, 0}, count[2] = {4, 4};
    for (int i = 0; i < 16; i++) values[i] = i + 1;
    if (!a || !CHECK_OK(zarr_array_write(a, 2, start, count, values, sizeof values))) return;
    CHECK_OK(zarr_group_create(s, "g/sub", &g));
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_store_list_keys(s, "g/a", &json));
    CHECK_JSON_EQ(json, "[\"g/a/.zarray\",\"g/a/0/0\",\"g/a/0/1\",\"g/a/1/0\",\"g/a/1/1\"]");
    zarr_string_free(json);
    CHECK_OK(zarr_store_list_keys(s, "g/a/", &json));
    CHECK_JSON_HAS(json, "\"g/a/1/1\"");
    zarr_string_free(json);
    CHECK_OK(zarr_store_list_dir(s, "g", &json));
    CHECK_JSON_EQ(json, "[\".zgroup\",\"a\",\"sub\"]");
    zarr_string_free(json);
    CHECK_OK(zarr_store_list_dir(s, "g/a/0", &json));
    CHECK_JSON_EQ(json, "[\"0\",\"1\"]");
    zarr_string_free(json);
    CHECK_OK(zarr_store_list_dir(s, "nothing/here", &json));
    CHECK_JSON_EQ(json, "[]");
    zarr_string_free(json);
    CHECK_STATUS(zarr_store_list_dir(s, "../up", &json), ZARR_ERR_INVALID_PATH);

    /* getsize: every chunk at any depth, plus the metadata; a key alone; the store. */
    uint64_t chunks = 0, one = 0, meta = 0;
    bool exists = false;
    const char *chunk_keys[] = {"g/a/0/0", "g/a/0/1", "g/a/1/0", "g/a/1/1"};
    for (size_t i = 0; i < 4; i++) {
        CHECK_OK(zarr_store_value_size(s, chunk_keys[i], &exists, &one));
        chunks += one;
    }
    CHECK_OK(zarr_store_value_size(s, "g/a/.zarray", &exists, &meta));
    CHECK_OK(zarr_store_getsize(s, "g/a", &size));
    CHECK(size == chunks + meta && chunks == 4 * 16);
    CHECK_OK(zarr_store_getsize(s, "g/a/0/1", &one));
    CHECK(one == 16);
    CHECK_OK(zarr_store_getsize(s, "", &total));
    CHECK(total > size);
    CHECK_OK(zarr_store_getsize(s, "missing", &size));
    CHECK(size == 0);

    /* rmdir of part of an array, of a group, then of the whole store. */
    CHECK_OK(zarr_store_rmdir(s, "g/a/1"));
    CHECK_OK(zarr_store_list_keys(s, "g/a", &json));
    CHECK_JSON_EQ(json, "[\"g/a/.zarray\",\"g/a/0/0\",\"g/a/0/1\"]");
    zarr_string_free(json);
    CHECK_OK(zarr_store_list_dir(s, "g/a", &json)); /* no empty directory left behind */
    CHECK_JSON_EQ(json, "[\".zarray\",\"0\"]");
    zarr_string_free(json);
    int32_t back[16];
    CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back));
    CHECK(back[0] == 1 && back[8] == 0 && back[15] == 0);
    CHECK_OK(zarr_store_rmdir(s, "g/sub"));
    zarr_node_kind kind = ZARR_NODE_GROUP;
    CHECK_OK(zarr_store_node_kind(s, "g/sub", &kind));
    CHECK(kind == ZARR_NODE_NONE);
    CHECK_OK(zarr_store_rmdir(s, "no/such/prefix"));
    CHECK_OK(zarr_store_rmdir(s, ""));
    CHECK_OK(zarr_store_list_keys(s, "", &json));
    CHECK_JSON_EQ(json, "[]");
    zarr_string_free(json);
    CHECK_OK(zarr_store_list_dir(s, "", &json));
    CHECK_JSON_EQ(json, "[]");
    zarr_string_free(json);
    CHECK_OK(zarr_array_close(a));
}

static void test_read_only(const char *dir) {
    zarr_store *r = open_store(dir, ZARR_MODE_READ);
    char *json = NULL;
    if (!r) return;
    CHECK_STATUS(zarr_store_set(r, "k", "v", 1), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_store_erase(r, "k"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_store_rmdir(r, ""), ZARR_ERR_READ_ONLY);
    CHECK_OK(zarr_store_list_keys(r, "", &json));
    CHECK_JSON_EQ(json, "[\"k\"]");
    zarr_string_free(json);
    CHECK_OK(zarr_store_close(r));
}

int main(void) {
    char *dir = tmpdir_make(), *dbm_dir = tmpdir_make();
    char *gnu = strdup(strf("dbm://%s/gnu.db", dbm_dir)), *dumb = strdup(strf("dbm://%s/dumb.db", dbm_dir));
    zarr_store *dumb_store = NULL;
    CHECK_OK(zarr_store_open_options(dumb, ZARR_MODE_WRITE, "{\"dbm_format\": \"dumb\"}", &dumb_store));
    zarr_store *stores[4] = {open_store(dir, ZARR_MODE_WRITE), open_store("memory:", ZARR_MODE_WRITE),
                             open_store(gnu, ZARR_MODE_WRITE), dumb_store};
    const char *names[4] = {"directory", "memory", "dbm.gnu", "dbm.dumb"};
    for (int i = 0; i < 4; i++) {
        CHECK_CTX("%s store", names[i]);
        if (!stores[i]) continue;
        test_values(stores[i]);
        test_listing_sizes_and_rmdir(stores[i]);
        CHECK_OK(zarr_store_set(stores[i], "k", "v", 1));
        CHECK_CTX_CLEAR();
    }
    /* A raw value written through the key calls is a file of the directory store. */
    CHECK(file_size(strf("%s/k", dir)) == 1);
    for (int i = 0; i < 4; i++) CHECK_OK(zarr_store_close(stores[i]));
    /* Read-only once closed: a GDBM writer excludes readers until then. */
    test_read_only(dir);
    test_read_only(gnu);
    test_read_only(dumb);
    tmpdir_remove(dir);
    tmpdir_remove(dbm_dir);
    free(gnu);
    free(dumb);
    return check_summary("test_keys");
}
