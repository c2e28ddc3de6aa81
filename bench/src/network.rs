//! The network floor of the remote benchmark: the fewest requests a read needs, sent through
//! object_store (the HTTP client libzarr uses) with as many in flight as libzarr keeps (32 for
//! a whole read, all of a box's at once), answers received and dropped: no Zarr library, no
//! decoding. Opening an array is one request for its metadata document.

use crate::subject::{chunks_touched, Box3, Result, Sink, Subject};
use futures::{StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;

/// Requests in flight for a whole read (libzarr's default `requests_in_flight`).
const IN_FLIGHT: usize = 32;

pub struct NetworkFloor {
    endpoint: RefCell<Option<String>>,
    runtime: tokio::runtime::Runtime,
}

impl NetworkFloor {
    pub fn new() -> NetworkFloor {
        NetworkFloor {
            endpoint: RefCell::default(),
            runtime: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a tokio runtime"),
        }
    }
}

/// What the requests of a read need to know of an array.
struct Layout {
    store: Box<dyn ObjectStore>,
    /// The array's prefix in the bucket.
    prefix: String,
    shape: Vec<u64>,
    /// The chunk grid's chunks: v2 chunks, or v3 shards.
    chunks: Vec<u64>,
    /// For a v3 sharded array: the inner chunks' shape.
    inner: Option<Vec<u64>>,
}

impl Layout {
    /// The key of grid chunk `index`.
    fn key(&self, index: &[u64]) -> ObjectPath {
        let parts: Vec<String> = index.iter().map(u64::to_string).collect();
        match self.inner {
            None => ObjectPath::from(format!("{}/{}", self.prefix, parts.join("."))),
            Some(_) => ObjectPath::from(format!("{}/c/{}", self.prefix, parts.join("/"))),
        }
    }
}

/// Runs `requests`, [`IN_FLIGHT`] at once: the bytes they fetched in all.
async fn total(requests: impl Iterator<Item = impl Future<Output = Result<u64>>>) -> Result<u64> {
    futures::stream::iter(requests)
        .buffer_unordered(IN_FLIGHT)
        .try_fold(0, |sum, n| async move { Ok(sum + n) })
        .await
}

/// Fetches `path` (`range`: part of it) and drops the bytes; returns how many there were.
async fn fetch(store: &dyn ObjectStore, path: &ObjectPath, range: Option<GetRange>) -> Result<u64> {
    let options = GetOptions {
        range,
        ..Default::default()
    };
    Ok(store.get_opts(path, options).await?.bytes().await?.len() as u64)
}

impl NetworkFloor {
    /// Opens the array at `url` (`s3://bucket/prefix`): one request for its `.zarray`, else
    /// its `zarr.json` (v2 then v3, as the benchmark's variants are known to be one or the other).
    async fn open(&self, url: &str) -> Result<Layout> {
        let rest = url.strip_prefix("s3://").ok_or("not an s3:// URL")?;
        let (bucket, prefix) = rest.split_once('/').ok_or("no prefix")?;
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        if let Some(endpoint) = self.endpoint.borrow().as_deref() {
            builder = builder.with_endpoint(endpoint).with_allow_http(true);
        }
        let store: Box<dyn ObjectStore> = Box::new(builder.build()?);
        let get = |name: &str| {
            let path = ObjectPath::from(format!("{prefix}/{name}"));
            let store = &store;
            async move { store.get(&path).await?.bytes().await }
        };
        let (doc, v3): (Value, bool) = match get(".zarray").await {
            Ok(bytes) => (serde_json::from_slice(&bytes)?, false),
            Err(_) => (serde_json::from_slice(&get("zarr.json").await?)?, true),
        };
        let dims = |v: &Value| -> Result<Vec<u64>> {
            v.as_array()
                .and_then(|a| a.iter().map(Value::as_u64).collect())
                .ok_or_else(|| format!("no integer list in {doc}").into())
        };
        let shape = dims(&doc["shape"])?;
        let (chunks, inner) = match v3 {
            false => (dims(&doc["chunks"])?, None),
            true => {
                let sharding = &doc["codecs"][0]["configuration"]["chunk_shape"];
                let grid = dims(&doc["chunk_grid"]["configuration"]["chunk_shape"])?;
                (grid, Some(dims(sharding)?))
            }
        };
        Ok(Layout {
            store,
            prefix: prefix.to_string(),
            shape,
            chunks,
            inner,
        })
    }

    /// Fetches the parts of the shard at `shard` (grid index) that hold the inner chunks the
    /// box touches: its index (at the end: 16 bytes per inner chunk and a CRC-32C), then the
    /// runs of those chunks that lie back to back, all at once.
    async fn shard_parts(&self, layout: &Layout, shard: &[u64], b: &Box3<'_>) -> Result<u64> {
        let inner = layout.inner.as_ref().expect("sharded");
        let per_shard: Vec<u64> = layout
            .chunks
            .iter()
            .zip(inner)
            .map(|(s, c)| s / c)
            .collect();
        let count: u64 = per_shard.iter().product();
        let path = layout.key(shard);
        let index_len = count * 16 + 4;
        let options = GetOptions {
            range: Some(GetRange::Suffix(index_len)),
            ..Default::default()
        };
        let index = layout.store.get_opts(&path, options).await?.bytes().await?;
        let entry = |i: u64| -> (u64, u64) {
            let at = (i * 16) as usize;
            let word = |k: usize| u64::from_le_bytes(index[at + k..at + k + 8].try_into().unwrap());
            (word(0), word(8))
        };
        // The inner chunks of this shard the box touches, by their place in the index.
        let origin: Vec<u64> = shard
            .iter()
            .zip(&layout.chunks)
            .map(|(i, s)| i * s)
            .collect();
        let mut ranges = BTreeMap::new();
        for chunk in chunks_touched(b.start, b.count, inner) {
            // `first`: the chunk's first element, inside this shard or not.
            let first: Vec<u64> = (0..chunk.len()).map(|d| chunk[d] * inner[d]).collect();
            if first
                .iter()
                .zip(&origin)
                .zip(&layout.chunks)
                .any(|((l, o), s)| l < o || *l >= o + s)
            {
                continue;
            }
            let place = (0..first.len()).fold(0, |p, d| {
                p * per_shard[d] + (first[d] - origin[d]) / inner[d]
            });
            let (offset, n) = entry(place);
            if offset != u64::MAX {
                ranges.insert(offset, offset + n);
            }
        }
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for (start, end) in ranges {
            match runs.last_mut() {
                Some(last) if last.1 == start => last.1 = end,
                _ => runs.push((start, end)),
            }
        }
        let fetched = total(
            runs.into_iter()
                .map(|(s, e)| fetch(&*layout.store, &path, Some(GetRange::Bounded(s..e)))),
        )
        .await?;
        Ok(index.len() as u64 + fetched)
    }
}

impl Subject for NetworkFloor {
    fn version(&self) -> String {
        "object_store 0.14".into()
    }

    fn threads(&self) -> String {
        format!("tokio, 2 threads; {IN_FLIGHT} requests in flight for whole reads")
    }

    fn use_store_options(&self, options: &Value) -> Result<()> {
        *self.endpoint.borrow_mut() = options["endpoint"].as_str().map(String::from);
        Ok(())
    }

    /// Fetches every chunk (or shard) object whole.
    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        self.runtime.block_on(async {
            let layout = self.open(path).await?;
            let zero = vec![0; layout.shape.len()];
            let keys = chunks_touched(&zero, &layout.shape, &layout.chunks);
            let bytes = total(keys.into_iter().map(|index| {
                let path = layout.key(&index);
                let store = &*layout.store;
                async move { fetch(store, &path, None).await }
            }))
            .await?;
            sink.take(&bytes.to_le_bytes());
            Ok(())
        })
    }

    /// For each box in turn: the chunks it touches fetched whole (v2), or for each shard it
    /// touches the index and then the inner chunks (v3), every shard at once.
    fn read_boxes(&self, path: &str, boxes: &[Box3], sink: &mut Sink) -> Result<()> {
        self.runtime.block_on(async {
            let layout = self.open(path).await?;
            for b in boxes {
                let touched = chunks_touched(b.start, b.count, &layout.chunks);
                let bytes = total(touched.into_iter().map(|index| {
                    let layout = &layout;
                    async move {
                        match layout.inner {
                            None => fetch(&*layout.store, &layout.key(&index), None).await,
                            Some(_) => self.shard_parts(layout, &index, b).await,
                        }
                    }
                }))
                .await?;
                sink.take(&bytes.to_le_bytes());
            }
            Ok(())
        })
    }
}
