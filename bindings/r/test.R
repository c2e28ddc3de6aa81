# Tests the R demo (scripts/r-test.sh runs it): Rscript test.R SHARED_OBJECT ZARR_R_SOURCE DIR
# writes a matrix and a 3-D array from R, checks the stored chunk's bytes are C order of the
# Zarr shape, reads them back, reads the int16 array DIR/tool.zarr/i (shape [2, 5], fill value
# 7, made by the zarr tool) as R integers, and checks errors carry libzarr's message. Prints
# "ok ..." or stops with an error.
args <- commandArgs(trailingOnly = TRUE)
dyn.load(args[1])
source(args[2])
dir <- args[3]
store <- file.path(dir, "r.zarr")
unlink(store, recursive = TRUE)

m <- matrix(c(11, 21, 12, 22, 13, 23), nrow = 2)   # m[i, j] = 10 i + j, Zarr shape [2, 3]
zarr_write(store, "m", m)
raw <- readBin(file.path(store, "m", "0.0"), "double", n = 6)
stopifnot(identical(raw, c(11, 12, 13, 21, 22, 23)))  # C order: row by row
back <- zarr_read(store, "m")
stopifnot(identical(dim(back), c(2L, 3L)), identical(back, m))

cube <- array(as.double(1:24), dim = c(2, 3, 4))
zarr_write(store, "cube", cube)
stopifnot(identical(zarr_read(store, "cube"), cube))
stopifnot(identical(zarr_read(store, "cube")[2, 3, 4], 24))

v <- c(1.5, -2, 3)
zarr_write(store, "v", v)
stopifnot(identical(zarr_read(store, "v"), v))

i <- zarr_read(file.path(dir, "tool.zarr"), "i")
stopifnot(identical(i, matrix(7L, nrow = 2, ncol = 5)))

missing <- tryCatch(zarr_read(store, "nope"), error = function(e) conditionMessage(e))
stopifnot(grepl("zarr_array_open", missing), grepl("nope", missing))
unlink(store, recursive = TRUE)
cat("ok R reads and writes through libzarr\n")
