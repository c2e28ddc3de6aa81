//! numcodecs `LZMA`: an .xz (format 1), legacy .lzma (format 2) or raw (format 3) stream, as
//! Python's `lzma.compress` writes it. A raw stream has no header: its filter chain (delta,
//! the branch filters, LZMA1 or LZMA2 with their options) comes from the configuration's
//! `filters`, for decoding as for encoding.

use super::config::Config;
use super::stream::{decode_growing, decode_stream, finish, Sink, StreamDecoder};
use super::Codec;
use crate::error::{Error, Result};
use liblzma::stream::{Action, Check, Filters, LzmaOptions, MatchFinder, Mode, Status, Stream};
use serde_json::{json, Map, Value};

/// Python's `lzma.FORMAT_AUTO`, `FORMAT_XZ`, `FORMAT_ALONE` and `FORMAT_RAW`.
const FORMAT_AUTO: i64 = 0;
const FORMAT_XZ: i64 = 1;
const FORMAT_ALONE: i64 = 2;
const FORMAT_RAW: i64 = 3;

/// Python's `lzma.PRESET_EXTREME` flag and `PRESET_DEFAULT` level.
const PRESET_EXTREME: i64 = 0x8000_0000;
const PRESET_DEFAULT: u32 = 6;

/// Filter ids (Python's `lzma.FILTER_*`).
const FILTER_LZMA1: u64 = 0x4000_0000_0000_0001;
const FILTER_LZMA2: u64 = 0x21;
const FILTER_DELTA: u64 = 0x03;

/// The decoder's memory limit is the larger of the output size and this dictionary size
/// (presets 8 and 9 use 64 MiB), plus the decoder's own state. A header asking for a larger
/// dictionary is refused rather than allocated. liblzma allocates the dictionary with
/// `malloc` and only touches as much of it as it writes, which is at most the output size.
const DICT_ALLOWANCE: u64 = 64 << 20;
const DECODER_OVERHEAD: u64 = 1 << 20;

/// The numcodecs `LZMA` compressor:
/// `{"id": "lzma", "format": 1, "check": -1, "preset": null, "filters": null}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lzma {
    format: i64,
    check: i64,
    preset: Option<i64>,
    /// Kept as written: numcodecs stores the filter dicts verbatim.
    filters: Option<Vec<Value>>,
}

impl Lzma {
    /// Reads `format` (0 = auto-detect, decode only; 1 = xz, the default; 2 = lzma-alone;
    /// 3 = raw), `check` (-1 = the format's default, 0, 1, 4 or 10), `preset` (null = 6, or
    /// 0..=9 optionally with `PRESET_EXTREME`) and `filters` (null or a list of filter
    /// objects, checked when encoding, and for raw streams here, since decoding needs them).
    /// Other keys are ignored.
    pub fn from_config(obj: &Map<String, Value>) -> Result<Self> {
        let cfg = Config::new(obj, "lzma");
        let format = cfg.int("format", FORMAT_XZ, FORMAT_AUTO..=FORMAT_RAW)?;
        let check = cfg.int("check", -1, -1..=10)?;
        if check_kind(check).is_none() {
            return Err(cfg.invalid("check", "one of -1, 0, 1, 4, 10"));
        }
        let preset = cfg.opt_int("preset", 0..=PRESET_EXTREME | 9)?;
        if preset.is_some_and(|p| p & !PRESET_EXTREME > 9) {
            return Err(cfg.invalid("preset", "null or 0..=9, optionally | PRESET_EXTREME"));
        }
        let filters = match cfg.opt_value("filters") {
            None => None,
            Some(Value::Array(list)) if list.iter().all(|f| filter_id(f).is_some()) => {
                Some(list.clone())
            }
            Some(_) => {
                return Err(cfg.invalid(
                    "filters",
                    "null or a list of objects with an integer \"id\"",
                ))
            }
        };
        if format == FORMAT_RAW {
            // A raw stream is decoded with the chain it was encoded with: check it now.
            let Some(list) = filters.as_deref() else {
                return Err(cfg.error(
                    "format 3 (raw) needs \"filters\": a raw stream does not name its filter chain",
                ));
            };
            filter_chain(list, None)?;
        }
        Ok(Lzma {
            format,
            check,
            preset,
            filters,
        })
    }

    /// The liblzma encoder for this configuration, refusing the combinations Python's
    /// `lzma.compress` refuses.
    fn encoder(&self) -> Result<Stream> {
        let invalid = |msg: &str| Error::InvalidMetadata(format!("lzma compressor: {msg}"));
        if self.preset.is_some() && self.filters.is_some() {
            return Err(invalid("\"preset\" and \"filters\" cannot both be set"));
        }
        let preset = self.preset.map_or(PRESET_DEFAULT, |p| p as u32);
        let check = check_kind(self.check).unwrap_or(Check::Crc64);
        let stream = match (self.format, self.filters.as_deref()) {
            (FORMAT_XZ, None) => Stream::new_easy_encoder(preset, check),
            (FORMAT_XZ, Some(filters)) => {
                Stream::new_stream_encoder(&filter_chain(filters, None)?, check)
            }
            (FORMAT_RAW, _) if self.check != -1 => {
                return Err(invalid("integrity checks need format 1 (xz)"))
            }
            (FORMAT_RAW, _) if self.preset.is_some() => {
                return Err(invalid("format 3 (raw) takes \"filters\", not \"preset\""))
            }
            (FORMAT_RAW, Some(filters)) => Stream::new_raw_encoder(&filter_chain(filters, None)?),
            (FORMAT_ALONE, _) if self.check > 0 => {
                return Err(invalid("integrity checks need format 1 (xz)"))
            }
            (FORMAT_ALONE, None) => Stream::new_lzma_encoder(&preset_options(preset)?),
            (FORMAT_ALONE, Some([f])) if filter_id(f) == Some(FILTER_LZMA1) => {
                Stream::new_lzma_encoder(&lzma_options(f, None)?)
            }
            (FORMAT_ALONE, Some(_)) => return Err(invalid("format 2 needs one LZMA1 filter")),
            _ => return Err(invalid("format 0 (auto-detect) can only decode")),
        };
        stream.map_err(|e| invalid(&format!("liblzma refuses the settings: {e}")))
    }
}

impl Codec for Lzma {
    fn id(&self) -> &'static str {
        "lzma"
    }

    fn config(&self) -> Value {
        json!({
            "id": "lzma",
            "format": self.format,
            "check": self.check,
            "preset": self.preset,
            "filters": self.filters,
        })
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let mut enc = self.encoder()?;
        let mut out = Vec::with_capacity(input.len() / 2 + 64);
        loop {
            if out.len() == out.capacity() {
                out.reserve(out.capacity());
            }
            let used = enc.total_in() as usize;
            match enc.process_vec(&input[used..], &mut out, Action::Finish) {
                Ok(Status::StreamEnd) => return Ok(out),
                Ok(_) => {}
                Err(e) => return Err(Error::Internal(format!("lzma: compression failed: {e}"))),
            }
        }
    }

    /// Decodes .xz (possibly several concatenated streams) or .lzma, whatever `format` says,
    /// or with format 3 raw streams with the configuration's filter chain.
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        self.decode_sink(input, &mut Sink::Exact(out)).map(drop)
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        decode_growing(max_len, |sink| self.decode_sink(input, sink))
    }
}

impl Lzma {
    fn decode_sink(&self, input: &[u8], out: &mut Sink) -> Result<usize> {
        match (self.format, self.filters.as_deref()) {
            (FORMAT_RAW, Some(filters)) => unraw(input, filters, out),
            _ => unxz(input, out),
        }
    }
}

/// Decodes raw streams of the filter chain `filters` into `out`, returning the decoded
/// length. Streams may follow each other, as Python's `lzma.decompress` decodes them.
///
/// A raw stream states no dictionary size, so the decoder takes the chain's, capped at what
/// `out` can hold (at least liblzma's 4 KiB minimum): a match never reaches further back than
/// the bytes decoded so far, so the cap decodes every stream that fits, and a configuration
/// asking for a 4 GiB dictionary allocates no more than the chunk.
fn unraw(input: &[u8], filters: &[Value], out: &mut Sink) -> Result<usize> {
    let dict_cap = u32::try_from(out.limit()).unwrap_or(u32::MAX).max(4096);
    let (mut used, mut end) = (0, 0);
    loop {
        let chain = filter_chain(filters, Some(dict_cap))?;
        let mut dec = Stream::new_raw_decoder(&chain)
            .map_err(|e| Error::Internal(format!("lzma: cannot create a raw decoder: {e}")))?;
        let (n, stream_end) = decode_stream("lzma", &mut dec, &input[used..], out, end)?;
        used += n;
        end = stream_end;
        if used >= input.len() || n == 0 {
            break;
        }
    }
    finish("lzma", out, end)
}

/// Decodes .xz (possibly several concatenated streams) or .lzma into `out`, returning the
/// decoded length.
fn unxz(input: &[u8], out: &mut Sink) -> Result<usize> {
    let memlimit = (out.limit() as u64).max(DICT_ALLOWANCE) + DECODER_OVERHEAD;
    let mut dec = Stream::new_auto_decoder(memlimit, liblzma::stream::CONCATENATED)
        .map_err(|e| Error::Internal(format!("lzma: cannot create a decoder: {e}")))?;
    let (_, end) = decode_stream("lzma", &mut dec, input, out, 0)?;
    finish("lzma", out, end)
}

impl StreamDecoder for Stream {
    fn step(&mut self, input: &[u8], output: &mut [u8]) -> Result<bool> {
        match self.process(input, output, Action::Finish) {
            Ok(status) => Ok(matches!(status, Status::StreamEnd)),
            Err(e @ (liblzma::stream::Error::MemLimit | liblzma::stream::Error::Mem)) => Err(
                Error::TooLarge(format!("decoding needs more memory than allowed ({e})")),
            ),
            Err(e) => Err(Error::CorruptChunk(e.to_string())),
        }
    }

    fn total_in(&self) -> u64 {
        Stream::total_in(self)
    }

    fn total_out(&self) -> u64 {
        Stream::total_out(self)
    }
}

/// The integrity check for a numcodecs `check` value (-1 is the .xz default, CRC-64).
fn check_kind(check: i64) -> Option<Check> {
    match check {
        -1 | 4 => Some(Check::Crc64),
        0 => Some(Check::None),
        1 => Some(Check::Crc32),
        10 => Some(Check::Sha256),
        _ => None,
    }
}

/// The `id` of a filter object, if it is an object with a non-negative integer `id`.
fn filter_id(filter: &Value) -> Option<u64> {
    filter.as_object()?.get("id")?.as_u64()
}

/// A filter chain from numcodecs filter objects, as Python's `lzma` reads them: LZMA1 and
/// LZMA2 with their options, delta (`dist`, 1..=256) and the branch filters (`start_offset`).
/// `dict_cap` caps the LZMA dictionary (for raw decoding, see [`unraw`]). Unknown filter ids
/// are [`Error::Unsupported`]; bad options [`Error::InvalidMetadata`] naming the key.
fn filter_chain(filters: &[Value], dict_cap: Option<u32>) -> Result<Filters> {
    let mut chain = Filters::new();
    for f in filters {
        let obj = f.as_object().cloned().unwrap_or_default();
        let cfg = Config::new(&obj, "lzma");
        let only = |allowed: &str| match obj.keys().find(|k| *k != "id" && *k != allowed) {
            Some(key) => {
                Err(cfg.invalid(key, format_args!("absent (filter {f} takes \"{allowed}\")")))
            }
            None => Ok(()),
        };
        let props = |r: std::result::Result<&mut Filters, liblzma::stream::Error>| {
            r.map(|_| ())
                .map_err(|e| cfg.error(format_args!("liblzma refuses the filter {f}: {e}")))
        };
        match filter_id(f).unwrap_or_default() {
            FILTER_LZMA1 => {
                chain.lzma1(&lzma_options(f, dict_cap)?);
            }
            FILTER_LZMA2 => {
                chain.lzma2(&lzma_options(f, dict_cap)?);
            }
            FILTER_DELTA => {
                only("dist")?;
                let dist = cfg.int("dist", 1, 1..=256)?;
                props(chain.delta_properties(&[(dist - 1) as u8]))?;
            }
            id @ 4..=9 => {
                only("start_offset")?;
                let offset = cfg.int("start_offset", 0, 0..=u32::MAX.into())? as u32;
                let bytes = offset.to_le_bytes();
                let p: &[u8] = if offset == 0 { &[] } else { &bytes };
                props(match id {
                    4 => chain.x86_properties(p),
                    5 => chain.powerpc_properties(p),
                    6 => chain.ia64_properties(p),
                    7 => chain.arm_properties(p),
                    8 => chain.arm_thumb_properties(p),
                    _ => chain.sparc_properties(p),
                })?;
            }
            _ => {
                return Err(Error::Unsupported(format!(
                    "lzma compressor: filter {f} (known: LZMA1, LZMA2, delta, the branch filters)"
                )))
            }
        };
    }
    Ok(chain)
}

/// LZMA1/LZMA2 options from a filter object: `preset` (default 6) refined by `dict_size`,
/// `lc`, `lp`, `pb`, `mode`, `nice_len`, `mf` and `depth`, as Python's `lzma` reads them,
/// with the dictionary capped at `dict_cap` when given.
fn lzma_options(filter: &Value, dict_cap: Option<u32>) -> Result<LzmaOptions> {
    let obj = filter.as_object().cloned().unwrap_or_default();
    let cfg = Config::new(&obj, "lzma");
    let preset = cfg.int("preset", PRESET_DEFAULT.into(), 0..=PRESET_EXTREME | 9)?;
    let mut opts = preset_options(preset as u32)?;
    for key in obj.keys() {
        let value = || cfg.int(key, 0, 0..=u32::MAX.into()).map(|n| n as u32);
        match key.as_str() {
            "id" | "preset" => &mut opts,
            "dict_size" => opts.dict_size(value()?),
            "lc" => opts.literal_context_bits(value()?),
            "lp" => opts.literal_position_bits(value()?),
            "pb" => opts.position_bits(value()?),
            "nice_len" => opts.nice_len(value()?),
            "depth" => opts.depth(value()?),
            "mode" => match value()? {
                1 => opts.mode(Mode::Fast),
                2 => opts.mode(Mode::Normal),
                _ => return Err(cfg.invalid(key, "1 (fast) or 2 (normal)")),
            },
            "mf" => match value()? {
                0x03 => opts.match_finder(MatchFinder::HashChain3),
                0x04 => opts.match_finder(MatchFinder::HashChain4),
                0x12 => opts.match_finder(MatchFinder::BinaryTree2),
                0x13 => opts.match_finder(MatchFinder::BinaryTree3),
                0x14 => opts.match_finder(MatchFinder::BinaryTree4),
                _ => return Err(cfg.invalid(key, "a match finder id (3, 4, 18, 19 or 20)")),
            },
            _ => return Err(cfg.invalid(key, "absent (it is not an LZMA filter option)")),
        };
    }
    if let Some(cap) = dict_cap {
        let dict = match obj.get("dict_size").and_then(Value::as_u64) {
            Some(n) => n as u32,
            None => preset_dict_size(preset as u32),
        };
        opts.dict_size(dict.min(cap));
    }
    Ok(opts)
}

/// The dictionary size of a preset level (xz's table: 256 KiB, 1, 2, 4, 4, 8, 8, 16, 32 and
/// 64 MiB for levels 0 to 9).
fn preset_dict_size(preset: u32) -> u32 {
    const MIB: u32 = 1 << 20;
    [
        MIB / 4,
        MIB,
        2 * MIB,
        4 * MIB,
        4 * MIB,
        8 * MIB,
        8 * MIB,
        16 * MIB,
        32 * MIB,
        64 * MIB,
    ][(preset & 0xf).min(9) as usize]
}

/// LZMA options for a preset level (0..=9, optionally | PRESET_EXTREME).
fn preset_options(preset: u32) -> Result<LzmaOptions> {
    LzmaOptions::new_preset(preset)
        .map_err(|e| Error::InvalidMetadata(format!("lzma compressor: preset {preset}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::*;

    fn codec(config: Value) -> Result<Lzma> {
        Lzma::from_config(config.as_object().unwrap())
    }

    /// `numcodecs.LZMA().encode(bytes(range(50)) * 4)` (numcodecs 0.16.6): .xz, preset 6.
    const NUMCODECS_XZ: &str = "\
        fd377a585a000004e6d6b4460200210116000000742fe5a3e000c700365d00000052500a84f99bb28021a969\
        d627e03e065a5f048d53d404ba39570509c15524de9db871593160a19ff96f4973f2c947dfd0d60000000000\
        3d923621703c4efe000152c8010000005eb9cae3b1c467fb020000000004595a";

    /// `numcodecs.LZMA(format=2).encode(bytes(range(50)) * 4)` (numcodecs 0.16.6): .lzma.
    const NUMCODECS_LZMA_ALONE: &str = "\
        5d00008000ffffffffffffffff00000052500a84f99bb28021a969d627e03e065a5f048d53d404ba39570509\
        c15524de9db871593160a19ff96f4973f2c947dfd1c6b297ffff8ed60000";

    fn lzma2(extra: Value) -> Value {
        let mut f = json!({"id": FILTER_LZMA2, "preset": 1});
        f.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        f
    }

    #[test]
    fn config_defaults_and_round_trip() {
        assert_eq!(
            codec(json!({"id": "lzma"})).unwrap().config(),
            json!({"id": "lzma", "format": 1, "check": -1, "preset": null, "filters": null})
        );
        for config in [
            json!({"id": "lzma", "format": 1, "check": -1, "preset": 0, "filters": null}),
            json!({"id": "lzma", "format": 1, "check": 0, "preset": 1, "filters": null}),
            json!({"id": "lzma", "format": 1, "check": 1, "preset": 0x8000_0001u32, "filters": null}),
            json!({"id": "lzma", "format": 1, "check": 10, "preset": 0, "filters": null}),
            json!({"id": "lzma", "format": 2, "check": -1, "preset": 1, "filters": null}),
            json!({"id": "lzma", "format": 2, "check": 0, "preset": null,
                "filters": [{"id": FILTER_LZMA1, "preset": 1, "dict_size": 65536}]}),
            json!({"id": "lzma", "format": 1, "check": 4, "preset": null,
                "filters": [lzma2(json!({"dict_size": 65536, "lc": 2, "lp": 1, "pb": 1}))]}),
            json!({"id": "lzma", "format": 1, "check": -1, "preset": null,
                "filters": [{"id": 4}, lzma2(json!({"mode": 1, "mf": 4, "nice_len": 32, "depth": 8}))]}),
        ] {
            let c = codec(config.clone()).unwrap();
            assert_eq!(c.config(), config);
            assert_round_trips(&c);
        }
        // Keys numcodecs does not know (GDAL writes some) are ignored, and not written back.
        let c = codec(json!({"id": "lzma", "delta": 1, "preset": 0})).unwrap();
        assert_eq!(
            c.config(),
            json!({"id": "lzma", "format": 1, "check": -1, "preset": 0, "filters": null})
        );
    }

    #[test]
    fn encodes_and_decodes_like_numcodecs() {
        let xz = unhex(NUMCODECS_XZ);
        let alone = unhex(NUMCODECS_LZMA_ALONE);
        let c = codec(json!({"id": "lzma"})).unwrap();
        assert_eq!(c.encode(&sample()).unwrap(), xz);
        let c2 = codec(json!({"id": "lzma", "format": 2})).unwrap();
        assert_eq!(c2.encode(&sample()).unwrap(), alone);
        // Either container decodes whatever `format` says (numcodecs would insist).
        for c in [&c, &c2, &codec(json!({"format": 0})).unwrap()] {
            assert_eq!(decode(c, &xz, 200).unwrap(), sample());
            assert_eq!(decode(c, &alone, 200).unwrap(), sample());
        }
        // Concatenated .xz streams, as Python decodes them.
        let two = [&xz[..], &xz[..]].concat();
        assert_eq!(
            decode(&c, &two, 400).unwrap(),
            [sample(), sample()].concat()
        );
        assert_corrupt(&c, &two, 200);
    }

    /// `numcodecs.LZMA(format=lzma.FORMAT_RAW, filters=...).encode(bytes(range(50)) * 4)`
    /// (numcodecs 0.16.6), as (filters, hex).
    const NUMCODECS_RAW: [(&str, &str); 3] = [
        (
            r#"[{"id": 3, "dist": 4}, {"id": 33, "preset": 1}]"#,
            "e000c700125d00000052500aa07edb6da98b318d099567800000",
        ),
        (
            r#"[{"id": 4611686018427387905, "preset": 6, "lc": 0, "lp": 2, "pb": 2, "dict_size": 65536}]"#,
            "000000403f2f270b6f4038f267ac59c7532f73062eb70985d9c2cde4a5f9df1a28a50acfb8017c21732b28\
             b05b737b63e422df0a6f5d882d06e949fffff99b6000",
        ),
        (
            r#"[{"id": 4, "start_offset": 16}, {"id": 33, "preset": 2147483657, "mode": 1, "mf": 4, "nice_len": 32}]"#,
            "e000c700365d00000052500a84f99bb28021a969d627e03e065a5f048d53d404ba39570509c15524de9db8\
             71593160a19ff96f4973f2c947dfd0d6000000",
        ),
    ];

    /// `numcodecs.LZMA(filters=[delta(dist=2), lzma2(preset=1)])`: delta in an .xz stream.
    const NUMCODECS_XZ_DELTA: &str = "\
        fd377a585a000004e6d6b446020103010121011029e21bbfe000c700105d000000527bf902cb51779ce88c20\
        7e8000003d923621703c4efe00012cc801000000efd5e2d2b1c467fb020000000004595a";

    fn raw_fixtures() -> impl Iterator<Item = (Lzma, Vec<u8>)> {
        NUMCODECS_RAW.iter().map(|(filters, hex)| {
            let filters: Value = serde_json::from_str(filters).unwrap();
            let config = json!({"id": "lzma", "format": 3, "check": -1, "preset": null,
                "filters": filters});
            let c = codec(config.clone()).unwrap();
            assert_eq!(c.config(), config);
            (c, unhex(hex))
        })
    }

    #[test]
    fn raw_streams_encode_and_decode_like_numcodecs() {
        for (c, enc) in raw_fixtures() {
            assert_eq!(c.encode(&sample()).unwrap(), enc, "{c:?}");
            assert_eq!(decode(&c, &enc, 200).unwrap(), sample(), "{c:?}");
            assert_decodes_to_vec(&c, &enc, &sample());
            assert_round_trips(&c);
            // Streams that follow each other decode as Python's `lzma.decompress` does.
            let two = [&enc[..], &enc[..]].concat();
            assert_eq!(
                decode(&c, &two, 400).unwrap(),
                [sample(), sample()].concat()
            );
            assert_truncations_refused(&c, &enc, 200);
            assert_survives_corruption(&c, &enc, 200);
            assert_corrupt(&c, &enc, 199);
            assert_corrupt(&c, &enc, 201);
            assert_corrupt(&c, &[&enc[..], b"xyz"].concat(), 200);
        }
        let c = codec(json!({"filters": [{"id": 3, "dist": 2}, lzma2(json!({}))]})).unwrap();
        let xz = unhex(NUMCODECS_XZ_DELTA);
        assert_eq!(c.encode(&sample()).unwrap(), xz);
        assert_eq!(decode(&c, &xz, 200).unwrap(), sample());
    }

    #[test]
    fn raw_decoding_caps_the_dictionary_at_the_chunk() {
        // A chain asking for a 1.5 GiB dictionary decodes a small chunk without allocating it.
        let huge = json!({"format": 3, "filters": [lzma2(json!({"dict_size": 1536u32 << 20}))]});
        let small = json!({"format": 3, "filters": [lzma2(json!({"dict_size": 4096}))]});
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let enc = codec(small).unwrap().encode(&data).unwrap();
        let c = codec(huge).unwrap();
        assert_eq!(decode(&c, &enc, data.len()).unwrap(), data);
        assert_eq!(c.decode_to_vec(&enc, data.len()).unwrap(), data);
        let bomb = c.encode(&vec![0u8; 4 << 20]).unwrap();
        assert_corrupt(&c, &bomb, 1024);
        assert_corrupt_vec(&c, &bomb, 1024);
    }

    #[test]
    fn rejects_corrupt_data() {
        let c = codec(json!({"id": "lzma"})).unwrap();
        for fixture in [NUMCODECS_XZ, NUMCODECS_LZMA_ALONE] {
            let enc = unhex(fixture);
            assert_truncations_refused(&c, &enc, 200);
            assert_survives_corruption(&c, &enc, 200);
            assert_corrupt(&c, &enc, 199);
            assert_corrupt(&c, &enc, 201);
            assert_corrupt(&c, &[&enc[..], b"xyz"].concat(), 200);
        }
        assert_corrupt(&c, b"not an xz stream at all", 200);
        let bomb = c.encode(&vec![0u8; 10 << 20]).unwrap();
        assert_corrupt(&c, &bomb, 1024);
        assert_corrupt_vec(&c, &bomb, 1024);
    }

    #[test]
    fn refuses_huge_dictionaries() {
        let c = codec(json!({"id": "lzma"})).unwrap();
        // .lzma header claiming a 2 GiB dictionary.
        let mut alone = unhex(NUMCODECS_LZMA_ALONE);
        alone[1..5].copy_from_slice(&0x8000_0000u32.to_le_bytes());
        // .xz block header claiming a 4 GiB dictionary (with its CRC-32 fixed up).
        let mut xz = unhex(NUMCODECS_XZ);
        xz[16] = 40;
        let mut crc = flate2::Crc::new();
        crc.update(&xz[12..20]);
        xz[20..24].copy_from_slice(&crc.sum().to_le_bytes());
        for enc in [alone, xz] {
            let err = decode(&c, &enc, 200).unwrap_err();
            assert!(
                matches!(err, Error::TooLarge(ref m) if m.contains("lzma")),
                "{err}"
            );
        }
    }

    #[test]
    fn rejects_bad_config() {
        for (key, bad) in [
            ("format", json!(4)),
            ("format", json!(-1)),
            ("format", json!("1")),
            ("check", json!(2)),
            ("check", json!(11)),
            ("preset", json!(10)),
            ("preset", json!(-1)),
            ("preset", json!(0x8000_000au32)),
            ("filters", json!("lzma2")),
            ("filters", json!([33])),
            ("filters", json!([{"id": "lzma2"}])),
        ] {
            let err = codec(json!({"id": "lzma", key: bad})).unwrap_err();
            assert!(
                matches!(err, Error::InvalidMetadata(ref m) if m.contains(key)),
                "{err}"
            );
        }
        // A raw stream needs its filter chain, checked when the codec is built.
        for (config, key) in [
            (json!({"format": 3}), "filters"),
            (
                json!({"format": 3, "filters": [{"id": 3, "dist": 0}]}),
                "dist",
            ),
            (
                json!({"format": 3, "filters": [{"id": 3, "dist": 257}]}),
                "dist",
            ),
            (
                json!({"format": 3, "filters": [{"id": 3, "distance": 2}]}),
                "distance",
            ),
            (
                json!({"format": 3, "filters": [{"id": 4, "start_offset": -1}]}),
                "start_offset",
            ),
            (
                json!({"format": 3, "filters": [{"id": 33, "lc": "3"}]}),
                "lc",
            ),
        ] {
            let err = codec(config.clone()).unwrap_err();
            assert!(
                matches!(err, Error::InvalidMetadata(ref m) if m.contains(key)),
                "{config}: {err}"
            );
        }
        let err = codec(json!({"format": 3, "filters": [{"id": 10}]})).unwrap_err();
        assert!(
            matches!(err, Error::Unsupported(ref m) if m.contains("10")),
            "{err}"
        );
    }

    #[test]
    fn refuses_to_encode_what_python_refuses() {
        let delta = json!({"id": FILTER_DELTA, "dist": 4});
        for (config, unsupported) in [
            (json!({"preset": 1, "filters": [lzma2(json!({}))]}), false),
            (json!({"format": 0}), false),
            (json!({"format": 2, "check": 4}), false),
            (json!({"format": 2, "filters": [lzma2(json!({}))]}), false),
            (json!({"filters": [lzma2(json!({"dict_sz": 4096}))]}), false),
            (json!({"filters": [lzma2(json!({"mode": 3}))]}), false),
            (
                json!({"filters": [lzma2(json!({"lc": 4, "lp": 4}))]}),
                false,
            ),
            (json!({"filters": [{"id": FILTER_LZMA1}]}), false),
            (json!({"filters": [delta.clone(), {"id": 21}]}), true),
            (
                json!({"format": 3, "check": 1, "filters": [delta, lzma2(json!({}))]}),
                false,
            ),
            (
                json!({"format": 3, "preset": 1, "filters": [lzma2(json!({}))]}),
                false,
            ),
        ] {
            let c = codec(config.clone()).unwrap();
            let err = c.encode(&sample()).unwrap_err();
            if unsupported {
                assert!(matches!(err, Error::Unsupported(_)), "{config}: {err}");
            } else {
                assert!(matches!(err, Error::InvalidMetadata(_)), "{config}: {err}");
            }
            // Decoding .xz never depends on these settings (raw streams need their chain).
            if c.format != FORMAT_RAW {
                assert_eq!(decode(&c, &unhex(NUMCODECS_XZ), 200).unwrap(), sample());
            }
        }
    }
}
