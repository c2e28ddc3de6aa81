/*
 * libzarr_mpi: collective Zarr I/O over MPI, a C layer over libzarr's public C API (zarr.h).
 *
 * Why C: the calls take an MPI_Comm, whose type each MPI implementation defines differently;
 * compiled by the MPI compiler wrapper, this layer takes it as the caller's own mpi.h declares
 * it, and libzarr itself needs no MPI (nor bindgen) to build.
 *
 * The grid: each chunk of the array (each shard of a sharded v3 array) is a block, found from
 * zarr_array_grid_shape and zarr_array_block_box, so regular and rectilinear grids alike. Block
 * b (numbered in C order over the grid) belongs to rank b % size. A collective write sends each
 * piece of a rank's box to the owner of its block; owners check that no two pieces overlap,
 * the ranks agree, and then each owner writes each of its blocks once (reading it first only
 * where the pieces leave part of it uncovered). A collective read sends the owners requests;
 * each reads a requested block once and answers every request for it.
 */
#include "zarr_mpi.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Agreement: every rank returns the lowest failing rank's status and message. ---------- */

/* The number of ranks of `comm` (at least 1). */
static int ranks(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size > 0 ? size : 1;
}

/* Sets the calling thread's last error to a formatted message; returns `status`. */
static zarr_status fail(zarr_status status, const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  zarr_set_last_error(message);
  return status;
}

/* The status every rank returns: OK when all succeeded, else the lowest failing rank's, whose
 * message becomes every rank's last error. */
static zarr_status agree(MPI_Comm comm, zarr_status status) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  size = ranks(comm);
  int mine = status == ZARR_OK ? size : rank, first;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return ZARR_OK;
  int agreed = status;
  MPI_Bcast(&agreed, 1, MPI_INT, first, comm);
  int length = 0;
  const char *message = rank == first ? zarr_last_error() : NULL;
  if (rank == first) length = (int)strlen(message) + 1;
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  char *text = malloc((size_t)length);
  if (text == NULL) return ZARR_ERR_TOO_LARGE;
  if (rank == first) memcpy(text, message, (size_t)length);
  MPI_Bcast(text, length, MPI_CHAR, first, comm);
  zarr_set_last_error(text);
  free(text);
  return agreed;
}

/* Sends rank 0's text (ignored on other ranks; NULL too) to every rank: `*out` a new string,
 * or NULL when rank 0's was. ZARR_ERR_TOO_LARGE when a rank cannot hold it. */
static zarr_status broadcast_text(MPI_Comm comm, const char *text, char **out) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  unsigned long long length = rank == 0 && text != NULL ? strlen(text) + 1 : 0;
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  *out = NULL;
  if (length == 0) return ZARR_OK;
  char *copy = malloc(length);
  if (copy != NULL && rank == 0) memcpy(copy, text, length);
  /* Sent in pieces an int counts: a document has no limit of its own. */
  for (unsigned long long at = 0; at < length; at += INT_MAX) {
    unsigned long long part = length - at < INT_MAX ? length - at : INT_MAX;
    if (copy != NULL) MPI_Bcast(copy + at, (int)part, MPI_CHAR, 0, comm);
  }
  *out = copy;
  return copy != NULL ? ZARR_OK
                      : fail(ZARR_ERR_TOO_LARGE, "cannot hold a document of %llu bytes", length);
}

/* ---- Opening and creating ----------------------------------------------------------------- */

/* The mode the other ranks open a store in once rank 0 opened it in `mode`: nothing created
 * or removed again (read-write as "r+", read-only as given), the flags kept, and consolidated
 * metadata not read (rank 0 sends its own). */
static zarr_open_mode follower_mode(zarr_open_mode mode) {
  zarr_open_mode flags = mode & ~(zarr_open_mode)15, access = mode & 15;
  return (access == ZARR_MODE_READ ? ZARR_MODE_READ : ZARR_MODE_UPDATE) | flags |
         ZARR_OPEN_IGNORE_CONSOLIDATED;
}

zarr_status zarr_mpi_store_open(MPI_Comm comm, const char *location, zarr_open_mode mode,
                                const char *options_json, zarr_store **out_store) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  zarr_store *store = NULL;
  char *consolidated = NULL, *shared = NULL;
  /* Rank 0 opens it first (creating or emptying it as `mode` says, reading its consolidated
   * metadata), then the others, which take rank 0's consolidated metadata: the requests of
   * one rank opening it alone. */
  zarr_status status = ZARR_OK;
  if (out_store == NULL)
    status = fail(ZARR_ERR_NULL_POINTER, "argument out_store is NULL");
  else if (rank == 0)
    status = zarr_store_open_options(location, mode, options_json, &store);
  status = agree(comm, status);
  if (status == ZARR_OK && rank == 0) status = zarr_store_consolidated_json(store, &consolidated);
  status = agree(comm, status);
  if (status == ZARR_OK) {
    status = broadcast_text(comm, consolidated, &shared);
    if (status == ZARR_OK && rank != 0) {
      status = zarr_store_open_options(location, follower_mode(mode), options_json, &store);
      if (status == ZARR_OK && shared != NULL)
        status = zarr_store_use_consolidated_json(store, shared);
    }
    status = agree(comm, status);
  }
  zarr_string_free(consolidated);
  free(shared);
  if (status != ZARR_OK) {
    zarr_store_close(store);
    return status;
  }
  *out_store = store;
  return ZARR_OK;
}

/* Every rank's handle on the array at `path`, whose metadata rank 0 read or wrote into its
 * handle `first` (NULL elsewhere) after the ranks agreed on `status`. */
static zarr_status share_array(MPI_Comm comm, zarr_status status, zarr_store *store,
                               const char *path, zarr_array *first, zarr_array **out_array) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  status = agree(comm, status);
  if (status != ZARR_OK) {
    zarr_array_close(first);
    return status;
  }
  char *document = NULL;
  if (rank == 0) status = zarr_array_opened_metadata_json(first, &document);
  status = agree(comm, status);
  if (status != ZARR_OK) {
    zarr_array_close(first);
    return status;
  }
  /* Every rank joins the broadcast, rank 0 included. */
  char *shared = NULL;
  status = broadcast_text(comm, document, &shared);
  zarr_string_free(document);
  zarr_array *array = first;
  if (status == ZARR_OK && rank != 0) status = zarr_array_open_metadata(store, path, shared, &array);
  free(shared);
  status = agree(comm, status);
  if (status != ZARR_OK) {
    zarr_array_close(array);
    return status;
  }
  *out_array = array;
  return ZARR_OK;
}

zarr_status zarr_mpi_array_create(MPI_Comm comm, zarr_store *store, const char *path,
                                  const char *metadata_json, zarr_array **out_array) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  zarr_array *first = NULL;
  zarr_status status = ZARR_OK;
  if (out_array == NULL || path == NULL) {
    status = fail(ZARR_ERR_NULL_POINTER, "argument %s is NULL", path ? "out_array" : "path");
  } else if (rank == 0) {
    status = zarr_array_create(store, path, metadata_json, &first);
  }
  return share_array(comm, status, store, path, first, out_array);
}

zarr_status zarr_mpi_array_open(MPI_Comm comm, zarr_store *store, const char *path,
                                zarr_array **out_array) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  zarr_array *first = NULL;
  zarr_status status = ZARR_OK;
  if (out_array == NULL || path == NULL) {
    status = fail(ZARR_ERR_NULL_POINTER, "argument %s is NULL", path ? "out_array" : "path");
  } else if (rank == 0) {
    status = zarr_array_open(store, path, &first);
  }
  return share_array(comm, status, store, path, first, out_array);
}

/* ---- The block grid ------------------------------------------------------------------------ */

typedef struct {
  size_t ndim;
  size_t itemsize;
  uint64_t *shape;
  uint64_t *grid;    /* blocks along each dimension */
  uint64_t **edges;  /* edges[d][i]: where block i starts along d; edges[d][grid[d]]: shape */
  uint64_t nblocks;  /* product of grid */
} grid_t;

static void grid_free(grid_t *g) {
  if (g->edges != NULL)
    for (size_t d = 0; d < g->ndim; d++) free(g->edges[d]);
  free(g->edges);
  free(g->shape);
  free(g->grid);
  memset(g, 0, sizeof *g);
}

/* The grid of `array`, which must have `ndim` dimensions and a fixed-size type. */
static zarr_status grid_of(zarr_array *array, size_t ndim, grid_t *g) {
  memset(g, 0, sizeof *g);
  size_t have = 0;
  zarr_dtype_kind kind;
  zarr_status status = zarr_array_ndim(array, &have);
  if (status == ZARR_OK) status = zarr_array_dtype(array, &kind, &g->itemsize);
  if (status != ZARR_OK) return status;
  if (have != ndim)
    return fail(ZARR_ERR_INVALID_ARGUMENT, "ndim %zu, but the array has %zu dimensions", ndim,
                have);
  if (ndim > 64)
    return fail(ZARR_ERR_UNSUPPORTED, "collective I/O of arrays of %zu dimensions (at most 64)",
                ndim);
  if (kind == ZARR_DTYPE_OBJECT)
    return fail(ZARR_ERR_UNSUPPORTED,
                "collective I/O of object arrays (variable-length items): use the vlen calls");
  g->ndim = ndim;
  size_t n = ndim > 0 ? ndim : 1;
  g->shape = calloc(n, sizeof *g->shape);
  g->grid = calloc(n, sizeof *g->grid);
  g->edges = calloc(n, sizeof *g->edges);
  uint64_t *first = calloc(n, sizeof *first), *one = calloc(n, sizeof *one);
  uint64_t *box_start = calloc(n, sizeof *box_start), *box_count = calloc(n, sizeof *box_count);
  if (!g->shape || !g->grid || !g->edges || !first || !one || !box_start || !box_count) {
    status = fail(ZARR_ERR_TOO_LARGE, "cannot hold the grid of %zu dimensions", ndim);
    goto done;
  }
  status = zarr_array_shape(array, ndim, g->shape);
  if (status == ZARR_OK) status = zarr_array_grid_shape(array, ndim, g->grid);
  if (status != ZARR_OK) goto done;
  /* A regular grid's edges are multiples of its block shape (zarr_array_chunks: the shard
   * shape of a sharded array); a rectilinear grid's, asked block by block. */
  int regular = zarr_array_chunks(array, ndim, box_count) == ZARR_OK;
  g->nblocks = 1;
  for (size_t d = 0; d < ndim; d++) {
    g->nblocks *= g->grid[d];
    one[d] = 1;
  }
  for (size_t d = 0; d < ndim && g->nblocks > 0; d++) {
    g->edges[d] = calloc(g->grid[d] + 1, sizeof **g->edges);
    if (g->edges[d] == NULL) {
      status = fail(ZARR_ERR_TOO_LARGE, "cannot hold a grid of %llu blocks",
                    (unsigned long long)g->grid[d]);
      goto done;
    }
    for (uint64_t i = 0; i < g->grid[d]; i++) {
      if (regular) {
        g->edges[d][i] = i * box_count[d];
        continue;
      }
      first[d] = i;
      status = zarr_array_block_box(array, ndim, first, one, box_start, box_count);
      if (status != ZARR_OK) goto done;
      g->edges[d][i] = box_start[d];
    }
    first[d] = 0;
    g->edges[d][g->grid[d]] = g->shape[d];
  }
done:
  free(first);
  free(one);
  free(box_start);
  free(box_count);
  if (status != ZARR_OK) grid_free(g);
  return status;
}

/* The first block along `d` that ends after `at`. */
static uint64_t block_at(const grid_t *g, size_t d, uint64_t at) {
  uint64_t lo = 0, hi = g->grid[d] - 1;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    if (g->edges[d][mid] <= at)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* Checks a rank's box against the array; `bytes` is what its buffer must hold. */
static zarr_status check_box(const grid_t *g, int rank, const uint64_t *start,
                             const uint64_t *count, const void *buffer, size_t buffer_size,
                             const char *buffer_name, uint64_t *volume) {
  *volume = 1;
  if (g->ndim > 0 && (start == NULL || count == NULL))
    return fail(ZARR_ERR_NULL_POINTER, "rank %d: argument %s is NULL", rank,
                start == NULL ? "start" : "count");
  for (size_t d = 0; d < g->ndim; d++) {
    if (count[d] > g->shape[d] || start[d] > g->shape[d] - count[d])
      return fail(ZARR_ERR_OUT_OF_BOUNDS,
                  "rank %d: the box from %llu of %llu elements along dimension %zu reaches "
                  "outside the array's %llu",
                  rank, (unsigned long long)start[d], (unsigned long long)count[d], d,
                  (unsigned long long)g->shape[d]);
    *volume *= count[d];
  }
  if (*volume > SIZE_MAX / g->itemsize || *volume * g->itemsize != buffer_size)
    return fail(ZARR_ERR_BUFFER_SIZE,
                "rank %d: %s holds %zu bytes; the box takes %llu elements of %zu bytes", rank,
                buffer_name, buffer_size, (unsigned long long)*volume, g->itemsize);
  if (*volume > 0 && buffer == NULL)
    return fail(ZARR_ERR_NULL_POINTER, "rank %d: argument %s is NULL", rank, buffer_name);
  return ZARR_OK;
}

/* ---- Pieces: a block's part of a box -------------------------------------------------------- */

/* A piece as it travels: its block, then its box (start, count: ndim each), then (writes and
 * read answers) its elements. */
typedef struct {
  uint64_t block;
  const uint64_t *start;
  const uint64_t *count;
  const unsigned char *data;
  int rank; /* where it came from, or goes to */
} piece_t;

static size_t header_bytes(size_t ndim) { return (1 + 2 * ndim) * sizeof(uint64_t); }

static uint64_t box_volume(size_t ndim, const uint64_t *count) {
  uint64_t v = 1;
  for (size_t d = 0; d < ndim; d++) v *= count[d];
  return v;
}

/* Copies the box `start`/`count` between a buffer holding the box `a_start`/`a_count` and one
 * holding `b_start`/`b_count` (from a to b when `to_b`), elements of `itemsize` bytes. */
static void copy_box(size_t ndim, size_t itemsize, const uint64_t *start, const uint64_t *count,
                     unsigned char *a, const uint64_t *a_start, const uint64_t *a_count,
                     unsigned char *b, const uint64_t *b_start, const uint64_t *b_count,
                     int to_b) {
  if (box_volume(ndim, count) == 0) return;
  if (ndim == 0) {
    memcpy(to_b ? b : a, to_b ? a : b, itemsize);
    return;
  }
  uint64_t index[64] = {0}; /* the position among the rows (all but the last dimension) */
  size_t run = (size_t)count[ndim - 1] * itemsize;
  for (;;) {
    uint64_t ao = 0, bo = 0;
    for (size_t d = 0; d < ndim; d++) {
      uint64_t at = start[d] + (d + 1 < ndim ? index[d] : 0);
      ao = ao * a_count[d] + (at - a_start[d]);
      bo = bo * b_count[d] + (at - b_start[d]);
    }
    if (to_b)
      memcpy(b + bo * itemsize, a + ao * itemsize, run);
    else
      memcpy(a + ao * itemsize, b + bo * itemsize, run);
    size_t d = ndim - 1;
    while (d > 0) {
      d--;
      if (++index[d] < count[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (ndim == 1) return;
  }
}

/* The blocks a box touches: calls `visit` with each block's number and the box's part of it. */
typedef void (*visit_fn)(void *context, uint64_t block, const uint64_t *start,
                         const uint64_t *count);

static void visit_blocks(const grid_t *g, const uint64_t *start, const uint64_t *count,
                         visit_fn visit, void *context) {
  size_t n = g->ndim;
  if (box_volume(n, count) == 0) return;
  uint64_t lo[64] = {0}, hi[64] = {0}, at[64] = {0}, pstart[64] = {0}, pcount[64] = {0};
  for (size_t d = 0; d < n; d++) {
    lo[d] = block_at(g, d, start[d]);
    hi[d] = block_at(g, d, start[d] + count[d] - 1);
    at[d] = lo[d];
  }
  for (;;) {
    uint64_t block = 0;
    for (size_t d = 0; d < n; d++) {
      block = block * g->grid[d] + at[d];
      uint64_t b0 = g->edges[d][at[d]], b1 = g->edges[d][at[d] + 1];
      uint64_t s = start[d] > b0 ? start[d] : b0;
      uint64_t e = start[d] + count[d] < b1 ? start[d] + count[d] : b1;
      pstart[d] = s;
      pcount[d] = e - s;
    }
    visit(context, block, pstart, pcount);
    size_t d = n;
    for (;;) {
      if (d == 0) return;
      d--;
      if (++at[d] <= hi[d]) break;
      at[d] = lo[d];
    }
  }
}

/* The box of block `block`. */
static void block_box(const grid_t *g, uint64_t block, uint64_t *start, uint64_t *count) {
  for (size_t d = g->ndim; d-- > 0;) {
    uint64_t i = block % g->grid[d];
    block /= g->grid[d];
    start[d] = g->edges[d][i];
    count[d] = g->edges[d][i + 1] - g->edges[d][i];
  }
}

/* ---- Exchanges ------------------------------------------------------------------------------ */

/* Packs pieces for each destination rank: the sizes first (`sizes[rank]`), then the bytes. */
typedef struct {
  const grid_t *g;
  int size;
  int with_data;               /* writes carry the elements */
  const unsigned char *source; /* the rank's box buffer */
  const uint64_t *box_start, *box_count;
  uint64_t first, end; /* the blocks of this round */
  size_t *sizes;       /* bytes per destination */
  unsigned char *out;  /* NULL while counting */
  size_t *offsets;     /* where each destination's next piece goes */
} pack_t;

static void pack_piece(void *context, uint64_t block, const uint64_t *start,
                       const uint64_t *count) {
  pack_t *p = context;
  if (block < p->first || block >= p->end) return;
  size_t n = p->g->ndim;
  int owner = (int)(block % (uint64_t)p->size);
  size_t bytes = header_bytes(n) +
                 (p->with_data ? (size_t)box_volume(n, count) * p->g->itemsize : 0);
  if (p->out == NULL) {
    p->sizes[owner] += bytes;
    return;
  }
  unsigned char *at = p->out + p->offsets[owner];
  uint64_t *header = (uint64_t *)at;
  header[0] = block;
  memcpy(header + 1, start, n * sizeof *start);
  memcpy(header + 1 + n, count, n * sizeof *count);
  if (p->with_data)
    copy_box(n, p->g->itemsize, start, count, (unsigned char *)p->source, p->box_start,
             p->box_count, at + header_bytes(n), start, count, 1);
  p->offsets[owner] += bytes;
}

/* An all-to-all exchange of byte buffers: `send` holds `send_sizes[r]` bytes for each rank r in
 * order; returns the bytes received (`*recv_sizes` per source rank, caller frees both). */
static zarr_status exchange(MPI_Comm comm, const unsigned char *send, const size_t *send_sizes,
                            unsigned char **recv, size_t **recv_sizes) {
  int size;
  size = ranks(comm);
  int *sc = calloc((size_t)size, sizeof *sc), *rc = calloc((size_t)size, sizeof *rc);
  int *sd = calloc((size_t)size, sizeof *sd), *rd = calloc((size_t)size, sizeof *rd);
  *recv_sizes = calloc((size_t)size, sizeof **recv_sizes);
  *recv = NULL;
  zarr_status status = ZARR_OK;
  if (!sc || !rc || !sd || !rd || !*recv_sizes) {
    status = fail(ZARR_ERR_TOO_LARGE, "cannot hold the exchange counts of %d ranks", size);
  }
  size_t total = 0;
  for (int r = 0; r < size && status == ZARR_OK; r++) {
    if (send_sizes[r] > INT_MAX || total > (size_t)INT_MAX - send_sizes[r])
      status = fail(ZARR_ERR_TOO_LARGE,
                    "one collective call sends more than 2 GiB from one rank (call it on "
                    "smaller boxes)");
    else {
      sc[r] = (int)send_sizes[r];
      sd[r] = (int)total;
      total += send_sizes[r];
    }
  }
  /* Every rank takes part in the exchange whatever its status; the sizes say who failed. */
  int failed = status != ZARR_OK, any_failed;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm);
  if (any_failed) {
    status = status != ZARR_OK ? status : ZARR_ERR_TOO_LARGE;
    goto done;
  }
  MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, comm);
  size_t received = 0;
  for (int r = 0; r < size; r++) {
    if (received > (size_t)INT_MAX - (size_t)rc[r]) {
      status = fail(ZARR_ERR_TOO_LARGE,
                    "one collective call sends more than 2 GiB to one rank (call it on "
                    "smaller boxes)");
    }
    rd[r] = (int)received;
    received += (size_t)rc[r];
    (*recv_sizes)[r] = (size_t)rc[r];
  }
  failed = status != ZARR_OK;
  if (!failed) {
    *recv = malloc(received > 0 ? received : 1);
    if (*recv == NULL) {
      failed = 1;
      status = fail(ZARR_ERR_TOO_LARGE, "cannot hold %zu bytes of pieces", received);
    }
  }
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm);
  if (any_failed) {
    status = status != ZARR_OK ? status : ZARR_ERR_TOO_LARGE;
    goto done;
  }
  MPI_Alltoallv(send, sc, sd, MPI_BYTE, *recv, rc, rd, MPI_BYTE, comm);
done:
  free(sc);
  free(rc);
  free(sd);
  free(rd);
  if (status != ZARR_OK) {
    free(*recv);
    *recv = NULL;
  }
  return status;
}

/* Packs the pieces of this rank's box in the blocks [first, end) for their owners and sends
 * them; the owners' received bytes come back in `recv`/`recv_sizes`. */
static zarr_status send_pieces(MPI_Comm comm, const grid_t *g, const uint64_t *start,
                               const uint64_t *count, const void *data, int with_data,
                               uint64_t first, uint64_t end, unsigned char **recv,
                               size_t **recv_sizes) {
  int size = ranks(comm);
  pack_t p = {g, size, with_data, data, start, count, first, end, NULL, NULL, NULL};
  p.sizes = calloc((size_t)size, sizeof *p.sizes);
  p.offsets = calloc((size_t)size, sizeof *p.offsets);
  zarr_status status = ZARR_OK;
  if (p.sizes == NULL || p.offsets == NULL)
    status = fail(ZARR_ERR_TOO_LARGE, "cannot hold the piece counts of %d ranks", size);
  size_t total = 0;
  if (status == ZARR_OK) {
    visit_blocks(g, start, count, pack_piece, &p);
    for (int r = 0; r < size; r++) {
      p.offsets[r] = total;
      total += p.sizes[r];
    }
    p.out = malloc(total > 0 ? total : 1);
    if (p.out == NULL) status = fail(ZARR_ERR_TOO_LARGE, "cannot hold %zu bytes of pieces", total);
  }
  if (status == ZARR_OK) visit_blocks(g, start, count, pack_piece, &p);
  size_t *sizes = p.sizes;
  if (status != ZARR_OK && sizes != NULL) memset(sizes, 0, (size_t)size * sizeof *sizes);
  if (sizes == NULL) {
    /* Still take part in the exchange, sending nothing. */
    sizes = calloc((size_t)size, sizeof *sizes);
  }
  zarr_status exchanged =
      sizes ? exchange(comm, p.out, sizes, recv, recv_sizes) : ZARR_ERR_TOO_LARGE;
  if (status == ZARR_OK) status = exchanged;
  if (sizes != p.sizes) free(sizes);
  free(p.sizes);
  free(p.offsets);
  free(p.out);
  return status;
}

/* The pieces in received bytes, in order of arrival (by source rank), each with its source. */
static zarr_status parse_pieces(const grid_t *g, int size, const unsigned char *recv,
                                const size_t *recv_sizes, int with_data, piece_t **pieces,
                                size_t *npieces) {
  size_t n = g->ndim, count = 0, cap = 16;
  *pieces = malloc(cap * sizeof **pieces);
  if (*pieces == NULL) return fail(ZARR_ERR_TOO_LARGE, "cannot hold the pieces");
  const unsigned char *at = recv;
  for (int r = 0; r < size; r++) {
    const unsigned char *end = at + recv_sizes[r];
    while (at < end) {
      if (count == cap) {
        piece_t *more = realloc(*pieces, 2 * cap * sizeof **pieces);
        if (more == NULL) return fail(ZARR_ERR_TOO_LARGE, "cannot hold the pieces");
        *pieces = more;
        cap *= 2;
      }
      const uint64_t *header = (const uint64_t *)at;
      piece_t *p = &(*pieces)[count++];
      p->block = header[0];
      p->start = header + 1;
      p->count = header + 1 + n;
      p->data = at + header_bytes(n);
      p->rank = r;
      at += header_bytes(n) + (with_data ? (size_t)box_volume(n, p->count) * g->itemsize : 0);
    }
  }
  *npieces = count;
  return ZARR_OK;
}

static int by_block(const void *a, const void *b) {
  const piece_t *x = a, *y = b;
  if (x->block != y->block) return x->block < y->block ? -1 : 1;
  return x->rank - y->rank;
}

/* ---- Collective write and read -------------------------------------------------------------- */

/* The grid of `array` and this rank's box checked against it, agreed by every rank (`local`:
 * a failure of the caller's own checks, or ZARR_OK): on failure every rank returns the same
 * status, and `g` holds nothing. */
static zarr_status begin(MPI_Comm comm, zarr_status local, zarr_array *array, size_t ndim,
                         const uint64_t *start, const uint64_t *count, const void *buffer,
                         size_t buffer_size, const char *buffer_name, grid_t *g) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  uint64_t volume = 0;
  if (local == ZARR_OK)
    local = array == NULL ? fail(ZARR_ERR_NULL_POINTER, "argument array is NULL")
                          : grid_of(array, ndim, g);
  if (local == ZARR_OK) {
    local = check_box(g, rank, start, count, buffer, buffer_size, buffer_name, &volume);
    if (local != ZARR_OK) grid_free(g);
  }
  zarr_status status = agree(comm, local);
  if (status != ZARR_OK && local == ZARR_OK) grid_free(g);
  return status;
}

/* Grows `*block` to hold `bytes`, for one block after another. */
static zarr_status hold_block(unsigned char **block, size_t bytes) {
  unsigned char *grown = realloc(*block, bytes > 0 ? bytes : 1);
  if (grown == NULL) return fail(ZARR_ERR_TOO_LARGE, "cannot hold a block of %zu bytes", bytes);
  *block = grown;
  return ZARR_OK;
}

/* The bytes a collective call moves at most in one round, from one rank and to one owner:
 * ZARR_MPI_ROUND_BYTES from the environment (at least 1), else 256 MiB. */
static uint64_t round_bytes(void) {
  const char *text = getenv("ZARR_MPI_ROUND_BYTES");
  unsigned long long v = text != NULL ? strtoull(text, NULL, 10) : 0;
  return v > 0 ? v : (uint64_t)256 << 20;
}

/* The rounds of a collective call: blocks [lo, hi] of every rank's boxes, `step` blocks a
 * round. One round when every rank's box fits round_bytes(); else as many blocks a round as
 * fit it (one block at least), so that no rank sends, and no owner receives, much more. */
static void plan_rounds(MPI_Comm comm, const grid_t *g, const uint64_t *start,
                        const uint64_t *count, uint64_t *lo, uint64_t *hi, uint64_t *step) {
  unsigned long long first = ULLONG_MAX, last = 0, bytes = 0;
  if (box_volume(g->ndim, count) > 0) {
    first = last = 0;
    for (size_t d = 0; d < g->ndim; d++) {
      first = first * g->grid[d] + block_at(g, d, start[d]);
      last = last * g->grid[d] + block_at(g, d, start[d] + count[d] - 1);
    }
    bytes = box_volume(g->ndim, count) * g->itemsize;
  }
  unsigned long long all_first, all_last, most;
  MPI_Allreduce(&first, &all_first, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
  MPI_Allreduce(&last, &all_last, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
  MPI_Allreduce(&bytes, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
  if (all_first == ULLONG_MAX) { /* no rank has anything */
    *lo = 1, *hi = 0, *step = 1;
    return;
  }
  *lo = all_first, *hi = all_last, *step = all_last - all_first + 1;
  uint64_t limit = round_bytes();
  if (most <= limit) return;
  uint64_t block = g->itemsize; /* the largest block's bytes */
  for (size_t d = 0; d < g->ndim; d++) {
    uint64_t widest = 0;
    for (uint64_t i = 0; i < g->grid[d]; i++) {
      uint64_t w = g->edges[d][i + 1] - g->edges[d][i];
      widest = w > widest ? w : widest;
    }
    block *= widest;
  }
  *step = limit / block > 0 ? limit / block : 1;
}

/* A rank's box in the overlap check's order: by its start along the sweep's dimension. */
typedef struct {
  uint64_t key;
  int rank;
} sweep_t;

static int by_key(const void *a, const void *b) {
  const sweep_t *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->rank - y->rank;
}

/* Finds two of the non-empty boxes `order[0..n)` that share elements (`all` holds each rank's
 * start then count, `width` values a rank); 0 when none do. A sweep along the dimension where
 * the boxes are thinnest against the array: sorted by their start there, each box is compared
 * only with those that start before it ends, so slabs (by rows, by columns) cost n log n, not
 * n squared. */
static int find_overlap(const grid_t *g, const uint64_t *all, size_t width, sweep_t *order,
                        int n, int *a, int *b) {
  size_t nd = g->ndim, axis = 0;
  if (n < 2) return 0;
  double thinnest = 2;
  for (size_t d = 0; d < nd; d++) {
    double share = 0;
    for (int i = 0; i < n; i++)
      share += (double)all[(size_t)order[i].rank * width + nd + d] / (double)g->shape[d];
    if (share / n < thinnest) thinnest = share / n, axis = d;
  }
  for (int i = 0; i < n; i++) order[i].key = nd > 0 ? all[(size_t)order[i].rank * width + axis] : 0;
  qsort(order, (size_t)n, sizeof *order, by_key);
  for (int i = 0; i < n; i++) {
    const uint64_t *is = all + (size_t)order[i].rank * width, *ic = is + nd;
    for (int j = i + 1; j < n; j++) {
      const uint64_t *js = all + (size_t)order[j].rank * width, *jc = js + nd;
      if (nd > 0 && js[axis] >= is[axis] + ic[axis]) break;
      int meet = 1;
      for (size_t d = 0; d < nd && meet; d++) meet = is[d] < js[d] + jc[d] && js[d] < is[d] + ic[d];
      if (meet) {
        *a = order[i].rank < order[j].rank ? order[i].rank : order[j].rank;
        *b = order[i].rank < order[j].rank ? order[j].rank : order[i].rank;
        return 1;
      }
    }
  }
  return 0;
}

/* Fails every rank unless the boxes of all ranks are disjoint (each rank checks them all). */
static zarr_status check_disjoint(MPI_Comm comm, const grid_t *g, const uint64_t *start,
                                  const uint64_t *count) {
  int size = ranks(comm);
  size_t n = g->ndim, width = n > 0 ? 2 * n : 1;
  zarr_status status = ZARR_OK;
  uint64_t *mine = calloc(width, sizeof *mine);
  uint64_t *all = calloc((size_t)size * width, sizeof *all);
  sweep_t *order = calloc((size_t)size, sizeof *order);
  int failed = mine == NULL || all == NULL || order == NULL, any_failed;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm);
  if (any_failed) {
    status = fail(ZARR_ERR_TOO_LARGE, "cannot hold the boxes of %d ranks", size);
  } else {
    /* A zero-dimensional array's one element: a box of one, given as count 1. */
    if (n > 0) {
      memcpy(mine, start, n * sizeof *start);
      memcpy(mine + n, count, n * sizeof *count);
    } else {
      mine[0] = 1;
    }
    MPI_Allgather(mine, (int)width, MPI_UINT64_T, all, (int)width, MPI_UINT64_T, comm);
    int nonempty = 0, a = 0, b = 0;
    for (int r = 0; r < size; r++)
      if (box_volume(n > 0 ? n : 1, all + (size_t)r * width + (n > 0 ? n : 0)) > 0)
        order[nonempty++].rank = r;
    if (find_overlap(g, all, width, order, nonempty, &a, &b))
      status = fail(ZARR_ERR_INVALID_ARGUMENT,
                    "the boxes of ranks %d and %d share elements: collective writes take "
                    "disjoint boxes",
                    a, b);
  }
  free(mine);
  free(all);
  free(order);
  return agree(comm, status);
}

/* One round of a collective write: the pieces of the blocks [first, end) to their owners,
 * which write each of those blocks once. Returns this rank's status. */
static zarr_status write_round(MPI_Comm comm, const grid_t *g, zarr_array *array,
                               const uint64_t *start, const uint64_t *count, const void *data,
                               uint64_t first, uint64_t end) {
  int size = ranks(comm);
  unsigned char *recv = NULL, *block = NULL;
  size_t *recv_sizes = NULL, npieces = 0;
  piece_t *pieces = NULL;
  zarr_status status =
      send_pieces(comm, g, start, count, data, 1, first, end, &recv, &recv_sizes);
  if (status == ZARR_OK) status = parse_pieces(g, size, recv, recv_sizes, 1, &pieces, &npieces);
  if (status == ZARR_OK) qsort(pieces, npieces, sizeof *pieces, by_block);
  uint64_t bstart[64], bcount[64];
  for (size_t i = 0; i < npieces && status == ZARR_OK;) {
    size_t j = i;
    uint64_t covered = 0;
    while (j < npieces && pieces[j].block == pieces[i].block)
      covered += box_volume(g->ndim, pieces[j++].count);
    block_box(g, pieces[i].block, bstart, bcount);
    uint64_t elements = box_volume(g->ndim, bcount);
    size_t bytes = (size_t)elements * g->itemsize;
    status = hold_block(&block, bytes);
    if (status != ZARR_OK) break;
    /* Only where the pieces leave part of the block uncovered is what is stored read. */
    if (covered < elements)
      status = zarr_array_read(array, g->ndim, bstart, bcount, block, bytes);
    for (size_t k = i; k < j && status == ZARR_OK; k++)
      copy_box(g->ndim, g->itemsize, pieces[k].start, pieces[k].count,
               (unsigned char *)pieces[k].data, pieces[k].start, pieces[k].count, block,
               bstart, bcount, 1);
    if (status == ZARR_OK)
      status = zarr_array_write(array, g->ndim, bstart, bcount, block, bytes);
    i = j;
  }
  free(block);
  free(pieces);
  free(recv);
  free(recv_sizes);
  return status;
}

static zarr_status in_rounds(MPI_Comm comm, grid_t *g, zarr_array *array,
                             const uint64_t *start, const uint64_t *count, int reading,
                             void *buffer);

/* write_all, after the caller's own checks gave `local`. */
static zarr_status write_all(MPI_Comm comm, zarr_status local, zarr_array *array, size_t ndim,
                             const uint64_t *start, const uint64_t *count, const void *data,
                             size_t data_size) {
  grid_t g;
  zarr_status status =
      begin(comm, local, array, ndim, start, count, data, data_size, "data", &g);
  if (status != ZARR_OK) return status;
  /* Boxes that overlap fail every rank before anything is written. */
  status = check_disjoint(comm, &g, start, count);
  if (status != ZARR_OK) {
    grid_free(&g);
    return status;
  }
  return in_rounds(comm, &g, array, start, count, 0, (void *)data);
}

/* Where a collective read's answers go: each owner's answers in `replies` from `next[owner]`
 * on, in the order this rank asked (the order visit_blocks gives), into the box buffer `out`. */
typedef struct {
  const grid_t *g;
  int size;
  const unsigned char *replies;
  size_t *next;
  void *out;
  const uint64_t *start, *count;
  uint64_t first, end; /* the blocks of this round */
} place_t;

static void place_answer(void *context, uint64_t block, const uint64_t *start,
                         const uint64_t *count) {
  place_t *p = context;
  if (block < p->first || block >= p->end) return;
  int owner = (int)(block % (uint64_t)p->size);
  const unsigned char *answer = p->replies + p->next[owner];
  copy_box(p->g->ndim, p->g->itemsize, start, count, (unsigned char *)answer, start, count,
           p->out, p->start, p->count, 1);
  p->next[owner] += (size_t)box_volume(p->g->ndim, count) * p->g->itemsize;
}

/* One round of a collective read: requests for the blocks [first, end) to their owners, which
 * read each of those blocks once and answer; every rank's answers placed in `out`. Returns the
 * status the ranks agreed. */
static zarr_status read_round(MPI_Comm comm, const grid_t *g, zarr_array *array,
                              const uint64_t *start, const uint64_t *count, void *out,
                              uint64_t first, uint64_t end) {
  int size = ranks(comm);
  /* Requests to the owners, then the owners' answers: each request's elements, in the order
   * the requests came. */
  unsigned char *requests = NULL, *answers = NULL, *replies = NULL, *block = NULL;
  size_t *request_sizes = NULL, *answer_sizes = NULL, *reply_sizes = NULL, *offsets = NULL;
  size_t nrequests = 0;
  piece_t *asked = NULL;
  zarr_status status =
      send_pieces(comm, g, start, count, NULL, 0, first, end, &requests, &request_sizes);
  if (status == ZARR_OK)
    status = parse_pieces(g, size, requests, request_sizes, 0, &asked, &nrequests);
  answer_sizes = calloc((size_t)size, sizeof *answer_sizes);
  offsets = calloc(nrequests + 1, sizeof *offsets);
  if (status == ZARR_OK && (answer_sizes == NULL || offsets == NULL))
    status = fail(ZARR_ERR_TOO_LARGE, "cannot hold %zu requests", nrequests);
  size_t total = 0;
  for (size_t i = 0; i < nrequests && status == ZARR_OK; i++) {
    size_t bytes = (size_t)box_volume(g->ndim, asked[i].count) * g->itemsize;
    offsets[i] = total;
    total += bytes;
    answer_sizes[asked[i].rank] += bytes;
  }
  if (status == ZARR_OK) {
    answers = malloc(total > 0 ? total : 1);
    if (answers == NULL) status = fail(ZARR_ERR_TOO_LARGE, "cannot hold %zu bytes", total);
  }
  /* Answered block by block: each block read once for all the requests for it. */
  piece_t *sorted = NULL;
  if (status == ZARR_OK) {
    sorted = malloc((nrequests > 0 ? nrequests : 1) * sizeof *sorted);
    if (sorted == NULL) status = fail(ZARR_ERR_TOO_LARGE, "cannot sort requests");
  }
  if (status == ZARR_OK) {
    for (size_t i = 0; i < nrequests; i++) {
      sorted[i] = asked[i];
      sorted[i].data = (const unsigned char *)(uintptr_t)i; /* its place among the requests */
    }
    qsort(sorted, nrequests, sizeof *sorted, by_block);
  }
  uint64_t bstart[64], bcount[64];
  for (size_t i = 0; i < nrequests && status == ZARR_OK;) {
    size_t j = i;
    while (j < nrequests && sorted[j].block == sorted[i].block) j++;
    block_box(g, sorted[i].block, bstart, bcount);
    size_t bytes = (size_t)box_volume(g->ndim, bcount) * g->itemsize;
    status = hold_block(&block, bytes);
    if (status == ZARR_OK) status = zarr_array_read(array, g->ndim, bstart, bcount, block, bytes);
    for (size_t k = i; k < j && status == ZARR_OK; k++) {
      size_t place = (size_t)(uintptr_t)sorted[k].data;
      copy_box(g->ndim, g->itemsize, sorted[k].start, sorted[k].count, block, bstart, bcount,
               answers + offsets[place], sorted[k].start, sorted[k].count, 1);
    }
    i = j;
  }
  /* Every rank sends its answers, failed or not, so that no rank waits; the agreement below
   * then fails them all. */
  if (status != ZARR_OK && answer_sizes != NULL)
    memset(answer_sizes, 0, (size_t)size * sizeof *answer_sizes);
  size_t *send_sizes = answer_sizes ? answer_sizes : calloc((size_t)size, sizeof *send_sizes);
  zarr_status exchanged = send_sizes ? exchange(comm, answers, send_sizes, &replies, &reply_sizes)
                                     : ZARR_ERR_TOO_LARGE;
  if (send_sizes != answer_sizes) free(send_sizes);
  if (status == ZARR_OK) status = exchanged;
  status = agree(comm, status);
  if (status == ZARR_OK) {
    /* The answers come back per owner in the order this rank asked: place them. */
    place_t ctx = {g,     size,  replies, calloc((size_t)size, sizeof(size_t)),
                   out,   start, count,   first,
                   end};
    if (ctx.next == NULL) {
      status = fail(ZARR_ERR_TOO_LARGE, "cannot place the answers");
    } else {
      size_t at = 0;
      for (int r = 0; r < size; r++) {
        ctx.next[r] = at;
        at += reply_sizes[r];
      }
      visit_blocks(g, start, count, place_answer, &ctx);
    }
    free(ctx.next);
  }
  free(requests);
  free(request_sizes);
  free(answers);
  free(answer_sizes);
  free(replies);
  free(reply_sizes);
  free(offsets);
  free(asked);
  free(sorted);
  free(block);
  return status;
}

/* read_all, after the caller's own checks gave `local`. */
static zarr_status read_all(MPI_Comm comm, zarr_status local, zarr_array *array, size_t ndim,
                            const uint64_t *start, const uint64_t *count, void *out,
                            size_t out_size) {
  grid_t g;
  zarr_status status = begin(comm, local, array, ndim, start, count, out, out_size, "out", &g);
  if (status != ZARR_OK) return status;
  return in_rounds(comm, &g, array, start, count, 1, out);
}

/* A collective write of `buffer` (or, `reading`, a read into it) in the rounds plan_rounds
 * gives, every rank agreeing after each; frees `g`. */
static zarr_status in_rounds(MPI_Comm comm, grid_t *g, zarr_array *array,
                             const uint64_t *start, const uint64_t *count, int reading,
                             void *buffer) {
  uint64_t lo = 1, hi = 0, step = 1;
  plan_rounds(comm, g, start, count, &lo, &hi, &step);
  zarr_status status = ZARR_OK;
  for (uint64_t first = lo; first <= hi && status == ZARR_OK; first += step) {
    uint64_t end = hi - first < step ? hi + 1 : first + step;
    status = agree(comm, reading ? read_round(comm, g, array, start, count, buffer, first, end)
                                 : write_round(comm, g, array, start, count, buffer, first, end));
    if (end > hi) break;
  }
  grid_free(g);
  return status;
}

zarr_status zarr_mpi_array_write_all(MPI_Comm comm, zarr_array *array, size_t ndim,
                                     const uint64_t *start, const uint64_t *count,
                                     const void *data, size_t data_size) {
  return write_all(comm, ZARR_OK, array, ndim, start, count, data, data_size);
}

zarr_status zarr_mpi_array_read_all(MPI_Comm comm, zarr_array *array, size_t ndim,
                                    const uint64_t *start, const uint64_t *count, void *out,
                                    size_t out_size) {
  return read_all(comm, ZARR_OK, array, ndim, start, count, out, out_size);
}

/* ---- For Fortran (fortran/zarr_mpi.f90) --------------------------------------------------- */

zarr_status zarr_mpi_store_open_f(MPI_Fint comm, const char *location, zarr_open_mode mode,
                                  const char *options_json, zarr_store **out_store) {
  return zarr_mpi_store_open(MPI_Comm_f2c(comm), location, mode, options_json, out_store);
}

zarr_status zarr_mpi_array_create_f(MPI_Fint comm, zarr_store *store, const char *path,
                                    const char *metadata_json, zarr_array **out_array) {
  return zarr_mpi_array_create(MPI_Comm_f2c(comm), store, path, metadata_json, out_array);
}

zarr_status zarr_mpi_array_open_f(MPI_Fint comm, zarr_store *store, const char *path,
                                  zarr_array **out_array) {
  return zarr_mpi_array_open(MPI_Comm_f2c(comm), store, path, out_array);
}

zarr_status zarr_mpi_array_write_all_f(MPI_Fint comm, zarr_status local, zarr_array *array,
                                       size_t ndim, const uint64_t *start, const uint64_t *count,
                                       const void *data, size_t data_size) {
  return write_all(MPI_Comm_f2c(comm), local, array, ndim, start, count, data, data_size);
}

zarr_status zarr_mpi_array_read_all_f(MPI_Fint comm, zarr_status local, zarr_array *array,
                                      size_t ndim, const uint64_t *start, const uint64_t *count,
                                      void *out, size_t out_size) {
  return read_all(MPI_Comm_f2c(comm), local, array, ndim, start, count, out, out_size);
}
