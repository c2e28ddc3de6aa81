//! What this build of libzarr reads and writes (`zarr_features`, `zarr_has_feature`, `zarr
//! version`): Zarr formats, stores, codecs, filters and object codecs, listed from the tables
//! the engine itself dispatches on.

use crate::codec::{v3_codec_names, BLOSC_COMPRESSORS, COMPRESSOR_IDS, FILTER_IDS};
use crate::dtype::v3::V3_DATA_TYPES;
use crate::dtype::OBJECT_CODEC_IDS;
use crate::error::{Error, Result};
use crate::metadata::{CHUNK_GRIDS, CHUNK_KEY_ENCODINGS};
use crate::store::Backend;
use serde_json::{json, Value};

/// The kinds of feature and the member of [`features`] listing each.
const KINDS: [(&str, &str); 10] = [
    ("zarr_format", "zarr_formats"),
    ("store", "stores"),
    ("compressor", "compressors"),
    ("blosc_compressor", "blosc_compressors"),
    ("filter", "filters"),
    ("object_codec", "object_codecs"),
    ("codec", "codecs"),
    ("chunk_grid", "chunk_grids"),
    ("chunk_key_encoding", "chunk_key_encodings"),
    ("data_type", "data_types"),
];

/// The features as a JSON object: `version`, `zarr_formats` (2, 3), `stores` (the kinds of
/// location `zarr_store_open` takes in this build: cargo features leave some out), `compressors` and `filters` (numcodecs ids of Zarr v2;
/// the filters include the compressors, which a filter list may name too),
/// `blosc_compressors` (blosc's `cname`s), `object_codecs` (of `|O` arrays), `codecs` (the
/// names of Zarr v3 codecs, `numcodecs.*` included), `chunk_grids`, `chunk_key_encodings` and
/// `data_types` (the Zarr v3 names; `r*` stands for every raw-bits type).
pub fn features() -> Value {
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "zarr_formats": [2, 3],
        "stores": Backend::ALL
            .into_iter()
            .filter(|b| b.built())
            .map(Backend::name)
            .collect::<Vec<_>>(),
        "compressors": COMPRESSOR_IDS,
        "blosc_compressors": BLOSC_COMPRESSORS.map(|(cname, _)| cname),
        "filters": FILTER_IDS.iter().chain(&COMPRESSOR_IDS).collect::<Vec<_>>(),
        "object_codecs": OBJECT_CODEC_IDS,
        "codecs": v3_codec_names(),
        "chunk_grids": CHUNK_GRIDS,
        "chunk_key_encodings": CHUNK_KEY_ENCODINGS,
        "data_types": V3_DATA_TYPES,
    })
}

/// Whether this build has the feature `name`, written `KIND:NAME` (`"codec:sharding_indexed"`,
/// `"store:s3"`, `"zarr_format:3"`; the kinds are the singulars of [`features`]' lists). An
/// unknown kind, or a name without one, is [`Error::InvalidArgument`] listing the kinds.
pub fn has_feature(name: &str) -> Result<bool> {
    let kinds = || KINDS.map(|(kind, _)| kind).join(", ");
    let (kind, value) = name.split_once(':').ok_or_else(|| {
        Error::InvalidArgument(format!(
            "feature {name:?} is not KIND:NAME (kinds: {})",
            kinds()
        ))
    })?;
    let (_, list) = KINDS
        .iter()
        .find(|(known, _)| *known == kind)
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "feature {name:?}: no kind {kind:?} (kinds: {})",
                kinds()
            ))
        })?;
    let features = features();
    let listed = features[list].as_array().into_iter().flatten();
    Ok(listed
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        .any(|v| v == value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{compressor_from_config, CodecContext, CodecPipeline};
    use crate::dtype::{DataType, ObjectCodec};

    /// Every listed v2 compressor, filter and object codec is one the engine builds (from its
    /// id alone, or refused only for a missing parameter), and a name not listed is refused as
    /// unsupported: the lists are the engine's.
    #[test]
    fn the_lists_are_what_the_engine_builds() {
        let unsupported = |r: &Result<()>| matches!(r, Err(Error::Unsupported(_)));
        let dtype = DataType::parse(&json!("<f4")).unwrap();
        let compressor = |id: &str| {
            compressor_from_config(&json!({ "id": id }), CodecContext::of_array(&dtype)).map(drop)
        };
        let filter =
            |id: &str| CodecPipeline::new(Some(&[json!({ "id": id })][..]), None, &dtype).map(drop);
        for id in COMPRESSOR_IDS {
            assert!(compressor(id).is_ok(), "compressor {id}");
        }
        for id in features()["filters"].as_array().unwrap() {
            let id = id.as_str().unwrap();
            assert!(!unsupported(&filter(id)), "filter {id}: {:?}", filter(id));
        }
        for (cname, _) in BLOSC_COMPRESSORS {
            let config = json!({"id": "blosc", "cname": cname});
            assert!(compressor_from_config(&config, CodecContext::items(4)).is_ok());
        }
        for id in OBJECT_CODEC_IDS {
            let dtype = if id == "vlen-array" { "<i4" } else { "|O" };
            let codec =
                ObjectCodec::from_config(&json!({ "id": id, "dtype": dtype, "labels": [] }));
            assert!(matches!(codec, Ok(Some(_))), "object codec {id}: {codec:?}");
        }
        assert!(unsupported(&compressor("snappy")));
        assert!(unsupported(&filter("jpeg2k")));
    }

    #[test]
    fn has_feature_answers_from_the_lists_and_refuses_unknown_kinds() {
        for name in [
            "zarr_format:2",
            "zarr_format:3",
            "store:directory",
            "store:memory",
            "compressor:blosc",
            "blosc_compressor:zstd",
            "filter:delta",
            "filter:zlib",
            "object_codec:vlen-utf8",
            "codec:sharding_indexed",
            "codec:numcodecs.zlib",
            "chunk_grid:rectilinear",
            "chunk_key_encoding:v2",
            "data_type:numpy.datetime64",
        ] {
            assert!(has_feature(name).unwrap(), "{name}");
        }
        for name in [
            "zarr_format:4",
            "store:ftp",
            "compressor:snappy",
            "filter:n5_wrapper",
            "codec:numcodecs.jpeg2k",
            "chunk_grid:rectangular",
            "data_type:float8_e4m3fn",
        ] {
            assert!(!has_feature(name).unwrap(), "{name}");
        }
        assert_eq!(
            has_feature("blosc_compressor:snappy").unwrap(),
            cfg!(feature = "blosc-snappy")
        );
        // Stores are listed as built (cargo features).
        for backend in crate::store::Backend::ALL {
            let name = format!("store:{}", backend.name());
            assert_eq!(has_feature(&name).unwrap(), backend.built(), "{name}");
        }
        assert_eq!(has_feature("store:zip").unwrap(), cfg!(feature = "zip"));
        for name in ["blosc", "colour:red", ""] {
            match has_feature(name) {
                Err(Error::InvalidArgument(m)) => assert!(m.contains("codec, "), "{m}"),
                other => panic!("{name:?}: {other:?}"),
            }
        }
    }
}
