# libzarr from Julia through ccall: an example, NOT TESTED (Julia cannot be installed on the
# machines this project is built and tested on). It follows the C API as the R demo
# (bindings/r) and the Python binding (bindings/python), which are tested.
#
#   julia example.jl /path/to/libzarr.so data.zarr temperature

const libzarr = ARGS[1]

function check(status, what)
    status == 0 && return
    message = unsafe_string(ccall((:zarr_last_error, libzarr), Cstring, ()))
    error("$what: $message")
end

store = Ref{Ptr{Cvoid}}(C_NULL)
check(ccall((:zarr_store_open, libzarr), Int32, (Cstring, Int32, Ptr{Ptr{Cvoid}}),
            ARGS[2], 0, store), "zarr_store_open")
array = Ref{Ptr{Cvoid}}(C_NULL)
check(ccall((:zarr_array_open, libzarr), Int32, (Ptr{Cvoid}, Cstring, Ptr{Ptr{Cvoid}}),
            store[], ARGS[3], array), "zarr_array_open")
ndim = Ref{Csize_t}(0)
check(ccall((:zarr_array_ndim, libzarr), Int32, (Ptr{Cvoid}, Ptr{Csize_t}), array[], ndim),
      "zarr_array_ndim")
shape = zeros(UInt64, ndim[])
check(ccall((:zarr_array_shape, libzarr), Int32, (Ptr{Cvoid}, Csize_t, Ptr{UInt64}),
            array[], ndim[], shape), "zarr_array_shape")
kind, itemsize = Ref{Int32}(0), Ref{Csize_t}(0)
check(ccall((:zarr_array_dtype, libzarr), Int32, (Ptr{Cvoid}, Ptr{Int32}, Ptr{Csize_t}),
            array[], kind, itemsize), "zarr_array_dtype")
(kind[] == 4 && itemsize[] == 8) || error("this example reads float64 (<f8) arrays only")

# Julia arrays are column-major: read into the reversed shape (no value moves), then
# permutedims for zarr-python's index order.
values = zeros(Float64, reverse(Int.(shape))...)
start = zeros(UInt64, ndim[])
check(ccall((:zarr_array_read, libzarr), Int32,
            (Ptr{Cvoid}, Csize_t, Ptr{UInt64}, Ptr{UInt64}, Ptr{Cvoid}, Csize_t),
            array[], ndim[], start, shape, values, sizeof(values)), "zarr_array_read")
a = permutedims(values, ndims(values):-1:1)
println("read $(ARGS[3]): size $(size(a)), first value $(first(a))")

ccall((:zarr_array_close, libzarr), Int32, (Ptr{Cvoid},), array[])
ccall((:zarr_store_close, libzarr), Int32, (Ptr{Cvoid},), store[])
