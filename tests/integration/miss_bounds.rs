//! Whatever the shape of a request that matches nothing (one huge string,
//! a huge key, a deep object, thousands of keys, a huge method or tool
//! name), `replay` answers it with the miss error and the request's id,
//! and what it writes stays within the stated bounds: the error reply on
//! stdout, the report on stderr and the miss in `--report`.

use std::io::Write;
use std::process::Stdio;

use mcpcassette::replay::{MISS_JSON_BYTES, MISS_REPLY_BYTES, MISS_REPORT_BYTES, NO_MATCH};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::support::{mcpcassette, root};

/// What stderr holds besides the report: the unused interactions (twenty
/// lines at most) and the verdict.
const STDERR_BESIDES: usize = 8 * 1024;

/// What `--report` holds besides the miss: the rules and the unused
/// interactions of the demo cassette.
const REPORT_BESIDES: usize = 16 * 1024;

/// A request shape, with its size.
#[derive(Debug, Clone)]
enum Shape {
    /// One string argument of this many characters.
    LongString(usize, char),
    /// One argument whose key has this many bytes.
    LongKey(usize),
    /// Arguments nested this deep, under keys this long.
    Deep(usize, usize),
    /// This many arguments.
    ManyKeys(usize),
    /// A method name this long.
    LongMethod(usize),
    /// A tool name this long.
    LongName(usize),
}

impl Shape {
    /// The request's method and params.
    fn request(&self) -> (String, Value) {
        let call = |arguments: Value| json!({"name": "echo", "arguments": arguments});
        match *self {
            Shape::LongString(n, c) => (
                "tools/call".into(),
                call(json!({"n": String::from(c).repeat(n)})),
            ),
            Shape::LongKey(n) => ("tools/call".into(), call(json!({"K".repeat(n): 1}))),
            Shape::Deep(levels, key) => {
                let key = "k".repeat(key);
                let deep = (0..levels).fold(json!(1), |inner, _| json!({key.clone(): inner}));
                ("tools/call".into(), call(deep))
            }
            Shape::ManyKeys(n) => {
                let keys: Map<String, Value> =
                    (0..n).map(|i| (format!("k{i}"), json!(i))).collect();
                ("tools/call".into(), call(Value::Object(keys)))
            }
            Shape::LongMethod(n) => ("x".repeat(n), json!({})),
            Shape::LongName(n) => (
                "tools/call".into(),
                json!({"name": "e".repeat(n), "arguments": {}}),
            ),
        }
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    let unit = prop::sample::select(vec!['C', 'é', '☃', '"', '\u{1}']);
    prop_oneof![
        3 => (64 * 1024..2usize << 20, unit).prop_map(|(n, c)| Shape::LongString(n, c)),
        1 => (64 * 1024..1usize << 20).prop_map(Shape::LongKey),
        // The params nest two levels more, the request three: the wire
        // takes 128.
        1 => (33..=120usize, 1..2000usize).prop_map(|(levels, key)| Shape::Deep(levels, key)),
        1 => (1000..100_000usize).prop_map(Shape::ManyKeys),
        1 => (1024..1usize << 20).prop_map(Shape::LongMethod),
        1 => (1024..1usize << 20).prop_map(Shape::LongName),
    ]
}

fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        "[a-z0-9-]{1,12}".prop_map(Value::from)
    ]
}

/// Replays the demo cassette for `request` alone; stdout, stderr and the
/// `--report` file.
fn replay(request: &Value) -> (Vec<u8>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let mut child = mcpcassette()
        .arg("replay")
        .arg(root().join("cassettes/demo-legacy.json"))
        .arg("--report")
        .arg(&report)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = serde_json::to_vec(request).unwrap();
    line.push(b'\n');
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&line);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(output.status.code(), Some(1), "a miss fails the replay");
    (
        output.stdout,
        String::from_utf8_lossy(&output.stderr).into_owned(),
        std::fs::read_to_string(&report).unwrap(),
    )
}

proptest! {
    // Each case sends up to a few MB through the debug binary.
    #![proptest_config(ProptestConfig { cases: 6, max_shrink_iters: 8, ..ProptestConfig::default() })]

    #[test]
    fn a_miss_is_answered_and_reported_within_bounds_whatever_its_shape(shape in shape(), id in id()) {
        let (method, params) = shape.request();
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (stdout, stderr, report) = replay(&request);

        let answer: Value = serde_json::from_slice(&stdout).expect("one JSON-RPC answer");
        prop_assert_eq!(&answer["id"], &id);
        prop_assert_eq!(&answer["error"]["code"], &json!(NO_MATCH));
        prop_assert!(stdout.len() < MISS_REPLY_BYTES, "{:?}: stdout of {} bytes", shape, stdout.len());
        prop_assert!(
            stderr.len() < MISS_REPORT_BYTES + STDERR_BESIDES,
            "{:?}: stderr of {} bytes", shape, stderr.len()
        );
        prop_assert!(
            report.len() < MISS_JSON_BYTES + REPORT_BESIDES,
            "{:?}: --report of {} bytes", shape, report.len()
        );
        let report: Value = serde_json::from_str(&report).unwrap();
        prop_assert_eq!(report["misses"].as_array().map(Vec::len), Some(1));
        // What a cut left out is said where it was cut.
        prop_assert!(
            stderr.contains("more bytes)") || stderr.contains("not shown") || stderr.contains("shortened"),
            "{:?}: nothing says what was left out", shape
        );
    }
}
