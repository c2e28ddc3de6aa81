/* test_zip_store.c - zip stores through the public header: a new archive written by
 * zarr_store_close and read back exactly; read-only refusals; existing archives appended to
 * (the last write of a key wins, erased chunks left out), deflated members, zarr_store_flush
 * without closing, and a writer killed before its close leaving the archive as it was;
 * missing, corrupt and truncated archives refused with clear errors. */
#include "testutil.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *META =
    "{\"shape\":[7,5],\"chunks\":[3,2],\"dtype\":\"<i4\",\"fill_value\":-1,"
    "\"compressor\":{\"id\":\"zstd\",\"level\":1}}";
static const char *NESTED =
    "{\"shape\":[4,6],\"chunks\":[2,3],\"dtype\":\">f8\",\"fill_value\":0.5,"
    "\"dimension_separator\":\"/\"}";

static int32_t DATA[35];
static double FLOATS[24];
static uint64_t START[2] = {0, 0}, DATA_COUNT[2] = {7, 5}, FLOAT_COUNT[2] = {4, 6};

/* Writes a new zip: groups, attributes, a compressed array and a nested-key array with one
 * chunk left unwritten. Returns 1 when the archive was written. */
static int write_new_zip(const char *path) {
    zarr_store *s = open_store(path, ZARR_MODE_WRITE);
    zarr_group *g = NULL;
    if (!s) return 0;
    CHECK(!file_exists(path) || file_size(path) == 0); /* nothing is written before the close */
    CHECK_OK(zarr_group_create(s, "g/h", &g));
    CHECK_OK(zarr_group_attrs_set(g, "{\"title\":\"zip\",\"n\":3}"));
    zarr_group_close(g);
    zarr_array *a = create_array(s, "g/a", META);
    zarr_array *b = create_array(s, "g/h/nested", NESTED);
    if (a) {
        int32_t back[35];
        CHECK_OK(zarr_array_write(a, 2, START, DATA_COUNT, DATA, sizeof DATA));
        CHECK_OK(zarr_array_read(a, 2, START, DATA_COUNT, back, sizeof back)); /* before the close */
        CHECK(memcmp(back, DATA, sizeof DATA) == 0);
    }
    if (b) {
        uint64_t count[2] = {2, 6};
        CHECK_OK(zarr_array_write(b, 2, START, count, FLOATS, 12 * sizeof(double)));
    }
    zarr_array_close(a);
    zarr_array_close(b);
    int ok = CHECK_OK(zarr_store_close(s));
    CHECK(file_exists(path) && file_size(path) > 0);
    return ok;
}

static void test_round_trip(const char *dir) {
    const char *path = strf("%s/sub/dir/data.zip", dir); /* missing parents are created */
    if (!write_new_zip(path)) return;
    zarr_store *s = open_store(path, ZARR_MODE_READ);
    if (!s) return;
    zarr_group *g = NULL;
    char *json = NULL;
    if (CHECK_OK(zarr_group_open(s, "g", &g))) {
        if (CHECK_OK(zarr_group_list(g, &json))) CHECK_JSON_EQ(json, "{\"arrays\":[\"a\"],\"groups\":[\"h\"]}");
        zarr_string_free(json);
        zarr_group_close(g);
    }
    if (CHECK_OK(zarr_group_open(s, "g/h", &g))) {
        if (CHECK_OK(zarr_group_attrs_get(g, &json))) CHECK_JSON_EQ(json, "{\"title\":\"zip\",\"n\":3}");
        zarr_string_free(json);
        zarr_group_close(g);
    }
    zarr_node_kind kind = ZARR_NODE_NONE;
    CHECK_OK(zarr_store_node_kind(s, "", &kind));
    CHECK(kind == ZARR_NODE_GROUP); /* the root group was created as an ancestor */

    zarr_array *a = open_array(s, "g/a");
    if (a) {
        int32_t back[35] = {0};
        CHECK_OK(zarr_array_read(a, 2, START, DATA_COUNT, back, sizeof back));
        CHECK(memcmp(back, DATA, sizeof DATA) == 0);
        uint64_t start[2] = {5, 3}, count[2] = {2, 2};
        int32_t corner[4];
        CHECK_OK(zarr_array_read(a, 2, start, count, corner, sizeof corner));
        CHECK(corner[0] == 28 && corner[1] == 29 && corner[2] == 33 && corner[3] == 34);
        if (CHECK_OK(zarr_array_compressor_json(a, &json))) CHECK_JSON_HAS(json, "\"id\":\"zstd\"");
        zarr_string_free(json);
        zarr_array_close(a);
    }
    zarr_array *b = open_array(s, "g/h/nested");
    if (b) {
        double back[24];
        CHECK_OK(zarr_array_read(b, 2, START, FLOAT_COUNT, back, sizeof back));
        CHECK(memcmp(back, FLOATS, 12 * sizeof(double)) == 0);
        for (int i = 12; i < 24; i++) CHECK(back[i] == 0.5); /* never written: the fill value */
        zarr_array_close(b);
    }
    CHECK_OK(zarr_store_close(s));
}

static void test_read_only_refusals(const char *dir) {
    const char *path = strf("%s/ro.zip", dir);
    if (!write_new_zip(path)) return;
    size_t before_len = 0, after_len = 0;
    unsigned char *before = file_read(path, &before_len);
    zarr_store *s = open_store(path, ZARR_MODE_READ);
    if (!s || !before) goto out;
    zarr_array *a = open_array(s, "g/a"), *other = NULL;
    zarr_group *g = NULL;
    if (a) {
        int32_t one = 9;
        uint64_t count[2] = {1, 1};
        CHECK_STATUS(zarr_array_write(a, 2, START, count, &one, sizeof one), ZARR_ERR_READ_ONLY);
        CHECK_CONTAINS(zarr_last_error(), "read");
        CHECK_STATUS(zarr_array_attrs_set(a, "{}"), ZARR_ERR_READ_ONLY);
        zarr_array_close(a);
    }
    CHECK_STATUS(zarr_group_create(s, "new", &g), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_create(s, "new", META, &other), ZARR_ERR_READ_ONLY);
    CHECK(g == NULL && other == NULL);
    CHECK_STATUS(zarr_store_delete(s, "g/a"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_store_move(s, "g/a", "g/b"), ZARR_ERR_READ_ONLY);
    CHECK_OK(zarr_store_close(s)); /* nothing to write */
    unsigned char *after = file_read(path, &after_len);
    CHECK(after && after_len == before_len && memcmp(before, after, before_len) == 0);
    free(after);
out:
    free(before);
}

static int32_t first_value(zarr_store *s, const char *path) {
    int32_t v = -999;
    uint64_t one[2] = {1, 1};
    zarr_array *a = open_array(s, path);
    if (a) CHECK_OK(zarr_array_read(a, 2, START, one, &v, sizeof v));
    zarr_array_close(a);
    return v;
}

/* Appending: a new array and a chunk written again in an existing archive; reads through the
 * same handle see both before the close; the archive is untouched until the close. */
static void test_append(const char *dir) {
    char path[1024]; /* kept: strf's buffers are reused by the checks' messages */
    snprintf(path, sizeof path, "%s/existing.zip", dir);
    if (!write_new_zip(path)) return;
    size_t before_len = 0, mid_len = 0;
    unsigned char *before = file_read(path, &before_len);
    zarr_store *s = open_store(path, ZARR_MODE_WRITE);
    zarr_array *a = s ? open_array(s, "g/a") : NULL, *c = s ? create_array(s, "c", META) : NULL;
    if (a && c) {
        int32_t nine = 9, zero[35] = {0};
        uint64_t count[2] = {1, 1};
        CHECK_OK(zarr_array_write(a, 2, START, count, &nine, sizeof nine));
        CHECK_OK(zarr_array_write(c, 2, START, DATA_COUNT, zero, sizeof zero));
        CHECK(first_value(s, "g/a") == 9 && first_value(s, "c") == 0);
        unsigned char *mid = file_read(path, &mid_len); /* nothing changed at the path yet */
        CHECK(mid && before && mid_len == before_len && memcmp(mid, before, before_len) == 0);
        free(mid);
    }
    zarr_array_close(a);
    zarr_array_close(c);
    CHECK_OK(zarr_store_close(s));
    s = open_store(path, ZARR_MODE_READ);
    if (s) {
        int32_t back[35];
        a = open_array(s, "g/a");
        if (a && CHECK_OK(zarr_array_read(a, 2, START, DATA_COUNT, back, sizeof back)))
            CHECK(back[0] == 9 && back[1] == 1 && back[34] == 34);
        zarr_array_close(a);
        CHECK(first_value(s, "c") == 0);
        char *json = NULL; /* c holds zeros, not its fill value -1: every chunk is a member */
        if (CHECK_OK(zarr_store_list_keys(s, "c/", &json))) CHECK_JSON_HAS(json, "\"c/2.2\"");
        zarr_string_free(json);
        CHECK_OK(zarr_store_close(s));
    }
    free(before);
    /* Any existing file that is not a zip is refused, naming it, and left alone. */
    int sentinel;
    s = (zarr_store *)&sentinel;
    const char *plain = strf("%s/plain.zip", dir);
    CHECK(file_write(plain, "hello", 5));
    CHECK_STATUS(zarr_store_open(plain, ZARR_MODE_WRITE, &s), ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "plain.zip");
    CHECK(s == (zarr_store *)&sentinel && file_size(plain) == 5);
}

/* Deflated members: smaller than stored, and read back. */
static void test_deflate(const char *dir) {
    char stored[1024], deflated[1024];
    snprintf(stored, sizeof stored, "%s/stored.zip", dir);
    snprintf(deflated, sizeof deflated, "%s/deflated.zip", dir);
    const char *raw = "{\"shape\":[7,5],\"chunks\":[7,5],\"dtype\":\"<i4\",\"fill_value\":-1,\"compressor\":null}";
    for (int round = 0; round < 2; round++) {
        zarr_store *s = NULL;
        const char *path = round ? deflated : stored;
        if (!CHECK_OK(zarr_store_open_options(path, ZARR_MODE_WRITE,
                                              round ? "{\"zip_compression\":\"deflate\"}" : "{\"zip_compression\":\"stored\"}",
                                              &s)))
            return;
        zarr_array *a = create_array(s, "a", raw);
        int32_t small[35] = {0};
        for (int i = 0; i < 35; i++) small[i] = i % 3;
        if (a) CHECK_OK(zarr_array_write(a, 2, START, DATA_COUNT, small, sizeof small));
        zarr_array_close(a);
        CHECK_OK(zarr_store_close(s));
    }
    CHECK(file_size(deflated) > 0 && file_size(deflated) < file_size(stored));
    size_t len = 0;
    unsigned char *bytes = file_read(deflated, &len);
    /* The local header of the first member says method 8 (deflate). */
    CHECK(bytes && len > 30 && memcmp(bytes, "PK\3\4", 4) == 0 && bytes[8] == 8);
    free(bytes);
    zarr_store *s = open_store(deflated, ZARR_MODE_READ);
    if (s) {
        int32_t back[35];
        zarr_array *a = open_array(s, "a");
        if (a && CHECK_OK(zarr_array_read(a, 2, START, DATA_COUNT, back, sizeof back)))
            CHECK(back[0] == 0 && back[4] == 1 && back[34] == 1);
        zarr_array_close(a);
        CHECK_OK(zarr_store_close(s));
    }
    zarr_store *bad = NULL;
    CHECK_STATUS(zarr_store_open_options(deflated, ZARR_MODE_WRITE, "{\"zip_compression\":\"bzip2\"}", &bad),
                 ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "zip_compression");
}

/* zarr_store_flush: the archive is complete at the path while the store stays writable. */
static void test_flush(const char *dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/flushed.zip", dir);
    zarr_store *s = open_store(path, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "a", META) : NULL;
    if (!a) return;
    CHECK_OK(zarr_array_write(a, 2, START, DATA_COUNT, DATA, sizeof DATA));
    CHECK(!file_exists(path));
    CHECK_OK(zarr_store_flush(s));
    zarr_store *r = open_store(path, ZARR_MODE_READ);
    if (r) {
        CHECK(first_value(r, "a") == 0);
        CHECK_OK(zarr_store_close(r));
    }
    int32_t five = 5;
    uint64_t one[2] = {1, 1};
    CHECK_OK(zarr_array_write(a, 2, START, one, &five, sizeof five));
    r = open_store(path, ZARR_MODE_READ); /* the flushed archive, not the later write */
    if (r) {
        CHECK(first_value(r, "a") == 0);
        CHECK_OK(zarr_store_close(r));
    }
    CHECK_OK(zarr_store_flush(s));
    CHECK_OK(zarr_store_flush(s)); /* nothing new: nothing to do */
    r = open_store(path, ZARR_MODE_READ);
    if (r) {
        CHECK(first_value(r, "a") == 5);
        CHECK_OK(zarr_store_close(r));
    }
    zarr_array_close(a);
    CHECK_OK(zarr_store_close(s));
    CHECK_STATUS(zarr_store_flush(NULL), ZARR_ERR_NULL_POINTER);
    zarr_store *mem = open_store("memory:", ZARR_MODE_WRITE);
    CHECK_OK(zarr_store_flush(mem)); /* other stores: nothing to do */
    zarr_store_close(mem);
}

/* This program, as started (argv[0]): the writer test runs it again as its child. Not
 * /proc/self/exe, which under valgrind is valgrind's own launcher. */
static const char *self_path;

/* The child of test_killed_writer: appends (flushing first if asked), says so on stdout,
 * and waits to be killed. */
static int killed_writer(const char *path, int flush_first) {
    zarr_store *s = NULL;
    zarr_array *a = NULL, *b = NULL;
    if (zarr_store_open(path, ZARR_MODE_WRITE, &s) != ZARR_OK) return 2;
    if (zarr_array_create(s, flush_first ? "flushed" : "lost", META, &a) != ZARR_OK) return 3;
    if (zarr_array_write(a, 2, START, DATA_COUNT, DATA, sizeof DATA) != ZARR_OK) return 4;
    if (flush_first && zarr_store_flush(s) != ZARR_OK) return 5;
    if (zarr_array_create(s, "lost2", META, &b) != ZARR_OK) return 6;
    if (zarr_array_write(b, 2, START, DATA_COUNT, DATA, sizeof DATA) != ZARR_OK) return 7;
    if (write(STDOUT_FILENO, "x", 1) != 1) return 8;
    for (;;) pause(); /* killed here, before any close */
}

/* A child process appending to an archive is killed before its close (after writing, and
 * after a flush and more writing): the archive is as it was opened, or as flushed. */
static void test_killed_writer(const char *dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/crash.zip", dir);
    if (!write_new_zip(path)) return;
    for (int flush_first = 0; flush_first < 2; flush_first++) {
        CHECK_CTX("flush first: %d", flush_first);
        size_t before_len = 0, after_len = 0;
        unsigned char *before = file_read(path, &before_len);
        int ready[2];
        if (!CHECK(pipe(ready) == 0)) return;
        pid_t child = fork();
        if (child == 0) { /* a fresh process: libzarr's threads do not survive a fork */
            dup2(ready[1], STDOUT_FILENO);
            execl(self_path, "test_zip_store", "--killed-writer", path, flush_first ? "1" : "0",
                  (char *)NULL);
            _exit(9);
        }
        char byte = 0;
        close(ready[1]);
        CHECK(read(ready[0], &byte, 1) == 1 && byte == 'x');
        close(ready[0]);
        kill(child, SIGKILL);
        int status = 0;
        waitpid(child, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        zarr_store *s = open_store(path, ZARR_MODE_READ);
        if (s) {
            char *json = NULL;
            if (CHECK_OK(zarr_store_list_dir(s, "", &json))) {
                CHECK_JSON_LACKS(json, "lost");
                if (flush_first) CHECK_JSON_HAS(json, "\"flushed\"");
            }
            zarr_string_free(json);
            CHECK(first_value(s, "g/a") == 0);
            if (flush_first) CHECK(first_value(s, "flushed") == 0);
            CHECK_OK(zarr_store_close(s));
        }
        unsigned char *after = file_read(path, &after_len);
        if (!flush_first) /* byte for byte as it was */
            CHECK(before && after && after_len == before_len && memcmp(before, after, before_len) == 0);
        free(before);
        free(after);
    }
    CHECK_CTX_CLEAR();
}

static void test_bad_archives(const char *dir) {
    int sentinel;
    zarr_store *s = (zarr_store *)&sentinel;
    const char *missing = strf("%s/missing.zip", dir);
    CHECK_STATUS(zarr_store_open(missing, ZARR_MODE_READ, &s), ZARR_ERR_NOT_FOUND);
    CHECK_CONTAINS(zarr_last_error(), "missing.zip");
    CHECK(!file_exists(missing)); /* reading never creates */

    const char *garbage = strf("%s/garbage.zip", dir), *empty = strf("%s/empty.zip", dir);
    CHECK(file_write(garbage, "this is not a zip archive at all", 32));
    CHECK(file_write(empty, "", 0));
    CHECK_STATUS(zarr_store_open(garbage, ZARR_MODE_READ, &s), ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "garbage.zip");
    CHECK_STATUS(zarr_store_open(empty, ZARR_MODE_READ, &s), ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "empty.zip");

    /* A valid archive cut short at every tenth of its length: refused at open (the central
     * directory is at the end), never a crash. */
    const char *whole = strf("%s/whole.zip", dir), *cut = strf("%s/cut.zip", dir);
    if (!write_new_zip(whole)) return;
    size_t len = 0;
    unsigned char *bytes = file_read(whole, &len);
    if (!CHECK(bytes && len > 100)) return;
    for (int tenth = 1; tenth < 10; tenth++) {
        CHECK_CTX("cut at %d/10", tenth);
        CHECK(file_write(cut, bytes, len * tenth / 10));
        CHECK_STATUS(zarr_store_open(cut, ZARR_MODE_READ, &s), ZARR_ERR_CORRUPT_CHUNK);
        CHECK_CONTAINS(zarr_last_error(), "cut.zip");
    }
    CHECK_CTX_CLEAR();
    CHECK(s == (zarr_store *)&sentinel);

    /* A flipped byte inside a chunk: the archive opens, the member fails its CRC check. The
     * member g/a/0.0 is found by its local header ("PK\3\4", 26 bytes of fields, the name). */
    static const char name[] = "g/a/0.0";
    unsigned char *data = NULL;
    for (size_t i = 30; i + sizeof name <= len && !data; i++)
        if (memcmp(bytes + i, name, sizeof name - 1) == 0 && memcmp(bytes + i - 30, "PK\3\4", 4) == 0)
            data = bytes + i + (sizeof name - 1) + (bytes[i - 2] | bytes[i - 1] << 8);
    if (CHECK(data != NULL && data + 8 < bytes + len)) {
        data[4] ^= 0x40;
        const char *flipped = strf("%s/flipped.zip", dir);
        CHECK(file_write(flipped, bytes, len));
        zarr_store *r = open_store(flipped, ZARR_MODE_READ);
        zarr_array *a = r ? open_array(r, "g/a") : NULL;
        if (a) {
            int32_t back[35];
            CHECK_STATUS(zarr_array_read(a, 2, START, DATA_COUNT, back, sizeof back), ZARR_ERR_CORRUPT_CHUNK);
            CHECK_CONTAINS(zarr_last_error(), "CRC");
            CHECK_CONTAINS(zarr_last_error(), "g/a/0.0");
            uint64_t start[2] = {3, 0}, count[2] = {4, 5}; /* the other chunks still read */
            CHECK_OK(zarr_array_read(a, 2, start, count, back, 20 * sizeof(int32_t)));
            CHECK(back[0] == 15 && back[19] == 34);
            zarr_array_close(a);
        }
        zarr_store_close(r);
    }
    free(bytes);
}

static void test_late_writes_and_directories(const char *dir) {
    /* Changes after zarr_store_close, through a handle still open, are written when the last
     * handle closes. */
    const char *path = strf("%s/late.zip", dir);
    zarr_store *s = open_store(path, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "a", META) : NULL;
    if (!a) return;
    CHECK_OK(zarr_store_close(s));
    CHECK_OK(zarr_array_write(a, 2, START, DATA_COUNT, DATA, sizeof DATA));
    CHECK_OK(zarr_array_close(a));
    s = open_store(path, ZARR_MODE_READ);
    a = s ? open_array(s, "a") : NULL;
    if (a) {
        int32_t back[35] = {0};
        CHECK_OK(zarr_array_read(a, 2, START, DATA_COUNT, back, sizeof back));
        CHECK(memcmp(back, DATA, sizeof DATA) == 0);
        zarr_array_close(a);
    }
    zarr_store_close(s);

    /* A store with nothing in it is still a valid (empty) archive. */
    const char *blank = strf("%s/blank.zip", dir);
    s = open_store(blank, ZARR_MODE_WRITE);
    CHECK_OK(zarr_store_close(s));
    s = open_store(blank, ZARR_MODE_READ);
    zarr_group *g = NULL;
    CHECK_STATUS(zarr_group_open(s, "", &g), ZARR_ERR_NOT_FOUND);
    zarr_store_close(s);

    /* An existing directory whose name ends in .zip is a directory store. */
    const char *zipdir = strf("%s/looks-like.zip", dir);
    CHECK(mkdir(zipdir, 0700) == 0);
    s = open_store(zipdir, ZARR_MODE_WRITE);
    if (s && CHECK_OK(zarr_group_create(s, "", &g))) zarr_group_close(g);
    zarr_store_close(s);
    CHECK(file_exists(strf("%s/.zgroup", zipdir)));
}

int main(int argc, char **argv) {
    for (int i = 0; i < 35; i++) DATA[i] = i;
    self_path = argv[0];
    if (argc == 4 && strcmp(argv[1], "--killed-writer") == 0) return killed_writer(argv[2], atoi(argv[3]));
    for (int i = 0; i < 24; i++) FLOATS[i] = 1000.25 + i * 3.5;
    char *dir = tmpdir_make();
    test_round_trip(dir);
    test_read_only_refusals(dir);
    test_append(dir);
    test_deflate(dir);
    test_flush(dir);
    test_killed_writer(dir);
    test_bad_archives(dir);
    test_late_writes_and_directories(dir);
    tmpdir_remove(dir);
    return check_summary("test_zip_store");
}
