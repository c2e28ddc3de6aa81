/* header_c99.c - zarr.h must compile as C99 with -pedantic and strict prototypes (the other
 * C tests are C11) and link. */
#include "zarr.h"

#include <stdio.h>
#include <string.h>

int main(void) {
    zarr_store *store = NULL;
    bool has = false;
    zarr_status st = zarr_store_open("memory:", ZARR_MODE_WRITE, &store);
    bool ok = strcmp(zarr_version(), "0.1.0") == 0 && st == ZARR_OK && store != NULL &&
              ZARR_CHECK_VERSION() == ZARR_OK &&
              zarr_has_feature("zarr_format:3", &has) == ZARR_OK && has;
    zarr_store_close(store);
    printf("header_c99: zarr %s, %s\n", zarr_version(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
