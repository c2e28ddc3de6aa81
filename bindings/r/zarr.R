# libzarr from R: a demo of the C API through .Call (bindings/r/zarr.c). Load the shared object
# built by `R CMD SHLIB` (scripts/r-test.sh), then:
#
#   x <- zarr_read("data.zarr", "temperature")   # an R array of the Zarr shape: x[i, j] is
#                                                  # zarr-python's a[i - 1, j - 1]
#   zarr_write("out.zarr", "m", matrix(1:6, 2))    # a "<f8" array of shape [2, 3]
#
# R arrays are column-major and Zarr's C order row-major: the C side reads with the shape
# reversed (no value moves) and aperm() turns it around here.

zarr_read <- function(location, path) {
  values <- .Call("zarr_r_read", as.character(location), as.character(path))
  dims <- dim(values)
  if (length(dims) <= 1) return(as.vector(values))
  aperm(values)
}

zarr_write <- function(location, path, values) {
  dims <- if (is.null(dim(values))) length(values) else dim(values)
  c_order <- if (length(dims) <= 1) as.double(values) else as.double(aperm(values))
  invisible(.Call("zarr_r_write", as.character(location), as.character(path), c_order,
                  as.double(dims)))
}
