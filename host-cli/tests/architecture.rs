//! `docs/architecture.md` lists every module: each `.rs` file under
//! `core/src`, `ffi/src` and `host-cli/src` has exactly one row in the
//! table of its crate, no row names a file that does not exist, and the rows
//! are sorted by path (so that branches adding files merge without
//! conflicts in one place). The convention is the one written at the top
//! of the page's "The tree" section: a heading `### <crate>/src`, then
//! rows whose first cell is the path relative to that directory in
//! backticks.

use std::collections::BTreeMap;
use std::path::Path;

const TREES: [&str; 3] = ["core/src", "ffi/src", "host-cli/src"];

/// Every `.rs` file under `dir`, as a `/`-separated path relative to `root`.
fn sources(dir: &Path, root: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under root");
            let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            out.push(parts.join("/"));
        }
    }
}

/// The rows of each tree's table: (path, line number in the page).
fn rows(page: &str) -> BTreeMap<&'static str, Vec<(String, usize)>> {
    let mut tables: BTreeMap<&'static str, Vec<(String, usize)>> = BTreeMap::new();
    let mut current: Option<&'static str> = None;
    for (i, line) in page.lines().enumerate() {
        if line.starts_with('#') {
            current = line
                .strip_prefix("### ")
                .and_then(|h| TREES.iter().copied().find(|t| h.split_whitespace().next() == Some(t)));
            if let Some(t) = current {
                assert!(!tables.contains_key(t), "docs/architecture.md:{}: a second table for {t}", i + 1);
                tables.insert(t, Vec::new());
            }
            continue;
        }
        let Some(tree) = current else { continue };
        let Some(cell) = line.strip_prefix("| `") else { continue };
        let path = cell.split('`').next().unwrap_or_default();
        tables.get_mut(tree).expect("table started").push((path.to_string(), i + 1));
    }
    tables
}

#[test]
fn every_source_file_has_one_row_in_architecture_md() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let page = std::fs::read_to_string(repo.join("docs/architecture.md")).expect("read docs/architecture.md");
    let tables = rows(&page);
    let mut problems = Vec::new();
    for tree in TREES {
        let dir = repo.join(tree);
        let mut files = Vec::new();
        sources(&dir, &dir, &mut files);
        files.sort();
        let Some(rows) = tables.get(tree) else {
            problems.push(format!("no table under a heading `### {tree}`"));
            continue;
        };
        for f in &files {
            match rows.iter().filter(|(p, _)| p == f).count() {
                0 => problems.push(format!("{tree}/{f}: no row (add one under `### {tree}`: | `{f}` | what it is |)")),
                1 => {}
                n => problems.push(format!("{tree}/{f}: {n} rows")),
            }
        }
        for (p, line) in rows {
            if files.binary_search(p).is_err() {
                problems.push(format!(
                    "docs/architecture.md:{line}: `{p}` is not a .rs file under {tree} (one file per row, path relative to {tree})"
                ));
            }
        }
        for w in rows.windows(2) {
            if w[0].0 > w[1].0 {
                problems.push(format!(
                    "docs/architecture.md:{}: `{}` comes after `{}`; rows are sorted by path",
                    w[1].1, w[1].0, w[0].0
                ));
            }
        }
    }
    assert!(problems.is_empty(), "docs/architecture.md is out of step with the sources:\n{}", problems.join("\n"));
}
