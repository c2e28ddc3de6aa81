/* testutil.h - helpers shared by the libzarr C tests: temporary directories, files,
 * JSON text matching, a reference model for N-d boxes, and value generation/comparison.
 * Everything is static inline so each test is a single self-contained .c file. */
#ifndef ZARR_C_TESTS_TESTUTIL_H
#define ZARR_C_TESTS_TESTUTIL_H

#include "check.h"

#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_DIMS 8

/* ---- strings and paths ---------------------------------------------------------------- */

/* printf into one of 8 rotating static buffers: handy for paths and JSON in one expression. */
static inline const char *strf(const char *fmt, ...) {
    static char bufs[8][4096];
    static int next;
    char *buf = bufs[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof bufs[0], fmt, ap);
    va_end(ap);
    return buf;
}

/* ---- temporary directories and files ------------------------------------------------- */

static inline char *tmpdir_make(void) {
    char tmpl[] = "/tmp/libzarr-ctest-XXXXXX";
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        exit(2);
    }
    return strdup(tmpl);
}

static inline int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* rm -rf dir, then free the string. */
static inline void tmpdir_remove(char *dir) {
    if (dir) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

static inline int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static inline int dir_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static inline long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Whole file into a malloc'd, NUL-terminated buffer (NULL if unreadable). */
static inline unsigned char *file_read(const char *path, size_t *len_out) {
    FILE *f = fopen(path, "rb");
    long n;
    unsigned char *buf;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    if (buf && len_out) *len_out = (size_t)n;
    return buf;
}

static inline int file_write(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f) return 0;
    ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

static long count_files_n;
static inline int count_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)path, (void)sb, (void)ftw;
    if (flag == FTW_F) count_files_n++;
    return 0;
}

/* Number of regular files below dir (recursively). */
static inline long count_files(const char *dir) {
    count_files_n = 0;
    if (nftw(dir, count_entry, 16, FTW_PHYS) != 0) return -1;
    return count_files_n;
}

/* ---- JSON text --------------------------------------------------------------------------- */

/* Copy of json without whitespace outside string literals (malloc'd), so that checks do
 * not depend on pretty-printing: json_squash("{ \"a\": [1, 2] }") == "{\"a\":[1,2]}". */
static inline char *json_squash(const char *json) {
    char *out = malloc(strlen(json) + 1), *o = out;
    int in_str = 0;
    for (const char *p = json; *p; p++) {
        if (in_str) {
            *o++ = *p;
            if (*p == '\\' && p[1]) *o++ = *++p;
            else if (*p == '"') in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
            *o++ = *p;
        } else if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
            *o++ = *p;
        }
    }
    *o = 0;
    return out;
}

static inline int check_json(const char *json, const char *fragment, int exact, int want,
                             const char *file, int line) {
    char *sq;
    int ok;
    check_total++;
    if (!json) return check_fail_at(file, line, "JSON is NULL (looking for %s)", fragment);
    sq = json_squash(json);
    ok = exact ? strcmp(sq, fragment) == 0 : (strstr(sq, fragment) != NULL) == want;
    if (!ok)
        check_fail_at(file, line, "JSON %s %s %s", sq,
                      exact ? "is not" : want ? "lacks" : "contains", fragment);
    free(sq);
    return ok;
}

static inline int cmp_str_ptrs(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Squashed copy of a JSON object with its top-level members sorted, so that two documents
 * that differ only in key order compare equal (malloc'd). Non-objects are just squashed. */
static inline char *json_sorted_members(const char *json) {
    char *sq = json_squash(json), *members[256], *out;
    size_t n = 0, len = strlen(sq), depth = 0;
    int in_str = 0;
    if (len < 2 || sq[0] != '{') return sq;
    members[n++] = sq + 1;
    for (char *p = sq + 1; p < sq + len - 1; p++) { /* split at depth-0 commas */
        if (in_str) {
            if (*p == '\\') p++;
            else if (*p == '"') in_str = 0;
        } else if (*p == '"') in_str = 1;
        else if (*p == '{' || *p == '[') depth++;
        else if (*p == '}' || *p == ']') depth--;
        else if (*p == ',' && depth == 0 && n < 256) {
            *p = 0;
            members[n++] = p + 1;
        }
    }
    sq[len - 1] = 0;
    qsort(members, n, sizeof members[0], cmp_str_ptrs);
    out = malloc(len + 1);
    strcpy(out, "{");
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(out, ",");
        strcat(out, members[i]);
    }
    strcat(out, "}");
    free(sq);
    return out;
}

/* Same JSON object up to whitespace and the order of its top-level keys. */
static inline int check_json_same_object(const char *a, const char *b, const char *file, int line) {
    char *ca, *cb;
    int ok;
    check_total++;
    if (!a || !b) return check_fail_at(file, line, "JSON is NULL");
    ca = json_sorted_members(a);
    cb = json_sorted_members(b);
    ok = strcmp(ca, cb) == 0;
    if (!ok) check_fail_at(file, line, "JSON objects differ: %s vs %s", ca, cb);
    free(ca);
    free(cb);
    return ok;
}
#define CHECK_JSON_SAME_OBJECT(a, b) check_json_same_object((a), (b), __FILE__, __LINE__)

/* Fragments are written without whitespace: CHECK_JSON_HAS(j, "\"shape\":[10,20]"). */
#define CHECK_JSON_HAS(json, frag) check_json((json), (frag), 0, 1, __FILE__, __LINE__)
#define CHECK_JSON_LACKS(json, frag) check_json((json), (frag), 0, 0, __FILE__, __LINE__)
#define CHECK_JSON_EQ(json, frag) check_json((json), (frag), 1, 1, __FILE__, __LINE__)

/* ---- library shortcuts (failures are reported at the caller's line) ----------------------- */

static inline zarr_store *open_store_at(const char *location, zarr_open_mode mode, const char *file,
                                        int line) {
    zarr_store *s = NULL;
    if (!check_status(zarr_store_open(location, mode, &s), ZARR_OK, ZARR_OK,
                      strf("zarr_store_open(\"%s\", %d)", location, (int)mode), file, line))
        return NULL;
    return s;
}

static inline zarr_array *create_array_at(zarr_store *s, const char *path, const char *json,
                                          const char *file, int line) {
    zarr_array *a = NULL;
    if (!check_status(zarr_array_create(s, path, json, &a), ZARR_OK, ZARR_OK,
                      strf("zarr_array_create(\"%s\", %s)", path, json), file, line))
        return NULL;
    return a;
}

static inline zarr_array *open_array_at(zarr_store *s, const char *path, const char *file, int line) {
    zarr_array *a = NULL;
    if (!check_status(zarr_array_open(s, path, &a), ZARR_OK, ZARR_OK,
                      strf("zarr_array_open(\"%s\")", path), file, line))
        return NULL;
    return a;
}

/* Open/create, checking ZARR_OK; NULL on failure. */
#define open_store(location, mode) open_store_at((location), (mode), __FILE__, __LINE__)
#define create_array(store, path, json) create_array_at((store), (path), (json), __FILE__, __LINE__)
#define open_array(store, path) open_array_at((store), (path), __FILE__, __LINE__)

/* ---- N-d boxes: the reference model ----------------------------------------------------- */

static inline uint64_t prod_u64(size_t n, const uint64_t *v) {
    uint64_t p = 1;
    for (size_t i = 0; i < n; i++) p *= v[i];
    return p;
}

/* Copies the box (start, count) between the C-order array `full` of the given shape and the
 * dense C-order buffer `box`: full -> box when to_box, else box -> full. */
static inline void box_copy(size_t ndim, const uint64_t *shape, const uint64_t *start,
                            const uint64_t *count, size_t itemsize, unsigned char *full,
                            unsigned char *box, int to_box) {
    uint64_t n = prod_u64(ndim, count), row = ndim ? count[ndim - 1] : 1, idx[MAX_DIMS] = {0};
    if (n == 0) return;
    for (uint64_t r = 0; r < n / row; r++) {
        uint64_t off = 0;
        for (size_t d = 0; d < ndim; d++) off = off * shape[d] + start[d] + (d + 1 < ndim ? idx[d] : 0);
        unsigned char *f = full + off * itemsize, *b = box + r * row * itemsize;
        memcpy(to_box ? b : f, to_box ? f : b, row * itemsize);
        for (size_t d = ndim - 1; d-- > 0;) { /* odometer over all but the last dim */
            if (++idx[d] < count[d]) break;
            idx[d] = 0;
        }
    }
}

/* ---- values ----------------------------------------------------------------------------- */

static inline uint64_t rng_next(uint64_t *state) { /* splitmix64 */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rng_below(uint64_t *state, uint64_t n) { return n ? rng_next(state) % n : 0; }

/* IEEE binary16 bits of v (exact for NaN, infinities, zero and normal halves). */
static inline uint16_t half_bits(double v) {
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    int e;
    double m;
    if (isnan(v)) return 0x7e00;
    v = fabs(v);
    if (isinf(v)) return sign | 0x7c00;
    if (v == 0) return sign;
    m = frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
    return sign | (uint16_t)((e + 14) << 10) | (uint16_t)((2 * m - 1) * 1024);
}

/* Writes scalar v as one element of the given dtype (native byte order); complex gets (v, 0). */
static inline void scalar_to_elem(zarr_dtype_kind kind, size_t itemsize, double v, void *out) {
    switch (kind) {
    case ZARR_DTYPE_BOOL: *(uint8_t *)out = v != 0; break;
    case ZARR_DTYPE_INT:
        if (itemsize == 1) { int8_t x = (int8_t)v; memcpy(out, &x, 1); }
        if (itemsize == 2) { int16_t x = (int16_t)v; memcpy(out, &x, 2); }
        if (itemsize == 4) { int32_t x = (int32_t)v; memcpy(out, &x, 4); }
        if (itemsize == 8) { int64_t x = (int64_t)v; memcpy(out, &x, 8); }
        break;
    case ZARR_DTYPE_UINT:
        if (itemsize == 1) { uint8_t x = (uint8_t)v; memcpy(out, &x, 1); }
        if (itemsize == 2) { uint16_t x = (uint16_t)v; memcpy(out, &x, 2); }
        if (itemsize == 4) { uint32_t x = (uint32_t)v; memcpy(out, &x, 4); }
        if (itemsize == 8) { uint64_t x = (uint64_t)v; memcpy(out, &x, 8); }
        break;
    case ZARR_DTYPE_FLOAT:
        if (itemsize == 2) { uint16_t x = half_bits(v); memcpy(out, &x, 2); }
        if (itemsize == 4) { float x = (float)v; memcpy(out, &x, 4); }
        if (itemsize == 8) memcpy(out, &v, 8);
        break;
    case ZARR_DTYPE_COMPLEX:
        scalar_to_elem(ZARR_DTYPE_FLOAT, itemsize / 2, v, out);
        scalar_to_elem(ZARR_DTYPE_FLOAT, itemsize / 2, 0.0, (unsigned char *)out + itemsize / 2);
        break;
    }
}

/* A deterministic, never-NaN value for element `seed` (varied, rarely zero). */
static inline void gen_elem(zarr_dtype_kind kind, size_t itemsize, uint64_t seed, void *out) {
    uint64_t r = rng_next(&seed);
    if (kind == ZARR_DTYPE_BOOL) *(uint8_t *)out = (uint8_t)(r & 1);
    else if (kind == ZARR_DTYPE_INT || kind == ZARR_DTYPE_UINT) memcpy(out, &r, itemsize);
    else if (kind == ZARR_DTYPE_FLOAT) scalar_to_elem(kind, itemsize, (double)((int64_t)(r % 4001) - 2000) / 8.0, out);
    else { /* complex: two different floats */
        gen_elem(ZARR_DTYPE_FLOAT, itemsize / 2, seed, out);
        gen_elem(ZARR_DTYPE_FLOAT, itemsize / 2, seed ^ 0x5555, (unsigned char *)out + itemsize / 2);
    }
}

/* Fills buf with n generated elements (seeded by base + index). */
static inline void gen_buffer(zarr_dtype_kind kind, size_t itemsize, uint64_t base, void *buf,
                              size_t n) {
    for (size_t i = 0; i < n; i++) gen_elem(kind, itemsize, base + i, (unsigned char *)buf + i * itemsize);
}

/* Replicates one element over n slots. */
static inline void fill_elems(void *buf, const void *elem, size_t itemsize, size_t n) {
    for (size_t i = 0; i < n; i++) memcpy((unsigned char *)buf + i * itemsize, elem, itemsize);
}

static inline int float_is_nan(const unsigned char *p, size_t size) {
    if (size == 2) {
        uint16_t h;
        memcpy(&h, p, 2);
        return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0;
    }
    if (size == 4) {
        float f;
        memcpy(&f, p, 4);
        return isnan(f);
    }
    double d;
    memcpy(&d, p, 8);
    return isnan(d);
}

/* Equal bytes, except that any NaN equals any NaN (per float or complex component). */
static inline int elem_equal(zarr_dtype_kind kind, size_t itemsize, const unsigned char *a,
                             const unsigned char *b) {
    if (kind == ZARR_DTYPE_FLOAT || kind == ZARR_DTYPE_COMPLEX) {
        size_t part = kind == ZARR_DTYPE_COMPLEX ? itemsize / 2 : itemsize;
        for (size_t off = 0; off < itemsize; off += part) {
            int na = float_is_nan(a + off, part), nb = float_is_nan(b + off, part);
            if (na != nb || (!na && memcmp(a + off, b + off, part) != 0)) return 0;
        }
        return 1;
    }
    return memcmp(a, b, itemsize) == 0;
}

static inline void hex_elem(char *out, const unsigned char *p, size_t itemsize) {
    for (size_t i = 0; i < itemsize; i++) sprintf(out + 2 * i, "%02x", p[i]);
}

/* Compares n elements; on mismatch reports the first differing index and the bytes. */
static inline int check_elems(zarr_dtype_kind kind, size_t itemsize, const void *got,
                              const void *want, size_t n, const char *file, int line) {
    const unsigned char *g = got, *w = want;
    size_t bad = 0, first = n;
    char hg[40], hw[40];
    check_total++;
    for (size_t i = 0; i < n; i++)
        if (!elem_equal(kind, itemsize, g + i * itemsize, w + i * itemsize) && bad++ == 0) first = i;
    if (!bad) return 1;
    hex_elem(hg, g + first * itemsize, itemsize);
    hex_elem(hw, w + first * itemsize, itemsize);
    return check_fail_at(file, line, "%zu of %zu elements differ; first at [%zu]: got %s, want %s",
                         bad, n, first, hg, hw);
}
#define CHECK_ELEMS(kind, itemsize, got, want, n) \
    check_elems((kind), (itemsize), (got), (want), (n), __FILE__, __LINE__)

#endif
