//! The `zarr` command-line tool (src/bin/zarr/), run as a user runs it on a store written
//! through the library: what it prints, its exit status and its messages.

use std::process::Command;
use zarr::{Array, Group, OpenMode, StoreHandle};

/// Runs `zarr ARGS`: (exit code, stdout, stderr).
fn zarr(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_zarr"))
        .args(args)
        .output()
        .expect("the zarr tool runs");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8 output");
    (
        out.status.code().unwrap_or(-1),
        text(out.stdout),
        text(out.stderr),
    )
}

/// A directory store with a v2 group holding a v2 array and a v3 group holding a v3 array.
fn store(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("libzarr-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let location = dir.to_str().unwrap().to_string();
    let store = StoreHandle::open(&location, OpenMode::Write).unwrap();
    Group::create(store.clone(), "").unwrap();
    let t = Array::create(
        store.clone(),
        "measurements/temperature",
        r#"{"shape": [4, 6], "chunks": [2, 3], "dtype": "<f8", "fill_value": "NaN",
            "compressor": {"id": "zstd", "level": 1}}"#,
    )
    .unwrap();
    t.write_region(&[0, 0], &[2, 3], &[0u8; 48]).unwrap();
    Group::open(store.clone(), "measurements")
        .unwrap()
        .set_attributes(r#"{"site": "demo"}"#)
        .unwrap();
    Array::create(
        store.clone(),
        "v3/counts",
        r#"{"zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}"#,
    )
    .unwrap();
    location
}

#[test]
fn info_tree_and_ls_describe_what_the_store_holds() {
    let location = store("describe");
    let (code, out, err) = zarr(&["tree", &location]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "/\n ├── measurements\n │   └── temperature (4, 6) float64\n └── v3\n     └── counts (10,) int32\n"
    );
    let (_, out, _) = zarr(&["ls", &location]);
    assert_eq!(out, "group measurements\ngroup v3\n");
    let (_, out, _) = zarr(&["ls", &location, "measurements"]);
    assert_eq!(out, "array temperature (4, 6) float64\n");

    let (code, out, err) = zarr(&["info", &location, "measurements/temperature", "--json"]);
    assert_eq!(code, 0, "{err}");
    let info: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["kind"], "array");
    assert_eq!(info["zarr_format"], 2);
    assert_eq!(info["shape"], serde_json::json!([4, 6]));
    assert_eq!(info["chunks_initialized"], 1);
    assert_eq!(info["chunks_total"], 4);
    assert_eq!(info["compressor"]["id"], "zstd");
    assert_eq!(info["fill_value"], "NaN");
    let (_, out, _) = zarr(&["info", &location, "v3/counts"]);
    assert!(out.contains("zarr_format        : 3\n"), "{out}");
    assert!(out.contains("data_type          : int32\n"), "{out}");
    // The v3 name of the type alone, and no inner chunks for an array without shards.
    assert!(
        !out.contains("dtype") && !out.contains("inner_chunks"),
        "{out}"
    );
    let (_, out, _) = zarr(&["info", &location]);
    assert!(out.starts_with("kind        : group\n"), "{out}");
    assert!(
        out.contains("groups      : [\"measurements\",\"v3\"]"),
        "{out}"
    );
    std::fs::remove_dir_all(&location).unwrap();
}

#[test]
fn attrs_prints_sets_and_deletes() {
    let location = store("attrs");
    let (code, out, _) = zarr(&["attrs", &location, "measurements"]);
    assert_eq!((code, out.trim()), (0, r#"{"site": "demo"}"#));
    let (code, _, err) = zarr(&[
        "attrs",
        &location,
        "measurements",
        "--set",
        "units=\"degC\"",
        "--set",
        "levels=[1, 2]",
        "--delete",
        "site",
    ]);
    assert_eq!(code, 0, "{err}");
    let store = StoreHandle::open(&location, OpenMode::Read).unwrap();
    let stored = Group::open(store, "measurements")
        .unwrap()
        .attributes()
        .unwrap();
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(
        stored,
        serde_json::json!({"units": "degC", "levels": [1, 2]})
    );
    // A value that is no JSON, a key that is not there: errors naming them, nothing written.
    let (code, _, err) = zarr(&["attrs", &location, "measurements", "--set", "units=degC"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("zarr: ") && err.contains("--set units"),
        "{err}"
    );
    let (code, _, err) = zarr(&["attrs", &location, "measurements", "--delete", "nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("\"nope\""), "{err}");
    // Attributes holding NaN (as zarr-python writes them) print as stored, but are not
    // rewritten, which would change them.
    std::fs::write(
        format!("{location}/v3/zarr.json"),
        std::fs::read_to_string(format!("{location}/v3/zarr.json"))
            .unwrap()
            .replace("\"attributes\": {}", "\"attributes\": {\"x\": NaN}"),
    )
    .unwrap();
    let (code, out, err) = zarr(&["attrs", &location, "v3"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("NaN"), "{out}");
    let (code, _, err) = zarr(&["attrs", &location, "v3", "--set", "y=1"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot be rewritten faithfully"), "{err}");
    std::fs::remove_dir_all(&location).unwrap();
}

#[test]
fn missing_nodes_and_stores_are_errors_naming_them() {
    let location = store("missing");
    let (code, _, err) = zarr(&["info", &location, "nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("\"nope\"") && err.contains(&location), "{err}");
    let (code, _, err) = zarr(&["tree", &location, "measurements/temperature"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no group at \"measurements/temperature\""),
        "{err}"
    );
    let (code, _, err) = zarr(&["ls", "/nonexistent/store"]);
    assert_eq!(code, 1);
    assert!(err.contains("/nonexistent/store"), "{err}");
    let (code, _, _) = zarr(&["frobnicate"]);
    assert_eq!(code, 2);
    std::fs::remove_dir_all(&location).unwrap();
}

#[test]
fn create_copy_move_remove_and_consolidate_change_the_hierarchy() {
    let src = store("edit-src");
    let dst = format!("{src}-copy");
    let _ = std::fs::remove_dir_all(&dst);
    let run = |args: &[&str]| {
        let (code, out, err) = zarr(args);
        assert_eq!(code, 0, "zarr {args:?}: {err}");
        out
    };
    let made = run(&[
        "create",
        &src,
        "extra",
        "--metadata",
        r#"{"shape": [3], "chunks": [2], "dtype": "|u1"}"#,
    ]);
    assert_eq!(made, "created array \"extra\" (Zarr v2)\n");
    assert_eq!(
        run(&["create", &src, "g3", "--format", "3"]),
        "created group \"g3\" (Zarr v3)\n"
    );
    // Verbatim copy of the whole store, then a re-encoded copy of one array as Zarr v3.
    run(&["copy", &src, &dst]);
    run(&[
        "copy",
        &src,
        &dst,
        "--from",
        "measurements/temperature",
        "--to",
        "t3",
        "--set",
        r#"{"zarr_format": 3, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 6]}}}"#,
    ]);
    let store = StoreHandle::open(&dst, OpenMode::Read).unwrap();
    let (a, b) = (
        Array::open(store.clone(), "measurements/temperature").unwrap(),
        Array::open(store.clone(), "t3").unwrap(),
    );
    assert_eq!((a.zarr_format(), b.zarr_format()), (2, 3));
    assert_eq!(b.metadata().grid.regular_shape(), Some(&[4, 6][..]));
    let read = |x: &Array| {
        let mut out = vec![0u8; 4 * 6 * 8];
        x.read_region(&[0, 0], &[4, 6], &mut out).unwrap();
        out
    };
    assert_eq!(read(&a), read(&b));
    run(&["mv", &dst, "t3", "--to", "moved/t3"]);
    run(&["rm", &dst, "measurements"]);
    let everything = "/\n ├── extra (3,) uint8\n ├── g3\n ├── moved\n │   └── t3 (4, 6) float64\n └── v3\n     └── counts (10,) int32\n";
    assert_eq!(run(&["tree", &dst]), everything);
    run(&["consolidate", &dst]);
    assert!(std::path::Path::new(&format!("{dst}/.zmetadata")).exists());
    // As for the C API and zarr-python, the v2 root's `.zmetadata` is the whole hierarchy: it
    // holds its v2 nodes only (zarr-python 3 refuses one naming v3 nodes).
    assert_eq!(run(&["tree", &dst]), "/\n └── extra (3,) uint8\n");
    assert_eq!(run(&["tree", &dst, "--ignore-consolidated"]), everything);
    // Refusals, each naming what it refused.
    let (code, _, err) = zarr(&["rm", &dst]);
    assert_eq!(code, 1);
    assert!(err.contains("refusing to delete the root"), "{err}");
    let (code, _, err) = zarr(&["mv", &dst, "nope", "--to", "x"]);
    assert_eq!(code, 1);
    assert!(err.contains("\"nope\""), "{err}");
    let (code, _, err) = zarr(&["create", &dst, "extra", "--format", "3"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("already exists") && err.contains("extra"),
        "{err}"
    );
    let (code, _, err) = zarr(&["copy", &src, &dst, "--from", "v3/counts", "--to", "extra"]);
    assert_eq!(code, 1);
    assert!(err.contains("extra"), "{err}");
    let (code, out, _) = zarr(&["version"]);
    assert!(
        code == 0
            && out.starts_with(&format!("zarr {} ", env!("CARGO_PKG_VERSION")))
            && out.contains("\nzarr formats: 2, 3\n")
            && out.contains(
                "\nstores: directory, zip, memory, s3, azure, gcs, http, n5, dbm, redis, sqlite, lmdb, reference\n"
            )
            && out.contains("sharding_indexed"),
        "{out}"
    );
    let (code, out, _) = zarr(&["version", "--json"]);
    let features: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(code == 0 && features["compressors"][0] == "zlib", "{out}");
    std::fs::remove_dir_all(&src).unwrap();
    std::fs::remove_dir_all(&dst).unwrap();
}

#[test]
fn cat_prints_values_of_every_plain_type_and_selection() {
    let dir = std::env::temp_dir().join(format!("libzarr-cli-cat-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let location = dir.to_str().unwrap().to_string();
    let store = StoreHandle::open(&location, OpenMode::Write).unwrap();
    let create = |path: &str, dtype: &str, shape: &str, data: &[u8]| {
        let doc = format!(r#"{{"shape": {shape}, "chunks": {shape}, "dtype": "{dtype}"}}"#);
        let a = Array::create(store.clone(), path, &doc).unwrap();
        let shape: Vec<u64> = serde_json::from_str(shape).unwrap();
        a.write_region(&vec![0; shape.len()], &shape, data).unwrap();
    };
    let f4: Vec<u8> = [0.1f32, -2.5, f32::NAN, f32::INFINITY]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    create("f4", "<f4", "[2, 2]", &f4);
    let i2: Vec<u8> = (0..24i16)
        .map(|v| v - 12)
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    create("cube", ">i2", "[2, 3, 4]", &i2);
    create("flags", "|b1", "[3]", &[1, 0, 1]);
    create("names", "|S3", "[2]", b"ab\0xyz");
    let text: Vec<u8> = ['h', 'é', '\0', '\0']
        .iter()
        .flat_map(|c| (*c as u32).to_ne_bytes())
        .collect();
    create("words", "<U2", "[2]", &text);
    let c8: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    create("complex", "<c8", "[1]", &c8);
    let objects = Array::create(
        store.clone(),
        "objects",
        r#"{"shape": [3], "chunks": [2], "dtype": "|O", "filters": [{"id": "vlen-utf8"}]}"#,
    )
    .unwrap();
    objects
        .write_vlen(&[0], &[3], &[0, 1, 1, 4], b"a\"bc")
        .unwrap();
    let records = Array::create(
        store.clone(),
        "records",
        r#"{"shape": [2], "chunks": [2], "dtype": [["x", "<f8"], ["o", "|O"]], "filters": [{"id": "pickle"}]}"#,
    )
    .unwrap();
    let two = br#"{"x":"NaN","o":[1,"a"]}{"x":2.5,"o":null}"#;
    records.write_vlen(&[0], &[2], &[0, 23, 41], two).unwrap();

    let cat = |args: &[&str]| {
        let mut all = vec!["cat", location.as_str()];
        all.extend_from_slice(args);
        let (code, out, err) = zarr(&all);
        assert_eq!(code, 0, "zarr {all:?}: {err}");
        out
    };
    assert_eq!(cat(&["f4"]), "0.1 -2.5\nNaN Infinity\n");
    assert_eq!(
        cat(&["f4", "--json"]),
        "[[0.1,-2.5],[\"NaN\",\"Infinity\"]]\n"
    );
    // 3-D: a blank line between 2-D slabs; steps, negative positions, indices.
    assert_eq!(
        cat(&["cube"]),
        "-12 -11 -10 -9\n-8 -7 -6 -5\n-4 -3 -2 -1\n\n0 1 2 3\n4 5 6 7\n8 9 10 11\n"
    );
    assert_eq!(
        cat(&["cube", "--select", "-1, ::2, 1:"]),
        "1 2 3\n9 10 11\n"
    );
    assert_eq!(cat(&["cube", "--select", "1, 2, 3", "--json"]), "11\n");
    assert_eq!(
        cat(&["cube", "--select", "0:2, 1, 0:4:3", "--json"]),
        "[[-8,-5],[4,7]]\n"
    );
    assert_eq!(cat(&["flags", "--json"]), "[true,false,true]\n");
    assert_eq!(cat(&["names"]), "ab\nxyz\n");
    assert_eq!(cat(&["words", "--json"]), "[\"hé\",\"\"]\n");
    assert_eq!(cat(&["complex", "--json"]), "[[1.5,-2]]\n");
    assert_eq!(cat(&["objects", "--json"]), "[\"a\",\"\",\"\\\"bc\"]\n");
    assert_eq!(cat(&["objects", "--select", "1:"]), "\n\"bc\n");
    // Records with object fields: each a JSON object, printed as it is.
    assert_eq!(
        cat(&["records", "--json"]),
        "[{\"x\":\"NaN\",\"o\":[1,\"a\"]},{\"x\":2.5,\"o\":null}]\n"
    );
    assert_eq!(
        cat(&["records"]),
        "{\"x\":\"NaN\",\"o\":[1,\"a\"]}\n{\"x\":2.5,\"o\":null}\n"
    );
    // Bad selections, each an error naming what is wrong.
    for (select, says) in [
        ("0:1:0", "step \"0\""),
        ("2", "outside dimension 0"),
        ("a", "\"a\" is no integer"),
        ("0, 0, 0, 0", "4 dimensions"),
    ] {
        let (code, _, err) = zarr(&["cat", &location, "cube", "--select", select]);
        assert_eq!(code, 1, "{select}");
        assert!(err.contains(says), "{select}: {err}");
    }
    let (code, _, err) = zarr(&["cat", &location, "objects", "--select", "::2"]);
    assert_eq!(code, 1);
    assert!(err.contains("object"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn editing_commands_refuse_bad_input_naming_it() {
    let location = store("refusals");
    let other = format!("{location}-other");
    let refused = |args: &[&str], says: &[&str]| {
        let (code, _, err) = zarr(args);
        assert_eq!(code, 1, "zarr {args:?} succeeded");
        for part in says {
            assert!(
                err.starts_with("zarr: ") && err.contains(part),
                "zarr {args:?}: {err}"
            );
        }
    };
    refused(
        &[
            "create",
            &location,
            "a",
            "--metadata",
            "@/nonexistent/doc.json",
        ],
        &["/nonexistent/doc.json"],
    );
    refused(
        &["create", &location, "a", "--metadata", r#"{"shape": [2]}"#],
        &["creating array \"a\"", "\"dtype\""],
    );
    refused(
        &[
            "copy",
            &location,
            &other,
            "--from",
            "measurements",
            "--to",
            "m",
            "--set",
            "{}",
        ],
        &["path \"measurements\" holds a group"],
    );
    refused(
        &["copy", &location, &other, "--from", "nope"],
        &["\"nope\""],
    );
    refused(
        &[
            "mv",
            &location,
            "measurements",
            "--to",
            "measurements/inner",
        ],
        &["into itself"],
    );
    refused(
        &["attrs", &location, "measurements", "--set", "novalue"],
        &["--set \"novalue\"", "KEY=VALUE"],
    );
    refused(
        &["info", &location, "--options", r#"{"bogus": 1}"#],
        &["\"bogus\""],
    );
    assert!(!std::path::Path::new(&format!("{location}/a")).exists());
    std::fs::remove_dir_all(&location).unwrap();
    let _ = std::fs::remove_dir_all(&other);
}

#[test]
fn dump_prints_every_node_with_its_metadata_and_values() {
    let location = store("dump");
    let (code, out, err) = zarr(&["dump", &location, "--data"]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "group \"/\" (zarr v2) {",
        "  group \"measurements\" (zarr v2) {",
        "    attributes {\"site\":\"demo\"}",
        "    array \"temperature\" (zarr v2) {",
        "      compressor          {\"checksum\":false,\"id\":\"zstd\",\"level\":1}",
        "      shape               [4,6]",
        "        0 0 0 NaN NaN NaN",
        "        NaN NaN NaN NaN NaN NaN",
        "    array \"counts\" (zarr v3) {",
        "      data_type            \"int32\"",
    ] {
        assert!(out.lines().any(|l| l == line), "no line {line:?} in\n{out}");
    }
    // Without --data no values; one array alone; JSON that parses, values included.
    let (_, header, _) = zarr(&["dump", &location]);
    assert!(
        !header.contains("data:") && header.contains("temperature"),
        "{header}"
    );
    let (code, one, _) = zarr(&["dump", &location, "v3/counts", "--data"]);
    assert!(code == 0 && one.starts_with("array \"counts\""), "{one}");
    let (code, out, err) = zarr(&["dump", &location, "--data", "--json"]);
    assert_eq!(code, 0, "{err}");
    let dump: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let temperature = &dump["members"][0]["members"][0];
    assert_eq!(temperature["metadata"]["shape"], serde_json::json!([4, 6]));
    assert_eq!(temperature["data"][0][0], 0.0);
    assert_eq!(temperature["data"][3][5], "NaN");
    assert_eq!(dump["members"][1]["members"][0]["data"][9], 0);
    let (code, _, err) = zarr(&["dump", &location, "missing"]);
    assert!(code == 1 && err.contains("\"missing\""), "{err}");
    std::fs::remove_dir_all(&location).unwrap();
}

#[test]
fn diff_reports_what_differs_and_exits_as_diff_does() {
    let (left, right) = (store("diff-left"), store("diff-right"));
    let (code, out, err) = zarr(&["diff", &left, &right]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    // Change one value, an attribute and the codecs; add an array.
    let store = StoreHandle::open(&right, OpenMode::Write).unwrap();
    let counts = Array::open(store.clone(), "v3/counts").unwrap();
    counts
        .write_region(&[7], &[1], &42i32.to_ne_bytes())
        .unwrap();
    Group::open(store.clone(), "measurements")
        .unwrap()
        .set_attributes(r#"{"site": "other"}"#)
        .unwrap();
    Array::create(
        store.clone(),
        "extra",
        r#"{"shape": [1], "chunks": [1], "dtype": "|u1"}"#,
    )
    .unwrap();
    let (code, out, err) = zarr(&["diff", &left, &right]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        out,
        "extra: only in the second\n\
         measurements: attributes \"site\": \"demo\" vs \"other\"\n\
         v3/counts: values: 1 of 10 differ, the first at [7]: 0 vs 42\n"
    );
    let (code, out, _) = zarr(&["diff", &left, &right, "--path", "v3", "--json"]);
    let found: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, 1);
    assert_eq!(found[0]["path"], "counts");
    // One array against another of the same store: metadata members compared.
    let (code, out, _) = zarr(&[
        "diff",
        &left,
        &left,
        "--path",
        "measurements/temperature",
        "--right-path",
        "v3/counts",
    ]);
    assert!(code == 1 && out.contains("/: Zarr v2 vs v3"), "{out}");
    assert!(out.contains("values not compared"), "{out}");
    let (code, _, err) = zarr(&["diff", &left, "/no/such/store"]);
    assert!(code == 2 && err.contains("/no/such/store"), "{err}");
    std::fs::remove_dir_all(&left).unwrap();
    std::fs::remove_dir_all(&right).unwrap();
}

#[test]
fn bench_times_every_array_below_a_node() {
    let location = store("bench");
    let (code, out, err) = zarr(&["bench", &location, "--repeat", "2", "--threads", "1"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("measurements/temperature: 0.0 MB decoded"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("v3/counts: ") && lines[1].contains("MB/s decoded"),
        "{out}"
    );
    let (code, out, _) = zarr(&["bench", &location, "v3/counts", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, 0);
    assert_eq!(rows[0]["bytes_decoded"], 40);
    assert!(rows[0]["best_seconds"].as_f64().unwrap() > 0.0);
    let (code, _, err) = zarr(&["bench", &location, "--repeat", "0"]);
    assert!(code == 2 && err.contains("--repeat"), "{err}");
    std::fs::remove_dir_all(&location).unwrap();
}

/// `zarr cat ... | head`: the reader goes away and the tool ends quietly, as cat does (by the
/// pipe's signal, or successfully), never with a message or a panic.
#[test]
fn a_closed_pipe_ends_the_tool_quietly() {
    use std::io::Read;
    let location = store("pipe");
    let store = StoreHandle::open(&location, OpenMode::Write).unwrap();
    let big = Array::create(
        store,
        "big",
        r#"{"shape": [300, 300], "chunks": [100, 100], "dtype": "<f8"}"#,
    )
    .unwrap();
    big.write_region(&[0, 0], &[300, 300], &vec![7u8; 300 * 300 * 8])
        .unwrap();
    for args in [
        vec!["cat", &location, "big"],
        vec!["info", &location, "big"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zarr"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 20];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "zarr {args:?}: {err}");
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            let quiet = out.status.success() || out.status.signal() == Some(libc::SIGPIPE);
            assert!(quiet, "zarr {args:?}: {:?}", out.status);
        }
    }
    std::fs::remove_dir_all(&location).unwrap();
}

/// A create that fails leaves no store directory it made behind; one that existed stays.
#[test]
fn a_failed_create_leaves_no_new_store_behind() {
    let location = store("failed-create");
    let fresh = format!("{location}-fresh");
    let bad = r#"{"shape": [2]}"#;
    let (code, _, err) = zarr(&["create", &fresh, "a", "--metadata", bad]);
    assert!(code == 1 && err.contains("\"dtype\""), "{err}");
    assert!(!std::path::Path::new(&fresh).exists());
    let (code, _, _) = zarr(&["create", &location, "a", "--metadata", bad]);
    assert_eq!(code, 1);
    assert!(std::path::Path::new(&format!("{location}/.zgroup")).exists());
    std::fs::remove_dir_all(&location).unwrap();
}

/// The tool's messages name a server without the secrets of its URL.
#[test]
fn messages_hide_the_secrets_of_urls() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let options = r#"{"retries": 0, "connect_timeout_seconds": 2}"#;
    for url in [
        format!("http://user:S3CRET-PW@127.0.0.1:{port}/x.zarr"),
        format!("http://127.0.0.1:{port}/x.zarr?X-Amz-Signature=S3CRET-SIG"),
    ] {
        for args in [
            vec!["info", url.as_str(), "--options", options],
            vec!["tree", url.as_str(), "--options", options],
        ] {
            let (code, out, err) = zarr(&args);
            assert_eq!(code, 1, "{args:?}");
            let text = format!("{out}{err}");
            assert!(!text.contains("S3CRET"), "{args:?}: {text}");
            assert!(text.contains("127.0.0.1") && text.contains("***"), "{text}");
        }
    }
}

/// `zarr man` prints zarr(1) in roff, listing the commands (not itself: it is hidden, from
/// --help too); with --dir it writes that page and one per command.
#[test]
fn man_prints_the_manual_page_naming_the_commands() {
    let (code, out, err) = zarr(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(".TH zarr 1"), "{out}");
    assert!(out.contains(".SH SUBCOMMANDS"), "{out}");
    for command in [
        "info", "tree", "dump", "ls", "cat", "copy", "diff", "version",
    ] {
        assert!(
            out.contains(&format!("zarr\\-{command}(1)")),
            "{command}: {out}"
        );
    }
    assert!(
        !out.contains("zarr\\-man") && !out.contains("zarr\\-help"),
        "{out}"
    );
    let (code, help, _) = zarr(&["--help"]);
    let listed = |name: &str| {
        help.lines()
            .any(|l| l.trim_start().starts_with(&format!("{name} ")))
    };
    assert!(code == 0 && listed("info") && !listed("man"), "{help}");

    let dir = std::env::temp_dir().join(format!("libzarr-cli-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, out, err) = zarr(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(code == 0 && out.is_empty(), "{err}");
    let page = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert!(page("zarr.1").contains(".TH zarr 1"));
    let info = page("zarr-info.1");
    assert!(
        info.contains(".TH zarr-info 1") && info.contains("\\-\\-json"),
        "{info}"
    );
    assert!(!dir.join("zarr-man.1").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
