! The Fortran module zarr_mpi under mpiexec (CTest mpi_fortran): every rank writes a slab of
! columns of a 10 x 13 real(real64) array (Zarr shape [13, 10], chunks [4, 3]: slabs cross
! chunk edges; the last ranks may have none) with zarr_mpi_put, reads it back with
! zarr_mpi_get, and rank 0 reads the whole array with zarr_get; then a wrong kind on the last
! rank fails every rank with the same status. Exit status 0 when every check passes.
program test_mpi
  use mpi
  use, intrinsic :: iso_fortran_env, only: int32, real64
  use zarr
  use zarr_mpi
  implicit none
  integer, parameter :: nrows = 10, ncols = 13
  integer :: ierr, rank, size, failures, all_failures, i, j, per, c0, c1, status, lowest, highest
  type(zarr_store) :: store
  type(zarr_array) :: a
  real(real64), allocatable :: mine(:, :), back(:, :), whole(:, :)
  integer(int32) :: wrong(1, 1)
  character(len=4096) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  failures = 0
  call get_command_argument(1, dir)
  call check(zarr_mpi_open_store(MPI_COMM_WORLD, trim(dir), ZARR_MODE_OVERWRITE, store), "open")
  call check(zarr_mpi_create_array(MPI_COMM_WORLD, store, "t", '{"shape": [13, 10], ' // &
    '"chunks": [4, 3], "dtype": "<f8", "compressor": {"id": "zlib", "level": 1}}', a), "create")

  per = (ncols + size - 1) / size
  c0 = min(rank * per, ncols)
  c1 = min(c0 + per, ncols)
  allocate (mine(nrows, c1 - c0), back(nrows, c1 - c0))
  do j = 1, c1 - c0
    do i = 1, nrows
      mine(i, j) = expected(i, c0 + j)
    end do
  end do
  call check(zarr_mpi_put(MPI_COMM_WORLD, a, mine, start=[1, c0 + 1], count=[nrows, c1 - c0]), "put")
  call check(zarr_mpi_get(MPI_COMM_WORLD, a, back, start=[1, c0 + 1], count=[nrows, c1 - c0]), "get")
  if (any(back /= mine)) call fail("a slab reads back other values")
  if (rank == 0) then
    allocate (whole(nrows, ncols))
    call check(zarr_get(a, whole), "serial get")
    do j = 1, ncols
      do i = 1, nrows
        if (whole(i, j) /= expected(i, j)) call fail("the whole array differs from the slabs")
      end do
    end do
  end if

  ! A wrong kind on the last rank: its own check fails, and every rank returns that status.
  if (rank == size - 1) then
    status = zarr_mpi_put(MPI_COMM_WORLD, a, wrong, start=[1, 1], count=[1, 1])
  else
    status = zarr_mpi_put(MPI_COMM_WORLD, a, mine, start=[1, 1], count=[0, 0])
  end if
  call MPI_Allreduce(status, lowest, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(status, highest, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (status == ZARR_OK .or. lowest /= highest) call fail("a wrong kind on one rank: " // zarr_status_name(status))

  call check(zarr_close(a), "close array")
  call check(zarr_close(store), "close store")
  call MPI_Allreduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a, i0, a)', "zarr_mpi (Fortran): ", size, " ranks, ", all_failures, " failed checks"
  call MPI_Finalize(ierr)
  if (all_failures /= 0) error stop 1

contains

  pure function expected(i, j) result(v)
    integer, intent(in) :: i, j
    real(real64) :: v
    v = real(i, real64) + 100 * real(j, real64)
  end function expected

  subroutine check(got, what)
    integer, intent(in) :: got
    character(*), intent(in) :: what
    if (got /= ZARR_OK) call fail(what // ": " // zarr_status_name(got) // ": " // zarr_errmsg())
  end subroutine check

  subroutine fail(why)
    character(*), intent(in) :: why
    print '(a, i0, 2a)', "rank ", rank, ": ", why
    failures = failures + 1
  end subroutine fail
end program test_mpi
