/* test_callback_store.c - zarr_store_open_callbacks: a store kept by this program (a small map
 * behind a mutex) carrying arrays, groups, attributes and consolidated metadata, read with many
 * threads; callbacks that are not thread-safe; failures with their statuses and messages (never
 * the fill value); a store without a list function; release called once, after the last handle;
 * bad structures refused; batches through read_many and write_many, and their failures; a
 * version 1 structure (without them) read no further than its end. */
#include "testutil.h"

#include <pthread.h>
#include <stdlib.h>

#define MAX_KEYS 256

/* The program's own store: keys and values in two arrays, one lock. */
typedef struct {
    pthread_mutex_t lock;
    char *keys[MAX_KEYS];
    unsigned char *values[MAX_KEYS];
    size_t lengths[MAX_KEYS];
    int count;
    int released;
    int calls_at_once, most_calls_at_once; /* to see whether calls overlapped */
    const char *fail_key;                  /* reads and sizes of this key fail */
    int sizes, reads_many, writes_many;    /* calls of size, read_many, write_many */
    int most_keys;                         /* the most keys one read_many or write_many had */
    int skip_index;                        /* read_many leaves this index out (-1: none) */
} map_store;

static int find(map_store *m, const char *key) {
    for (int i = 0; i < m->count; i++)
        if (strcmp(m->keys[i], key) == 0) return i;
    return -1;
}

static void enter(map_store *m) {
    pthread_mutex_lock(&m->lock);
    if (++m->calls_at_once > m->most_calls_at_once) m->most_calls_at_once = m->calls_at_once;
    pthread_mutex_unlock(&m->lock);
    pthread_mutex_lock(&m->lock);
}

static zarr_status leave(map_store *m, zarr_status status) {
    m->calls_at_once--;
    pthread_mutex_unlock(&m->lock);
    return status;
}

static zarr_status map_size(void *user, const char *key, bool *exists, uint64_t *size) {
    map_store *m = user;
    enter(m);
    m->sizes++;
    if (m->fail_key && strcmp(key, m->fail_key) == 0) {
        zarr_store_callback_error("the disk is on fire");
        return leave(m, ZARR_ERR_IO);
    }
    int i = find(m, key);
    *exists = i >= 0;
    *size = i >= 0 ? m->lengths[i] : 0;
    return leave(m, ZARR_OK);
}

static zarr_status map_read(void *user, const char *key, uint64_t offset, void *buffer, size_t length) {
    map_store *m = user;
    enter(m);
    int i = find(m, key);
    if (i < 0 || offset + length > m->lengths[i]) {
        zarr_store_callback_error("no such bytes");
        return leave(m, ZARR_ERR_NOT_FOUND);
    }
    memcpy(buffer, m->values[i] + offset, length);
    return leave(m, ZARR_OK);
}

/* Stores one value; the caller holds the lock. */
static zarr_status map_put(map_store *m, const char *key, const void *value, size_t length) {
    int i = find(m, key);
    if (i < 0) {
        if (m->count == MAX_KEYS) {
            zarr_store_callback_error("the map is full");
            return leave(m, ZARR_ERR_TOO_LARGE);
        }
        i = m->count++;
        m->keys[i] = strdup(key);
        m->values[i] = NULL;
    }
    free(m->values[i]);
    m->values[i] = malloc(length ? length : 1);
    memcpy(m->values[i], value, length);
    m->lengths[i] = length;
    return ZARR_OK;
}

/* Removes one key; the caller holds the lock. */
static void map_remove(map_store *m, const char *key) {
    int i = find(m, key);
    if (i >= 0) {
        free(m->keys[i]);
        free(m->values[i]);
        m->count--;
        m->keys[i] = m->keys[m->count];
        m->values[i] = m->values[m->count];
        m->lengths[i] = m->lengths[m->count];
    }
}

static zarr_status map_write(void *user, const char *key, const void *value, size_t length) {
    map_store *m = user;
    enter(m);
    return leave(m, map_put(m, key, value, length));
}

static zarr_status map_erase(void *user, const char *key) {
    map_store *m = user;
    enter(m);
    map_remove(m, key);
    return leave(m, ZARR_OK);
}

/* Gives the values of all keys in one call, the last first (any order is allowed). */
static zarr_status map_read_many(void *user, size_t count, const char *const *keys, zarr_value_sink_fn put,
                                 void *sink) {
    map_store *m = user;
    enter(m);
    m->reads_many++;
    if ((int)count > m->most_keys) m->most_keys = (int)count;
    for (size_t n = count; n-- > 0;) {
        if ((int)n == m->skip_index) continue;
        if (m->fail_key && strcmp(keys[n], m->fail_key) == 0) {
            zarr_store_callback_error("the disk is on fire");
            return leave(m, ZARR_ERR_IO);
        }
        int i = find(m, keys[n]);
        put(sink, n, i >= 0 ? m->values[i] : NULL, i >= 0 ? m->lengths[i] : 0);
    }
    if (m->skip_index == -2) put(sink, count, "x", 1); /* an index beyond the keys */
    return leave(m, ZARR_OK);
}

static zarr_status map_write_many(void *user, size_t count, const char *const *keys, const void *const *values,
                                  const size_t *lengths) {
    map_store *m = user;
    enter(m);
    m->writes_many++;
    if ((int)count > m->most_keys) m->most_keys = (int)count;
    for (size_t n = 0; n < count; n++) {
        if (!values[n]) {
            map_remove(m, keys[n]);
            continue;
        }
        zarr_status status = map_put(m, keys[n], values[n], lengths[n]);
        if (status != ZARR_OK) return leave(m, status);
    }
    return leave(m, ZARR_OK);
}

/* Lists every key, whatever the prefix: libzarr keeps those below it. */
static zarr_status map_list(void *user, const char *prefix, zarr_key_sink_fn add, void *sink) {
    map_store *m = user;
    (void)prefix;
    enter(m);
    for (int i = 0; i < m->count; i++) add(sink, m->keys[i]);
    add(sink, "not//a/valid/key"); /* ignored */
    return leave(m, ZARR_OK);
}

static void map_release(void *user) { ((map_store *)user)->released++; }

static void map_free(map_store *m) {
    for (int i = 0; i < m->count; i++) {
        free(m->keys[i]);
        free(m->values[i]);
    }
    pthread_mutex_destroy(&m->lock);
}

static zarr_store_callbacks callbacks_of(map_store *m, int thread_safe) {
    zarr_store_callbacks cb = {ZARR_STORE_CALLBACKS_VERSION, thread_safe, "test-map", m, map_size,
                               map_read, map_write, map_erase, map_list, map_release, NULL, NULL};
    return cb;
}

static const char *ARRAY = "{\"shape\":[64,64],\"chunks\":[8,8],\"dtype\":\"<f8\",\"fill_value\":-1,"
                           "\"compressor\":{\"id\":\"zstd\",\"level\":1}}";

static void fill(double *v) {
    for (int i = 0; i < 64 * 64; i++) v[i] = i * 0.5;
}

static int holds_values(zarr_array *a) {
    static double back[64 * 64], want[64 * 64];
    uint64_t start[2] = {0, 0}, count[2] = {64, 64};
    fill(want);
    return CHECK_OK(zarr_array_read(a, 2, start, count, back, sizeof back)) &&
           CHECK(memcmp(back, want, sizeof want) == 0);
}

/* Arrays, groups, attributes, listings and consolidated metadata on the program's map. */
static void test_hierarchy(int thread_safe) {
    map_store m = {.count = 0};
    pthread_mutex_init(&m.lock, NULL);
    zarr_store_callbacks cb = callbacks_of(&m, thread_safe);
    zarr_store *s = NULL, *r = NULL;
    zarr_group *g = NULL;
    char *json = NULL;
    static double values[64 * 64];
    uint64_t start[2] = {0, 0}, count[2] = {64, 64};
    CHECK_CTX("thread_safe=%d", thread_safe);
    if (!CHECK_OK(zarr_store_open_callbacks(&cb, ZARR_MODE_WRITE, &s))) return;
    zarr_array *a = create_array(s, "g/data", ARRAY);
    fill(values);
    if (!a || !CHECK_OK(zarr_array_write(a, 2, start, count, values, sizeof values))) return;
    CHECK(m.count == 2 + 1 + 64); /* .zgroup (root and g), .zarray, 64 chunks */
    CHECK(find(&m, "g/data/7.7") >= 0 && find(&m, "g/.zgroup") >= 0);
    CHECK(holds_values(a));
    CHECK_OK(zarr_group_open(s, "g", &g));
    CHECK_OK(zarr_group_attrs_set(g, "{\"title\": \"kept by the caller\"}"));
    CHECK_OK(zarr_group_list(g, &json));
    CHECK_JSON_EQ(json, "{\"arrays\":[\"data\"],\"groups\":[]}");
    zarr_string_free(json);
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_consolidate_metadata(s));
    CHECK(find(&m, ".zmetadata") >= 0);
    CHECK_OK(zarr_store_close(s));
    CHECK(m.released == 0); /* the array still holds the store */
    CHECK_OK(zarr_array_close(a));
    CHECK(m.released == 1);
    /* The calls overlapped only when the functions said they may. */
    CHECK(thread_safe || m.most_calls_at_once == 1);

    /* Read-only, with the consolidated metadata. */
    cb.write = NULL;
    cb.erase = NULL;
    if (!CHECK_OK(zarr_store_open_callbacks(&cb, ZARR_MODE_READ, &r))) return;
    bool consolidated = false;
    CHECK_OK(zarr_store_uses_consolidated(r, &consolidated));
    CHECK(consolidated);
    a = open_array(r, "g/data");
    CHECK(a && holds_values(a));
    CHECK_STATUS(zarr_array_write(a, 2, start, count, values, sizeof values), ZARR_ERR_READ_ONLY);
    CHECK_OK(zarr_store_list_keys(r, "g/data", &json));
    CHECK_JSON_HAS(json, "\"g/data/0.0\"");
    CHECK_JSON_LACKS(json, "not//a");
    zarr_string_free(json);
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(r));
    CHECK(m.released == 2);
    map_free(&m);
    CHECK_CTX_CLEAR();
}

/* Reading all of `a` while the store fails on `key`: ZARR_ERR_IO, the callback's message, the
 * store's name and `named` in the message. */
static void read_fails_on(zarr_array *a, map_store *m, const char *key, const char *named) {
    static double back[64 * 64];
    uint64_t start[2] = {0, 0}, count[2] = {64, 64};
    m->fail_key = key;
    CHECK_STATUS(zarr_array_read(a, 2, start, count, back, sizeof back), ZARR_ERR_IO);
    CHECK_CONTAINS(zarr_last_error(), "the disk is on fire");
    CHECK_CONTAINS(zarr_last_error(), named);
    CHECK_CONTAINS(zarr_last_error(), "test-map");
    m->fail_key = NULL;
}

/* A failing callback is the call's status, with its message and the key; never the fill value. */
static void test_failures(void) {
    map_store m = {.count = 0};
    pthread_mutex_init(&m.lock, NULL);
    zarr_store_callbacks cb = callbacks_of(&m, 1);
    zarr_store *s = NULL;
    static double back[64 * 64];
    uint64_t start[2] = {0, 0}, count[2] = {64, 64};
    if (!CHECK_OK(zarr_store_open_callbacks(&cb, ZARR_MODE_WRITE | ZARR_OPEN_IGNORE_CONSOLIDATED, &s)))
        return;
    zarr_array *a = create_array(s, "x", ARRAY);
    if (!a) return;
    read_fails_on(a, &m, "x/3.4", "x/3.4");
    /* A value shorter than its size said: the read callback's own status. */
    CHECK_OK(zarr_store_set(s, "x/0.0", "short", 5));
    m.lengths[find(&m, "x/0.0")] = 3; /* size now says 3; a chunk of 3 bytes is corrupt */
    CHECK_STATUS(zarr_array_read(a, 2, start, count, back, sizeof back), ZARR_ERR_CORRUPT_CHUNK);
    CHECK_CONTAINS(zarr_last_error(), "0.0");
    /* A size no process can hold: refused before any allocation, naming the key. */
    m.lengths[find(&m, "x/0.0")] = (size_t)1 << 62;
    uint64_t huge = 0;
    CHECK_OK(zarr_store_value_size(s, "x/0.0", &(bool){false}, &huge));
    CHECK(huge == (uint64_t)1 << 62);
    CHECK_STATUS(zarr_array_read(a, 2, start, count, back, sizeof back), ZARR_ERR_TOO_LARGE);
    CHECK_CONTAINS(zarr_last_error(), "x/0.0");
    m.lengths[find(&m, "x/0.0")] = 5;
    /* A full map: the write's status. */
    for (int i = m.count; i < MAX_KEYS; i++) CHECK_OK(zarr_store_set(s, strf("pad/%d", i), "p", 1));
    CHECK_STATUS(zarr_store_set(s, "one/more", "p", 1), ZARR_ERR_TOO_LARGE);
    CHECK_CONTAINS(zarr_last_error(), "the map is full");
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    CHECK(m.released == 1);

    /* Without a list function: opening and reading by path work, listing does not. */
    cb.list = NULL;
    char *json = NULL;
    zarr_group *g = NULL;
    if (!CHECK_OK(zarr_store_open_callbacks(&cb, ZARR_MODE_READ, &s))) return;
    CHECK_OK(zarr_store_value_size(s, "x/.zarray", &(bool){false}, &(uint64_t){0}));
    CHECK_OK(zarr_group_open(s, "", &g));
    CHECK_STATUS(zarr_group_list(g, &json), ZARR_ERR_UNSUPPORTED);
    CHECK_CONTAINS(zarr_last_error(), "list");
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_store_close(s));
    map_free(&m);
}

/* With read_many and write_many, whole reads and writes go in batches: no size or read call per
 * chunk; a batch that leaves a key out or fails is an error naming the key, never the fill value. */
static void test_batches(void) {
    map_store m = {.count = 0, .skip_index = -1};
    pthread_mutex_init(&m.lock, NULL);
    zarr_store_callbacks cb = callbacks_of(&m, 1);
    cb.read_many = map_read_many;
    cb.write_many = map_write_many;
    zarr_store *s = NULL;
    static double values[64 * 64], back[64 * 64];
    uint64_t start[2] = {0, 0}, count[2] = {64, 64};
    if (!CHECK_OK(zarr_store_open_callbacks(&cb, ZARR_MODE_WRITE | ZARR_OPEN_IGNORE_CONSOLIDATED, &s)))
        return;
    zarr_array *a = create_array(s, "b", ARRAY);
    fill(values);
    if (!a || !CHECK_OK(zarr_array_write(a, 2, start, count, values, sizeof values))) return;
    CHECK(m.writes_many >= 1 && find(&m, "b/7.7") >= 0);
    int sizes = m.sizes, reads_many = m.reads_many;
    CHECK(holds_values(a));
    CHECK(m.sizes == sizes);                                  /* no size call per chunk */
    CHECK(m.reads_many > reads_many && m.most_keys <= 64);    /* 64 chunks in batches */
    CHECK(m.reads_many - reads_many <= 4);
    /* A sharded v3 array: shards fetched in batches too, inner chunks cut from them. */
    zarr_array *v3 = create_array(s, "v3",
                                  "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[64,64],"
                                  "\"data_type\":\"float64\",\"fill_value\":-1,\"chunk_grid\":{\"name\":"
                                  "\"regular\",\"configuration\":{\"chunk_shape\":[32,32]}},\"codecs\":[{"
                                  "\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[8,8],"
                                  "\"codecs\":[{\"name\":\"bytes\"},{\"name\":\"zstd\"}]}}]}");
    if (v3 && CHECK_OK(zarr_array_write(v3, 2, start, count, values, sizeof values))) {
        sizes = m.sizes;
        CHECK(holds_values(v3));
        CHECK(m.sizes == sizes);
    }
    if (v3) CHECK_OK(zarr_array_close(v3));
    /* Writing the fill value everywhere erases the chunks through write_many. */
    for (int i = 0; i < 64 * 64; i++) back[i] = -1;
    CHECK_OK(zarr_array_write(a, 2, start, count, back, sizeof back));
    CHECK(find(&m, "b/0.0") < 0 && find(&m, "b/7.7") < 0);
    CHECK_OK(zarr_array_write(a, 2, start, count, values, sizeof values));
    /* A batch that fails: its status, message and the first key of the batch. */
    read_fails_on(a, &m, "b/3.4", "read_many of \"b/");
    /* ZARR_OK without a value for every key: an error naming the key left out. */
    m.skip_index = 1;
    CHECK_STATUS(zarr_array_read(a, 2, start, count, back, sizeof back), ZARR_ERR_IO);
    CHECK_CONTAINS(zarr_last_error(), "without giving key");
    m.skip_index = -2;
    CHECK_STATUS(zarr_array_read(a, 2, start, count, back, sizeof back), ZARR_ERR_IO);
    CHECK_CONTAINS(zarr_last_error(), "beyond the");
    m.skip_index = -1;
    CHECK(holds_values(a));
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    /* read_many alone serves a read-only store; a writable one needs write_many too. */
    cb.write_many = NULL;
    CHECK_STATUS(zarr_store_open_callbacks(&cb, ZARR_MODE_WRITE, &s), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "write_many");
    if (CHECK_OK(zarr_store_open_callbacks(&cb, ZARR_MODE_READ, &s))) {
        a = open_array(s, "b");
        CHECK(a && holds_values(a));
        if (a) CHECK_OK(zarr_array_close(a));
        CHECK_OK(zarr_store_close(s));
    }
    cb.read_many = NULL;
    cb.write_many = map_write_many;
    CHECK_STATUS(zarr_store_open_callbacks(&cb, ZARR_MODE_WRITE, &s), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "read_many");
    map_free(&m);
}

/* A program built against version 1 of the structure (it ends after `release`) keeps working:
 * libzarr reads no byte beyond it (the sanitizer runs see the structure's own allocation). */
static void test_version_1(void) {
    map_store m = {.count = 0, .skip_index = -1};
    pthread_mutex_init(&m.lock, NULL);
    zarr_store_callbacks full = callbacks_of(&m, 1);
    full.version = 1;
    size_t v1_size = offsetof(zarr_store_callbacks, read_many);
    zarr_store_callbacks *v1 = malloc(v1_size);
    memcpy(v1, &full, v1_size);
    zarr_store *s = NULL;
    static double values[64 * 64];
    uint64_t start[2] = {0, 0}, count[2] = {64, 64};
    if (CHECK_OK(zarr_store_open_callbacks(v1, ZARR_MODE_WRITE, &s))) {
        zarr_array *a = create_array(s, "v1", ARRAY);
        fill(values);
        CHECK(a && CHECK_OK(zarr_array_write(a, 2, start, count, values, sizeof values)) && holds_values(a));
        CHECK(m.reads_many == 0 && m.writes_many == 0 && m.sizes > 0);
        if (a) CHECK_OK(zarr_array_close(a));
        CHECK_OK(zarr_store_close(s));
    }
    free(v1);
    map_free(&m);
}

/* Bad structures: refused with a message; release runs unless the version is wrong. */
static void test_bad_callbacks(void) {
    map_store m = {.count = 0};
    pthread_mutex_init(&m.lock, NULL);
    zarr_store_callbacks cb = callbacks_of(&m, 1);
    zarr_store *s = (zarr_store *)&m;
    cb.version = 99;
    CHECK_STATUS(zarr_store_open_callbacks(&cb, ZARR_MODE_READ, &s), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "version 99");
    CHECK(m.released == 0 && s == (zarr_store *)&m);
    cb.version = ZARR_STORE_CALLBACKS_VERSION;
    cb.write = NULL;
    CHECK_STATUS(zarr_store_open_callbacks(&cb, ZARR_MODE_WRITE, &s), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "write");
    CHECK(m.released == 1);
    cb.size = NULL;
    CHECK_STATUS(zarr_store_open_callbacks(&cb, ZARR_MODE_READ, &s), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "size");
    CHECK(m.released == 2);
    CHECK_STATUS(zarr_store_open_callbacks(NULL, ZARR_MODE_READ, &s), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_store_open_callbacks(&cb, 7, &s), ZARR_ERR_INVALID_ARGUMENT);
    map_free(&m);
}

int main(void) {
    zarr_set_num_threads(4);
    test_hierarchy(1);
    test_hierarchy(0);
    test_failures();
    test_batches();
    test_version_1();
    test_bad_callbacks();
    return check_summary("test_callback_store");
}
