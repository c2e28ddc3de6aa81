//! numcodecs' `pickle` object codec: a chunk is a pickled NumPy array of the chunk's shape
//! whose elements are Python objects (`|O`) or records with object fields, as zarr-python 2
//! stores them (the only codec it offers for records with object fields).
//!
//! Elements pass to and from the caller as JSON text: an object as the JSON value it is
//! (`None` is `null`, tuples are lists; bytes, sets, complex numbers, non-finite floats and
//! integers beyond 64 bits have no JSON form and are [`Error::Unsupported`]), a record as a
//! JSON object of its fields in order, each fixed-type field written as a Zarr v2
//! `fill_value` of its type (`"NaN"` for a float NaN, base64 for bytes, `[re, im]` for complex
//! values) and nested in lists when it has a shape. Reading runs nothing ([`super::pickle`]);
//! writing makes `numpy.ndarray(shape, dtype)` and sets its state, which NumPy 1 and 2 load.

use super::pickle::{ArrayData, Callable, Node, Pickle, PickleWriter, Walk};
use super::{DataType, DataTypeKind, Field, FillValue};
use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde_json::{Map, Value};
use std::ops::Range;

/// What one element of a pickled array is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickledElement {
    /// A Python object (`|O`): any value JSON can hold.
    Object,
    /// A record with object fields, given as a JSON object of its fields.
    Record(Vec<Field>),
}

/// Field types a record with object fields may have besides objects.
fn plain_field_type(dtype: &DataType) -> bool {
    matches!(
        dtype.kind,
        DataTypeKind::Bool
            | DataTypeKind::Int
            | DataTypeKind::UInt
            | DataTypeKind::Float
            | DataTypeKind::Complex
            | DataTypeKind::Bytes
            | DataTypeKind::Unicode
    )
}

impl PickledElement {
    /// The element of an array of `dtype`: an object, or a record whose fields are objects,
    /// numbers, booleans or fixed-size text (others are [`Error::Unsupported`], naming the
    /// field); [`Error::InvalidMetadata`] for types that hold no objects.
    pub fn of(dtype: &DataType) -> Result<PickledElement> {
        match &dtype.kind {
            DataTypeKind::Object => Ok(PickledElement::Object),
            DataTypeKind::Structured(fields) if dtype.holds_objects() => {
                for field in fields {
                    let object = field.dtype.kind == DataTypeKind::Object;
                    if (object && !field.shape.is_empty())
                        || (!object && !plain_field_type(&field.dtype))
                    {
                        return Err(Error::Unsupported(format!(
                            "pickle: field {:?} of {}{} in a record with object fields (its fields may be objects, numbers, booleans and S or U text)",
                            field.name,
                            field.dtype.typestr(),
                            if field.shape.is_empty() { String::new() } else { format!(" {:?}", field.shape) }
                        )));
                    }
                }
                Ok(PickledElement::Record(fields.clone()))
            }
            _ => Err(Error::InvalidMetadata(format!(
                "the pickle object codec on an array of {}, which holds no objects",
                dtype.typestr()
            ))),
        }
    }

    /// Decodes a chunk of `shape` into one buffer of its elements' JSON text, in C order.
    pub fn decode(&self, encoded: &[u8], shape: &[u64]) -> Result<(Vec<u8>, Vec<Range<usize>>)> {
        let pickle = Pickle::read(encoded)?;
        let array = pickle.array(pickle.root())?;
        let expected = shape.iter().product::<u64>();
        let held = array.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
        let ArrayData::Objects(items) = array.data else {
            return Err(corrupt("an array of raw bytes, not of objects".into()));
        };
        if held != Some(expected) || items.len() as u64 != expected {
            return Err(corrupt(format!(
                "an array of shape {:?} ({} elements) where the chunk holds {expected}",
                array.shape,
                items.len()
            )));
        }
        let dtype = pickle.dtype(array.dtype)?;
        match self {
            PickledElement::Object if dtype.names.is_none() && dtype.typestr.contains('O') => {}
            PickledElement::Record(fields)
                if dtype.names.as_ref().is_some_and(|names| {
                    names
                        .iter()
                        .map(String::as_str)
                        .eq(fields.iter().map(|f| f.name.as_str()))
                }) => {}
            _ => {
                return Err(corrupt(format!(
                    "an array of {} (fields {:?}) where the array's elements are {}",
                    dtype.typestr,
                    dtype.names.unwrap_or_default(),
                    self.describe()
                )))
            }
        }
        let mut walk = Walk::new(encoded.len());
        let mut buffer = Vec::new();
        let mut ranges = Vec::with_capacity(items.len());
        for (i, &item) in items.iter().enumerate() {
            let value = self
                .element_json(&pickle, item, &mut walk)
                .map_err(|e| e.context(format!("element {i}")))?;
            let start = buffer.len();
            serde_json::to_writer(&mut buffer, &value).expect("writing to memory");
            ranges.push(start..buffer.len());
        }
        Ok((buffer, ranges))
    }

    /// Encodes the elements of a chunk of `shape` (JSON text, C order) into `out`, as an
    /// array in F order when `fortran` (as zarr-python 2 pickles an F-order array's chunks).
    pub fn encode<'a>(
        &self,
        items: impl ExactSizeIterator<Item = &'a [u8]>,
        shape: &[u64],
        fortran: bool,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let mut w = PickleWriter::new();
        w.global("numpy", "ndarray");
        w.mark();
        write_shape(&mut w, shape);
        self.write_dtype(&mut w);
        w.tuple();
        w.reduce();
        w.mark();
        w.int(1);
        write_shape(&mut w, shape);
        self.write_dtype(&mut w);
        w.bool(fortran);
        w.mark();
        for (i, item) in items.enumerate() {
            let value: Value = serde_json::from_slice(item).map_err(|e| {
                Error::InvalidArgument(format!("pickle: element {i} is not JSON text: {e}"))
            })?;
            self.write_element(&mut w, &value)
                .map_err(|e| e.context(format!("element {i}")))?;
        }
        w.list();
        w.tuple();
        w.build();
        out.clear();
        out.extend(w.finish());
        Ok(())
    }

    /// The JSON text of never-written elements, from the `.zarray` `fill_value`, as
    /// zarr-python 2 stores it: for objects the JSON value itself; for records `null` (`None`
    /// objects and zeros), or base64 of a pickle of the record, or of one value every field
    /// takes cast to its type (zarr-python 2's default `0`).
    pub fn fill_item(&self, fill: &Value) -> Result<Vec<u8>> {
        let invalid = |why: String| {
            Error::InvalidMetadata(format!("fill_value {fill} for the pickle codec: {why}"))
        };
        let value = match fill {
            Value::Null => self.none_json(),
            _ if *self == PickledElement::Object => fill.clone(),
            Value::String(text) => {
                let bytes = BASE64
                    .decode(text)
                    .map_err(|_| invalid("not base64".into()))?;
                let pickle = Pickle::read(&bytes).map_err(|e| invalid(e.to_string()))?;
                let mut walk = Walk::new(bytes.len());
                self.fill_json(&pickle, pickle.root(), &mut walk)
                    .map_err(|e| invalid(e.to_string()))?
            }
            _ => return Err(invalid("not base64 of a pickle, nor null".into())),
        };
        Ok(value.to_string().into_bytes())
    }

    fn describe(&self) -> String {
        match self {
            PickledElement::Object => "objects".into(),
            PickledElement::Record(fields) => format!(
                "records of fields {:?}",
                fields.iter().map(|f| &f.name).collect::<Vec<_>>()
            ),
        }
    }

    /// The JSON of a `None` element: NumPy's empty array of the type.
    fn none_json(&self) -> Value {
        match self {
            PickledElement::Object => Value::Null,
            PickledElement::Record(fields) => Value::Object(
                fields
                    .iter()
                    .map(|f| {
                        let value = match f.dtype.kind {
                            DataTypeKind::Object => Value::Null,
                            _ => broadcast(
                                FillValue::parse(&FillValue::default_json(&f.dtype), &f.dtype)
                                    .map(|v| v.to_json(&f.dtype))
                                    .unwrap_or(Value::Null),
                                &f.shape,
                            ),
                        };
                        (f.name.clone(), value)
                    })
                    .collect(),
            ),
        }
    }

    fn fill_json(&self, p: &Pickle, node: usize, walk: &mut Walk) -> Result<Value> {
        match (self, p.node(node)) {
            (PickledElement::Record(_), Node::Tuple(_)) | (PickledElement::Object, _) => {
                self.element_json(p, node, walk)
            }
            (PickledElement::Record(_), Node::None) => Ok(self.none_json()),
            (
                PickledElement::Record(_),
                Node::Made {
                    callable: Callable::Scalar,
                    args,
                    ..
                },
            ) if record_scalar(p, *args).is_some() => {
                let item = record_scalar(p, *args).expect("checked");
                self.element_json(p, item, walk)
            }
            (PickledElement::Record(fields), _) => {
                // NumPy fills each field with a scalar fill value, cast to the field's type.
                let mut record = Map::new();
                for field in fields {
                    let value = match field.dtype.kind {
                        DataTypeKind::Object => object_json(p, node, walk, 0),
                        _ => cast_json(p, node, &field.dtype).map(|v| broadcast(v, &field.shape)),
                    }
                    .map_err(|e| e.context(format!("field {:?}", field.name)))?;
                    record.insert(field.name.clone(), value);
                }
                Ok(Value::Object(record))
            }
        }
    }

    fn element_json(&self, p: &Pickle, node: usize, walk: &mut Walk) -> Result<Value> {
        let PickledElement::Record(fields) = self else {
            return object_json(p, node, walk, 0);
        };
        let values = p
            .tuple(node)
            .filter(|values| values.len() == fields.len())
            .ok_or_else(|| corrupt(format!("not a record of {} fields", fields.len())))?;
        let mut record = Map::new();
        for (field, &value) in fields.iter().zip(values) {
            walk.visit(1)?;
            let json = match (&field.dtype.kind, field.shape.as_slice()) {
                (DataTypeKind::Object, _) => object_json(p, value, walk, 1),
                (_, []) => scalar_json(p, value, &field.dtype),
                _ => sub_array_json(p, value, field),
            }
            .map_err(|e| e.context(format!("field {:?}", field.name)))?;
            record.insert(field.name.clone(), json);
        }
        Ok(Value::Object(record))
    }

    fn write_dtype(&self, w: &mut PickleWriter) {
        w.global("numpy", "dtype");
        w.mark();
        match self {
            PickledElement::Object => w.str("|O"),
            PickledElement::Record(fields) => {
                w.mark();
                for field in fields {
                    w.mark();
                    w.str(&field.name);
                    w.str(&field.dtype.typestr());
                    if !field.shape.is_empty() {
                        write_shape(w, &field.shape);
                    }
                    w.tuple();
                }
                w.list();
            }
        }
        w.tuple();
        w.reduce();
    }

    fn write_element(&self, w: &mut PickleWriter, value: &Value) -> Result<()> {
        let PickledElement::Record(fields) = self else {
            write_object(w, value);
            return Ok(());
        };
        let map = value.as_object().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{value} is not a JSON object of the record's fields"
            ))
        })?;
        if let Some(unknown) = map.keys().find(|k| !fields.iter().any(|f| &f.name == *k)) {
            return Err(Error::InvalidArgument(format!(
                "no field {unknown:?} (fields: {:?})",
                fields.iter().map(|f| &f.name).collect::<Vec<_>>()
            )));
        }
        w.mark();
        for field in fields {
            let value = map.get(&field.name).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "the record has no value for field {:?}",
                    field.name
                ))
            })?;
            match field.dtype.kind {
                DataTypeKind::Object => write_object(w, value),
                _ => write_field(w, value, &field.dtype, &field.shape)
                    .map_err(|e| e.context(format!("field {:?}", field.name)))?,
            }
        }
        w.tuple();
        Ok(())
    }
}

fn corrupt(why: String) -> Error {
    Error::CorruptChunk(format!("pickle: {why}"))
}

fn no_json_form(what: &str) -> Error {
    Error::Unsupported(format!(
        "pickle: {what}, which JSON has no form of (an object's elements are read as JSON)"
    ))
}

/// A Python object as the JSON value it is.
fn object_json(p: &Pickle, node: usize, walk: &mut Walk, depth: usize) -> Result<Value> {
    walk.visit(depth)?;
    let nested = |items: &[usize], walk: &mut Walk| -> Result<Value> {
        items
            .iter()
            .map(|&i| object_json(p, i, walk, depth + 1))
            .collect::<Result<Vec<_>>>()
            .map(Value::Array)
    };
    Ok(match p.node(node) {
        Node::None => Value::Null,
        Node::Bool(b) => Value::Bool(*b),
        Node::Int(v) => int_json(*v).ok_or_else(|| no_json_form("an integer beyond 64 bits"))?,
        Node::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| no_json_form(&format!("the float {f}")))?,
        Node::Str(s) => Value::String(s.clone()),
        Node::List(items) | Node::Tuple(items) => nested(items, walk)?,
        Node::Dict(pairs) => {
            let mut map = Map::new();
            for &(k, v) in pairs {
                let key = p
                    .str(k)
                    .ok_or_else(|| no_json_form("a dict key that is not a str"))?;
                map.insert(key.to_string(), object_json(p, v, walk, depth + 1)?);
            }
            Value::Object(map)
        }
        Node::Made {
            callable: Callable::Scalar,
            ..
        } => match numpy_scalar_json(p, node)? {
            v @ (Value::Number(_) | Value::Bool(_)) => v,
            other => return Err(no_json_form(&format!("the NumPy scalar {other}"))),
        },
        Node::Bytes(_)
        | Node::Made {
            callable: Callable::ByteArray | Callable::Encode,
            ..
        } => return Err(no_json_form("a bytes value")),
        Node::Made {
            callable: Callable::Complex,
            ..
        } => return Err(no_json_form("a complex number")),
        Node::Made { .. } | Node::Callable(_) => {
            return Err(no_json_form("a NumPy array, dtype or callable"))
        }
    })
}

fn int_json(v: i128) -> Option<Value> {
    match (i64::try_from(v), u64::try_from(v)) {
        (Ok(i), _) => Some(i.into()),
        (_, Ok(u)) => Some(u.into()),
        _ => None,
    }
}

/// A float as a Zarr v2 `fill_value` writes it.
fn float_json(f: f64) -> Value {
    match serde_json::Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => "NaN".into(),
        None if f > 0.0 => "Infinity".into(),
        None => "-Infinity".into(),
    }
}

/// A NumPy scalar, `scalar(dtype, bytes)`, as the fill value of its type.
fn numpy_scalar_json(p: &Pickle, node: usize) -> Result<Value> {
    let Node::Made { args, .. } = p.node(node) else {
        unreachable!("a scalar node")
    };
    let bad = || corrupt("a NumPy scalar that is not scalar(dtype, bytes)".into());
    let [dtype, bytes] = *p.tuple(*args).ok_or_else(bad)? else {
        return Err(bad());
    };
    let dtype = DataType::parse_typestr(&p.dtype(dtype)?.typestr)?;
    let mut bytes = p.bytes(bytes).ok_or_else(bad)?;
    if bytes.len() != dtype.size || matches!(dtype.kind, DataTypeKind::Structured(_)) {
        return Err(bad());
    }
    dtype.byte_swap().apply(&mut bytes);
    Ok(FillValue(Some(bytes)).to_json(&dtype))
}

/// A scalar field's value as a `fill_value` of the field's type.
fn scalar_json(p: &Pickle, node: usize, dtype: &DataType) -> Result<Value> {
    let value = match p.node(node) {
        Node::Bool(b) => Value::Bool(*b),
        Node::Int(v) => {
            int_json(*v).ok_or_else(|| corrupt(format!("{v} does not fit {}", dtype.typestr())))?
        }
        Node::Float(f) => float_json(*f),
        Node::Str(s) => Value::String(s.clone()),
        Node::Made {
            callable: Callable::Scalar,
            ..
        } => numpy_scalar_json(p, node)?,
        Node::Made {
            callable: Callable::Complex,
            args,
            ..
        } => match p
            .tuple(*args)
            .map(|a| a.iter().map(|&i| p.node(i)).collect::<Vec<_>>())
            .as_deref()
        {
            Some([Node::Float(re), Node::Float(im)]) => {
                Value::Array(vec![float_json(*re), float_json(*im)])
            }
            _ => {
                return Err(corrupt(
                    "a complex number that is not complex(re, im)".into(),
                ))
            }
        },
        _ => match p.bytes(node) {
            Some(bytes) => Value::String(BASE64.encode(bytes)),
            None => {
                return Err(corrupt(format!(
                    "a value that is not one of {}",
                    dtype.typestr()
                )))
            }
        },
    };
    FillValue::parse(&value, dtype)
        .map(|v| v.to_json(dtype))
        .map_err(|_| corrupt(format!("{value} is not a value of {}", dtype.typestr())))
}

/// The record of a NumPy record scalar, `scalar(dtype, array)`, as zarr-python 2 pickles a
/// fill value of a record type: the one element of the 0-d array.
fn record_scalar(p: &Pickle, args: usize) -> Option<usize> {
    let &[_, array] = p.tuple(args)? else {
        return None;
    };
    match p.array(array).ok()?.data {
        ArrayData::Objects(items) if items.len() == 1 => Some(items[0]),
        _ => None,
    }
}

/// A scalar as NumPy casts it into a field of `dtype` (a record's fill value): a number's
/// truth for a bool, a float truncated for an integer, `str()` of an integer or bool for text
/// (cut to the field's length).
fn cast_json(p: &Pickle, node: usize, dtype: &DataType) -> Result<Value> {
    let text = match (p.node(node), &dtype.kind) {
        (Node::Int(v), DataTypeKind::Bool) => return Ok(Value::Bool(*v != 0)),
        (Node::Float(f), DataTypeKind::Bool) => return Ok(Value::Bool(*f != 0.0)),
        (Node::Float(f), DataTypeKind::Int | DataTypeKind::UInt) if f.is_finite() => {
            return scalar_json(p, node, dtype).or_else(|_| {
                let truncated = f.trunc();
                FillValue::parse(&float_json(truncated), dtype)
                    .map(|v| v.to_json(dtype))
                    .map_err(|_| corrupt(format!("{f} does not fit {}", dtype.typestr())))
            })
        }
        (
            Node::Bool(b),
            DataTypeKind::Int | DataTypeKind::UInt | DataTypeKind::Float | DataTypeKind::Complex,
        ) => return FillValue::parse(&Value::from(u8::from(*b)), dtype).map(|v| v.to_json(dtype)),
        (Node::Int(v), DataTypeKind::Bytes | DataTypeKind::Unicode) => v.to_string(),
        (Node::Bool(b), DataTypeKind::Bytes | DataTypeKind::Unicode) => {
            if *b { "True" } else { "False" }.to_string()
        }
        (Node::Str(_) | Node::Bytes(_), _)
        | (
            _,
            DataTypeKind::Complex
            | DataTypeKind::Float
            | DataTypeKind::Int
            | DataTypeKind::UInt
            | DataTypeKind::Bool,
        ) => return scalar_json(p, node, dtype),
        _ => {
            return Err(Error::Unsupported(format!(
                "pickle: a fill value of one value for all fields, cast to {} text",
                dtype.typestr()
            )))
        }
    };
    let value = match dtype.kind {
        DataTypeKind::Bytes => {
            Value::String(BASE64.encode(&text.as_bytes()[..text.len().min(dtype.size)]))
        }
        _ => Value::String(text.chars().take(dtype.size / 4).collect()),
    };
    Ok(value)
}

/// A sub-array field's value (a NumPy array, or nested lists as libzarr writes them) as
/// nested lists of `fill_value`s.
fn sub_array_json(p: &Pickle, node: usize, field: &Field) -> Result<Value> {
    if let Node::List(_) | Node::Tuple(_) = p.node(node) {
        let mut values = Vec::with_capacity(field.count());
        nested_scalars(p, node, &field.shape, &field.dtype, &mut values)?;
        return Ok(super::object::nest(values, &field.shape));
    }
    let array = p.array(node)?;
    let count = field.count();
    if array.shape.iter().product::<u64>() != count as u64 {
        return Err(corrupt(format!(
            "an array of shape {:?} where the field's is {:?}",
            array.shape, field.shape
        )));
    }
    let values = match array.data {
        ArrayData::Objects(items) => items
            .iter()
            .map(|&i| scalar_json(p, i, &field.dtype))
            .collect::<Result<Vec<_>>>()?,
        ArrayData::Raw(bytes, fortran) => {
            let stored = DataType::parse_typestr(&p.dtype(array.dtype)?.typestr)?;
            if bytes.len() != count * stored.size || stored.size == 0 {
                return Err(corrupt(format!(
                    "{} bytes for {count} elements of {}",
                    bytes.len(),
                    stored.typestr()
                )));
            }
            let elements: Vec<&[u8]> = bytes.chunks_exact(stored.size).collect();
            (0..count)
                .map(|i| {
                    let at = if fortran {
                        fortran_index(i, &array.shape)
                    } else {
                        i
                    };
                    let mut element = elements[at].to_vec();
                    stored.byte_swap().apply(&mut element);
                    let value = FillValue(Some(element)).to_json(&stored);
                    FillValue::parse(&value, &field.dtype)
                        .map(|v| v.to_json(&field.dtype))
                        .map_err(|_| {
                            corrupt(format!(
                                "{value} is not a value of {}",
                                field.dtype.typestr()
                            ))
                        })
                })
                .collect::<Result<Vec<_>>>()?
        }
    };
    Ok(super::object::nest(values, &field.shape))
}

/// The scalars of lists nested to `shape`, in C order, checking every extent.
fn nested_scalars(
    p: &Pickle,
    node: usize,
    shape: &[u64],
    dtype: &DataType,
    out: &mut Vec<Value>,
) -> Result<()> {
    let Some((&n, inner)) = shape.split_first() else {
        out.push(scalar_json(p, node, dtype)?);
        return Ok(());
    };
    match p.node(node) {
        Node::List(items) | Node::Tuple(items) if items.len() as u64 == n => items
            .iter()
            .try_for_each(|&item| nested_scalars(p, item, inner, dtype, out)),
        _ => Err(corrupt(format!("a sub-array that is not {n} values"))),
    }
}

/// Where the element at C-order position `i` of an array of `shape` lies in Fortran order.
fn fortran_index(i: usize, shape: &[u64]) -> usize {
    let (mut rest, mut at, mut stride) = (i, 0, 1);
    let strides: Vec<usize> = shape
        .iter()
        .map(|&n| {
            let s = stride;
            stride *= n as usize;
            s
        })
        .collect();
    for (d, &n) in shape.iter().enumerate().rev() {
        at += (rest % n as usize) * strides[d];
        rest /= n as usize;
    }
    at
}

/// One value repeated over a sub-array shape.
fn broadcast(value: Value, shape: &[u64]) -> Value {
    shape
        .iter()
        .rev()
        .fold(value, |inner, &n| Value::Array(vec![inner; n as usize]))
}

fn write_shape(w: &mut PickleWriter, shape: &[u64]) {
    w.mark();
    for &n in shape {
        w.int(n.into());
    }
    w.tuple();
}

/// A JSON value as the Python object it stands for.
fn write_object(w: &mut PickleWriter, value: &Value) {
    match value {
        Value::Null => w.none(),
        Value::Bool(b) => w.bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), ..) => w.int(i.into()),
            (_, Some(u), _) => w.int(u.into()),
            (.., f) => w.float(f.unwrap_or(f64::NAN)),
        },
        Value::String(s) => w.str(s),
        Value::Array(items) => {
            w.mark();
            items.iter().for_each(|v| write_object(w, v));
            w.list();
        }
        Value::Object(map) => {
            w.mark();
            for (k, v) in map {
                w.str(k);
                write_object(w, v);
            }
            w.dict();
        }
    }
}

/// A fixed-type field's value (nested lists for a sub-array) as NumPy takes it.
fn write_field(w: &mut PickleWriter, value: &Value, dtype: &DataType, shape: &[u64]) -> Result<()> {
    if let Some((&n, inner)) = shape.split_first() {
        let items = value
            .as_array()
            .filter(|items| items.len() as u64 == n)
            .ok_or_else(|| Error::InvalidArgument(format!("{value} is not a list of {n}")))?;
        w.mark();
        for item in items {
            write_field(w, item, dtype, inner)?;
        }
        w.list();
        return Ok(());
    }
    let stored = FillValue::parse(value, dtype).map_err(|_| {
        Error::InvalidArgument(format!(
            "{value} is not a value of {} (written as a Zarr v2 fill_value)",
            dtype.typestr()
        ))
    })?;
    let bytes = stored.0.expect("a value that is not null");
    match dtype.kind {
        DataTypeKind::Bool => w.bool(bytes[0] != 0),
        DataTypeKind::Int | DataTypeKind::UInt => {
            let canonical = stored_json(&bytes, dtype);
            w.int(
                canonical
                    .as_i64()
                    .map(i128::from)
                    .or(canonical.as_u64().map(i128::from))
                    .expect("an integer"),
            );
        }
        DataTypeKind::Float => w.float(super::float_of(&bytes)),
        DataTypeKind::Complex => {
            let half = bytes.len() / 2;
            w.global("builtins", "complex");
            w.mark();
            w.float(super::float_of(&bytes[..half]));
            w.float(super::float_of(&bytes[half..]));
            w.tuple();
            w.reduce();
        }
        DataTypeKind::Bytes => {
            let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            w.bytes(&bytes[..end]);
        }
        DataTypeKind::Unicode => {
            let text = stored_json(&bytes, dtype);
            w.str(text.as_str().expect("text"));
        }
        _ => unreachable!("PickledElement::of admits only these field types"),
    }
    Ok(())
}

fn stored_json(bytes: &[u8], dtype: &DataType) -> Value {
    FillValue(Some(bytes.to_vec())).to_json(dtype)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> PickledElement {
        let dtype = DataType::parse(&json!([
            ["x", "<f8"],
            ["label", "|O"],
            ["n", "<i4", [2]],
            ["c", "<c8"],
            ["s", "|S3"],
            ["u", "<U2"],
            ["b", "|b1"]
        ]))
        .unwrap();
        PickledElement::of(&dtype).unwrap()
    }

    fn round_trip(element: &PickledElement, items: &[&str]) -> Vec<String> {
        let mut encoded = Vec::new();
        let shape = [items.len() as u64];
        element
            .encode(
                items.iter().map(|s| s.as_bytes()),
                &shape,
                false,
                &mut encoded,
            )
            .unwrap();
        let (buffer, ranges) = element.decode(&encoded, &shape).unwrap();
        ranges
            .into_iter()
            .map(|r| String::from_utf8(buffer[r].to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn records_round_trip_as_json_objects() {
        let items = [
            r#"{"x":1.5,"label":"abc","n":[1,2],"c":[1.0,-2.0],"s":"YWI=","u":"é","b":true}"#,
            r#"{"x":"NaN","label":[1,{"k":null}],"n":[-3,4],"c":["Infinity",0.0],"s":"","u":"","b":false}"#,
        ];
        assert_eq!(round_trip(&record(), &items), items);
    }

    #[test]
    fn objects_round_trip_as_json_values() {
        let items = [
            "null",
            "3",
            "-9007199254740993",
            "18446744073709551615",
            "2.5",
            "\"t\"",
            "[1,[2]]",
            "{\"a\":true}",
        ];
        assert_eq!(round_trip(&PickledElement::Object, &items), items);
    }

    #[test]
    fn bad_elements_name_the_field() {
        let mut out = Vec::new();
        for (item, words) in [
            (r#"{"x":1}"#, "no value for field \"label\""),
            (
                r#"{"x":1,"label":0,"n":[1],"c":0,"s":"","u":"","b":true}"#,
                "field \"n\"",
            ),
            (
                r#"{"x":"a","label":0,"n":[1,2],"c":0,"s":"","u":"","b":true}"#,
                "field \"x\"",
            ),
            (
                r#"{"x":1,"label":0,"n":[1,2],"c":0,"s":"","u":"","b":true,"z":1}"#,
                "no field \"z\"",
            ),
            ("[1]", "not a JSON object"),
            ("{", "not JSON text"),
        ] {
            let err = record()
                .encode([item.as_bytes()].into_iter(), &[1], false, &mut out)
                .unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
            assert!(err.to_string().contains(words), "{err} lacks {words}");
        }
    }

    /// A pickle of a one-element object array whose element `write` writes.
    fn object_chunk(write: impl FnOnce(&mut PickleWriter)) -> Vec<u8> {
        let mut w = PickleWriter::new();
        w.global("numpy", "ndarray");
        w.mark();
        write_shape(&mut w, &[1]);
        PickledElement::Object.write_dtype(&mut w);
        w.tuple();
        w.reduce();
        w.mark();
        w.int(1);
        write_shape(&mut w, &[1]);
        PickledElement::Object.write_dtype(&mut w);
        w.bool(false);
        w.mark();
        write(&mut w);
        w.list();
        w.tuple();
        w.build();
        w.finish()
    }

    #[test]
    fn values_json_has_no_form_of_are_refused() {
        let complex = |w: &mut PickleWriter| {
            w.global("builtins", "complex");
            w.mark();
            w.float(1.0);
            w.float(2.0);
            w.tuple();
            w.reduce();
        };
        type Write = Box<dyn Fn(&mut PickleWriter)>;
        let cases: [(Write, &str); 4] = [
            (Box::new(|w| w.bytes(b"ab")), "bytes"),
            (Box::new(|w| w.float(f64::NAN)), "float NaN"),
            (Box::new(complex), "complex"),
            (Box::new(|w| w.int(1 << 70)), "beyond 64 bits"),
        ];
        for (write, words) in cases {
            let chunk = object_chunk(|w| write(w));
            let err = PickledElement::Object.decode(&chunk, &[1]).unwrap_err();
            assert!(matches!(err, Error::Unsupported(_)), "{err}");
            assert!(err.to_string().contains(words), "{err} lacks {words}");
        }
        assert_eq!(
            PickledElement::Object
                .decode(&object_chunk(|w| w.int(7)), &[1])
                .unwrap()
                .0,
            b"7"
        );
        let err = PickledElement::Object
            .decode(&object_chunk(|w| w.int(7)), &[2])
            .unwrap_err();
        assert!(matches!(err, Error::CorruptChunk(_)), "{err}");
    }

    /// Pickles cut short or with bytes changed, thousands of them, give errors, never a panic
    /// or a hang.
    #[test]
    fn damaged_pickles_are_errors() {
        let items = [
            r#"{"x":1.5,"label":["a",{"k":null}],"n":[1,2],"c":[1.0,-2.0],"s":"YWI=","u":"é","b":true}"#,
            r#"{"x":"NaN","label":7,"n":[-3,4],"c":[0.0,0.0],"s":"","u":"","b":false}"#,
        ];
        let mut good = Vec::new();
        record()
            .encode(items.iter().map(|s| s.as_bytes()), &[2], false, &mut good)
            .unwrap();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for round in 0..4000 {
            let mut bad = good.clone();
            match round % 3 {
                0 => bad.truncate(next(good.len())),
                1 => {
                    for _ in 0..1 + next(4) {
                        let at = next(bad.len());
                        bad[at] = next(256) as u8;
                    }
                }
                _ => {
                    let at = next(bad.len());
                    let byte = bad[at];
                    bad.insert(at, byte);
                }
            }
            let _ = record().decode(&bad, &[2]);
            let _ = PickledElement::Object.decode(&bad, &[2]);
        }
    }

    #[test]
    fn fill_values_of_zarr_python_2() {
        // `gAVLAC4=` is zarr-python 2's default, the pickle of 0: every field takes 0 as
        // NumPy casts it (b"0" for bytes); `gAWILg==` is True.
        assert_eq!(
            String::from_utf8(record().fill_item(&json!("gAVLAC4=")).unwrap()).unwrap(),
            r#"{"x":0.0,"label":0,"n":[0,0],"c":[0.0,0.0],"s":"MA==","u":"0","b":false}"#
        );
        assert_eq!(
            String::from_utf8(record().fill_item(&json!("gAWILg==")).unwrap()).unwrap(),
            r#"{"x":1.0,"label":true,"n":[1,1],"c":[1.0,0.0],"s":"VHJ1","u":"Tr","b":true}"#
        );
        // 1.5 (`gAWVCgAAAAAAAABHP/gAAAAAAAAu`): Python's str() of a float is not reproduced.
        let err = record()
            .fill_item(&json!("gAWVCgAAAAAAAABHP/gAAAAAAAAu"))
            .unwrap_err();
        assert!(err.to_string().contains("field \"s\""), "{err}");
        let numbers = PickledElement::of(
            &DataType::parse(&json!([["x", "<f8"], ["label", "|O"], ["n", "<i4", [2]]])).unwrap(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(numbers.fill_item(&json!("gAVLAC4=")).unwrap()).unwrap(),
            r#"{"x":0.0,"label":0,"n":[0,0]}"#
        );
        assert_eq!(
            String::from_utf8(numbers.fill_item(&Value::Null).unwrap()).unwrap(),
            r#"{"x":0.0,"label":null,"n":[0,0]}"#
        );
        // zarr-python 2's pickle of the record (2.5, "q", [1, 1]).
        assert_eq!(
            String::from_utf8(
                numbers
                    .fill_item(&json!("gAWVGAAAAAAAAABHQAQAAAAAAACMAXGUXZQoSwFLAWWHlC4="))
                    .unwrap()
            )
            .unwrap(),
            r#"{"x":2.5,"label":"q","n":[1,1]}"#
        );
        assert!(matches!(
            numbers.fill_item(&json!("not base64!")),
            Err(Error::InvalidMetadata(_))
        ));
        assert_eq!(
            PickledElement::Object
                .fill_item(&json!({"a": [1]}))
                .unwrap(),
            br#"{"a":[1]}"#
        );
    }
}
