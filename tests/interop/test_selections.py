"""Selections beyond boxes, in both directions, against zarr-python's own selection API: orthogonal selections
(index lists unsorted and with repeats, stepped slices, ints), points, strided boxes; caller buffer strides;
write_empty_chunks; worker thread counts."""
import dataclasses
import itertools
import math
import shutil

import numpy as np
import pytest
import zarr

import libzarr
import zpy
from cases import Case, assert_same, fill_for, fill_scalar, native, random_data, store_files, zarr_python_writes

SEL_DTYPES = ["|b1", ">i2", "<f8", ">c8"]
SEL_COMPS = ["raw", "blosc-lz4-shuf", "zstd3"]
SEL_GEOMETRIES = [((23, 17, 9), (5, 4, 4)), ((41, 29), (8, 7))]  # edge chunks overhang in every dimension
SEL_CASES = [Case(dt, comp, order, "./"[i // 2 % 2], *SEL_GEOMETRIES[i // 4 % 2], fill_for(dt, i), seed=2000 + i)
             for i, (dt, comp, order) in enumerate(itertools.product(SEL_DTYPES, SEL_COMPS, "CF"))]


# ---------------------------------------------------------------- selections, and what they mean in numpy
def random_dim(rng, n):
    """One dimension of an orthogonal selection, of a random kind."""
    kind = rng.integers(6)
    if kind == 5:  # Boolean flags, one per index
        return rng.random(n) < 0.4
    if kind == 0:  # a stepped slice, sometimes open-ended
        start = int(rng.integers(0, n))
        return slice(start, None if rng.integers(2) else int(rng.integers(start + 1, n + 1)), int(rng.integers(1, 5)))
    if kind == 1:  # unsorted, with repeats
        return rng.integers(0, n, int(rng.integers(1, n + 4)))
    if kind == 2:  # sorted and unique
        return np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False))
    return slice(None) if kind == 3 else int(rng.integers(0, n))  # an int drops its dimension


def orthogonal_selections(rng, shape, n=8):
    yield [slice(None)] * len(shape)  # everything
    yield [s - 1 for s in shape]  # the last element, as a 0-d result
    yield [np.arange(s)[::-1] for s in shape]  # everything, reversed
    yield [slice(3, 3)] + [np.array([1, 1])] * (len(shape) - 1)  # nothing
    for _ in range(n):
        yield [random_dim(rng, s) for s in shape]


def point_sets(rng, shape, n=3):
    yield np.array([[0] * len(shape), [s - 1 for s in shape], [0] * len(shape)])  # corners, one repeated
    for _ in range(n):
        k = int(rng.integers(1, 60))
        c = np.stack([rng.integers(0, s, k) for s in shape], axis=1)
        yield rng.permutation(np.concatenate([c, c[:3]]))  # with repeats, in random order


def strided_boxes(rng, shape, n=5):
    """(start, count, step) boxes: everything, nothing, random stepped boxes."""
    yield (0,) * len(shape), tuple(shape), None
    yield (0,) * len(shape), (0,) + tuple(s // 2 for s in shape[1:]), (2,) * len(shape)
    for _ in range(n):
        start = [int(rng.integers(0, s)) for s in shape]
        step = [int(rng.integers(1, 6)) for _ in shape]
        yield start, [int(rng.integers(1, (s - o - 1) // t + 2)) for s, o, t in zip(shape, start, step)], step


def box_slices(start, count, step):
    step = step or (1,) * len(start)
    return tuple(slice(o, o + (c - 1) * t + 1 if c else o, t) for o, c, t in zip(start, count, step))


def dim_indices(item, n):
    """The indices one orthogonal selection item picks (1-D, in order)."""
    if isinstance(item, slice) or np.asarray(item).dtype == bool:
        return np.arange(n)[item]
    return np.atleast_1d(np.asarray(item, np.int64))


def extent_of(kind, sel, shape):
    """(per-dimension index arrays, result shape) of a selection; points: (coords, (npoints,))."""
    if kind == "points":
        return np.asarray(sel), (len(sel),)
    if kind == "strided":
        start, count, step = sel
        return [o + np.arange(c) * t for o, c, t in zip(start, count, step or [1] * len(start))], tuple(count)
    dims = [dim_indices(item, n) for item, n in zip(sel, shape)]
    return dims, tuple(len(d) for item, d in zip(sel, dims) if not isinstance(item, (int, np.integer)))


def assign(model, kind, sel, value):
    """The numpy model of a write; for repeated indices, numpy's last-wins (as libzarr documents)."""
    idx, result = extent_of(kind, sel, model.shape)
    if kind == "points":
        model[tuple(idx.T)] = value
    else:
        model[np.ix_(*idx)] = np.broadcast_to(value, result).reshape([len(d) for d in idx])


def touched_chunks(kind, sel, case):
    idx, _ = extent_of(kind, sel, case.shape)
    if kind == "points":
        return {tuple(int(i) for i in p // np.array(case.chunks)) for p in idx}
    return set(itertools.product(*({int(i) for i in d // c} for d, c in zip(idx, case.chunks))))


def libzarr_apply(arr, kind, sel, value):
    if kind == "orthogonal":
        arr.write_orthogonal(sel, value)
    elif kind == "points":
        arr.write_points(sel, value)
    else:
        start, count, step = sel
        arr.write_strided(value, start, step, count)


def zpy_apply(z, kind, sel, value):
    if kind == "orthogonal":
        z.set_orthogonal_selection(tuple(sel), value)
    elif kind == "points":
        z.set_coordinate_selection(tuple(np.asarray(sel).T), value)
    else:
        z[box_slices(*sel)] = value


def fill_only(block, fill):
    return np.ascontiguousarray(block).tobytes() == fill.tobytes() * block.size  # byte for byte, as libzarr


def chunk_files(root):
    return store_files(root) - {".zarray", ".zattrs"}


def expected_chunk_files(case, model, present, touched):
    """With write_empty_chunks off: chunks left untouched keep their state; touched chunks exist iff they hold
    something else than the fill value (bitwise)."""
    fill = fill_scalar(case.fill, case.dtype)
    keep = (present - touched) | {i for i in touched if not fill_only(model[case.region(i)], fill)}
    return {case.key(i) for i in keep}


# ---------------------------------------------------------------- zarr-python writes, libzarr reads
@pytest.mark.parametrize("case", SEL_CASES, ids=str)
def test_read_selections(case, tmp_path):
    zarr_python_writes(case, tmp_path)
    z, rng = zpy.open_array(tmp_path), np.random.default_rng(case.seed)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        for k, sel in enumerate(orthogonal_selections(rng, case.shape)):
            want = z.get_orthogonal_selection(tuple(sel)) if k % 2 else z.oindex[tuple(sel)]
            assert_same(arr.read_orthogonal(sel), want)
        for k, coords in enumerate(point_sets(rng, case.shape)):
            want = z.get_coordinate_selection(tuple(coords.T)) if k % 2 else z.vindex[tuple(coords.T)]
            assert_same(arr.read_points(coords), want)
        for start, count, step in strided_boxes(rng, case.shape):
            assert_same(arr.read_strided(start, count, step), z[box_slices(start, count, step)])


# ---------------------------------------------------------------- masks and blocks
@pytest.mark.parametrize("case", SEL_CASES[::3], ids=str)
def test_mask_and_block_selections(case, tmp_path):
    model = zarr_python_writes(case, tmp_path)
    z, rng = zpy.open_array(tmp_path, "r+"), np.random.default_rng(case.seed + 1)
    grid = [math.ceil(s / c) for s, c in zip(case.shape, case.chunks)]
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("") as arr:
        for density in (0.0, 0.05, 0.5, 1.0):
            mask = rng.random(case.shape) < density
            assert_same(arr.read_mask(mask), z.get_mask_selection(mask))
            assert_same(arr.read_mask(mask), z.vindex[mask])
        for _ in range(4):
            start = [int(rng.integers(0, g)) for g in grid]
            count = [int(rng.integers(0, g - s + 1)) for g, s in zip(grid, start)]
            blocks = tuple(slice(s, s + c) for s, c in zip(start, count))
            assert_same(arr.read_blocks(start, count), z.get_block_selection(blocks))
            assert_same(arr.read_blocks(start, count), z.blocks[blocks])
        mask = rng.random(case.shape) < 0.3
        value = random_data(case.dtype, (int(mask.sum()),), case.seed)
        arr.write_mask(mask, value)
        model[mask] = value
    assert_same(zpy.read(zpy.open_array(tmp_path)), model)
    # zarr-python writes a mask, libzarr reads it.
    mask = rng.random(case.shape) < 0.3
    value = random_data(case.dtype, (int(mask.sum()),), case.seed + 2)
    z.set_mask_selection(mask, value)
    model[mask] = value
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        assert_same(arr.read(), model)
        with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_BUFFER_SIZE"):
            arr.read_mask(mask.ravel()[:-1])
        with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_OUT_OF_BOUNDS"):
            arr.block_box(grid, [1] * len(grid))
        with pytest.raises(libzarr.LibzarrError, match="ZARR_ERR_INVALID_ARGUMENT"):
            arr.read_orthogonal([np.ones(case.shape[0] + 1, bool)] + [slice(None)] * (len(case.shape) - 1))


# ---------------------------------------------------------------- caller buffer strides
OUT_VIEWS = {  # name: (extent -> shape of the bigger array, (bigger array, extent) -> view of that extent)
    "sub-view": (lambda e: tuple(2 * c + 3 for c in e), lambda b, e: b[tuple(slice(2, 2 + 2 * c, 2) for c in e)]),
    "fortran": (lambda e: e[::-1], lambda b, e: b.T),
    "padded-rows": (lambda e: e[:-1] + (e[-1] + 5,), lambda b, e: b[..., 3:3 + e[-1]]),
    "transposed-sub-view": (lambda e: tuple(c + 2 for c in e[::-1]),
                            lambda b, e: b.T[tuple(slice(1, 1 + c) for c in e)]),
}


def read_into_view(read, extent, dtype, view_name, rng):
    """Runs read(out) with out a view into a bigger buffer of random bytes; checks that read returned the view
    and that no byte outside it changed. Returns the view."""
    big_shape, view_of = OUT_VIEWS[view_name]
    big_shape = big_shape(tuple(extent))
    raw = rng.integers(0, 256, math.prod(big_shape) * dtype.itemsize, dtype=np.uint8)
    before, big = raw.copy(), raw.view(dtype).reshape(big_shape)
    view = view_of(big, tuple(extent))
    assert view.shape == tuple(extent) and view.base is not None
    assert read(view) is view
    inside = np.zeros(big_shape, bool)
    view_of(inside, tuple(extent))[...] = True
    outside = np.repeat(~inside.ravel(), dtype.itemsize)
    assert np.array_equal(raw[outside], before[outside]), "bytes outside the view changed"
    return view


@pytest.mark.parametrize("case", SEL_CASES, ids=str)
def test_read_into_strided_buffers(case, tmp_path):
    zarr_python_writes(case, tmp_path)
    z, rng = zpy.open_array(tmp_path), np.random.default_rng(case.seed + 1)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        boxes, sels = list(strided_boxes(rng, case.shape, 3)), list(orthogonal_selections(rng, case.shape, 4))
        for k, view_name in enumerate(OUT_VIEWS):
            for start, count, step in boxes[1:]:  # [0] is everything: nothing around the view to check
                got = read_into_view(lambda out: arr.read_strided(start, count, step, out=out), count, arr.dtype,
                                     view_name, rng)
                assert_same(got, z[box_slices(start, count, step)])
            for sel in sels[3 + k % 2:]:  # random selections, some with ints (dropped dimensions)
                want = z.get_orthogonal_selection(tuple(sel))
                if want.ndim:
                    got = read_into_view(lambda out: arr.read_orthogonal(sel, out=out), want.shape, arr.dtype,
                                         view_name, rng)
                    assert_same(got, want)


# ---------------------------------------------------------------- libzarr writes, zarr-python reads
VALUE_LAYOUTS = {  # how the data given to a write is laid out in memory
    "C": lambda data: data.copy(order="C"),
    "F": lambda data: data.copy(order="F"),  # buffer strides
    "view": lambda data: np.repeat(np.expand_dims(data, -1), 2, -1)[..., 1],  # a view of a bigger array
    "scalar": lambda data: data.flat[0] if data.size else data,  # broadcast: zero buffer strides
    "fill": None,  # the fill value, broadcast
}
WRITE_PLAN = [("orthogonal", "C"), ("orthogonal", "F"), ("orthogonal", "view"), ("orthogonal", "scalar"),
              ("points", "C"), ("points", "scalar"), ("strided", "view"), ("strided", "F"), ("strided", "fill"),
              ("orthogonal", "fill"), ("strided", "C")]


def write_ops(case, seed):
    """(kind, selection, value) writes along WRITE_PLAN, with random selections and data."""
    rng = np.random.default_rng(seed)
    for k, (kind, layout) in enumerate(WRITE_PLAN):
        if layout == "fill" and kind == "strided":  # one whole chunk, then (below) random parts of chunks
            r = case.region(case.grid()[int(rng.integers(len(case.grid())))])
            sel = ([s.start for s in r], [s.stop - s.start for s in r], None)
        elif kind == "strided":
            sel = next(itertools.islice(strided_boxes(rng, case.shape), 2 + k % 3, None))
        elif kind == "points":
            sel = next(itertools.islice(point_sets(rng, case.shape), 1, None))
        else:
            sel = next(itertools.islice(orthogonal_selections(rng, case.shape), 4 + k % 2, None))
        _, result = extent_of(kind, sel, case.shape)
        if layout == "fill":
            value = fill_scalar(case.fill, case.dtype)
        else:
            value = VALUE_LAYOUTS[layout](random_data(case.dtype, result, seed + k))
        yield kind, sel, value


def libzarr_creates(case, root):
    with libzarr.open_store(root, "a") as store, store.create_array("", case.zarray()):
        pass
    return np.full(case.shape, fill_scalar(case.fill, case.dtype), native(case.dtype))


CREATORS = {"zpy-created": zarr_python_writes, "lib-created": libzarr_creates}


@pytest.mark.parametrize("creator", CREATORS)
@pytest.mark.parametrize("case", SEL_CASES, ids=str)
def test_write_selections(case, creator, tmp_path):
    model = CREATORS[creator](case, tmp_path)
    present = set(case.written()) if creator == "zpy-created" else set()
    touched = set()
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("") as arr:
        for kind, sel, value in write_ops(case, case.seed + 7):
            libzarr_apply(arr, kind, sel, value)
            assign(model, kind, sel, value)
            touched |= touched_chunks(kind, sel, case)
        assert_same(arr.read(), model)
    assert_same(zpy.read(zpy.open_array(tmp_path)), model)
    assert chunk_files(tmp_path) == expected_chunk_files(case, model, present, touched)


# ---------------------------------------------------------------- write_empty_chunks
EMPTY_GEOMETRY = dict(shape=(20, 14), chunks=(5, 4))  # a 4 x 4 grid; the last column of chunks is 2 wide
EMPTY_OPS = [  # (kind, selection, "data" or "fill")
    ("strided", ((0, 0), (20, 14), None), "data"),  # every chunk
    ("strided", ((0, 0), (5, 4), None), "fill"),  # chunk 0.0 all fill again
    ("strided", ((5, 0), (10, 8), None), "fill"),  # four whole chunks at once
    ("orthogonal", (slice(15, 20), slice(12, 14)), "fill"),  # the corner edge chunk
    ("points", [(i, j) for i in range(5) for j in (13, 12)], "fill"),  # edge chunk 0.3, point by point
    ("orthogonal", ([1, 3, 1], slice(4, 8)), "fill"),  # part of chunk 0.1: it stays
    ("strided", ((0, 8), (5, 2), None), "fill"),  # half of chunk 0.2 ...
    ("orthogonal", (np.arange(4, -1, -1), [11, 10]), "fill"),  # ... and the other half: now all fill
    ("strided", ((0, 0), (5, 4), None), "fill"),  # fill into a missing chunk
    ("strided", ((10, 1), (3, 2), (3, 2)), "fill"),  # stepped, into a missing and a stored chunk
    ("points", [(0, 0), (19, 13), (4, 3)], "data"),  # a lone value brings chunk 0.0 back
    ("strided", ((11, 9), (3, 2), (3, 3)), "data"),  # stepped, across chunks
]
EMPTY_CASES = [Case(dt, comp, "CF"[i % 2], "./"[i // 2 % 2], **EMPTY_GEOMETRY, fill=fill, seed=3000 + i)
               for i, ((dt, fill), comp) in enumerate(itertools.product(
                   [("<f8", math.nan), (">i4", -7), ("<u2", 0), (">c16", 1 + 2j)], SEL_COMPS))]


@pytest.mark.parametrize("write_empty", [False, True], ids=["skip-empty", "write-empty"])
@pytest.mark.parametrize("case", EMPTY_CASES, ids=str)
def test_write_empty_chunks(case, write_empty, tmp_path):
    """libzarr and zarr-python make the same writes, each into an array it created; both agree with the model
    on the data and on which chunk files exist."""
    lib_root, zpy_root = tmp_path / "lib", tmp_path / "zpy"
    model, touched = libzarr_creates(case, lib_root), set()
    zpy.create(zpy_root, **case.zpy_kwargs())
    z = zpy.open_for_writing(zpy_root, write_empty)
    with libzarr.open_store(lib_root, "a") as store, store.open_array("") as arr:
        assert arr.write_empty_chunks is False, "default: like zarr-python 3"
        arr.set_write_empty_chunks(write_empty)
        assert arr.write_empty_chunks is write_empty
        with store.open_array("") as other:
            assert other.write_empty_chunks is False, "the setting belongs to the handle"
        for k, (kind, sel, what) in enumerate(EMPTY_OPS):
            _, result = extent_of(kind, sel, case.shape)
            value = fill_scalar(case.fill, case.dtype) if what == "fill" else random_data(case.dtype, result, k)
            libzarr_apply(arr, kind, sel, value)
            zpy_apply(z, kind, sel, value)
            assign(model, kind, sel, value)
            touched |= touched_chunks(kind, sel, case)
            want = {case.key(i) for i in touched} if write_empty else expected_chunk_files(case, model, set(), touched)
            assert chunk_files(lib_root) == want, f"libzarr after write {k}: {kind} {sel} {what}"
            assert chunk_files(zpy_root) == want, f"zarr-python after write {k}: {kind} {sel} {what}"
    assert_same(zpy.read(zpy.open_array(lib_root)), model)
    with libzarr.open_store(zpy_root, "r") as store, store.open_array("") as arr:
        assert_same(arr.read(), model)


BITWISE = {  # fill value, and a value that compares equal to it (==, or both NaN) but has other bits
    "f8-negative-zero": ("<f8", 0.0, -0.0),
    "c8-negative-zero-imaginary": (">c8", 0j, complex(0.0, -0.0)),
    "f4-nan-payload": ("<f4", math.nan, np.uint32(0x7FC00001).view(np.float32)),
    "f8-negative-nan": (">f8", math.nan, -math.nan),
}


@pytest.mark.parametrize("dtype, fill, value", BITWISE.values(), ids=BITWISE.keys())
def test_empty_chunks_are_bitwise(dtype, fill, value, tmp_path):
    """A chunk is "empty" only when its bytes are the fill value's: a chunk of -0.0 (fill 0.0) or of another NaN
    (fill NaN) is kept, and zarr-python reads those exact bits back."""
    case = Case(dtype, "zstd3", **EMPTY_GEOMETRY, fill=fill)
    libzarr_creates(case, tmp_path)
    with libzarr.open_store(tmp_path, "a") as store, store.open_array("") as arr:
        arr.write_strided(value, (5, 4), (2, 1), (3, 4))  # every other row of chunk 1.1 ...
        arr.write_strided(value, (6, 4), (2, 1), (2, 4))  # ... and the rest
        block = arr.read((5, 4), (5, 4))
    assert chunk_files(tmp_path) == {case.key((1, 1))}
    want = np.full((5, 4), value, native(dtype)).tobytes()
    assert block.tobytes() == want
    assert np.asarray(zpy.open_array(tmp_path)[5:10, 4:8]).astype(native(dtype)).tobytes() == want


# ---------------------------------------------------------------- worker threads
THREAD_CASES = [dataclasses.replace(SEL_CASES[i], shape=(40, 36, 10), chunks=(6, 5, 4)) for i in (15, 22)]


def thread_run(case, root, work_root, rng_seed):
    """Reads and writes whose results must not depend on the thread count: (read results, written files)."""
    rng = np.random.default_rng(rng_seed)
    z, results = zpy.open_array(root), []
    with libzarr.open_store(root, "r") as store, store.open_array("") as arr:
        results.append(arr.read())
        for sel in orthogonal_selections(rng, case.shape, 4):
            results.append(arr.read_orthogonal(sel))
            assert_same(results[-1], z.get_orthogonal_selection(tuple(sel)))
        for coords in point_sets(rng, case.shape, 2):
            results.append(arr.read_points(coords))
        for start, count, step in strided_boxes(rng, case.shape, 2):
            out = np.zeros(count, arr.dtype, order="F")
            results.append(arr.read_strided(start, count, step, out=out))
    shutil.copytree(root, work_root)
    with libzarr.open_store(work_root, "a") as store, store.open_array("") as arr:
        for kind, sel, value in write_ops(case, rng_seed):
            libzarr_apply(arr, kind, sel, value)
    return [r.tobytes() for r in results], {f: (work_root / f).read_bytes() for f in store_files(work_root)}


@pytest.mark.parametrize("case", THREAD_CASES, ids=str)
def test_thread_counts(case, tmp_path, monkeypatch):
    z = zpy.create(tmp_path / "src", **case.zpy_kwargs())
    z[...] = random_data(case.dtype, case.shape, case.seed)
    runs = {1: [], 4: []}
    try:
        for n, threads in enumerate((1, 4, 1)):
            libzarr.set_num_threads(threads)
            assert libzarr.num_threads() == threads
            runs[threads].append(thread_run(case, tmp_path / "src", tmp_path / f"work{n}", case.seed))
        monkeypatch.setenv("ZARR_NUM_THREADS", "3")
        libzarr.set_num_threads(0)
        assert libzarr.num_threads() == 3, "0 restores the default: ZARR_NUM_THREADS"
    finally:
        monkeypatch.undo()
        libzarr.set_num_threads(0)
    assert libzarr.num_threads() >= 1
    (single, again), (four,) = runs[1], runs[4]
    assert single == again, "not deterministic with 1 thread"
    assert four[0] == single[0], "reads differ between 1 and 4 threads"
    assert four[1] == single[1], "written chunk files differ between 1 and 4 threads"


# ---------------------------------------------------------------- argument errors
def expect_status(names, fn, *args):
    with pytest.raises(libzarr.LibzarrError) as e:
        fn(*args)
    assert e.value.name in names.split("|"), str(e.value)
    assert e.value.message


def test_selection_errors(tmp_path):
    case = SEL_CASES[14]
    zarr_python_writes(case, tmp_path)
    shape, u64 = case.shape, libzarr._u64
    nd = len(shape)
    with libzarr.open_store(tmp_path, "r") as store, store.open_array("") as arr:
        out, item = np.zeros(16, arr.dtype), arr.dtype.itemsize
        expect_status("ZARR_ERR_INVALID_ARGUMENT", arr.read_strided, (0,) * nd, (2,) * nd, (0,) * nd)  # step 0
        expect_status("ZARR_ERR_OUT_OF_BOUNDS", arr.read_strided, (0,) * nd, (2,) * nd, (shape[0],) + (1,) * (nd - 1))
        expect_status("ZARR_ERR_OUT_OF_BOUNDS", arr.read_orthogonal, [[0, shape[0]]] + [slice(None)] * (nd - 1))
        expect_status("ZARR_ERR_OUT_OF_BOUNDS", arr.read_orthogonal, [[-shape[0] - 1]] + [0] * (nd - 1))
        expect_status("ZARR_ERR_OUT_OF_BOUNDS", arr.read_points, [[0] * nd, list(shape)])
        expect_status("ZARR_ERR_INVALID_ARGUMENT", libzarr._call, "zarr_array_read_strided", arr.handle, nd + 1,
                      u64([0] * (nd + 1)), u64([1] * (nd + 1)), None, None, out.ctypes.data, item)
        sel = (libzarr.DimSelection * nd)(*[libzarr.DimSelection(None, 2, 0, 0)] * nd)  # a range with step 0
        expect_status("ZARR_ERR_INVALID_ARGUMENT", libzarr._call, "zarr_array_read_orthogonal", arr.handle, nd, sel,
                      None, out.ctypes.data, item * 2 ** nd)
        dense = (u64([0] * nd), u64([1] * (nd - 1) + [2]), None)
        expect_status("ZARR_ERR_BUFFER_SIZE", libzarr._call, "zarr_array_read_strided", arr.handle, nd, *dense, None,
                      out.ctypes.data, out.nbytes)  # 2 elements, dense, into a buffer of 16
        for status, strides, size in [("ZARR_ERR_INVALID_ARGUMENT", [0] * nd, out.nbytes),  # elements overlap
                                      ("ZARR_ERR_BUFFER_SIZE", [1] * (nd - 1) + [4], 4 * item)]:  # past the end
            expect_status(status, libzarr._call, "zarr_array_read_strided", arr.handle, nd, *dense, u64(strides),
                          out.ctypes.data, size)
        for call, args in [(arr.write_orthogonal, ([0] * nd, 1)), (arr.write_points, ([[0] * nd], 1)),
                           (arr.write_strided, (1, (0,) * nd, None, (1,) * nd))]:
            expect_status("ZARR_ERR_READ_ONLY", call, *args)
    assert np.all(out == 0), "failed reads wrote into the buffer"
    expect_status("ZARR_ERR_INVALID_ARGUMENT", libzarr.set_num_threads, 10 ** 6)
