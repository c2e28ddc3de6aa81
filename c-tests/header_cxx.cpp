// header_cxx.cpp - zarr.h must compile as C++ (extern "C", no C-only constructs) and link.
#include "zarr.h"

#include <cstdio>
#include <cstring>

int main() {
    zarr_store *store = nullptr;
    zarr_status st = zarr_store_open("memory:", ZARR_MODE_WRITE, &store);
    bool ok = std::strcmp(zarr_version(), "0.1.0") == 0 && st == ZARR_OK && store != nullptr &&
              std::strcmp(zarr_status_name(ZARR_ERR_NOT_FOUND), "ZARR_ERR_NOT_FOUND") == 0;
    zarr_store_close(store);
    std::printf("header_cxx: zarr %s, %s\n", zarr_version(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
