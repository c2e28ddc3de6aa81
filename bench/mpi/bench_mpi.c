/*
 * bench_mpi: collective (zarr_mpi.h) against independent (zarr.h) writes and reads of one
 * sharded Zarr v3 array by N MPI ranks.
 *
 *   mpiexec -n N bench_mpi LOCATION LABEL [REPS]
 *
 * LOCATION: a directory or s3://bucket/prefix (settings from the AWS_* environment). The array:
 * uint16 [2048, 2048], shards [512, 512] of inner chunks [128, 128], bytes + zstd(1). Boxes of
 * 256 x 256, dealt block-cyclically over a pr x pc grid of ranks (N = 2: 1 x 2, N = 4: 2 x 2),
 * so 2 (N = 2) or 4 (N = 4) ranks write into every shard; each rank keeps its boxes in row-major
 * order and "round" k is every rank's k-th box.
 *
 * For each repetition:
 *   write/collective   one zarr_mpi_array_write_all per round, into a fresh array;
 *   write/independent  each rank zarr_array_write of its boxes, one after the other, no
 *                      synchronisation between ranks, into another fresh array;
 *   read/collective    one zarr_mpi_array_read_all per round, of the collectively written array;
 *   read/independent   each rank zarr_array_read of its boxes.
 * Each is timed with MPI_Wtime after a barrier (the max over ranks), with the request counts
 * of zarr_store_request_stats summed over ranks. After each write rank 0 reopens the array and
 * counts the elements that differ from the expected values; after each read every rank counts
 * the elements of its boxes that differ (summed). Rank 0 prints one tab-separated line per
 * measurement:
 *   ROW label N mode op rep seconds requests put get bytes_sent conflicts wrong
 * Exit status 0 unless a call failed or a collective operation gave a wrong element.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_mpi.h"

#define SIDE 2048u
#define SHARD 512u
#define INNER 128u
#define BOX 256u
#define BOXES (SIDE / BOX) /* boxes along each dimension */

static int rank, size;
static int hard_failures;

#define OK(call)                                                                        \
  do {                                                                                  \
    zarr_status s_ = (call);                                                            \
    if (s_ != ZARR_OK) {                                                                \
      fprintf(stderr, "rank %d: %s: %s (%s)\n", rank, #call, zarr_status_name(s_),      \
              zarr_last_error());                                                       \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                     \
    }                                                                                   \
  } while (0)

static const char *METADATA =
    "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [2048, 2048],"
    " \"data_type\": \"uint16\", \"fill_value\": 0,"
    " \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [512, 512]}},"
    " \"chunk_key_encoding\": {\"name\": \"default\", \"configuration\": {\"separator\": \"/\"}},"
    " \"codecs\": [{\"name\": \"sharding_indexed\", \"configuration\": {"
    "   \"chunk_shape\": [128, 128],"
    "   \"codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}},"
    "              {\"name\": \"zstd\", \"configuration\": {\"level\": 1, \"checksum\": false}}],"
    "   \"index_codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}},"
    "                    {\"name\": \"crc32c\"}],"
    "   \"index_location\": \"end\"}}]}";

/* The value of element (r, c) of a repetition's array: never the fill value 0, so that a lost
 * write shows; mildly compressible (a smooth part and a little noise). */
static uint16_t value(uint32_t rep, uint64_t r, uint64_t c) {
  uint32_t h = (uint32_t)(r * 2654435761u) ^ (uint32_t)(c * 40503u) ^ (rep * 977u);
  return (uint16_t)(1 + ((r * 3 + c * 5 + rep * 11 + (h >> 28)) % 60000));
}

typedef struct {
  uint64_t start[2], count[2];
} box_t;

/* This rank's boxes, row-major over the box grid; returns how many (at most BOXES*BOXES). */
static int my_boxes(box_t *out) {
  int pr = 1;
  for (int d = 1; d * d <= size; d++)
    if (size % d == 0) pr = d;
  int pc = size / pr, pi = rank / pc, pj = rank % pc, n = 0;
  for (unsigned bi = 0; bi < BOXES; bi++)
    for (unsigned bj = 0; bj < BOXES; bj++)
      if ((int)(bi % (unsigned)pr) == pi && (int)(bj % (unsigned)pc) == pj) {
        out[n].start[0] = (uint64_t)bi * BOX;
        out[n].start[1] = (uint64_t)bj * BOX;
        out[n].count[0] = out[n].count[1] = BOX;
        n++;
      }
  return n;
}

static void fill_box(uint32_t rep, const box_t *b, uint16_t *buf) {
  for (uint64_t i = 0; i < b->count[0]; i++)
    for (uint64_t j = 0; j < b->count[1]; j++)
      buf[i * b->count[1] + j] = value(rep, b->start[0] + i, b->start[1] + j);
}

static uint64_t wrong_in_box(uint32_t rep, const box_t *b, const uint16_t *buf) {
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < b->count[0]; i++)
    for (uint64_t j = 0; j < b->count[1]; j++)
      wrong += buf[i * b->count[1] + j] != value(rep, b->start[0] + i, b->start[1] + j);
  return wrong;
}

/* Counters summed over ranks: requests, PUT, GET, bytes sent, conflicts (conditional writes
 * the server refused because another writer changed the shard first). */
#define NCOUNTS 5
typedef struct {
  uint64_t v[NCOUNTS];
} counts_t;

static counts_t snapshot(zarr_store *store) {
  zarr_request_stats s;
  OK(zarr_store_request_stats(store, &s));
  counts_t c = {{s.requests, s.put, s.get, s.bytes_sent, s.conflicts}};
  return c;
}

/* Rank 0 reopens `path` and counts the elements that differ from repetition `rep`'s values. */
static uint64_t verify_all(zarr_store *store, const char *path, uint32_t rep) {
  uint64_t wrong = 0;
  if (rank == 0) {
    zarr_array *array;
    OK(zarr_array_open(store, path, &array));
    box_t all = {{0, 0}, {SIDE, SIDE}};
    uint16_t *buf = malloc((size_t)SIDE * SIDE * 2);
    OK(zarr_array_read(array, 2, all.start, all.count, buf, (size_t)SIDE * SIDE * 2));
    wrong = wrong_in_box(rep, &all, buf);
    free(buf);
    OK(zarr_array_close(array));
  }
  MPI_Bcast(&wrong, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return wrong;
}

static const char *label;

/* One measurement: the time is the max over ranks, the request counts the sum over ranks (the
 * difference of `after` and `before` on each). Prints the row on rank 0. */
static void report(const char *mode, const char *opname, int rep, double seconds,
                   counts_t before, counts_t after, uint64_t wrong) {
  uint64_t mine[NCOUNTS], sum[NCOUNTS];
  for (int k = 0; k < NCOUNTS; k++) mine[k] = after.v[k] - before.v[k];
  MPI_Reduce(mine, sum, NCOUNTS, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  double max;
  MPI_Reduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ROW\t%s\t%d\t%s\t%s\t%d\t%.4f\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
           "\t%" PRIu64 "\t%" PRIu64 "\n",
           label, size, mode, opname, rep, max, sum[0], sum[1], sum[2], sum[3], sum[4], wrong);
    fflush(stdout);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: bench_mpi LOCATION LABEL [REPS]\n");
    MPI_Finalize();
    return 2;
  }
  const char *location = argv[1];
  label = argv[2];
  int reps = argc > 3 ? atoi(argv[3]) : 3;

  box_t boxes[BOXES * BOXES];
  int nbox = my_boxes(boxes), rounds;
  MPI_Allreduce(&nbox, &rounds, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  size_t box_bytes = (size_t)BOX * BOX * 2;
  uint16_t *data = malloc(box_bytes * (size_t)(nbox ? nbox : 1));

  zarr_store *store;
  OK(zarr_mpi_store_open(MPI_COMM_WORLD, location, ZARR_MODE_WRITE, NULL, &store));

  char path[64];
  for (int rep = 0; rep < reps; rep++) {
    for (int b = 0; b < nbox; b++) fill_box((uint32_t)rep, &boxes[b], data + b * BOX * BOX);
    for (int m = 0; m < 2; m++) {
      int collective = m == 0;
      snprintf(path, sizeof path, "w-%s-%d", collective ? "coll" : "ind", rep);
      zarr_array *array;
      OK(zarr_mpi_array_create(MPI_COMM_WORLD, store, path, METADATA, &array));
      OK(zarr_array_close(array));
      OK(zarr_mpi_array_open(MPI_COMM_WORLD, store, path, &array));
      MPI_Barrier(MPI_COMM_WORLD);
      counts_t before = snapshot(store);
      double t0 = MPI_Wtime();
      if (collective) {
        static const uint64_t zero[2] = {0, 0};
        for (int k = 0; k < rounds; k++) {
          const box_t *b = k < nbox ? &boxes[k] : NULL;
          OK(zarr_mpi_array_write_all(MPI_COMM_WORLD, array, 2, b ? b->start : zero,
                                      b ? b->count : zero, b ? data + k * BOX * BOX : NULL,
                                      b ? box_bytes : 0));
        }
      } else {
        for (int k = 0; k < nbox; k++)
          OK(zarr_array_write(array, 2, boxes[k].start, boxes[k].count, data + k * BOX * BOX,
                              box_bytes));
      }
      double seconds = MPI_Wtime() - t0;
      counts_t after = snapshot(store);
      OK(zarr_array_close(array));
      MPI_Barrier(MPI_COMM_WORLD);
      uint64_t wrong = verify_all(store, path, (uint32_t)rep);
      if (collective && wrong) hard_failures++;
      report(collective ? "collective" : "independent", "write", rep, seconds, before, after,
             wrong);
    }
  }

  /* Reads of the array the first collective write made (verified above). */
  uint16_t *got = malloc(box_bytes * (size_t)(nbox ? nbox : 1));
  for (int rep = 0; rep < reps; rep++) {
    for (int m = 0; m < 2; m++) {
      int collective = m == 0;
      zarr_array *array;
      OK(zarr_mpi_array_open(MPI_COMM_WORLD, store, "w-coll-0", &array));
      memset(got, 0, box_bytes * (size_t)(nbox ? nbox : 1));
      MPI_Barrier(MPI_COMM_WORLD);
      counts_t before = snapshot(store);
      double t0 = MPI_Wtime();
      if (collective) {
        static const uint64_t zero[2] = {0, 0};
        uint16_t dummy;
        for (int k = 0; k < rounds; k++) {
          const box_t *b = k < nbox ? &boxes[k] : NULL;
          OK(zarr_mpi_array_read_all(MPI_COMM_WORLD, array, 2, b ? b->start : zero,
                                     b ? b->count : zero, b ? got + k * BOX * BOX : &dummy,
                                     b ? box_bytes : 0));
        }
      } else {
        for (int k = 0; k < nbox; k++)
          OK(zarr_array_read(array, 2, boxes[k].start, boxes[k].count, got + k * BOX * BOX,
                             box_bytes));
      }
      double seconds = MPI_Wtime() - t0;
      counts_t after = snapshot(store);
      OK(zarr_array_close(array));
      uint64_t mine = 0, wrong = 0;
      for (int k = 0; k < nbox; k++) mine += wrong_in_box(0, &boxes[k], got + k * BOX * BOX);
      MPI_Allreduce(&mine, &wrong, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      if (wrong) hard_failures++;
      report(collective ? "collective" : "independent", "read", rep, seconds, before, after,
             wrong);
    }
  }

  /* Leave nothing behind in a remote store. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && strncmp(location, "s3://", 5) == 0) {
    for (int rep = 0; rep < reps; rep++)
      for (int m = 0; m < 2; m++) {
        snprintf(path, sizeof path, "w-%s-%d", m == 0 ? "coll" : "ind", rep);
        zarr_status s = zarr_store_delete(store, path);
        if (s != ZARR_OK && s != ZARR_ERR_NOT_FOUND)
          fprintf(stderr, "delete %s: %s (%s)\n", path, zarr_status_name(s), zarr_last_error());
      }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  OK(zarr_store_close(store));
  free(data);
  free(got);
  int any;
  MPI_Allreduce(&hard_failures, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
