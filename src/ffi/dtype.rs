//! Data types as C sees them: the kind and size, the type string, datetime units, the fields
//! of structured types, and UTF-32 ⇄ UTF-8 conversion for fixed-width unicode values.

use super::array::{array_arg, box_args, text_out, zarr_array};
use super::boundary::{c_string, out_arg, run, slice_arg, slice_out, str_arg};
use super::selection::{selection_arg, zarr_selection};
use super::status::zarr_status;
use crate::dtype::small_float::Direction;
use crate::dtype::{utf32, DataType, DataTypeKind, Field, SmallFloat, SmallType};
use crate::error::{Error, Result};
use serde_json::Value;
use std::ffi::{c_char, c_void};

/// The kind of values an array holds (`zarr_array_dtype`).
#[allow(non_camel_case_types)]
pub type zarr_dtype_kind = i32;
/// `|b1`: one byte per value, 0 or 1.
pub const ZARR_DTYPE_BOOL: zarr_dtype_kind = 1;
/// Signed integers (`i1`, `i2`, `i4`, `i8`; and Zarr v3's `int2` and `int4`, one `int8_t` per
/// value, which a write refuses outside the type's range).
pub const ZARR_DTYPE_INT: zarr_dtype_kind = 2;
/// Unsigned integers (`u1`, `u2`, `u4`, `u8`; and Zarr v3's `uint2` and `uint4`, one `uint8_t`
/// per value, which a write refuses outside the type's range).
pub const ZARR_DTYPE_UINT: zarr_dtype_kind = 3;
/// IEEE floats (`f2`, `f4`, `f8`); `f2` values are passed as raw 16-bit halves.
pub const ZARR_DTYPE_FLOAT: zarr_dtype_kind = 4;
/// Complex numbers (`c8`, `c16`): real then imaginary part, each a float of half the size.
pub const ZARR_DTYPE_COMPLEX: zarr_dtype_kind = 5;
/// `|S<n>`: fixed-length byte strings, zero-padded to n bytes.
pub const ZARR_DTYPE_BYTES: zarr_dtype_kind = 6;
/// `<U<n>` / `>U<n>`: fixed-length text, n UTF-32 code units (native byte order in caller
/// buffers), zero-padded; see `zarr_utf32_to_utf8`.
pub const ZARR_DTYPE_UNICODE: zarr_dtype_kind = 7;
/// `|V<n>`: n raw bytes.
pub const ZARR_DTYPE_RAW: zarr_dtype_kind = 8;
/// `M8[unit]`: NumPy datetime64, an `int64_t` count of units since 1970-01-01T00:00
/// (`INT64_MIN` is NaT); see `zarr_array_time_unit`.
pub const ZARR_DTYPE_DATETIME: zarr_dtype_kind = 9;
/// `m8[unit]`: NumPy timedelta64, an `int64_t` count of units (`INT64_MIN` is NaT).
pub const ZARR_DTYPE_TIMEDELTA: zarr_dtype_kind = 10;
/// A structured (record) type; see `zarr_array_field_count` and `zarr_array_field`.
pub const ZARR_DTYPE_STRUCTURED: zarr_dtype_kind = 11;
/// `|O`: variable-length values (text, byte strings or arrays, as `zarr_array_object_codec`
/// says), read and written with `zarr_array_read_vlen` / `zarr_array_write_vlen`; the item
/// size is 0.
pub const ZARR_DTYPE_OBJECT: zarr_dtype_kind = 12;
/// A Zarr v3 small float of zarr-extensions: `bfloat16` (a `uint16_t` code per value) or a
/// float8, float6 or float4 format (a `uint8_t` code per value; float6 and float4 in its low
/// bits, the others zero). `zarr_array_dtype_string` names the format;
/// `zarr_small_float_to_double` and `zarr_small_float_from_double` convert values.
pub const ZARR_DTYPE_SMALL_FLOAT: zarr_dtype_kind = 13;

fn kind_code(dtype: &DataType) -> zarr_dtype_kind {
    match dtype.kind {
        DataTypeKind::Bool => ZARR_DTYPE_BOOL,
        DataTypeKind::Int => ZARR_DTYPE_INT,
        DataTypeKind::UInt => ZARR_DTYPE_UINT,
        DataTypeKind::Float => ZARR_DTYPE_FLOAT,
        DataTypeKind::Complex => ZARR_DTYPE_COMPLEX,
        DataTypeKind::Bytes => ZARR_DTYPE_BYTES,
        DataTypeKind::Unicode => ZARR_DTYPE_UNICODE,
        DataTypeKind::Raw => ZARR_DTYPE_RAW,
        DataTypeKind::DateTime(_) => ZARR_DTYPE_DATETIME,
        DataTypeKind::TimeDelta(_) => ZARR_DTYPE_TIMEDELTA,
        DataTypeKind::Structured(_) => ZARR_DTYPE_STRUCTURED,
        DataTypeKind::Object => ZARR_DTYPE_OBJECT,
        DataTypeKind::Small(SmallType::Float(_)) => ZARR_DTYPE_SMALL_FLOAT,
        DataTypeKind::Small(SmallType::Int { signed: true, .. }) => ZARR_DTYPE_INT,
        DataTypeKind::Small(SmallType::Int { .. }) => ZARR_DTYPE_UINT,
    }
}

/// The data type's kind (`ZARR_DTYPE_*`) and the size of one element in bytes.
///
/// # Safety
/// `array` must be a live handle; the outputs writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_dtype(
    array: *const zarr_array,
    out_kind: *mut zarr_dtype_kind,
    out_itemsize: *mut usize,
) -> zarr_status {
    run(|| {
        let dtype = &array_arg(array)?.metadata().dtype;
        let kind = out_arg(out_kind, "out_kind")?;
        let itemsize = out_arg(out_itemsize, "out_itemsize")?;
        *kind = kind_code(dtype);
        *itemsize = dtype.size;
        Ok(())
    })
}

/// The names of the kinds, for messages.
fn kind_name(kind: zarr_dtype_kind) -> &'static str {
    match kind {
        ZARR_DTYPE_BOOL => "boolean",
        ZARR_DTYPE_INT => "signed integer",
        ZARR_DTYPE_UINT => "unsigned integer",
        ZARR_DTYPE_FLOAT => "float",
        ZARR_DTYPE_COMPLEX => "complex",
        ZARR_DTYPE_BYTES => "byte string",
        ZARR_DTYPE_UNICODE => "unicode",
        ZARR_DTYPE_RAW => "raw",
        ZARR_DTYPE_DATETIME => "datetime",
        ZARR_DTYPE_TIMEDELTA => "timedelta",
        ZARR_DTYPE_STRUCTURED => "structured",
        ZARR_DTYPE_OBJECT => "object",
        ZARR_DTYPE_SMALL_FLOAT => "small float",
        _ => "unknown kind",
    }
}

/// Checks that the array's values are of `kind` (`ZARR_DTYPE_*`) and `itemsize` bytes, as a
/// caller's buffer type is (a binding's typed read or write calls it first):
/// `ZARR_ERR_INVALID_ARGUMENT` naming the array's type and the buffer's when they differ.
///
/// # Safety
/// `array` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_check_dtype(
    array: *const zarr_array,
    kind: zarr_dtype_kind,
    itemsize: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let dtype = &array.metadata().dtype;
        if kind_code(dtype) == kind && dtype.size == itemsize {
            return Ok(());
        }
        Err(Error::InvalidArgument(format!(
            "array {:?} holds {} values of {} bytes ({}); the buffer holds {} values of {itemsize} bytes",
            array.path(),
            kind_name(kind_code(dtype)),
            dtype.size,
            dtype.typestr(),
            kind_name(kind),
        )))
    })
}

/// The NumPy type string as stored, e.g. `"<f8"` or `"<M8[10s]"` (for a structured type, its
/// JSON list of fields); free it with `zarr_string_free`. A v3 array whose filters (array→array
/// codecs other than `transpose`) change its values before `bytes` names the native order: the
/// `bytes` endian applies to what the filters produce.
///
/// # Safety
/// `array` must be a live handle and `out_typestr` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_dtype_string(
    array: *const zarr_array,
    out_typestr: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_typestr, "out_typestr", |a| {
        Ok(a.metadata().dtype.typestr())
    })
}

/// The unit of a datetime64 or timedelta64 array: the NumPy unit name (`"Y"`, `"M"`, `"W"`,
/// `"D"`, `"h"`, `"m"`, `"s"`, `"ms"`, `"us"`, `"ns"`, `"ps"`, `"fs"`, `"as"`, or `""` for
/// NumPy's generic unit, which only stored arrays have: creating one is refused) and its multiple (`[10s]` gives `"s"` and 10). The name is static.
/// Other kinds of array are `ZARR_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `array` must be a live handle; the outputs writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_time_unit(
    array: *const zarr_array,
    out_unit: *mut *const c_char,
    out_multiple: *mut u64,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let unit_out = out_arg(out_unit, "out_unit")?;
        let multiple = out_arg(out_multiple, "out_multiple")?;
        let (DataTypeKind::DateTime(unit) | DataTypeKind::TimeDelta(unit)) =
            array.metadata().dtype.kind
        else {
            return Err(Error::InvalidArgument(format!(
                "array {:?} of {} has no time unit",
                array.path(),
                array.metadata().dtype.typestr()
            )));
        };
        *unit_out = unit.c_name().as_ptr();
        *multiple = unit.count;
        Ok(())
    })
}

/// The number of fields of a structured array (0 for other types).
///
/// # Safety
/// `array` must be a live handle and `out_count` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_field_count(
    array: *const zarr_array,
    out_count: *mut usize,
) -> zarr_status {
    run(|| {
        let count = array_arg(array)?.metadata().dtype.fields().len();
        *out_arg(out_count, "out_count")? = count;
        Ok(())
    })
}

/// Describes field `index` of a structured array: its name and type string (free both with
/// `zarr_string_free`; a nested record's type string is its JSON list), its byte offset in a
/// record, its size in bytes (all of a sub-array field) and the number of dimensions of its
/// sub-array shape (0 for a scalar field; the shape itself is in `zarr_array_fields_json`).
///
/// # Safety
/// `array` must be a live handle; the outputs writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_field(
    array: *const zarr_array,
    index: usize,
    out_name: *mut *mut c_char,
    out_typestr: *mut *mut c_char,
    out_offset: *mut usize,
    out_size: *mut usize,
    out_ndim: *mut usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let fields = array.metadata().dtype.fields();
        let field = fields.get(index).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "array {:?} has {} fields, no field {index}",
                array.path(),
                fields.len()
            ))
        })?;
        let (name, typestr) = (
            out_arg(out_name, "out_name")?,
            out_arg(out_typestr, "out_typestr")?,
        );
        let (offset, size, ndim) = (
            out_arg(out_offset, "out_offset")?,
            out_arg(out_size, "out_size")?,
            out_arg(out_ndim, "out_ndim")?,
        );
        let (name_text, type_text) = (
            c_string(field.name.clone())?,
            c_string(field.dtype.typestr())?,
        );
        (*name, *typestr) = (name_text.into_raw(), type_text.into_raw());
        (*offset, *size, *ndim) = (field.offset, field.size(), field.shape.len());
        Ok(())
    })
}

/// The fields of a structured array as JSON: a list of `{"name", "dtype", "offset",
/// "itemsize", "shape"}` objects (nested records add `"fields"`); `[]` for other types. Free
/// with `zarr_string_free`.
///
/// # Safety
/// `array` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_fields_json(
    array: *const zarr_array,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_json, "out_json", |a| {
        let fields: Value = a
            .metadata()
            .dtype
            .fields()
            .iter()
            .map(Field::to_json)
            .collect();
        Ok(fields.to_string())
    })
}

/// Reads `nfields` field names from C strings.
fn field_names<'a>(fields: *const *const c_char, nfields: usize) -> Result<Vec<&'a str>> {
    slice_arg(fields, nfields, "fields")?
        .iter()
        .enumerate()
        .map(|(i, &name)| str_arg(name, &format!("fields[{i}]")))
        .collect()
}

/// Reads the fields `fields[0..nfields]` of the records in the box `start`/`count` of a
/// structured array into `out`, like zarr-python's `fields=` selection: each element of the
/// result packs the named fields, in the order given, in native byte order (`out_size` =
/// product(count) × the sum of the fields' sizes). An unknown or repeated name is
/// `ZARR_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `array` must be a live handle; `start`/`count` hold `ndim` entries; `fields` holds
/// `nfields` NUL-terminated strings; `out` has `out_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_fields(
    array: *const zarr_array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    fields: *const *const c_char,
    nfields: usize,
    out: *mut c_void,
    out_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let (start, count) = box_args(array, ndim, start, count)?;
        let names = field_names(fields, nfields)?;
        array.read_fields(
            start,
            count,
            &names,
            slice_out(out.cast::<u8>(), out_size, "out")?,
        )
    })
}

/// Writes the fields `fields[0..nfields]` of the records in the box `start`/`count` from
/// `data`, packed as for `zarr_array_read_fields`; the other fields keep their values.
///
/// # Safety
/// As for `zarr_array_read_fields`, with `data` holding `data_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_fields(
    array: *mut zarr_array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    fields: *const *const c_char,
    nfields: usize,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let (start, count) = box_args(array, ndim, start, count)?;
        let names = field_names(fields, nfields)?;
        array.write_fields(
            start,
            count,
            &names,
            slice_arg(data.cast::<u8>(), data_size, "data")?,
        )
    })
}

/// Reads the fields `fields[0..nfields]` of the records any selection picks
/// (`zarr_selection`: boxes, strided boxes, orthogonal selections with index lists, ranges or
/// Boolean flags, points, masks, blocks) into `out`, dense in the selection's result order,
/// each element packing the named fields as `zarr_array_read_fields` does (`out_size` = the
/// selected elements, `zarr_array_selection_size`, × the sum of the fields' sizes).
///
/// # Safety
/// `array` must be a live handle; `selection` points to a descriptor whose pointers are valid
/// for its kind; `fields` holds `nfields` NUL-terminated strings; `out` has `out_size`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_fields_selection(
    array: *const zarr_array,
    selection: *const zarr_selection,
    fields: *const *const c_char,
    nfields: usize,
    out: *mut c_void,
    out_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let selection = selection_arg(array, selection)?;
        let names = field_names(fields, nfields)?;
        let out = slice_out(out.cast::<u8>(), out_size, "out")?;
        array.read_fields_selection(&selection, &names, out)
    })
}

/// Writes the fields `fields[0..nfields]` of the records any selection picks from `data`,
/// packed and ordered as for `zarr_array_read_fields_selection`; the other fields keep their
/// values, and where an element is selected twice the last value wins.
///
/// # Safety
/// As for `zarr_array_read_fields_selection`, with `data` holding `data_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_fields_selection(
    array: *mut zarr_array,
    selection: *const zarr_selection,
    fields: *const *const c_char,
    nfields: usize,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let selection = selection_arg(array, selection)?;
        let names = field_names(fields, nfields)?;
        let data = slice_arg(data.cast::<u8>(), data_size, "data")?;
        array.write_fields_selection(&selection, &names, data)
    })
}

/// Converts `nchars` UTF-32 code units (native byte order, as one element of a `U` array; a
/// zero unit ends the text early) to UTF-8 in `out` (`out_size` bytes, not NUL-terminated),
/// setting `*out_len` to the bytes written. `out_size` of 4 × `nchars` always suffices. An
/// invalid code unit is `ZARR_ERR_INVALID_ARGUMENT`; too small a buffer `ZARR_ERR_BUFFER_SIZE`.
///
/// # Safety
/// `utf32` holds `nchars` units; `out` has `out_size` writable bytes; `out_len` is writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_utf32_to_utf8(
    utf32: *const u32,
    nchars: usize,
    out: *mut c_char,
    out_size: usize,
    out_len: *mut usize,
) -> zarr_status {
    run(|| {
        let units = slice_arg(utf32, nchars, "utf32")?;
        let out = slice_out(out.cast::<u8>(), out_size, "out")?;
        let len = out_arg(out_len, "out_len")?;
        let text = utf32::decode(units)?;
        let dst = out.get_mut(..text.len()).ok_or_else(|| {
            Error::BufferSize(format!(
                "the text needs {} bytes, the buffer has {out_size}",
                text.len()
            ))
        })?;
        dst.copy_from_slice(text.as_bytes());
        *len = text.len();
        Ok(())
    })
}

/// Converts `utf8_len` bytes of UTF-8 to UTF-32 code units (native byte order) in `out`,
/// which holds `nchars` units: one element of a `U<nchars>` array. Unused units are zeroed. Text
/// with more than `nchars` characters is `ZARR_ERR_BUFFER_SIZE`; invalid UTF-8
/// `ZARR_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `utf8` holds `utf8_len` bytes; `out` has room for `nchars` units.
#[no_mangle]
pub unsafe extern "C" fn zarr_utf8_to_utf32(
    utf8: *const c_char,
    utf8_len: usize,
    out: *mut u32,
    nchars: usize,
) -> zarr_status {
    run(|| {
        let bytes = slice_arg(utf8.cast::<u8>(), utf8_len, "utf8")?;
        let out = slice_out(out, nchars, "out")?;
        let text = std::str::from_utf8(bytes)
            .map_err(|e| Error::InvalidArgument(format!("text is not UTF-8: {e}")))?;
        utf32::encode(text, out)
    })
}

/// The small float format a caller names.
fn small_float_arg(format: *const c_char) -> Result<SmallFloat> {
    let name = str_arg(format, "format")?;
    SmallFloat::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = SmallFloat::ALL.iter().map(|f| f.name()).collect();
        Error::InvalidArgument(format!(
            "format {name:?} is not a small float (one of {})",
            names.join(", ")
        ))
    })
}

/// Converts `count` values of the small float `format` (its data type name, as
/// `zarr_array_dtype_string` gives it: `"bfloat16"`, `"float8_e4m3"`, ...) to doubles,
/// exactly. `codes` holds `uint16_t` codes for `bfloat16`, `uint8_t` codes for the others
/// (of which float6 and float4 use the low bits; the others are ignored). NaN codes give NaN.
///
/// # Safety
/// `format` is a NUL-terminated string; `codes` holds `count` codes; `out` has room for
/// `count` doubles.
#[no_mangle]
pub unsafe extern "C" fn zarr_small_float_to_double(
    format: *const c_char,
    codes: *const c_void,
    count: usize,
    out: *mut f64,
) -> zarr_status {
    run(|| {
        let format = small_float_arg(format)?;
        let size = format.size();
        let bytes = slice_arg(codes.cast::<u8>(), count.saturating_mul(size), "codes")?;
        let out = slice_out(out, count, "out")?;
        for (value, code) in out.iter_mut().zip(bytes.chunks_exact(size)) {
            *value = format.to_f64(SmallType::code(code));
        }
        Ok(())
    })
}

/// Converts `count` doubles to codes of the small float `format` (see
/// `zarr_small_float_to_double` for names and layout), rounding to nearest, ties to even.
/// NaN becomes the format's NaN; values past an IEEE-like format's range become infinities,
/// as IEEE 754 rounds. A value the format cannot hold (NaN or an infinity where it has none,
/// a value past a finite-only format's largest one, zero or a negative value in
/// `float8_e8m0fnu`) is `ZARR_ERR_INVALID_ARGUMENT` naming its index, and `out` is then
/// partly written.
///
/// # Safety
/// `format` is a NUL-terminated string; `values` holds `count` doubles; `out_codes` has room
/// for `count` codes.
#[no_mangle]
pub unsafe extern "C" fn zarr_small_float_from_double(
    format: *const c_char,
    values: *const f64,
    count: usize,
    out_codes: *mut c_void,
) -> zarr_status {
    run(|| {
        let format = small_float_arg(format)?;
        let size = format.size();
        let values = slice_arg(values, count, "values")?;
        let out = slice_out(
            out_codes.cast::<u8>(),
            count.saturating_mul(size),
            "out_codes",
        )?;
        for (i, (&x, code)) in values.iter().zip(out.chunks_exact_mut(size)).enumerate() {
            let bits = if x.is_nan() {
                format.canonical_nan()
            } else {
                let r = format.round(x, Direction::NearestEven);
                (!r.out_of_range || format.infinity().is_some()).then_some(r.code)
            };
            let bits = bits.ok_or_else(|| {
                Error::InvalidArgument(format!("values[{i}] = {x:?} has no {format} code"))
            })?;
            SmallType::put_code(bits, code);
        }
        Ok(())
    })
}
