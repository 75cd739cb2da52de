//! core's layers import only downwards: the model format (`src/format`)
//! imports nothing from the learners (`src/learn`), which build themselves
//! from parsed views and write themselves as models; the shared maths below
//! both (`special.rs`, `kernel.rs`) imports neither. Reads every source
//! file outside comments and test code (files `tests.rs` / `*_tests.rs`,
//! and everything from a file's first `#[cfg(test)]` on: a test may check a
//! learner against the format) and fails naming the file and line of a
//! forbidden `crate::<layer>` path.

use std::path::{Path, PathBuf};

/// `(file or folder under src, layers it must not name)`.
const RULES: &[(&str, &[&str])] =
    &[("format", &["learn"]), ("special.rs", &["learn", "format"]), ("kernel.rs", &["learn", "format"])];

fn sources(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("read dir") {
            sources(&entry.expect("dir entry").path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// `(line number, line)` of each use of a forbidden layer in `text`:
/// `crate::<layer>` or a `crate::{…}` group naming it, outside comments and
/// from the first `#[cfg(test)]` on ignored.
fn forbidden(text: &str, layers: &[&str]) -> Vec<(usize, String)> {
    let mut hits = Vec::new();
    let mut in_group = false;
    for (k, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        let code = code.split("//").next().unwrap_or("");
        let names_layer = |s: &str| {
            layers.iter().any(|l| {
                s.match_indices(l).any(|(at, _)| {
                    let before = s[..at].chars().next_back();
                    let after = s[at + l.len()..].chars().next();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                        && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            })
        };
        let direct =
            layers.iter().any(|l| code.contains(&format!("crate::{l}::")) || code.contains(&format!("crate::{l};")));
        let group_start = code.contains("crate::{");
        let group = (group_start || in_group) && names_layer(code.split("crate::{").last().unwrap_or(""));
        if group_start && !code.contains('}') {
            in_group = true;
        } else if in_group && code.contains('}') {
            in_group = false;
        }
        if direct || group {
            hits.push((k + 1, line.to_string()));
        }
    }
    hits
}

#[test]
fn format_and_shared_maths_import_no_learner() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    let mut seen = 0;
    for (place, layers) in RULES {
        let mut files = Vec::new();
        sources(&src.join(place), &mut files);
        assert!(!files.is_empty(), "{place} not found under {}", src.display());
        for f in files {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            seen += 1;
            let text = std::fs::read_to_string(&f).expect("read source");
            for (line, code) in forbidden(&text, layers) {
                bad.push(format!("{}:{line}: {}", f.strip_prefix(&src).unwrap_or(&f).display(), code.trim()));
            }
        }
    }
    assert!(seen > 10, "the walk saw only {seen} files");
    assert!(
        bad.is_empty(),
        "imports against the layer order (format and shared maths below the learners):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scan_finds_a_forbidden_import() {
    let l = &["learn"];
    assert_eq!(forbidden("use crate::learn::online::OnlineRankRls;", l).len(), 1);
    assert_eq!(forbidden("let p = crate::learn::pref::device::probit_prob(m, s);", l).len(), 1);
    assert_eq!(forbidden("use crate::{format::Values, learn::LearnError};", l).len(), 1);
    assert_eq!(forbidden("use crate::{\n    format::Values,\n    learn,\n};", l).len(), 1);
    // Comments, other names and test code are not imports.
    assert!(forbidden("/// [`crate::learn::kron`] fits it", l).is_empty());
    assert!(forbidden("use crate::learning::X;\nuse crate::{relearn, format};", l).is_empty());
    assert!(forbidden("fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::learn::kron;\n}", l).is_empty());
}
