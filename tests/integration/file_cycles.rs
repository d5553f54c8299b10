//! No two files of `src/` import each other, directly or around a circle.
//!
//! `layers.rs` keeps the top-level modules in layers; this test looks one
//! level finer, at files: inside a module, if `a.rs` takes a name from
//! `b.rs` then `b.rs` takes none from `a.rs`, so a newcomer can read the
//! files of a folder bottom-up. A name is followed through re-exports
//! (`pub use`) to the file that defines it, and a re-export is a file's
//! surface, not a dependency, so a facade is not a circle of its own;
//! declaring a module (`mod x;`) is not an import, and a module's root
//! file (`mod.rs`, or `a.rs` beside `a/`) may use its own children, which
//! it is made of: a child that uses its parent is no circle.
//! Test code (after `#[cfg(test)]`, and `tests.rs` files) is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A file and the module path it defines (`["replay", "engine"]`).
struct Source {
    path: PathBuf,
    module: Vec<String>,
    /// Its non-test code, comments removed.
    code: String,
    /// What its private `use` items name.
    imports: Vec<Vec<String>>,
    /// What its `pub use` items (of any visibility) name: its surface,
    /// not a dependency.
    reexports: Vec<Vec<String>>,
}

/// The files of a crate tree, by module path.
struct Tree {
    files: Vec<Source>,
    by_module: BTreeMap<Vec<String>, usize>,
}

/// A file's code before its test module, without `//` comments.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let line = match line.find("//") {
            // A `//` inside a string ("http://…") is not a comment; a
            // line whose quotes are unbalanced before it keeps it.
            Some(at) if line[..at].matches('"').count() % 2 == 0 => &line[..at],
            _ => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

impl Tree {
    fn read(src: &Path) -> Tree {
        let mut paths = Vec::new();
        walk(src, &mut paths);
        paths.sort();
        let mut files = Vec::new();
        for path in paths {
            let relative = path.strip_prefix(src).unwrap();
            let mut module: Vec<String> = relative
                .iter()
                .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            let last = module.last().unwrap().clone();
            if last == "tests" || module.iter().any(|m| m == "tests") {
                continue;
            }
            // The binary's root; its modules (`cli/`) sit beside the library's.
            if last == "main" && module.len() == 1 {
                continue;
            }
            if ["mod", "lib"].contains(&last.as_str()) {
                module.pop();
            }
            let code = code_of(&std::fs::read_to_string(src.join(relative)).unwrap());
            let path = Path::new("src").join(relative);
            let (imports, reexports) = uses(&code);
            files.push(Source {
                path,
                module,
                code,
                imports,
                reexports,
            });
        }
        let by_module = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        Tree { files, by_module }
    }

    /// The file a path names and the item it takes there (`None` for a
    /// whole module), following re-exports; `None` when the path leaves
    /// the crate.
    fn resolve(&self, path: &[String], depth: usize) -> Option<(usize, Option<String>)> {
        let (mut prefix, mut file) = (path.len(), None);
        while prefix > 0 {
            if let Some(&i) = self.by_module.get(&path[..prefix]) {
                file = Some(i);
                break;
            }
            prefix -= 1;
        }
        let file = file.or_else(|| self.by_module.get(&Vec::new()).copied())?;
        let Some(item) = path.get(prefix) else {
            return Some((file, None));
        };
        // A name this file imports rather than defines: follow it.
        if depth < 8 {
            let source = &self.files[file];
            for imported in source.imports.iter().chain(&source.reexports) {
                if imported.last() == Some(item)
                    && let Some(target) = self.absolute(file, imported)
                    && let Some(found) = self.resolve(&target, depth + 1)
                {
                    return Some(found);
                }
            }
        }
        Some((file, Some(item.clone())))
    }

    /// A path as written in `file` made absolute (`super::x` → `a::x`).
    fn absolute(&self, file: usize, path: &[String]) -> Option<Vec<String>> {
        let source = &self.files[file];
        // The module a bare `super::` counts from: a file's own module.
        let mut base = source.module.clone();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            // A child module named without `self::`.
            Some(first) => {
                let mut child = base.clone();
                child.push(first.to_owned());
                if !self.by_module.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }
}

/// Every path a file's `use` items name, braces expanded, `as` dropped:
/// those of private `use` items, then those of `pub use` items.
fn uses(code: &str) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let (mut imports, mut reexports) = (Vec::new(), Vec::new());
    let mut at = 0;
    for line in code.split_inclusive('\n') {
        let start = at;
        at += line.len();
        // `use`, `pub use`, `pub(crate) use` … at the start of a line.
        let statement = line.trim_start();
        let found = if statement.starts_with("pub") {
            &mut reexports
        } else {
            &mut imports
        };
        let statement = match statement.strip_prefix("pub") {
            Some(rest) if rest.starts_with('(') => rest.split_once(')').map_or("", |(_, r)| r),
            Some(rest) => rest,
            None => statement,
        };
        let Some(tree) = statement.trim_start().strip_prefix("use ") else {
            continue;
        };
        let begin = start + line.len() - tree.len();
        let Some(end) = code[begin..].find(';') else {
            break;
        };
        let tree = without_aliases(&code[begin..begin + end]);
        expand(&tree, &mut Vec::new(), found);
    }
    (imports, reexports)
}

/// A use tree without whitespace and without `as` renames.
fn without_aliases(tree: &str) -> String {
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut kept = String::new();
    let mut skip = false;
    for word in words {
        if skip {
            // The alias itself; keep what follows it (`,` or `}`).
            skip = false;
            kept.extend(
                word.chars()
                    .skip_while(|c| c.is_alphanumeric() || *c == '_'),
            );
        } else if word == "as" {
            skip = true;
        } else {
            kept.push_str(word);
        }
    }
    kept
}

/// Expands one use tree (`a::{b,c::d}`) into paths.
fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree.find('{') {
        None => {
            let mut path = prefix.clone();
            path.extend(
                tree.split("::")
                    .filter(|s| !s.is_empty() && *s != "*")
                    .map(str::to_owned),
            );
            if path.last().map(String::as_str) == Some("self") {
                path.pop();
            }
            out.push(path);
        }
        Some(open) => {
            let head: Vec<String> = tree[..open]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let before = prefix.len();
            prefix.extend(head);
            let mut level = 0;
            let mut part = String::new();
            for c in inner.chars() {
                match c {
                    '{' => level += 1,
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        if !part.is_empty() {
                            expand(&part, prefix, out);
                        }
                        part.clear();
                        continue;
                    }
                    _ => {}
                }
                part.push(c);
            }
            if !part.is_empty() {
                expand(&part, prefix, out);
            }
            prefix.truncate(before);
        }
    }
}

/// `crate::a::b` and `super::c` paths written in code outside `use`.
fn inline_paths(source: &Source) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let code = &source.code;
    for start in ["crate::", "super::", "self::"] {
        let mut at = 0;
        while let Some(offset) = code[at..].find(start) {
            let begin = at + offset;
            at = begin + start.len();
            let before = code[..begin].chars().next_back();
            // `super::super::x` is one path, read from its first `super`.
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                continue;
            }
            let text: String = code[begin..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            // `a::{b, c}` and `a::*` belong to a `use`, read whole there.
            if text.ends_with("::") {
                continue;
            }
            let path: Vec<String> = text
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            found.push(path);
        }
    }
    found
}

/// Which files each file takes names from, with the names.
fn edges(tree: &Tree) -> BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>> {
    let mut edges: BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>> = BTreeMap::new();
    for (from, source) in tree.files.iter().enumerate() {
        for path in source.imports.iter().cloned().chain(inline_paths(source)) {
            let Some(target) = tree.absolute(from, &path) else {
                continue;
            };
            let Some((to, item)) = tree.resolve(&target, 0) else {
                continue;
            };
            // A module's root file composes its own children: using them
            // is what it is for, and not an arrow back up.
            let child = tree.files[to].module.starts_with(&source.module)
                && tree.files[to].module.len() > source.module.len();
            if to != from && !child {
                let name = item.unwrap_or_else(|| target.last().cloned().unwrap_or_default());
                edges
                    .entry(from)
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(name);
            }
        }
    }
    edges
}

/// Every circle of files (a strongly connected set of two or more), each
/// written as its arrows with the names that tie them.
fn circles(tree: &Tree) -> Vec<String> {
    let edges = edges(tree);
    let n = tree.files.len();
    // Tarjan's algorithm, iteratively small enough to recurse here.
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    fn visit(v: usize, edges: &BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>>, s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in edges
            .get(&v)
            .map(|m| m.keys().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            match s.index[w] {
                None => {
                    visit(w, edges, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(v, &edges, &mut state);
        }
    }
    let name = |i: usize| tree.files[i].path.display().to_string();
    state
        .found
        .iter()
        .map(|component| {
            let members: BTreeSet<usize> = component.iter().copied().collect();
            let mut arrows = Vec::new();
            for &from in &members {
                for (to, names) in edges.get(&from).into_iter().flatten() {
                    if members.contains(to) {
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        arrows.push(format!(
                            "  {} -> {}: {}",
                            name(from),
                            name(*to),
                            names.join(", ")
                        ));
                    }
                }
            }
            arrows.join("\n")
        })
        .collect()
}

#[test]
fn no_two_files_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let tree = Tree::read(&src);
    assert!(tree.files.len() > 100, "read {} files", tree.files.len());
    let found = circles(&tree);
    assert!(
        found.is_empty(),
        "file-level import circles in src/ (move the shared names down into a file both can \
         import, or invert one arrow):\n{}",
        found.join("\n\n")
    );
}

/// The check sees a circle when there is one, through `use`, inline paths
/// and re-exports, and not when a facade only re-exports.
#[test]
fn a_circle_is_found_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod a;\npub use a::Api;\n");
    write(
        "a/mod.rs",
        "mod one;\nmod two;\nmod three;\npub use one::Api;\n",
    );
    write(
        "a/one.rs",
        "use super::two::{Helper as H, other::{self}};\npub struct Api;\n",
    );
    write(
        "a/two.rs",
        "pub struct Helper;\npub fn f() { super::three::g(); }\n",
    );
    write(
        "a/three.rs",
        "// use super::one::Api;  (a comment is no import)\n\
         pub fn g() { let _ = crate::Api; }\n#[cfg(test)]\nmod tests { use super::super::two::Helper; }\n",
    );
    let tree = Tree::read(src);
    let found = circles(&tree);
    assert_eq!(found.len(), 1, "{found:?}");
    let circle = &found[0];
    assert!(
        circle.contains("src/a/one.rs -> ") && circle.contains("two.rs: Helper"),
        "{circle}"
    );
    assert!(
        circle.contains("src/a/two.rs -> ") && circle.contains("three.rs: g"),
        "{circle}"
    );
    // `crate::Api` is followed through two re-exports to where it is defined.
    assert!(
        circle.contains("src/a/three.rs -> ") && circle.contains("one.rs: Api"),
        "{circle}"
    );

    // Break the circle: the test module's import does not count.
    write(
        "a/three.rs",
        "pub fn g() {}\n#[cfg(test)]\nmod tests { use super::super::one::Api; }\n",
    );
    assert!(circles(&Tree::read(src)).is_empty());

    // A root file that uses the children it is made of, which use it back,
    // is no circle; two of its children that do so are.
    write(
        "a/mod.rs",
        "mod one;\nmod two;\nmod three;\nuse one::Api;\npub fn helper() -> Api { Api }\n",
    );
    write(
        "a/two.rs",
        "pub struct Helper;\npub fn f() { super::helper(); }\n",
    );
    assert!(circles(&Tree::read(src)).is_empty());
    write("a/two.rs", "use super::one::Api;\npub struct Helper;\n");
    let found = circles(&Tree::read(src));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("src/a/two.rs -> src/a/one.rs: Api"),
        "{found:?}"
    );
}
