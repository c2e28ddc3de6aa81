/* test_store.c - zarr_store_open/close on memory and directory stores: modes, missing
 * directories, read-only stores, persistence, and handles outliving their store. */
#include "testutil.h"

static const char *SMALL = "{\"shape\":[6,5],\"chunks\":[4,4],\"dtype\":\"<i4\",\"fill_value\":-1}";

/* Writes values 1..30 into the 6x5 array and checks that they read back. */
static void write_and_verify(zarr_array *a) {
    int32_t data[30], back[30];
    uint64_t start[2] = {0, 0}, count[2] = {6, 5};
    for (int i = 0; i < 30; i++) data[i] = i + 1;
    CHECK_OK(zarr_array_write(a, 2, start, count, data, sizeof data));
    CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back));
    CHECK(memcmp(data, back, sizeof data) == 0);
}

static int array_holds_1_to_30(zarr_array *a) {
    int32_t back[30];
    uint64_t start[2] = {0, 0}, count[2] = {6, 5};
    if (!CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back))) return 0;
    for (int i = 0; i < 30; i++)
        if (back[i] != i + 1) return 0;
    return 1;
}

static void test_memory_store(void) {
    zarr_store *s1 = open_store("memory:", ZARR_MODE_WRITE), *s2 = open_store("memory:", ZARR_MODE_WRITE);
    zarr_store *r = open_store("memory:", ZARR_MODE_READ);
    zarr_array *a = create_array(s1, "data", SMALL), *other = (zarr_array *)&s1;
    zarr_group *g = (zarr_group *)&s1;
    if (!a) return;
    write_and_verify(a);
    /* Each "memory:" store is fresh and independent. */
    CHECK_STATUS(zarr_array_open(s2, "data", &other), ZARR_ERR_NOT_FOUND);
    CHECK(other == (zarr_array *)&s1);
    /* A READ memory store is empty and immutable. */
    CHECK_STATUS(zarr_group_open(r, "", &g), ZARR_ERR_NOT_FOUND);
    CHECK(g == (zarr_group *)&s1);
    CHECK_STATUS(zarr_array_create(r, "x", SMALL, &other), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_create(r, "x", &g), ZARR_ERR_READ_ONLY);
    /* Reopening within the same store sees the data. */
    other = open_array(s1, "data");
    CHECK(other && array_holds_1_to_30(other));
    CHECK_OK(zarr_array_close(other));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s1));
    CHECK_OK(zarr_store_close(s2));
    CHECK_OK(zarr_store_close(r));
}

static void test_open_errors(void) {
    char *dir = tmpdir_make();
    const char *missing = strf("%s/missing-store.zarr", dir), *file = strf("%s/plain-file", dir);
    int sentinel;
    zarr_store *s = (zarr_store *)&sentinel;
    static const zarr_open_mode bad_modes[] = {5, -1, 99, INT32_MIN}; /* 0-4 are the modes */

    CHECK_STATUS(zarr_store_open(missing, ZARR_MODE_READ, &s), ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "missing-store.zarr");
    CHECK(!dir_exists(missing)); /* READ never creates */
    for (size_t i = 0; i < ARRAY_LEN(bad_modes); i++) {
        CHECK_CTX("mode %d", (int)bad_modes[i]);
        CHECK_STATUS(zarr_store_open(dir, bad_modes[i], &s), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_store_open("memory:", bad_modes[i], &s), ZARR_ERR_INVALID_ARGUMENT);
    }
    CHECK_CTX_CLEAR();
    /* A regular file is not a directory store. */
    CHECK(file_write(file, "x", 1));
    CHECK_ERR(zarr_store_open(file, ZARR_MODE_WRITE, &s));
    CHECK(s == (zarr_store *)&sentinel); /* outputs untouched on failure */
    /* Store options: remote stores only, every member known and of the right type. */
    CHECK_STATUS(zarr_store_open_options(dir, ZARR_MODE_READ, "{\"region\": \"eu-west-1\"}", &s),
                 ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "s3://");
    CHECK_STATUS(zarr_store_open_options("s3://bucket/x", ZARR_MODE_READ, "{\"regoin\": \"x\"}", &s),
                 ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "regoin");
    CHECK_STATUS(zarr_store_open_options("s3://bucket/x", ZARR_MODE_READ, "{\"retries\": \"3\"}", &s),
                 ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "retries");
    CHECK_STATUS(zarr_store_open_options("https://example.org/a.zarr", ZARR_MODE_WRITE, NULL, &s),
                 ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_store_open("s3:///prefix", ZARR_MODE_READ, &s), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "no bucket name");
    CHECK(s == (zarr_store *)&sentinel);
    CHECK_STATUS(zarr_store_open_options("s3://bucket/x", ZARR_MODE_READ, "{\"conditional_writes\": 1}", &s),
                 ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "conditional_writes");
    /* No options at all: the same as zarr_store_open. */
    CHECK_OK(zarr_store_open_options("memory:", ZARR_MODE_WRITE, "{}", &s));
    {
        /* A local store makes no HTTP requests: its statistics are all zero. */
        zarr_request_stats stats;
        memset(&stats, 0xff, sizeof stats);
        CHECK_OK(zarr_store_request_stats(s, &stats));
        CHECK(stats.requests == 0 && stats.get == 0 && stats.retryable_failures == 0 &&
              stats.conflicts == 0 && stats.bytes_received == 0);
        CHECK_STATUS(zarr_store_request_stats(s, NULL), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_store_request_stats(NULL, &stats), ZARR_ERR_NULL_POINTER);
    }
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

static void test_directory_store(void) {
    char *dir = tmpdir_make();
    const char *root = strf("%s/deep/er/store.zarr", dir);
    zarr_store *s = open_store(root, ZARR_MODE_WRITE); /* creates missing parents */
    zarr_array *a;
    CHECK(dir_exists(root));
    if (!s) goto out;
    a = create_array(s, "g/data", SMALL);
    if (a) {
        write_and_verify(a);
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_OK(zarr_store_close(s));
    CHECK(file_exists(strf("%s/g/data/.zarray", root)));
    CHECK(file_exists(strf("%s/g/data/1.1", root)));
    CHECK(file_exists(strf("%s/g/.zgroup", root)));
    CHECK(file_exists(strf("%s/.zgroup", root)));

    /* Persistence: a new store on the same directory (READ, with a trailing slash). */
    s = open_store(strf("%s/", root), ZARR_MODE_READ);
    a = s ? open_array(s, "g/data") : NULL;
    CHECK(a && array_holds_1_to_30(a));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));

    /* A relative location is resolved against the current directory. */
    {
        char cwd[4096];
        CHECK(getcwd(cwd, sizeof cwd) != NULL);
        CHECK(chdir(strf("%s/deep", dir)) == 0);
        s = open_store("er/store.zarr", ZARR_MODE_READ);
        a = s ? open_array(s, "g/data") : NULL;
        CHECK(a && array_holds_1_to_30(a));
        CHECK_OK(zarr_array_close(a));
        CHECK_OK(zarr_store_close(s));
        CHECK(chdir(cwd) == 0);
    }
out:
    tmpdir_remove(dir);
}

/* Every mutating call on a READ store fails with READ_ONLY and writes nothing. */
static void test_read_only(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "data", SMALL) : NULL, *other;
    zarr_group *g = NULL, *og;
    int32_t vals[4] = {7, 7, 7, 7};
    uint64_t start[2] = {4, 3}, count[2] = {2, 2};
    long files_before;
    char *attrs = NULL;
    int sentinel;
    if (!a) goto out;
    write_and_verify(a);
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_group_create(s, "grp", &g));
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_store_close(s));

    files_before = count_files(dir);
    s = open_store(dir, ZARR_MODE_READ);
    a = s ? open_array(s, "data") : NULL;
    if (!a) goto out;
    CHECK_OK(zarr_group_open(s, "grp", &g));
    other = (zarr_array *)&sentinel;
    og = (zarr_group *)&sentinel;
    CHECK_STATUS(zarr_array_write(a, 2, start, count, vals, sizeof vals), ZARR_ERR_READ_ONLY);
    start[0] = 0; /* a chunk-aligned, whole-chunk write too */
    start[1] = 0;
    count[0] = count[1] = 2;
    CHECK_STATUS(zarr_array_write(a, 2, start, count, vals, sizeof vals), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_attrs_set(a, "{\"k\":1}"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_attrs_set(g, "{\"k\":1}"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_create(s, "new", SMALL, &other), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_create(s, "grp/new", SMALL, &other), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_create(s, "newgrp/sub", &og), ZARR_ERR_READ_ONLY);
    CHECK(other == (zarr_array *)&sentinel && og == (zarr_group *)&sentinel);
    CHECK_U64_EQ(count_files(dir), files_before);
    CHECK(!dir_exists(strf("%s/new", dir)) && !dir_exists(strf("%s/newgrp", dir)));
    /* Reads still work and see the old data. */
    CHECK(array_holds_1_to_30(a));
    CHECK_OK(zarr_array_attrs_get(a, &attrs));
    CHECK_JSON_EQ(attrs, "{}");
    zarr_string_free(attrs);
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
out:
    tmpdir_remove(dir);
}

/* Arrays and groups keep their store alive after zarr_store_close. */
static void test_handles_outlive_store(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE), *m = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "data", SMALL) : NULL;
    zarr_array *ma = m ? create_array(m, "data", SMALL) : NULL;
    zarr_group *g = NULL;
    char *list = NULL;
    if (!a || !ma) goto out;
    CHECK_OK(zarr_group_create(s, "grp", &g));
    CHECK_OK(zarr_store_close(s));
    CHECK_OK(zarr_store_close(m));
    write_and_verify(a);
    write_and_verify(ma); /* the memory store's data lives as long as the array */
    CHECK(array_holds_1_to_30(ma));
    CHECK_OK(zarr_group_attrs_set(g, "{\"after\":\"close\"}"));
    if (CHECK_OK(zarr_group_list(g, &list))) CHECK_JSON_EQ(list, "{\"arrays\":[],\"groups\":[]}");
    zarr_string_free(list);
    CHECK(file_exists(strf("%s/data/0.0", dir)));
    CHECK(file_exists(strf("%s/grp/.zattrs", dir)));
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_array_close(ma));
out:
    tmpdir_remove(dir);
}

int main(void) {
    test_memory_store();
    test_open_errors();
    test_directory_store();
    test_read_only();
    test_handles_outlive_store();
    return check_summary("test_store");
}
