//! Object arrays (variable-length text, bytes or arrays) in the Arrow-style layout of
//! `../shared/spec/zep0007-strings-draft.md`: a box of n items is n + 1 `i64` offsets into one
//! contiguous data buffer. Item `i` is `data[offsets[i]..offsets[i + 1]]`.

use super::chunk_form::ChunkForm;
use super::orthogonal_io::box_selection;
use super::selected::SelectedChunks;
use super::Array;
use crate::dtype::{ItemForm, ObjectCodec};
use crate::error::{Error, Result};
use crate::selection::Selection;
use crate::strided::{dense_strides, layout_strides, SharedBuffer};
use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// The decoded items of one chunk: the object codec's encoding and each item's byte range.
struct ChunkItems {
    encoded: Vec<u8>,
    items: Vec<Range<usize>>,
}

impl ChunkItems {
    fn item(&self, i: usize) -> &[u8] {
        &self.encoded[self.items[i].clone()]
    }
}

impl Array {
    /// Bytes the items of the box `start`/`count` take: the size of the data buffer
    /// [`Array::read_vlen`] needs (in bytes, whole elements for `vlen-array`).
    pub fn vlen_size(&self, start: &[u64], count: &[u64]) -> Result<u64> {
        self.vlen_selection_size(&Selection::Orthogonal(box_selection(start, count, None)?))
            .map(|(_, bytes)| bytes)
    }

    /// Reads the items of the box `start`/`count` (C order): `offsets` (one more than the
    /// items) receives each item's start in `data` and the end of the last, `data` the items'
    /// bytes back to back (text as UTF-8; array elements in native byte order).
    pub fn read_vlen(
        &self,
        start: &[u64],
        count: &[u64],
        offsets: &mut [i64],
        data: &mut [u8],
    ) -> Result<()> {
        let selection = Selection::Orthogonal(box_selection(start, count, None)?);
        self.read_vlen_selection(&selection, offsets, data)
    }

    /// Writes the items of the box `start`/`count` (C order) from `offsets` (one more than the
    /// items, non-decreasing) and `data` (text as UTF-8, checked; array elements in native byte
    /// order). Partly covered chunks keep their other items.
    pub fn write_vlen(
        &self,
        start: &[u64],
        count: &[u64],
        offsets: &[i64],
        data: &[u8],
    ) -> Result<()> {
        let selection = Selection::Orthogonal(box_selection(start, count, None)?);
        self.write_vlen_selection(&selection, offsets, data)
    }

    /// The number of items a selection of an object array holds and the bytes they take:
    /// the sizes of the offsets (one more than the items) and data buffers
    /// [`Array::read_vlen_selection`] needs.
    pub fn vlen_selection_size(&self, selection: &Selection) -> Result<(u64, u64)> {
        let (codec, selected) = self.object_selection(selection)?;
        let bytes = self.item_lengths(codec, &selected)?.iter().sum();
        Ok((selected.len(), bytes))
    }

    /// Reads the items of any selection of an object array, in the selection's result order
    /// (C order of its shape; points and masks one item per point): `offsets` (one more than
    /// the items) receives each item's start in `data` and the end of the last, `data` the
    /// items' bytes back to back (text as UTF-8; array elements in native byte order).
    pub fn read_vlen_selection(
        &self,
        selection: &Selection,
        offsets: &mut [i64],
        data: &mut [u8],
    ) -> Result<()> {
        let (codec, selected) = self.object_selection(selection)?;
        let n = selected.len() as usize;
        if offsets.len() != n + 1 {
            return Err(Error::BufferSize(format!(
                "{n} items need {} offsets, got {}",
                n + 1,
                offsets.len()
            )));
        }
        let mut starts = Vec::with_capacity(n + 1);
        starts.push(0i64);
        for len in self.item_lengths(codec, &selected)? {
            starts.push(starts[starts.len() - 1] + len as i64);
        }
        let total = starts[n] as usize;
        if total > data.len() {
            return Err(Error::BufferSize(format!(
                "the items take {total} bytes, the data buffer has {}",
                data.len()
            )));
        }
        let out = SharedBuffer::new(data);
        let swap = codec.byte_swap();
        let elem = codec.element_size();
        self.for_each_stored_chunk(&selected, |i, raw| {
            let form = self.form(&selected.coords(i))?;
            let items = self.items_of(codec, &form, &selected.coords(i), raw)?;
            for (chunk_index, out_index) in selected.element_pairs(i, &self.item_strides(&form)) {
                let (from, to) = (starts[out_index] as usize, starts[out_index + 1] as usize);
                // SAFETY: each output element owns its own byte range of `data`; a point
                // repeated is written twice with the same item.
                let target = unsafe { out.slice_mut(from..to)? };
                target.copy_from_slice(items.item(chunk_index));
                target.chunks_exact_mut(elem).for_each(|e| swap.apply(e));
            }
            Ok(())
        })?;
        offsets.copy_from_slice(&starts);
        Ok(())
    }

    /// Writes the items of any selection of an object array from `offsets` (one more than
    /// the items, non-decreasing) and `data` (text as UTF-8, checked; array elements in native
    /// byte order), in the order [`Array::read_vlen_selection`] reads them. Partly covered
    /// chunks keep their other items; where an element is selected twice, the last item wins.
    pub fn write_vlen_selection(
        &self,
        selection: &Selection,
        offsets: &[i64],
        data: &[u8],
    ) -> Result<()> {
        self.check_writable()?;
        let (codec, selected) = self.object_selection(selection)?;
        let n = selected.len() as usize;
        let items = caller_items(codec, n, offsets, data)?;
        let swap = codec.byte_swap();
        let elem = codec.element_size();
        let fill = self.fill_item(codec)?;
        let covers = |i| selected.covers_chunk(i);
        self.update_each_stored_chunk(&selected, covers, |i, old| {
            let form = self.form(&selected.coords(i))?;
            let strides = self.item_strides(&form);
            let existing = match covers(i) {
                true => None,
                false => Some(self.items_of(codec, &form, &selected.coords(i), old)?),
            };
            let mut chunk_items: Vec<Cow<[u8]>> = (0..chunk_elements(&form))
                .map(|i| Cow::Borrowed(existing.as_ref().map_or(fill.as_slice(), |e| e.item(i))))
                .collect();
            for (chunk_index, out_index) in selected.element_pairs(i, &strides) {
                let item = items[out_index];
                chunk_items[chunk_index] = if swap.is_none() {
                    Cow::Borrowed(item)
                } else {
                    let mut owned = item.to_vec();
                    owned.chunks_exact_mut(elem).for_each(|e| swap.apply(e));
                    Cow::Owned(owned)
                };
            }
            if !self.write_empty_chunks()
                && self.metadata.fill_value.0.is_some()
                && chunk_items.iter().all(|i| **i == *fill)
            {
                return Ok(None);
            }
            let mut encoded = Vec::new();
            let items = chunk_items.iter().map(|i| &**i);
            let coords = selected.coords(i);
            let name = self.chunk_name(&coords);
            codec
                .encode(items, &form.shape, self.item_form(), &mut encoded)
                .map_err(|e| e.context(name.to_string()))?;
            self.encode_chunk(&form, &encoded, &name).map(Some)
        })
    }

    fn object_selection(&self, selection: &Selection) -> Result<(&ObjectCodec, SelectedChunks)> {
        let codec = self.object.as_ref().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "array {:?} of {} has fixed-size values: read and write it with the region calls",
                self.path,
                self.metadata.dtype.typestr()
            ))
        })?;
        Ok((codec, self.select(selection)?))
    }

    /// Sets whether the items of a `json2` or `msgpack2` array are read and written as JSON
    /// text (a string item is then `"quoted"`, and numbers, lists, objects, booleans and `null`
    /// pass too) or, as by default, as strings (their UTF-8 text; other items are
    /// [`Error::Unsupported`]). `pickle` arrays pass only JSON text (off is refused). Other
    /// arrays: [`Error::InvalidArgument`].
    pub fn set_json_items(&self, on: bool) -> Result<()> {
        match &self.object {
            Some(codec) if codec.items_only_json() && !on => Err(Error::InvalidArgument(format!(
                "array {:?}: the items of a pickle array pass only as JSON text",
                self.path
            ))),
            Some(codec) if codec.items_only_json() => Ok(()),
            Some(codec) if codec.nests_items() => {
                self.json_items.store(on, Ordering::Relaxed);
                Ok(())
            }
            _ => Err(Error::InvalidArgument(format!(
                "array {:?}: only json2 and msgpack2 arrays have items of JSON types",
                self.path
            ))),
        }
    }

    /// Whether the items of a `json2`/`msgpack2` array pass as JSON text
    /// ([`Array::set_json_items`]); always for `pickle` arrays.
    pub fn json_items(&self) -> bool {
        self.json_items.load(Ordering::Relaxed)
            || self
                .object
                .as_ref()
                .is_some_and(ObjectCodec::items_only_json)
    }

    fn item_form(&self) -> ItemForm {
        match self.json_items() {
            true => ItemForm::Json,
            false => ItemForm::Strings,
        }
    }

    /// The stored item of never-written elements.
    pub(super) fn fill_item(&self, codec: &ObjectCodec) -> Result<Vec<u8>> {
        let fill: serde_json::Value = self.metadata.fill_value.to_json(&self.metadata.dtype);
        codec.fill_item(&fill, self.item_form())
    }

    /// Strides (in items) numbering the items of a chunk of `form` as the object codec
    /// stores them.
    fn item_strides(&self, form: &ChunkForm) -> Vec<usize> {
        // The vlen codecs keep the chunk's memory order; json2 and msgpack2 nest in C order.
        if self
            .object
            .as_ref()
            .is_some_and(ObjectCodec::items_in_c_order)
        {
            dense_strides(&form.shape, 1, false)
        } else {
            layout_strides(&form.shape, 1, &self.layout)
        }
    }

    /// The items of the chunk at `coords` from its stored bytes; a chunk never written
    /// (`None`) holds the fill item everywhere.
    fn items_of(
        &self,
        codec: &ObjectCodec,
        form: &ChunkForm,
        coords: &[u64],
        raw: Option<&[u8]>,
    ) -> Result<ChunkItems> {
        let Some(raw) = raw else {
            let encoded = self.fill_item(codec)?;
            return Ok(ChunkItems {
                items: vec![0..encoded.len(); chunk_elements(form)],
                encoded,
            });
        };
        let name = self.chunk_name(coords);
        let decoded = self.decode_unsized(form, raw, &name)?;
        let (encoded, items) = codec
            .decode(decoded, &form.shape, self.item_form())
            .map_err(|e| e.context(name))?;
        Ok(ChunkItems { encoded, items })
    }

    /// Each result element's item length in bytes.
    fn item_lengths(&self, codec: &ObjectCodec, selected: &SelectedChunks) -> Result<Vec<u64>> {
        let n = usize::try_from(selected.len())
            .map_err(|_| Error::TooLarge(format!("{} items", selected.len())))?;
        let mut lengths = Vec::new();
        lengths.try_reserve_exact(n).map_err(|_| {
            Error::TooLarge(format!("the lengths of {n} items do not fit in memory"))
        })?;
        lengths.resize(n, 0u64);
        let lengths = Mutex::new(lengths);
        self.for_each_stored_chunk(selected, |i, raw| {
            let form = self.form(&selected.coords(i))?;
            let items = self.items_of(codec, &form, &selected.coords(i), raw)?;
            let found: Vec<(usize, u64)> = selected
                .element_pairs(i, &self.item_strides(&form))
                .into_iter()
                .map(|(c, o)| (o, items.items[c].len() as u64))
                .collect();
            let mut lengths = lengths.lock().unwrap_or_else(|p| p.into_inner());
            found.into_iter().for_each(|(o, len)| lengths[o] = len);
            Ok(())
        })?;
        Ok(lengths.into_inner().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Elements in a chunk of `form`.
fn chunk_elements(form: &ChunkForm) -> usize {
    form.shape.iter().product::<u64>() as usize
}

/// The caller's items, checked: offsets within `data` and non-decreasing, text valid UTF-8,
/// array items whole elements.
fn caller_items<'a>(
    codec: &ObjectCodec,
    n: usize,
    offsets: &[i64],
    data: &'a [u8],
) -> Result<Vec<&'a [u8]>> {
    if offsets.len() != n + 1 {
        return Err(Error::BufferSize(format!(
            "{n} items need {} offsets, got {}",
            n + 1,
            offsets.len()
        )));
    }
    (0..n)
        .map(|i| {
            let (a, b) = (offsets[i], offsets[i + 1]);
            if a < 0 || b < a || b as u64 > data.len() as u64 {
                return Err(Error::InvalidArgument(format!(
                    "item {i}: offsets {a}..{b} are not a range of the {}-byte data buffer",
                    data.len()
                )));
            }
            let item = &data[a as usize..b as usize];
            if codec.holds_text() && std::str::from_utf8(item).is_err() {
                return Err(Error::InvalidArgument(format!(
                    "item {i} is not valid UTF-8"
                )));
            }
            if !item.len().is_multiple_of(codec.element_size()) {
                return Err(Error::InvalidArgument(format!(
                    "item {i} has {} bytes, not whole {}-byte elements",
                    item.len(),
                    codec.element_size()
                )));
            }
            Ok(item)
        })
        .collect()
}
