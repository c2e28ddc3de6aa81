/* test_groups_attrs.c - groups (nested creation, ancestors, listing, conflicts with arrays),
 * path normalisation and refusal of "."/".." segments, and attributes on arrays and groups. */
#include "testutil.h"

static const char *ARR = "{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\"}";

static void test_nested_groups(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_group *g = NULL, *again = NULL;
    char *attrs = NULL;
    static const char *const ancestors[] = {"", "a", "a/b", "a/b/c"};
    if (!s) goto out;
    CHECK_OK(zarr_group_create(s, "a/b/c", &g));
    for (size_t i = 0; i < ARRAY_LEN(ancestors); i++) {
        zarr_group *h = NULL;
        CHECK_CTX("group \"%s\"", ancestors[i]);
        CHECK_OK(zarr_group_open(s, ancestors[i], &h));
        CHECK(file_exists(strf("%s/%s%s.zgroup", dir, ancestors[i], ancestors[i][0] ? "/" : "")));
        CHECK_OK(zarr_group_close(h));
    }
    CHECK_CTX_CLEAR();
    /* .zgroup is {"zarr_format": 2}. */
    {
        char *txt = (char *)file_read(strf("%s/a/.zgroup", dir), NULL);
        CHECK_JSON_EQ(txt, "{\"zarr_format\":2}");
        free(txt);
    }
    /* Creating an existing group opens it and keeps its attributes. */
    CHECK_OK(zarr_group_attrs_set(g, "{\"keep\":true}"));
    CHECK_OK(zarr_group_create(s, "a/b/c", &again));
    if (again && CHECK_OK(zarr_group_attrs_get(again, &attrs))) CHECK_JSON_EQ(attrs, "{\"keep\":true}");
    zarr_string_free(attrs);
    CHECK_OK(zarr_group_close(again));
    CHECK_OK(zarr_group_close(g));
    /* Creating an array also creates its ancestor groups. */
    {
        zarr_array *a = create_array(s, "x/y/arr", ARR);
        CHECK_OK(zarr_array_close(a));
        CHECK_OK(zarr_group_open(s, "x/y", &g));
        CHECK_OK(zarr_group_close(g));
        CHECK(file_exists(strf("%s/x/.zgroup", dir)));
    }
    CHECK_OK(zarr_store_close(s));
out:
    tmpdir_remove(dir);
}

static void check_list(zarr_store *s, const char *path, const char *want) {
    zarr_group *g = NULL;
    char *list = NULL;
    if (!CHECK_OK(zarr_group_open(s, path, &g))) return;
    if (CHECK_OK(zarr_group_list(g, &list))) CHECK_JSON_EQ(list, want);
    zarr_string_free(list);
    CHECK_OK(zarr_group_close(g));
}

static void test_list(const char *location) {
    zarr_store *s = open_store(location, ZARR_MODE_WRITE);
    zarr_group *g = NULL;
    static const char *const arrays[] = {"zeta", "alpha", "g1/inner", "mid"};
    static const char *const groups[] = {"g2", "g1", "g1/sub/deep"};
    if (!s) return;
    CHECK_OK(zarr_group_create(s, "", &g)); /* the root */
    CHECK_OK(zarr_group_close(g));
    check_list(s, "", "{\"arrays\":[],\"groups\":[]}");
    for (size_t i = 0; i < ARRAY_LEN(arrays); i++) CHECK_OK(zarr_array_close(create_array(s, arrays[i], ARR)));
    for (size_t i = 0; i < ARRAY_LEN(groups); i++) {
        CHECK_OK(zarr_group_create(s, groups[i], &g));
        CHECK_OK(zarr_group_close(g));
    }
    /* Only direct children, names sorted. */
    check_list(s, "", "{\"arrays\":[\"alpha\",\"mid\",\"zeta\"],\"groups\":[\"g1\",\"g2\"]}");
    check_list(s, "g1", "{\"arrays\":[\"inner\"],\"groups\":[\"sub\"]}");
    check_list(s, "g1/sub/deep", "{\"arrays\":[],\"groups\":[]}");
    CHECK_OK(zarr_store_close(s));
}

static void test_lists(void) {
    char *dir = tmpdir_make();
    CHECK_CTX("memory");
    test_list("memory:");
    CHECK_CTX("%s", dir);
    test_list(dir);
    CHECK_CTX_CLEAR();
    tmpdir_remove(dir);
}

static void test_conflicts(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_group *g = NULL, *og = (zarr_group *)&s;
    zarr_array *a = NULL, *oa = (zarr_array *)&s;
    CHECK_OK(zarr_group_create(s, "", &g)); /* the root group */
    CHECK_OK(zarr_group_close(g));
    a = create_array(s, "data", ARR);
    if (!a) return;
    CHECK_OK(zarr_group_create(s, "grp", &g));
    CHECK_STATUS(zarr_group_create(s, "data", &og), ZARR_ERR_ALREADY_EXISTS);
    CHECK_STATUS(zarr_array_create(s, "data", ARR, &oa), ZARR_ERR_ALREADY_EXISTS);
    CHECK_STATUS(zarr_array_create(s, "grp", ARR, &oa), ZARR_ERR_ALREADY_EXISTS);
    CHECK_STATUS(zarr_array_create(s, "", ARR, &oa), ZARR_ERR_ALREADY_EXISTS); /* root is a group */
    CHECK(oa == (zarr_array *)&s && og == (zarr_group *)&s);
    /* Nothing can live below an array. */
    CHECK_ERR(zarr_group_create(s, "data/sub", &og));
    CHECK_ERR(zarr_array_create(s, "data/sub", ARR, &oa));
    CHECK(oa == (zarr_array *)&s && og == (zarr_group *)&s);
    /* Opening the wrong kind is WRONG_NODE_TYPE naming what is there; nothing is NOT_FOUND. */
    CHECK_STATUS(zarr_group_open(s, "data", &og), ZARR_ERR_WRONG_NODE_TYPE);
    CHECK_CONTAINS(zarr_last_error(), "data/.zarray");
    CHECK_STATUS(zarr_array_open(s, "grp", &oa), ZARR_ERR_WRONG_NODE_TYPE);
    CHECK_CONTAINS(zarr_last_error(), "grp/.zgroup");
    CHECK_STATUS(zarr_group_open(s, "nope/deeper", &og), ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "nope/deeper");
    CHECK_STATUS(zarr_array_open(s, "nope", &oa), ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "nope");
    CHECK(oa == (zarr_array *)&s && og == (zarr_group *)&s);
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
}

/* "." and ".." segments are refused by every path-taking call; nothing escapes the root. */
static void test_invalid_paths(void) {
    static const char *const bad[] = {"a/../b", "./x", "..", ".", "a/.", "a/./b", "../escape",
                                      "x/..", "a\\..\\b", "/../escape2"};
    char *parent = tmpdir_make();
    const char *root = strf("%s/store", parent);
    zarr_store *s = open_store(root, ZARR_MODE_WRITE);
    zarr_array *a = (zarr_array *)&s;
    zarr_group *g = (zarr_group *)&s;
    long files;
    if (!s) goto out;
    files = count_files(parent);
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        CHECK_CTX("path \"%s\"", bad[i]);
        CHECK_STATUS(zarr_group_create(s, bad[i], &g), ZARR_ERR_INVALID_PATH);
        CHECK_STATUS(zarr_array_create(s, bad[i], ARR, &a), ZARR_ERR_INVALID_PATH);
        CHECK_STATUS(zarr_group_open(s, bad[i], &g), ZARR_ERR_INVALID_PATH);
        CHECK_STATUS(zarr_array_open(s, bad[i], &a), ZARR_ERR_INVALID_PATH);
    }
    CHECK_CTX_CLEAR();
    CHECK(a == (zarr_array *)&s && g == (zarr_group *)&s);
    CHECK_U64_EQ(count_files(parent), files);
    CHECK(!dir_exists(strf("%s/escape", parent)) && !dir_exists(strf("%s/b", root)));
    CHECK_OK(zarr_store_close(s));
out:
    tmpdir_remove(parent);
}

/* "//a//b/" is "a/b", "\" is "/", and a leading "/" is the root. */
static void test_normalised_paths(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_group *g = NULL;
    zarr_array *a = NULL;
    if (!s) goto out;
    CHECK_OK(zarr_group_create(s, "//a//b/", &g));
    CHECK_OK(zarr_group_close(g));
    CHECK(file_exists(strf("%s/a/b/.zgroup", dir)));
    CHECK_OK(zarr_group_open(s, "a/b", &g));
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_group_open(s, "/a/b", &g));
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_group_open(s, "a\\b", &g));
    CHECK_OK(zarr_group_close(g));

    a = create_array(s, "\\win\\style\\arr", ARR);
    CHECK_OK(zarr_array_close(a));
    CHECK(file_exists(strf("%s/win/style/arr/.zarray", dir)));
    CHECK_OK(zarr_array_open(s, "win/style/arr/", &a));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_group_open(s, "/", &g)); /* the root */
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_store_close(s));
out:
    tmpdir_remove(dir);
}

/* Attributes behave the same on arrays and groups: get/set through these two adapters. */
struct node {
    zarr_array *a;
    zarr_group *g;
};
static zarr_status attrs_get(struct node n, char **out) {
    return n.a ? zarr_array_attrs_get(n.a, out) : zarr_group_attrs_get(n.g, out);
}
static zarr_status attrs_set(struct node n, const char *json) {
    return n.a ? zarr_array_attrs_set(n.a, json) : zarr_group_attrs_set(n.g, json);
}

static void check_attrs(struct node n, const char *want) {
    char *got = NULL;
    if (CHECK_OK(attrs_get(n, &got))) CHECK_JSON_EQ(got, want);
    zarr_string_free(got);
}

static void run_attrs(struct node n, const char *dir, const char *path) {
    static const char *const not_objects[] = {"[1,2]", "42", "\"text\"", "null", "true"};
    static const char *const malformed[] = {"{", "{\"a\":}", "", "{'a':1}", "{\"a\":1} trailing"};
    const char *zattrs = strf("%s/%s/.zattrs", dir, path);
    char *got = NULL, *file = NULL;

    check_attrs(n, "{}"); /* no .zattrs yet */
    CHECK(!file_exists(zattrs));
    CHECK_OK(attrs_set(n, "{\"units\":\"K\",\"scale\":0.5,\"tags\":[1,2,3],\"nested\":{\"x\":null}}"));
    if (CHECK_OK(attrs_get(n, &got))) {
        CHECK_JSON_HAS(got, "\"units\":\"K\"");
        CHECK_JSON_HAS(got, "\"scale\":0.5");
        CHECK_JSON_HAS(got, "\"tags\":[1,2,3]");
        CHECK_JSON_HAS(got, "\"nested\":{\"x\":null}");
    }
    zarr_string_free(got);
    file = (char *)file_read(zattrs, NULL);
    CHECK_JSON_HAS(file, "\"units\":\"K\"");
    free(file);
    /* Set replaces the whole document. */
    CHECK_OK(attrs_set(n, "{\"name\":\"temp\\u00e9rature \xe2\x84\x83\"}"));
    if (CHECK_OK(attrs_get(n, &got))) {
        CHECK_JSON_LACKS(got, "units");
        CHECK(strstr(got, "temp\xc3\xa9rature \xe2\x84\x83") || strstr(got, "temp\\u00e9rature"));
    }
    zarr_string_free(got);
    /* Refused documents leave the attributes as they were. */
    CHECK_OK(attrs_set(n, "{\"v\":1}"));
    for (size_t i = 0; i < ARRAY_LEN(not_objects); i++) {
        CHECK_CTX("%s attrs %s", path, not_objects[i]);
        CHECK_STATUS(attrs_set(n, not_objects[i]), ZARR_ERR_INVALID_METADATA); /* as zarr.h says */
    }
    for (size_t i = 0; i < ARRAY_LEN(malformed); i++) {
        CHECK_CTX("%s attrs %s", path, malformed[i]);
        CHECK_STATUS2(attrs_set(n, malformed[i]), ZARR_ERR_INVALID_ARGUMENT, ZARR_ERR_INVALID_METADATA);
    }
    CHECK_CTX_CLEAR();
    check_attrs(n, "{\"v\":1}");
    CHECK_OK(attrs_set(n, "{}"));
    check_attrs(n, "{}");
    CHECK_OK(attrs_set(n, "{\"final\":[true,false]}"));
}

static void test_attrs(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    struct node arr = {NULL, NULL}, grp = {NULL, NULL};
    if (!s) goto out;
    arr.a = create_array(s, "g/arr", ARR);
    CHECK_OK(zarr_group_open(s, "g", &grp.g));
    if (!arr.a || !grp.g) goto out;
    run_attrs(arr, dir, "g/arr");
    run_attrs(grp, dir, "g");
    /* Array and group attributes are separate documents. */
    CHECK_OK(zarr_group_attrs_set(grp.g, "{\"who\":\"group\"}"));
    check_attrs(arr, "{\"final\":[true,false]}");
    CHECK_OK(zarr_array_close(arr.a));
    CHECK_OK(zarr_group_close(grp.g));
    CHECK_OK(zarr_store_close(s));
    /* They persist. */
    s = open_store(dir, ZARR_MODE_READ);
    arr.a = s ? open_array(s, "g/arr") : NULL;
    grp.g = NULL;
    if (arr.a) check_attrs(arr, "{\"final\":[true,false]}");
    if (s && CHECK_OK(zarr_group_open(s, "g", &grp.g))) check_attrs(grp, "{\"who\":\"group\"}");
    zarr_array_close(arr.a);
    zarr_group_close(grp.g);
    CHECK_OK(zarr_store_close(s));
out:
    tmpdir_remove(dir);
}

int main(void) {
    test_nested_groups();
    test_lists();
    test_conflicts();
    test_invalid_paths();
    test_normalised_paths();
    test_attrs();
    return check_summary("test_groups_attrs");
}
