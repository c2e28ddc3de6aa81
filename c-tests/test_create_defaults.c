/* test_create_defaults.c - creation conveniences as zarr-python reads them: chunks guessed when not
 * given (zarr-python's guess_chunks: the values below are what zarr-python 2.18 computes), `true`
 * and `null` guessing too, `false` one chunk, an integer for every dimension, -1 or null for the
 * whole dimension, dimensions left out of the list whole; a v3 document without chunk_grid. */
#include "testutil.h"

static void expect_chunks(zarr_store *s, const char *name, const char *shape, const char *dtype,
                          const char *chunks, size_t ndim, const uint64_t *want, int v3) {
    CHECK_CTX("%s", name);
    char doc[512];
    if (v3)
        snprintf(doc, sizeof doc, "{\"zarr_format\":3,\"shape\":%s,\"data_type\":\"%s\"}", shape, dtype);
    else if (chunks)
        snprintf(doc, sizeof doc, "{\"shape\":%s,\"dtype\":\"%s\",\"chunks\":%s}", shape, dtype, chunks);
    else
        snprintf(doc, sizeof doc, "{\"shape\":%s,\"dtype\":\"%s\"}", shape, dtype);
    zarr_array *a = create_array(s, name, doc);
    if (!a) return;
    uint64_t got[MAX_DIMS] = {0};
    CHECK_OK(zarr_array_chunks(a, ndim, got));
    for (size_t i = 0; i < ndim; i++) CHECK(got[i] == want[i]);
    CHECK_OK(zarr_array_close(a));
}

int main(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    if (s) {
        expect_chunks(s, "a", "[10000,10000]", "<f8", NULL, 2, (uint64_t[]){313, 625}, 0);
        expect_chunks(s, "b", "[1000000]", "<f4", "true", 1, (uint64_t[]){125000}, 0);
        expect_chunks(s, "c", "[3,4000,5000]", "<i2", "null", 3, (uint64_t[]){1, 500, 1250}, 0);
        expect_chunks(s, "d", "[0]", "<f8", NULL, 1, (uint64_t[]){1}, 0);
        expect_chunks(s, "e", "[1048576,1048576]", "|u1", NULL, 2, (uint64_t[]){4096, 4096}, 0);
        expect_chunks(s, "f", "[100,200,300]", "<f8", "[-1,null,5]", 3, (uint64_t[]){100, 200, 5}, 0);
        expect_chunks(s, "g", "[20,30]", "<f8", "7", 2, (uint64_t[]){7, 7}, 0);
        expect_chunks(s, "h", "[20,30]", "<f8", "false", 2, (uint64_t[]){20, 30}, 0);
        expect_chunks(s, "i", "[20,30,40]", "<f8", "[4]", 3, (uint64_t[]){4, 30, 40}, 0);
        expect_chunks(s, "v3", "[10000,10000]", "float64", NULL, 2, (uint64_t[]){313, 625}, 1);
        CHECK_CTX_CLEAR();
        /* Nonsense is refused, naming the key. */
        zarr_array *a = NULL;
        CHECK_STATUS(zarr_array_create(s, "bad", "{\"shape\":[4],\"dtype\":\"<f8\",\"chunks\":[-2]}", &a),
                     ZARR_ERR_INVALID_METADATA);
        CHECK_CONTAINS(zarr_last_error(), "chunks");
        CHECK_STATUS(zarr_array_create(s, "bad", "{\"shape\":[4],\"dtype\":\"<f8\",\"chunks\":\"x\"}", &a),
                     ZARR_ERR_INVALID_METADATA);
        CHECK_STATUS(zarr_array_create(s, "bad", "{\"shape\":[4],\"dtype\":\"<f8\",\"chunks\":[1,2]}", &a),
                     ZARR_ERR_INVALID_METADATA);
        CHECK_OK(zarr_store_close(s));
    }
    tmpdir_remove(dir);
    return check_summary("test_create_defaults");
}
