//! numcodecs `LZMA`: an .xz (format 1) or legacy .lzma (format 2) stream, as Python's
//! `lzma.compress` writes it. Raw streams (format 3) need liblzma's raw coder, which the xz2
//! crate does not expose, so they are unsupported.

use super::config::Config;
use super::stream::{decode_growing, decode_stream, finish, Sink, StreamDecoder};
use super::Codec;
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use xz2::stream::{Action, Check, Filters, LzmaOptions, MatchFinder, Mode, Status, Stream};

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
    /// 3 = raw, unsupported), `check` (-1 = the format's default, 0, 1, 4 or 10), `preset`
    /// (null = 6, or 0..=9 optionally with `PRESET_EXTREME`) and `filters` (null or a list of
    /// filter objects, checked when encoding). Other keys are ignored.
    pub fn from_config(obj: &Map<String, Value>) -> Result<Self> {
        let cfg = Config::new(obj, "lzma");
        let format = cfg.int("format", FORMAT_XZ, FORMAT_AUTO..=FORMAT_RAW)?;
        if format == FORMAT_RAW {
            return Err(Error::Unsupported(
                "lzma compressor: raw streams (format 3) are not supported".into(),
            ));
        }
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
                Stream::new_stream_encoder(&filter_chain(filters)?, check)
            }
            (FORMAT_ALONE, _) if self.check > 0 => {
                return Err(invalid("integrity checks need format 1 (xz)"))
            }
            (FORMAT_ALONE, None) => Stream::new_lzma_encoder(&preset_options(preset)?),
            (FORMAT_ALONE, Some([f])) if filter_id(f) == Some(FILTER_LZMA1) => {
                Stream::new_lzma_encoder(&lzma_options(f)?)
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

    /// Decodes .xz (possibly several concatenated streams) or .lzma, whatever `format` says.
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        unxz(input, &mut Sink::Exact(out)).map(drop)
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        decode_growing(max_len, |sink| unxz(input, sink))
    }
}

/// Decodes .xz (possibly several concatenated streams) or .lzma into `out`, returning the
/// decoded length.
fn unxz(input: &[u8], out: &mut Sink) -> Result<usize> {
    let memlimit = (out.limit() as u64).max(DICT_ALLOWANCE) + DECODER_OVERHEAD;
    let mut dec = Stream::new_auto_decoder(memlimit, xz2::stream::CONCATENATED)
        .map_err(|e| Error::Internal(format!("lzma: cannot create a decoder: {e}")))?;
    let (_, end) = decode_stream("lzma", &mut dec, input, out, 0)?;
    finish("lzma", out, end)
}

impl StreamDecoder for Stream {
    fn step(&mut self, input: &[u8], output: &mut [u8]) -> Result<bool> {
        match self.process(input, output, Action::Finish) {
            Ok(status) => Ok(matches!(status, Status::StreamEnd)),
            Err(e @ (xz2::stream::Error::MemLimit | xz2::stream::Error::Mem)) => Err(
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

/// An .xz filter chain from numcodecs filter objects (LZMA1/LZMA2 with their options, and
/// the branch filters without options).
fn filter_chain(filters: &[Value]) -> Result<Filters> {
    let mut chain = Filters::new();
    for f in filters {
        let only_id = f.as_object().is_some_and(|o| o.len() == 1);
        match filter_id(f).unwrap_or_default() {
            FILTER_LZMA1 => chain.lzma1(&lzma_options(f)?),
            FILTER_LZMA2 => chain.lzma2(&lzma_options(f)?),
            4 if only_id => chain.x86(),
            5 if only_id => chain.powerpc(),
            6 if only_id => chain.ia64(),
            7 if only_id => chain.arm(),
            8 if only_id => chain.arm_thumb(),
            9 if only_id => chain.sparc(),
            id => {
                let what = if id == FILTER_DELTA {
                    "the delta filter"
                } else {
                    "filter"
                };
                return Err(Error::Unsupported(format!(
                    "lzma compressor: cannot encode with {what} {f}"
                )));
            }
        };
    }
    Ok(chain)
}

/// LZMA1/LZMA2 options from a filter object: `preset` (default 6) refined by `dict_size`,
/// `lc`, `lp`, `pb`, `mode`, `nice_len`, `mf` and `depth`, as Python's `lzma` reads them.
fn lzma_options(filter: &Value) -> Result<LzmaOptions> {
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
    Ok(opts)
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
        let err = codec(json!({"format": 3, "filters": [{"id": 33}]})).unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{err}");
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
            (json!({"filters": [delta, lzma2(json!({}))]}), true),
            (
                json!({"filters": [{"id": 4, "start_offset": 16}, lzma2(json!({}))]}),
                true,
            ),
        ] {
            let c = codec(config.clone()).unwrap();
            let err = c.encode(&sample()).unwrap_err();
            if unsupported {
                assert!(matches!(err, Error::Unsupported(_)), "{config}: {err}");
            } else {
                assert!(matches!(err, Error::InvalidMetadata(_)), "{config}: {err}");
            }
            // Decoding never depends on these settings.
            assert_eq!(decode(&c, &unhex(NUMCODECS_XZ), 200).unwrap(), sample());
        }
    }
}
