! A Fortran program built against an installed libzarr (scripts/consumer-test.sh): writes an
! array to a store in memory with the `zarr` module and reads it back. Prints "ok VERSION" and
! exits 0, or says what failed and exits 1.
program app
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use zarr
  implicit none
  type(zarr_store) :: store
  type(zarr_array) :: array
  real(real64) :: values(4, 3), back(4, 3)
  integer :: i
  values = reshape([(i * 0.5_real64, i = 1, 12)], [4, 3])
  if (zarr_open_store("memory:", ZARR_MODE_WRITE, store) /= ZARR_OK) call fail("open")
  if (zarr_create(store, "a", [4_int64, 3_int64], [2_int64, 2_int64], "<f8", array) /= ZARR_OK) &
    call fail("create")
  if (zarr_put(array, values) /= ZARR_OK) call fail("put")
  if (zarr_get(array, back) /= ZARR_OK) call fail("get")
  if (any(abs(back - values) > 0)) call fail("read back other values")
  if (zarr_close(array) /= ZARR_OK .or. zarr_close(store) /= ZARR_OK) call fail("close")
  print "(A)", "ok " // zarr_version()

contains

  subroutine fail(what)
    character(*), intent(in) :: what
    print "(A)", what // " failed: " // zarr_errmsg()
    stop 1
  end subroutine fail
end program app
