! The Fortran module against a directory store: the order convention checked on the stored
! bytes themselves, boxes and slabs with start and count, attributes, groups, and the errors.
! Exits 1 naming the first failure.
program test_fortran
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64
  use zarr
  implicit none
  character(*), parameter :: dir = "test_fortran.zarr"
  type(zarr_store) :: store
  type(zarr_array) :: a, cube
  type(zarr_group) :: g
  real(real64) :: x(6, 4), y(3), raw(24), slab(6, 4), c(6, 4, 3)
  integer(int32) :: wrong(6, 4)
  integer(int64), allocatable :: got(:)
  character(:), allocatable :: json
  integer :: i, k, r, ndims, unit

  call execute_command_line("rm -rf " // dir)
  call check(zarr_open_store(dir, ZARR_MODE_WRITE, store), "open the store")
  if (len(zarr_version()) == 0) call fail("zarr_version() is empty")
  if (zarr_status_name(ZARR_ERR_NOT_FOUND) /= "ZARR_ERR_NOT_FOUND") call fail("zarr_status_name")

  ! x(6, 4) is the Zarr array of shape [4, 6]: its one uncompressed chunk holds the values in
  ! C order, Zarr element [r, c] at r * 6 + c, which is x(c + 1, r + 1).
  x = reshape([(real(i, real64) / 8, i = 1, 24)], [6, 4])
  call check(zarr_create(store, "x", [6_int64, 4_int64], [6_int64, 4_int64], "<f8", a, &
    compressor="null"), "create x")
  call check(zarr_put(a, x), "put x")
  open (newunit=unit, file=dir // "/x/0.0", access="stream", form="unformatted", status="old")
  read (unit) raw
  close (unit)
  do r = 0, 3
    do k = 0, 5
      if (raw(r * 6 + k + 1) /= x(k + 1, r + 1)) call fail("the stored chunk is not C order")
    end do
  end do
  call check(zarr_shape(a, got), "shape")
  if (size(got) /= 2 .or. any(got /= [6_int64, 4_int64])) call fail("zarr_shape is not [6, 4]")
  call check(zarr_ndims(a, ndims), "ndims")
  if (ndims /= 2) call fail("zarr_ndims is not 2")

  ! A box with start and count (1-based, Fortran order): x(2:4, 3).
  call check(zarr_get(a, y, start=[2, 3], count=[3, 1]), "get a box")
  if (any(y /= x(2:4, 3))) call fail("the box is not x(2:4, 3)")
  call check(zarr_close(a), "close x")

  ! Opened again, read whole.
  call check(zarr_open_array(store, "x", a), "open x")
  call check(zarr_get(a, slab), "get x")
  if (any(slab /= x)) call fail("x read back differs")
  ! Into a section that is not contiguous: every other row of the variable.
  slab = 0
  call check(zarr_get(a, slab(1:6:2, :), start=[1, 1], count=[3, 4]), "get into a section")
  if (any(slab(1:6:2, :) /= x(1:3, :)) .or. any(slab(2:6:2, :) /= 0)) call fail("the section")

  ! A 2-D slab of a 3-D array: start of the array's rank, the count defaults to the
  ! variable's extent and 1 past its rank.
  c = reshape([(real(i, real64), i = 1, 72)], [6, 4, 3])
  call check(zarr_create(store, "c", [6_int64, 4_int64, 3_int64], [3_int64, 2_int64, 1_int64], &
    "<f8", cube), "create c")
  call check(zarr_put(cube, c), "put c")
  call check(zarr_get(cube, slab, start=[1, 1, 2]), "get a slab")
  if (any(slab /= c(:, :, 2))) call fail("the slab is not c(:, :, 2)")
  slab = -slab
  call check(zarr_put(cube, slab, start=[1, 1, 3]), "put a slab")
  call check(zarr_get(cube, c), "get c")
  if (any(c(:, :, 3) /= -c(:, :, 2))) call fail("the slab written is not c(:, :, 3)")
  call check(zarr_close(cube), "close c")

  ! Attributes, of an array and of a group.
  call check(zarr_put_attrs(a, '{"units": "m", "scale": 2.5}'), "put attributes")
  call check(zarr_get_attrs(a, json), "get attributes")
  if (index(json, '"units"') == 0 .or. index(json, "2.5") == 0) call fail("attributes: " // json)
  call check(zarr_create_group(store, "g/h", g), "create a group")
  call check(zarr_put_attrs(g, '{"title": "test"}'), "put group attributes")
  call check(zarr_close(g), "close the group")
  call check(zarr_open_group(store, "g/h", g), "open the group")
  call check(zarr_get_attrs(g, json), "get group attributes")
  if (index(json, '"title"') == 0) call fail("group attributes: " // json)
  call check(zarr_close(g), "close the group")

  ! Errors: a status and libzarr's message.
  call expect(zarr_get(a, wrong), ZARR_ERR_INVALID_ARGUMENT, "float", "a get of the wrong kind")
  call expect(zarr_get(a, y, start=[5, 3], count=[3, 1]), ZARR_ERR_OUT_OF_BOUNDS, "", &
    "a box past the end")
  call expect(zarr_get(a, y, start=[1, 1], count=[2, 1]), ZARR_ERR_BUFFER_SIZE, "", &
    "a count that is not the variable's size")
  call expect(zarr_open_array(store, "missing", cube), ZARR_ERR_NOT_FOUND, "missing", &
    "opening a missing array")
  call check(zarr_close(a), "close x")
  call check(zarr_close(a), "close x twice")
  call check(zarr_close(store), "close the store")
  call execute_command_line("rm -rf " // dir)
  deallocate (got, json) ! main program variables are not freed at its end
  print "(A)", "ok the Fortran module reads and writes in Fortran order"

contains

  subroutine fail(what)
    character(*), intent(in) :: what
    print "(A)", "FAILED: " // what
    stop 1
  end subroutine fail

  subroutine check(status, what)
    integer, intent(in) :: status
    character(*), intent(in) :: what
    if (status /= ZARR_OK) call fail(what // ": " // zarr_status_name(status) // ": " // zarr_errmsg())
  end subroutine check

  subroutine expect(status, wanted, words, what)
    integer, intent(in) :: status, wanted
    character(*), intent(in) :: words, what
    if (status /= wanted) call fail(what // " gave " // zarr_status_name(status))
    if (index(zarr_errmsg(), words) == 0) call fail(what // ": the message " // zarr_errmsg())
  end subroutine expect
end program test_fortran
