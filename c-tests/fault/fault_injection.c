/* Real-syscall fault injection (issue #11): libfiu's POSIX preload library
 * (/usr/lib/fiu/fiu_posix_preload.so, LD_PRELOADed by CTest) wraps open, read, write, rename,
 * unlink, fsync, ... in libc; this program decides through libfiu's control API which call
 * fails. For every failure point, errno and write operation on a directory store it fails
 * exactly the k-th call of that point made during the operation, for k = 1, 2, ... until the
 * operation makes fewer than k such calls (and so succeeds untouched), on a fresh store each
 * time. Injection is armed only around the libzarr call under test (a process-wide flag:
 * libzarr writes on its worker threads), so this program's own stdio is never failed.
 *
 * Each injected run must:
 *   - return an error status (never crash, never report success when a call it needed
 *     failed), with a message naming the key or path and the injected error;
 *   - leave the store, with injection off, holding in every key either its value before the
 *     call or its new complete value (for single-key operations: byte for byte the tree from
 *     before the call), and no temporary file (".libzarr-partial-");
 *   - leave a store that opens, with the array readable, the root group listing its members
 *     from before or after the call, and the handle the call used seeing what the store holds
 *     (shape, attributes, metadata, values);
 *   - leave the handle usable: the same call then succeeds and the store ends up byte for
 *     byte as a run without injection leaves it.
 * Each operation runs on a store opened without options, on one whose handles answer
 * metadata from consolidated metadata, and with {"fsync": true}, each for a v2 array and a
 * sharded v3 one. With fsync, a flush of the directory that fails after the rename cannot
 * undo it: those runs may leave the store as the call would have (counted apart).
 * A directory the failed call created may stay behind (empty; no key): those are counted.
 *
 * mkdir is not among the preload library's wrappers (libfiu 1.1), so this program wraps it
 * itself, as a failure point named "posix/io/dir/mkdir" decided by libfiu like the others.
 *
 *   fault_injection [--verbose] [filter]   (LD_PRELOAD=/usr/lib/fiu/fiu_posix_preload.so)
 * Filters (for debugging) keep the runs whose operation, mode or failure point names contain
 * each of them: fault_injection "Zarr v3" consolidate posix/io/oc/open */
#define _GNU_SOURCE /* RTLD_NEXT */
#define FIU_ENABLE 1

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fiu-control.h>
#include <fiu.h>
#include <stdatomic.h>
#include <sys/time.h>

#include "check.h"
#include "testutil.h"

/* ---- injection -------------------------------------------------------------------------- */

static atomic_int armed;       /* inject only while the call under test runs */
static atomic_long calls;      /* calls of the enabled point while armed */
static atomic_long injected;   /* calls failed */
static long fail_at;           /* the call to fail (1-based); 0: none */

static int decide(const char *name, int *failnum, void **failinfo, unsigned int *flags) {
    (void)name, (void)failnum, (void)failinfo, (void)flags;
    if (!atomic_load(&armed)) return 0;
    long n = atomic_fetch_add(&calls, 1) + 1;
    if (n != fail_at) return 0;
    atomic_fetch_add(&injected, 1);
    return 1; /* errno comes from failinfo, set when the point was enabled */
}

/* libfiu 1.1's preload library has no mkdir wrapper: this one takes its place (libzarr.so's
 * mkdir resolves to the executable's first). */
int mkdir(const char *path, mode_t mode) {
    static int (*real_mkdir)(const char *, mode_t);
    if (fiu_fail("posix/io/dir/mkdir")) {
        errno = (int)(intptr_t)fiu_failinfo();
        return -1;
    }
    if (!real_mkdir) real_mkdir = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkdir");
    return real_mkdir(path, mode);
}

typedef struct {
    const char *name;
    int err;
    int fsync_only; /* only reached with {"fsync": true} */
} point;

static const point POINTS[] = {
    {"posix/io/oc/open", ENOSPC, 0},     {"posix/io/oc/open", EACCES, 0},
    {"posix/io/rw/write", ENOSPC, 0},    {"posix/io/rw/write", EIO, 0},
    {"posix/io/rw/pwrite", ENOSPC, 0},   {"posix/io/rw/writev", ENOSPC, 0},
    {"posix/io/rw/read", EIO, 0},        {"posix/io/rw/pread", EIO, 0},
    {"posix/io/dir/rename", EIO, 0},     {"posix/io/dir/rename", EACCES, 0},
    {"posix/io/dir/mkdir", ENOSPC, 0},   {"posix/io/dir/mkdir", EACCES, 0},
    {"posix/io/dir/unlink", EIO, 0},     {"posix/io/dir/unlink", EACCES, 0},
    {"posix/io/dir/opendir", EACCES, 0}, {"posix/io/sync/fsync", EIO, 1},
    {"posix/io/sync/fdatasync", EIO, 1},
};
#define NPOINTS ARRAY_LEN(POINTS)

/* ---- snapshots of the store directory ---------------------------------------------------- */

typedef struct {
    char *name; /* relative path; directories end in '/' */
    unsigned char *data;
    size_t len;
} entry;

typedef struct {
    entry *e;
    size_t n, cap;
} snapshot;

static void snap_push(snapshot *s, entry e) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 32;
        s->e = realloc(s->e, s->cap * sizeof *s->e);
    }
    s->e[s->n++] = e;
}

static void snap_add(snapshot *s, const char *name, unsigned char *data, size_t len) {
    snap_push(s, (entry){strdup(name), data, len});
}

static void snap_walk(snapshot *s, const char *root, const char *rel) {
    const char *dirpath = rel[0] ? strf("%s/%s", root, rel) : root;
    DIR *d = opendir(dirpath);
    struct dirent *de;
    if (!d) return;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char name[1024], path[2048];
        snprintf(name, sizeof name, "%s%s", rel, de->d_name);
        snprintf(path, sizeof path, "%s/%s", root, name);
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            char sub[1100];
            snprintf(sub, sizeof sub, "%s/", name);
            snap_add(s, sub, NULL, 0);
            snap_walk(s, root, sub);
        } else {
            size_t len = 0;
            unsigned char *data = file_read(path, &len);
            snap_add(s, name, data, len);
        }
    }
    closedir(d);
}

static int entry_cmp(const void *a, const void *b) {
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static snapshot snap_take(const char *root) {
    snapshot s = {0};
    snap_walk(&s, root, "");
    qsort(s.e, s.n, sizeof *s.e, entry_cmp);
    return s;
}

static void snap_free(snapshot *s) {
    for (size_t i = 0; i < s->n; i++) free(s->e[i].name), free(s->e[i].data);
    free(s->e);
    *s = (snapshot){0};
}

static const entry *snap_find(const snapshot *s, const char *name) {
    entry key = {(char *)name, NULL, 0};
    return s->n ? bsearch(&key, s->e, s->n, sizeof *s->e, entry_cmp) : NULL;
}

static int entry_same(const entry *a, const entry *b) {
    if (!a || !b) return a == b;
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static int verbose;

static int is_dir_name(const char *name) { return name[0] && name[strlen(name) - 1] == '/'; }

/* Every entry of `got` and of `want` the same; prints the differences (at most a few). */
static int snap_equal(const snapshot *got, const snapshot *want, const char *what) {
    int ok = 1, shown = 0;
    for (size_t i = 0; i < got->n; i++) {
        const entry *w = snap_find(want, got->e[i].name);
        if (!entry_same(&got->e[i], w)) {
            ok = 0;
            if (shown++ < 4)
                fprintf(stderr, "  %s: %s %s\n", what, got->e[i].name, w ? "differs" : "is new");
            if (verbose && w && got->e[i].len < 4096 && w->len < 4096)
                fprintf(stderr, "    now: %.*s\n    was: %.*s\n", (int)got->e[i].len,
                        (const char *)got->e[i].data, (int)w->len, (const char *)w->data);
        }
    }
    for (size_t i = 0; i < want->n; i++)
        if (!snap_find(got, want->e[i].name)) {
            ok = 0;
            if (shown++ < 4) fprintf(stderr, "  %s: %s is missing\n", what, want->e[i].name);
        }
    return ok;
}

/* `a` and `b` hold the same names and contents (quietly). */
static int snap_same(const snapshot *a, const snapshot *b) {
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->e[i].name, b->e[i].name) || !entry_same(&a->e[i], &b->e[i])) return 0;
    return 1;
}

/* Every file of `got` holds its content in `before` or in `after`, every file missing from
 * `got` is missing from one of them; directories of `got` are in one of them. */
static int snap_old_or_new(const snapshot *got, const snapshot *before, const snapshot *after) {
    int ok = 1;
    for (size_t i = 0; i < got->n; i++) {
        const entry *g = &got->e[i];
        const entry *b = snap_find(before, g->name), *a = snap_find(after, g->name);
        if (!entry_same(g, b) && !entry_same(g, a)) {
            ok = 0;
            fprintf(stderr, "  %s is neither its old nor its new value\n", g->name);
        }
    }
    for (size_t i = 0; i < before->n; i++) {
        const char *name = before->e[i].name;
        if (!is_dir_name(name) && !snap_find(got, name) && snap_find(after, name)) {
            ok = 0;
            fprintf(stderr, "  %s is missing, though the call keeps it\n", name);
        }
    }
    return ok;
}

/* Temporary files in `got` (printed). */
static int snap_temp_files(const snapshot *got) {
    int n = 0;
    for (size_t i = 0; i < got->n; i++)
        if (strstr(got->e[i].name, ".libzarr-partial-")) {
            n++;
            fprintf(stderr, "  temporary file left: %s\n", got->e[i].name);
        }
    return n;
}

/* Directories in `got` that `before` does not have. */
static int snap_extra_dirs(const snapshot *got, const snapshot *before) {
    int n = 0;
    for (size_t i = 0; i < got->n; i++)
        if (is_dir_name(got->e[i].name) && !snap_find(before, got->e[i].name)) n++;
    return n;
}

/* ---- the operations under test ----------------------------------------------------------- */

#define ROWS 8
#define COLS 12
/* v2: chunks of 4 x 4; v3: shards of 4 x 12 holding inner chunks of 2 x 4 (so every write
 * below rewrites part of a shard), keys a/c/0/0 and a/c/1/0. */
static const char *ARRAY_JSON_V2 =
    "{\"shape\": [8, 12], \"chunks\": [4, 4], \"dtype\": \"<i4\", \"fill_value\": -1, "
    "\"compressor\": {\"id\": \"zlib\", \"level\": 1}}";
static const char *ARRAY_JSON_V3 =
    "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [8, 12], "
    "\"data_type\": \"int32\", \"fill_value\": -1, \"chunk_grid\": {\"name\": \"regular\", "
    "\"configuration\": {\"chunk_shape\": [4, 12]}}, \"codecs\": [{\"name\": "
    "\"sharding_indexed\", \"configuration\": {\"chunk_shape\": [2, 4], \"codecs\": "
    "[{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}}, {\"name\": \"gzip\", "
    "\"configuration\": {\"level\": 1}}], \"index_codecs\": [{\"name\": \"bytes\", "
    "\"configuration\": {\"endian\": \"little\"}}, {\"name\": \"crc32c\"}]}}]}";

typedef struct {
    char *dir;           /* the store's directory */
    const char *options; /* zarr_store_open_options JSON */
    int consolidated;    /* the handles answer metadata from consolidated metadata */
    int format;          /* 2 or 3 */
    zarr_store *store;
    zarr_array *array; /* "a" */
} fixture;

typedef struct {
    const char *name;
    int single_key; /* the store must be byte for byte as before after a failure */
    zarr_status (*run)(fixture *);
    const char *keys[6]; /* the error message names one of these */
} operation;

static int32_t new_values[ROWS * COLS];

static const char *array_json(const fixture *f) {
    return f->format == 3 ? ARRAY_JSON_V3 : ARRAY_JSON_V2;
}

static zarr_status op_create(fixture *f) {
    zarr_array *b = NULL;
    zarr_status st = zarr_array_create(f->store, "c", array_json(f), &b);
    zarr_array_close(b);
    return st;
}

static zarr_status op_create_nested(fixture *f) {
    zarr_array *b = NULL;
    zarr_status st = zarr_array_create(f->store, "g/h/b", array_json(f), &b);
    zarr_array_close(b);
    return st;
}

static zarr_status write_box(fixture *f, uint64_t r0, uint64_t c0, uint64_t nr, uint64_t nc) {
    uint64_t start[2] = {r0, c0}, count[2] = {nr, nc};
    return zarr_array_write(f->array, 2, start, count, new_values, nr * nc * sizeof(int32_t));
}

static zarr_status op_write_chunk(fixture *f) { return write_box(f, 0, 4, 4, 4); }
static zarr_status op_write_partial(fixture *f) { return write_box(f, 1, 1, 2, 2); }
static zarr_status op_write_span(fixture *f) { return write_box(f, 2, 2, 4, 8); }

static zarr_status op_attrs(fixture *f) {
    return zarr_array_attrs_set(f->array, "{\"units\": \"degC\", \"scale\": 0.5}");
}

static zarr_status op_resize_shrink(fixture *f) {
    uint64_t shape[2] = {5, 6}; /* cuts a chunk (v2 1.1, v3 c/1/0) in both dimensions */
    return zarr_array_resize(f->array, 2, shape);
}

static zarr_status op_resize_grow(fixture *f) {
    uint64_t shape[2] = {12, 16};
    return zarr_array_resize(f->array, 2, shape);
}

static zarr_status op_consolidate(fixture *f) { return zarr_consolidate_metadata(f->store); }

static const operation OPS[] = {
    {"create array", 1, op_create, {"c/.zarray", "/c"}},
    {"create array and groups", 0, op_create_nested,
     {"g/.zgroup", "g/h/.zgroup", "g/h/b/.zarray", "/g"}},
    {"write one whole chunk", 1, op_write_chunk, {"a/0.1"}},
    {"write part of a chunk", 1, op_write_partial, {"a/0.0"}},
    {"write across chunks", 0, op_write_span,
     {"a/0.0", "a/0.1", "a/0.2", "a/1.0", "a/1.1", "a/1.2"}},
    {"set attributes", 1, op_attrs, {"a/.zattrs"}},
    {"resize (shrink)", 0, op_resize_shrink,
     {"a/.zarray", "a/0.1", "a/0.2", "a/1.0", "a/1.1", "a/1.2"}},
    {"resize (grow)", 1, op_resize_grow, {"a/.zarray"}},
    {"consolidate metadata", 1, op_consolidate, {".zmetadata"}},
};
#define NOPS ARRAY_LEN(OPS)

/* A fresh store: a root group holding the array "a" with every chunk written and attributes. */
static int fixture_setup(fixture *f) {
    int32_t data[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) data[i] = i;
    uint64_t start[2] = {0, 0}, count[2] = {ROWS, COLS};
    zarr_group *root = NULL;
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    f->store = NULL;
    f->array = NULL;
    if (!CHECK_OK(zarr_store_open_options(f->dir, ZARR_MODE_WRITE, f->options, &f->store)) ||
        !CHECK_OK(zarr_group_create_format(f->store, "", f->format, &root)) ||
        !CHECK_OK(zarr_array_create(f->store, "a", array_json(f), &f->array)) ||
        !CHECK_OK(zarr_array_write(f->array, 2, start, count, data, sizeof data)) ||
        !CHECK_OK(zarr_array_attrs_set(f->array, "{\"units\": \"K\"}"))) {
        zarr_group_close(root);
        return 0;
    }
    zarr_group_close(root);
    if (f->consolidated) {
        bool in_use = false;
        zarr_array_close(f->array);
        zarr_store_close(f->store);
        f->array = NULL;
        f->store = NULL;
        if (!CHECK_OK(zarr_store_open(f->dir, ZARR_MODE_WRITE, &f->store)) ||
            !CHECK_OK(zarr_consolidate_metadata(f->store))) return 0;
        zarr_store_close(f->store);
        f->store = NULL;
        if (!CHECK_OK(zarr_store_open_options(f->dir, ZARR_MODE_WRITE, f->options, &f->store)) ||
            !CHECK_OK(zarr_store_uses_consolidated(f->store, &in_use)) || !CHECK(in_use) ||
            !CHECK_OK(zarr_array_open(f->store, "a", &f->array)))
            return 0;
    }
    return 1;
}

static void fixture_close(fixture *f) {
    zarr_array_close(f->array);
    zarr_store_close(f->store);
    f->array = NULL;
    f->store = NULL;
}

/* The root group's member listing (malloc'd JSON; NULL on failure) through a new handle. */
static char *root_listing(const fixture *f) {
    zarr_store *s = NULL;
    zarr_group *root = NULL;
    char *list = NULL;
    if (CHECK_OK(zarr_store_open(f->dir, ZARR_MODE_READ | ZARR_OPEN_IGNORE_CONSOLIDATED, &s)) &&
        CHECK_OK(zarr_group_open(s, "", &root)))
        CHECK_OK(zarr_group_list(root, &list));
    zarr_group_close(root);
    zarr_store_close(s);
    return list;
}

typedef struct {
    uint64_t shape[2];
    char *attrs, *metadata;
    int32_t *data;
} array_view;

static int view_of(zarr_array *a, array_view *v) {
    uint64_t start[2] = {0, 0};
    memset(v, 0, sizeof *v);
    if (!CHECK_OK(zarr_array_shape(a, 2, v->shape)) ||
        !CHECK_OK(zarr_array_attrs_get(a, &v->attrs)) ||
        !CHECK_OK(zarr_array_metadata_json(a, &v->metadata)))
        return 0;
    size_t n = (size_t)(v->shape[0] * v->shape[1]);
    v->data = malloc(n * sizeof *v->data + 1);
    return CHECK_OK(zarr_array_read(a, 2, start, v->shape, v->data, n * sizeof *v->data));
}

static void view_free(array_view *v) {
    zarr_string_free(v->attrs);
    zarr_string_free(v->metadata);
    free(v->data);
}

/* The store opens again (a new handle, ignoring consolidated metadata, so it sees the keys),
 * the array "a" reads whole through it, and the handle the failed call used sees the same
 * shape, attributes, metadata and values. */
static int store_reopens(const fixture *f) {
    zarr_store *s = NULL;
    zarr_array *a = NULL;
    array_view fresh, used;
    memset(&fresh, 0, sizeof fresh);
    int ok = CHECK_OK(zarr_store_open(f->dir, ZARR_MODE_READ | ZARR_OPEN_IGNORE_CONSOLIDATED,
                                      &s)) &&
             CHECK_OK(zarr_array_open(s, "a", &a)) && view_of(a, &fresh);
    if (ok && view_of(f->array, &used)) {
        size_t n = (size_t)(fresh.shape[0] * fresh.shape[1]);
        ok = CHECK(used.shape[0] == fresh.shape[0] && used.shape[1] == fresh.shape[1]) &&
             CHECK_STR_EQ(used.attrs, fresh.attrs) && CHECK_STR_EQ(used.metadata, fresh.metadata) &&
             CHECK(memcmp(used.data, fresh.data, n * sizeof *used.data) == 0);
        view_free(&used);
    }
    view_free(&fresh);
    zarr_array_close(a);
    zarr_store_close(s);
    return ok;
}

/* ---- the loop ----------------------------------------------------------------------------- */

typedef struct {
    long runs, failures, injected_ok, violations, extra_dirs, late_errors;
    long calls[NOPS][NPOINTS];
} tally;

/* The message names a key of the operation, or a file or directory of the store (the one a
 * failed call was about: a metadata document read on the way, a directory created or listed). */
static int message_names_a_key(const char *msg, const operation *op, const char *dir) {
    for (size_t i = 0; i < ARRAY_LEN(op->keys) && op->keys[i]; i++)
        if (strstr(msg, op->keys[i])) return 1;
    return strstr(msg, dir) != NULL;
}

/* The store before the call and after a clean one: the tree and the root group's members. */
typedef struct {
    snapshot before, after;
    char *members_before, *members_after;
} reference;

/* Runs `op` once with fail_at = k on a fresh store; returns 1 when the k-th call was failed. */
static int run_injected(fixture *f, const operation *op, const point *p, long k,
                        const reference *ref, tally *t) {
    const snapshot *before_ref = &ref->before, *after_ref = &ref->after;
    if (!fixture_setup(f)) {
        t->violations++;
        return 0;
    }
    snapshot before = snap_take(f->dir);
    CHECK(snap_equal(&before, before_ref, "setup differs from the first one"));

    atomic_store(&calls, 0);
    atomic_store(&injected, 0);
    fail_at = k;
    atomic_store(&armed, 1);
    zarr_status st = op->run(f);
    atomic_store(&armed, 0);
    long hit = atomic_load(&injected);
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", zarr_last_error());

    int failures_before = check_failed;
    t->runs++;
    if (!hit) {
        CHECK_OK(st);
        snap_free(&before);
        fixture_close(f);
        return 0;
    }
    if (st == ZARR_OK) {
        t->injected_ok++;
        fprintf(stderr, "  success although call %ld of %s failed\n", k, p->name);
        CHECK(st != ZARR_OK);
    } else {
        t->failures++;
        char errtext[64];
        snprintf(errtext, sizeof errtext, "(os error %d)", p->err);
        if (verbose) printf("    k=%ld: %s: %s\n", k, zarr_status_name(st), msg);
        if (!CHECK(message_names_a_key(msg, op, f->dir))) fprintf(stderr, "  message: %s\n", msg);
        if (!CHECK(strstr(msg, errtext) != NULL))
            fprintf(stderr, "  message without the injected %s: %s\n", errtext, msg);
    }

    /* The store as the failed call left it. */
    snapshot mid = snap_take(f->dir);
    CHECK(snap_temp_files(&mid) == 0);
    /* A flush that fails after the rename (of the directory, so that the new name lasts)
     * cannot undo it: the call reports the error with the new value in place, and its
     * durability unknown. Only then may a failed call leave the store as a clean run does. */
    int late = strstr(p->name, "sync") && snap_same(&mid, after_ref);
    t->late_errors += late;
    if (late) {
        /* the store is as after the call: nothing more to compare */
    } else if (op->single_key) {
        /* Files byte for byte as before; directories the call created may stay (counted). */
        snapshot kept = {0}; /* shallow: mid without those directories */
        for (size_t i = 0; i < mid.n; i++)
            if (!is_dir_name(mid.e[i].name) || snap_find(&before, mid.e[i].name))
                snap_push(&kept, mid.e[i]);
        CHECK(snap_equal(&kept, &before, "after a failed single-key call"));
        free(kept.e);
    } else {
        CHECK(snap_old_or_new(&mid, &before, after_ref));
    }
    t->extra_dirs += snap_extra_dirs(&mid, &before);
    CHECK(store_reopens(f));
    char *members = root_listing(f);
    if (!CHECK(members && (!strcmp(members, ref->members_before) ||
                           !strcmp(members, ref->members_after))))
        fprintf(stderr, "  root group members: %s (before: %s, after: %s)\n", members,
                ref->members_before, ref->members_after);
    zarr_string_free(members);

    /* The handle stays usable: the same call succeeds and leaves what a clean run leaves. */
    zarr_status again = op->run(f);
    if (!(late && again == ZARR_ERR_ALREADY_EXISTS) && !CHECK_OK(again)) /* creating again */
        fprintf(stderr, "  (retrying after the failure)\n");
    snapshot end = snap_take(f->dir);
    CHECK(snap_equal(&end, after_ref, "after the retry"));
    snap_free(&end);
    snap_free(&mid);
    snap_free(&before);
    fixture_close(f);
    if (check_failed != failures_before) {
        t->violations++;
        fprintf(stderr, "  ^ %s, %s = %s, call %ld: %s\n", op->name, p->name, strerror(p->err), k,
                msg);
    }
    return 1;
}

/* Filters from the command line: a run is made when each is part of the operation's name, the
 * mode's or the failure point's. */
static const char *filters[8];
static size_t nfilters;

static int selected(const char *op, const char *mode, const char *point) {
    for (size_t i = 0; i < nfilters; i++)
        if (!strstr(op, filters[i]) && !strstr(mode, filters[i]) && !strstr(point, filters[i]))
            return 0;
    return 1;
}

int main(int argc, char **argv) {
    /* --verbose prints every failure's message; other arguments are filters. */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--verbose")) verbose = 1;
        else if (nfilters < ARRAY_LEN(filters)) filters[nfilters++] = argv[i];
    struct timeval t0, t1;
    gettimeofday(&t0, NULL);
    if (fiu_init(0) != 0) {
        fprintf(stderr, "fiu_init failed\n");
        return 1;
    }
    for (int i = 0; i < ROWS * COLS; i++) new_values[i] = 1000 + i;
    zarr_set_num_threads(4); /* writes run on worker threads, whatever the machine */

    /* The preload library must be in place, or nothing would be injected. */
    fiu_enable("posix/io/oc/open", 1, (void *)(intptr_t)ENOSPC, 0);
    errno = 0;
    int fd = open("/dev/null", O_RDONLY);
    int preload_err = errno;
    if (fd >= 0) close(fd);
    fiu_disable("posix/io/oc/open");
    if (fd >= 0 || preload_err != ENOSPC) {
        fprintf(stderr, "libfiu's POSIX preload library is not loaded: run with "
                        "LD_PRELOAD=/usr/lib/fiu/fiu_posix_preload.so (or fiu-run -x)\n");
        return 1;
    }

    /* In memory (/dev/shm) where there is one: the calls made are the same, and the flushes
     * of the fsync runs cost nothing, which keeps the test well under a minute. */
    char shm[] = "/dev/shm/libzarr-fault-XXXXXX";
    char *base = access("/dev/shm", W_OK) == 0 && mkdtemp(shm) ? strdup(shm) : tmpdir_make();
    fixture f = {strdup(strf("%s/store", base)), NULL, 0, 2, NULL, NULL};
    const struct {
        const char *label, *options;
        int consolidated;
    } modes[] = {
        {"no options", NULL, 0},
        {"no options, consolidated metadata in use", NULL, 1},
        {"{\"fsync\": true}", "{\"fsync\": true}", 0},
    };
    long total_runs = 0, total_failures = 0, total_injected_ok = 0, total_violations = 0;

    for (size_t mf = 0; mf < 2 * ARRAY_LEN(modes); mf++) {
        size_t m = mf / 2;
        char label[128];
        f.format = mf % 2 ? 3 : 2;
        snprintf(label, sizeof label, "Zarr v%d, %s", f.format, modes[m].label);
        f.options = modes[m].options;
        f.consolidated = modes[m].consolidated;
        int fsync_on = f.options != NULL;
        zarr_store *probe = NULL;
        if (f.options &&
            !CHECK_OK(zarr_store_open_options(f.dir, ZARR_MODE_WRITE, f.options, &probe)))
            continue;
        zarr_store_close(probe);
        printf("== %s\n", label);
        tally t;
        memset(&t, 0, sizeof t);
        for (size_t o = 0; o < NOPS; o++) {
            const operation *op = &OPS[o];
            CHECK_CTX("%s, %s", op->name, label);
            /* Reference: the store before the call and after a clean one. */
            reference ref;
            memset(&ref, 0, sizeof ref);
            if (!fixture_setup(&f)) continue;
            ref.before = snap_take(f.dir);
            ref.members_before = root_listing(&f);
            zarr_status st = op->run(&f);
            ref.after = snap_take(f.dir);
            ref.members_after = root_listing(&f);
            fixture_close(&f);
            if (CHECK_OK(st) && CHECK(ref.members_before && ref.members_after)) {
                for (size_t pi = 0; pi < NPOINTS; pi++) {
                    const point *p = &POINTS[pi];
                    if (!selected(op->name, label, p->name)) continue;
                    if (p->fsync_only && !fsync_on) continue;
                    CHECK_CTX("%s, %s, %s = %s", op->name, label, p->name,
                              strerror(p->err));
                    fiu_enable_external(p->name, 1, (void *)(intptr_t)p->err, 0, decide);
                    long k = 1;
                    while (k <= 500 && run_injected(&f, op, p, k, &ref, &t)) k++;
                    fiu_disable(p->name);
                    t.calls[o][pi] = k - 1;
                }
            }
            snap_free(&ref.before);
            snap_free(&ref.after);
            zarr_string_free(ref.members_before);
            zarr_string_free(ref.members_after);
        }
        CHECK_CTX_CLEAR();

        /* Calls of each point per operation = runs that failed one. */
        printf("%-26s", "calls per operation");
        for (size_t pi = 0; pi < NPOINTS; pi++) {
            const char *slash = strrchr(POINTS[pi].name, '/');
            printf(" %9.9s", slash + 1);
        }
        printf("\n%-26s", "");
        for (size_t pi = 0; pi < NPOINTS; pi++) printf(" %9.9s", strerror(POINTS[pi].err));
        printf("\n");
        for (size_t o = 0; o < NOPS; o++) {
            printf("%-26s", OPS[o].name);
            for (size_t pi = 0; pi < NPOINTS; pi++)
                if (POINTS[pi].fsync_only && !fsync_on) printf(" %9s", "-");
                else printf(" %9ld", t.calls[o][pi]);
            printf("\n");
        }
        printf("runs %ld (injected %ld), error statuses %ld (%ld of them after the change was in "
               "place: a failed flush), success despite a failed call %ld, runs with violations "
               "%ld, directories left by failed calls %ld\n",
               t.runs, t.failures + t.injected_ok, t.failures, t.late_errors, t.injected_ok,
               t.violations, t.extra_dirs);
        total_runs += t.runs;
        total_failures += t.failures;
        total_injected_ok += t.injected_ok;
        total_violations += t.violations;
    }
    gettimeofday(&t1, NULL);
    printf("total: %ld runs, %ld error statuses, %ld successes despite a failed call, %ld runs "
           "with violations, %.1f s\n",
           total_runs, total_failures, total_injected_ok, total_violations,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_usec - t0.tv_usec) / 1e6);
    tmpdir_remove(base);
    free(f.dir);
    return check_summary("fault_injection");
}
