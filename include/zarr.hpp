/* libzarr for C++17: move-only handles that close themselves, errors as exceptions, typed
 * reads and writes. Header-only, over the C API of zarr.h (hand-written, not generated).
 *
 *   auto store = zarr::store::open("data.zarr", ZARR_MODE_WRITE);
 *   auto a = zarr::array::create(store, "t", R"({"shape": [4, 6], "chunks": [2, 3], "dtype": "<f8"})");
 *   a.write<double>({0, 0}, {4, 6}, values);            // values: std::vector<double> of 24
 *   std::vector<double> box = a.read<double>({1, 2}, {2, 3});
 *
 * Every failure throws zarr::error, which carries the status and zarr_last_error()'s message.
 * Typed calls check that the element type matches the array's data type (kind and size).
 */
#ifndef ZARR_HPP
#define ZARR_HPP

#include "zarr.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace zarr {

/** A libzarr failure: its status (`ZARR_ERR_*`) and message. */
class error : public std::runtime_error {
public:
    error(zarr_status status, const std::string &message)
        : std::runtime_error(std::string(zarr_status_name(status)) + ": " + message),
          status_(status) {}

    /** The status the C call returned. */
    zarr_status status() const noexcept { return status_; }

private:
    zarr_status status_;
};

namespace detail {

/** Throws zarr::error for a failed status. */
inline void check(zarr_status status) {
    if (status != ZARR_OK) throw error(status, zarr_last_error());
}

/** The string `get(handle, &out)` returns through `out`, copied and freed. */
template <class Handle>
std::string text(zarr_status (*get)(const Handle *, char **), const Handle *handle) {
    char *out = nullptr;
    check(get(handle, &out));
    std::string copy(out != nullptr ? out : "");
    zarr_string_free(out);
    return copy;
}

/** The data type kind of a C++ element type (0 for none). */
template <class T> constexpr zarr_dtype_kind kind_of() {
    if constexpr (std::is_same_v<T, bool>) return ZARR_DTYPE_BOOL;
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return ZARR_DTYPE_INT;
    else if constexpr (std::is_integral_v<T>) return ZARR_DTYPE_UINT;
    else if constexpr (std::is_floating_point_v<T>) return ZARR_DTYPE_FLOAT;
    else return 0;
}

/** A move-only owner of a C handle, closed by `Close` (its status ignored: use close()). */
template <class Handle, zarr_status (*Close)(Handle *)> class owner {
public:
    explicit owner(Handle *handle = nullptr) noexcept : handle_(handle) {}
    owner(owner &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    owner &operator=(owner &&other) noexcept {
        if (this != &other) {
            reset();
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    owner(const owner &) = delete;
    owner &operator=(const owner &) = delete;
    ~owner() { reset(); }

    Handle *get() const noexcept { return handle_; }

    /** Closes the handle now, throwing if closing fails (a zip store writes its archive). */
    void close() {
        Handle *handle = std::exchange(handle_, nullptr);
        check(Close(handle));
    }

private:
    void reset() noexcept {
        if (handle_ != nullptr) (void)Close(std::exchange(handle_, nullptr));
    }

    Handle *handle_;
};

/** An owned group or array handle with user attributes, read and replaced by `Get` and `Set`. */
template <class Handle, zarr_status (*Close)(Handle *), zarr_status (*Get)(const Handle *, char **),
          zarr_status (*Set)(Handle *, const char *)>
class node : public owner<Handle, Close> {
public:
    using owner<Handle, Close>::owner;

    /** The user attributes as JSON text. */
    std::string attributes() const { return text(Get, this->get()); }

    /** Replaces the user attributes with a JSON object. */
    void set_attributes(const std::string &json) { check(Set(this->get(), json.c_str())); }
};

} // namespace detail

/** An open store (`zarr_store_open_options`). */
class store : public detail::owner<zarr_store, zarr_store_close> {
public:
    using owner::owner;

    /** Opens `location` (a directory, `.zip`, `s3://`, ...) with optional JSON options. */
    static store open(const std::string &location, zarr_open_mode mode = ZARR_MODE_READ,
                      const std::string &options_json = "") {
        zarr_store *handle = nullptr;
        detail::check(zarr_store_open_options(location.c_str(), mode,
                                              options_json.empty() ? nullptr : options_json.c_str(),
                                              &handle));
        return store(handle);
    }
};

/** An open group. */
class group : public detail::node<zarr_group, zarr_group_close, zarr_group_attrs_get,
                                  zarr_group_attrs_set> {
public:
    using node::node;

    /** Opens the group at `path` ("" is the root). */
    static group open(const store &s, const std::string &path) {
        zarr_group *handle = nullptr;
        detail::check(zarr_group_open(s.get(), path.c_str(), &handle));
        return group(handle);
    }

    /** Creates a group (and missing ancestors) in Zarr format 2 or 3. */
    static group create(const store &s, const std::string &path, int32_t zarr_format = 2) {
        zarr_group *handle = nullptr;
        detail::check(zarr_group_create_format(s.get(), path.c_str(), zarr_format, &handle));
        return group(handle);
    }

    /** `{"arrays": [...], "groups": [...]}`: the direct members, names sorted. */
    std::string members_json() const {
        return detail::text(zarr_group_list, get());
    }

    /** The subtree as zarr-python prints `group.tree()`. */
    std::string tree() const {
        return detail::text(zarr_group_tree_text, get());
    }
};

/** An open array. */
class array : public detail::node<zarr_array, zarr_array_close, zarr_array_attrs_get,
                                  zarr_array_attrs_set> {
public:
    using node::node;

    /** Opens the array at `path`. */
    static array open(const store &s, const std::string &path) {
        zarr_array *handle = nullptr;
        detail::check(zarr_array_open(s.get(), path.c_str(), &handle));
        return array(handle);
    }

    /** Creates an array from its metadata document (`.zarray`, or a v3 `zarr.json`). */
    static array create(const store &s, const std::string &path, const std::string &metadata) {
        zarr_array *handle = nullptr;
        detail::check(zarr_array_create(s.get(), path.c_str(), metadata.c_str(), &handle));
        return array(handle);
    }

    /** The current shape. */
    std::vector<uint64_t> shape() const {
        size_t ndim = 0;
        detail::check(zarr_array_ndim(get(), &ndim));
        std::vector<uint64_t> out(ndim);
        detail::check(zarr_array_shape(get(), ndim, out.data()));
        return out;
    }

    /** The NumPy type string of the data type (`"<f8"`, `"|S10"`, ...). */
    std::string dtype() const {
        return detail::text(zarr_array_dtype_string, get());
    }

    /** Reads the box `start`/`count` into `out` (C order, `size` elements of T). */
    template <class T>
    void read(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count, T *out,
              size_t size) const {
        check_type<T>(start, count);
        detail::check(zarr_array_read(get(), start.size(), start.data(), count.data(), out,
                                      size * sizeof(T)));
    }

    /** Reads the box `start`/`count` into a new vector (C order). */
    template <class T>
    std::vector<T> read(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count) const {
        std::vector<T> out(elements(count));
        read(start, count, out.data(), out.size());
        return out;
    }

    /** Writes the box `start`/`count` from `data` (C order, `size` elements of T). */
    template <class T>
    void write(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
               const T *data, size_t size) {
        check_type<T>(start, count);
        detail::check(zarr_array_write(get(), start.size(), start.data(), count.data(), data,
                                       size * sizeof(T)));
    }

    /** Writes the box `start`/`count` from a vector (C order). */
    template <class T>
    void write(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
               const std::vector<T> &data) {
        write(start, count, data.data(), data.size());
    }

private:
    static size_t elements(const std::vector<uint64_t> &count) {
        uint64_t n = 1;
        for (uint64_t c : count) n *= c;
        return static_cast<size_t>(n);
    }

    /** Throws unless T matches the data type and start and count have one entry per dimension. */
    template <class T>
    void check_type(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count) const {
        static_assert(detail::kind_of<T>() != 0, "zarr::array reads and writes bool, integers and floats");
        zarr_dtype_kind kind = 0;
        size_t itemsize = 0;
        detail::check(zarr_array_dtype(get(), &kind, &itemsize));
        if (kind != detail::kind_of<T>() || itemsize != sizeof(T))
            throw error(ZARR_ERR_INVALID_ARGUMENT,
                        "the array holds " + dtype() + ", not elements of " +
                            std::to_string(sizeof(T)) + " bytes of this kind");
        if (start.size() != count.size())
            throw error(ZARR_ERR_INVALID_ARGUMENT,
                        "start has " + std::to_string(start.size()) + " entries, count " +
                            std::to_string(count.size()));
    }
};

} // namespace zarr

#endif /* ZARR_HPP */
