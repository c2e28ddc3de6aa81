//! zfp compression (the zfp 1.0.1 C library through crate `zfp-sys`, cargo feature `zfp`):
//! numcodecs' `ZFPY` as the v2 compressor `zfpy` and the v3 array→bytes codec `numcodecs.zfpy`
//! (a stream led by zfp's full header, as `zfpy.compress_numpy` writes it), and zarr-extensions'
//! v3 array→bytes codec `zfp` (the bare stream: mode and shape come from the metadata).
//!
//! Both compress 32- and 64-bit integers and floats in the machine's byte order, as a zfp field
//! of the chunk's shape (1 to 4 dimensions, slowest first, as zfpy maps a C-order NumPy array).
//! A v2 compressor is handed the chunk shape where numcodecs hands zfpy the chunk in its shape
//! (C order, no filter before it); elsewhere it writes the chunk as one dimension, which
//! numcodecs reshapes on reading. Reading takes the shape from the zfpy header and needs only
//! the count to match the chunk's, as numcodecs does.
//!
//! zfp's bit stream reads words without bounds checks, so decoding works on a copy of the stored
//! bytes padded to the most a stream of that header may read (`zfp_stream_maximum_size`); a
//! stream that ends before what it claims, or decodes past its end, is
//! [`Error::CorruptChunk`].

use super::filters::numeric::ElemType;
use super::Codec;
use crate::error::Result;
use serde_json::{Map, Value};

/// numcodecs' zfpy (v2 `zfpy`, v3 `numcodecs.zfpy`) for elements of type `elem`, writing chunks
/// of `shape` when given (else as one dimension); [`Error::Unsupported`] without the `zfp`
/// feature.
pub fn zfpy(
    obj: &Map<String, Value>,
    elem: Option<&ElemType>,
    shape: Option<&[u64]>,
) -> Result<Box<dyn Codec>> {
    #[cfg(feature = "zfp")]
    return Ok(Box::new(Zfp::numcodecs(obj, elem, shape)?));
    #[cfg(not(feature = "zfp"))]
    {
        let _ = (obj, elem, shape);
        Err(not_built("zfpy"))
    }
}

/// zarr-extensions' `zfp` v3 codec for chunks of `shape` holding `elem`; [`Error::Unsupported`]
/// without the `zfp` feature.
pub fn zfp(obj: &Map<String, Value>, elem: &ElemType, shape: &[u64]) -> Result<Box<dyn Codec>> {
    #[cfg(feature = "zfp")]
    return Ok(Box::new(Zfp::extension(obj, elem, shape)?));
    #[cfg(not(feature = "zfp"))]
    {
        let _ = (obj, elem, shape);
        Err(not_built("zfp"))
    }
}

/// The error for a zfp codec in a build without the `zfp` feature.
#[cfg(not(feature = "zfp"))]
fn not_built(codec: &str) -> crate::error::Error {
    crate::error::Error::Unsupported(format!(
        "the {codec} codec: libzarr was built without the cargo feature \"zfp\""
    ))
}

#[cfg(feature = "zfp")]
use imp::Zfp;

#[cfg(feature = "zfp")]
mod imp {
    use super::super::config::Config;
    use super::super::filters::numeric::{ElemType, Kind};
    use super::super::zfp_promotion::Promotion;
    use super::super::Codec;
    use super::Map;
    use crate::error::{Error, Result};
    use serde_json::{json, Number, Value};
    use std::ffi::c_void;
    use zfp_sys as ffi;

    /// The element types zfp compresses.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Element {
        I32,
        I64,
        F32,
        F64,
    }

    impl Element {
        /// The element `elem` names, if zfp takes it (the machine's byte order only).
        fn of(elem: &ElemType) -> Option<Element> {
            let ElemType::Num(t) = elem else { return None };
            if *t != t.to_native() {
                return None;
            }
            Some(match (t.kind, t.size) {
                (Kind::Int, 4) => Element::I32,
                (Kind::Int, 8) => Element::I64,
                (Kind::Float, 4) => Element::F32,
                (Kind::Float, 8) => Element::F64,
                _ => return None,
            })
        }

        fn size(self) -> usize {
            match self {
                Element::I32 | Element::F32 => 4,
                Element::I64 | Element::F64 => 8,
            }
        }

        fn ztype(self) -> ffi::zfp_type {
            match self {
                Element::I32 => ffi::zfp_type_zfp_type_int32,
                Element::I64 => ffi::zfp_type_zfp_type_int64,
                Element::F32 => ffi::zfp_type_zfp_type_float,
                Element::F64 => ffi::zfp_type_zfp_type_double,
            }
        }

        fn name(self) -> &'static str {
            match self {
                Element::I32 => "int32",
                Element::I64 => "int64",
                Element::F32 => "float32",
                Element::F64 => "float64",
            }
        }
    }

    /// A zfp compression mode.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Mode {
        Reversible,
        Accuracy(f64),
        Rate(f64),
        Precision(u32),
        Expert {
            minbits: u32,
            maxbits: u32,
            maxprec: u32,
            minexp: i32,
        },
    }

    /// How the codec is named and what its stream holds.
    #[derive(Debug, Clone)]
    enum Flavour {
        /// numcodecs' zfpy: the stream starts with zfp's full header; the configuration as
        /// numcodecs writes it (`mode` is zfp's `zfp_mode` number).
        Zfpy {
            mode: i64,
            tolerance: Number,
            rate: Number,
            precision: i64,
        },
        /// zarr-extensions' zfp: no header.
        Zfp,
    }

    /// A zfp codec: numcodecs' `ZFPY` (`{"id": "zfpy", "mode": 4, "tolerance": -1, "rate": -1,
    /// "precision": -1}`) or zarr-extensions' `zfp` (`{"mode": "fixed_rate", "rate": 10.5}`).
    #[derive(Debug, Clone)]
    pub struct Zfp {
        flavour: Flavour,
        /// The mode chunks are written in; `None` for a zfpy mode numcodecs cannot write.
        mode: Option<Mode>,
        element: Element,
        /// How the array's integers become `element`s (zarr-extensions' zfp), if they are not.
        promotion: Option<Promotion>,
        /// The zfp field's sizes, slowest first (1 to 4 of them); `None`: one dimension.
        shape: Option<Vec<usize>>,
        /// zarr-extensions' fixed rate: the length of a chunk as zarrs 0.23 writes it, where
        /// it differs from zfp's (zarrs sets every rate as for a 3-D field, 4³ × rate bits a
        /// block); such a chunk is read as zarrs wrote it.
        zarrs_rate_length: Option<usize>,
    }

    /// Owns a `zfp_field`, a `zfp_stream` and its `bitstream`, freed on drop.
    struct Handles {
        field: *mut ffi::zfp_field,
        stream: *mut ffi::zfp_stream,
        bits: *mut ffi::bitstream,
    }

    impl Drop for Handles {
        fn drop(&mut self) {
            // SAFETY: each pointer is null or what the matching zfp constructor returned,
            // freed once here.
            unsafe {
                if !self.field.is_null() {
                    ffi::zfp_field_free(self.field);
                }
                if !self.stream.is_null() {
                    ffi::zfp_stream_close(self.stream);
                }
                if !self.bits.is_null() {
                    ffi::stream_close(self.bits);
                }
            }
        }
    }

    impl Handles {
        /// A stream with no bit stream yet and an empty field.
        fn new() -> Result<Handles> {
            // SAFETY: plain constructors; a null result is checked.
            let handles = unsafe {
                Handles {
                    field: ffi::zfp_field_alloc(),
                    stream: ffi::zfp_stream_open(std::ptr::null_mut()),
                    bits: std::ptr::null_mut(),
                }
            };
            if handles.field.is_null() || handles.stream.is_null() {
                return Err(Error::TooLarge("zfp: cannot allocate a stream".into()));
            }
            Ok(handles)
        }

        /// Points the stream at `words` (which must outlive its use) and rewinds it.
        fn attach(&mut self, words: &mut [u64]) -> Result<()> {
            // SAFETY: `words` is a live buffer of the given byte length; the previous bit
            // stream (if any) is closed first.
            unsafe {
                if !self.bits.is_null() {
                    ffi::stream_close(self.bits);
                }
                self.bits = ffi::stream_open(words.as_mut_ptr().cast(), words.len() * 8);
                if self.bits.is_null() {
                    return Err(Error::TooLarge("zfp: cannot open a bit stream".into()));
                }
                ffi::zfp_stream_set_bit_stream(self.stream, self.bits);
                ffi::zfp_stream_rewind(self.stream);
            }
            Ok(())
        }

        /// Sets the field's type and sizes (`shape` slowest first, 1 to 4 entries).
        fn set_field(&mut self, element: Element, shape: &[usize]) {
            let mut n = [0usize; 4];
            for (slot, &len) in n.iter_mut().zip(shape.iter().rev()) {
                *slot = len;
            }
            // SAFETY: `field` is a live field.
            unsafe {
                ffi::zfp_field_set_type(self.field, element.ztype());
                match shape.len() {
                    1 => ffi::zfp_field_set_size_1d(self.field, n[0]),
                    2 => ffi::zfp_field_set_size_2d(self.field, n[0], n[1]),
                    3 => ffi::zfp_field_set_size_3d(self.field, n[0], n[1], n[2]),
                    _ => ffi::zfp_field_set_size_4d(self.field, n[0], n[1], n[2], n[3]),
                }
            }
        }

        /// Sets the stream's mode; `false` when zfp refuses the parameters.
        fn set_mode(&mut self, mode: Mode, element: Element, dims: usize) -> bool {
            // SAFETY: `stream` is a live stream.
            unsafe {
                match mode {
                    Mode::Reversible => ffi::zfp_stream_set_reversible(self.stream),
                    Mode::Accuracy(tolerance) => {
                        ffi::zfp_stream_set_accuracy(self.stream, tolerance);
                    }
                    Mode::Rate(rate) => {
                        ffi::zfp_stream_set_rate(
                            self.stream,
                            rate,
                            element.ztype(),
                            dims as u32,
                            0,
                        );
                    }
                    Mode::Precision(precision) => {
                        ffi::zfp_stream_set_precision(self.stream, precision);
                    }
                    Mode::Expert {
                        minbits,
                        maxbits,
                        maxprec,
                        minexp,
                    } => {
                        return ffi::zfp_stream_set_params(
                            self.stream,
                            minbits,
                            maxbits,
                            maxprec,
                            minexp,
                        ) != 0
                    }
                }
            }
            true
        }

        /// The most bytes a stream of the field and mode set may take (its header included).
        fn maximum_size(&self) -> usize {
            // SAFETY: live stream and field.
            unsafe { ffi::zfp_stream_maximum_size(self.stream, self.field) }
        }

        /// The fewest bytes a stream of the field and mode set takes: `minbits` per block.
        fn minimum_size(&self) -> usize {
            // SAFETY: live stream and field.
            let (blocks, minbits) =
                unsafe { (ffi::zfp_field_blocks(self.field), (*self.stream).minbits) };
            blocks.saturating_mul(minbits as usize) / 8
        }
    }

    /// The field sizes of a chunk of `shape` (array order, slowest first), or
    /// [`Error::Unsupported`] naming `codec` beyond 4 dimensions.
    fn field_shape(codec: &str, shape: &[u64]) -> Result<Vec<usize>> {
        if shape.len() > 4 {
            return Err(Error::Unsupported(format!(
                "{codec}: chunks of {} dimensions (zfp compresses 1 to 4)",
                shape.len()
            )));
        }
        let sizes: Option<Vec<usize>> = shape.iter().map(|&n| usize::try_from(n).ok()).collect();
        let mut sizes =
            sizes.ok_or_else(|| Error::TooLarge(format!("{codec}: a chunk of shape {shape:?}")))?;
        if sizes.is_empty() {
            sizes.push(1);
        }
        Ok(sizes)
    }

    /// zarr-extensions' zfp field of a chunk of `shape`: its dimensions (0 to 4; none is one
    /// value), or of a chunk of more, those above 1 (at most 4), as the codec's spec allows.
    fn extension_shape(shape: &[u64]) -> Result<Vec<usize>> {
        if shape.len() <= 4 {
            return field_shape("zfp", shape);
        }
        let above_one: Vec<u64> = shape.iter().copied().filter(|&n| n > 1).collect();
        if above_one.len() > 4 {
            return Err(Error::Unsupported(format!(
                "zfp: chunks of shape {shape:?}, {} of whose dimensions are above 1 (zfp compresses 1 to 4)",
                above_one.len()
            )));
        }
        field_shape("zfp", &above_one)
    }

    /// `bytes` as a buffer of 8-byte words, zero-padded to at least `len` bytes.
    fn words_of(bytes: &[u8], len: usize) -> Result<Vec<u64>> {
        let count = len.max(bytes.len()).div_ceil(8);
        let mut words = Vec::new();
        words
            .try_reserve_exact(count)
            .map_err(|_| Error::TooLarge(format!("zfp: a buffer of {} bytes", count * 8)))?;
        words.resize(count, 0);
        // SAFETY: the words' bytes; u64 has no invalid bit patterns.
        let dst = unsafe {
            std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8)
        };
        dst[..bytes.len()].copy_from_slice(bytes);
        Ok(words)
    }

    /// The bytes of `words`.
    fn as_bytes(words: &[u64]) -> &[u8] {
        // SAFETY: any initialised memory is valid bytes.
        unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) }
    }

    /// Bytes the decoder may read past a stream's stated end (a word read ahead).
    const READ_AHEAD: usize = 64;

    impl Zfp {
        /// numcodecs' zfpy for elements `elem`, writing chunks of `shape` when given.
        pub fn numcodecs(
            obj: &Map<String, Value>,
            elem: Option<&ElemType>,
            shape: Option<&[u64]>,
        ) -> Result<Self> {
            let cfg = Config::new(obj, "zfpy");
            let element = element_of("zfpy", elem)?;
            let number = |key: &str| -> Result<Number> {
                match cfg.opt_value(key) {
                    None => Ok(Number::from(-1)),
                    Some(Value::Number(n)) => Ok(n.clone()),
                    Some(_) => Err(cfg.invalid(key, "a number")),
                }
            };
            let mode = cfg.int("mode", 4, 0..=5)?;
            let tolerance = number("tolerance")?;
            let rate = number("rate")?;
            let precision = cfg.int("precision", -1, i64::from(i32::MIN)..=i64::from(i32::MAX))?;
            let f = |n: &Number| n.as_f64().unwrap_or(-1.0);
            // numcodecs hands zfpy the one parameter of its mode; a negative one is reversible.
            let write = match mode {
                4 if f(&tolerance) >= 0.0 => Some(Mode::Accuracy(f(&tolerance))),
                2 if f(&rate) >= 0.0 => Some(Mode::Rate(f(&rate))),
                3 if precision >= 0 => Some(Mode::Precision(precision as u32)),
                2..=4 => Some(Mode::Reversible),
                _ => None,
            };
            let shape = match shape {
                Some([]) => {
                    return Err(Error::Unsupported(
                        "zfpy: zero-dimensional arrays (zfpy compresses 1 to 4 dimensions)".into(),
                    ))
                }
                Some(s) => Some(field_shape("zfpy", s)?),
                None => None,
            };
            Ok(Zfp {
                flavour: Flavour::Zfpy {
                    mode,
                    tolerance,
                    rate,
                    precision,
                },
                mode: write,
                element,
                promotion: None,
                zarrs_rate_length: None,
                shape,
            })
        }

        /// zarr-extensions' zfp for chunks of `shape` holding `elem`.
        pub fn extension(obj: &Map<String, Value>, elem: &ElemType, shape: &[u64]) -> Result<Self> {
            let cfg = Config::new(obj, "zfp");
            let (element, promotion) = extension_element(elem)?;
            let float = |key: &str| -> Result<f64> {
                cfg.required(key)?
                    .as_f64()
                    .ok_or_else(|| cfg.invalid(key, "a number"))
            };
            let uint = |key: &str| -> Result<u32> {
                cfg.required(key)?;
                Ok(cfg.int(key, 0, 0..=i64::from(u32::MAX))? as u32)
            };
            let mode = match cfg.required("mode")?.as_str() {
                Some("reversible") => Mode::Reversible,
                Some("fixed_accuracy") => Mode::Accuracy(float("tolerance")?),
                Some("fixed_rate") => Mode::Rate(float("rate")?),
                Some("fixed_precision") => Mode::Precision(uint("precision")?),
                Some("expert") => {
                    cfg.required("minexp")?;
                    Mode::Expert {
                        minbits: uint("minbits")?,
                        maxbits: uint("maxbits")?,
                        maxprec: uint("maxprec")?,
                        minexp: cfg.int("minexp", 0, i64::from(i32::MIN)..=i64::from(i32::MAX))?
                            as i32,
                    }
                }
                _ => {
                    return Err(cfg.invalid(
                        "mode",
                        "one of \"reversible\", \"expert\", \"fixed_accuracy\", \"fixed_rate\", \"fixed_precision\"",
                    ))
                }
            };
            let shape = extension_shape(shape)?;
            if !Handles::new()?.set_mode(mode, element, shape.len()) {
                return Err(cfg.error(
                    "zfp refuses these expert parameters (it needs minbits <= maxbits, 1 <= maxprec <= 64 and minexp >= -1074)",
                ));
            }
            let rate_length = |dims: usize| -> Result<usize> {
                let mut h = Handles::new()?;
                h.set_field(element, &shape);
                h.set_mode(mode, element, dims);
                Ok(h.minimum_size().div_ceil(8) * 8)
            };
            let zarrs_rate_length = match mode {
                Mode::Rate(_) if shape.len() != 3 => {
                    let zarrs = rate_length(3)?;
                    (zarrs != rate_length(shape.len())?).then_some(zarrs)
                }
                _ => None,
            };
            Ok(Zfp {
                flavour: Flavour::Zfp,
                mode: Some(mode),
                element,
                promotion,
                shape: Some(shape),
                zarrs_rate_length,
            })
        }

        fn name(&self) -> &'static str {
            match self.flavour {
                Flavour::Zfpy { .. } => "zfpy",
                Flavour::Zfp => "zfp",
            }
        }

        /// The field shape of a chunk of `count` elements.
        fn shape_for(&self, count: usize) -> Result<Vec<usize>> {
            match &self.shape {
                None => Ok(vec![count]),
                Some(shape) if shape.iter().product::<usize>() == count => Ok(shape.clone()),
                Some(shape) => Err(Error::Internal(format!(
                    "{}: {count} elements are not a chunk of shape {shape:?}",
                    self.name()
                ))),
            }
        }

        /// The dimensions a stream of `stored` bytes was sized for: the field's (zfp's
        /// meaning, and what libzarr writes), or 3 for a fixed-rate stream of the length zarrs
        /// writes.
        fn rate_dims(&self, stored: usize) -> usize {
            match self.zarrs_rate_length {
                Some(length) if length == stored => 3,
                _ => self.shape.as_ref().map_or(1, Vec::len),
            }
        }

        /// Reads the stream's field (and, for zfpy, its mode from the header) into `h`, `h`
        /// pointing at `words` (the stream, padded); checks that it holds `count` elements of
        /// the codec's type and returns the bytes it needs at least and may read at most.
        fn read_field(
            &self,
            h: &mut Handles,
            words: &mut [u64],
            count: Option<usize>,
            rate_dims: usize,
        ) -> Result<(usize, usize)> {
            let name = self.name();
            h.attach(words)?;
            match &self.flavour {
                Flavour::Zfp => {
                    let shape = self.shape.as_deref().expect("zfp knows its shape");
                    h.set_field(self.element, shape);
                    let mode = self.mode.expect("zfp knows its mode");
                    h.set_mode(mode, self.element, rate_dims);
                }
                Flavour::Zfpy { .. } => {
                    // SAFETY: live stream and field; the buffer holds at least the header's bits.
                    let read =
                        unsafe { ffi::zfp_read_header(h.stream, h.field, ffi::ZFP_HEADER_FULL) };
                    if read == 0 {
                        return Err(Error::CorruptChunk(format!(
                            "{name}: the chunk does not start with a valid zfp header"
                        )));
                    }
                    // SAFETY: a live field.
                    let ztype = unsafe { ffi::zfp_field_type(h.field) };
                    if ztype != self.element.ztype() {
                        return Err(Error::CorruptChunk(format!(
                            "{name}: the stream holds zfp type {ztype}, not the array's {}",
                            self.element.name()
                        )));
                    }
                }
            }
            // SAFETY: a live field.
            let held = unsafe { ffi::zfp_field_size(h.field, std::ptr::null_mut()) };
            if let Some(count) = count {
                if held != count {
                    return Err(Error::CorruptChunk(format!(
                        "{name}: the stream holds {held} values, not the {count} of the chunk"
                    )));
                }
            }
            let most = h.maximum_size();
            if most == 0 {
                return Err(Error::CorruptChunk(format!(
                    "{name}: the stream's header describes no valid field"
                )));
            }
            Ok((h.minimum_size(), most))
        }

        /// Decodes `input` into the start of `out`: exactly all of it when `exact`, else (zfpy)
        /// as many values as the header states, at most `out.len()` bytes; returns the bytes
        /// decoded.
        fn decode(&self, input: &[u8], out: &mut [u8], exact: bool) -> Result<usize> {
            let name = self.name();
            let size = self.element.size();
            let count = exact.then_some(out.len() / size);
            let mut h = Handles::new()?;
            // The header alone first (at most 148 bits), to learn how far the stream may read.
            let mut head = words_of(&input[..input.len().min(32)], 32)?;
            let rate_dims = self.rate_dims(input.len());
            let (least, most) = self.read_field(&mut h, &mut head, count, rate_dims)?;
            // SAFETY: a live field.
            let held = unsafe { ffi::zfp_field_size(h.field, std::ptr::null_mut()) };
            let bytes = held
                .checked_mul(size)
                .filter(|&b| b <= out.len())
                .ok_or_else(|| {
                    Error::CorruptChunk(format!(
                        "{name}: the stream holds {held} values, more than the chunk's {}",
                        out.len() / size
                    ))
                })?;
            if input.len() < least {
                return Err(Error::CorruptChunk(format!(
                    "{name}: the stream is truncated ({} bytes, its mode needs at least {least})",
                    input.len()
                )));
            }
            let mut words = words_of(input, most.saturating_add(READ_AHEAD))?;
            self.read_field(&mut h, &mut words, count, rate_dims)?;
            let out = &mut out[..bytes];
            // Decode into an aligned buffer when `out` is not aligned for the element type.
            let aligned = (out.as_ptr() as usize).is_multiple_of(size);
            let mut scratch = Vec::new();
            let target: *mut c_void = if aligned {
                out.as_mut_ptr().cast()
            } else {
                scratch = words_of(&[], bytes)?;
                scratch.as_mut_ptr().cast()
            };
            // SAFETY: `target` holds `held` elements of the field's type, aligned; the stream
            // reads at most `most` bytes of `words`, which holds more.
            let used = unsafe {
                ffi::zfp_field_set_pointer(h.field, target);
                ffi::zfp_decompress(h.stream, h.field)
            };
            if used == 0 {
                return Err(Error::CorruptChunk(format!(
                    "{name}: the stream does not decode"
                )));
            }
            if used > input.len() {
                return Err(Error::CorruptChunk(format!(
                    "{name}: the stream is truncated ({} bytes, decoding read {used})",
                    input.len()
                )));
            }
            if !aligned {
                out.copy_from_slice(&as_bytes(&scratch)[..bytes]);
            }
            Ok(bytes)
        }
    }

    /// The element zarr-extensions' zfp compresses for `elem`, and how the array's integers
    /// become it: every integer type is promoted to int32 or int64 ([`Promotion`]).
    fn extension_element(elem: &ElemType) -> Result<(Element, Option<Promotion>)> {
        if let ElemType::Num(t) = elem {
            let signed = match t.kind {
                Kind::Int => Some(true),
                Kind::UInt => Some(false),
                _ => None,
            };
            let promotion = signed.and_then(|s| Promotion::of(s, t.size));
            if let (Some(promotion), true) = (promotion, *t == t.to_native()) {
                let element = match promotion.zfp_size() {
                    4 => Element::I32,
                    _ => Element::I64,
                };
                return Ok((element, Some(promotion)));
            }
        }
        element_of("zfp", Some(elem)).map(|e| (e, None)).map_err(|_| {
            Error::Unsupported(format!(
                "zfp compresses 8- to 64-bit integers, float32 and float64 in the machine's byte order, not {}",
                elem.typestr()
            ))
        })
    }

    /// The element zfp compresses for `elem`, or [`Error::Unsupported`] naming `codec`.
    fn element_of(codec: &str, elem: Option<&ElemType>) -> Result<Element> {
        elem.and_then(Element::of).ok_or_else(|| {
            Error::Unsupported(format!(
                "{codec} compresses int32, int64, float32 and float64 in the machine's byte order, not {}",
                elem.map_or("bytes".to_string(), ElemType::typestr)
            ))
        })
    }

    /// A JSON number for a configuration value.
    fn number(v: f64) -> Value {
        Number::from_f64(v).map_or(Value::Null, Value::Number)
    }

    impl Codec for Zfp {
        fn id(&self) -> &'static str {
            self.name()
        }

        fn config(&self) -> Value {
            match &self.flavour {
                Flavour::Zfpy {
                    mode,
                    tolerance,
                    rate,
                    precision,
                } => json!({
                    "id": "zfpy",
                    "mode": mode,
                    "tolerance": tolerance,
                    "rate": rate,
                    "precision": precision,
                }),
                Flavour::Zfp => match self.mode.expect("zfp knows its mode") {
                    Mode::Reversible => json!({"mode": "reversible"}),
                    Mode::Accuracy(t) => json!({"mode": "fixed_accuracy", "tolerance": number(t)}),
                    Mode::Rate(r) => json!({"mode": "fixed_rate", "rate": number(r)}),
                    Mode::Precision(p) => json!({"mode": "fixed_precision", "precision": p}),
                    Mode::Expert {
                        minbits,
                        maxbits,
                        maxprec,
                        minexp,
                    } => json!({
                        "mode": "expert",
                        "minbits": minbits,
                        "maxbits": maxbits,
                        "maxprec": maxprec,
                        "minexp": minexp,
                    }),
                },
            }
        }

        fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
            let name = self.name();
            let size = self.element.size();
            let promoted;
            let input = match self.promotion {
                Some(promotion) => {
                    if !input.len().is_multiple_of(promotion.element_size()) {
                        return Err(Error::Internal(format!(
                            "{name}: {} bytes are not whole {}-byte integers",
                            input.len(),
                            promotion.element_size()
                        )));
                    }
                    promoted = promotion.promote(input)?;
                    &promoted[..]
                }
                None => input,
            };
            let mode = match (self.mode, &self.flavour) {
                (Some(mode), _) => mode,
                (None, Flavour::Zfpy { mode, .. }) => {
                    return Err(Error::Unsupported(format!(
                        "zfpy: writing with mode {mode} (numcodecs writes modes 2, 3 and 4: fixed rate, precision and accuracy)"
                    )))
                }
                (None, Flavour::Zfp) => unreachable!("zfp always has a mode"),
            };
            if !input.len().is_multiple_of(size) {
                return Err(Error::Internal(format!(
                    "{name}: {} bytes are not whole {size}-byte numbers",
                    input.len()
                )));
            }
            if input.is_empty() {
                return Err(Error::Internal(format!("{name}: an empty chunk")));
            }
            let shape = self.shape_for(input.len() / size)?;
            let mut h = Handles::new()?;
            h.set_field(self.element, &shape);
            if !h.set_mode(mode, self.element, shape.len()) {
                return Err(Error::InvalidArgument(format!(
                    "{name}: zfp refuses the parameters {mode:?}"
                )));
            }
            let mut words = words_of(&[], h.maximum_size())?;
            h.attach(&mut words)?;
            // zfp reads the values in place: they must be aligned for their type.
            let copy;
            let data: *const u8 = if (input.as_ptr() as usize).is_multiple_of(size) {
                input.as_ptr()
            } else {
                copy = words_of(input, 0)?;
                copy.as_ptr().cast()
            };
            // SAFETY: `data` holds the field's values, aligned, and zfp only reads them; the
            // bit stream holds `zfp_stream_maximum_size` bytes, the most zfp writes.
            let written = unsafe {
                ffi::zfp_field_set_pointer(h.field, data.cast_mut().cast());
                if matches!(self.flavour, Flavour::Zfpy { .. })
                    && ffi::zfp_write_header(h.stream, h.field, ffi::ZFP_HEADER_FULL) == 0
                {
                    return Err(Error::Internal("zfpy: zfp wrote no header".into()));
                }
                ffi::zfp_compress(h.stream, h.field)
            };
            if written == 0 {
                return Err(Error::Internal(format!("{name}: zfp compressed nothing")));
            }
            Ok(as_bytes(&words)[..written].to_vec())
        }

        fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
            let size = self
                .promotion
                .map_or(self.element.size(), Promotion::element_size);
            if !out.len().is_multiple_of(size) {
                return Err(Error::CorruptChunk(format!(
                    "{}: a chunk of {} bytes is not whole numbers",
                    self.name(),
                    out.len()
                )));
            }
            let Some(promotion) = self.promotion else {
                return self.decode(input, out, true).map(drop);
            };
            let mut wide = vec![0u8; out.len() / size * promotion.zfp_size()];
            self.decode(input, &mut wide, true)?;
            promotion.demote(&wide, out);
            Ok(())
        }

        fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
            let size = self.element.size();
            // zarr-extensions' zfp knows its count; zfpy's header states it.
            let (len, exact) = match (&self.flavour, &self.shape) {
                (Flavour::Zfp, Some(shape)) => {
                    let size = self.promotion.map_or(size, Promotion::element_size);
                    (shape.iter().product::<usize>().saturating_mul(size), true)
                }
                _ => (max_len / size * size, false),
            };
            if len > max_len {
                return Err(Error::CorruptChunk(format!(
                    "{}: a chunk of {len} bytes, more than the {max_len} expected",
                    self.name()
                )));
            }
            let mut out = Vec::new();
            out.try_reserve_exact(len)
                .map_err(|_| Error::TooLarge(format!("{}: {len} bytes", self.name())))?;
            out.resize(len, 0);
            if exact {
                self.decode_into(input, &mut out)?;
                return Ok(out);
            }
            let bytes = self.decode(input, &mut out, false)?;
            out.truncate(bytes);
            Ok(out)
        }
    }
}

#[cfg(all(test, not(feature = "zfp")))]
mod tests {
    use super::*;

    #[test]
    fn without_the_feature_both_codecs_are_unsupported_naming_it() {
        let elem = ElemType::parse("<f4").unwrap();
        let obj = Map::new();
        for err in [
            zfpy(&obj, Some(&elem), None).unwrap_err(),
            zfp(&obj, &elem, &[4]).unwrap_err(),
        ] {
            assert!(
                matches!(err, crate::error::Error::Unsupported(ref m) if m.contains("\"zfp\"")),
                "{err}"
            );
        }
    }
}

#[cfg(all(test, feature = "zfp"))]
mod tests {
    use super::*;
    use crate::error::Error;
    use serde_json::json;

    /// `n` numbers of the type `typestr` varying smoothly (native byte order).
    fn sample(typestr: &str, n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| {
                let v = ((i as f64) / 7.0).sin() * 1000.0 + (i % 13) as f64;
                match typestr {
                    "<i4" => (v as i32).to_ne_bytes().to_vec(),
                    "<i8" => (v as i64).to_ne_bytes().to_vec(),
                    "<f4" => (v as f32).to_ne_bytes().to_vec(),
                    _ => v.to_ne_bytes().to_vec(),
                }
            })
            .collect()
    }

    /// The values of `bytes` (of type `typestr`) as floats.
    fn values(typestr: &str, bytes: &[u8]) -> Vec<f64> {
        let size = if matches!(typestr, "<i4" | "<f4") {
            4
        } else {
            8
        };
        bytes
            .chunks_exact(size)
            .map(|b| match typestr {
                "<i4" => f64::from(i32::from_ne_bytes(b.try_into().unwrap())),
                "<i8" => i64::from_ne_bytes(b.try_into().unwrap()) as f64,
                "<f4" => f64::from(f32::from_ne_bytes(b.try_into().unwrap())),
                _ => f64::from_ne_bytes(b.try_into().unwrap()),
            })
            .collect()
    }

    fn zfpy_codec(config: Value, typestr: &str, shape: Option<&[u64]>) -> Result<Box<dyn Codec>> {
        let elem = ElemType::parse(typestr).unwrap();
        zfpy(config.as_object().unwrap(), Some(&elem), shape)
    }

    fn zfp_codec(config: Value, typestr: &str, shape: &[u64]) -> Result<Box<dyn Codec>> {
        let elem = ElemType::parse(typestr).unwrap();
        zfp(config.as_object().unwrap(), &elem, shape)
    }

    /// zarr-extensions' zfp takes 8- to 64-bit integers, promoted: reversible round trips
    /// them exactly, a lossy mode stays close and within the type; chunks of more than four
    /// dimensions compress those above 1.
    #[test]
    fn extension_promotes_integers_and_collapses_dimensions_of_one() {
        let cases: [(&str, Vec<u8>); 6] = [
            ("|i1", (0..=255u8).collect()),
            ("|u1", (0..=255u8).rev().collect()),
            (
                "<i2",
                (0..128)
                    .flat_map(|i: i32| ((i * 511 - 32768) as i16).to_ne_bytes())
                    .collect(),
            ),
            (
                "<u2",
                (0..128)
                    .flat_map(|i: u16| (i * 511 + 5).to_ne_bytes())
                    .collect(),
            ),
            (
                "<u4",
                (0..64)
                    .flat_map(|i: u32| (i * 33_554_431).to_ne_bytes())
                    .collect(),
            ),
            (
                "<u8",
                (0..32).flat_map(|i: u64| (i << 58).to_ne_bytes()).collect(),
            ),
        ];
        for (typestr, raw) in cases {
            let size = ElemType::parse(typestr).unwrap().size();
            let count = raw.len() / size;
            let shape: &[u64] = &[count as u64 / 4, 1, 4];
            let c = zfp_codec(json!({"mode": "reversible"}), typestr, shape).unwrap();
            let stored = c.encode(&raw).unwrap();
            assert_eq!(
                c.decode_to_vec(&stored, raw.len()).unwrap(),
                raw,
                "{typestr}"
            );
            let lossy = zfp_codec(
                json!({"mode": "fixed_precision", "precision": 8}),
                typestr,
                shape,
            )
            .unwrap();
            let back = lossy
                .decode_to_vec(&lossy.encode(&raw).unwrap(), raw.len())
                .unwrap();
            assert_eq!(back.len(), raw.len(), "{typestr}");
        }
        let too_large = (1u32 << 31).to_ne_bytes();
        let c = zfp_codec(json!({"mode": "reversible"}), "<u4", &[1]).unwrap();
        assert!(matches!(
            c.encode(&too_large),
            Err(Error::InvalidArgument(_))
        ));
        // Six dimensions, three above 1: a 3-D field, the same stream as the squeezed chunk's.
        let raw = sample("<f4", 24);
        let six = zfp_codec(json!({"mode": "reversible"}), "<f4", &[2, 1, 3, 1, 4, 1]).unwrap();
        let three = zfp_codec(json!({"mode": "reversible"}), "<f4", &[2, 3, 4]).unwrap();
        let stored = six.encode(&raw).unwrap();
        assert_eq!(stored, three.encode(&raw).unwrap());
        assert_eq!(six.decode_to_vec(&stored, raw.len()).unwrap(), raw);
        let one = zfp_codec(json!({"mode": "reversible"}), "<f4", &[1, 1, 1, 1, 1]).unwrap();
        let value = 2.5f32.to_ne_bytes();
        assert_eq!(
            one.decode_to_vec(&one.encode(&value).unwrap(), 4).unwrap(),
            value
        );
    }

    /// Every mode of both codecs round trips every type: reversible exactly, fixed accuracy
    /// within its tolerance, the others close; zfpy's stream starts with zfp's magic.
    #[test]
    fn round_trips_every_mode_and_type() {
        let shape: &[u64] = &[6, 10, 3];
        let count = 180;
        for typestr in ["<i4", "<i8", "<f4", "<f8"] {
            let raw = sample(typestr, count);
            let zfpy_modes = [
                (json!({"id": "zfpy"}), 0.0),
                (json!({"id": "zfpy", "mode": 4, "tolerance": 0.5}), 0.5),
                (json!({"id": "zfpy", "mode": 2, "rate": 16}), 64.0),
                (json!({"id": "zfpy", "mode": 3, "precision": 20}), 64.0),
                (json!({"id": "zfpy", "mode": 2, "rate": -1}), 0.0),
            ];
            let zfp_modes = [
                (json!({"mode": "reversible"}), 0.0),
                (json!({"mode": "fixed_accuracy", "tolerance": 0.5}), 0.5),
                (json!({"mode": "fixed_rate", "rate": 16}), 64.0),
                (json!({"mode": "fixed_precision", "precision": 20}), 64.0),
                (
                    json!({"mode": "expert", "minbits": 1, "maxbits": 2000, "maxprec": 24, "minexp": -8}),
                    64.0,
                ),
            ];
            let codecs = zfpy_modes
                .into_iter()
                .map(|(c, tol)| (zfpy_codec(c, typestr, Some(shape)).unwrap(), tol))
                .chain(
                    zfp_modes
                        .into_iter()
                        .map(|(c, tol)| (zfp_codec(c, typestr, shape).unwrap(), tol)),
                );
            for (c, tolerance) in codecs {
                let what = format!("{typestr} {}", c.config());
                let encoded = c.encode(&raw).unwrap();
                assert_eq!(encoded.starts_with(b"zfp"), c.id() == "zfpy", "{what}");
                let mut back = vec![0u8; raw.len()];
                c.decode_into(&encoded, &mut back).unwrap();
                if tolerance == 0.0 {
                    assert_eq!(back, raw, "{what}");
                }
                // zfp's tolerance bounds float errors; integers lose bits relative to their width.
                let tolerance = match typestr {
                    "<i4" | "<i8" if tolerance > 0.0 => 4096.0,
                    _ => tolerance,
                };
                let (a, b) = (values(typestr, &raw), values(typestr, &back));
                let worst = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0, f64::max);
                assert!(worst <= tolerance, "{what}: off by {worst}");
                assert_eq!(
                    c.decode_to_vec(&encoded, raw.len() + 64).unwrap(),
                    back,
                    "{what}"
                );
                // Decoding into a buffer not aligned for the type gives the same.
                let mut odd = vec![0u8; raw.len() + 1];
                c.decode_into(&encoded, &mut odd[1..]).unwrap();
                assert_eq!(&odd[1..], back, "{what}");
                let mut shifted = vec![0u8; raw.len() + 1];
                shifted[1..].copy_from_slice(&raw);
                assert_eq!(c.encode(&shifted[1..]).unwrap(), encoded, "{what}");
            }
        }
    }

    /// The fixed-rate stream of zfpy is exactly as long as zfp's rate says: 16 bits a value
    /// plus the header, whole 64-bit words (a check that the chunk shape reaches zfp).
    #[test]
    fn zfpy_writes_the_chunk_shape_as_the_field() {
        let raw = sample("<f8", 64);
        let c = zfpy_codec(
            json!({"id": "zfpy", "mode": 2, "rate": 16}),
            "<f8",
            Some(&[8, 8]),
        )
        .unwrap();
        let two_d = c.encode(&raw).unwrap();
        let flat = zfpy_codec(json!({"id": "zfpy", "mode": 2, "rate": 16}), "<f8", None).unwrap();
        let one_d = flat.encode(&raw).unwrap();
        assert_ne!(two_d, one_d);
        // Either decodes as the other: numcodecs, too, needs only the count to match.
        let mut back = vec![0u8; raw.len()];
        flat.decode_into(&two_d, &mut back).unwrap();
        assert_eq!(back, c.decode_to_vec(&two_d, raw.len()).unwrap());
        assert_eq!(two_d.len() % 8, 0);
        assert!(
            two_d.len() >= 64 * 2 && two_d.len() <= 64 * 2 + 32,
            "{}",
            two_d.len()
        );
    }

    /// Truncated, corrupt and mismatched streams are corrupt chunks naming the codec.
    #[test]
    fn bad_streams_are_corrupt_chunks() {
        let raw = sample("<f8", 120);
        for c in [
            zfpy_codec(
                json!({"id": "zfpy", "mode": 4, "tolerance": 0.001}),
                "<f8",
                Some(&[12, 10]),
            )
            .unwrap(),
            zfpy_codec(
                json!({"id": "zfpy", "mode": 2, "rate": 24}),
                "<f8",
                Some(&[12, 10]),
            )
            .unwrap(),
            zfp_codec(
                json!({"mode": "fixed_accuracy", "tolerance": 0.001}),
                "<f8",
                &[12, 10],
            )
            .unwrap(),
            zfp_codec(json!({"mode": "fixed_rate", "rate": 24}), "<f8", &[12, 10]).unwrap(),
            zfp_codec(json!({"mode": "reversible"}), "<f8", &[12, 10]).unwrap(),
        ] {
            let name = c.id();
            let corrupt = |r: Result<()>| match r {
                Err(Error::CorruptChunk(m)) => assert!(m.starts_with(name), "{m}"),
                other => panic!("{name}: {other:?}"),
            };
            let encoded = c.encode(&raw).unwrap();
            let mut out = vec![0u8; raw.len()];
            for cut in [0, 3, 8, 16, encoded.len() / 2, encoded.len() - 8] {
                corrupt(c.decode_into(&encoded[..cut], &mut out));
            }
            // Another count than the chunk's.
            corrupt(c.decode_into(&encoded, &mut out[8..]));
            assert!(matches!(
                c.decode_to_vec(&encoded, raw.len() - 8),
                Err(Error::CorruptChunk(_))
            ));
            // Garbage never reads outside the stream, whatever it decodes to.
            let mut garbage = encoded.clone();
            for (i, b) in garbage
                .iter_mut()
                .enumerate()
                .skip(if name == "zfpy" { 19 } else { 0 })
            {
                *b = (i as u8).wrapping_mul(97) ^ 0x5a;
            }
            let _ = c.decode_into(&garbage, &mut out);
        }
        // Streams with random bits flipped, in the header half of the time: an error or some
        // values, never a read outside the buffers (valgrind finds none in this test).
        let c = zfpy_codec(
            json!({"id": "zfpy", "mode": 2, "rate": 20}),
            "<f8",
            Some(&[12, 10]),
        )
        .unwrap();
        let encoded = c.encode(&raw).unwrap();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut out = vec![0u8; raw.len()];
        for _ in 0..500 {
            let mut mutated = encoded.clone();
            for _ in 0..1 + state % 4 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let span = if state & 1 == 0 { 24 } else { mutated.len() };
                let at = (state >> 8) as usize % span;
                mutated[at] ^= 1 << (state >> 60 & 7);
            }
            match c.decode_into(&mutated, &mut out) {
                Ok(()) | Err(Error::CorruptChunk(_)) => {}
                Err(e) => panic!("{e}"),
            }
        }
        let c = zfpy_codec(json!({"id": "zfpy"}), "<f8", None).unwrap();
        let mut out = vec![0u8; 64];
        let err = c
            .decode_into(b"not a zfp stream at all, really", &mut out)
            .unwrap_err();
        assert!(
            matches!(err, Error::CorruptChunk(ref m) if m.contains("zfpy") && m.contains("header")),
            "{err}"
        );
        // A float32 stream read as float64.
        let f4 = zfpy_codec(json!({"id": "zfpy"}), "<f4", None).unwrap();
        let stream = f4.encode(&sample("<f4", 16)).unwrap();
        let err = c.decode_into(&stream, &mut [0u8; 128]).unwrap_err();
        assert!(
            matches!(err, Error::CorruptChunk(ref m) if m.contains("float64")),
            "{err}"
        );
    }

    /// Other types, more than four dimensions and bad settings are refused naming the codec.
    #[test]
    fn refuses_other_types_shapes_and_settings() {
        for typestr in ["|u1", "<i2", "<u4", "<u8", ">f4", ">i8", "<c8", "<f2"] {
            let err = zfpy_codec(json!({"id": "zfpy"}), typestr, None).unwrap_err();
            assert!(
                matches!(err, Error::Unsupported(ref m) if m.starts_with("zfp")),
                "{typestr}: {err}"
            );
        }
        // zarr-extensions' zfp promotes every integer type of the machine's byte order.
        for typestr in [">f4", ">i8", ">u2", "<c8", "<f2", "|b1"] {
            let err = zfp_codec(json!({"mode": "reversible"}), typestr, &[4]).unwrap_err();
            assert!(
                matches!(err, Error::Unsupported(ref m) if m.starts_with("zfp")),
                "{typestr}: {err}"
            );
        }
        let five: &[u64] = &[2, 2, 2, 2, 2];
        let err = zfp_codec(json!({"mode": "reversible"}), "<f4", five).unwrap_err();
        assert!(
            matches!(err, Error::Unsupported(ref m) if m.starts_with("zfp:") && m.contains("5 of whose dimensions")),
            "{err}"
        );
        let err = zfpy_codec(json!({"id": "zfpy"}), "<f4", Some(five)).unwrap_err();
        assert!(
            matches!(err, Error::Unsupported(ref m) if m.starts_with("zfpy:")),
            "{err}"
        );
        let err = zfpy_codec(json!({"id": "zfpy"}), "<f4", Some(&[])).unwrap_err();
        assert!(
            matches!(err, Error::Unsupported(ref m) if m.contains("zero-dimensional")),
            "{err}"
        );
        // zarr-extensions' zfp takes a zero-dimensional chunk as one value.
        let c = zfp_codec(json!({"mode": "reversible"}), "<f8", &[]).unwrap();
        let one = 2.5f64.to_ne_bytes();
        assert_eq!(c.decode_to_vec(&c.encode(&one).unwrap(), 8).unwrap(), one);
        for (config, key) in [
            (json!({}), "mode"),
            (json!({"mode": "lossless"}), "mode"),
            (json!({"mode": "fixed_rate"}), "rate"),
            (
                json!({"mode": "fixed_accuracy", "tolerance": "x"}),
                "tolerance",
            ),
            (
                json!({"mode": "fixed_precision", "precision": -3}),
                "precision",
            ),
            (
                json!({"mode": "expert", "minbits": 1, "maxbits": 8, "maxprec": 4}),
                "minexp",
            ),
            (
                json!({"mode": "expert", "minbits": 9, "maxbits": 8, "maxprec": 4, "minexp": 0}),
                "expert",
            ),
        ] {
            let err = zfp_codec(config, "<f4", &[4]).unwrap_err();
            assert!(
                matches!(err, Error::InvalidMetadata(ref m) if m.contains("zfp") && m.contains(key)),
                "{key}: {err}"
            );
        }
        let err = zfpy_codec(json!({"id": "zfpy", "tolerance": "x"}), "<f4", None).unwrap_err();
        assert!(err.to_string().contains("tolerance"), "{err}");
    }

    /// zfpy modes numcodecs cannot write (expert, reversible by number) are read, not written.
    #[test]
    fn zfpy_reads_but_does_not_write_modes_numcodecs_cannot() {
        let raw = sample("<i4", 40);
        let stream = zfpy_codec(json!({"id": "zfpy"}), "<i4", None)
            .unwrap()
            .encode(&raw)
            .unwrap();
        let c = zfpy_codec(json!({"id": "zfpy", "mode": 5}), "<i4", None).unwrap();
        assert_eq!(c.decode_to_vec(&stream, 1000).unwrap(), raw);
        let err = c.encode(&raw).unwrap_err();
        assert!(
            matches!(err, Error::Unsupported(ref m) if m.contains("zfpy") && m.contains("mode 5")),
            "{err}"
        );
        assert_eq!(
            c.config(),
            json!({"id": "zfpy", "mode": 5, "tolerance": -1, "rate": -1, "precision": -1})
        );
    }
}
