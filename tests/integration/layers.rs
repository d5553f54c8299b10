//! The library's layering, as docs/architecture.md draws it: every
//! top-level module uses (through `crate::` paths in code, comments left
//! out) only modules of lower layers, so there is no cycle and a newcomer
//! following a request only ever goes down.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, bottom first, as docs/architecture.md has them.
const LAYERS: [&[&str]; 7] = [
    &["error_chain", "json", "jsonrpc", "parallel", "protocol"],
    &["redact", "schema"],
    &["cassette", "example"],
    &["fixture", "matching", "mode", "transport"],
    &["check", "live", "serve"],
    &["drift", "faults", "mock", "record", "replay", "stub"],
    &["inspect", "testkit"],
];

/// Modules outside the layering: the fuzzing entry points reach in
/// wherever the fuzz targets need.
const OUTSIDE: [&str; 1] = ["fuzzing"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Every `crate::<module>` a file uses, outside comments.
fn uses(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            // `$crate::` in macros is the same crate.
            if !name.is_empty() {
                found.insert(name);
            }
            rest = after;
        }
    }
    found
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn every_module_uses_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let module = first.to_string_lossy().trim_end_matches(".rs").to_owned();
        if ["lib", "main", "cli"].contains(&module.as_str()) || OUTSIDE.contains(&module.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for used in uses(&text) {
            if used != module && layer_of(&used).is_some() {
                edges.entry(module.clone()).or_default().insert(used);
            }
        }
        assert!(
            layer_of(&module).is_some(),
            "src/{} belongs to no layer: add `{module}` to LAYERS here and to docs/architecture.md",
            relative.display()
        );
    }
    let mut upward = Vec::new();
    for (module, used) in &edges {
        let here = layer_of(module).unwrap();
        for other in used {
            if layer_of(other).unwrap() >= here {
                upward.push(format!(
                    "{module} (layer {here}) uses {other} (layer {})",
                    layer_of(other).unwrap()
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "modules that use their own layer or one above:\n{}",
        upward.join("\n")
    );
    // The table is not stale: every layer's modules exist.
    for module in LAYERS.iter().flat_map(|l| l.iter()) {
        let exists = src.join(module).is_dir() || src.join(format!("{module}.rs")).is_file();
        assert!(exists, "LAYERS names `{module}`, which src/ does not have");
    }
}

#[test]
fn the_scan_sees_uses_and_skips_comments() {
    let text = "use crate::json::Selector;\n// crate::replay in a comment\n    let x = crate::live::spawn(&c, None)?;";
    let found: Vec<String> = uses(text).into_iter().collect();
    assert_eq!(found, ["json", "live"]);
}
