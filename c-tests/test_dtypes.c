/* test_dtypes.c - every data type of the contract in both byte orders: dtype inspection,
 * fill values (NaN, infinities, negatives, null), round trips, and the stored bytes (the
 * caller always sees native values; the chunk holds the declared byte order). */
#include "testutil.h"

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

static int host_is_little(void) {
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Converts one native element to its stored form for the typestr's byte order. */
static void to_stored_order(const struct dtype_case *c, const unsigned char *native, unsigned char *out) {
    int little = c->typestr[0] != '>';
    size_t part = c->kind == ZARR_DTYPE_COMPLEX ? c->itemsize / 2 : c->itemsize;
    for (size_t off = 0; off < c->itemsize; off += part)
        for (size_t i = 0; i < part; i++)
            out[off + i] = native[off + (little == host_is_little() ? i : part - 1 - i)];
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

/* fill_value null: reported as not set, with zero bytes. */
static void test_null_fill(void) {
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

int main(void) {
    test_all_dtypes();
    test_big_endian_values();
    test_null_fill();
    return check_summary("test_dtypes");
}
