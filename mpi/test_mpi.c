/*
 * Collective writes and reads through zarr_mpi.h, run with mpirun on 1 to 7 ranks:
 *   mpirun -n N test_mpi LOCATION
 * LOCATION is a directory, or a remote store (s3://bucket/prefix, settings from the AWS_*
 * environment variables), where the PUT requests of all ranks together must number the chunks
 * and shards each collective write touches: each written once.
 * For v2, v3 and sharded v3 arrays (and a rectilinear grid) on a directory store: boxes by
 * rows, by columns, block-cyclic crossing chunk and shard edges, irregular disjoint boxes with
 * some ranks empty, and a partial write over stored values; every rank reads its box back
 * collectively and rank 0 reads the whole array serially against the expected values. A bad
 * box on one rank, and boxes that overlap, fail every rank with the same status and message
 * and leave the array unchanged; so do opening a missing array, creating one from bad metadata
 * and writing through a store opened read-only. In a directory, rank 0 leaves the values each array should hold in
 * DIR/PATH.expected (int32, little-endian, C order) for zarr-python to compare with
 * (tests/interop/test_mpi_stores.py). Exit status 0 when every check passes (on every rank).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_mpi.h"

#define ROWS 37
#define COLS 23

static int rank, size, failures;
/* The block (chunk or shard) shape of the array being written, for counting the blocks a
 * collective write touches; {0, 0} when the grid has no one block shape (rectilinear). */
static uint64_t block_shape[2];
static zarr_store *remote; /* the store, when its requests are counted */

#define CHECK(cond, ...)                                 \
  do {                                                   \
    if (!(cond)) {                                       \
      fprintf(stderr, "rank %d: line %d: ", rank, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                      \
      fprintf(stderr, "\n");                             \
      failures++;                                        \
    }                                                    \
  } while (0)

#define OK(call)                                                                        \
  do {                                                                                  \
    zarr_status s_ = (call);                                                            \
    CHECK(s_ == ZARR_OK, "%s: %s (%s)", #call, zarr_status_name(s_), zarr_last_error()); \
  } while (0)

/* The value the element (r, c) gets from write number `pass`. */
static int32_t value(int pass, uint64_t r, uint64_t c) {
  return (int32_t)(pass * 100000 + r * 100 + c);
}

typedef struct {
  uint64_t start[2], count[2];
} box_t;

/* The requests (all of them, or PUTs when `put`) every rank's store sent so far, summed (0 for
 * a local store). */
static uint64_t sent(int put) {
  zarr_request_stats stats;
  memset(&stats, 0, sizeof stats);
  if (remote != NULL) OK(zarr_store_request_stats(remote, &stats));
  unsigned long long mine = put ? stats.put : stats.requests, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

/* The distinct blocks the boxes `boxes[first..first+n)` touch. */
static uint64_t blocks_touched(const box_t *boxes, int first, int n) {
  static unsigned char touched[ROWS * COLS];
  memset(touched, 0, sizeof touched);
  uint64_t count = 0;
  for (int i = first; i < first + n; i++)
    for (uint64_t r = boxes[i].start[0]; r < boxes[i].start[0] + boxes[i].count[0]; r++)
      for (uint64_t c = boxes[i].start[1]; c < boxes[i].start[1] + boxes[i].count[1]; c++) {
        uint64_t b = (r / block_shape[0]) * COLS + c / block_shape[1];
        count += !touched[b];
        touched[b] = 1;
      }
  return count;
}

/* Writes `boxes` (each to rank i % size) collectively with pass `pass`'s values, one box per
 * rank per call, ranks without a box giving an empty one; then reads each box back. On a
 * remote store, each call's PUTs number the blocks its boxes touch. */
static void write_boxes(zarr_array *a, const box_t *boxes, int n, int pass) {
  int calls = (n + size - 1) / size;
  for (int k = 0; k < calls; k++) {
    uint64_t before = sent(1);
    int i = k * size + rank;
    box_t box = {{0, 0}, {0, 0}};
    if (i < n) box = boxes[i];
    size_t count = (size_t)(box.count[0] * box.count[1]);
    int32_t *data = count ? malloc(count * sizeof *data) : NULL;
    for (uint64_t r = 0; r < box.count[0]; r++)
      for (uint64_t c = 0; c < box.count[1]; c++)
        data[r * box.count[1] + c] = value(pass, box.start[0] + r, box.start[1] + c);
    OK(zarr_mpi_array_write_all(MPI_COMM_WORLD, a, 2, box.start, box.count, data,
                                count * sizeof *data));
    if (remote != NULL && block_shape[0] > 0) {
      int in_call = n - k * size < size ? n - k * size : size;
      uint64_t puts = sent(1) - before, touched = blocks_touched(boxes, k * size, in_call);
      CHECK(puts == touched, "pass %d call %d: %llu PUTs for %llu chunks or shards", pass, k,
            (unsigned long long)puts, (unsigned long long)touched);
    }
    int32_t *back = count ? calloc(count, sizeof *back) : NULL;
    OK(zarr_mpi_array_read_all(MPI_COMM_WORLD, a, 2, box.start, box.count, back,
                               count * sizeof *back));
    CHECK(count == 0 || memcmp(back, data, count * sizeof *data) == 0,
          "pass %d box %d reads back other values", pass, i);
    free(data);
    free(back);
  }
}

/* Rank 0 reads the whole array on its own and compares it with `expected`. */
static void check_all(zarr_array *a, const int32_t *expected, const char *what) {
  if (rank == 0) {
    static int32_t got[ROWS * COLS];
    uint64_t start[2] = {0, 0}, count[2] = {ROWS, COLS};
    OK(zarr_array_read(a, 2, start, count, got, sizeof got));
    int bad = 0;
    for (int i = 0; i < ROWS * COLS; i++) bad += got[i] != expected[i];
    CHECK(bad == 0, "%s: %d elements differ from a serial write's", what, bad);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void apply(int32_t *expected, const box_t *boxes, int n, int pass) {
  for (int i = 0; i < n; i++)
    for (uint64_t r = 0; r < boxes[i].count[0]; r++)
      for (uint64_t c = 0; c < boxes[i].count[1]; c++) {
        uint64_t rr = boxes[i].start[0] + r, cc = boxes[i].start[1] + c;
        expected[rr * COLS + cc] = value(pass, rr, cc);
      }
}

/* Disjoint boxes covering the array: rows cut at `row_cuts`, each slab's columns cut anew. */
static int irregular(box_t *boxes, unsigned seed) {
  int n = 0;
  uint64_t r = 0;
  while (r < ROWS) {
    uint64_t h = 1 + (seed = seed * 1103515245u + 12345u) % 9;
    if (r + h > ROWS) h = ROWS - r;
    uint64_t c = 0;
    while (c < COLS) {
      uint64_t w = 1 + (seed = seed * 1103515245u + 12345u) % 11;
      if (c + w > COLS) w = COLS - c;
      boxes[n++] = (box_t){{r, c}, {h, w}};
      c += w;
    }
    r += h;
  }
  return n;
}

/* Rank 0 writes `expected` to DIR/PATH.expected, little-endian (for a directory store). */
static void save_expected(const char *dir, const char *path, const int32_t *expected) {
  if (rank != 0 || strstr(dir, "://") != NULL) return;
  char name[4096];
  snprintf(name, sizeof name, "%s/%s.expected", dir, path);
  FILE *f = fopen(name, "wb");
  CHECK(f != NULL, "cannot write %s", name);
  if (f == NULL) return;
  for (int i = 0; i < ROWS * COLS; i++) {
    uint32_t v = (uint32_t)expected[i];
    unsigned char le[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24};
    CHECK(fwrite(le, 1, 4, f) == 4, "cannot write %s", name);
  }
  CHECK(fclose(f) == 0, "cannot write %s", name);
}

static void run(zarr_store *store, const char *dir, const char *path, const char *metadata) {
  zarr_array *a = NULL;
  OK(zarr_mpi_array_create(MPI_COMM_WORLD, store, path, metadata, &a));
  if (a == NULL) return;
  if (zarr_array_chunks(a, 2, block_shape) != ZARR_OK) memset(block_shape, 0, sizeof block_shape);
  static int32_t expected[ROWS * COLS];
  memset(expected, 0, sizeof expected);
  static box_t boxes[ROWS * COLS];

  /* By rows: one slab a rank (the last ones maybe empty). */
  int n = 0;
  uint64_t per = (ROWS + size - 1) / size;
  for (int i = 0; i < size; i++) {
    uint64_t r0 = i * per < ROWS ? i * per : ROWS;
    uint64_t r1 = r0 + per < ROWS ? r0 + per : ROWS;
    boxes[n++] = (box_t){{r0, 0}, {r1 - r0, r1 > r0 ? COLS : 0}};
  }
  write_boxes(a, boxes, n, 1);
  apply(expected, boxes, n, 1);
  check_all(a, expected, "rows");

  /* By columns. */
  n = 0;
  per = (COLS + size - 1) / size;
  for (int i = 0; i < size; i++) {
    uint64_t c0 = i * per < COLS ? i * per : COLS;
    uint64_t c1 = c0 + per < COLS ? c0 + per : COLS;
    boxes[n++] = (box_t){{0, c0}, {c1 > c0 ? ROWS : 0, c1 - c0}};
  }
  write_boxes(a, boxes, n, 2);
  apply(expected, boxes, n, 2);
  check_all(a, expected, "columns");

  /* Block-cyclic 5 x 7 tiles, which cross the chunk and shard edges. */
  n = 0;
  for (uint64_t r = 0; r < ROWS; r += 5)
    for (uint64_t c = 0; c < COLS; c += 7)
      boxes[n++] = (box_t){{r, c}, {r + 5 <= ROWS ? 5 : ROWS - r, c + 7 <= COLS ? 7 : COLS - c}};
  write_boxes(a, boxes, n, 3);
  apply(expected, boxes, n, 3);
  check_all(a, expected, "block-cyclic");

  /* Irregular boxes, then only some of them: the rest of their chunks keep what is stored. */
  n = irregular(boxes, 7u);
  write_boxes(a, boxes, n, 4);
  apply(expected, boxes, n, 4);
  check_all(a, expected, "irregular");
  int m = 0;
  for (int i = 0; i < n; i += 3) boxes[m++] = boxes[i];
  write_boxes(a, boxes, m, 5);
  apply(expected, boxes, m, 5);
  check_all(a, expected, "partial");

  /* A bad box on the last rank: every rank fails alike, nothing is written. */
  uint64_t start[2] = {0, 0}, count[2] = {1, 1};
  if (rank == size - 1) start[0] = ROWS;
  int32_t one = -1;
  zarr_status s = zarr_mpi_array_write_all(MPI_COMM_WORLD, a, 2, start, count, &one, sizeof one);
  char expected_words[64];
  snprintf(expected_words, sizeof expected_words, "rank %d:", size - 1);
  CHECK(s == ZARR_ERR_OUT_OF_BOUNDS, "a bad box gave %s", zarr_status_name(s));
  CHECK(strstr(zarr_last_error(), expected_words) != NULL, "message: %s", zarr_last_error());
  check_all(a, expected, "after a bad box");

  /* Overlapping boxes (every rank the same element; with one rank, none overlap). */
  start[0] = 0;
  s = zarr_mpi_array_write_all(MPI_COMM_WORLD, a, 2, start, count, &one, sizeof one);
  if (size > 1) {
    CHECK(s == ZARR_ERR_INVALID_ARGUMENT, "overlapping boxes gave %s", zarr_status_name(s));
    CHECK(strstr(zarr_last_error(), "share elements") != NULL, "message: %s", zarr_last_error());
    check_all(a, expected, "after overlapping boxes");
  } else {
    CHECK(s == ZARR_OK, "one rank's box gave %s", zarr_status_name(s));
  }
  OK(zarr_array_close(a));

  /* Opening: every rank gets a handle that reads the same values, for the requests of one
   * rank opening it alone. */
  a = NULL;
  uint64_t before = sent(0);
  OK(zarr_mpi_array_open(MPI_COMM_WORLD, store, path, &a));
  uint64_t collective = sent(0) - before;
  zarr_array *alone = NULL;
  before = sent(0);
  if (rank == 0) OK(zarr_array_open(store, path, &alone));
  uint64_t serial = sent(0) - before;
  zarr_array_close(alone);
  CHECK(collective == serial, "%s: %d ranks opening sent %llu requests, one rank alone %llu",
        path, size, (unsigned long long)collective, (unsigned long long)serial);
  if (size == 1) expected[0] = -1;
  uint64_t all[2] = {ROWS, COLS}, origin[2] = {0, 0};
  static int32_t got[ROWS * COLS];
  OK(zarr_mpi_array_read_all(MPI_COMM_WORLD, a, 2, origin, all, got, sizeof got));
  CHECK(memcmp(got, expected, sizeof got) == 0, "%s: a collective read of everything differs",
        path);
  OK(zarr_array_close(a));
  save_expected(dir, path, expected);
}

/* The requests a store handle sent so far, summed over the ranks (0 for a local store). */
static uint64_t sent_by(zarr_store *store) {
  zarr_request_stats stats;
  memset(&stats, 0, sizeof stats);
  if (store != NULL) OK(zarr_store_request_stats(store, &stats)); /* local stores: zeros */
  unsigned long long mine = stats.requests, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

/* Rank 0 consolidates the store's metadata; then a collective open uses it on every rank, for
 * the requests of one rank opening the store alone, and opening an array costs none. */
static void open_consolidated(zarr_store *store, const char *location) {
  if (rank == 0) OK(zarr_consolidate_metadata(store));
  MPI_Barrier(MPI_COMM_WORLD);
  zarr_store *shared = NULL, *alone = NULL;
  OK(zarr_mpi_store_open(MPI_COMM_WORLD, location, ZARR_MODE_READ, NULL, &shared));
  uint64_t collective = sent_by(shared);
  if (rank == 0) OK(zarr_store_open(location, ZARR_MODE_READ, &alone));
  uint64_t serial = sent_by(alone);
  CHECK(collective == serial, "%d ranks opening the store sent %llu requests, one rank alone %llu",
        size, (unsigned long long)collective, (unsigned long long)serial);
  zarr_store_close(alone);
  if (shared == NULL) return;
  bool in_use = false;
  OK(zarr_store_uses_consolidated(shared, &in_use));
  CHECK(in_use, "a collective open does not use the consolidated metadata");
  zarr_array *a = NULL;
  uint64_t before = sent_by(shared);
  OK(zarr_mpi_array_open(MPI_COMM_WORLD, shared, "v2", &a)); /* (v3 nodes: not in .zmetadata) */
  CHECK(sent_by(shared) == before, "opening an array from consolidated metadata sent %llu requests",
        (unsigned long long)(sent_by(shared) - before));
  zarr_array_close(a);
  OK(zarr_store_close(shared));
}

/* Whether every rank holds status `s` and the same message (compared by length and a sum of
 * its bytes). */
static int same_everywhere(zarr_status s) {
  const char *m = zarr_last_error();
  long mine[3] = {s, (long)strlen(m), 0}, lo[3], hi[3];
  for (const char *c = m; *c; c++) mine[2] = (mine[2] * 31 + (unsigned char)*c) % 1000003;
  MPI_Allreduce(mine, lo, 3, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 3, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return memcmp(lo, hi, sizeof lo) == 0;
}

/* Failures every rank must share: opening a missing array, creating one from bad metadata,
 * and a write that fails on the owners alone (a store opened read-only), which leaves the
 * array as it was. */
static void errors(const char *location) {
  zarr_store *store = NULL;
  OK(zarr_mpi_store_open(MPI_COMM_WORLD, location, ZARR_MODE_READ, NULL, &store));
  if (store == NULL) return;
  zarr_array *a = NULL;
  zarr_status s = zarr_mpi_array_open(MPI_COMM_WORLD, store, "missing", &a);
  CHECK(s == ZARR_ERR_NOT_FOUND && a == NULL, "opening a missing array gave %s",
        zarr_status_name(s));
  CHECK(strstr(zarr_last_error(), "missing") != NULL, "message: %s", zarr_last_error());
  CHECK(same_everywhere(s), "ranks disagree on a missing array: %s", zarr_last_error());

  zarr_store *writable = NULL;
  OK(zarr_mpi_store_open(MPI_COMM_WORLD, location, ZARR_MODE_WRITE, NULL, &writable));
  s = zarr_mpi_array_create(MPI_COMM_WORLD, writable, "bad",
                            "{\"shape\": [4], \"chunks\": [0], \"dtype\": \"<i4\"}", &a);
  CHECK(s == ZARR_ERR_INVALID_METADATA && a == NULL, "bad metadata gave %s", zarr_status_name(s));
  CHECK(strstr(zarr_last_error(), "chunks") != NULL, "message: %s", zarr_last_error());
  CHECK(same_everywhere(s), "ranks disagree on bad metadata: %s", zarr_last_error());
  zarr_array *bad = NULL;
  if (rank == 0)
    CHECK(zarr_array_open(writable, "bad", &bad) == ZARR_ERR_NOT_FOUND, "bad metadata was stored");
  zarr_array_close(bad);
  if (writable != NULL) OK(zarr_store_close(writable));

  OK(zarr_mpi_array_open(MPI_COMM_WORLD, store, "v2", &a));
  if (a == NULL) {
    zarr_store_close(store);
    return;
  }
  uint64_t origin[2] = {0, 0}, all[2] = {ROWS, COLS};
  static int32_t before[ROWS * COLS], after[ROWS * COLS];
  OK(zarr_mpi_array_read_all(MPI_COMM_WORLD, a, 2, origin, all, before, sizeof before));
  uint64_t per = (ROWS + size - 1) / size, r0 = rank * per < ROWS ? rank * per : ROWS;
  uint64_t start[2] = {r0, 0}, count[2] = {r0 + per < ROWS ? per : ROWS - r0, COLS};
  if (count[0] == 0) count[1] = 0;
  static int32_t rows[ROWS * COLS];
  s = zarr_mpi_array_write_all(MPI_COMM_WORLD, a, 2, start, count, rows,
                               (size_t)(count[0] * count[1]) * sizeof *rows);
  CHECK(s == ZARR_ERR_READ_ONLY, "writing to a read-only store gave %s", zarr_status_name(s));
  CHECK(same_everywhere(s), "ranks disagree on a failed write: %s", zarr_last_error());
  OK(zarr_mpi_array_read_all(MPI_COMM_WORLD, a, 2, origin, all, after, sizeof after));
  CHECK(memcmp(before, after, sizeof before) == 0, "a failed write changed the array");
  OK(zarr_array_close(a));
  OK(zarr_store_close(store));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -n N %s DIR\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  zarr_store *store = NULL;
  OK(zarr_mpi_store_open(MPI_COMM_WORLD, argv[1], ZARR_MODE_WRITE, NULL, &store));
  if (strstr(argv[1], "://") != NULL) remote = store;
  if (store != NULL) {
    run(store, argv[1], "v2",
        "{\"shape\": [37, 23], \"chunks\": [8, 6], \"dtype\": \"<i4\", \"fill_value\": 0,"
        " \"compressor\": {\"id\": \"zlib\", \"level\": 1}}");
    run(store, argv[1], "v3",
        "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [37, 23], \"data_type\": \"int32\","
        " \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [8, 6]}},"
        " \"chunk_key_encoding\": {\"name\": \"default\"}, \"fill_value\": 0,"
        " \"codecs\": [{\"name\": \"bytes\"}, {\"name\": \"zstd\"}]}");
    run(store, argv[1], "sharded",
        "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [37, 23], \"data_type\": \"int32\","
        " \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [16, 12]}},"
        " \"chunk_key_encoding\": {\"name\": \"default\"}, \"fill_value\": 0,"
        " \"codecs\": [{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": [4, 6],"
        " \"codecs\": [{\"name\": \"bytes\"}, {\"name\": \"zstd\"}]}}]}");
    run(store, argv[1], "rectilinear",
        "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [37, 23], \"data_type\": \"int32\","
        " \"chunk_grid\": {\"name\": \"rectilinear\", \"configuration\": {\"kind\": \"inline\","
        " \"chunk_shapes\": [[10, 3, 20, 4], [[5, 4], 3]]}},"
        " \"chunk_key_encoding\": {\"name\": \"default\"}, \"fill_value\": 0,"
        " \"codecs\": [{\"name\": \"bytes\"}]}");
    open_consolidated(store, argv[1]);
    OK(zarr_store_close(store));
    errors(argv[1]);
  }
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s: %d ranks, %d failed checks\n", all_failures ? "FAIL" : "ok", size, all_failures);
  MPI_Finalize();
  return all_failures ? 1 : 0;
}
