/* test_dtypes.c - every data type of the contract. Numbers (bool, integers, floats, complex) in
 * both byte orders: dtype inspection, fill values (NaN, infinities, negatives, null), round trips
 * and the stored bytes (the caller always sees native values; the chunk holds the declared byte
 * order). The types beyond numbers: fixed-length bytes (|S), UTF-32 text (<U, >U), raw bytes (|V),
 * datetime64/timedelta64 with units and NaT, and structured records (nested, with sub-array
 * fields, mixed byte order); field selection (read_fields/write_fields); the UTF-8/UTF-32
 * helpers; and the error paths of all of these.
 *
 * Expected values are computed here, in C: the stored bytes in each declared byte order, the
 * base64 fill values of stored records, the native record layout at the offsets the library
 * reports, and the .zarray members in zarr-python's form. */
#include "testutil.h"

/* ---- byte order, base64, JSON ------------------------------------------------------------ */

static int host_is_big(void) {
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 0;
}

/* Copies n bytes of a native scalar to dst in the given byte order (big: 1, little: 0). */
static void put_order(unsigned char *dst, const void *native, size_t n, int big) {
    const unsigned char *s = native;
    for (size_t i = 0; i < n; i++) dst[i] = s[big == host_is_big() ? i : n - 1 - i];
}

/* Converts n native bytes to stored order, `unit` bytes at a time (unit <= 1: plain copy). */
static void to_order(unsigned char *dst, const unsigned char *native, size_t n, size_t unit, int big) {
    if (unit <= 1) {
        memcpy(dst, native, n);
        return;
    }
    for (size_t off = 0; off < n; off += unit) put_order(dst + off, native + off, unit, big);
}

/* Standard base64 with padding, as zarr-python writes fill values; out needs 4*ceil(n/3)+1. */
static void base64_encode(const unsigned char *in, size_t n, char *out) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
    }
    out[o] = 0;
}

struct sbuf {
    char *p;
    size_t len, cap;
};

static void sb_put(struct sbuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = 2 * (b->len + n + 1);
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void canon_string(const char **pp, struct sbuf *out) {
    const char *p = *pp, *s = p++;
    while (*p && *p != '"') p += (*p == '\\' && p[1]) ? 2 : 1;
    if (*p) p++;
    sb_put(out, s, (size_t)(p - s));
    *pp = p;
}

/* Appends the canonical form of the (squashed) JSON value at *pp: objects get their keys
 * sorted, recursively. Malformed text is copied through without looping forever. */
static void canon_value(const char **pp, struct sbuf *out) {
    const char *p = *pp;
    if (*p == '{' || *p == '[') {
        int obj = *p == '{';
        char close = obj ? '}' : ']';
        char **items = NULL;
        size_t n = 0;
        p++;
        while (*p && *p != close) {
            struct sbuf item = {0};
            sb_put(&item, "", 0);
            if (obj) {
                canon_string(&p, &item);
                if (*p == ':') sb_put(&item, ":", 1), p++;
            }
            canon_value(&p, &item);
            items = realloc(items, (n + 1) * sizeof *items);
            items[n++] = item.p;
            if (*p == ',') p++;
            else if (*p != close) break;
        }
        if (*p == close) p++;
        if (obj && n) qsort(items, n, sizeof *items, cmp_str_ptrs);
        sb_put(out, obj ? "{" : "[", 1);
        for (size_t i = 0; i < n; i++) {
            if (i) sb_put(out, ",", 1);
            sb_put(out, items[i], strlen(items[i]));
            free(items[i]);
        }
        sb_put(out, &close, 1);
        free(items);
    } else if (*p == '"') {
        canon_string(&p, out);
    } else {
        const char *s = p;
        while (*p && *p != ',' && *p != ']' && *p != '}') p++;
        sb_put(out, s, (size_t)(p - s));
    }
    *pp = p;
}

/* Whitespace-free copy of json with object keys sorted at every level (malloc'd). */
static char *json_canon(const char *json) {
    char *sq = json_squash(json);
    const char *p = sq;
    struct sbuf out = {0};
    sb_put(&out, "", 0);
    canon_value(&p, &out);
    if (*p) sb_put(&out, p, strlen(p)); /* trailing garbage stays visible */
    free(sq);
    return out.p;
}

/* Same JSON value up to whitespace and key order (at any depth). */
static int check_json_canon_eq(const char *got, const char *want, const char *expr, const char *file,
                               int line) {
    char *cg, *cw;
    int ok;
    check_total++;
    if (!got) return check_fail_at(file, line, "%s is NULL", expr);
    cg = json_canon(got);
    cw = json_canon(want);
    ok = strcmp(cg, cw) == 0;
    if (!ok) check_fail_at(file, line, "%s: got %s, expected %s", expr, cg, cw);
    free(cg);
    free(cw);
    return ok;
}
#define CHECK_JSON_CANON_EQ(got, want) check_json_canon_eq((got), (want), #got, __FILE__, __LINE__)

/* The JSON object `json` has the member `key` whose value is `value` (or `alt`, another
 * accepted spelling, unless NULL), compared canonically. */
static int check_member(const char *json, const char *key, const char *value, const char *alt,
                        const char *file, int line) {
    char *cj, *cv, *ca, *frag;
    int ok = 0;
    check_total++;
    if (!json) return check_fail_at(file, line, "JSON is NULL (looking for member %s)", key);
    cj = json_canon(json);
    cv = json_canon(value);
    ca = alt ? json_canon(alt) : NULL;
    frag = malloc(strlen(key) + strlen(cv) + (ca ? strlen(ca) : 0) + 8);
    for (int i = 0; i < (ca ? 2 : 1) && !ok; i++) {
        const char *hit;
        sprintf(frag, "\"%s\":%s", key, i ? ca : cv);
        for (hit = strstr(cj, frag); hit && !ok; hit = strstr(hit + 1, frag))
            ok = hit > cj && (hit[-1] == '{' || hit[-1] == ',') &&
                 (hit[strlen(frag)] == ',' || hit[strlen(frag)] == '}');
    }
    if (!ok)
        check_fail_at(file, line, "JSON %s lacks member \"%s\":%s%s%s", cj, key, cv, ca ? " (or " : "",
                      ca ? ca : "");
    free(cj), free(cv), free(ca), free(frag);
    return ok;
}
#define CHECK_MEMBER(json, key, value) check_member((json), (key), (value), NULL, __FILE__, __LINE__)
#define CHECK_MEMBER2(json, key, value, alt) check_member((json), (key), (value), (alt), __FILE__, __LINE__)

/* n elements of `size` bytes are equal; reports the first differing element and its bytes. */
static int check_bytes_at(const void *got, const void *want, size_t n, size_t size, const char *expr,
                          const char *file, int line) {
    const unsigned char *g = got, *w = want;
    check_total++;
    for (size_t i = 0; i < n * size; i++)
        if (g[i] != w[i]) {
            size_t e = i / size, show = size < 48 ? size : 48;
            char hg[2 * 48 + 1], hw[2 * 48 + 1];
            hex_elem(hg, g + e * size, show);
            hex_elem(hw, w + e * size, show);
            return check_fail_at(file, line, "%s: element %zu (of %zu) differs at byte %zu: got %s, want %s",
                                 expr, e, n, i % size, hg, hw);
        }
    return 1;
}
#define CHECK_BYTES(got, want, n, size) check_bytes_at((got), (want), (n), (size), #got, __FILE__, __LINE__)

/* The .zarray of dir/path as text (malloc'd) or NULL. */
static char *read_zarray(const char *dir, const char *path) {
    return (char *)file_read(strf("%s/%s/.zarray", dir, path), NULL);
}

/* ---- numbers: bool, integers, floats, complex -------------------------------------------- */

struct dtype_case {
    const char *typestr;
    zarr_dtype_kind kind;
    size_t itemsize;
    const char *fill_json; /* NULL: leave fill_value out (default 0 / false) */
    double fill, fill_imag; /* fill_imag: complex only */
};

static const struct dtype_case DTYPES[] = {
    {"|b1", ZARR_DTYPE_BOOL, 1, NULL, 0, 0},
    {"|b1", ZARR_DTYPE_BOOL, 1, "true", 1, 0},
    {"|i1", ZARR_DTYPE_INT, 1, "-128", -128, 0},
    {"<i2", ZARR_DTYPE_INT, 2, "-7", -7, 0},
    {">i2", ZARR_DTYPE_INT, 2, "-300", -300, 0},
    {"<i4", ZARR_DTYPE_INT, 4, NULL, 0, 0},
    {">i4", ZARR_DTYPE_INT, 4, "-2147483648", -2147483648.0, 0},
    {"<i8", ZARR_DTYPE_INT, 8, "-1", -1, 0},
    {">i8", ZARR_DTYPE_INT, 8, "-1099511627776", -1099511627776.0, 0},
    {"|u1", ZARR_DTYPE_UINT, 1, "255", 255, 0},
    {"<u2", ZARR_DTYPE_UINT, 2, "1234", 1234, 0},
    {">u2", ZARR_DTYPE_UINT, 2, "65535", 65535, 0},
    {"<u4", ZARR_DTYPE_UINT, 4, "4294967295", 4294967295.0, 0},
    {">u4", ZARR_DTYPE_UINT, 4, NULL, 0, 0},
    {"<u8", ZARR_DTYPE_UINT, 8, "4294967296", 4294967296.0, 0},
    {">u8", ZARR_DTYPE_UINT, 8, "17", 17, 0},
    {"<f2", ZARR_DTYPE_FLOAT, 2, "\"NaN\"", NAN, 0},
    {">f2", ZARR_DTYPE_FLOAT, 2, "-1.5", -1.5, 0},
    {"<f4", ZARR_DTYPE_FLOAT, 4, "\"-Infinity\"", -INFINITY, 0},
    {">f4", ZARR_DTYPE_FLOAT, 4, "\"NaN\"", NAN, 0},
    {"<f8", ZARR_DTYPE_FLOAT, 8, "\"Infinity\"", INFINITY, 0},
    {">f8", ZARR_DTYPE_FLOAT, 8, "\"-Infinity\"", -INFINITY, 0},
    {">f8", ZARR_DTYPE_FLOAT, 8, "\"NaN\"", NAN, 0},
    {"<f8", ZARR_DTYPE_FLOAT, 8, "-0.125", -0.125, 0},
    {"<c8", ZARR_DTYPE_COMPLEX, 8, NULL, 0, 0},
    {">c8", ZARR_DTYPE_COMPLEX, 8, NULL, 0, 0},
    {"<c16", ZARR_DTYPE_COMPLEX, 16, NULL, 0, 0},
    {">c16", ZARR_DTYPE_COMPLEX, 16, NULL, 0, 0},
    {"<c8", ZARR_DTYPE_COMPLEX, 8, "[1.5,-2.0]", 1.5, -2.0}, /* complex fill: [real, imag] */
    {">c16", ZARR_DTYPE_COMPLEX, 16, "[\"NaN\",\"-Infinity\"]", NAN, -INFINITY},
};

enum { ROWS = 13, COLS = 11, CROWS = 5, CCOLS = 4 }; /* 3x3 chunks, the last ones partial */

/* Converts one native element to its stored form for the typestr's byte order (complex: each
 * part swapped on its own). */
static void to_stored_order(const struct dtype_case *c, const unsigned char *native, unsigned char *out) {
    size_t part = c->kind == ZARR_DTYPE_COMPLEX ? c->itemsize / 2 : c->itemsize;
    to_order(out, native, c->itemsize, part, c->typestr[0] == '>');
}

static void check_inspection(zarr_array *a, const struct dtype_case *c, const unsigned char *fill) {
    zarr_dtype_kind kind = -1;
    size_t itemsize = 0;
    unsigned char got_fill[16];
    bool is_set = false;
    char *typestr = NULL;
    CHECK_OK(zarr_array_dtype(a, &kind, &itemsize));
    CHECK_U64_EQ(kind, c->kind);
    CHECK_U64_EQ(itemsize, c->itemsize);
    /* The check a typed binding makes: the array's own type passes, any other is refused
     * naming the stored type. */
    CHECK_OK(zarr_array_check_dtype(a, c->kind, c->itemsize));
    CHECK_STATUS(zarr_array_check_dtype(a, c->kind, c->itemsize + 1), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(strstr(zarr_last_error(), c->typestr) != NULL);
    CHECK_STATUS(zarr_array_check_dtype(a, c->kind % 12 + 1, c->itemsize), ZARR_ERR_INVALID_ARGUMENT);
    if (CHECK_OK(zarr_array_dtype_string(a, &typestr))) CHECK_STR_EQ(typestr, c->typestr);
    zarr_string_free(typestr);
    memset(got_fill, 0xAB, sizeof got_fill);
    if (CHECK_OK(zarr_array_fill_value(a, got_fill, c->itemsize, &is_set))) {
        CHECK(is_set);
        CHECK_ELEMS(c->kind, c->itemsize, got_fill, fill, 1);
    }
    /* out_size must equal the item size exactly. */
    CHECK_STATUS(zarr_array_fill_value(a, got_fill, c->itemsize + 1, &is_set), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_fill_value(a, got_fill, c->itemsize - 1, &is_set), ZARR_ERR_BUFFER_SIZE);
}

static void run_dtype(const struct dtype_case *c, const char *dir) {
    const char *json = strf("{\"shape\":[%d,%d],\"chunks\":[%d,%d],\"dtype\":\"%s\",\"compressor\":null%s%s}",
                            ROWS, COLS, CROWS, CCOLS, c->typestr, c->fill_json ? ",\"fill_value\":" : "",
                            c->fill_json ? c->fill_json : "");
    size_t is = c->itemsize;
    unsigned char fill[16], *ref = malloc(ROWS * COLS * is), *back = malloc(ROWS * COLS * is);
    unsigned char *data = malloc(ROWS * COLS * is), *raw = NULL, stored[16];
    uint64_t start[2] = {0, 0}, count[2] = {CROWS + 2, COLS}, all[2] = {ROWS, COLS};
    size_t len = 0;
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "arr", json) : NULL;
    if (!a) goto out;

    scalar_to_elem(c->kind, is, c->fill, fill);
    if (c->kind == ZARR_DTYPE_COMPLEX) scalar_to_elem(ZARR_DTYPE_FLOAT, is / 2, c->fill_imag, fill + is / 2);
    check_inspection(a, c, fill);

    /* Write rows 0..6 (chunk row 0 whole, chunk row 1 partly); the rest stays fill. */
    fill_elems(ref, fill, is, ROWS * COLS);
    gen_buffer(c->kind, is, 1000, data, (CROWS + 2) * COLS);
    memcpy(ref, data, (CROWS + 2) * COLS * is);
    CHECK_OK(zarr_array_write(a, 2, start, count, data, (CROWS + 2) * COLS * is));
    if (CHECK_OK(zarr_array_read(a, 2, start, all, back, ROWS * COLS * is)))
        CHECK_ELEMS(c->kind, is, back, ref, ROWS * COLS);

    /* Chunk 0.0 (no compressor) holds rows 0..4, cols 0..3 in the declared byte order. */
    raw = file_read(strf("%s/arr/0.0", dir), &len);
    CHECK_U64_EQ(len, CROWS * CCOLS * is);
    if (raw && len == CROWS * CCOLS * is)
        for (int i = 0; i < CROWS * CCOLS; i++) {
            to_stored_order(c, ref + ((size_t)(i / CCOLS) * COLS + (size_t)(i % CCOLS)) * is, stored);
            if (!CHECK(memcmp(raw + (size_t)i * is, stored, is) == 0)) break;
        }
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));

    /* A fresh READ store sees the same values and metadata. */
    s = open_store(dir, ZARR_MODE_READ);
    a = s ? open_array(s, "arr") : NULL;
    if (a) {
        check_inspection(a, c, fill);
        memset(back, 0, ROWS * COLS * is);
        if (CHECK_OK(zarr_array_read(a, 2, start, all, back, ROWS * COLS * is)))
            CHECK_ELEMS(c->kind, is, back, ref, ROWS * COLS);
        CHECK_OK(zarr_array_close(a));
    }
out:
    CHECK_OK(zarr_store_close(s));
    free(raw);
    free(ref);
    free(back);
    free(data);
}

static void test_all_dtypes(void) {
    for (size_t i = 0; i < ARRAY_LEN(DTYPES); i++) {
        char *dir = tmpdir_make();
        CHECK_CTX("dtype %s fill %s", DTYPES[i].typestr, DTYPES[i].fill_json ? DTYPES[i].fill_json : "default");
        run_dtype(&DTYPES[i], dir);
        tmpdir_remove(dir);
    }
    CHECK_CTX_CLEAR();
}

/* Big-endian: a value written natively is stored swapped and read back natively. */
static void test_big_endian_values(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *i4 = create_array(s, "i4", "{\"shape\":[3],\"chunks\":[2],\"dtype\":\">i4\",\"fill_value\":-5}");
    zarr_array *f8 = create_array(s, "f8", "{\"shape\":[3],\"chunks\":[2],\"dtype\":\">f8\",\"compressor\":{\"id\":\"zlib\",\"level\":1}}");
    int32_t iv[3] = {0x01020304, -2, 0}, iback[3];
    double fv[3] = {3.141592653589793, -1e-300, 2.5}, fback[3];
    uint64_t start = 0, two = 2, three = 3;
    if (!i4 || !f8) return;
    CHECK_OK(zarr_array_write(i4, 1, &start, &two, iv, 2 * sizeof(int32_t)));
    CHECK_OK(zarr_array_read(i4, 1, &start, &three, iback, sizeof iback));
    CHECK(iback[0] == 0x01020304 && iback[1] == -2 && iback[2] == -5);
    CHECK_OK(zarr_array_write(f8, 1, &start, &three, fv, sizeof fv));
    CHECK_OK(zarr_array_read(f8, 1, &start, &three, fback, sizeof fback));
    CHECK(memcmp(fv, fback, sizeof fv) == 0);
    CHECK_OK(zarr_array_close(i4));
    CHECK_OK(zarr_array_close(f8));
    CHECK_OK(zarr_store_close(s));
}

/* fill_value null for the numbers: reported as not set, with zero bytes. */
static void test_null_fill_numbers(void) {
    static const char *const types[] = {"<i4", ">f8", "|b1", "<c16", "<f2"};
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    for (size_t i = 0; i < ARRAY_LEN(types); i++) {
        zarr_array *a = create_array(s, strf("a%zu", i), strf("{\"shape\":[4],\"chunks\":[2],"
                                     "\"dtype\":\"%s\",\"fill_value\":null}", types[i]));
        unsigned char out[17], zeros[16] = {0};
        size_t itemsize = 0;
        zarr_dtype_kind kind;
        bool is_set = true;
        CHECK_CTX("dtype %s", types[i]);
        if (!a || !CHECK_OK(zarr_array_dtype(a, &kind, &itemsize))) continue;
        memset(out, 0xAB, sizeof out);
        CHECK_OK(zarr_array_fill_value(a, out, itemsize, &is_set));
        CHECK(!is_set);
        CHECK(memcmp(out, zeros, itemsize) == 0);
        CHECK(out[itemsize] == 0xAB); /* nothing written past out_size */
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_CTX_CLEAR();
    CHECK_OK(zarr_store_close(s));
}

/* ---- beyond numbers: getters of every kind ----------------------------------------------- */

/* A record with a big-endian scalar, a little-endian 2x2 sub-array, a nested record of a byte
 * string and a big-endian u4, a datetime and big-endian text: 41 bytes, packed in order. */
#define REC_JSON                                                                                  \
    "[[\"a\",\">i2\"],[\"z\",\"<f4\",[2,2]],[\"inner\",[[\"s\",\"|S3\"],[\"b\",\">u4\"]]],[\"t\"," \
    "\"<M8[s]\"],[\"u\",\">U2\"]]"
#define INNER_JSON "[[\"s\",\"|S3\"],[\"b\",\">u4\"]]"
enum { OFF_A = 0, OFF_Z = 2, OFF_INNER = 18, OFF_S = 18, OFF_B = 21, OFF_T = 25, OFF_U = 33, REC_SIZE = 41 };

/* All big-endian: 4 + 8 + 3*2 = 18 bytes. */
#define BE_JSON "[[\"x\",\">i4\"],[\"y\",\">f8\"],[\"w\",\">u2\",[3]]]"
enum { BE_X = 0, BE_Y = 4, BE_W = 12, BE_SIZE = 18 };

/* Three levels deep: a u1, then a record holding a record holding a <U1 sub-array [2]. */
#define DEEP_JSON "[[\"p\",\"|u1\"],[\"q\",[[\"r\",[[\"deep\",\"<U1\",[2]]]]]]]"

struct type_case {
    const char *dtype; /* the create document's "dtype" value (JSON) */
    zarr_dtype_kind kind;
    size_t itemsize;
};

static const struct type_case TYPES[] = {
    {"\"|S1\"", ZARR_DTYPE_BYTES, 1},
    {"\"|S7\"", ZARR_DTYPE_BYTES, 7},
    {"\"<U1\"", ZARR_DTYPE_UNICODE, 4},
    {"\"<U5\"", ZARR_DTYPE_UNICODE, 20},
    {"\">U3\"", ZARR_DTYPE_UNICODE, 12},
    {"\"|V1\"", ZARR_DTYPE_RAW, 1},
    {"\"|V13\"", ZARR_DTYPE_RAW, 13},
    {"\"<M8[ns]\"", ZARR_DTYPE_DATETIME, 8},
    {"\">M8[D]\"", ZARR_DTYPE_DATETIME, 8},
    {"\"<M8[10s]\"", ZARR_DTYPE_DATETIME, 8},
    {"\">m8[10s]\"", ZARR_DTYPE_TIMEDELTA, 8},
    {"\"<m8[us]\"", ZARR_DTYPE_TIMEDELTA, 8},
    {"\"<m8[1000ns]\"", ZARR_DTYPE_TIMEDELTA, 8},
    {REC_JSON, ZARR_DTYPE_STRUCTURED, REC_SIZE},
    {BE_JSON, ZARR_DTYPE_STRUCTURED, BE_SIZE},
    {DEEP_JSON, ZARR_DTYPE_STRUCTURED, 1 + 8},
    {"[[\"only\",\"|V2\",[3]]]", ZARR_DTYPE_STRUCTURED, 6},
};

/* Kind, item size and type string of `a`; *typestr_out gets the string (caller frees). */
static void check_type_getters(zarr_array *a, const struct type_case *c, char **typestr_out) {
    zarr_dtype_kind kind = -1;
    size_t itemsize = 0, nfields = 99;
    char *typestr = NULL, *fields = NULL;
    int structured = c->kind == ZARR_DTYPE_STRUCTURED;
    CHECK_OK(zarr_array_dtype(a, &kind, &itemsize));
    CHECK_U64_EQ(kind, c->kind);
    CHECK_U64_EQ(itemsize, c->itemsize);
    if (CHECK_OK(zarr_array_dtype_string(a, &typestr))) {
        if (structured) {
            CHECK_JSON_CANON_EQ(typestr, c->dtype); /* the JSON list of fields */
        } else {
            /* The type string is the dtype value without its JSON quotes. */
            CHECK(strlen(typestr) + 2 == strlen(c->dtype) && strncmp(typestr, c->dtype + 1, strlen(typestr)) == 0);
        }
    }
    if (CHECK_OK(zarr_array_field_count(a, &nfields)) && !structured) CHECK_U64_EQ(nfields, 0);
    if (CHECK_OK(zarr_array_fields_json(a, &fields)) && !structured) CHECK_JSON_EQ(fields, "[]");
    zarr_string_free(fields);
    if (typestr_out) *typestr_out = typestr;
    else zarr_string_free(typestr);
}

/* Every kind: getters right after create, and the type string fed back into a create gives
 * the same type. Leaving fill_value out (default 0) works for each and reads as zero bytes. */
static void test_type_getters(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    if (!s) return;
    for (size_t i = 0; i < ARRAY_LEN(TYPES); i++) {
        const struct type_case *c = &TYPES[i];
        zarr_array *a, *b;
        char *typestr = NULL;
        unsigned char fill[64], zeros[64] = {0};
        bool is_set = false;
        CHECK_CTX("dtype %s", c->dtype);
        a = create_array(s, strf("t%zu", i), strf("{\"shape\":[3],\"chunks\":[2],\"dtype\":%s}", c->dtype));
        if (!a) continue;
        check_type_getters(a, c, &typestr);
        memset(fill, 0xAB, sizeof fill);
        if (CHECK_OK(zarr_array_fill_value(a, fill, c->itemsize, &is_set))) {
            CHECK(is_set);
            CHECK_BYTES(fill, zeros, 1, c->itemsize);
        }
        CHECK_STATUS(zarr_array_fill_value(a, fill, c->itemsize + 1, &is_set), ZARR_ERR_BUFFER_SIZE);
        CHECK_STATUS(zarr_array_fill_value(a, fill, c->itemsize - 1, &is_set), ZARR_ERR_BUFFER_SIZE);
        if (typestr) { /* round trip: the reported type string creates the same type */
            const char *doc = c->kind == ZARR_DTYPE_STRUCTURED
                                  ? strf("{\"shape\":[3],\"chunks\":[2],\"dtype\":%s}", typestr)
                                  : strf("{\"shape\":[3],\"chunks\":[2],\"dtype\":\"%s\"}", typestr);
            b = create_array(s, strf("rt%zu", i), doc);
            if (b) check_type_getters(b, c, NULL);
            CHECK_OK(zarr_array_close(b));
        }
        zarr_string_free(typestr);
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_CTX_CLEAR();
    CHECK_OK(zarr_store_close(s));
}

/* ---- round trips of S, U, V, M8 and m8 through a directory store ------------------------- */

/* 7 elements in chunks of 3: elements 0..3 are written (chunk 0 whole, chunk 1 partly), 4 and 5
 * stay fill inside chunk 1, and chunk 2 (element 6) is never written. */
enum { N_ELEMS = 7, CHUNK = 3, N_WRITTEN = 4 };

struct simple_case {
    const char *typestr;
    zarr_dtype_kind kind;
    size_t itemsize, unit; /* unit: the size of each byte-swapped part (0: bytes, no order) */
    const char *fill_json; /* the create document's fill_value */
    const char *disk_fill, *disk_fill_alt; /* the .zarray's fill_value (alt: equivalent spelling) */
};

static void check_simple_getters(zarr_array *a, const struct simple_case *c, const unsigned char *fill) {
    zarr_dtype_kind kind = -1;
    size_t itemsize = 0;
    char *typestr = NULL;
    unsigned char got[64];
    bool is_set = false;
    CHECK_OK(zarr_array_dtype(a, &kind, &itemsize));
    CHECK_U64_EQ(kind, c->kind);
    CHECK_U64_EQ(itemsize, c->itemsize);
    if (CHECK_OK(zarr_array_dtype_string(a, &typestr))) CHECK_STR_EQ(typestr, c->typestr);
    zarr_string_free(typestr);
    memset(got, 0xAB, sizeof got);
    if (CHECK_OK(zarr_array_fill_value(a, got, c->itemsize, &is_set))) {
        CHECK(is_set);
        CHECK_BYTES(got, fill, 1, c->itemsize);
    }
}

/* Creates dir/arr with the case's type and fill, writes data (N_WRITTEN native elements) and
 * checks: reads (whole and a box across chunks), the chunk files in the declared byte order,
 * the absent chunk, the .zarray members, and all of it again through a fresh READ store. */
static void run_simple(const struct simple_case *c, const unsigned char *fill, const unsigned char *data) {
    char *dir = tmpdir_make(), *zarray;
    size_t is = c->itemsize, len = 0;
    int big = c->typestr[0] == '>';
    unsigned char ref[N_ELEMS * 64], back[N_ELEMS * 64], stored[N_ELEMS * 64], *raw;
    uint64_t zero = 0, n_written = N_WRITTEN, all = N_ELEMS, two = 2, four = 4;
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "arr", strf("{\"shape\":[%d],\"chunks\":[%d],\"dtype\":\"%s\","
                                                     "\"fill_value\":%s}", N_ELEMS, CHUNK, c->typestr, c->fill_json))
                      : NULL;
    CHECK_CTX("dtype %s fill %s", c->typestr, c->fill_json);
    if (!a) goto out;
    check_simple_getters(a, c, fill);

    for (int i = 0; i < N_ELEMS; i++) memcpy(ref + i * is, i < N_WRITTEN ? data + i * is : fill, is);
    CHECK_OK(zarr_array_write(a, 1, &zero, &n_written, data, N_WRITTEN * is));
    memset(back, 0xEE, sizeof back);
    if (CHECK_OK(zarr_array_read(a, 1, &zero, &all, back, N_ELEMS * is))) CHECK_BYTES(back, ref, N_ELEMS, is);
    memset(back, 0xEE, sizeof back);
    if (CHECK_OK(zarr_array_read(a, 1, &two, &four, back, 4 * is))) CHECK_BYTES(back, ref + 2 * is, 4, is);

    /* No compressor: chunk 0 holds elements 0..2 and chunk 1 elements 3..5, stored order. */
    to_order(stored, ref, N_ELEMS * is, c->unit, big);
    raw = file_read(strf("%s/arr/0", dir), &len);
    if (CHECK(raw != NULL) && CHECK_U64_EQ(len, CHUNK * is)) CHECK_BYTES(raw, stored, CHUNK, is);
    free(raw);
    raw = file_read(strf("%s/arr/1", dir), &len);
    if (CHECK(raw != NULL) && CHECK_U64_EQ(len, CHUNK * is)) CHECK_BYTES(raw, stored + CHUNK * is, CHUNK, is);
    free(raw);
    CHECK(!file_exists(strf("%s/arr/2", dir)));

    zarray = read_zarray(dir, "arr");
    CHECK_MEMBER(zarray, "dtype", strf("\"%s\"", c->typestr));
    CHECK_MEMBER2(zarray, "fill_value", c->disk_fill, c->disk_fill_alt);
    free(zarray);
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));

    s = open_store(dir, ZARR_MODE_READ);
    a = s ? open_array(s, "arr") : NULL;
    if (a) {
        check_simple_getters(a, c, fill);
        memset(back, 0xEE, sizeof back);
        if (CHECK_OK(zarr_array_read(a, 1, &zero, &all, back, N_ELEMS * is))) CHECK_BYTES(back, ref, N_ELEMS, is);
        CHECK_OK(zarr_array_close(a));
    }
out:
    CHECK_OK(zarr_store_close(s));
    CHECK_CTX_CLEAR();
    tmpdir_remove(dir);
}

/* |S: byte strings are zero-padded, the fill is base64 of the (possibly shorter) bytes. */
static void test_bytes(void) {
    static const struct simple_case s5 = {"|S5", ZARR_DTYPE_BYTES, 5, 0, "\"YWI=\"", "\"YWI=\"", NULL};
    static const struct simple_case s3 = {"|S3", ZARR_DTYPE_BYTES, 3, 0, "\"eHl6\"", "\"eHl6\"", NULL};
    /* Given with its trailing zeros; zarr-python (NumPy bytes scalars) writes it without. */
    static const struct simple_case s4 = {"|S4", ZARR_DTYPE_BYTES, 4, 0, "\"YWIAAA==\"", "\"YWI=\"", NULL};
    static const unsigned char fill5[5] = {'a', 'b', 0, 0, 0}, fill3[3] = {'x', 'y', 'z'}, fill4[4] = {'a', 'b', 0, 0};
    unsigned char data5[N_WRITTEN * 5], data3[N_WRITTEN * 3];
    /* "hello" (full), "hi" padded, "" (all zeros), "a\0b" (an embedded zero). */
    memcpy(data5, "hello" "hi\0\0\0" "\0\0\0\0\0" "a\0b\0\0", sizeof data5);
    memcpy(data3, "abc" "\0\0\0" "q\0\0" "\xff\x01\x80", sizeof data3);
    run_simple(&s5, fill5, data5);
    run_simple(&s3, fill3, data3);
    run_simple(&s4, fill4, data5 + 1); /* any 16 bytes */
}

/* |V: raw bytes, the fill is base64 of exactly the item size. */
static void test_raw(void) {
    static const struct simple_case v3 = {"|V3", ZARR_DTYPE_RAW, 3, 0, "\"AAEC\"", "\"AAEC\"", NULL};
    static const unsigned char fill3[3] = {0, 1, 2};
    static const unsigned char data3[N_WRITTEN * 3] = {0xff, 0, 0x80, 0, 0, 0, 1, 2, 3, 0x7f, 0xfe, 0};
    struct simple_case v5 = {"|V5", ZARR_DTYPE_RAW, 5, 0, NULL, NULL, NULL};
    static const unsigned char fill5[5] = {0xff, 0, 0x01, 0, 0}; /* |V keeps trailing zeros */
    unsigned char data5[N_WRITTEN * 5];
    char b64[16], quoted[24];
    run_simple(&v3, fill3, data3);
    base64_encode(fill5, 5, b64);
    CHECK_STR_EQ(b64, "/wABAAA="); /* the encoder itself */
    snprintf(quoted, sizeof quoted, "\"%s\"", b64);
    v5.fill_json = v5.disk_fill = quoted;
    for (size_t i = 0; i < sizeof data5; i++) data5[i] = (unsigned char)(i * 37 + 11);
    run_simple(&v5, fill5, data5);
}

/* UTF-8 text and the code points it must give. */
#define EURO "\xE2\x82\xAC"    /* U+20AC, 3 bytes */
#define CLEF "\xF0\x9D\x84\x9E" /* U+1D11E, 4 bytes */
#define E_ACUTE "\xC3\xA9"      /* U+00E9, 2 bytes */
static const struct {
    const char *utf8;
    uint32_t units[4]; /* as a <U4 element: zero-padded */
} TEXTS[] = {
    {"a" EURO CLEF, {0x61, 0x20AC, 0x1D11E, 0}},
    {"", {0, 0, 0, 0}},
    {EURO EURO EURO EURO, {0x20AC, 0x20AC, 0x20AC, 0x20AC}}, /* exactly 4 characters */
    {E_ACUTE CLEF "z", {0xE9, 0x1D11E, 0x7A, 0}},
};

/* <U and >U: text converted with zarr_utf8_to_utf32, read back native in both byte orders. */
static void test_unicode(void) {
    static const char *const types[] = {"<U4", ">U4"};
    /* fill "é€" written with JSON escapes; .zarray may spell it escaped or as raw UTF-8. */
    static const uint32_t fill[4] = {0xE9, 0x20AC, 0, 0}, clef_fill[2] = {0x1D11E, 0};
    static const uint32_t data2[N_WRITTEN * 2] = {0x41, 0x20AC, 0x1D11E, 0, 0, 0, 0x10FFFF, 0xE9};
    uint32_t data[N_WRITTEN * 4];
    for (size_t t = 0; t < ARRAY_LEN(TEXTS); t++) {
        uint32_t *el = data + 4 * t;
        memset(el, 0xCD, 16);
        CHECK_CTX("text #%zu", t);
        if (CHECK_OK(zarr_utf8_to_utf32(TEXTS[t].utf8, strlen(TEXTS[t].utf8), el, 4)))
            CHECK_BYTES(el, TEXTS[t].units, 1, 16);
    }
    CHECK_CTX_CLEAR();
    for (size_t i = 0; i < ARRAY_LEN(types); i++) {
        struct simple_case c = {types[i], ZARR_DTYPE_UNICODE, 16, 4, "\"\\u00e9\\u20ac\"",
                                "\"" E_ACUTE EURO "\"", "\"\\u00e9\\u20ac\""};
        run_simple(&c, (const unsigned char *)fill, (const unsigned char *)data);
    }
    {   /* A 4-byte character given as a JSON surrogate pair, in a <U2 fill. */
        struct simple_case c = {">U2", ZARR_DTYPE_UNICODE, 8, 4, "\"\\ud834\\udd1e\"", "\"" CLEF "\"",
                                "\"\\ud834\\udd1e\""};
        run_simple(&c, (const unsigned char *)clef_fill, (const unsigned char *)data2);
    }
    /* Elements read back convert to the original UTF-8. */
    {
        zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
        zarr_array *a = s ? create_array(s, "u", "{\"shape\":[4],\"chunks\":[3],\"dtype\":\">U4\",\"fill_value\":\"\"}") : NULL;
        uint64_t zero = 0, n = ARRAY_LEN(TEXTS);
        uint32_t back[4 * 4];
        char text[16];
        size_t len = 99;
        if (a && CHECK_OK(zarr_array_write(a, 1, &zero, &n, data, sizeof back)) &&
            CHECK_OK(zarr_array_read(a, 1, &zero, &n, back, sizeof back)))
            for (size_t t = 0; t < ARRAY_LEN(TEXTS); t++) {
                CHECK_CTX("text #%zu", t);
                len = 99;
                if (CHECK_OK(zarr_utf32_to_utf8(back + 4 * t, 4, text, sizeof text, &len)) &&
                    CHECK_U64_EQ(len, strlen(TEXTS[t].utf8)))
                    CHECK(memcmp(text, TEXTS[t].utf8, len) == 0);
            }
        CHECK_CTX_CLEAR();
        CHECK_OK(zarr_array_close(a));
        CHECK_OK(zarr_store_close(s));
    }
}

/* M8 and m8: int64 counts in the declared byte order; NaT (INT64_MIN) as "NaT" or a number. */
static void test_times(void) {
    static const struct simple_case cases[] = {
        {"<M8[ns]", ZARR_DTYPE_DATETIME, 8, 8, "\"NaT\"", "-9223372036854775808", NULL},
        {">M8[D]", ZARR_DTYPE_DATETIME, 8, 8, "-9223372036854775808", "-9223372036854775808", NULL},
        {">m8[10s]", ZARR_DTYPE_TIMEDELTA, 8, 8, "-86400", "-86400", NULL},
        {"<m8[us]", ZARR_DTYPE_TIMEDELTA, 8, 8, "\"NaT\"", "-9223372036854775808", NULL},
        {">M8[s]", ZARR_DTYPE_DATETIME, 8, 8, "1577836800", "1577836800", NULL}, /* 2020-01-01 */
    };
    static const int64_t fills[] = {INT64_MIN, INT64_MIN, -86400, INT64_MIN, 1577836800};
    static const int64_t data[][N_WRITTEN] = {
        {0, -1, INT64_MAX, 1234567890123456789},
        {18262, INT64_MIN, -719162, 1}, /* NaT written as a value */
        {1, -2, INT64_MIN + 1, 0x0102030405060708},
        {INT64_MIN, 42, -42, 0},
        {-1, INT64_MIN, 0, 253402300799},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        run_simple(&cases[i], (const unsigned char *)&fills[i], (const unsigned char *)data[i]);
}

/* zarr_array_time_unit: unit names and multiples; other kinds are refused. */
static void test_time_units(void) {
    static const struct {
        const char *typestr, *unit;
        uint64_t multiple;
    } cases[] = {
        {"<M8[ns]", "ns", 1}, {">m8[10s]", "s", 10}, {"<M8[D]", "D", 1},     {"<M8[25us]", "us", 25},
        {"<m8[3h]", "h", 3},  {">M8[Y]", "Y", 1},    {"<M8[M]", "M", 1},     {"<m8[m]", "m", 1},
        {"<M8[2W]", "W", 2},  {"<m8[ms]", "ms", 1},  {"<m8[ps]", "ps", 1},   {">m8[fs]", "fs", 1},
        {"<M8[as]", "as", 1}, {"<m8[1000ns]", "ns", 1000},
        {"<M8[15m]", "m", 15}, {">m8[6M]", "M", 6},
    };
    static const char *const other[] = {"\"<i8\"", "\"|S3\"", "\"<U2\"", "\"|V8\"", "\"<f8\"", REC_JSON};
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = NULL;
    const char *unit = "sentinel";
    uint64_t multiple = 777;
    if (!s) return;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        CHECK_CTX("dtype %s", cases[i].typestr);
        a = create_array(s, strf("t%zu", i), strf("{\"shape\":[1],\"chunks\":[1],\"dtype\":\"%s\"}", cases[i].typestr));
        if (!a) continue;
        unit = NULL, multiple = 0;
        if (CHECK_OK(zarr_array_time_unit(a, &unit, &multiple))) {
            CHECK_STR_EQ(unit, cases[i].unit);
            CHECK_U64_EQ(multiple, cases[i].multiple);
        }
        CHECK_OK(zarr_array_close(a));
    }
    for (size_t i = 0; i < ARRAY_LEN(other); i++) {
        CHECK_CTX("dtype %s", other[i]);
        a = create_array(s, strf("o%zu", i), strf("{\"shape\":[1],\"chunks\":[1],\"dtype\":%s,\"fill_value\":null}", other[i]));
        if (!a) continue;
        unit = "sentinel", multiple = 777;
        CHECK_STATUS(zarr_array_time_unit(a, &unit, &multiple), ZARR_ERR_INVALID_ARGUMENT);
        CHECK(strcmp(unit, "sentinel") == 0 && multiple == 777); /* outputs untouched */
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_CTX_CLEAR();
    a = create_array(s, "m", "{\"shape\":[1],\"chunks\":[1],\"dtype\":\">m8[10s]\"}");
    if (a) {
        CHECK_STATUS(zarr_array_time_unit(NULL, &unit, &multiple), ZARR_ERR_NULL_POINTER);
        CHECK_STATUS(zarr_array_time_unit(a, NULL, &multiple), ZARR_ERR_NULL_POINTER);
        unit = "sentinel";
        CHECK_STATUS(zarr_array_time_unit(a, &unit, NULL), ZARR_ERR_NULL_POINTER);
        CHECK(strcmp(unit, "sentinel") == 0);
    }
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));
}

/* fill_value null for the kinds beyond numbers: not set, zeros (not NaT, not ""), missing chunks
 * zeros. */
static void test_null_fill_beyond_numbers(void) {
    static const struct {
        const char *dtype;
        size_t itemsize;
    } cases[] = {{"\"|S3\"", 3}, {"\"<U2\"", 8}, {"\"|V2\"", 2}, {"\"<M8[ns]\"", 8}, {"\">m8[s]\"", 8}, {REC_JSON, REC_SIZE}};
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    if (!s) goto out;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        size_t is = cases[i].itemsize;
        zarr_array *a = create_array(s, strf("n%zu", i), strf("{\"shape\":[4],\"chunks\":[2],\"dtype\":%s,"
                                                              "\"fill_value\":null}", cases[i].dtype));
        unsigned char got[4 * REC_SIZE + 1], zeros[4 * REC_SIZE] = {0};
        uint64_t zero = 0, four = 4;
        bool is_set = true;
        char *zarray;
        CHECK_CTX("dtype %s", cases[i].dtype);
        if (!a) continue;
        memset(got, 0xAB, sizeof got);
        if (CHECK_OK(zarr_array_fill_value(a, got, is, &is_set))) {
            CHECK(!is_set);
            CHECK_BYTES(got, zeros, 1, is);
            CHECK(got[is] == 0xAB);
        }
        memset(got, 0xAB, sizeof got);
        if (CHECK_OK(zarr_array_read(a, 1, &zero, &four, got, 4 * is))) CHECK_BYTES(got, zeros, 4, is);
        zarray = read_zarray(dir, strf("n%zu", i));
        CHECK_MEMBER(zarray, "fill_value", "null");
        CHECK_MEMBER(zarray, "dtype", cases[i].dtype);
        free(zarray);
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_CTX_CLEAR();
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* ---- records ----------------------------------------------------------------------------- */

struct rec {
    int16_t a;
    float z[4];
    char s[3];
    uint32_t b;
    int64_t t;
    uint32_t u[2];
};

/* Native layout: each field at its offset, native byte order. */
static void rec_native(const struct rec *r, unsigned char *out) {
    memcpy(out + OFF_A, &r->a, 2);
    memcpy(out + OFF_Z, r->z, 16);
    memcpy(out + OFF_S, r->s, 3);
    memcpy(out + OFF_B, &r->b, 4);
    memcpy(out + OFF_T, &r->t, 8);
    memcpy(out + OFF_U, r->u, 8);
}

/* Stored layout: each field in its declared byte order (a, b, u big; z, t little). */
static void rec_stored(const struct rec *r, unsigned char *out) {
    put_order(out + OFF_A, &r->a, 2, 1);
    for (int i = 0; i < 4; i++) put_order(out + OFF_Z + 4 * i, &r->z[i], 4, 0);
    memcpy(out + OFF_S, r->s, 3);
    put_order(out + OFF_B, &r->b, 4, 1);
    put_order(out + OFF_T, &r->t, 8, 0);
    for (int i = 0; i < 2; i++) put_order(out + OFF_U + 4 * i, &r->u[i], 4, 1);
}

static struct rec rec_gen(int seed) {
    struct rec r;
    memset(&r, 0, sizeof r);
    r.a = (int16_t)(seed * 1031 - 700);
    for (int i = 0; i < 4; i++) r.z[i] = (float)(seed * 4 + i) * 0.25f - 3.0f;
    r.s[0] = (char)('A' + seed % 26);
    r.s[1] = seed % 2 ? 0 : 'x';
    r.s[2] = seed % 3 ? 0 : '!';
    r.b = 0x01020304u * (uint32_t)(seed + 1) + 0xF0000000u;
    r.t = (int64_t)seed * 86400 - 3;
    r.u[0] = 0x20AC + (uint32_t)seed;
    r.u[1] = seed % 2 ? 0x1D11E : 0;
    return r;
}

/* The record fill: a = -2, z = {1.5, -0.25, 3, 0}, s = "fi", b = 0xCAFEBABE, t = NaT, u = "€". */
static struct rec rec_fill(void) {
    struct rec r;
    memset(&r, 0, sizeof r);
    r.a = -2;
    r.z[0] = 1.5f, r.z[1] = -0.25f, r.z[2] = 3.0f, r.z[3] = 0.0f;
    r.s[0] = 'f', r.s[1] = 'i';
    r.b = 0xCAFEBABEu;
    r.t = INT64_MIN;
    r.u[0] = 0x20AC;
    return r;
}

/* Packs the named fields of n native records (the caller layout of read_fields). */
struct field_ref {
    const char *name;
    size_t offset, size;
};
static size_t pack_fields(const unsigned char *recs, size_t n, size_t rec_size, const struct field_ref *f,
                          size_t nf, unsigned char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < nf; k++) {
            memcpy(out + o, recs + i * rec_size + f[k].offset, f[k].size);
            o += f[k].size;
        }
    return o;
}

/* The reverse: packed fields into n native records, the other bytes untouched. */
static void unpack_fields(const unsigned char *packed, size_t n, size_t rec_size, const struct field_ref *f,
                          size_t nf, unsigned char *recs) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < nf; k++) {
            memcpy(recs + i * rec_size + f[k].offset, packed + o, f[k].size);
            o += f[k].size;
        }
}

static const struct field_ref F_A = {"a", OFF_A, 2}, F_Z = {"z", OFF_Z, 16}, F_INNER = {"inner", OFF_INNER, 7},
                              F_T = {"t", OFF_T, 8}, F_U = {"u", OFF_U, 8};

/* Field count, zarr_array_field for each field, and the fields JSON of the REC_JSON array. */
static void check_rec_fields(zarr_array *a) {
    static const struct {
        const char *name, *typestr;
        size_t offset, size, ndim;
    } want[] = {
        {"a", ">i2", OFF_A, 2, 0},
        {"z", "<f4", OFF_Z, 16, 2},
        {"inner", INNER_JSON, OFF_INNER, 7, 0},
        {"t", "<M8[s]", OFF_T, 8, 0},
        {"u", ">U2", OFF_U, 8, 0},
    };
    static const char *fields_json =
        "[{\"name\":\"a\",\"dtype\":\">i2\",\"offset\":0,\"itemsize\":2,\"shape\":[]},"
        "{\"name\":\"z\",\"dtype\":\"<f4\",\"offset\":2,\"itemsize\":16,\"shape\":[2,2]},"
        "{\"name\":\"inner\",\"dtype\":" INNER_JSON ",\"offset\":18,\"itemsize\":7,\"shape\":[],\"fields\":["
        "{\"name\":\"s\",\"dtype\":\"|S3\",\"offset\":0,\"itemsize\":3,\"shape\":[]},"
        "{\"name\":\"b\",\"dtype\":\">u4\",\"offset\":3,\"itemsize\":4,\"shape\":[]}]},"
        "{\"name\":\"t\",\"dtype\":\"<M8[s]\",\"offset\":25,\"itemsize\":8,\"shape\":[]},"
        "{\"name\":\"u\",\"dtype\":\">U2\",\"offset\":33,\"itemsize\":8,\"shape\":[]}]";
    size_t count = 99, offset = 99, size = 99, ndim = 99;
    char *name = NULL, *typestr = NULL, *json = NULL;
    if (CHECK_OK(zarr_array_field_count(a, &count))) CHECK_U64_EQ(count, ARRAY_LEN(want));
    for (size_t i = 0; i < ARRAY_LEN(want); i++) {
        CHECK_CTX("field %zu", i);
        name = typestr = NULL;
        if (!CHECK_OK(zarr_array_field(a, i, &name, &typestr, &offset, &size, &ndim))) continue;
        CHECK_STR_EQ(name, want[i].name);
        if (want[i].typestr[0] == '[') CHECK_JSON_CANON_EQ(typestr, want[i].typestr);
        else CHECK_STR_EQ(typestr, want[i].typestr);
        CHECK_U64_EQ(offset, want[i].offset);
        CHECK_U64_EQ(size, want[i].size);
        CHECK_U64_EQ(ndim, want[i].ndim);
        zarr_string_free(name);
        zarr_string_free(typestr);
    }
    CHECK_CTX_CLEAR();
    if (CHECK_OK(zarr_array_fields_json(a, &json))) CHECK_JSON_CANON_EQ(json, fields_json);
    zarr_string_free(json);
}

/* Records through a directory store: nested, sub-array and mixed byte order. The caller sees
 * native values at the reported offsets; chunks hold each field in its declared order; the
 * fill is base64 of the stored record; field selections read and write in any order. */
static void test_records(void) {
    enum { N = 7 }; /* chunks of 3: write 0..3; 4, 5 fill in chunk 1; chunk 2 missing */
    char *dir = tmpdir_make(), fill_b64[64], *zarray, *typestr = NULL;
    struct rec fill = rec_fill(), r;
    unsigned char fill_native[REC_SIZE], fill_stored[REC_SIZE], got_fill[REC_SIZE];
    unsigned char ref[N * REC_SIZE], back[N * REC_SIZE], stored[N * REC_SIZE], data[N * REC_SIZE];
    unsigned char packed[N * REC_SIZE], want[N * REC_SIZE], *raw;
    uint64_t zero = 0, four = 4, all = N, two = 2, three = 3;
    size_t len = 0;
    bool is_set = false;
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a;

    rec_native(&fill, fill_native);
    rec_stored(&fill, fill_stored);
    base64_encode(fill_stored, REC_SIZE, fill_b64);
    a = s ? create_array(s, "rec", strf("{\"shape\":[%d],\"chunks\":[3],\"dtype\":%s,\"fill_value\":\"%s\"}", N,
                                         REC_JSON, fill_b64))
          : NULL;
    if (!a) goto out;
    check_rec_fields(a);
    if (CHECK_OK(zarr_array_dtype_string(a, &typestr))) CHECK_JSON_CANON_EQ(typestr, REC_JSON);
    zarr_string_free(typestr);
    memset(got_fill, 0, sizeof got_fill);
    if (CHECK_OK(zarr_array_fill_value(a, got_fill, REC_SIZE, &is_set))) {
        CHECK(is_set);
        CHECK_BYTES(got_fill, fill_native, 1, REC_SIZE);
    }

    /* Missing chunks read as the record fill, natively. */
    for (int i = 0; i < N; i++) memcpy(ref + i * REC_SIZE, fill_native, REC_SIZE);
    if (CHECK_OK(zarr_array_read(a, 1, &zero, &all, back, sizeof back))) CHECK_BYTES(back, ref, N, REC_SIZE);

    for (int i = 0; i < 4; i++) {
        r = rec_gen(i + 1);
        rec_native(&r, data + i * REC_SIZE);
    }
    memcpy(ref, data, 4 * REC_SIZE);
    CHECK_OK(zarr_array_write(a, 1, &zero, &four, data, 4 * REC_SIZE));
    memset(back, 0xEE, sizeof back);
    if (CHECK_OK(zarr_array_read(a, 1, &zero, &all, back, sizeof back))) CHECK_BYTES(back, ref, N, REC_SIZE);

    /* The chunks hold stored records: chunk 0 = records 1..3 generated, chunk 1 = one + 2 fills. */
    for (int i = 0; i < N; i++) {
        r = i < 4 ? rec_gen(i + 1) : fill;
        rec_stored(&r, stored + i * REC_SIZE);
    }
    raw = file_read(strf("%s/rec/0", dir), &len);
    if (CHECK(raw != NULL) && CHECK_U64_EQ(len, 3 * REC_SIZE)) CHECK_BYTES(raw, stored, 3, REC_SIZE);
    free(raw);
    raw = file_read(strf("%s/rec/1", dir), &len);
    if (CHECK(raw != NULL) && CHECK_U64_EQ(len, 3 * REC_SIZE)) CHECK_BYTES(raw, stored + 3 * REC_SIZE, 3, REC_SIZE);
    free(raw);
    CHECK(!file_exists(strf("%s/rec/2", dir)));

    zarray = read_zarray(dir, "rec");
    CHECK_MEMBER(zarray, "dtype", REC_JSON);
    CHECK_MEMBER(zarray, "fill_value", strf("\"%s\"", fill_b64));
    free(zarray);

    /* read_fields: a chosen order, over written records, fill records and a missing chunk. */
    {
        const struct field_ref ua[] = {F_U, F_A}, inner[] = {F_INNER}, rev[] = {F_U, F_T, F_INNER, F_Z, F_A};
        const char *n_ua[] = {"u", "a"}, *n_inner[] = {"inner"}, *n_rev[] = {"u", "t", "inner", "z", "a"};
        size_t n;
        memset(packed, 0xEE, sizeof packed);
        n = pack_fields(ref + 2 * REC_SIZE, 4, REC_SIZE, ua, 2, want);
        CHECK_U64_EQ(n, 4 * 10);
        if (CHECK_OK(zarr_array_read_fields(a, 1, &two, &four, n_ua, 2, packed, n))) CHECK_BYTES(packed, want, 4, 10);
        memset(packed, 0xEE, sizeof packed);
        n = pack_fields(ref, N, REC_SIZE, inner, 1, want);
        if (CHECK_OK(zarr_array_read_fields(a, 1, &zero, &all, n_inner, 1, packed, n))) CHECK_BYTES(packed, want, N, 7);
        memset(packed, 0xEE, sizeof packed);
        n = pack_fields(ref, N, REC_SIZE, rev, 5, want);
        CHECK_U64_EQ(n, N * REC_SIZE);
        if (CHECK_OK(zarr_array_read_fields(a, 1, &zero, &all, n_rev, 5, packed, n))) CHECK_BYTES(packed, want, N, REC_SIZE);
    }

    /* write_fields t and a over records 3..6 (chunk 1 partly written, chunk 2 missing): the other
     * fields keep their values (the fill where nothing was written). */
    {
        const struct field_ref ta[] = {F_T, F_A};
        const char *n_ta[] = {"t", "a"};
        uint64_t start = 3;
        unsigned char src[4 * 10];
        for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)(i * 13 + 5);
        unpack_fields(src, 4, REC_SIZE, ta, 2, ref + 3 * REC_SIZE);
        CHECK_OK(zarr_array_write_fields(a, 1, &start, &four, n_ta, 2, src, sizeof src));
        memset(back, 0xEE, sizeof back);
        if (CHECK_OK(zarr_array_read(a, 1, &zero, &all, back, sizeof back))) CHECK_BYTES(back, ref, N, REC_SIZE);
        /* And on disk, chunk 2 now holds record 6 = fill with t and a replaced, stored order. */
        raw = file_read(strf("%s/rec/2", dir), &len);
        if (CHECK(raw != NULL) && CHECK_U64_EQ(len, 3 * REC_SIZE)) {
            struct rec r6 = fill;
            memcpy(&r6.t, ref + 6 * REC_SIZE + OFF_T, 8);
            memcpy(&r6.a, ref + 6 * REC_SIZE + OFF_A, 2);
            rec_stored(&r6, stored);
            CHECK_BYTES(raw, stored, 1, REC_SIZE);
        }
        free(raw);
    }
    /* write_fields z (a sub-array) over one record in the middle of chunk 0. */
    {
        const char *n_z[] = {"z"};
        const float z[4] = {-1.0f, 2.5f, 1e30f, -0.0f};
        memcpy(ref + 1 * REC_SIZE + OFF_Z, z, 16);
        uint64_t one = 1, cnt = 1;
        CHECK_OK(zarr_array_write_fields(a, 1, &one, &cnt, n_z, 1, z, sizeof z));
        memset(back, 0xEE, sizeof back);
        if (CHECK_OK(zarr_array_read(a, 1, &zero, &all, back, sizeof back))) CHECK_BYTES(back, ref, N, REC_SIZE);
    }
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_store_close(s));

    /* A fresh READ store sees the same; writing fields there is refused. */
    s = open_store(dir, ZARR_MODE_READ);
    a = s ? open_array(s, "rec") : NULL;
    if (a) {
        const char *n_a[] = {"a"};
        int16_t v[3] = {1, 2, 3};
        check_rec_fields(a);
        memset(back, 0xEE, sizeof back);
        if (CHECK_OK(zarr_array_read(a, 1, &zero, &all, back, sizeof back))) CHECK_BYTES(back, ref, N, REC_SIZE);
        CHECK_STATUS(zarr_array_write_fields(a, 1, &zero, &three, n_a, 1, v, sizeof v), ZARR_ERR_READ_ONLY);
        CHECK_OK(zarr_array_close(a));
    }
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* An all-big-endian record in 2-d: write_fields leaves the other fields alone, stored big-endian. */
struct berec {
    int32_t x;
    double y;
    uint16_t w[3];
};
static void be_native(const struct berec *r, unsigned char *out) {
    memcpy(out + BE_X, &r->x, 4);
    memcpy(out + BE_Y, &r->y, 8);
    memcpy(out + BE_W, r->w, 6);
}
static void be_stored(const struct berec *r, unsigned char *out) {
    put_order(out + BE_X, &r->x, 4, 1);
    put_order(out + BE_Y, &r->y, 8, 1);
    for (int i = 0; i < 3; i++) put_order(out + BE_W + 2 * i, &r->w[i], 2, 1);
}

static void test_big_endian_records(void) {
    enum { R = 2, C = 3 }; /* chunks [1,2]: 0.0, 0.1, 1.0, 1.1 */
    char *dir = tmpdir_make(), fill_b64[32], *zarray;
    struct berec fill = {-1, 0.5, {1, 2, 3}}, recs[R][C];
    unsigned char fill_stored[BE_SIZE], ref[R * C * BE_SIZE], back[R * C * BE_SIZE], stored[2 * BE_SIZE], *raw;
    uint64_t zero2[2] = {0, 0}, row0[2] = {1, C}, all[2] = {R, C}, box_start[2] = {0, 1}, box_count[2] = {2, 2};
    size_t len = 0;
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    zarr_array *a;
    be_stored(&fill, fill_stored);
    base64_encode(fill_stored, BE_SIZE, fill_b64);
    a = s ? create_array(s, "be", strf("{\"shape\":[%d,%d],\"chunks\":[1,2],\"dtype\":%s,\"fill_value\":\"%s\"}",
                                        R, C, BE_JSON, fill_b64))
          : NULL;
    if (!a) goto out;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            struct berec *r = &recs[i][j];
            if (i == 0) {
                r->x = 0x01020304 * (j + 1), r->y = -1.25 * (j + 1);
                r->w[0] = (uint16_t)(0x1100 + j), r->w[1] = 0xFFFE, r->w[2] = (uint16_t)j;
            } else {
                *r = fill; /* row 1 is never written whole */
            }
        }
    for (int j = 0; j < C; j++) be_native(&recs[0][j], ref + j * BE_SIZE);
    CHECK_OK(zarr_array_write(a, 2, zero2, row0, ref, C * BE_SIZE));

    /* write_fields w and x (in that order) over the box rows 0..1, cols 1..2. */
    {
        const char *names[] = {"w", "x"};
        unsigned char src[4 * 10];
        size_t o = 0;
        for (int i = 0; i < 2; i++)
            for (int j = 1; j < 3; j++) {
                struct berec *r = &recs[i][j];
                r->w[0] = (uint16_t)(0xA000 + 16 * i + j), r->w[1] = (uint16_t)(0x0B00 + i), r->w[2] = 0x00C0;
                r->x = -1000 * (i + 1) - j;
                memcpy(src + o, r->w, 6);
                memcpy(src + o + 6, &r->x, 4);
                o += 10;
            }
        CHECK_OK(zarr_array_write_fields(a, 2, box_start, box_count, names, 2, src, sizeof src));
    }
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) be_native(&recs[i][j], ref + (i * C + j) * BE_SIZE);
    memset(back, 0xEE, sizeof back);
    if (CHECK_OK(zarr_array_read(a, 2, zero2, all, back, sizeof back))) CHECK_BYTES(back, ref, R * C, BE_SIZE);
    {   /* read_fields y alone: native doubles, y untouched by the field writes */
        const char *names[] = {"y"};
        double y[R * C];
        int ok = CHECK_OK(zarr_array_read_fields(a, 2, zero2, all, names, 1, y, sizeof y));
        for (int i = 0; ok && i < R * C; i++)
            if (!CHECK(y[i] == recs[i / C][i % C].y)) break;
    }
    /* Chunk 0.0 = (0,0), (0,1); chunk 1.1 = (1,2) plus an overhang slot; all big-endian. */
    be_stored(&recs[0][0], stored);
    be_stored(&recs[0][1], stored + BE_SIZE);
    raw = file_read(strf("%s/be/0.0", dir), &len);
    if (CHECK(raw != NULL) && CHECK_U64_EQ(len, 2 * BE_SIZE)) CHECK_BYTES(raw, stored, 2, BE_SIZE);
    free(raw);
    be_stored(&recs[1][2], stored);
    raw = file_read(strf("%s/be/1.1", dir), &len);
    if (CHECK(raw != NULL) && CHECK_U64_EQ(len, 2 * BE_SIZE)) CHECK_BYTES(raw, stored, 1, BE_SIZE);
    free(raw);
    /* Chunk 1.0 did not exist before the field write: (1,0) is the fill, (1,1) fill + w, x. */
    be_stored(&recs[1][0], stored);
    be_stored(&recs[1][1], stored + BE_SIZE);
    raw = file_read(strf("%s/be/1.0", dir), &len);
    if (CHECK(raw != NULL) && CHECK_U64_EQ(len, 2 * BE_SIZE)) CHECK_BYTES(raw, stored, 2, BE_SIZE);
    free(raw);
    zarray = read_zarray(dir, "be");
    CHECK_MEMBER(zarray, "dtype", BE_JSON);
    CHECK_MEMBER(zarray, "fill_value", strf("\"%s\"", fill_b64));
    free(zarray);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* Nested records and sub-arrays: getters on DEEP_JSON and a sub-array-only record. */
static void test_nested_fields(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "d", "{\"shape\":[2],\"chunks\":[2],\"dtype\":" DEEP_JSON "}") : NULL;
    size_t count = 0, offset = 0, size = 0, ndim = 0;
    char *name = NULL, *typestr = NULL, *json = NULL;
    if (!a) goto out;
    if (CHECK_OK(zarr_array_field_count(a, &count))) CHECK_U64_EQ(count, 2);
    if (CHECK_OK(zarr_array_field(a, 1, &name, &typestr, &offset, &size, &ndim))) {
        CHECK_STR_EQ(name, "q");
        CHECK_JSON_CANON_EQ(typestr, "[[\"r\",[[\"deep\",\"<U1\",[2]]]]]");
        CHECK_U64_EQ(offset, 1);
        CHECK_U64_EQ(size, 8);
        CHECK_U64_EQ(ndim, 0);
        zarr_string_free(name);
        zarr_string_free(typestr);
    }
    if (CHECK_OK(zarr_array_fields_json(a, &json)))
        CHECK_JSON_CANON_EQ(json,
                            "[{\"name\":\"p\",\"dtype\":\"|u1\",\"offset\":0,\"itemsize\":1,\"shape\":[]},"
                            "{\"name\":\"q\",\"dtype\":[[\"r\",[[\"deep\",\"<U1\",[2]]]]],\"offset\":1,\"itemsize\":8,"
                            "\"shape\":[],\"fields\":[{\"name\":\"r\",\"dtype\":[[\"deep\",\"<U1\",[2]]],\"offset\":0,"
                            "\"itemsize\":8,\"shape\":[],\"fields\":[{\"name\":\"deep\",\"dtype\":\"<U1\",\"offset\":0,"
                            "\"itemsize\":8,\"shape\":[2]}]}]}]");
    zarr_string_free(json);
    {   /* Round trip of the deep record: read_fields q gives the two code units natively. */
        unsigned char rec[2 * 9], back[2 * 9];
        uint32_t units[2] = {0x1D11E, 0x41}, q[4];
        uint64_t zero = 0, two = 2;
        const char *names[] = {"q"};
        for (int i = 0; i < 2; i++) {
            rec[i * 9] = (unsigned char)(200 + i);
            memcpy(rec + i * 9 + 1, units, 8);
        }
        CHECK_OK(zarr_array_write(a, 1, &zero, &two, rec, sizeof rec));
        if (CHECK_OK(zarr_array_read(a, 1, &zero, &two, back, sizeof back))) CHECK_BYTES(back, rec, 2, 9);
        if (CHECK_OK(zarr_array_read_fields(a, 1, &zero, &two, names, 1, q, sizeof q)))
            CHECK(q[0] == 0x1D11E && q[1] == 0x41 && q[2] == 0x1D11E && q[3] == 0x41);
    }
    /* zarr_array_field errors: index past the end, NULL outputs (nothing is handed out). */
    name = typestr = (char *)"sentinel";
    CHECK_STATUS(zarr_array_field(a, 2, &name, &typestr, &offset, &size, &ndim), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_field(a, (size_t)-1, &name, &typestr, &offset, &size, &ndim), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_field(NULL, 0, &name, &typestr, &offset, &size, &ndim), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_field(a, 0, NULL, &typestr, &offset, &size, &ndim), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_field(a, 0, &name, NULL, &offset, &size, &ndim), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_field(a, 0, &name, &typestr, NULL, &size, &ndim), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_field(a, 0, &name, &typestr, &offset, NULL, &ndim), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_field(a, 0, &name, &typestr, &offset, &size, NULL), ZARR_ERR_NULL_POINTER);
    CHECK(strcmp(name, "sentinel") == 0 && strcmp(typestr, "sentinel") == 0);
    CHECK_STATUS(zarr_array_field_count(NULL, &count), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_field_count(a, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_fields_json(NULL, &json), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_fields_json(a, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_dtype_string(NULL, &json), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_array_dtype_string(a, NULL), ZARR_ERR_NULL_POINTER);
    CHECK_OK(zarr_array_close(a));
    /* On a non-structured array, field 0 does not exist. */
    a = create_array(s, "plain", "{\"shape\":[2],\"chunks\":[2],\"dtype\":\"|S4\"}");
    if (a) CHECK_STATUS(zarr_array_field(a, 0, &name, &typestr, &offset, &size, &ndim), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(name, "sentinel") == 0);
    CHECK_OK(zarr_array_close(a));
out:
    CHECK_OK(zarr_store_close(s));
}

/* Every error of read_fields/write_fields; nothing is read into or written by a failed call. */
static void test_field_errors(void) {
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = s ? create_array(s, "rec", "{\"shape\":[4],\"chunks\":[3],\"dtype\":" REC_JSON "}") : NULL;
    zarr_array *plain = s ? create_array(s, "plain", "{\"shape\":[4],\"chunks\":[3],\"dtype\":\"<i4\"}") : NULL;
    zarr_array *bytes = s ? create_array(s, "bytes", "{\"shape\":[4],\"chunks\":[3],\"dtype\":\"|S10\"}") : NULL;
    unsigned char ref[4 * REC_SIZE], back[4 * REC_SIZE], buf[4 * REC_SIZE + 8], guard[4 * REC_SIZE + 8];
    uint64_t zero = 0, four = 4, two = 2, three = 3, start2[2] = {0, 0}, count2[2] = {1, 1};
    const char *ua[] = {"u", "a"}, *nope[] = {"a", "nope"}, *rep[] = {"a", "u", "a"}, *nested[] = {"s"},
               *with_null[] = {"a", NULL}, *bad_utf8[] = {"\xff\xfe"}, *empty[] = {""}, *one[] = {"a"};
    if (!a || !plain || !bytes) goto out;
    for (int i = 0; i < 4; i++) {
        struct rec r = rec_gen(10 + i);
        rec_native(&r, ref + i * REC_SIZE);
    }
    if (!CHECK_OK(zarr_array_write(a, 1, &zero, &four, ref, sizeof ref))) goto out;
    memset(guard, 0x5A, sizeof guard);
    memcpy(buf, guard, sizeof buf);

#define BOTH(expr_read, expr_write, want)  \
    do {                                   \
        CHECK_STATUS(expr_read, want);     \
        CHECK_STATUS(expr_write, want);    \
    } while (0)
    /* Unknown, repeated, nested-only and empty names; bad UTF-8 in a name. */
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, nope, 2, buf, 4 * 2),
         zarr_array_write_fields(a, 1, &zero, &four, nope, 2, buf, 4 * 2), ZARR_ERR_INVALID_ARGUMENT);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, rep, 3, buf, 4 * 12),
         zarr_array_write_fields(a, 1, &zero, &four, rep, 3, buf, 4 * 12), ZARR_ERR_INVALID_ARGUMENT);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, nested, 1, buf, 4 * 3),
         zarr_array_write_fields(a, 1, &zero, &four, nested, 1, buf, 4 * 3), ZARR_ERR_INVALID_ARGUMENT);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, empty, 1, buf, 4),
         zarr_array_write_fields(a, 1, &zero, &four, empty, 1, buf, 4), ZARR_ERR_INVALID_ARGUMENT);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, bad_utf8, 1, buf, 4),
         zarr_array_write_fields(a, 1, &zero, &four, bad_utf8, 1, buf, 4), ZARR_ERR_INVALID_ARGUMENT);
    /* Fields of arrays that have none. */
    BOTH(zarr_array_read_fields(plain, 1, &zero, &four, one, 1, buf, 4 * 2),
         zarr_array_write_fields(plain, 1, &zero, &four, one, 1, buf, 4 * 2), ZARR_ERR_INVALID_ARGUMENT);
    BOTH(zarr_array_read_fields(plain, 1, &zero, &four, one, 1, buf, 4 * 4),
         zarr_array_write_fields(plain, 1, &zero, &four, one, 1, buf, 4 * 4), ZARR_ERR_INVALID_ARGUMENT);
    BOTH(zarr_array_read_fields(bytes, 1, &zero, &four, one, 1, buf, 4 * 2),
         zarr_array_write_fields(bytes, 1, &zero, &four, one, 1, buf, 4 * 2), ZARR_ERR_INVALID_ARGUMENT);
    /* Buffer size: exactly count x (8 + 2) for {u, a}. */
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, ua, 2, buf, 4 * 10 - 1),
         zarr_array_write_fields(a, 1, &zero, &four, ua, 2, buf, 4 * 10 - 1), ZARR_ERR_BUFFER_SIZE);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, ua, 2, buf, 4 * 10 + 1),
         zarr_array_write_fields(a, 1, &zero, &four, ua, 2, buf, 4 * 10 + 1), ZARR_ERR_BUFFER_SIZE);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, ua, 2, buf, 4 * REC_SIZE),
         zarr_array_write_fields(a, 1, &zero, &four, ua, 2, buf, 4 * REC_SIZE), ZARR_ERR_BUFFER_SIZE);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, ua, 1, buf, 4 * 10),
         zarr_array_write_fields(a, 1, &zero, &four, ua, 1, buf, 4 * 10), ZARR_ERR_BUFFER_SIZE);
    /* NULL pointers: the array, start, count, the fields array, an entry in it, the buffer. */
    BOTH(zarr_array_read_fields(NULL, 1, &zero, &four, ua, 2, buf, 40),
         zarr_array_write_fields(NULL, 1, &zero, &four, ua, 2, buf, 40), ZARR_ERR_NULL_POINTER);
    BOTH(zarr_array_read_fields(a, 1, NULL, &four, ua, 2, buf, 40),
         zarr_array_write_fields(a, 1, NULL, &four, ua, 2, buf, 40), ZARR_ERR_NULL_POINTER);
    BOTH(zarr_array_read_fields(a, 1, &zero, NULL, ua, 2, buf, 40),
         zarr_array_write_fields(a, 1, &zero, NULL, ua, 2, buf, 40), ZARR_ERR_NULL_POINTER);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, NULL, 2, buf, 40),
         zarr_array_write_fields(a, 1, &zero, &four, NULL, 2, buf, 40), ZARR_ERR_NULL_POINTER);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, with_null, 2, buf, 40),
         zarr_array_write_fields(a, 1, &zero, &four, with_null, 2, buf, 40), ZARR_ERR_NULL_POINTER);
    BOTH(zarr_array_read_fields(a, 1, &zero, &four, ua, 2, NULL, 40),
         zarr_array_write_fields(a, 1, &zero, &four, ua, 2, NULL, 40), ZARR_ERR_NULL_POINTER);
    /* ndim mismatch and a box outside the shape. */
    BOTH(zarr_array_read_fields(a, 2, start2, count2, ua, 2, buf, 10),
         zarr_array_write_fields(a, 2, start2, count2, ua, 2, buf, 10), ZARR_ERR_INVALID_ARGUMENT);
    BOTH(zarr_array_read_fields(a, 1, &two, &three, ua, 2, buf, 30),
         zarr_array_write_fields(a, 1, &two, &three, ua, 2, buf, 30), ZARR_ERR_OUT_OF_BOUNDS);
#undef BOTH
    CHECK(memcmp(buf, guard, sizeof buf) == 0); /* no failed read touched the buffer */
    memset(back, 0xEE, sizeof back);
    if (CHECK_OK(zarr_array_read(a, 1, &zero, &four, back, sizeof back)))
        CHECK_BYTES(back, ref, 4, REC_SIZE); /* no failed write changed a record */
out:
    CHECK_OK(zarr_array_close(a));
    CHECK_OK(zarr_array_close(plain));
    CHECK_OK(zarr_array_close(bytes));
    CHECK_OK(zarr_store_close(s));
}

/* ---- UTF-8 <-> UTF-32 ---------------------------------------------------------------------- */

static void test_utf_conversion(void) {
    uint32_t out[4], guard[4];
    char text[32];
    size_t len;
    /* Round trips of every text, with exactly sized and generous buffers. */
    for (size_t t = 0; t < ARRAY_LEN(TEXTS); t++) {
        size_t n = strlen(TEXTS[t].utf8);
        CHECK_CTX("text #%zu", t);
        memset(out, 0xCD, sizeof out);
        if (CHECK_OK(zarr_utf8_to_utf32(TEXTS[t].utf8, n, out, 4))) CHECK_BYTES(out, TEXTS[t].units, 1, 16);
        len = 99;
        memset(text, 0, sizeof text);
        if (CHECK_OK(zarr_utf32_to_utf8(TEXTS[t].units, 4, text, n, &len)) && CHECK_U64_EQ(len, n))
            CHECK(memcmp(text, TEXTS[t].utf8, n) == 0);
        len = 99;
        if (CHECK_OK(zarr_utf32_to_utf8(TEXTS[t].units, 4, text, 16, &len))) CHECK_U64_EQ(len, n); /* 4 x nchars */
        if (n > 0) { /* one byte short */
            len = 99;
            memset(text, 0x11, sizeof text);
            CHECK_STATUS(zarr_utf32_to_utf8(TEXTS[t].units, 4, text, n - 1, &len), ZARR_ERR_BUFFER_SIZE);
            CHECK(len == 99 && (unsigned char)text[0] == 0x11);
        }
    }
    CHECK_CTX_CLEAR();
    /* utf8 -> utf32: the unused units are zeroed; more characters than units is refused. */
    memset(out, 0xCD, sizeof out);
    if (CHECK_OK(zarr_utf8_to_utf32("x" CLEF, 5, out, 4)))
        CHECK(out[0] == 'x' && out[1] == 0x1D11E && out[2] == 0 && out[3] == 0);
    memset(out, 0xCD, sizeof out);
    if (CHECK_OK(zarr_utf8_to_utf32(CLEF, 4, out, 1))) CHECK(out[0] == 0x1D11E && out[1] == 0xCDCDCDCDu);
    memset(guard, 0xCD, sizeof guard);
    memcpy(out, guard, sizeof out);
    CHECK_STATUS(zarr_utf8_to_utf32("abcde", 5, out, 4), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_utf8_to_utf32(EURO EURO, 6, out, 1), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_utf8_to_utf32("a", 1, out, 0), ZARR_ERR_BUFFER_SIZE);
    /* Invalid UTF-8: bad continuation, truncated sequence, encoded surrogate, beyond U+10FFFF,
     * overlong, lone continuation byte, 0xFF. */
    {
        static const char *const bad[] = {"\xC3\x28", "ab\xE2\x82", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                          "\xC0\xAF", "\x80", "a\xFF"};
        for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
            CHECK_CTX("bad UTF-8 #%zu", i);
            CHECK_STATUS(zarr_utf8_to_utf32(bad[i], strlen(bad[i]), out, 4), ZARR_ERR_INVALID_ARGUMENT);
        }
        CHECK_CTX_CLEAR();
    }
    CHECK(memcmp(out, guard, sizeof out) == 0); /* failures leave out untouched */
    CHECK_STATUS(zarr_utf8_to_utf32(NULL, 3, out, 4), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_utf8_to_utf32("abc", 3, NULL, 4), ZARR_ERR_NULL_POINTER);
    /* The length is what counts, not a NUL: "a\0b" is three characters. */
    if (CHECK_OK(zarr_utf8_to_utf32("a\0b", 3, out, 4))) CHECK(out[0] == 'a' && out[1] == 0 && out[2] == 'b');

    /* utf32 -> utf8: a zero unit ends the text (what follows is not looked at). */
    {
        static const uint32_t early[4] = {0x41, 0, 0x42, 0xD800};
        static const uint32_t zeros[3] = {0, 0, 0};
        len = 99;
        if (CHECK_OK(zarr_utf32_to_utf8(early, 4, text, sizeof text, &len)) && CHECK_U64_EQ(len, 1))
            CHECK(text[0] == 'A');
        len = 99;
        if (CHECK_OK(zarr_utf32_to_utf8(zeros, 3, text, sizeof text, &len))) CHECK_U64_EQ(len, 0);
        len = 99;
        if (CHECK_OK(zarr_utf32_to_utf8(early, 0, text, sizeof text, &len))) CHECK_U64_EQ(len, 0);
    }
    /* Invalid code units: surrogates and values past U+10FFFF. */
    {
        static const uint32_t bad[] = {0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0x110000, 0xFFFFFFFFu, 0x80000000u};
        for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
            uint32_t units[3] = {0x61, bad[i], 0x62};
            CHECK_CTX("code unit 0x%x", (unsigned)bad[i]);
            len = 99;
            memset(text, 0x11, sizeof text);
            CHECK_STATUS(zarr_utf32_to_utf8(units, 3, text, sizeof text, &len), ZARR_ERR_INVALID_ARGUMENT);
            CHECK(len == 99);
        }
        CHECK_CTX_CLEAR();
    }
    /* The boundaries of the valid range convert. */
    {
        static const uint32_t edge[4] = {0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
        static const char want[] = "\x7F\xDF\xBF\xEF\xBF\xBF\xF4\x8F\xBF\xBF";
        len = 99;
        if (CHECK_OK(zarr_utf32_to_utf8(edge, 4, text, sizeof text, &len)) && CHECK_U64_EQ(len, 10))
            CHECK(memcmp(text, want, 10) == 0);
    }
    CHECK_STATUS(zarr_utf32_to_utf8(NULL, 2, text, sizeof text, &len), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_utf32_to_utf8(TEXTS[0].units, 4, NULL, sizeof text, &len), ZARR_ERR_NULL_POINTER);
    CHECK_STATUS(zarr_utf32_to_utf8(TEXTS[0].units, 4, text, sizeof text, NULL), ZARR_ERR_NULL_POINTER);
}

/* ---- malformed create documents ------------------------------------------------------------ */

static void test_bad_types(void) {
    static const struct {
        const char *dtype, *fill; /* fill: the fill_value JSON, or NULL to leave it out */
        zarr_status want1, want2;
    } cases[] = {
        /* Malformed type strings. */
        {"\"<M8[xs]\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"<M8[0s]\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"<m8[s\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"<M8[]\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        /* Datetimes and timedeltas without a unit: the v2 spec says the unit MUST be given
         * (NumPy's generic unit; zarr-python writes them, libzarr reads them: test_unitless_times). */
        {"\"<M8\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\">m8\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[[\"a\",\"<i4\"],[\"t\",\"<M8\",[2]]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"<Ux\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        /* A zero-length string type: malformed, or valid NumPy but unsupported. */
        {"\"|S0\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_UNSUPPORTED},
        {"\"<U0\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_UNSUPPORTED},
        {"\"|V0\"", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_UNSUPPORTED},
        /* A record cannot hold variable-length objects in fixed-size elements. */
        {"[[\"o\",\"|O\"]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_UNSUPPORTED},
        {"[[\"i\",\"<i4\"],[\"o\",\"|O\"]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_UNSUPPORTED},
        /* Malformed records. */
        {"[]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[[\"a\",\"<i4\"],[\"a\",\"<f8\"]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[[\"a\",\"<i4\"],[\"in\",[[\"x\",\"|u1\"],[\"x\",\"|u1\"]]]]", NULL, ZARR_ERR_INVALID_METADATA,
         ZARR_ERR_INVALID_METADATA},
        {"[[\"in\",[]]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[[\"a\"]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[[\"a\",\"<i4\",[2],1]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[[\"a\",\"<i4\",2]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[[\"a\",\"<q4\"]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[[7,\"<i4\"]]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[\"a\"]", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"{\"a\":\"<i4\"}", NULL, ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        /* Fill values that do not fit the type. */
        {"\"|S3\"", "\"YWJjZA==\"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA}, /* 4 bytes */
        {"\"|S3\"", "\"not base64!\"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"|V3\"", "\"AAECAw==\"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA}, /* 4 bytes */
        {"[[\"a\",\">i2\"],[\"b\",\"|S1\"]]", "\"AAF6eg==\"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"[[\"a\",\">i2\"],[\"b\",\"|S1\"]]", "[1,\"z\"]", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"<U2\"", "\"abc\"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\">U1\"", "\"\\u00e9\\u20ac\"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"<U2\"", "5", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"<M8[s]\"", "\"2020-01-01\"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\"<M8[s]\"", "1.5", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\">m8[s]\"", "9223372036854775808", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
        {"\">m8[s]\"", "\"nat\"", ZARR_ERR_INVALID_METADATA, ZARR_ERR_INVALID_METADATA},
    };
    char *dir = tmpdir_make();
    zarr_store *s = open_store(dir, ZARR_MODE_WRITE);
    if (!s) goto out;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        zarr_array *a = (zarr_array *)&check_total; /* a sentinel: must stay untouched */
        const char *json = strf("{\"shape\":[4],\"chunks\":[2],\"dtype\":%s%s%s}", cases[i].dtype,
                                cases[i].fill ? ",\"fill_value\":" : "", cases[i].fill ? cases[i].fill : "");
        const char *path = strf("bad%zu", i);
        zarr_status st = zarr_array_create(s, path, json, &a);
        CHECK_CTX("%s", json);
        CHECK_STATUS2(st, cases[i].want1, cases[i].want2);
        if (st == ZARR_OK) { /* already reported */
            zarr_array_close(a);
            continue;
        }
        CHECK(a == (zarr_array *)&check_total);
        CHECK(!file_exists(strf("%s/%s/.zarray", dir, path))); /* nothing was created */
        a = NULL;
        CHECK_STATUS(zarr_array_open(s, path, &a), ZARR_ERR_NOT_FOUND);
        if (a) zarr_array_close(a);
    }
    CHECK_CTX_CLEAR();
    /* Fill values at the limits do fit: 2 characters of 7 UTF-8 bytes in U2, short S, NaT. */
    {
        static const char *const ok[] = {
            "{\"shape\":[1],\"chunks\":[1],\"dtype\":\"<U2\",\"fill_value\":\"\\u20ac\\ud834\\udd1e\"}",
            "{\"shape\":[1],\"chunks\":[1],\"dtype\":\"|S3\",\"fill_value\":\"\"}",
            "{\"shape\":[1],\"chunks\":[1],\"dtype\":\"<m8[s]\",\"fill_value\":-9223372036854775808}",
            "{\"shape\":[1],\"chunks\":[1],\"dtype\":\"<M8[s]\",\"fill_value\":9223372036854775807}",
        };
        for (size_t i = 0; i < ARRAY_LEN(ok); i++) {
            zarr_array *a = create_array(s, strf("ok%zu", i), ok[i]);
            CHECK_OK(zarr_array_close(a));
        }
    }
out:
    CHECK_OK(zarr_store_close(s));
    tmpdir_remove(dir);
}

/* Stored arrays of datetimes without a unit (as zarr-python writes them) are read: unit "",
 * multiple 1; only creating one is refused (test_bad_types), with a message naming the type. */
static void test_unitless_times(void) {
    static const char zarray[] = "{\"chunks\":[2],\"compressor\":null,\"dtype\":\"<M8\","
                                 "\"fill_value\":null,\"filters\":null,\"order\":\"C\",\"shape\":[2],"
                                 "\"zarr_format\":2}";
    const int64_t nat[2] = {INT64_MIN, INT64_MIN};
    int64_t got[2] = {0, 0};
    const uint64_t start[1] = {0}, count[1] = {2};
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = NULL;
    const char *unit = NULL;
    uint64_t multiple = 0;
    if (!s) return;
    CHECK_STATUS(zarr_array_create(s, "t", "{\"shape\":[2],\"chunks\":[2],\"dtype\":\"<m8\"}", &a),
                 ZARR_ERR_INVALID_METADATA);
    CHECK(strstr(zarr_last_error(), "<m8") != NULL && strstr(zarr_last_error(), "unit") != NULL);
    CHECK_OK(zarr_store_set(s, "g/.zarray", zarray, sizeof zarray - 1));
    CHECK_OK(zarr_store_set(s, "g/0", nat, sizeof nat));
    if (CHECK_OK(zarr_array_open(s, "g", &a))) {
        if (CHECK_OK(zarr_array_time_unit(a, &unit, &multiple))) {
            CHECK_STR_EQ(unit, "");
            CHECK_U64_EQ(multiple, 1);
        }
        if (CHECK_OK(zarr_array_read(a, 1, start, count, got, sizeof got))) CHECK(got[0] == INT64_MIN && got[1] == INT64_MIN);
        CHECK_OK(zarr_array_close(a));
    }
    CHECK_OK(zarr_store_close(s));
}

/* Long doubles (<f16, >c32) where `long double` is x87 extended precision in 16 bytes (x86-64
 * Linux, as NumPy's float128 there): values round trip through C `long double` with their 64-bit
 * precision; a missing chunk reads as the fill value. Elsewhere the type is refused. */
static void test_long_doubles(void) {
#if defined(__x86_64__) && defined(__linux__)
    zarr_store *s = open_store("memory:", ZARR_MODE_WRITE);
    zarr_array *a = create_array(s, "ld", "{\"shape\": [6], \"chunks\": [3], \"dtype\": \">f16\","
                                          " \"compressor\": {\"id\": \"zstd\"}, \"fill_value\": -2.5}");
    zarr_dtype_kind kind = -1;
    size_t itemsize = 0;
    if (a && CHECK_OK(zarr_array_dtype(a, &kind, &itemsize))) {
        CHECK(kind == ZARR_DTYPE_FLOAT && itemsize == sizeof(long double));
        /* An x87 long double fills 10 of its 16 bytes; the other 6 are stored as the buffer
         * holds them, so the values are copied into zeroed bytes (a compiler may leave the
         * padding of a long double variable undefined, which valgrind sees). */
        long double third = 1.0L / 3.0L, huge = -third * 1e300L * 1e300L, zero = 0.0L, back[6];
        unsigned char v[3 * sizeof(long double)] = {0};
        memcpy(v, &third, 10);
        memcpy(v + sizeof(long double), &huge, 10);
        memcpy(v + 2 * sizeof(long double), &zero, 10);
        uint64_t start[1] = {0}, count[1] = {3}, all[1] = {6};
        CHECK_OK(zarr_array_write(a, 1, start, count, v, sizeof v));
        if (CHECK_OK(zarr_array_read(a, 1, start, all, back, sizeof back))) {
            /* Every byte of the values, the 64-bit significand included (valgrind computes long
             * doubles with 53 bits, so the bytes are compared rather than the arithmetic). */
            for (int i = 0; i < 3; i++) CHECK(memcmp(&back[i], v + i * sizeof(long double), 10) == 0);
            CHECK(back[3] == -2.5L && back[5] == -2.5L);                       /* the fill value */
        }
        char *json = NULL;
        if (CHECK_OK(zarr_array_metadata_json(a, &json))) CHECK_JSON_HAS(json, "\"fill_value\":-2.5");
        zarr_string_free(json);
    }
    if (a) zarr_array_close(a);
    zarr_array *c = create_array(s, "lc", "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<c32\","
                                          " \"compressor\": null, \"fill_value\": [1.0, -1.0]}");
    if (c) {
        long double back[4];
        uint64_t start[1] = {0}, count[1] = {2};
        if (CHECK_OK(zarr_array_read(c, 1, start, count, back, sizeof back)))
            CHECK(back[0] == 1.0L && back[1] == -1.0L && back[2] == 1.0L && back[3] == -1.0L);
        zarr_array_close(c);
    }
    zarr_store_close(s);
#endif
}

int main(void) {
    /* numbers */
    test_all_dtypes();
    test_big_endian_values();
    test_null_fill_numbers();
    test_long_doubles();
    /* beyond numbers */
    test_type_getters();
    test_bytes();
    test_raw();
    test_unicode();
    test_times();
    test_time_units();
    test_null_fill_beyond_numbers();
    test_records();
    test_big_endian_records();
    test_nested_fields();
    test_field_errors();
    test_utf_conversion();
    test_bad_types();
    test_unitless_times();
    return check_summary("test_dtypes");
}
