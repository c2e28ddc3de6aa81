/* check.h - tiny assertion helpers shared by the libzarr C tests.
 *
 * Every CHECK_* macro counts one check, prints file:line and the reason on failure
 * (for status checks: the status name and zarr_last_error()), and evaluates to 1 when
 * the check passed, so a test can bail out early:  if (!CHECK_OK(...)) return;
 * main() ends with `return check_summary("name");`, which is nonzero on any failure.
 * CHECK_CTX(...) names the case being run (a dtype, a codec...); failures print it;
 * CHECK_CTX_CLEAR() forgets it. */
#ifndef ZARR_C_TESTS_CHECK_H
#define ZARR_C_TESTS_CHECK_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw, pthreads with -std=c11 */
#endif

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "zarr.h"

static int check_total;
static int check_failed;
static char check_ctx[256];

/* Sets the context printed with failures (printf-style). */
#define CHECK_CTX(...) snprintf(check_ctx, sizeof check_ctx, __VA_ARGS__)
#define CHECK_CTX_CLEAR() (check_ctx[0] = '\0')

static inline int check_fail_at(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    check_failed++;
    fprintf(stderr, "%s:%d: FAILED%s%s%s: ", file, line, check_ctx[0] ? " [" : "", check_ctx,
            check_ctx[0] ? "]" : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 0;
}

static inline int check_true(int ok, const char *expr, const char *file, int line) {
    check_total++;
    return ok ? 1 : check_fail_at(file, line, "%s", expr);
}

/* Passes when `got` equals `want1` or `want2` (pass the same value twice for one). */
static inline int check_status(zarr_status got, zarr_status want1, zarr_status want2,
                               const char *expr, const char *file, int line) {
    check_total++;
    if (got == want1 || got == want2) return 1;
    if (want1 == want2)
        return check_fail_at(file, line, "%s -> %s (%d), expected %s; last error: \"%s\"", expr,
                             zarr_status_name(got), (int)got, zarr_status_name(want1),
                             zarr_last_error());
    return check_fail_at(file, line, "%s -> %s (%d), expected %s or %s; last error: \"%s\"",
                         expr, zarr_status_name(got), (int)got, zarr_status_name(want1),
                         zarr_status_name(want2), zarr_last_error());
}

/* Passes on any error status (the contract leaves the exact code open). */
static inline int check_error(zarr_status got, const char *expr, const char *file, int line) {
    check_total++;
    if (got < 0) return 1;
    return check_fail_at(file, line, "%s -> %s (%d), expected an error", expr,
                         zarr_status_name(got), (int)got);
}

static inline int check_str_eq(const char *got, const char *want, const char *expr,
                               const char *file, int line) {
    check_total++;
    if (got && want && strcmp(got, want) == 0) return 1;
    return check_fail_at(file, line, "%s: got \"%s\", expected \"%s\"", expr,
                         got ? got : "(null)", want ? want : "(null)");
}

static inline int check_contains(const char *hay, const char *needle, int want, const char *expr,
                                 const char *file, int line) {
    check_total++;
    if (hay && (strstr(hay, needle) != NULL) == want) return 1;
    return check_fail_at(file, line, "%s: \"%s\" %s \"%s\"", expr, hay ? hay : "(null)",
                         want ? "does not contain" : "contains", needle);
}

static inline int check_u64_eq(uint64_t got, uint64_t want, const char *expr, const char *file,
                               int line) {
    check_total++;
    if (got == want) return 1;
    return check_fail_at(file, line, "%s: got %llu, expected %llu", expr,
                         (unsigned long long)got, (unsigned long long)want);
}

#define CHECK(cond) check_true(!!(cond), #cond, __FILE__, __LINE__)
#define CHECK_OK(expr) check_status((expr), ZARR_OK, ZARR_OK, #expr, __FILE__, __LINE__)
#define CHECK_STATUS(expr, want) check_status((expr), (want), (want), #expr, __FILE__, __LINE__)
#define CHECK_STATUS2(expr, want1, want2) \
    check_status((expr), (want1), (want2), #expr, __FILE__, __LINE__)
#define CHECK_ERR(expr) check_error((expr), #expr, __FILE__, __LINE__)
#define CHECK_STR_EQ(got, want) check_str_eq((got), (want), #got, __FILE__, __LINE__)
#define CHECK_CONTAINS(hay, needle) check_contains((hay), (needle), 1, #hay, __FILE__, __LINE__)
#define CHECK_NOT_CONTAINS(hay, needle) \
    check_contains((hay), (needle), 0, #hay, __FILE__, __LINE__)
#define CHECK_U64_EQ(got, want) \
    check_u64_eq((uint64_t)(got), (uint64_t)(want), #got " == " #want, __FILE__, __LINE__)

/* Prints the tally; returns the process exit code (0 only if every check passed). */
static inline int check_summary(const char *name) {
    printf("%s: %d checks, %d failed\n", name, check_total, check_failed);
    return check_failed == 0 && check_total > 0 ? 0 : 1;
}

#endif
