/*
 * zarr_mpi.h: collective Zarr I/O over MPI (libzarr_mpi, a C layer over zarr.h).
 *
 * Every call is collective over `comm`: all its ranks call it, with the same store, path and
 * metadata. Every rank returns the same status; when ranks fail differently, the status and the
 * message (`zarr_last_error`) of the lowest failing rank. Output handles are written only on
 * success, on every rank.
 *
 * Writes are two-phase, as ROMIO's and HDF5's collective I/O: each chunk (each shard of a
 * sharded v3 array) has one owner rank; the pieces the ranks give travel to its owner, which
 * merges them, reads what is stored only where they leave part of it uncovered, and writes it
 * once. The guide: docs/mpi.md.
 */
#ifndef ZARR_MPI_H
#define ZARR_MPI_H

#include <mpi.h>

#include "zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Opens the store at `location` on every rank of `comm` (as `zarr_store_open_options`;
 * `options_json` may be NULL). Rank 0 opens it first, creating or emptying it as `mode` says
 * and reading its consolidated metadata; the other ranks then open it without changing it
 * and answer metadata lookups from rank 0's consolidated metadata: the requests of one rank.
 */
zarr_status zarr_mpi_store_open(MPI_Comm comm, const char *location, zarr_open_mode mode,
                                const char *options_json, zarr_store **out_store);

/**
 * Creates the array at `path` (as `zarr_array_create`): rank 0 writes its metadata, and every
 * rank gets a handle on it once it is stored, from the document rank 0 sends (no rank reads
 * it back).
 */
zarr_status zarr_mpi_array_create(MPI_Comm comm, zarr_store *store, const char *path,
                                  const char *metadata_json, zarr_array **out_array);

/**
 * Opens the array at `path`: rank 0 reads its metadata and sends it to the others, so that N
 * ranks opening an array cost the requests of one.
 */
zarr_status zarr_mpi_array_open(MPI_Comm comm, zarr_store *store, const char *path,
                                zarr_array **out_array);

/**
 * Writes each rank's box `start`/`count` (`ndim` entries each; C order, native byte order,
 * `data_size` bytes) as one collective write: boxes of different ranks may share chunks and
 * shards but not elements; a rank with nothing to write gives a zero `count` (`data` may then
 * be NULL). Each chunk or shard is written once, by its owner rank; the result equals a serial
 * write of every box. A bad argument on any rank fails every rank before anything is written.
 * Fixed-size types only (object arrays: `ZARR_ERR_UNSUPPORTED`).
 */
zarr_status zarr_mpi_array_write_all(MPI_Comm comm, zarr_array *array, size_t ndim,
                                     const uint64_t *start, const uint64_t *count,
                                     const void *data, size_t data_size);

/**
 * Reads each rank's box `start`/`count` into `out` (`out_size` bytes) as one collective read:
 * each chunk or shard needed is read and decoded once, by its owner rank, which sends each
 * rank its part.
 */
zarr_status zarr_mpi_array_read_all(MPI_Comm comm, zarr_array *array, size_t ndim,
                                    const uint64_t *start, const uint64_t *count, void *out,
                                    size_t out_size);

/**
 * For the Fortran module (`use zarr_mpi`, fortran/zarr_mpi.f90): the calls above with a Fortran
 * communicator (`MPI_Fint`, as the `mpi` module's integers; `MPI_Comm_f2c` converts it). The
 * collective ones take `local`, the status of the caller's own checks on this rank: any other
 * than ZARR_OK fails every rank with it (with the rank's `zarr_last_error`), so that a rank
 * that cannot take part still does.
 */
zarr_status zarr_mpi_store_open_f(MPI_Fint comm, const char *location, zarr_open_mode mode,
                                  const char *options_json, zarr_store **out_store);
/** `zarr_mpi_array_create` for Fortran (see `zarr_mpi_store_open_f`). */
zarr_status zarr_mpi_array_create_f(MPI_Fint comm, zarr_store *store, const char *path,
                                    const char *metadata_json, zarr_array **out_array);
/** `zarr_mpi_array_open` for Fortran (see `zarr_mpi_store_open_f`). */
zarr_status zarr_mpi_array_open_f(MPI_Fint comm, zarr_store *store, const char *path,
                                  zarr_array **out_array);
/** `zarr_mpi_array_write_all` for Fortran, after the caller's checks gave `local`. */
zarr_status zarr_mpi_array_write_all_f(MPI_Fint comm, zarr_status local, zarr_array *array,
                                       size_t ndim, const uint64_t *start, const uint64_t *count,
                                       const void *data, size_t data_size);
/** `zarr_mpi_array_read_all` for Fortran, after the caller's checks gave `local`. */
zarr_status zarr_mpi_array_read_all_f(MPI_Fint comm, zarr_status local, zarr_array *array,
                                      size_t ndim, const uint64_t *start, const uint64_t *count,
                                      void *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* ZARR_MPI_H */
