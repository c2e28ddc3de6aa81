/* libzarr from R through .Call (a demo of the C API from R, built with R CMD SHLIB; see
 * bindings/r/zarr.R for the R side and scripts/r-test.sh for the build).
 *
 * zarr_r_read(location, path) reads a whole array into an R vector: integers of up to 32 bits
 * (unsigned up to 16) and booleans as R integers and logicals, everything else numeric as
 * doubles (int64 and uint64 beyond 2^53 lose precision, as in R itself), with the Zarr shape
 * reversed as its "dim" (R arrays are column-major: no value moves; zarr.R's aperm gives the
 * Zarr order). zarr_r_write(location, path, values, shape) creates a "<f8" array of `shape`
 * (Zarr order) holding `values` in C order. Every failure is an R error with libzarr's message. */
#include <R.h>
#include <Rinternals.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zarr.h"

/* Stops with libzarr's message for a failed `what`, closing what is open. */
static void fail(const char *what, zarr_array *array, zarr_store *store) {
    char message[1024];
    snprintf(message, sizeof message, "%s: %s", what, zarr_last_error());
    zarr_array_close(array);
    zarr_store_close(store);
    Rf_error("%s", message);
}

/* Copies `n` values of `kind` and `itemsize` from `raw` (native order) into the R vector. */
static void to_r(SEXP out, const unsigned char *raw, size_t n, zarr_dtype_kind kind, size_t itemsize) {
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = raw + i * itemsize;
        double d = 0;
        int64_t s = 0;
        uint64_t u = 0;
        switch (kind) {
        case ZARR_DTYPE_BOOL: LOGICAL(out)[i] = *p != 0; continue;
        case ZARR_DTYPE_INT:
            if (itemsize == 1) s = *(const int8_t *)p;
            else if (itemsize == 2) { int16_t v; memcpy(&v, p, 2); s = v; }
            else if (itemsize == 4) { int32_t v; memcpy(&v, p, 4); s = v; }
            else memcpy(&s, p, 8);
            if (TYPEOF(out) == INTSXP) INTEGER(out)[i] = (int)s; else REAL(out)[i] = (double)s;
            continue;
        case ZARR_DTYPE_UINT:
            if (itemsize == 1) u = *p;
            else if (itemsize == 2) { uint16_t v; memcpy(&v, p, 2); u = v; }
            else if (itemsize == 4) { uint32_t v; memcpy(&v, p, 4); u = v; }
            else memcpy(&u, p, 8);
            if (TYPEOF(out) == INTSXP) INTEGER(out)[i] = (int)u; else REAL(out)[i] = (double)u;
            continue;
        default:
            if (itemsize == 4) { float v; memcpy(&v, p, 4); d = v; } else memcpy(&d, p, 8);
            REAL(out)[i] = d;
        }
    }
}

SEXP zarr_r_read(SEXP location, SEXP path) {
    zarr_store *store = NULL;
    zarr_array *array = NULL;
    if (zarr_store_open(CHAR(STRING_ELT(location, 0)), ZARR_MODE_READ, &store) != ZARR_OK)
        fail("zarr_store_open", NULL, NULL);
    if (zarr_array_open(store, CHAR(STRING_ELT(path, 0)), &array) != ZARR_OK)
        fail("zarr_array_open", NULL, store);
    size_t ndim = 0, itemsize = 0;
    zarr_dtype_kind kind = 0;
    if (zarr_array_ndim(array, &ndim) != ZARR_OK || zarr_array_dtype(array, &kind, &itemsize) != ZARR_OK)
        fail("zarr_array_dtype", array, store);
    bool numeric = kind == ZARR_DTYPE_BOOL || kind == ZARR_DTYPE_INT || kind == ZARR_DTYPE_UINT ||
                   (kind == ZARR_DTYPE_FLOAT && itemsize >= 4);
    if (!numeric) {
        zarr_array_close(array);
        zarr_store_close(store);
        Rf_error("zarr_r_read: only boolean, integer and 32- or 64-bit float arrays are read");
    }
    uint64_t shape[32], start[32] = {0};
    if (ndim > 32 || zarr_array_shape(array, ndim, shape) != ZARR_OK) fail("zarr_array_shape", array, store);
    size_t n = 1;
    for (size_t d = 0; d < ndim; d++) n *= (size_t)shape[d];
    unsigned char *raw = malloc(n * itemsize + 1);
    if (!raw) fail("allocating the values", array, store);
    if (zarr_array_read(array, ndim, start, shape, raw, n * itemsize) != ZARR_OK) {
        free(raw);
        fail("zarr_array_read", array, store);
    }
    SEXPTYPE type = kind == ZARR_DTYPE_BOOL ? LGLSXP
                    : (kind == ZARR_DTYPE_INT && itemsize <= 4) || (kind == ZARR_DTYPE_UINT && itemsize <= 2)
                        ? INTSXP
                        : REALSXP;
    SEXP out = PROTECT(Rf_allocVector(type, (R_xlen_t)n));
    to_r(out, raw, n, kind, itemsize);
    free(raw);
    zarr_array_close(array);
    zarr_store_close(store);
    if (ndim > 0) {
        SEXP dim = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)ndim));
        for (size_t d = 0; d < ndim; d++) INTEGER(dim)[d] = (int)shape[ndim - 1 - d];
        Rf_setAttrib(out, R_DimSymbol, dim);
        UNPROTECT(1);
    }
    UNPROTECT(1);
    return out;
}

SEXP zarr_r_write(SEXP location, SEXP path, SEXP values, SEXP shape) {
    size_t ndim = (size_t)XLENGTH(shape);
    if (ndim == 0 || ndim > 32) Rf_error("zarr_r_write: 1 to 32 dimensions");
    uint64_t dims[32], start[32] = {0};
    char list[32 * 24] = "", metadata[2 * sizeof list + 128];
    size_t n = 1, used = 0;
    for (size_t d = 0; d < ndim; d++) {
        dims[d] = (uint64_t)REAL(shape)[d];
        n *= (size_t)dims[d];
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%llu", d ? ", " : "",
                                 (unsigned long long)dims[d]);
    }
    /* One chunk holding the whole array, uncompressed. */
    snprintf(metadata, sizeof metadata,
             "{\"shape\": [%s], \"chunks\": [%s], \"dtype\": \"<f8\", \"compressor\": null}", list, list);
    if ((size_t)XLENGTH(values) != n) Rf_error("zarr_r_write: %zu values for a shape of %zu", (size_t)XLENGTH(values), n);
    zarr_store *store = NULL;
    zarr_array *array = NULL;
    if (zarr_store_open(CHAR(STRING_ELT(location, 0)), ZARR_MODE_WRITE, &store) != ZARR_OK)
        fail("zarr_store_open", NULL, NULL);
    if (zarr_array_create(store, CHAR(STRING_ELT(path, 0)), metadata, &array) != ZARR_OK)
        fail("zarr_array_create", NULL, store);
    if (zarr_array_write(array, ndim, start, dims, REAL(values), n * sizeof(double)) != ZARR_OK)
        fail("zarr_array_write", array, store);
    zarr_array_close(array);
    zarr_store_close(store);
    return R_NilValue;
}
