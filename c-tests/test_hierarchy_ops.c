/* Hierarchy operations through the public header: what a path holds, deleting and moving
 * arrays and groups (with their chunks and attributes), and an array's info JSON. */
#include "check.h"
#include "testutil.h"

#include <string.h>

static zarr_node_kind kind_of(zarr_store *s, const char *path) {
    zarr_node_kind k = -1;
    CHECK_OK(zarr_store_node_kind(s, path, &k));
    return k;
}

int main(void) {
    char *dir = tmpdir_make();
    if (!dir) return 1;
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_group *g = NULL;
    CHECK_OK(zarr_group_create(s, "a/b", &g));
    zarr_group_close(g);
    zarr_array *a = create_array(s, "a/b/x", "{\"shape\": [4, 4], \"chunks\": [2, 2], \"dtype\": \"<i4\", "
                                             "\"compressor\": {\"id\": \"zstd\", \"level\": 1}}");
    int32_t data[4] = {1, 2, 3, 4}, back[4] = {0};
    uint64_t start[2] = {0, 0}, count[2] = {2, 2};
    CHECK_OK(zarr_array_write(a, 2, start, count, data, sizeof data));
    CHECK_OK(zarr_array_attrs_set(a, "{\"units\": \"m\"}"));

    /* What paths hold. */
    CHECK(kind_of(s, "") == ZARR_NODE_GROUP);
    CHECK(kind_of(s, "a/b") == ZARR_NODE_GROUP);
    CHECK(kind_of(s, "/a//b/x/") == ZARR_NODE_ARRAY);
    CHECK(kind_of(s, "a/nothing") == ZARR_NODE_NONE);
    zarr_node_kind k = 7;
    CHECK_STATUS(zarr_store_node_kind(s, "a/../x", &k), ZARR_ERR_INVALID_PATH);
    CHECK_STATUS(zarr_store_node_kind(s, NULL, &k), ZARR_ERR_NULL_POINTER);
    CHECK(k == 7);

    /* Info: one of four chunks stored, the sizes of every key. */
    char *info = NULL;
    if (CHECK_OK(zarr_array_info_json(a, &info))) {
        CHECK_JSON_HAS(info, "\"chunks_initialized\":1");
        CHECK_JSON_HAS(info, "\"chunks_total\":4");
        CHECK_JSON_HAS(info, "\"nbytes\":64");
        long stored = file_size(strf("%s/a/b/x/.zarray", dir)) + file_size(strf("%s/a/b/x/.zattrs", dir)) +
                      file_size(strf("%s/a/b/x/0.0", dir));
        CHECK_JSON_HAS(info, strf("\"nbytes_stored\":%ld", stored));
        CHECK_JSON_HAS(info, "\"name\":\"/a/b/x\"");
        CHECK_JSON_HAS(info, "\"store_type\":\"directory\"");
        CHECK_JSON_HAS(info, "\"read_only\":false");
    }
    zarr_string_free(info);
    /* The same as zarr-python 2's str(z.info) prints it. */
    info = NULL;
    if (CHECK_OK(zarr_array_info_text(a, &info))) {
        CHECK_CONTAINS(info, "Name               : /a/b/x\n");
        CHECK_CONTAINS(info, "Read-only          : False\n");
        CHECK_CONTAINS(info, "Store type         : directory\n");
        CHECK_CONTAINS(info, "Chunks initialized : 1/4\n");
        CHECK(info[strlen(info) - 1] == '\n');
    }
    zarr_string_free(info);
    CHECK_STATUS(zarr_array_info_text(a, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_info_text(NULL, &info), ZARR_ERR_NULL_POINTER);
    zarr_array_close(a);

    /* Move a group with its array; the old place holds nothing, the data moved along. */
    CHECK_OK(zarr_store_move(s, "a/b", "c/d"));
    CHECK(kind_of(s, "a/b") == ZARR_NODE_NONE);
    CHECK(kind_of(s, "c") == ZARR_NODE_GROUP);
    CHECK(!dir_exists(strf("%s/a/b/x", dir)) || !file_exists(strf("%s/a/b/x/0.0", dir)));
    a = open_array(s, "c/d/x");
    if (a) {
        CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back));
        CHECK(memcmp(back, data, sizeof data) == 0);
        char *attrs = NULL;
        if (CHECK_OK(zarr_array_attrs_get(a, &attrs))) CHECK_CONTAINS(attrs, "units");
        zarr_string_free(attrs);
        zarr_array_close(a);
    }
    CHECK_STATUS(zarr_store_move(s, "c", "c/d/inside"), ZARR_ERR_INVALID_PATH);
    CHECK_STATUS(zarr_store_move(s, "nope", "z"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_store_move(s, "c/d/x", "a"), ZARR_ERR_ALREADY_EXISTS);
    CHECK_STATUS(zarr_store_move(s, "", "z"), ZARR_ERR_INVALID_PATH);

    /* Delete: the subtree goes, siblings stay; the root cannot go. */
    CHECK_OK(zarr_store_delete(s, "c/d"));
    CHECK(kind_of(s, "c/d/x") == ZARR_NODE_NONE && kind_of(s, "c") == ZARR_NODE_GROUP);
    CHECK(!file_exists(strf("%s/c/d/x/0.0", dir)));
    CHECK_STATUS(zarr_store_delete(s, "c/d"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_store_delete(s, ""), ZARR_ERR_INVALID_PATH);
    zarr_store_close(s);

    /* Read-only stores refuse both. */
    s = open_store(dir, ZARR_MODE_READ);
    CHECK_STATUS(zarr_store_delete(s, "c"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_store_move(s, "c", "e"), ZARR_ERR_READ_ONLY);
    CHECK(kind_of(s, "c") == ZARR_NODE_GROUP);
    zarr_store_close(s);
    tmpdir_remove(dir);
    return check_summary("test_hierarchy_ops");
}
