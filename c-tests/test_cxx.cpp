// test_cxx.cpp - the C++17 wrapper zarr.hpp: handles that close themselves and move, errors as
// exceptions with status and message, typed reads and writes checked against the data type.
#include "zarr.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

static int failures = 0;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

// Runs f, which must throw zarr::error with `status` and a message containing `says`.
template <class F> static void expect_error(F f, zarr_status status, const std::string &says) {
    try {
        f();
        std::fprintf(stderr, "no error, expected %s\n", zarr_status_name(status));
        failures++;
    } catch (const zarr::error &e) {
        CHECK(e.status() == status);
        if (std::string(e.what()).find(says) == std::string::npos) {
            std::fprintf(stderr, "message %s lacks %s\n", e.what(), says.c_str());
            failures++;
        }
    }
}

int main() {
    zarr::store store = zarr::store::open("memory:", ZARR_MODE_WRITE);
    zarr::group root = zarr::group::create(store, "", 3);
    root.set_attributes(R"({"title": "test"})");
    CHECK(root.attributes().find("\"title\"") != std::string::npos);

    zarr::array a = zarr::array::create(
        store, "g/t", R"({"shape": [4, 6], "chunks": [2, 4], "dtype": "<f8", "fill_value": "NaN"})");
    CHECK((a.shape() == std::vector<uint64_t>{4, 6}));
    CHECK(a.dtype() == "<f8");
    std::vector<double> values(24);
    for (size_t i = 0; i < values.size(); i++) values[i] = 0.5 * static_cast<double>(i);
    a.write<double>({0, 0}, {4, 6}, values);
    std::vector<double> box = a.read<double>({1, 2}, {2, 3});
    CHECK((box == std::vector<double>{4.0, 4.5, 5.0, 7.0, 7.5, 8.0}));
    a.set_attributes(R"({"units": "K"})");
    CHECK(a.attributes() == R"({"units": "K"})");

    // Moving hands the handle over; the moved-from one closes nothing.
    zarr::array moved = std::move(a);
    CHECK(a.get() == nullptr && moved.get() != nullptr);
    CHECK(moved.read<double>({3, 5}, {1, 1})[0] == 11.5);
    moved.close();
    CHECK(moved.get() == nullptr);

    zarr::array counts = zarr::array::create(
        store, "counts", R"({"shape": [5], "chunks": [2], "dtype": ">i2"})");
    int16_t small[5] = {-3, -2, -1, 0, 1};
    counts.write<int16_t>({0}, {5}, small, 5);
    int16_t back[5] = {0, 0, 0, 0, 0};
    counts.read<int16_t>({0}, {5}, back, 5);
    CHECK(back[0] == -3 && back[4] == 1);

    std::string tree = zarr::group::open(store, "").tree();
    CHECK(tree.find("counts (5,) >i2") != std::string::npos);
    CHECK(tree.find("t (4, 6) float64") != std::string::npos);
    CHECK(zarr::group::open(store, "g").members_json() == R"({"arrays":["t"],"groups":[]})");

    // Errors: the status and the message naming what failed.
    expect_error([&] { zarr::array::open(store, "nope"); }, ZARR_ERR_NOT_FOUND, "nope");
    expect_error([&] { counts.read<int32_t>({0}, {5}); }, ZARR_ERR_INVALID_ARGUMENT, ">i2");
    expect_error([&] { counts.read<int16_t>({3}, {5}); }, ZARR_ERR_OUT_OF_BOUNDS, "");
    expect_error([&] { counts.read<int16_t>({0, 0}, {5}); }, ZARR_ERR_INVALID_ARGUMENT, "start has 2");
    expect_error([] { zarr::store::open("/nonexistent/store.zarr"); }, ZARR_ERR_NOT_FOUND,
                 "/nonexistent/store.zarr");
    std::printf("test_cxx: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
