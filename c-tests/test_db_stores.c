/* test_db_stores.c - SQLite and LMDB stores through the public header (sqlite://PATH,
 * lmdb://PATH): an array created, written, the store reopened read-only and read back; raw keys;
 * missing and damaged databases refused with messages naming them. */
#include "testutil.h"

static const char *META =
    "{\"shape\":[6,5],\"chunks\":[4,2],\"dtype\":\"<i4\",\"fill_value\":-1,"
    "\"compressor\":{\"id\":\"zlib\",\"level\":1}}";

static int32_t DATA[30];
static uint64_t START[2] = {0, 0}, COUNT[2] = {6, 5};

static void round_trip(const char *location, const char *file) {
    CHECK_CTX("%s", location);
    zarr_store *s = open_store(location, ZARR_MODE_WRITE);
    if (!s) return;
    zarr_group *g = NULL;
    if (CHECK_OK(zarr_group_create(s, "g", &g))) {
        CHECK_OK(zarr_group_attrs_set(g, "{\"title\":\"db\"}"));
        zarr_group_close(g);
    }
    zarr_array *a = create_array(s, "g/a", META);
    if (a) {
        uint64_t count[2] = {6, 4}; /* the last column of chunks stays unwritten */
        int32_t part[24];
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 4; c++) part[r * 4 + c] = DATA[r * 5 + c];
        CHECK_OK(zarr_array_write(a, 2, START, count, part, sizeof part));
        zarr_array_close(a);
    }
    CHECK_OK(zarr_consolidate_metadata(s));
    CHECK_OK(zarr_store_close(s));
    CHECK(file_exists(file));

    s = open_store(location, ZARR_MODE_READ);
    if (!s) return;
    bool consolidated = false;
    CHECK_OK(zarr_store_uses_consolidated(s, &consolidated));
    CHECK(consolidated);
    a = open_array(s, "g/a");
    if (a) {
        int32_t back[30];
        CHECK_OK(zarr_array_read(a, 2, START, COUNT, back, sizeof back));
        for (int i = 0; i < 30; i++) CHECK(back[i] == (i % 5 == 4 ? -1 : DATA[i]));
        int32_t one = 7;
        uint64_t unit[2] = {1, 1};
        CHECK_STATUS(zarr_array_write(a, 2, START, unit, &one, sizeof one), ZARR_ERR_READ_ONLY);
        zarr_array_close(a);
    }
    char *json = NULL;
    if (CHECK_OK(zarr_store_list_dir(s, "g/a/", &json)))
        CHECK_JSON_EQ(json, "[\".zarray\",\"0.0\",\"0.1\",\"1.0\",\"1.1\"]");
    zarr_string_free(json);
    bool exists = false;
    uint64_t size = 0;
    CHECK_OK(zarr_store_value_size(s, "g/a/1.1", &exists, &size));
    CHECK(exists && size > 0);
    CHECK_OK(zarr_store_value_size(s, "g/a/0.2", &exists, &size));
    CHECK(!exists);
    CHECK_STATUS(zarr_store_set(s, "k", "v", 1), ZARR_ERR_READ_ONLY);
    CHECK_OK(zarr_store_close(s));
    CHECK_CTX_CLEAR();
}

/* A missing database opened read-only, and a file that is not one, fail naming the path. */
static void refusals(const char *dir) {
    int sentinel;
    zarr_store *s = (zarr_store *)&sentinel;
    const char *missing = strf("sqlite://%s/missing.db", dir);
    CHECK_STATUS(zarr_store_open(missing, ZARR_MODE_READ, &s), ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "missing.db");
    CHECK_STATUS(zarr_store_open(strf("lmdb://%s/missing.mdb", dir), ZARR_MODE_READ, &s),
                 ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "missing.mdb");

    char garbage[8192];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (char)(i * 7 + 3);
    const char *bad = strf("%s/bad.db", dir);
    CHECK(file_write(bad, garbage, sizeof garbage));
    CHECK_STATUS(zarr_store_open(strf("sqlite://%s", bad), ZARR_MODE_READ, &s),
                 ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "bad.db");
    CHECK_CONTAINS(zarr_last_error(), "not a database");
    CHECK_STATUS(zarr_store_open(strf("sqlite://%s", bad), ZARR_MODE_WRITE, &s),
                 ZARR_ERR_CORRUPT_CHUNK);
    CHECK(file_size(bad) == (long)sizeof garbage); /* never written over */

    const char *bad_env = strf("%s/bad.mdb", dir);
    CHECK(mkdir(bad_env, 0700) == 0);
    CHECK(file_write(strf("%s/data.mdb", bad_env), garbage, sizeof garbage));
    CHECK_STATUS(zarr_store_open(strf("lmdb://%s", bad_env), ZARR_MODE_READ, &s),
                 ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "bad.mdb");
    CHECK(s == (zarr_store *)&sentinel);
}

int main(void) {
    for (int i = 0; i < 30; i++) DATA[i] = i * 11 - 40;
    char *dir = tmpdir_make();
    const char *db = strf("%s/data.db", dir);
    round_trip(strf("sqlite://%s", db), db); /* an absolute path: three slashes */
    const char *env = strf("%s/data.mdb", dir);
    round_trip(strf("lmdb://%s", env), strf("%s/data.mdb", env));
    CHECK(file_exists(strf("%s/lock.mdb", env)));
    refusals(dir);
    bool has = false;
    CHECK_OK(zarr_has_feature("store:sqlite", &has));
    CHECK(has);
    CHECK_OK(zarr_has_feature("store:lmdb", &has));
    CHECK(has);
    tmpdir_remove(dir);
    return check_summary("test_db_stores");
}
