/* test_modes.c - zarr-python's modes: stores opened "r", "r+", "a", "w", "w-" (directories, zips,
 * memory) and arrays and groups created "w-", "w" (overwrite) and "a" (open or create), at the
 * root and below it; nothing removed when a check fails. */
#include "testutil.h"

static const char *ARRAY = "{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_value\":-1}";

static int has_keys(zarr_store *s, const char *prefix, const char *want_json) {
    char *json = NULL;
    if (!CHECK_OK(zarr_store_list_keys(s, prefix, &json))) return 0;
    int ok = CHECK_JSON_EQ(json, want_json);
    zarr_string_free(json);
    return ok;
}

static void write_values(zarr_array *a, int32_t first) {
    int32_t v[4] = {first, first + 1, first + 2, first + 3};
    uint64_t start = 0, count = 4;
    CHECK_OK(zarr_array_write(a, 1, &start, &count, v, sizeof v));
}

static int32_t first_value(zarr_array *a) {
    int32_t v[4] = {0};
    uint64_t start = 0, count = 4;
    CHECK_OK(zarr_array_read(a, 1, &start, &count, v, sizeof v));
    return v[0];
}

static void test_store_modes(const char *tmp) {
    const char *dir = strf("%s/store", tmp);
    zarr_store *s = NULL;
    /* "r" and "r+" need the store; neither creates it. */
    CHECK_STATUS(zarr_store_open(dir, ZARR_MODE_READ, &s), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_store_open(dir, ZARR_MODE_UPDATE, &s), ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "r+");
    CHECK(!dir_exists(dir));
    /* "w-" creates it; "a" opens it; "w-" again refuses it, naming a key. */
    s = open_store(dir, ZARR_MODE_CREATE);
    zarr_array *a = s ? create_array(s, "x", ARRAY) : NULL;
    if (!a) return;
    write_values(a, 10);
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    CHECK_STATUS(zarr_store_open(dir, ZARR_MODE_CREATE, &s), ZARR_ERR_ALREADY_EXISTS);
    CHECK_CONTAINS(zarr_last_error(), ".zgroup");
    s = open_store(dir, ZARR_MODE_UPDATE);
    a = s ? open_array(s, "x") : NULL;
    CHECK(a && first_value(a) == 10);
    if (a) write_values(a, 20); /* "r+" writes */
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    /* "w" empties it (the directory stays), then writes anew. */
    s = open_store(dir, ZARR_MODE_OVERWRITE);
    if (!s) return;
    CHECK(has_keys(s, "", "[]"));
    CHECK(count_files(dir) == 0 && dir_exists(dir));
    CHECK_OK(zarr_store_close(s));
    /* An empty existing directory is fine for "w-". */
    s = open_store(dir, ZARR_MODE_CREATE);
    CHECK_OK(zarr_store_close(s));
    /* A read-only store is never emptied; unknown modes are refused. */
    CHECK_STATUS(zarr_store_open(dir, 5, &s), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_store_open(dir, ZARR_MODE_OVERWRITE | 0x20, &s), ZARR_ERR_INVALID_ARGUMENT);
    s = open_store("memory:", ZARR_MODE_CREATE);
    CHECK_OK(zarr_store_close(s));
}

/* A zip opened "w" replaces the archive; "r+" appends to an existing one, "w-" refuses it. */
static void test_zip_modes(const char *tmp) {
    char zip[1024]; /* kept: strf's buffers are reused by the checks' messages */
    snprintf(zip, sizeof zip, "%s/data.zip", tmp);
    zarr_store *s = NULL;
    CHECK_STATUS(zarr_store_open(zip, ZARR_MODE_UPDATE, &s), ZARR_ERR_NOT_FOUND);
    for (int round = 0; round < 2; round++) {
        s = open_store(zip, ZARR_MODE_OVERWRITE);
        zarr_array *a = s ? create_array(s, round ? "second" : "first", ARRAY) : NULL;
        if (!a) return;
        write_values(a, round);
        CHECK_OK(zarr_array_close(a));
        CHECK_OK(zarr_store_close(s));
    }
    s = open_store(zip, ZARR_MODE_READ);
    if (!s) return;
    CHECK(has_keys(s, "", "[\".zgroup\",\"second/.zarray\",\"second/0\",\"second/1\"]"));
    CHECK_OK(zarr_store_close(s));
    CHECK_STATUS(zarr_store_open(zip, ZARR_MODE_CREATE, &s), ZARR_ERR_ALREADY_EXISTS);
    s = open_store(zip, ZARR_MODE_UPDATE);
    zarr_array *a = s ? create_array(s, "third", ARRAY) : NULL;
    if (a) CHECK_OK(zarr_array_close(a));
    if (s) CHECK_OK(zarr_store_close(s));
    s = open_store(zip, ZARR_MODE_READ);
    if (!s) return;
    CHECK(has_keys(s, "", "[\".zgroup\",\"second/.zarray\",\"second/0\",\"second/1\",\"third/.zarray\"]"));
    CHECK_OK(zarr_store_close(s));
}

static void test_array_modes(zarr_store *s) {
    zarr_array *a = create_array(s, "g/x", ARRAY), *b = NULL;
    zarr_group *g = NULL;
    if (!a) return;
    write_values(a, 7);
    CHECK_OK(zarr_array_close(a));
    /* "w-" */
    CHECK_STATUS(zarr_array_create_mode(s, "g/x", ARRAY, ZARR_CREATE_NEW, &a), ZARR_ERR_ALREADY_EXISTS);
    /* "a": the same shape and type opens the stored array, values kept; another shape or type,
     * or a group, is refused saying so; nothing there creates it. */
    const char *other_chunks = "{\"shape\":[4],\"chunks\":[4],\"dtype\":\"<i4\"}";
    if (CHECK_OK(zarr_array_create_mode(s, "g/x", other_chunks, ZARR_CREATE_OPEN, &a))) {
        CHECK(first_value(a) == 7);
        uint64_t chunks = 0;
        CHECK_OK(zarr_array_chunks(a, 1, &chunks));
        CHECK(chunks == 2); /* the stored array's */
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_STATUS(zarr_array_create_mode(s, "g/x", "{\"shape\":[5],\"chunks\":[2],\"dtype\":\"<i4\"}",
                                        ZARR_CREATE_OPEN, &a),
                 ZARR_ERR_ALREADY_EXISTS);
    CHECK_CONTAINS(zarr_last_error(), "shape [4]");
    CHECK_STATUS(zarr_array_create_mode(s, "g/x", "{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<f4\"}",
                                        ZARR_CREATE_OPEN, &a),
                 ZARR_ERR_ALREADY_EXISTS);
    CHECK_CONTAINS(zarr_last_error(), "<f4");
    CHECK_STATUS(zarr_array_create_mode(s, "g", ARRAY, ZARR_CREATE_OPEN, &a), ZARR_ERR_ALREADY_EXISTS);
    if (CHECK_OK(zarr_array_create_mode(s, "g/y", ARRAY, ZARR_CREATE_OPEN, &b))) {
        CHECK(first_value(b) == -1);
        CHECK_OK(zarr_array_close(b));
    }
    /* "w": a bad document removes nothing; a good one replaces the array, chunks and all. */
    CHECK_STATUS(zarr_array_create_mode(s, "g/x", "{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_vaule\":0}",
                                        ZARR_CREATE_OVERWRITE, &a),
                 ZARR_ERR_INVALID_METADATA);
    CHECK(has_keys(s, "g/x", "[\"g/x/.zarray\",\"g/x/0\",\"g/x/1\"]"));
    if (CHECK_OK(zarr_array_create_mode(s, "g/x", ARRAY, ZARR_CREATE_OVERWRITE, &a))) {
        CHECK(first_value(a) == -1);
        CHECK(has_keys(s, "g/x", "[\"g/x/.zarray\"]"));
        write_values(a, 3);
        CHECK_OK(zarr_array_close(a));
    }
    /* "w" over a group removes its members; below an array it is refused, removing nothing. */
    if (CHECK_OK(zarr_array_create_mode(s, "g", ARRAY, ZARR_CREATE_OVERWRITE, &a))) {
        CHECK(has_keys(s, "g", "[\"g/.zarray\"]"));
        write_values(a, 5);
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_STATUS(zarr_array_create_mode(s, "g/inner", ARRAY, ZARR_CREATE_OVERWRITE, &a),
                 ZARR_ERR_ALREADY_EXISTS);
    CHECK_CONTAINS(zarr_last_error(), "ancestor");
    CHECK(has_keys(s, "g", "[\"g/.zarray\",\"g/0\",\"g/1\"]"));
    CHECK_STATUS(zarr_array_create_mode(s, "z", ARRAY, 9, &a), ZARR_ERR_INVALID_ARGUMENT);

    /* Groups: "w-" refuses, "a" opens (zarr_group_create), "w" at the root empties the store. */
    CHECK_STATUS(zarr_group_create_mode(s, "g", 0, ZARR_CREATE_OPEN, &g), ZARR_ERR_ALREADY_EXISTS);
    CHECK_STATUS(zarr_group_create_mode(s, "", 0, ZARR_CREATE_NEW, &g), ZARR_ERR_ALREADY_EXISTS);
    if (CHECK_OK(zarr_group_create_mode(s, "", 0, ZARR_CREATE_OPEN, &g))) CHECK_OK(zarr_group_close(g));
    if (CHECK_OK(zarr_group_create_mode(s, "", 3, ZARR_CREATE_OVERWRITE, &g))) {
        CHECK(has_keys(s, "", "[\"zarr.json\"]"));
        int32_t format = 0;
        CHECK_OK(zarr_group_zarr_format(g, &format));
        CHECK(format == 3);
        CHECK_OK(zarr_group_close(g));
    }
    CHECK_STATUS(zarr_group_create_mode(s, "q", 4, ZARR_CREATE_NEW, &g), ZARR_ERR_INVALID_ARGUMENT);
    if (CHECK_OK(zarr_group_create_mode(s, "q", 0, ZARR_CREATE_NEW, &g))) {
        int32_t format = 0;
        CHECK_OK(zarr_group_zarr_format(g, &format));
        CHECK(format == 3); /* inherited from the root */
        CHECK_OK(zarr_group_close(g));
    }
}

static void test_read_only_removes_nothing(const char *tmp) {
    const char *dir = strf("%s/ro", tmp);
    zarr_store *w = open_store(dir, ZARR_MODE_WRITE), *r = NULL;
    zarr_array *a = w ? create_array(w, "x", ARRAY) : NULL;
    zarr_group *g = NULL;
    if (!a) return;
    CHECK_OK(zarr_array_close(a));
    r = open_store(dir, ZARR_MODE_READ);
    if (!r) return;
    CHECK_STATUS(zarr_array_create_mode(r, "x", ARRAY, ZARR_CREATE_OVERWRITE, &a), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_create_mode(r, "", 0, ZARR_CREATE_OVERWRITE, &g), ZARR_ERR_READ_ONLY);
    CHECK(has_keys(w, "", "[\".zgroup\",\"x/.zarray\"]"));
    CHECK_OK(zarr_store_close(r));
    CHECK_OK(zarr_store_close(w));
}

int main(void) {
    char *tmp = tmpdir_make();
    test_store_modes(tmp);
    test_zip_modes(tmp);
    const char *locations[2] = {strf("%s/nodes", tmp), "memory:"};
    for (int i = 0; i < 2; i++) {
        CHECK_CTX("%s", locations[i]);
        zarr_store *s = open_store(locations[i], ZARR_MODE_WRITE);
        if (!s) continue;
        test_array_modes(s);
        CHECK_OK(zarr_store_close(s));
    }
    CHECK_CTX_CLEAR();
    test_read_only_removes_nothing(tmp);
    tmpdir_remove(tmp);
    return check_summary("test_modes");
}
