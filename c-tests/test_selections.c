/* test_selections.c - strided boxes, orthogonal selections and points, read and written
 * through caller buffer strides, against a dense C-order model of the array kept in C:
 * steps 1..5 from random starts (edge chunks included), C and F order arrays, big-endian
 * dtypes and compressors; reads into padded images, Fortran-order and permuted buffers
 * (guard bytes around and between the elements must stay untouched); writes from strided
 * and broadcasting (zero-stride) buffers; index lists unsorted and with repeats (the last
 * value written wins); masks, Boolean flags and blocks; and every argument error, which must
 * leave outputs and the array untouched. Also object arrays and field selections through every
 * selection kind with one descriptor (zarr_selection): boxes with steps, orthogonal index lists
 * and Boolean flags, points, masks and blocks; the size query; writes read back through another
 * kind; and the descriptor's errors. */
#include "testutil.h"

#define ZLIB "{\"id\":\"zlib\",\"level\":1}"
#define BLOSC "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}"
#define ZSTD "{\"id\":\"zstd\",\"level\":1}"
#define LZ4 "{\"id\":\"lz4\",\"acceleration\":1}"

#define GUARD 0xA5 /* byte pattern of buffer slots that a call must not touch */

struct sel_case {
    const char *name;
    size_t ndim;
    uint64_t shape[4], chunks[4];
    const char *dtype, *order, *compressor, *fill_json;
    double fill;
};

static const struct sel_case CASES[] = {
    {"1d", 1, {100}, {7}, "<i4", "C", "null", "0", 0},
    {"2d-zlib", 2, {37, 23}, {8, 5}, "<f8", "C", ZLIB, "-1.5", -1.5},
    {"2d-F-be-blosc", 2, {37, 23}, {8, 5}, ">i2", "F", BLOSC, "-3", -3},
    {"2d-nan-fill", 2, {19, 17}, {5, 4}, "<f4", "C", "null", "\"NaN\"", NAN},
    {"3d-be-zstd", 3, {9, 10, 11}, {4, 3, 5}, ">u4", "C", ZSTD, "7", 7},
    {"3d-F-lz4", 3, {9, 10, 11}, {2, 7, 4}, "<f4", "F", LZ4, "2.5", 2.5},
    {"3d-F-be-c16", 3, {6, 7, 5}, {4, 4, 3}, ">c16", "F", ZLIB, "[1.0,-2.0]", 0},
    {"4d-be-i8", 4, {5, 4, 6, 3}, {2, 3, 4, 2}, ">i8", "C", ZSTD, "-7", -7},
    {"chunk-bigger-than-shape", 2, {7, 3}, {100, 100}, "|u1", "C", ZLIB, "200", 200},
    {"chunk-1", 2, {6, 5}, {1, 1}, "<u2", "F", "null", "42", 42},
    {"bool", 2, {11, 13}, {4, 4}, "|b1", "C", ZLIB, "true", 1},
};

/* ---- the model ------------------------------------------------------------------------- */

struct model {
    size_t ndim, itemsize;
    zarr_dtype_kind kind;
    uint64_t shape[MAX_DIMS];
    unsigned char *ref; /* the whole array, C order, native values */
};

static uint64_t sel_index(const zarr_dim_selection *s, uint64_t i) {
    return s->indices ? s->indices[i] : s->start + i * s->step;
}

static void sel_counts(size_t ndim, const zarr_dim_selection *sel, uint64_t *count) {
    for (size_t d = 0; d < ndim; d++) count[d] = sel[d].count;
}

/* Element strides of a dense C-order buffer of the given extent. */
static void c_strides(size_t ndim, const uint64_t *extent, uint64_t *out) {
    uint64_t s = 1;
    for (size_t d = ndim; d-- > 0;) {
        out[d] = s;
        s *= extent[d];
    }
}

/* Element strides of a dense Fortran-order buffer of the given extent. */
static void f_strides(size_t ndim, const uint64_t *extent, uint64_t *out) {
    uint64_t s = 1;
    for (size_t d = 0; d < ndim; d++) {
        out[d] = s;
        s *= extent[d];
    }
}

/* How many elements a buffer laid out with `strides` (NULL: dense C order) must span. */
static uint64_t buf_extent(size_t ndim, const uint64_t *count, const uint64_t *strides) {
    uint64_t e = 1;
    for (size_t d = 0; d < ndim; d++)
        if (count[d] == 0) return 0;
    if (!strides) return prod_u64(ndim, count);
    for (size_t d = 0; d < ndim; d++) e += (count[d] - 1) * strides[d];
    return e;
}

/* Walks the selection in C order of its positions. to_buf: model -> buffer (what a read
 * must produce); else buffer -> model (a write, where later positions win). */
static void model_walk(struct model *m, const zarr_dim_selection *sel, const uint64_t *strides,
                       unsigned char *buf, int to_buf) {
    uint64_t count[MAX_DIMS], dense[MAX_DIMS], idx[MAX_DIMS] = {0}, n;
    sel_counts(m->ndim, sel, count);
    if (!strides) {
        c_strides(m->ndim, count, dense);
        strides = dense;
    }
    n = prod_u64(m->ndim, count);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t aoff = 0, boff = 0;
        for (size_t d = 0; d < m->ndim; d++) {
            aoff = aoff * m->shape[d] + sel_index(&sel[d], idx[d]);
            boff += idx[d] * strides[d];
        }
        if (to_buf) memcpy(buf + boff * m->itemsize, m->ref + aoff * m->itemsize, m->itemsize);
        else memcpy(m->ref + aoff * m->itemsize, buf + boff * m->itemsize, m->itemsize);
        for (size_t d = m->ndim; d-- > 0;) {
            if (++idx[d] < count[d]) break;
            idx[d] = 0;
        }
    }
}

/* Points: point i at coords[i*ndim ...]; buffer element i. */
static void model_points(struct model *m, size_t npoints, const uint64_t *coords, unsigned char *buf,
                         int to_buf) {
    for (size_t i = 0; i < npoints; i++) {
        uint64_t aoff = 0;
        for (size_t d = 0; d < m->ndim; d++) aoff = aoff * m->shape[d] + coords[i * m->ndim + d];
        if (to_buf) memcpy(buf + i * m->itemsize, m->ref + aoff * m->itemsize, m->itemsize);
        else memcpy(m->ref + aoff * m->itemsize, buf + i * m->itemsize, m->itemsize);
    }
}

static const char *dims_json(size_t n, const uint64_t *v) {
    char buf[256] = "";
    for (size_t d = 0; d < n; d++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%llu", d ? "," : "",
                 (unsigned long long)v[d]);
    return strf("[%s]", buf);
}

static const char *sel_desc(size_t ndim, const zarr_dim_selection *sel) {
    char buf[512] = "";
    for (size_t d = 0; d < ndim; d++) {
        size_t l = strlen(buf);
        if (sel[d].indices) {
            snprintf(buf + l, sizeof buf - l, "%s[", d ? " x " : "");
            for (uint64_t i = 0; i < sel[d].count && strlen(buf) < 400; i++)
                snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%llu", i ? "," : "",
                         (unsigned long long)sel[d].indices[i]);
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "]");
        } else {
            snprintf(buf + l, sizeof buf - l, "%s%llu:+%llu:%llu", d ? " x " : "",
                     (unsigned long long)sel[d].start, (unsigned long long)sel[d].count,
                     (unsigned long long)sel[d].step);
        }
    }
    return strf("%s", buf);
}

/* Reads the whole array (plain box read) and compares it with the model. */
static int check_all(zarr_array *a, const struct model *m, int line) {
    uint64_t start[MAX_DIMS] = {0};
    size_t n = (size_t)prod_u64(m->ndim, m->shape), bytes = n * m->itemsize;
    unsigned char *got = malloc(bytes + 1);
    int ok = 0;
    if (check_status(zarr_array_read(a, m->ndim, start, m->shape, got, bytes), ZARR_OK, ZARR_OK,
                     "zarr_array_read(whole array)", __FILE__, line))
        ok = check_elems(m->kind, m->itemsize, got, m->ref, n, __FILE__, line);
    free(got);
    return ok;
}
#define CHECK_ALL(a, m) check_all((a), (m), __LINE__)

/* ---- calls through either API ------------------------------------------------------------- */

enum api { API_STRIDED, API_ORTHO };

/* Calls the strided (every dimension must be a range) or orthogonal read or write. */
static zarr_status sel_call(zarr_array *a, size_t ndim, const zarr_dim_selection *sel, enum api api,
                            int null_step, const uint64_t *strides, void *buf, size_t size, int write) {
    if (api == API_STRIDED) {
        uint64_t start[MAX_DIMS], count[MAX_DIMS], step[MAX_DIMS];
        for (size_t d = 0; d < ndim; d++) start[d] = sel[d].start, count[d] = sel[d].count, step[d] = sel[d].step;
        if (write)
            return zarr_array_write_strided(a, ndim, start, count, null_step ? NULL : step, strides, buf, size);
        return zarr_array_read_strided(a, ndim, start, count, null_step ? NULL : step, strides, buf, size);
    }
    if (write) return zarr_array_write_orthogonal(a, ndim, sel, strides, buf, size);
    return zarr_array_read_orthogonal(a, ndim, sel, strides, buf, size);
}

/* Reads the selection into a buffer of lead + extent + tail elements (at element `lead`,
 * reporting extent + tail of them as its size; tail must be 0 without strides) and checks
 * every element, guard slots included, against the model. */
static int read_check(zarr_array *a, struct model *m, const zarr_dim_selection *sel, enum api api,
                      int null_step, const uint64_t *strides, size_t lead, size_t tail) {
    uint64_t count[MAX_DIMS];
    size_t ext, total, isz = m->itemsize;
    unsigned char *got, *want;
    int ok = 0;
    sel_counts(m->ndim, sel, count);
    ext = (size_t)buf_extent(m->ndim, count, strides);
    total = lead + ext + tail;
    got = malloc(total * isz + 1);
    want = malloc(total * isz + 1);
    memset(got, GUARD, total * isz);
    memset(want, GUARD, total * isz);
    model_walk(m, sel, strides, want + lead * isz, 1);
    if (CHECK_OK(sel_call(a, m->ndim, sel, api, null_step, strides, got + lead * isz, (ext + tail) * isz, 0)))
        ok = CHECK_ELEMS(m->kind, isz, got, want, total);
    free(got);
    free(want);
    return ok;
}

/* Writes generated data laid out with `strides` through the API, applies it to the model,
 * and compares the whole array. */
static int write_check(zarr_array *a, struct model *m, const zarr_dim_selection *sel, enum api api,
                       int null_step, const uint64_t *strides, uint64_t seed) {
    uint64_t count[MAX_DIMS];
    size_t ext;
    unsigned char *data;
    int ok = 0;
    sel_counts(m->ndim, sel, count);
    ext = (size_t)buf_extent(m->ndim, count, strides);
    data = malloc(ext * m->itemsize + 1);
    gen_buffer(m->kind, m->itemsize, seed, data, ext);
    if (CHECK_OK(sel_call(a, m->ndim, sel, api, null_step, strides, data, ext * m->itemsize, 1))) {
        model_walk(m, sel, strides, data, 0);
        ok = CHECK_ALL(a, m);
    }
    free(data);
    return ok;
}

/* ---- random selections ---------------------------------------------------------------------- */

static void rand_range(const struct model *m, size_t d, uint64_t step, uint64_t *rng, zarr_dim_selection *s) {
    uint64_t start = rng_below(rng, m->shape[d]);
    s->indices = NULL;
    s->start = start;
    s->step = step;
    s->count = 1 + rng_below(rng, (m->shape[d] - 1 - start) / step + 1);
}

/* 1..12 indices anywhere along d, unsorted, about a third of them repeats. */
static void rand_list(const struct model *m, size_t d, uint64_t *rng, uint64_t *store, zarr_dim_selection *s) {
    uint64_t n = 1 + rng_below(rng, 12);
    for (uint64_t i = 0; i < n; i++)
        store[i] = i > 0 && rng_below(rng, 3) == 0 ? store[rng_below(rng, i)] : rng_below(rng, m->shape[d]);
    s->indices = store;
    s->count = n;
    s->start = 777; /* ignored with indices */
    s->step = 0;    /* ignored with indices */
}

/* Buffer strides for the given extent: 1 padded C order (an image with a row pitch),
 * 2 Fortran order, 3 dimensions permuted with padding; for writes also 4 a zero stride in
 * one dimension (broadcast) and 5 all zero (one value everywhere). */
static void rand_strides(size_t ndim, const uint64_t *count, int layout, uint64_t *rng, uint64_t *out) {
    uint64_t ext[MAX_DIMS] = {0}, perm[MAX_DIMS], s = 1; /* {0}: a false warning at gcc -O1 */
    for (size_t d = 0; d < ndim; d++) ext[d] = count[d] + rng_below(rng, 3), perm[d] = d;
    switch (layout) {
    case 1: c_strides(ndim, ext, out); break;
    case 2: f_strides(ndim, count, out); break;
    case 3:
        for (size_t d = ndim; d-- > 1;) { /* Fisher-Yates */
            size_t j = (size_t)rng_below(rng, d + 1);
            uint64_t t = perm[d];
            perm[d] = perm[j], perm[j] = t;
        }
        for (size_t k = 0; k < ndim; k++) {
            out[perm[k]] = s;
            s *= ext[perm[k]];
        }
        break;
    case 4:
        c_strides(ndim, ext, out);
        if (ndim) out[rng_below(rng, ndim)] = 0;
        break;
    default:
        for (size_t d = 0; d < ndim; d++) out[d] = 0;
    }
}

/* ---- the table-driven cases ----------------------------------------------------------------- */

static void run_case(const struct sel_case *c, const char *location) {
    const char *json = strf("{\"shape\":%s,\"chunks\":%s,\"dtype\":\"%s\",\"order\":\"%s\","
                            "\"compressor\":%s,\"fill_value\":%s}",
                            dims_json(c->ndim, c->shape), dims_json(c->ndim, c->chunks), c->dtype, c->order,
                            c->compressor, c->fill_json);
    struct model m = {.ndim = c->ndim};
    uint64_t rng = 0xC0FFEE, start[MAX_DIMS], count[MAX_DIMS], strides[MAX_DIMS], lists[MAX_DIMS][16];
    zarr_dim_selection sel[MAX_DIMS];
    unsigned char fill[16];
    bool is_set = false;
    size_t n;
    zarr_store *s = open_store(location, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "arr", json) : NULL;

    if (!a || !CHECK_OK(zarr_array_dtype(a, &m.kind, &m.itemsize)) ||
        !CHECK_OK(zarr_array_fill_value(a, fill, m.itemsize, &is_set)))
        goto out;
    memcpy(m.shape, c->shape, sizeof c->shape);
    n = (size_t)prod_u64(m.ndim, m.shape);
    m.ref = malloc(n * m.itemsize);
    fill_elems(m.ref, fill, m.itemsize, n); /* never-written chunks read as the fill value */
    /* Some random boxes with the plain API, so some chunks exist and some do not. */
    for (int i = 0; i < 4; i++) {
        unsigned char *data;
        size_t k;
        for (size_t d = 0; d < m.ndim; d++) {
            start[d] = rng_below(&rng, m.shape[d]);
            count[d] = 1 + rng_below(&rng, (m.shape[d] - start[d] + 1) / 2);
        }
        k = (size_t)prod_u64(m.ndim, count);
        data = malloc(k * m.itemsize);
        gen_buffer(m.kind, m.itemsize, rng_next(&rng), data, k);
        if (CHECK_OK(zarr_array_write(a, m.ndim, start, count, data, k * m.itemsize)))
            box_copy(m.ndim, m.shape, start, count, m.itemsize, m.ref, data, 0);
        free(data);
    }
    CHECK_ALL(a, &m);

    /* Strided reads and writes, steps 1..5 (same in every dim, then mixed). */
    for (uint64_t step = 1; step <= 5; step++)
        for (int rep = 0; rep < 6; rep++) {
            for (size_t d = 0; d < m.ndim; d++) {
                uint64_t st = rep % 2 ? 1 + (step + d) % 5 : step;
                if (rep == 4) { /* from 0 to the very end: as many as fit */
                    sel[d] = (zarr_dim_selection){NULL, (m.shape[d] - 1) / st + 1, 0, st, NULL};
                } else if (rep == 5) { /* from the start of the last (edge) chunk */
                    uint64_t s0 = (m.shape[d] - 1) / c->chunks[d] * c->chunks[d];
                    sel[d] = (zarr_dim_selection){NULL, (m.shape[d] - 1 - s0) / st + 1, s0, st, NULL};
                } else {
                    rand_range(&m, d, st, &rng, &sel[d]);
                }
            }
            CHECK_CTX("%s in %s: strided %s", c->name, location, sel_desc(m.ndim, sel));
            read_check(a, &m, sel, API_STRIDED, 0, NULL, 0, 0);
            if (step == 1 && rep % 2 == 0) read_check(a, &m, sel, API_STRIDED, 1, NULL, 0, 0);
            write_check(a, &m, sel, API_STRIDED, step == 1 && rep % 2 == 0, NULL, rng_next(&rng));
            read_check(a, &m, sel, API_STRIDED, 0, NULL, 0, 0);
        }

    /* Reads into laid-out buffers (padded image, Fortran order, permuted), with guard
     * elements before and after; writes from laid-out and broadcasting buffers. */
    for (int layout = 1; layout <= 5; layout++)
        for (int rep = 0; rep < 4; rep++) {
            for (size_t d = 0; d < m.ndim; d++) rand_range(&m, d, 1 + rng_below(&rng, 3), &rng, &sel[d]);
            sel_counts(m.ndim, sel, count);
            rand_strides(m.ndim, count, layout, &rng, strides);
            CHECK_CTX("%s in %s: layout %d, strides %s, strided %s", c->name, location, layout,
                      dims_json(m.ndim, strides), sel_desc(m.ndim, sel));
            if (layout <= 3) {
                read_check(a, &m, sel, API_STRIDED, 0, strides, (size_t)rng_below(&rng, 4), (size_t)rng_below(&rng, 4));
                read_check(a, &m, sel, API_STRIDED, 0, strides, 0, 0); /* exactly the span needed */
            }
            write_check(a, &m, sel, API_STRIDED, 0, strides, rng_next(&rng));
            read_check(a, &m, sel, API_STRIDED, 0, NULL, 0, 0);
        }

    /* Orthogonal selections: each dimension a list (unsorted, repeats) or a range. */
    for (int rep = 0; rep < 24; rep++) {
        for (size_t d = 0; d < m.ndim; d++) {
            if ((rep + d) % 3 == 0) rand_range(&m, d, 1 + rng_below(&rng, 4), &rng, &sel[d]);
            else rand_list(&m, d, &rng, lists[d], &sel[d]);
        }
        sel_counts(m.ndim, sel, count);
        rand_strides(m.ndim, count, 1 + rep % 3, &rng, strides);
        CHECK_CTX("%s in %s: orthogonal %s", c->name, location, sel_desc(m.ndim, sel));
        read_check(a, &m, sel, API_ORTHO, 0, NULL, 0, 0);
        read_check(a, &m, sel, API_ORTHO, 0, strides, 1, 2);
        write_check(a, &m, sel, API_ORTHO, 0, rep % 2 ? strides : NULL, rng_next(&rng));
        read_check(a, &m, sel, API_ORTHO, 0, NULL, 0, 0);
    }

    /* Points: random, some repeated; written ones check out afterwards (last wins). */
    for (int rep = 0; rep < 10; rep++) {
        size_t np = 1 + (size_t)rng_below(&rng, 40);
        uint64_t *coords = malloc(np * m.ndim * sizeof(uint64_t) + 8);
        unsigned char *got = malloc(np * m.itemsize), *want = malloc(np * m.itemsize);
        for (size_t i = 0; i < np; i++) {
            size_t from = i > 0 && rng_below(&rng, 4) == 0 ? (size_t)rng_below(&rng, i) : i;
            for (size_t d = 0; d < m.ndim; d++)
                coords[i * m.ndim + d] = from < i ? coords[from * m.ndim + d] : rng_below(&rng, m.shape[d]);
        }
        CHECK_CTX("%s in %s: %zu points, round %d", c->name, location, np, rep);
        memset(got, GUARD, np * m.itemsize);
        model_points(&m, np, coords, want, 1);
        if (CHECK_OK(zarr_array_read_points(a, m.ndim, np, coords, got, np * m.itemsize)))
            CHECK_ELEMS(m.kind, m.itemsize, got, want, np);
        gen_buffer(m.kind, m.itemsize, rng_next(&rng), want, np);
        if (CHECK_OK(zarr_array_write_points(a, m.ndim, np, coords, want, np * m.itemsize))) {
            model_points(&m, np, coords, want, 0);
            CHECK_ALL(a, &m);
        }
        free(coords);
        free(got);
        free(want);
    }
    CHECK_OK(zarr_array_close(a));
    a = NULL;
    CHECK_OK(zarr_store_close(s));
    s = NULL;

    /* Everything from disk again, through a read-only store. */
    if (strcmp(location, "memory:") != 0) {
        CHECK_CTX("%s in %s: reopened", c->name, location);
        s = open_store(location, ZARR_MODE_READ);
        a = s ? open_array(s, "arr") : NULL;
        if (a) {
            CHECK_ALL(a, &m);
            for (size_t d = 0; d < m.ndim; d++) rand_range(&m, d, 2, &rng, &sel[d]);
            read_check(a, &m, sel, API_STRIDED, 0, NULL, 0, 0);
        }
    }
out:
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    free(m.ref);
}

static void test_cases(void) {
    for (size_t i = 0; i < ARRAY_LEN(CASES); i++) {
        char *dir = tmpdir_make();
        run_case(&CASES[i], "memory:");
        run_case(&CASES[i], dir);
        tmpdir_remove(dir);
    }
    CHECK_CTX_CLEAR();
}

/* ---- hand-computed expectations (independent of the model above) ----------------------------- */

static void test_known_values(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "k", "{\"shape\":[6,8],\"chunks\":[4,3],\"dtype\":\"<i4\","
                                             "\"fill_value\":-1,\"compressor\":" ZLIB "}") : NULL;
    int32_t v[6][8], got[32], img[5][5];
    uint64_t zero[2] = {0, 0}, all[2] = {6, 8};
    uint64_t start[2] = {1, 2}, count[2] = {3, 2}, step[2] = {2, 3}, fstr[2] = {1, 3}, istr[2] = {5, 1};
    if (!a) goto out;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 8; j++) v[i][j] = 100 * i + j;
    CHECK_OK(zarr_array_write(a, 2, zero, all, v, sizeof v));

    /* Rows 1,3,5 x columns 2,5: dense, Fortran order, into a 5x5 image at (1,1). */
    {
        const int32_t dense[6] = {102, 105, 302, 305, 502, 505}, fort[6] = {102, 302, 502, 105, 305, 505};
        memset(got, 0, sizeof got);
        if (CHECK_OK(zarr_array_read_strided(a, 2, start, count, step, NULL, got, 6 * 4)))
            CHECK(memcmp(got, dense, sizeof dense) == 0);
        if (CHECK_OK(zarr_array_read_strided(a, 2, start, count, step, fstr, got, 6 * 4)))
            CHECK(memcmp(got, fort, sizeof fort) == 0);
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++) img[i][j] = -9;
        if (CHECK_OK(zarr_array_read_strided(a, 2, start, count, step, istr, &img[1][1], (5 * 5 - 6) * 4)))
            for (int i = 0; i < 5; i++)
                for (int j = 0; j < 5; j++) {
                    int in = i >= 1 && i <= 3 && j >= 1 && j <= 2;
                    CHECK_CTX("image [%d][%d]", i, j);
                    CHECK_U64_EQ((int64_t)img[i][j], in ? (int64_t)(100 * (2 * i - 1) + (j == 1 ? 2 : 5)) : -9);
                }
        CHECK_CTX_CLEAR();
    }
    /* Rows [5,0,5,2] x columns 1,7 (range step 6). */
    {
        const uint64_t rows[4] = {5, 0, 5, 2};
        const int32_t want[8] = {501, 507, 1, 7, 501, 507, 201, 207};
        zarr_dim_selection sel[2] = {{rows, 4, 0, 0, NULL}, {NULL, 2, 1, 6, NULL}};
        memset(got, 0, sizeof got);
        if (CHECK_OK(zarr_array_read_orthogonal(a, 2, sel, NULL, got, 8 * 4)))
            CHECK(memcmp(got, want, sizeof want) == 0);
    }
    /* Points, with a repeat. */
    {
        const uint64_t pts[8] = {5, 7, 0, 0, 3, 4, 0, 0};
        const int32_t want[4] = {507, 0, 304, 0};
        memset(got, 0, sizeof got);
        if (CHECK_OK(zarr_array_read_points(a, 2, 4, pts, got, 4 * 4))) CHECK(memcmp(got, want, sizeof want) == 0);
    }
    /* Writes with repeats: the last value wins. */
    {
        const uint64_t r[2] = {2, 2}, c2[2] = {0, 0}, pts[4] = {1, 1, 1, 1};
        const int32_t data[4] = {11, 12, 13, 14}, pdata[2] = {10, 20};
        zarr_dim_selection sel[2] = {{r, 2, 0, 0, NULL}, {c2, 2, 0, 0, NULL}};
        uint64_t one[2] = {1, 1}, at20[2] = {2, 0}, at11[2] = {1, 1};
        int32_t x = 0;
        CHECK_OK(zarr_array_write_orthogonal(a, 2, sel, NULL, data, sizeof data));
        if (CHECK_OK(zarr_array_read(a, 2, at20, one, &x, 4))) CHECK_U64_EQ(x, 14);
        CHECK_OK(zarr_array_write_points(a, 2, 2, pts, pdata, sizeof pdata));
        if (CHECK_OK(zarr_array_read(a, 2, at11, one, &x, 4))) CHECK_U64_EQ(x, 20);
        v[2][0] = 14, v[1][1] = 20;
    }
    /* A zero stride broadcasts: rows 4 and 5 both get the same 8 values; a row stride of 0
     * with a column stride of 0 writes one value to a whole strided box. */
    {
        const int32_t row[8] = {-10, -11, -12, -13, -14, -15, -16, -17}, seven = 7;
        uint64_t s45[2] = {4, 0}, c45[2] = {2, 8}, bstr[2] = {0, 1}, zz[2] = {0, 0};
        uint64_t s2[2] = {0, 1}, c2[2] = {2, 3}, st2[2] = {3, 2};
        int32_t back[6][8];
        CHECK_OK(zarr_array_write_strided(a, 2, s45, c45, NULL, bstr, row, sizeof row));
        for (int j = 0; j < 8; j++) v[4][j] = v[5][j] = row[j];
        CHECK_OK(zarr_array_write_strided(a, 2, s2, c2, st2, zz, &seven, sizeof seven));
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) v[3 * i][1 + 2 * j] = 7;
        if (CHECK_OK(zarr_array_read(a, 2, zero, all, back, sizeof back)))
            CHECK(memcmp(back, v, sizeof v) == 0);
    }
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
}

/* Empty selections succeed with a zero-sized buffer and change nothing. */
static void test_empty_selections(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "e", "{\"shape\":[8,9],\"chunks\":[3,4],\"dtype\":\"<i4\","
                                             "\"fill_value\":5}") : NULL;
    uint64_t start[2] = {2, 3}, count[2] = {0, 4}, step[2] = {2, 1}, strides[2] = {10, 1}, coord[2] = {0, 0};
    uint64_t list[1] = {1}, zero[2] = {0, 0}, all[2] = {8, 9};
    zarr_dim_selection sel[2] = {{list, 1, 0, 0, NULL}, {NULL, 0, 0, 1, NULL}};
    int32_t untouched = 0x5a5a5a5a, back[72];
    if (!a) goto out;
    CHECK_OK(zarr_array_read_strided(a, 2, start, count, step, NULL, &untouched, 0));
    CHECK_OK(zarr_array_read_strided(a, 2, start, count, step, strides, &untouched, 0));
    CHECK_OK(zarr_array_write_strided(a, 2, start, count, step, NULL, &untouched, 0));
    CHECK_OK(zarr_array_read_orthogonal(a, 2, sel, NULL, &untouched, 0));
    CHECK_OK(zarr_array_write_orthogonal(a, 2, sel, strides, &untouched, 0));
    CHECK_OK(zarr_array_read_points(a, 2, 0, coord, &untouched, 0));
    CHECK_OK(zarr_array_write_points(a, 2, 0, coord, &untouched, 0));
    CHECK(untouched == 0x5a5a5a5a);
    if (CHECK_OK(zarr_array_read(a, 2, zero, all, back, sizeof back)))
        for (int i = 0; i < 72; i++)
            if (!CHECK(back[i] == 5)) break;
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
}

/* A 0-d array: every point (with no coordinates) is the one element. */
static void test_zero_dim(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "z", "{\"shape\":[],\"chunks\":[],\"dtype\":\"<f8\",\"fill_value\":3.5}") : NULL;
    uint64_t dummy = 0;
    double v[3] = {0, 0, 0}, w = -1.25, w3[3] = {1, 2, 3};
    if (!a) goto out;
    if (CHECK_OK(zarr_array_read_strided(a, 0, &dummy, &dummy, &dummy, &dummy, v, 8))) CHECK(v[0] == 3.5);
    CHECK_OK(zarr_array_write_strided(a, 0, &dummy, &dummy, NULL, NULL, &w, 8));
    if (CHECK_OK(zarr_array_read_points(a, 0, 3, &dummy, v, sizeof v)))
        CHECK(v[0] == -1.25 && v[1] == -1.25 && v[2] == -1.25);
    if (CHECK_OK(zarr_array_write_points(a, 0, 3, &dummy, w3, sizeof w3)) && /* last wins */
        CHECK_OK(zarr_array_read_strided(a, 0, &dummy, &dummy, NULL, NULL, v, 8)))
        CHECK(v[0] == 3);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
}

/* ---- errors ------------------------------------------------------------------------------------ */

#define EROWS 10
#define ECOLS 12

/* The error array is all fill (1) at the start and must stay so. */
static void check_all_fill(zarr_array *a, int line) {
    int32_t back[EROWS * ECOLS];
    uint64_t zero[2] = {0, 0}, all[2] = {EROWS, ECOLS};
    int bad = 0;
    if (!check_status(zarr_array_read(a, 2, zero, all, back, sizeof back), ZARR_OK, ZARR_OK, "read all", __FILE__, line))
        return;
    for (int i = 0; i < EROWS * ECOLS; i++) bad += back[i] != 1;
    check_true(bad == 0, "array still all fill after failed writes", __FILE__, line);
}

static void test_errors(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "a", "{\"shape\":[10,12],\"chunks\":[4,5],\"dtype\":\"<i4\",\"fill_value\":1}") : NULL;
    zarr_array *huge = s ? create_array(s, "huge", "{\"shape\":[1099511627776,1099511627776],"
                                                   "\"chunks\":[1000,1000],\"dtype\":\"<f8\"}") : NULL;
    int32_t buf[256], guard[256], data[256];
    uint64_t start[3] = {0, 0, 0}, count[3] = {2, 3, 1}, step[3] = {1, 1, 1}, strides[3] = {3, 1, 1};
    uint64_t coords[6] = {0, 0, 1, 1, 2, 2};
    uint64_t list[3] = {0, 9, 4};
    zarr_dim_selection sel[3] = {{list, 3, 0, 0, NULL}, {NULL, 3, 0, 1, NULL}, {NULL, 1, 0, 1, NULL}};
    if (!a || !huge) goto out;
    memset(guard, 0x77, sizeof guard);
    memcpy(buf, guard, sizeof buf);
    for (int i = 0; i < 256; i++) data[i] = 1000 + i;

    /* ndim mismatch. */
    CHECK_CTX("ndim mismatch");
    for (size_t nd = 1; nd <= 3; nd += 2) {
        size_t n = nd == 1 ? 2 : 6;
        CHECK_STATUS(zarr_array_read_strided(a, nd, start, count, step, NULL, buf, n * 4), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_write_strided(a, nd, start, count, step, NULL, data, n * 4), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_read_orthogonal(a, nd, sel, NULL, buf, (nd == 1 ? 3 : 9) * 4), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_write_orthogonal(a, nd, sel, NULL, data, (nd == 1 ? 3 : 9) * 4), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_read_points(a, nd, 2, coords, buf, 8), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_write_points(a, nd, 2, coords, data, 8), ZARR_ERR_INVALID_ARGUMENT);
    }
    CHECK_STATUS(zarr_array_read_strided(a, 0, start, count, step, NULL, buf, 4), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_read_points(a, 0, 1, coords, buf, 4), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(memcmp(buf, guard, sizeof buf) == 0);

    /* Step 0 (count 2): strided and as an orthogonal range. */
    CHECK_CTX("step 0");
    {
        uint64_t st0[2] = {1, 0}, c2[2] = {2, 2};
        zarr_dim_selection s0[2] = {{NULL, 2, 0, 1, NULL}, {NULL, 2, 3, 0, NULL}};
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c2, st0, NULL, buf, 16), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_write_strided(a, 2, start, c2, st0, NULL, data, 16), ZARR_ERR_INVALID_ARGUMENT);
        st0[0] = 0, st0[1] = 1;
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c2, st0, NULL, buf, 16), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_read_orthogonal(a, 2, s0, NULL, buf, 16), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_array_write_orthogonal(a, 2, s0, NULL, data, 16), ZARR_ERR_INVALID_ARGUMENT);
        CHECK(memcmp(buf, guard, sizeof buf) == 0);
    }

    /* Out of bounds: the last index of a stepped range, a list index, a point coordinate. */
    CHECK_CTX("out of bounds");
    {
        static const struct { uint64_t start[2], count[2], step[2]; int ok; } cases[] = {
            {{0, 0}, {4, 1}, {3, 1}, 1},            /* rows 0,3,6,9: the last row exactly */
            {{1, 0}, {4, 1}, {3, 1}, 0},            /* rows 1..10 */
            {{0, 0}, {1, 3}, {1, 5}, 1},            /* columns 0,5,10 */
            {{0, 1}, {1, 3}, {1, 5}, 1},            /* columns 1,6,11: the last column exactly */
            {{0, 2}, {1, 3}, {1, 5}, 0},            /* columns 2,7,12 */
            {{10, 0}, {1, 1}, {1, 1}, 0},
            {{0, 12}, {1, 1}, {1, 1}, 0},
            {{9, 0}, {2, 1}, {1, 1}, 0},
            {{0, 0}, {2, 1}, {UINT64_MAX, 1}, 0},   /* (count-1)*step overflows */
            {{5, 0}, {2, 1}, {UINT64_MAX - 4, 1}, 0},
            {{UINT64_MAX, 0}, {1, 1}, {1, 1}, 0},
        };
        for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
            size_t n = (size_t)(cases[i].count[0] * cases[i].count[1]);
            CHECK_CTX("out of bounds case %zu", i);
            if (cases[i].ok) {
                CHECK_OK(zarr_array_read_strided(a, 2, cases[i].start, cases[i].count, cases[i].step, NULL, buf, n * 4));
                memcpy(buf, guard, sizeof buf);
                continue;
            }
            CHECK_STATUS2(zarr_array_read_strided(a, 2, cases[i].start, cases[i].count, cases[i].step, NULL, buf, n * 4),
                          ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OVERFLOW);
            CHECK_STATUS2(zarr_array_write_strided(a, 2, cases[i].start, cases[i].count, cases[i].step, NULL, data, n * 4),
                          ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OVERFLOW);
            {
                zarr_dim_selection r[2] = {{NULL, cases[i].count[0], cases[i].start[0], cases[i].step[0], NULL},
                                           {NULL, cases[i].count[1], cases[i].start[1], cases[i].step[1], NULL}};
                CHECK_STATUS2(zarr_array_read_orthogonal(a, 2, r, NULL, buf, n * 4), ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OVERFLOW);
                CHECK_STATUS2(zarr_array_write_orthogonal(a, 2, r, NULL, data, n * 4), ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_OVERFLOW);
            }
            CHECK(memcmp(buf, guard, sizeof buf) == 0);
        }
        CHECK_CTX("out of bounds: lists and points");
        {
            /* Rows have 10 indices and columns 12: {0,10,1} and {10,10,10} are bad only as
             * rows, the one with UINT64_MAX is bad along both. */
            const uint64_t lists3[][3] = {{0, 10, 1}, {3, 2, UINT64_MAX}, {10, 10, 10}};
            const int col_ok[] = {1, 0, 1};
            const uint64_t bad_points[][6] = {{0, 0, 1, 1, 9, 12}, {10, 0, 0, 0, 0, 0}, {0, 0, 0, UINT64_MAX, 0, 0}};
            for (size_t i = 0; i < 3; i++) {
                zarr_dim_selection as_cols[2] = {{NULL, 2, 0, 1, NULL}, {lists3[i], 3, 0, 0, NULL}};
                zarr_dim_selection as_rows[2] = {{lists3[i], 3, 0, 0, NULL}, {NULL, 2, 0, 1, NULL}};
                CHECK_CTX("out of bounds: list %zu", i);
                if (col_ok[i]) {
                    CHECK_OK(zarr_array_read_orthogonal(a, 2, as_cols, NULL, buf, 6 * 4));
                    memcpy(buf, guard, sizeof buf);
                } else {
                    CHECK_STATUS(zarr_array_read_orthogonal(a, 2, as_cols, NULL, buf, 6 * 4), ZARR_ERR_OUT_OF_BOUNDS);
                    CHECK_STATUS(zarr_array_write_orthogonal(a, 2, as_cols, NULL, data, 6 * 4), ZARR_ERR_OUT_OF_BOUNDS);
                }
                CHECK_STATUS(zarr_array_read_orthogonal(a, 2, as_rows, NULL, buf, 6 * 4), ZARR_ERR_OUT_OF_BOUNDS);
                CHECK_STATUS(zarr_array_write_orthogonal(a, 2, as_rows, NULL, data, 6 * 4), ZARR_ERR_OUT_OF_BOUNDS);
                CHECK_STATUS(zarr_array_read_points(a, 2, 3, bad_points[i], buf, 3 * 4), ZARR_ERR_OUT_OF_BOUNDS);
                CHECK_STATUS(zarr_array_write_points(a, 2, 3, bad_points[i], data, 3 * 4), ZARR_ERR_OUT_OF_BOUNDS);
                CHECK(memcmp(buf, guard, sizeof buf) == 0);
            }
        }
    }
    check_all_fill(a, __LINE__);

    /* Buffer sizes. Without strides: exactly product(count) * itemsize. With strides: the
     * span of the elements must fit (more is fine). */
    CHECK_CTX("buffer size");
    {
        uint64_t c34[2] = {3, 4}, pitch[2] = {12, 1}, fstr[2] = {1, 3};
        zarr_dim_selection o[2] = {{list, 3, 0, 0, NULL}, {NULL, 4, 1, 2, NULL}};
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c34, NULL, NULL, buf, 11 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c34, NULL, NULL, buf, 13 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c34, NULL, NULL, buf, 12 * 4 - 1), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_write_strided(a, 2, start, c34, NULL, NULL, data, 13 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_write_strided(a, 2, start, c34, NULL, NULL, data, 11 * 4), ZARR_ERR_BUFFER_SIZE);
        /* Row pitch 12: the span is 2*12 + 4 = 28 elements. */
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c34, NULL, pitch, buf, 27 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c34, NULL, pitch, buf, 28 * 4 - 1), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c34, NULL, pitch, buf, 12 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_write_strided(a, 2, start, c34, NULL, pitch, data, 27 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_orthogonal(a, 2, o, pitch, buf, 27 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_write_orthogonal(a, 2, o, pitch, data, 27 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_orthogonal(a, 2, o, NULL, buf, 13 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_write_orthogonal(a, 2, o, NULL, data, 11 * 4), ZARR_ERR_BUFFER_SIZE);
        /* Fortran order {1,3}: the span is 2 + 3*3 + 1 = 12 elements. */
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c34, NULL, fstr, buf, 11 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_points(a, 2, 3, coords, buf, 2 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_points(a, 2, 3, coords, buf, 4 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_points(a, 2, 3, coords, buf, 3 * 4 + 1), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_write_points(a, 2, 3, coords, data, 2 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_write_points(a, 2, 3, coords, data, 4 * 4), ZARR_ERR_BUFFER_SIZE);
        CHECK(memcmp(buf, guard, sizeof buf) == 0);
        /* The exact spans and larger buffers are accepted. */
        CHECK_OK(zarr_array_read_strided(a, 2, start, c34, NULL, pitch, buf, 28 * 4));
        CHECK_OK(zarr_array_read_strided(a, 2, start, c34, NULL, pitch, buf, 100 * 4));
        CHECK_OK(zarr_array_read_strided(a, 2, start, c34, NULL, fstr, buf, 12 * 4));
        CHECK_OK(zarr_array_read_orthogonal(a, 2, o, pitch, buf, 28 * 4));
        memcpy(buf, guard, sizeof buf);
    }

    /* Read buffer layouts in which two elements share a slot; writes may repeat slots. */
    CHECK_CTX("overlapping read strides");
    {
        static const struct { uint64_t count[2], strides[2]; int overlap; } cases[] = {
            {{2, 3}, {0, 1}, 1}, /* stride 0 with count > 1 */
            {{3, 1}, {1, 0}, 0}, /* stride 0 where count is 1: no overlap */
            {{1, 4}, {0, 1}, 0},
            {{2, 3}, {1, 0}, 1},
            {{2, 2}, {1, 1}, 1}, /* (0,1) and (1,0) both at 1 */
            {{2, 4}, {3, 1}, 1}, /* (0,3) and (1,0) both at 3 */
            {{2, 3}, {2, 1}, 1}, /* (0,2) and (1,0) */
            {{2, 3}, {1, 2}, 0}, /* Fortran order */
            {{2, 2}, {3, 2}, 0}, /* 0,2,3,5: interleaved but disjoint */
            {{3, 2}, {1, 3}, 0},
        };
        for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
            size_t span = (size_t)buf_extent(2, cases[i].count, cases[i].strides);
            zarr_dim_selection o[2] = {{list, cases[i].count[0], 0, 0, NULL}, {NULL, cases[i].count[1], 2, 3, NULL}};
            CHECK_CTX("overlap case %zu: count {%llu,%llu} strides {%llu,%llu}", i,
                      (unsigned long long)cases[i].count[0], (unsigned long long)cases[i].count[1],
                      (unsigned long long)cases[i].strides[0], (unsigned long long)cases[i].strides[1]);
            if (cases[i].overlap) {
                CHECK_STATUS(zarr_array_read_strided(a, 2, start, cases[i].count, NULL, cases[i].strides, buf, span * 4),
                             ZARR_ERR_INVALID_ARGUMENT);
                CHECK_STATUS(zarr_array_read_orthogonal(a, 2, o, cases[i].strides, buf, span * 4), ZARR_ERR_INVALID_ARGUMENT);
                CHECK(memcmp(buf, guard, sizeof buf) == 0);
                /* The same layout is fine as the source of a write (of the fill value, so
                 * that the array stays all fill). */
                {
                    int32_t ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
                    CHECK_OK(zarr_array_write_strided(a, 2, start, cases[i].count, NULL, cases[i].strides, ones, span * 4));
                    CHECK_OK(zarr_array_write_orthogonal(a, 2, o, cases[i].strides, ones, span * 4));
                }
            } else {
                CHECK_OK(zarr_array_read_strided(a, 2, start, cases[i].count, NULL, cases[i].strides, buf, span * 4));
                CHECK_OK(zarr_array_read_orthogonal(a, 2, o, cases[i].strides, buf, span * 4));
                memcpy(buf, guard, sizeof buf);
            }
        }
    }

    /* NULL pointers (a NULL step or buffer_strides means the default, and a NULL indices a
     * range: those are not errors). */
    CHECK_CTX("NULL pointers");
    {
        uint64_t c[2] = {2, 3};
        CHECK_STATUS(zarr_array_read_strided(NULL, 2, start, c, step, NULL, buf, 24), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_read_strided(a, 2, NULL, c, step, NULL, buf, 24), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, NULL, step, NULL, buf, 24), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_read_strided(a, 2, start, c, step, NULL, NULL, 24), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_strided(NULL, 2, start, c, step, NULL, data, 24), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_strided(a, 2, NULL, c, step, NULL, data, 24), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_strided(a, 2, start, NULL, step, NULL, data, 24), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_strided(a, 2, start, c, step, NULL, NULL, 24), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_read_orthogonal(NULL, 2, sel, NULL, buf, 36), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_read_orthogonal(a, 2, NULL, NULL, buf, 36), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_read_orthogonal(a, 2, sel, NULL, NULL, 36), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_orthogonal(NULL, 2, sel, NULL, data, 36), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_orthogonal(a, 2, NULL, NULL, data, 36), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_orthogonal(a, 2, sel, NULL, NULL, 36), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_read_points(NULL, 2, 3, coords, buf, 12), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_read_points(a, 2, 3, NULL, buf, 12), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_read_points(a, 2, 3, coords, NULL, 12), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_points(NULL, 2, 3, coords, data, 12), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_points(a, 2, 3, NULL, data, 12), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_write_points(a, 2, 3, coords, NULL, 12), ZARR_ERR_NULL_POINTER);
        CHECK(memcmp(buf, guard, sizeof buf) == 0);
        /* The defaults. */
        CHECK_OK(zarr_array_read_strided(a, 2, start, c, NULL, NULL, buf, 24));
        CHECK_OK(zarr_array_read_strided(a, 2, start, c, NULL, strides, buf, 24));
        CHECK_OK(zarr_array_read_orthogonal(a, 2, sel, NULL, buf, 36));
        memcpy(buf, guard, sizeof buf);
    }

    /* Sizes that overflow. */
    CHECK_CTX("overflow");
    {
        uint64_t big[2] = {1ull << 40, 1ull << 40}, c2[2] = {3, 1}, wide[2] = {UINT64_MAX / 2, 1};
        zarr_dim_selection hs[2] = {{NULL, 1ull << 40, 0, 1, NULL}, {NULL, 1ull << 40, 0, 1, NULL}};
        size_t np = SIZE_MAX / 2 + 1; /* np * 2 coordinates and np * 4 bytes wrap to 0 */
        CHECK_STATUS(zarr_array_read_strided(huge, 2, start, big, NULL, NULL, buf, 8), ZARR_ERR_OVERFLOW);
        CHECK_STATUS(zarr_array_write_strided(huge, 2, start, big, NULL, NULL, data, 8), ZARR_ERR_OVERFLOW);
        CHECK_STATUS(zarr_array_read_orthogonal(huge, 2, hs, NULL, buf, 8), ZARR_ERR_OVERFLOW);
        CHECK_STATUS2(zarr_array_read_strided(a, 2, start, c2, NULL, wide, buf, 8), ZARR_ERR_OVERFLOW, ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS2(zarr_array_write_strided(a, 2, start, c2, NULL, wide, data, 8), ZARR_ERR_OVERFLOW, ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_read_points(a, 2, np, coords, buf, 0), ZARR_ERR_OVERFLOW);
        CHECK_STATUS(zarr_array_write_points(a, 2, np, coords, data, 0), ZARR_ERR_OVERFLOW);
        CHECK_STATUS(zarr_array_read_points(a, 2, np, coords, buf, 8), ZARR_ERR_OVERFLOW);
        np = SIZE_MAX / 2 + 2; /* np * 2 wraps to 2 coordinates, np * 4 to 4 bytes: one point */
        CHECK_STATUS(zarr_array_read_points(a, 2, np, coords, buf, 4), ZARR_ERR_OVERFLOW);
        CHECK_STATUS(zarr_array_write_points(a, 2, np, coords, data, 4), ZARR_ERR_OVERFLOW);
        CHECK(memcmp(buf, guard, sizeof buf) == 0);
    }
    CHECK_CTX_CLEAR();
    check_all_fill(a, __LINE__);
    CHECK_OK(zarr_array_close(huge));
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
}

/* Writes through a read-only store fail with ZARR_ERR_READ_ONLY and change nothing. */
static void test_read_only(void) {
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "r", "{\"shape\":[10,12],\"chunks\":[4,5],\"dtype\":\"<i4\",\"fill_value\":1}") : NULL;
    uint64_t start[2] = {1, 2}, count[2] = {3, 4}, step[2] = {2, 3}, coords[4] = {0, 0, 9, 11}, list[2] = {3, 3};
    zarr_dim_selection sel[2] = {{list, 2, 0, 0, NULL}, {NULL, 2, 0, 6, NULL}};
    int32_t data[12] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, buf[12];
    long files;
    if (!a) goto out;
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    files = count_files(dir);
    s = open_store(dir, ZARR_MODE_READ);
    a = s ? open_array(s, "r") : NULL;
    if (!a) goto out;
    CHECK_STATUS(zarr_array_write_strided(a, 2, start, count, step, NULL, data, sizeof data), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_write_strided(a, 2, start, count, NULL, NULL, data, sizeof data), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_write_orthogonal(a, 2, sel, NULL, data, 4 * 4), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_write_points(a, 2, 2, coords, data, 2 * 4), ZARR_ERR_READ_ONLY);
    CHECK_U64_EQ(count_files(dir), files);
    /* Reads still work and see only the fill value. */
    if (CHECK_OK(zarr_array_read_strided(a, 2, start, count, step, NULL, buf, sizeof buf)))
        for (int i = 0; i < 12; i++) CHECK(buf[i] == 1);
    if (CHECK_OK(zarr_array_read_points(a, 2, 2, coords, buf, 8))) CHECK(buf[0] == 1 && buf[1] == 1);
out:
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* Masks, Boolean flags in orthogonal selections, and blocks, on a 5x4 array of 0..19 in chunks of
 * 2x3 (edge chunks in both dimensions). */
static void test_masks_flags_blocks(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "m", "{\"shape\":[5,4],\"chunks\":[2,3],\"dtype\":\"<i2\"}") : NULL;
    int16_t v[20], out[20];
    uint64_t start[2] = {0, 0}, count[2] = {5, 4};
    if (!a) return;
    for (int i = 0; i < 20; i++) v[i] = (int16_t)i;
    CHECK_OK(zarr_array_write(a, 2, start, count, v, sizeof v));
    /* A mask: the selected elements in C order. */
    uint8_t mask[20] = {0};
    mask[1] = mask[6] = mask[7] = 1;
    mask[19] = 9; /* any nonzero byte selects */
    CHECK_OK(zarr_array_read_mask(a, mask, sizeof mask, out, 4 * sizeof(int16_t)));
    CHECK(out[0] == 1 && out[1] == 6 && out[2] == 7 && out[3] == 19);
    CHECK_STATUS(zarr_array_read_mask(a, mask, 19, out, 8), ZARR_ERR_BUFFER_SIZE);
    CHECK_CONTAINS(zarr_last_error(), "19 entries");
    CHECK_STATUS(zarr_array_read_mask(a, mask, sizeof mask, out, 6), ZARR_ERR_BUFFER_SIZE);
    int16_t w[4] = {-1, -6, -7, -19};
    CHECK_OK(zarr_array_write_mask(a, mask, sizeof mask, w, sizeof w));
    CHECK_OK(zarr_array_read(a, 2, start, count, out, sizeof out));
    CHECK(out[0] == 0 && out[1] == -1 && out[6] == -6 && out[7] == -7 && out[8] == 8 && out[19] == -19);
    /* Flags: rows 0 and 3, columns by a range. */
    uint8_t rows[5] = {1, 0, 0, 1, 0};
    zarr_dim_selection sel[2] = {{NULL, 5, 0, 0, rows}, {NULL, 2, 1, 2, NULL}};
    CHECK_OK(zarr_array_read_orthogonal(a, 2, sel, NULL, out, 4 * sizeof(int16_t)));
    CHECK(out[0] == -1 && out[1] == 3 && out[2] == 13 && out[3] == 15);
    sel[0].count = 4; /* not the dimension's length */
    CHECK_STATUS(zarr_array_read_orthogonal(a, 2, sel, NULL, out, sizeof out), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "dimension 0");
    uint64_t idx[1] = {0};
    sel[0] = (zarr_dim_selection){idx, 5, 0, 0, rows}; /* both */
    CHECK_STATUS(zarr_array_read_orthogonal(a, 2, sel, NULL, out, sizeof out), ZARR_ERR_INVALID_ARGUMENT);
    /* Blocks: chunk row 2 (row 4 only), both chunk columns; then an empty block range. */
    uint64_t bstart[2] = {2, 0}, bcount[2] = {1, 2}, bs[2], bc[2];
    CHECK_OK(zarr_array_block_box(a, 2, bstart, bcount, bs, bc));
    CHECK(bs[0] == 4 && bs[1] == 0 && bc[0] == 1 && bc[1] == 4);
    bstart[1] = 2;
    bcount[1] = 0;
    CHECK_OK(zarr_array_block_box(a, 2, bstart, bcount, bs, bc));
    CHECK(bs[1] == 4 && bc[1] == 0);
    bcount[0] = 2;
    CHECK_STATUS(zarr_array_block_box(a, 2, bstart, bcount, bs, bc), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
}

/* ---- object arrays and fields through one descriptor (zarr_selection) -------------------- */

/* A 4 x 3 vlen-utf8 array in chunks of 2 x 2 whose element (i, j) holds "i,j" repeated i + 1 times. */
static zarr_array *make_text(zarr_store *s) {
    zarr_array *a = create_array(s, "t", "{\"shape\": [4, 3], \"chunks\": [2, 2], \"dtype\": \"|O\", "
                                         "\"filters\": [{\"id\": \"vlen-utf8\"}], \"fill_value\": \"\", "
                                         "\"compressor\": {\"id\": \"zstd\", \"level\": 1}}");
    if (!a) return NULL;
    int64_t offsets[13];
    char data[256];
    offsets[0] = 0;
    for (int k = 0; k < 12; k++) {
        int len = 0;
        for (int r = 0; r <= k / 3; r++) len += snprintf(data + offsets[k] + len, 8, "%d,%d", k / 3, k % 3);
        offsets[k + 1] = offsets[k] + len;
    }
    uint64_t start[2] = {0, 0}, count[2] = {4, 3};
    CHECK_OK(zarr_array_write_vlen(a, 2, start, count, offsets, 13, data, (size_t)offsets[12]));
    return a;
}

/* Reads `sel` and checks item k is "i,j" (repeated i + 1 times) for (i, j) = want[k]. */
static void expect(zarr_array *a, const zarr_selection *sel, const int (*want)[2], size_t n) {
    size_t items = 0, bytes = 0;
    if (!CHECK_OK(zarr_array_selection_size(a, sel, &items, &bytes))) return;
    CHECK_U64_EQ(items, n);
    int64_t offsets[32];
    char *data = malloc(bytes + 1);
    if (items == n && CHECK_OK(zarr_array_read_vlen_selection(a, sel, offsets, n + 1, data, bytes))) {
        for (size_t k = 0; k < n; k++) {
            char item[64];
            int len = 0;
            for (int r = 0; r <= want[k][0]; r++) len += snprintf(item + len, 8, "%d,%d", want[k][0], want[k][1]);
            CHECK_CTX("item %zu", k);
            CHECK(offsets[k + 1] - offsets[k] == len && memcmp(data + offsets[k], item, (size_t)len) == 0);
        }
        CHECK_CTX_CLEAR();
    }
    free(data);
}

/* Every selection kind on a text array, a write through points read back through a mask, and
 * the descriptor's errors. */
static void test_text_kinds(const char *dir) {
    zarr_store *s = open_store(strf("%s/text", dir), ZARR_MODE_WRITE);
    zarr_array *a = make_text(s);
    if (!a) { zarr_store_close(s); return; }
    uint64_t start[2] = {1, 0}, count[2] = {2, 2}, step[2] = {2, 2};
    zarr_selection box = {.kind = ZARR_SELECT_BOX, .ndim = 2, .start = start, .count = count, .step = step};
    const int box_want[][2] = {{1, 0}, {1, 2}, {3, 0}, {3, 2}};
    expect(a, &box, box_want, 4);

    uint64_t rows[3] = {3, 0, 3};
    uint8_t flags[3] = {0, 1, 1};
    zarr_dim_selection dims[2] = {{.indices = rows, .count = 3}, {.flags = flags, .count = 3}};
    zarr_selection orth = {.kind = ZARR_SELECT_ORTHOGONAL, .ndim = 2, .dims = dims};
    const int orth_want[][2] = {{3, 1}, {3, 2}, {0, 1}, {0, 2}, {3, 1}, {3, 2}};
    expect(a, &orth, orth_want, 6);

    uint64_t coords[] = {2, 2, 0, 0, 2, 2, 3, 1};
    zarr_selection points = {.kind = ZARR_SELECT_POINTS, .ndim = 2, .npoints = 4, .coords = coords};
    const int point_want[][2] = {{2, 2}, {0, 0}, {2, 2}, {3, 1}};
    expect(a, &points, point_want, 4);

    uint8_t mask[12] = {0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0};
    zarr_selection m = {.kind = ZARR_SELECT_MASK, .mask = mask, .mask_size = 12};
    const int mask_want[][2] = {{0, 2}, {1, 0}, {3, 1}};
    expect(a, &m, mask_want, 3);

    uint64_t bstart[2] = {1, 1}, bcount[2] = {1, 1};
    zarr_selection blocks = {.kind = ZARR_SELECT_BLOCKS, .ndim = 2, .start = bstart, .count = bcount};
    const int block_want[][2] = {{2, 2}, {3, 2}};
    expect(a, &blocks, block_want, 2);

    /* Write through points (the last of a repeated point wins), read back through a mask. */
    uint64_t wcoords[] = {1, 1, 3, 2, 1, 1};
    zarr_selection wpoints = {.kind = ZARR_SELECT_POINTS, .ndim = 2, .npoints = 3, .coords = wcoords};
    int64_t woff[4] = {0, 1, 3, 6};
    CHECK_OK(zarr_array_write_vlen_selection(a, &wpoints, woff, 4, "abcdef", 6));
    uint8_t wmask[12] = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    zarr_selection wm = {.kind = ZARR_SELECT_MASK, .mask = wmask, .mask_size = 12};
    int64_t off[3];
    char got[8];
    if (CHECK_OK(zarr_array_read_vlen_selection(a, &wm, off, 3, got, sizeof got)))
        CHECK(off[1] == 3 && off[2] == 5 && memcmp(got, "defbc", 5) == 0);

    /* Errors: an unknown kind, a wrong ndim, a point outside, a short offsets buffer, a fixed-size call. */
    zarr_selection bad = {.kind = 7, .ndim = 2};
    CHECK_STATUS(zarr_array_selection_size(a, &bad, NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(zarr_last_error(), "selection kind 7");
    zarr_selection wrong = {.kind = ZARR_SELECT_POINTS, .ndim = 1, .npoints = 1, .coords = coords};
    CHECK_STATUS(zarr_array_selection_size(a, &wrong, NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    uint64_t outside[] = {4, 0};
    zarr_selection out = {.kind = ZARR_SELECT_POINTS, .ndim = 2, .npoints = 1, .coords = outside};
    CHECK_STATUS(zarr_array_read_vlen_selection(a, &out, off, 2, got, sizeof got), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_STATUS(zarr_array_read_vlen_selection(a, &points, off, 3, got, sizeof got), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_selection_size(a, NULL, NULL, NULL), ZARR_ERR_NULL_POINTER);
    const char *names[] = {"x"};
    CHECK_STATUS(zarr_array_read_fields_selection(a, &points, names, 1, got, sizeof got), ZARR_ERR_INVALID_ARGUMENT);
    zarr_array_close(a);
    zarr_store_close(s);
}

/* Fields of a structured array through points and orthogonal flags, both ways. */
static void test_fields(const char *dir) {
    zarr_store *s = open_store(strf("%s/rec", dir), ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "r", "{\"shape\": [5], \"chunks\": [2], "
                                         "\"dtype\": [[\"a\", \"<i4\"], [\"b\", \">f8\"], [\"c\", \"|S2\"]]}");
    if (!a) { zarr_store_close(s); return; }
    struct __attribute__((packed)) { double b; int32_t a; } in[3] = {{1.5, 10}, {2.5, 20}, {3.5, 30}}, outr[5];
    const char *names[] = {"b", "a"};
    uint64_t coords[] = {4, 0, 2};
    zarr_selection points = {.kind = ZARR_SELECT_POINTS, .ndim = 1, .npoints = 3, .coords = coords};
    CHECK_OK(zarr_array_write_fields_selection(a, &points, names, 2, in, sizeof in));
    size_t items = 0, bytes = 0;
    CHECK_OK(zarr_array_selection_size(a, &points, &items, &bytes));
    CHECK(items == 3 && bytes == 3 * 14);
    uint8_t flags[5] = {1, 1, 1, 0, 1};
    zarr_dim_selection dim = {.flags = flags, .count = 5};
    zarr_selection orth = {.kind = ZARR_SELECT_ORTHOGONAL, .ndim = 1, .dims = &dim};
    if (CHECK_OK(zarr_array_read_fields_selection(a, &orth, names, 2, outr, 4 * 12))) {
        CHECK(outr[0].a == 20 && outr[0].b == 2.5 && outr[1].a == 0 && outr[2].a == 30 && outr[3].a == 10);
        CHECK(outr[3].b == 1.5);
    }
    CHECK_STATUS(zarr_array_read_fields_selection(a, &orth, names, 2, outr, 5 * 12), ZARR_ERR_BUFFER_SIZE);
    zarr_array_close(a);
    zarr_store_close(s);
}

static void test_selection_objects(void) {
    char *dir = tmpdir_make();
    test_text_kinds(dir);
    test_fields(dir);
    tmpdir_remove(dir);
}

int main(void) {
    test_known_values();
    test_empty_selections();
    test_zero_dim();
    test_errors();
    test_read_only();
    test_cases();
    test_masks_flags_blocks();
    test_selection_objects();
    return check_summary("test_selections");
}
