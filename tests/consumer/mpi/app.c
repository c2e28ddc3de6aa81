/* Two ranks write one array collectively through an installed libzarr_mpi and read it back:
 * prints "ok" from rank 0. */
#include <stdio.h>
#include <zarr_mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  zarr_store *store = NULL;
  zarr_array *array = NULL;
  zarr_status s = zarr_mpi_store_open(MPI_COMM_WORLD, argc > 1 ? argv[1] : "consumer.zarr",
                                      ZARR_MODE_OVERWRITE, NULL, &store);
  if (s == ZARR_OK)
    s = zarr_mpi_array_create(MPI_COMM_WORLD, store, "a",
                              "{\"shape\": [8], \"chunks\": [3], \"dtype\": \"<i4\"}", &array);
  int32_t mine[4], back[4];
  for (int i = 0; i < 4; i++) mine[i] = rank * 4 + i;
  uint64_t start[1] = {(uint64_t)rank * 4}, count[1] = {rank < 2 ? 4 : 0};
  if (s == ZARR_OK)
    s = zarr_mpi_array_write_all(MPI_COMM_WORLD, array, 1, start, count, mine, count[0] * 4);
  if (s == ZARR_OK)
    s = zarr_mpi_array_read_all(MPI_COMM_WORLD, array, 1, start, count, back, count[0] * 4);
  for (uint64_t i = 0; s == ZARR_OK && i < count[0]; i++)
    if (back[i] != mine[i]) s = ZARR_ERR_INTERNAL;
  zarr_array_close(array);
  zarr_store_close(store);
  if (rank == 0) printf("%s\n", s == ZARR_OK ? "ok" : zarr_last_error());
  MPI_Finalize();
  return s == ZARR_OK ? 0 : 1;
}
