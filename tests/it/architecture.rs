//! The house rules of docs/ARCHITECTURE.md that the compiler does not check: no import
//! circle between the top-level modules of `src/` or between the files of a folder, no file
//! over 600 lines, no function over 60 lines, no `static` that can change, except the ones
//! docs/ARCHITECTURE.md lists with their reason. A listed exception that has come back under its limit fails too, so
//! the lists cannot go stale.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const FILE_LINES: usize = 600;
const FUNCTION_LINES: usize = 60;

/// The rows of the table under `heading` in docs/ARCHITECTURE.md: its first column without
/// the backquotes (a file, or `file::function`), each listed with its reason.
fn listed(heading: &str) -> BTreeSet<String> {
    let page =
        fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md");
    let table = page
        .split_once(heading)
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has no '{heading}'"))
        .1;
    table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            assert!(
                cells.get(2).is_some_and(|why| !why.is_empty()),
                "{name} is listed without its reason"
            );
            Some(name.to_string())
        })
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file of the library and the binary, as `src/...` paths with their text.
fn sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    files
        .into_iter()
        .map(|path| {
            let name = path.strip_prefix(root()).unwrap().display().to_string();
            (name, fs::read_to_string(&path).unwrap())
        })
        .collect()
}

/// The text before the file's test module (tests may import from anywhere).
fn without_tests(text: &str) -> &str {
    let lines: Vec<&str> = text.lines().collect();
    let mut offset = 0;
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).map_or("", |l| l.trim_start());
        if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") {
            return &text[..offset];
        }
        offset += line.len() + 1;
    }
    text
}

/// The top-level module a source file belongs to: `src/pipeline/run.rs` -> `pipeline`.
fn top_module(path: &str) -> String {
    let rest = path.trim_start_matches("src/");
    let first = rest.split('/').next().unwrap();
    first.trim_end_matches(".rs").to_string()
}

/// The top-level modules a file's code names through `crate::`, doc comments left out.
fn imports(text: &str) -> BTreeSet<String> {
    names_after(text, "crate::")
}

/// The first names a file's code takes after each `prefix` (`crate::`, `super::`), groups
/// `{a::X, b}` read, doc comments and the test module left out.
fn names_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let code: String = without_tests(text)
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find(prefix) {
        rest = &rest[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && c == ',') {
                    if let Some(name) = leading_ident(item.trim()) {
                        found.insert(name);
                    }
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else if depth == 1 || item.trim().is_empty() {
                    item.push(c);
                }
            }
        } else if let Some(name) = leading_ident(rest) {
            found.insert(name);
        }
    }
    found
}

fn leading_ident(text: &str) -> Option<String> {
    let ident: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!ident.is_empty()).then_some(ident)
}

/// The import graph between top-level modules of the library (the binary's `cli` and
/// `main` import only the library).
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let modules: BTreeSet<String> = sources().iter().map(|(p, _)| top_module(p)).collect();
    for (path, text) in sources() {
        let from = top_module(&path);
        if from == "lib" {
            continue;
        }
        let entry = graph.entry(from.clone()).or_default();
        for to in imports(&text) {
            if to != from && modules.contains(&to) {
                entry.insert(to);
            }
        }
    }
    graph
}

/// A circle through `start`, if any, as the path of modules.
fn circle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in graph.get(&node).into_iter().flatten() {
            if next == start {
                let mut circle = path.clone();
                circle.push(start.to_string());
                return Some(circle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_import_circle_between_top_level_modules() {
    let graph = module_graph();
    let circles: Vec<String> = graph
        .keys()
        .filter_map(|m| circle_from(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}

/// The import graph between the files of each folder module (`src/structures/blocks.rs`
/// -> `block_simd`), by the names a file takes through `super::` or its folder's
/// `crate::FOLDER::` path; a folder's `mod.rs` (its registry) left out.
fn file_graphs() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut folders: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let sources = sources();
    let stem = |path: &str| -> Option<(String, String)> {
        let (folder, file) = path.rsplit_once('/')?;
        let name = file.strip_suffix(".rs")?;
        (folder != "src" && name != "mod").then(|| (folder.to_string(), name.to_string()))
    };
    for (path, text) in &sources {
        let Some((folder, name)) = stem(path) else {
            continue;
        };
        let inside = format!(
            "crate::{}::",
            folder.trim_start_matches("src/").replace('/', "::")
        );
        let named: BTreeSet<String> = names_after(text, "super::")
            .into_iter()
            .chain(names_after(text, &inside))
            .collect();
        folders.entry(folder).or_default().insert(name, named);
    }
    for files in folders.values_mut() {
        let siblings: BTreeSet<String> = files.keys().cloned().collect();
        for (name, named) in files.iter_mut() {
            named.retain(|n| n != name && siblings.contains(n));
        }
    }
    folders
}

#[test]
fn no_import_circle_between_the_files_of_a_folder() {
    let circles: Vec<String> = file_graphs()
        .iter()
        .flat_map(|(folder, graph)| {
            graph
                .keys()
                .filter_map(|f| circle_from(graph, f))
                .map(move |c| format!("{folder}: {}", c.join(" -> ")))
        })
        .collect();
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let text = "use crate::{error::Result, hash::{A, B}};\nuse crate::keys::X;\n";
    let names = imports(text);
    assert_eq!(
        names,
        ["error", "hash", "keys"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    graph.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circle_from(&graph, "a").unwrap(), ["a", "b", "a"]);
}

#[test]
fn no_file_over_the_limit_but_the_listed() {
    let long: BTreeSet<String> = sources()
        .into_iter()
        .filter(|(_, text)| text.lines().count() > FILE_LINES)
        .map(|(path, _)| path)
        .collect();
    let listed = listed("Files over 600 lines");
    let unlisted: Vec<_> = long.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&long).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "files over {FILE_LINES} lines not listed: {unlisted:?}; listed but now within: {stale:?}"
    );
}

/// Every function with its length in lines, from its `fn` line to the closing brace at the
/// same indentation (rustfmt's layout).
fn functions(path: &str, text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let Some(at) = trimmed.find("fn ") else {
            continue;
        };
        let head = &trimmed[..at];
        let is_fn = head.split_whitespace().all(|w| {
            [
                "pub",
                "pub(crate)",
                "pub(super)",
                "const",
                "unsafe",
                "async",
                "extern",
            ]
            .contains(&w)
                || w.starts_with("pub(")
                || w.starts_with("extern")
        });
        if !is_fn || trimmed.ends_with(';') || trimmed.ends_with("{}") {
            continue;
        }
        let name = leading_ident(&trimmed[at + 3..]).unwrap_or_default();
        if trimmed.ends_with('}') {
            // A body on the signature's line (`fn f() {}`): one line.
            found.push((format!("{path}::{name}"), 1));
            continue;
        }
        let close = " ".repeat(indent) + "}";
        if let Some(end) = lines[i..].iter().position(|l| *l == close) {
            found.push((format!("{path}::{name}"), end + 1));
        }
    }
    found
}

#[test]
fn no_function_over_the_limit_but_the_listed() {
    let long: BTreeMap<String, usize> = sources()
        .iter()
        .flat_map(|(path, text)| functions(path, without_tests(text)))
        .filter(|(_, lines)| *lines > FUNCTION_LINES)
        .collect();
    let listed = listed("Functions over 60 lines:");
    let unlisted: Vec<_> = long.iter().filter(|(f, _)| !listed.contains(*f)).collect();
    let stale: Vec<_> = listed.iter().filter(|f| !long.contains_key(*f)).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "functions over {FUNCTION_LINES} lines not listed: {unlisted:?}; listed but now within: {stale:?}"
    );
}

/// The `static` items of a file whose value can change: any `static` but one holding a
/// descriptor, a text, a number or a table of them (no interior mutability in its type).
fn mutable_statics(path: &str, text: &str) -> Vec<String> {
    const CHANGING: [&str; 7] = [
        "Atomic", "Mutex", "RwLock", "Cell", "OnceLock", "LazyLock", "Once",
    ];
    text.lines()
        .filter_map(|line| {
            let trimmed = line.trim_start();
            let rest = trimmed
                .strip_prefix("static ")
                .or_else(|| trimmed.split_once(" static ").map(|(_, r)| r))?;
            let rest = rest.strip_prefix("mut ").unwrap_or(rest);
            let (name, ty) = rest.split_once(':')?;
            let ty = ty.split('=').next().unwrap_or_default();
            let changes =
                trimmed.contains("static mut ") || CHANGING.iter().any(|c| ty.contains(c));
            changes.then(|| format!("{path}::{}", name.trim()))
        })
        .collect()
}

#[test]
fn no_process_wide_state_but_the_listed() {
    let found: BTreeSet<String> = sources()
        .iter()
        .flat_map(|(path, text)| mutable_statics(path, without_tests(text)))
        .collect();
    let listed = listed("State shared by the whole process");
    let unlisted: Vec<_> = found.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&found).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "statics that can change not listed: {unlisted:?}; listed but gone: {stale:?}"
    );
}

#[test]
fn the_state_finder_finds_a_global() {
    let text = "static KEY_FORM: AtomicU8 = AtomicU8::new(0);\n\
                pub static REGISTRY: &[&Structure] = &[];\n\
                pub(crate) static PARAMS: Mutex<Vec<u8>> = Mutex::new(Vec::new());";
    assert_eq!(
        mutable_statics("src/x.rs", text),
        ["src/x.rs::KEY_FORM", "src/x.rs::PARAMS"]
    );
}
