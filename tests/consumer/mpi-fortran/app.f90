! Two ranks write one array collectively through an installed `zarr_mpi` module and read it
! back (scripts/consumer-test.sh): prints "ok" from rank 0, or what failed, and exits 1 then.
program app
  use mpi
  use, intrinsic :: iso_fortran_env, only: int32
  use zarr
  use zarr_mpi
  implicit none
  integer :: ierr, rank, n, status, i
  type(zarr_store) :: store
  type(zarr_array) :: array
  integer(int32) :: mine(4), back(4)
  character(len=4096) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, dir)
  mine = [(rank * 4 + i, i = 1, 4)]
  back = 0
  n = merge(4, 0, rank < 2)
  status = zarr_mpi_open_store(MPI_COMM_WORLD, trim(dir), ZARR_MODE_OVERWRITE, store)
  if (status == ZARR_OK) status = zarr_mpi_create_array(MPI_COMM_WORLD, store, "a", &
    '{"shape": [8], "chunks": [3], "dtype": "<i4"}', array)
  if (status == ZARR_OK) status = zarr_mpi_put(MPI_COMM_WORLD, array, mine(1:n), &
    start=[rank * 4 + 1], count=[n])
  if (status == ZARR_OK) status = zarr_mpi_get(MPI_COMM_WORLD, array, back(1:n), &
    start=[rank * 4 + 1], count=[n])
  if (status == ZARR_OK .and. any(back(1:n) /= mine(1:n))) status = -1
  if (rank == 0) then
    if (status == ZARR_OK) then
      print "(A)", "ok"
    else
      print "(A)", "failed: " // zarr_errmsg()
    end if
  end if
  call MPI_Finalize(ierr)
  if (status /= ZARR_OK) stop 1
end program app
