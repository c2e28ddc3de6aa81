/* Consolidated metadata through the public header: writing .zmetadata, opening with it (the
 * per-node documents are then not read), ignoring it, handing it to another handle, keeping it current through the handle,
 * refreshing it, and bad documents. */
#include "check.h"
#include "testutil.h"

static int uses(zarr_store *s) {
    bool in_use = false;
    CHECK_OK(zarr_store_uses_consolidated(s, &in_use));
    return in_use;
}

/* The array g/a of `s` holds `data` (4 int16) and its attribute scale is NaN. */
static void reads_g_a(zarr_store *s, const int16_t *data) {
    zarr_array *a = open_array(s, "g/a");
    if (a == NULL) return;
    int16_t back[4] = {0};
    uint64_t start[1] = {0}, count[1] = {4};
    CHECK_OK(zarr_array_read(a, 1, start, count, back, sizeof back));
    CHECK(memcmp(back, data, sizeof back) == 0);
    char *attrs = NULL;
    if (CHECK_OK(zarr_array_attrs_get(a, &attrs))) CHECK_JSON_HAS(attrs, "\"scale\":NaN");
    zarr_string_free(attrs);
    zarr_array_close(a);
}

int main(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "g/a", "{\"shape\": [4], \"chunks\": [2], \"dtype\": \"<i2\"}");
    int16_t data[4] = {1, 2, 3, 4}, back[4] = {0};
    uint64_t start[1] = {0}, count[1] = {4};
    CHECK_OK(zarr_array_write(a, 1, start, count, data, sizeof data));
    CHECK_OK(zarr_array_attrs_set(a, "{\"scale\": NaN}"));
    zarr_array_close(a);
    CHECK(!uses(s));
    CHECK_OK(zarr_consolidate_metadata(s));
    CHECK(uses(s));
    CHECK(file_exists(strf("%s/.zmetadata", dir)));
    CHECK_OK(zarr_store_close(s));

    /* Remove the per-node documents: a consolidated open still finds everything. */
    CHECK(remove(strf("%s/g/a/.zarray", dir)) == 0);
    CHECK(remove(strf("%s/g/a/.zattrs", dir)) == 0);
    CHECK(remove(strf("%s/g/.zgroup", dir)) == 0);
    s = open_store(dir, ZARR_MODE_READ);
    CHECK(uses(s));
    reads_g_a(s, data);
    zarr_group *g = NULL;
    CHECK_OK(zarr_group_open(s, "g", &g));
    zarr_group_close(g);
    CHECK_STATUS(zarr_consolidate_metadata(s), ZARR_ERR_READ_ONLY);
    CHECK(uses(s)); /* a failed call keeps what the handle used */
    char *shared = NULL;
    CHECK_OK(zarr_store_consolidated_json(s, &shared));
    CHECK(shared != NULL);
    zarr_store_close(s);

    /* Ignoring it, the removed documents are missing. */
    s = open_store(dir, ZARR_MODE_READ | ZARR_OPEN_IGNORE_CONSOLIDATED);
    CHECK(!uses(s));
    zarr_array *missing = NULL;
    CHECK_STATUS(zarr_array_open(s, "g/a", &missing), ZARR_ERR_NOT_FOUND);
    char *none = (char *)1;
    CHECK_OK(zarr_store_consolidated_json(s, &none));
    CHECK(none == NULL);

    /* Handed another handle's consolidated metadata, it finds them again without reading
     * .zmetadata; a document that is not consolidated metadata changes nothing; NULL stops. */
    CHECK_OK(zarr_store_use_consolidated_json(s, shared));
    CHECK(uses(s));
    reads_g_a(s, data);
    CHECK_STATUS(zarr_store_use_consolidated_json(s, "{\"metadata\": {\"a/b\": {}}, "
                                                     "\"zarr_consolidated_format\": 1}"),
                 ZARR_ERR_INVALID_METADATA);
    CHECK_JSON_HAS(zarr_last_error(), "a/b");
    CHECK(uses(s));
    CHECK_OK(zarr_store_use_consolidated_json(s, NULL));
    CHECK(!uses(s));
    CHECK_STATUS(zarr_array_open(s, "g/a", &missing), ZARR_ERR_NOT_FOUND);
    zarr_string_free(shared);
    zarr_store_close(s);

    /* A v3 hierarchy's consolidated metadata (in the root zarr.json) travels the same way. */
    char *dir3 = tmpdir_make();
    s = open_store(dir3, ZARR_MODE_WRITE);
    zarr_group *root = NULL;
    CHECK_OK(zarr_group_create_format(s, "", 3, &root));
    zarr_group_close(root);
    a = create_array(s, "v", "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [4], "
                            "\"data_type\": \"int16\"}");
    if (a) CHECK_OK(zarr_array_write(a, 1, start, count, data, sizeof data));
    zarr_array_close(a);
    CHECK_OK(zarr_consolidate_metadata(s));
    CHECK_OK(zarr_store_consolidated_json(s, &shared));
    zarr_store_close(s);
    CHECK(remove(strf("%s/v/zarr.json", dir3)) == 0);
    s = open_store(dir3, ZARR_MODE_READ | ZARR_OPEN_IGNORE_CONSOLIDATED);
    CHECK_STATUS(zarr_array_open(s, "v", &missing), ZARR_ERR_NOT_FOUND);
    CHECK_OK(zarr_store_use_consolidated_json(s, shared));
    a = open_array(s, "v");
    if (a) {
        memset(back, 0, sizeof back);
        CHECK_OK(zarr_array_read(a, 1, start, count, back, sizeof back));
        CHECK(memcmp(back, data, sizeof data) == 0);
        zarr_array_close(a);
    }
    zarr_string_free(shared);
    zarr_store_close(s);
    tmpdir_remove(dir3);
    CHECK_STATUS(zarr_store_open(dir, 0x20, &s), ZARR_ERR_INVALID_ARGUMENT);

    /* Writes through a consolidated handle keep its view current; .zmetadata on disk goes
     * stale until consolidated again, and another handle sees the change after a refresh. */
    s = open_store(dir, ZARR_MODE_WRITE);
    zarr_store *other = open_store(dir, ZARR_MODE_READ);
    a = create_array(s, "g/b", "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<f4\"}");
    zarr_array_close(a);
    zarr_node_kind kind = ZARR_NODE_NONE;
    CHECK_OK(zarr_store_node_kind(s, "g/b", &kind));
    CHECK(kind == ZARR_NODE_ARRAY);
    CHECK_OK(zarr_store_node_kind(other, "g/b", &kind));
    CHECK(kind == ZARR_NODE_NONE);
    CHECK_OK(zarr_consolidate_metadata(s));
    bool in_use = false;
    CHECK_OK(zarr_store_refresh_consolidated(other, &in_use));
    CHECK(in_use);
    CHECK_OK(zarr_store_node_kind(other, "g/b", &kind));
    CHECK(kind == ZARR_NODE_ARRAY);
    CHECK_OK(zarr_store_refresh_consolidated(other, NULL));
    zarr_store_close(other);
    zarr_store_close(s);

    /* A corrupt .zmetadata is a clear error, and can be ignored; a handle refreshing from it
     * goes on with what it had. */
    zarr_store *keep = open_store(dir, ZARR_MODE_READ);
    const char *bad = "{\"metadata\": {\"../.zarray\": {}}, \"zarr_consolidated_format\": 1}";
    CHECK(file_write(strf("%s/.zmetadata", dir), bad, strlen(bad)));
    CHECK_STATUS(zarr_store_refresh_consolidated(keep, NULL), ZARR_ERR_INVALID_METADATA);
    CHECK(uses(keep));
    CHECK_OK(zarr_store_node_kind(keep, "g/b", &kind));
    CHECK(kind == ZARR_NODE_ARRAY);
    zarr_store_close(keep);
    CHECK_ERR(zarr_store_open(dir, ZARR_MODE_READ, &s));
    CHECK_OK(zarr_store_open(dir, ZARR_MODE_READ | ZARR_OPEN_IGNORE_CONSOLIDATED, &s));
    zarr_store_close(s);
    CHECK(file_write(strf("%s/.zmetadata", dir), "{\"metadata\": [", 14));
    CHECK_STATUS(zarr_store_open(dir, ZARR_MODE_READ, &s), ZARR_ERR_INVALID_METADATA);
    CHECK_STATUS(zarr_consolidate_metadata(NULL), ZARR_ERR_NULL_POINTER);
    tmpdir_remove(dir);
    return check_summary("test_consolidated");
}
