/* test_edits.c - editing an existing node: attributes key by key (zarr_array_attrs_update,
 * _attrs_delete and the group calls) in v2 and v3, with NaN values kept as written, and the fill
 * value of an array (zarr_store_set_fill_value), checked before anything is written. */
#include "testutil.h"

static void check_attrs(zarr_array *a, zarr_group *g, const char *want, int line) {
    char *json = NULL;
    zarr_status st = a ? zarr_array_attrs_get(a, &json) : zarr_group_attrs_get(g, &json);
    if (!check_status(st, ZARR_OK, ZARR_OK, "attrs_get", __FILE__, line)) return;
    check_json_same_object(json, want, __FILE__, line);
    zarr_string_free(json);
}

static void test_attributes(zarr_store *s, int format) {
    zarr_group *g = NULL;
    CHECK_CTX("v%d", format);
    const char *gpath = format == 3 ? "g3" : "g2";
    if (!CHECK_OK(zarr_group_create_format(s, gpath, format, &g))) return;
    zarr_array *a = create_array(s, strf("%s/a", gpath),
                                 format == 3 ? "{\"zarr_format\":3,\"shape\":[2],\"data_type\":\"int8\","
                                               "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":"
                                               "{\"chunk_shape\":[2]}}}"
                                             : "{\"shape\":[2],\"chunks\":[2],\"dtype\":\"|i1\"}");
    if (!a) return;
    CHECK_OK(zarr_array_attrs_update(a, "{\"units\": \"m\", \"scale\": NaN}"));
    CHECK_OK(zarr_array_attrs_update(a, "{\"offset\": [1, 2]}"));
    CHECK_OK(zarr_array_attrs_update(a, "{\"units\": \"km\"}"));
    char *json = NULL;
    CHECK_OK(zarr_array_attrs_get(a, &json));
    CHECK_CONTAINS(json, "NaN"); /* kept as written, as zarr-python writes it */
    CHECK_CONTAINS(json, "\"km\"");
    zarr_string_free(json);
    CHECK_OK(zarr_array_attrs_delete(a, "scale"));
    check_attrs(a, NULL, "{\"units\": \"km\", \"offset\": [1, 2]}", __LINE__);
    CHECK_STATUS(zarr_array_attrs_delete(a, "scale"), ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "scale");
    CHECK_STATUS(zarr_array_attrs_update(a, "[1]"), ZARR_ERR_INVALID_METADATA);
    CHECK_STATUS(zarr_array_attrs_update(a, "{\"x\": }"), ZARR_ERR_INVALID_METADATA);
    check_attrs(a, NULL, "{\"units\": \"km\", \"offset\": [1, 2]}", __LINE__);
    /* Groups, and the other members of a v3 zarr.json stay. */
    CHECK_OK(zarr_group_attrs_update(g, "{\"title\": \"t\"}"));
    CHECK_OK(zarr_group_attrs_update(g, "{\"history\": \"h\"}"));
    CHECK_OK(zarr_group_attrs_delete(g, "title"));
    check_attrs(NULL, g, "{\"history\": \"h\"}", __LINE__);
    CHECK_STATUS(zarr_group_attrs_delete(g, "title"), ZARR_ERR_NOT_FOUND);
    zarr_group *again = NULL;
    CHECK_OK(zarr_group_open(s, gpath, &again));
    int32_t f = 0;
    CHECK_OK(zarr_group_zarr_format(again, &f));
    CHECK(f == format);
    CHECK_OK(zarr_group_close(again));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_group_close(g));
    CHECK_CTX_CLEAR();
}

static double read_first(zarr_store *s, const char *path) {
    zarr_array *a = open_array(s, path);
    double v = 0;
    uint64_t start = 3, count = 1;
    if (a) CHECK_OK(zarr_array_read(a, 1, &start, &count, &v, sizeof v));
    zarr_array_close(a);
    return v;
}

static void test_fill_value(zarr_store *s) {
    const char *docs[2] = {"{\"shape\":[4],\"chunks\":[2],\"dtype\":\"<f8\",\"fill_value\":1.5}",
                           "{\"zarr_format\":3,\"shape\":[4],\"data_type\":\"float64\",\"fill_value\":1.5,"
                           "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}}}"};
    for (int v = 0; v < 2; v++) {
        const char *path = v ? "f3" : "f2";
        CHECK_CTX("%s", path);
        zarr_array *a = create_array(s, path, docs[v]);
        double one[2] = {7, 8};
        uint64_t start = 0, count = 2;
        if (!a) continue;
        CHECK_OK(zarr_array_write(a, 1, &start, &count, one, sizeof one));
        CHECK_OK(zarr_store_set_fill_value(s, path, "-2.25"));
        CHECK(read_first(s, path) == -2.25); /* chunk 1 was never written */
        CHECK_OK(zarr_store_set_fill_value(s, path, "\"NaN\""));
        double nan = read_first(s, path);
        CHECK(nan != nan);
        double back[2] = {0};
        zarr_array *b = open_array(s, path);
        if (b) CHECK_OK(zarr_array_read(b, 1, &start, &count, back, sizeof back));
        CHECK(back[0] == 7 && back[1] == 8); /* stored chunks keep their values */
        zarr_array_close(b);
        /* A value the type cannot hold changes nothing. */
        CHECK_STATUS(zarr_store_set_fill_value(s, path, "\"seven\""), ZARR_ERR_INVALID_METADATA);
        CHECK_STATUS(zarr_store_set_fill_value(s, path, "{"), ZARR_ERR_INVALID_METADATA);
        nan = read_first(s, path);
        CHECK(nan != nan);
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_CTX_CLEAR();
    CHECK_STATUS(zarr_store_set_fill_value(s, "nothing", "0"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_store_set_fill_value(s, "g2", "0"), ZARR_ERR_NOT_FOUND);
}

int main(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    if (s) {
        test_attributes(s, 2);
        test_attributes(s, 3);
        test_fill_value(s);
        CHECK_OK(zarr_store_close(s));
    }
    zarr_store *r = open_store(dir, ZARR_MODE_READ);
    zarr_group *g = NULL;
    if (r && CHECK_OK(zarr_group_open(r, "g2", &g))) {
        CHECK_STATUS(zarr_group_attrs_update(g, "{\"a\": 1}"), ZARR_ERR_READ_ONLY);
        CHECK_STATUS(zarr_store_set_fill_value(r, "f2", "0"), ZARR_ERR_READ_ONLY);
        CHECK_OK(zarr_group_close(g));
    }
    CHECK_OK(zarr_store_close(r));
    tmpdir_remove(dir);
    return check_summary("test_edits");
}
