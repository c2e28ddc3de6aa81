//! Python pickles of NumPy arrays, as numcodecs' `pickle` object codec stores a chunk, read
//! without running anything and written in a form NumPy 1 and 2 both load.
//!
//! Reading interprets the binary opcodes of pickle protocols 2 to 5 into a graph of values
//! ([`Node`]); a call (`REDUCE`) is recorded, never made, and only the few callables NumPy's
//! own pickles name are accepted ([`Callable`]): any other global is refused by name. The
//! graph is bounded by the input (each opcode adds at most one node; lengths are checked
//! against the bytes left), and whatever walks it bounds its depth and the work shared
//! references can multiply ([`Walk`]).

use crate::error::{Error, Result};
use std::collections::HashMap;

/// A callable a pickle may name; reading refuses any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callable {
    /// `numpy.core.multiarray._reconstruct` (`numpy._core` in NumPy 2): an empty array that
    /// its state then fills.
    Reconstruct,
    /// `numpy.ndarray`.
    NdArray,
    /// `numpy.dtype`.
    Dtype,
    /// `numpy.core.numeric._frombuffer`: an array over raw bytes (protocol 5).
    FromBuffer,
    /// `numpy.core.multiarray.scalar`: a NumPy scalar from its dtype and bytes.
    Scalar,
    /// `builtins.complex`.
    Complex,
    /// `builtins.bytearray`.
    ByteArray,
    /// `_codecs.encode`: how protocol 2 stores bytes (`encode(text, "latin1")`).
    Encode,
}

impl Callable {
    fn named(module: &str, name: &str) -> Option<Callable> {
        let numpy_core = |sub: &str| {
            module
                .strip_prefix("numpy.core.")
                .or_else(|| module.strip_prefix("numpy._core."))
                == Some(sub)
        };
        Some(match name {
            "_reconstruct" if numpy_core("multiarray") => Callable::Reconstruct,
            "scalar" if numpy_core("multiarray") => Callable::Scalar,
            "_frombuffer" if numpy_core("numeric") => Callable::FromBuffer,
            "ndarray" if module == "numpy" => Callable::NdArray,
            "dtype" if module == "numpy" => Callable::Dtype,
            "complex" if matches!(module, "builtins" | "__builtin__") => Callable::Complex,
            "bytearray" if matches!(module, "builtins" | "__builtin__") => Callable::ByteArray,
            "encode" if module == "_codecs" => Callable::Encode,
            _ => return None,
        })
    }
}

/// One value of a pickle; containers refer to other nodes by index.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An integer (pickles of wider ones are refused).
    Int(i128),
    /// A float.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `bytes` or `bytearray`.
    Bytes(Vec<u8>),
    /// A list.
    List(Vec<usize>),
    /// A tuple.
    Tuple(Vec<usize>),
    /// A dict, its items in order.
    Dict(Vec<(usize, usize)>),
    /// A callable named by a global.
    Callable(Callable),
    /// What a call of `callable` with the tuple `args` would return, and the state a `BUILD`
    /// gave it.
    Made {
        /// The callable.
        callable: Callable,
        /// Its arguments, a tuple node.
        args: usize,
        /// The state given by `BUILD`, if any.
        state: Option<usize>,
    },
}

/// A pickle read into its graph of values.
#[derive(Debug)]
pub struct Pickle {
    nodes: Vec<Node>,
    root: usize,
}

fn corrupt(why: String) -> Error {
    Error::CorruptChunk(format!("pickle: {why}"))
}

fn unsupported(why: String) -> Error {
    Error::Unsupported(format!("pickle: {why}"))
}

/// The opcode reader: the input, the stack of node indices, its marks, and the memo.
struct Machine<'a> {
    input: &'a [u8],
    at: usize,
    nodes: Vec<Node>,
    stack: Vec<usize>,
    marks: Vec<usize>,
    memo: HashMap<u64, usize>,
}

impl<'a> Machine<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let input = self.input;
        let end = self.at.checked_add(n).filter(|&e| e <= input.len());
        let end = end.ok_or_else(|| {
            corrupt(format!(
                "ends at byte {} where {n} more were due",
                input.len()
            ))
        })?;
        let bytes = &input[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn uint(&mut self, n: usize) -> Result<u64> {
        let mut le = [0u8; 8];
        le[..n].copy_from_slice(self.take(n)?);
        Ok(u64::from_le_bytes(le))
    }

    fn sized(&mut self, width: usize) -> Result<&'a [u8]> {
        let len = self.uint(width)?;
        let len = usize::try_from(len).map_err(|_| corrupt(format!("a length of {len}")))?;
        self.take(len)
    }

    fn line(&mut self) -> Result<&'a str> {
        let rest = &self.input[self.at..];
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| corrupt("a global's name has no line end".into()))?;
        self.at += end + 1;
        std::str::from_utf8(&rest[..end]).map_err(|_| corrupt("a global's name is not text".into()))
    }

    fn text(&mut self, width: usize) -> Result<Node> {
        let bytes = self.sized(width)?;
        let text = std::str::from_utf8(bytes)
            .map_err(|_| corrupt(format!("a str before byte {} is not UTF-8", self.at)))?;
        Ok(Node::Str(text.to_string()))
    }

    fn push(&mut self, node: Node) {
        self.nodes.push(node);
        self.stack.push(self.nodes.len() - 1);
    }

    fn pop(&mut self) -> Result<usize> {
        if self.marks.last() == Some(&self.stack.len()) {
            return Err(corrupt("an opcode takes a value past a mark".into()));
        }
        self.stack
            .pop()
            .ok_or_else(|| corrupt("an opcode takes a value from an empty stack".into()))
    }

    fn top(&self) -> Result<usize> {
        self.stack
            .last()
            .copied()
            .ok_or_else(|| corrupt("an opcode needs a value on an empty stack".into()))
    }

    /// The values above the last mark, which is removed.
    fn pop_mark(&mut self) -> Result<Vec<usize>> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| corrupt("an opcode needs a mark and there is none".into()))?;
        Ok(self.stack.split_off(mark))
    }

    fn memoize(&mut self, key: u64) -> Result<()> {
        let top = self.top()?;
        self.memo.insert(key, top);
        Ok(())
    }

    fn recall(&mut self, key: u64) -> Result<()> {
        let node = *self
            .memo
            .get(&key)
            .ok_or_else(|| corrupt(format!("memo entry {key} is used before it is set")))?;
        self.stack.push(node);
        Ok(())
    }

    fn global(&mut self, module: &str, name: &str) -> Result<()> {
        let callable = Callable::named(module, name).ok_or_else(|| {
            unsupported(format!(
                "global {module}.{name} (only NumPy's arrays, dtypes and scalars are read)"
            ))
        })?;
        self.push(Node::Callable(callable));
        Ok(())
    }

    fn extend(&mut self, list: usize, items: Vec<usize>) -> Result<()> {
        match &mut self.nodes[list] {
            Node::List(values) => {
                values.extend(items);
                Ok(())
            }
            _ => Err(corrupt("APPENDS to a value that is not a list".into())),
        }
    }

    fn set_items(&mut self, dict: usize, items: Vec<usize>) -> Result<()> {
        if !items.len().is_multiple_of(2) {
            return Err(corrupt("SETITEMS with a key and no value".into()));
        }
        match &mut self.nodes[dict] {
            Node::Dict(pairs) => {
                pairs.extend(items.chunks_exact(2).map(|kv| (kv[0], kv[1])));
                Ok(())
            }
            _ => Err(corrupt("SETITEMS on a value that is not a dict".into())),
        }
    }

    fn int(&mut self, bytes: &[u8]) -> Result<Node> {
        if bytes.len() > 16 {
            return Err(unsupported(format!("an integer of {} bytes", bytes.len())));
        }
        let fill = if bytes.last().is_some_and(|&b| b & 0x80 != 0) {
            0xff
        } else {
            0
        };
        let mut le = [fill; 16];
        le[..bytes.len()].copy_from_slice(bytes);
        Ok(Node::Int(i128::from_le_bytes(le)))
    }

    /// Runs the opcodes to `STOP`; the root is what is then on the stack.
    fn run(mut self) -> Result<Pickle> {
        loop {
            let at = self.at;
            let op = self.take(1)?[0];
            match op {
                0x80 => {
                    let protocol = self.uint(1)?;
                    if protocol > 5 {
                        return Err(unsupported(format!("protocol {protocol}")));
                    }
                }
                0x95 => {
                    self.uint(8)?; // FRAME: a size hint only
                }
                b'.' => {
                    let root = self.pop()?;
                    if !self.stack.is_empty() || !self.marks.is_empty() {
                        return Err(corrupt("values are left on the stack at STOP".into()));
                    }
                    return Ok(Pickle {
                        nodes: self.nodes,
                        root,
                    });
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    self.pop()?;
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => self.stack.push(self.top()?),
                b'N' => self.push(Node::None),
                0x88 => self.push(Node::Bool(true)),
                0x89 => self.push(Node::Bool(false)),
                b'J' => {
                    let v = self.uint(4)? as u32 as i32;
                    self.push(Node::Int(v.into()));
                }
                b'K' => {
                    let v = self.uint(1)?;
                    self.push(Node::Int(v.into()));
                }
                b'M' => {
                    let v = self.uint(2)?;
                    self.push(Node::Int(v.into()));
                }
                0x8a | 0x8b => {
                    let bytes = self.sized(if op == 0x8a { 1 } else { 4 })?;
                    let node = self.int(bytes)?;
                    self.push(node);
                }
                b'G' => {
                    let bytes = self.take(8)?;
                    let v = f64::from_be_bytes(bytes.try_into().expect("8 bytes"));
                    self.push(Node::Float(v));
                }
                b'X' | 0x8c | 0x8d => {
                    let node = self.text(match op {
                        b'X' => 4,
                        0x8c => 1,
                        _ => 8,
                    })?;
                    self.push(node);
                }
                b'B' | b'C' | 0x8e | 0x96 => {
                    let bytes = self.sized(match op {
                        b'B' => 4,
                        b'C' => 1,
                        _ => 8,
                    })?;
                    self.push(Node::Bytes(bytes.to_vec()));
                }
                b']' => self.push(Node::List(Vec::new())),
                b'l' => {
                    let items = self.pop_mark()?;
                    self.push(Node::List(items));
                }
                b'a' => {
                    let item = self.pop()?;
                    let list = self.top()?;
                    self.extend(list, vec![item])?;
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    let list = self.top()?;
                    self.extend(list, items)?;
                }
                b')' => self.push(Node::Tuple(Vec::new())),
                b't' => {
                    let items = self.pop_mark()?;
                    self.push(Node::Tuple(items));
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    if self.stack.len() < n + self.marks.last().copied().unwrap_or(0) {
                        return Err(corrupt(format!("TUPLE{n} with fewer values on the stack")));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.push(Node::Tuple(items));
                }
                b'}' => self.push(Node::Dict(Vec::new())),
                b'd' => {
                    let items = self.pop_mark()?;
                    self.push(Node::Dict(Vec::new()));
                    let dict = self.top()?;
                    self.set_items(dict, items)?;
                }
                b's' => {
                    let value = self.pop()?;
                    let key = self.pop()?;
                    let dict = self.top()?;
                    self.set_items(dict, vec![key, value])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    let dict = self.top()?;
                    self.set_items(dict, items)?;
                }
                b'c' => {
                    let module = self.line()?;
                    let name = self.line()?;
                    self.global(module, name)?;
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    match (&self.nodes[module], &self.nodes[name]) {
                        (Node::Str(m), Node::Str(n)) => {
                            let (m, n) = (m.clone(), n.clone());
                            self.global(&m, &n)?;
                        }
                        _ => return Err(corrupt("STACK_GLOBAL of values that are not str".into())),
                    }
                }
                b'R' => {
                    let args = self.pop()?;
                    let callable = self.pop()?;
                    let Node::Callable(callable) = self.nodes[callable] else {
                        return Err(corrupt(format!("REDUCE at byte {at} calls a value that is not a global")));
                    };
                    if !matches!(self.nodes[args], Node::Tuple(_)) {
                        return Err(corrupt(format!("REDUCE at byte {at} with arguments that are not a tuple")));
                    }
                    self.push(Node::Made {
                        callable,
                        args,
                        state: None,
                    });
                }
                b'b' => {
                    let given = self.pop()?;
                    let target = self.top()?;
                    match &mut self.nodes[target] {
                        Node::Made { state, .. } if state.is_none() => *state = Some(given),
                        _ => return Err(corrupt(format!("BUILD at byte {at} on a value that takes no state"))),
                    }
                }
                b'q' | b'r' => {
                    let key = self.uint(if op == b'q' { 1 } else { 4 })?;
                    self.memoize(key)?;
                }
                0x94 => self.memoize(self.memo.len() as u64)?,
                b'h' | b'j' => {
                    let key = self.uint(if op == b'h' { 1 } else { 4 })?;
                    self.recall(key)?;
                }
                other => {
                    return Err(unsupported(format!(
                        "opcode 0x{other:02x} at byte {at} (protocols 2 to 5 are read, without out-of-band buffers, sets or objects other than NumPy's)"
                    )))
                }
            }
        }
    }
}

impl Pickle {
    /// Reads a pickle; [`Error::CorruptChunk`] for malformed bytes, [`Error::Unsupported`] for
    /// an opcode or global outside what NumPy's array pickles use.
    pub fn read(bytes: &[u8]) -> Result<Pickle> {
        Machine {
            input: bytes,
            at: 0,
            nodes: Vec::new(),
            stack: Vec::new(),
            marks: Vec::new(),
            memo: HashMap::new(),
        }
        .run()
    }

    /// The value the pickle stands for.
    pub fn root(&self) -> usize {
        self.root
    }

    /// The node at `index`.
    pub fn node(&self, index: usize) -> &Node {
        &self.nodes[index]
    }

    /// The items of a tuple node, or `None`.
    pub fn tuple(&self, index: usize) -> Option<&[usize]> {
        match self.node(index) {
            Node::Tuple(items) => Some(items),
            _ => None,
        }
    }

    /// The bytes a node holds: `bytes`, a `bytearray(bytes)` call, or protocol 2's
    /// `_codecs.encode(text, "latin1")`.
    pub fn bytes(&self, index: usize) -> Option<Vec<u8>> {
        match self.node(index) {
            Node::Bytes(b) => Some(b.clone()),
            Node::Made {
                callable: Callable::ByteArray,
                args,
                state: None,
            } => match self.tuple(*args)? {
                [] => Some(Vec::new()),
                [inner] => self.bytes(*inner),
                _ => None,
            },
            Node::Made {
                callable: Callable::Encode,
                args,
                state: None,
            } => match self.tuple(*args)? {
                [text, encoding] if self.str(*encoding) == Some("latin1") => self
                    .str(*text)?
                    .chars()
                    .map(|c| u8::try_from(u32::from(c)).ok())
                    .collect(),
                _ => None,
            },
            _ => None,
        }
    }

    /// The text of a `str` node, or `None`.
    pub fn str(&self, index: usize) -> Option<&str> {
        match self.node(index) {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value of an integer node, or `None`.
    pub fn int(&self, index: usize) -> Option<i128> {
        match self.node(index) {
            Node::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// An array node: `_reconstruct` or `ndarray` with its `(version, shape, dtype,
    /// fortran, data)` state, or `_frombuffer(bytes, dtype, shape, order)`.
    pub fn array(&self, index: usize) -> Result<PickledArray> {
        let not_array = || corrupt("a value that is not a NumPy array where one was due".into());
        let Node::Made {
            callable,
            args,
            state,
        } = self.node(index)
        else {
            return Err(not_array());
        };
        let args = self.tuple(*args).ok_or_else(not_array)?;
        match (callable, state) {
            (Callable::Reconstruct | Callable::NdArray, Some(state)) => {
                let state = self.tuple(*state).ok_or_else(not_array)?;
                let (shape, dtype, fortran, data) = match *state {
                    [_version, shape, dtype, fortran, data] => (shape, dtype, fortran, data),
                    [shape, dtype, fortran, data] => (shape, dtype, fortran, data),
                    _ => return Err(not_array()),
                };
                let fortran = matches!(self.node(fortran), Node::Bool(true) | Node::Int(1));
                let data = match self.node(data) {
                    Node::List(items) => ArrayData::Objects(items.clone()),
                    _ => ArrayData::Raw(self.bytes(data).ok_or_else(not_array)?, fortran),
                };
                Ok(PickledArray {
                    shape: self.shape(shape)?,
                    dtype,
                    data,
                })
            }
            (Callable::FromBuffer, None) => match *args {
                [buffer, dtype, shape, order] => Ok(PickledArray {
                    shape: self.shape(shape)?,
                    dtype,
                    data: ArrayData::Raw(
                        self.bytes(buffer).ok_or_else(not_array)?,
                        self.str(order) == Some("F"),
                    ),
                }),
                _ => Err(not_array()),
            },
            _ => Err(not_array()),
        }
    }

    fn shape(&self, index: usize) -> Result<Vec<u64>> {
        self.tuple(index)
            .and_then(|dims| {
                dims.iter()
                    .map(|&d| self.int(d).and_then(|v| u64::try_from(v).ok()))
                    .collect()
            })
            .ok_or_else(|| corrupt("an array's shape is not a tuple of sizes".into()))
    }

    /// A dtype node: its NumPy type string (`"<f8"`, `"|O8"`, `"|V24"`) and, for a record,
    /// its field names.
    pub fn dtype(&self, index: usize) -> Result<PickledDtype> {
        let not_dtype = || corrupt("a value that is not a NumPy dtype where one was due".into());
        let Node::Made {
            callable: Callable::Dtype,
            args,
            state,
        } = self.node(index)
        else {
            return Err(not_dtype());
        };
        let first = *self
            .tuple(*args)
            .and_then(|a| a.first())
            .ok_or_else(not_dtype)?;
        if let Node::List(fields) = self.node(first) {
            // `dtype([(name, type[, shape]), ...])`, as libzarr writes records.
            let names = fields
                .iter()
                .map(|&f| {
                    let name = self.tuple(f).and_then(|t| t.first())?;
                    self.str(*name).map(String::from)
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(not_dtype)?;
            return Ok(PickledDtype {
                typestr: "|V".into(),
                names: Some(names),
            });
        }
        let code = self.str(first).ok_or_else(not_dtype)?;
        // NumPy's own form: `dtype("f8", False, True)` and the state
        // `(version, byte order, subarray, names, fields, itemsize, alignment, flags)`.
        let state = state.and_then(|s| self.tuple(s));
        let order = match state.and_then(|s| s.get(1)).and_then(|&o| self.str(o)) {
            Some(o @ ("<" | ">")) => o,
            _ if code.starts_with(['<', '>', '|', '=']) => "",
            _ => "|",
        };
        let names = match state.and_then(|s| s.get(3)).map(|&n| self.node(n)) {
            Some(Node::Tuple(names)) => Some(
                names
                    .iter()
                    .map(|&n| self.str(n).map(String::from))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(not_dtype)?,
            ),
            _ => None,
        };
        Ok(PickledDtype {
            typestr: format!("{order}{code}"),
            names,
        })
    }
}

/// An array as a pickle holds it.
#[derive(Debug)]
pub struct PickledArray {
    /// Its shape.
    pub shape: Vec<u64>,
    /// Its dtype node ([`Pickle::dtype`]).
    pub dtype: usize,
    /// Its elements.
    pub data: ArrayData,
}

/// The elements of a pickled array.
#[derive(Debug)]
pub enum ArrayData {
    /// One node per element, in C order (the form of dtypes that hold objects).
    Objects(Vec<usize>),
    /// The elements' bytes, in Fortran order when the flag is set.
    Raw(Vec<u8>, bool),
}

/// A dtype as a pickle holds it.
#[derive(Debug, PartialEq)]
pub struct PickledDtype {
    /// The NumPy type string, with its byte order (`"<f8"`, `"|O8"`, `"|V24"`).
    pub typestr: String,
    /// The field names of a record type.
    pub names: Option<Vec<String>>,
}

/// The bounds of a walk over a pickle's graph: nesting depth, and nodes visited (shared
/// references could otherwise make a small pickle expand without end).
pub struct Walk {
    visits_left: usize,
}

/// How deep values may nest in a pickle's item.
const DEEPEST: usize = 64;

impl Walk {
    /// A walk of at most 16 visits per byte of a pickle of `len` bytes.
    pub fn new(len: usize) -> Walk {
        Walk {
            visits_left: len.saturating_mul(16).saturating_add(1024),
        }
    }

    /// Counts a visit at nesting `depth`.
    pub fn visit(&mut self, depth: usize) -> Result<()> {
        if depth > DEEPEST {
            return Err(unsupported(format!("values nested deeper than {DEEPEST}")));
        }
        self.visits_left = self
            .visits_left
            .checked_sub(1)
            .ok_or_else(|| corrupt("its shared values expand far beyond its size".into()))?;
        Ok(())
    }
}

/// Writes a pickle with the opcodes of protocol 3, which every Python 3 reads.
pub struct PickleWriter {
    out: Vec<u8>,
}

impl Default for PickleWriter {
    fn default() -> Self {
        PickleWriter::new()
    }
}

impl PickleWriter {
    /// A pickle begun with its protocol.
    pub fn new() -> PickleWriter {
        PickleWriter { out: vec![0x80, 3] }
    }

    /// `None`.
    pub fn none(&mut self) {
        self.out.push(b'N');
    }

    /// `True` or `False`.
    pub fn bool(&mut self, v: bool) {
        self.out.push(if v { 0x88 } else { 0x89 });
    }

    /// An integer.
    pub fn int(&mut self, v: i128) {
        if let Ok(small) = i32::try_from(v) {
            self.out.push(b'J');
            self.out.extend(small.to_le_bytes());
            return;
        }
        let bytes = v.to_le_bytes();
        // The shortest two's complement form: drop top bytes that only repeat the sign.
        let mut len = 16;
        while len > 1 {
            let (top, next) = (bytes[len - 1], bytes[len - 2]);
            if (top == 0 && next & 0x80 == 0) || (top == 0xff && next & 0x80 != 0) {
                len -= 1;
            } else {
                break;
            }
        }
        self.out.push(0x8a);
        self.out.push(len as u8);
        self.out.extend(&bytes[..len]);
    }

    /// A float.
    pub fn float(&mut self, v: f64) {
        self.out.push(b'G');
        self.out.extend(v.to_be_bytes());
    }

    /// A `str`.
    pub fn str(&mut self, text: &str) {
        self.out.push(b'X');
        self.out.extend((text.len() as u32).to_le_bytes());
        self.out.extend(text.as_bytes());
    }

    /// A `bytes`.
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.out.push(b'B');
        self.out.extend((bytes.len() as u32).to_le_bytes());
        self.out.extend(bytes);
    }

    /// A mark: the start of a tuple's, list's or dict's items.
    pub fn mark(&mut self) {
        self.out.push(b'(');
    }

    /// The tuple of the values since the mark.
    pub fn tuple(&mut self) {
        self.out.push(b't');
    }

    /// The list of the values since the mark.
    pub fn list(&mut self) {
        self.out.push(b'l');
    }

    /// The dict of the key, value pairs since the mark.
    pub fn dict(&mut self) {
        self.out.push(b'd');
    }

    /// A global, by its module and name.
    pub fn global(&mut self, module: &str, name: &str) {
        self.out.push(b'c');
        for part in [module, name] {
            self.out.extend(part.as_bytes());
            self.out.push(b'\n');
        }
    }

    /// Calls the global below the arguments tuple on the stack.
    pub fn reduce(&mut self) {
        self.out.push(b'R');
    }

    /// Gives the object below the state on the stack its state.
    pub fn build(&mut self) {
        self.out.push(b'b');
    }

    /// The pickle, ended.
    pub fn finish(mut self) -> Vec<u8> {
        self.out.push(b'.');
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_writes() {
        let mut w = PickleWriter::new();
        w.mark();
        w.none();
        w.bool(true);
        w.int(-5);
        w.int(1 << 40);
        w.int(-(1 << 70));
        w.float(2.5);
        w.str("é");
        w.bytes(b"\x00\xff");
        w.mark();
        w.int(1);
        w.list();
        w.mark();
        w.str("k");
        w.int(2);
        w.dict();
        w.tuple();
        let bytes = w.finish();
        let p = Pickle::read(&bytes).unwrap();
        let items = p.tuple(p.root()).unwrap().to_vec();
        let nodes: Vec<&Node> = items.iter().map(|&i| p.node(i)).collect();
        assert_eq!(nodes[0], &Node::None);
        assert_eq!(nodes[1], &Node::Bool(true));
        assert_eq!(nodes[2], &Node::Int(-5));
        assert_eq!(nodes[3], &Node::Int(1 << 40));
        assert_eq!(nodes[4], &Node::Int(-(1 << 70)));
        assert_eq!(nodes[5], &Node::Float(2.5));
        assert_eq!(nodes[6], &Node::Str("é".into()));
        assert_eq!(nodes[7], &Node::Bytes(vec![0, 255]));
        assert!(matches!(nodes[8], Node::List(l) if l.len() == 1));
        assert!(matches!(nodes[9], Node::Dict(d) if d.len() == 1));
    }

    #[test]
    fn refuses_other_globals_and_malformed_bytes() {
        let mut w = PickleWriter::new();
        w.global("os", "system");
        w.mark();
        w.str("true");
        w.tuple();
        w.reduce();
        let err = Pickle::read(&w.finish()).unwrap_err();
        assert!(
            matches!(&err, Error::Unsupported(m) if m.contains("os.system")),
            "{err}"
        );
        for bad in [
            &b""[..],
            b"\x80\x03",
            b"\x80\x03X\xff\xff\xff\x7fab.",
            b"\x80\x03e.",
            b"\x80\x03h\x01.",
            b"\x80\x03NN.",
            b"\x80\x03Nb.",
            b"\x80\x03(t(.",
            b"\x80\x03\x87.",
        ] {
            assert!(
                matches!(Pickle::read(bad), Err(Error::CorruptChunk(_))),
                "{bad:?}"
            );
        }
        assert!(matches!(
            Pickle::read(b"\x80\x03I1\n."),
            Err(Error::Unsupported(_))
        ));
    }

    #[test]
    fn shared_values_are_one_node() {
        // A list memoized empty, then filled: a later reference sees it filled.
        let bytes = b"\x80\x03]q\x00(K\x01K\x02eh\x00\x86.";
        let p = Pickle::read(bytes).unwrap();
        let pair = p.tuple(p.root()).unwrap();
        assert_eq!(pair[0], pair[1]);
        assert!(matches!(p.node(pair[1]), Node::List(l) if l.len() == 2));
    }
}
