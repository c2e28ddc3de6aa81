//! The form of the chunks of one shape: their decoded size and layout in memory, and the codec
//! pipeline that encodes them. The chunks of a regular grid share one form; a rectilinear
//! grid's chunks have one per shape, built when a chunk of that shape is first touched.

use super::shard_io::ShardLayout;
use crate::codec::{ChunkCodecs, CodecPipeline};
use crate::dtype::v3::ObjectKind;
use crate::dtype::DataType;
use crate::error::{Error, Result};
use crate::metadata::ChunkGrid;
use crate::strided::{is_c_contiguous, layout_strides};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How many chunk shapes of a rectilinear grid keep their form between calls.
const KEEP_FORMS: usize = 256;

/// The chunks of one shape.
#[derive(Debug)]
pub(super) struct ChunkForm {
    /// The decoded chunk's shape.
    pub shape: Vec<u64>,
    /// Bytes of one decoded chunk.
    pub nbytes: usize,
    /// Byte strides of a decoded chunk along each dimension.
    pub strides: Vec<usize>,
    /// Whether decoded chunks are laid out in C order.
    pub is_c_order: bool,
    /// The byte steps of a chunk (of an inner chunk for sharded arrays).
    pub pipeline: CodecPipeline,
}

impl ChunkForm {
    /// The form of chunks of `shape` holding `item_size`-byte elements laid out as `layout`
    /// says, encoded by `pipeline`.
    pub fn new(
        shape: Vec<u64>,
        item_size: usize,
        layout: &[usize],
        pipeline: CodecPipeline,
    ) -> Result<ChunkForm> {
        let nbytes = shape
            .iter()
            .try_fold(item_size as u64, |acc, &c| acc.checked_mul(c))
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| {
                Error::Overflow(format!(
                    "chunks {shape:?} of {item_size}-byte items are too large"
                ))
            })?;
        let strides = layout_strides(&shape, item_size, layout);
        let is_c_order = is_c_contiguous(&shape, &strides, item_size);
        Ok(ChunkForm {
            shape,
            nbytes,
            strides,
            is_c_order,
            pipeline,
        })
    }
}

/// What builds the pipeline of another chunk shape: the v3 codecs as stored.
#[derive(Debug, Clone)]
struct Recipe {
    codecs: Vec<Value>,
    dtype: DataType,
    object: Option<ObjectKind>,
    layout: Vec<usize>,
}

/// The forms of an array's chunks, by the grid the engine works in, and for a sharded array
/// how its shards hold them.
#[derive(Debug)]
pub(super) struct ChunkForms {
    grid: ChunkGrid,
    sharding: Option<ShardLayout>,
    /// The one form of a regular grid.
    regular: Option<Arc<ChunkForm>>,
    /// For a grid of unequal chunks: how to build a form, and those built.
    recipe: Option<Recipe>,
    built: Mutex<HashMap<Vec<u64>, Arc<ChunkForm>>>,
    /// Bytes of the largest decoded chunk.
    max_nbytes: usize,
}

impl ChunkForms {
    /// The one form of the chunks of a regular `grid`, which for a sharded array are the
    /// innermost chunks of the shards `sharding` lays out.
    pub fn regular(grid: ChunkGrid, form: ChunkForm, sharding: Option<ShardLayout>) -> ChunkForms {
        ChunkForms {
            grid,
            sharding,
            max_nbytes: form.nbytes,
            regular: Some(Arc::new(form)),
            recipe: None,
            built: Default::default(),
        }
    }

    /// The forms of a rectilinear `grid` of v3 chunks encoded by `codecs`, checked by
    /// building the form of its largest chunk shape.
    pub fn rectilinear(
        grid: ChunkGrid,
        codecs: &[Value],
        dtype: &DataType,
        object: Option<ObjectKind>,
        layout: &[usize],
    ) -> Result<ChunkForms> {
        let mut forms = ChunkForms {
            max_nbytes: 0,
            grid,
            sharding: None,
            regular: None,
            recipe: Some(Recipe {
                codecs: codecs.to_vec(),
                dtype: dtype.clone(),
                object,
                layout: layout.to_vec(),
            }),
            built: Default::default(),
        };
        forms.max_nbytes = forms.build(forms.grid.max_chunk_shape())?.nbytes;
        Ok(forms)
    }

    /// The same forms for the array's grid lengthened to `array_grid` (its chunks keep their
    /// shapes): the grid of the chunks, or of a sharded array's shards.
    pub fn with_array_grid(&self, array_grid: ChunkGrid) -> ChunkForms {
        let (grid, sharding) = match &self.sharding {
            Some(layout) => (self.grid.clone(), Some(layout.with_grid(array_grid))),
            None => (array_grid, None),
        };
        ChunkForms {
            grid,
            sharding,
            regular: self.regular.clone(),
            recipe: self.recipe.clone(),
            built: Mutex::new(self.built.lock().unwrap_or_else(|p| p.into_inner()).clone()),
            max_nbytes: self.max_nbytes,
        }
    }

    /// The array's grid: of its chunks, or of a sharded array's shards.
    pub fn array_grid(&self) -> &ChunkGrid {
        self.sharding.as_ref().map_or(&self.grid, ShardLayout::grid)
    }

    /// How a sharded array's shards hold its chunks.
    pub fn shard_layout(&self) -> &ShardLayout {
        self.sharding.as_ref().expect("a sharded array")
    }

    /// The layout of a sharded array's shards (`None` for an array without sharding).
    pub fn sharding(&self) -> Option<&ShardLayout> {
        self.sharding.as_ref()
    }

    /// The grid of the chunks the engine works in.
    pub fn grid(&self) -> &ChunkGrid {
        &self.grid
    }

    /// Bytes of the largest decoded chunk.
    pub fn max_nbytes(&self) -> usize {
        self.max_nbytes
    }

    /// The form of a regular grid's chunks (`None` for chunks of unequal shapes).
    pub fn regular_form(&self) -> Option<&Arc<ChunkForm>> {
        self.regular.as_ref()
    }

    /// The form of the chunk at grid position `coords`.
    pub fn of(&self, coords: &[u64]) -> Result<Arc<ChunkForm>> {
        match &self.regular {
            Some(form) => Ok(form.clone()),
            None => self.build(self.grid.chunk_shape(coords)),
        }
    }

    fn build(&self, shape: Vec<u64>) -> Result<Arc<ChunkForm>> {
        let recipe = self
            .recipe
            .as_ref()
            .expect("a rectilinear grid has a recipe");
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(form) = built.get(&shape) {
            return Ok(form.clone());
        }
        let codecs = ChunkCodecs::v3(&recipe.codecs, &recipe.dtype, recipe.object, &shape)?;
        let form = Arc::new(ChunkForm::new(
            shape.clone(),
            recipe.dtype.size,
            &recipe.layout,
            codecs.pipeline,
        )?);
        if built.len() >= KEEP_FORMS {
            built.clear();
        }
        built.insert(shape, form.clone());
        Ok(form)
    }
}
