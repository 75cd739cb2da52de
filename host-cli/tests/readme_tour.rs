//! The README's Quick tour runs as written: the first `sh` block after the
//! `## Quick tour` heading is run by bash (`-euo pipefail`) from the
//! repository root, with this build's `ranklet` as the block's `R` (through
//! `CARGO_TARGET_DIR`, which the block reads) and `TMPDIR` pointing at a
//! scratch folder. It must succeed, cover every data kind, write the files
//! it names into its own scratch folder, and leave the repository as it was
//! (no file added, removed or changed outside `target/` and `.git/`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

/// The tour block: the first fenced `sh` block after `## Quick tour`.
fn tour_block(readme: &str) -> String {
    let start = readme.find("\n## Quick tour").expect("README.md has a `## Quick tour` section");
    let rest = &readme[start..];
    let open = rest.find("\n```sh\n").expect("a ```sh block in the Quick tour") + "\n```sh\n".len();
    let len = rest[open..].find("\n```").expect("the tour block is closed");
    rest[open..open + len].to_string()
}

/// Every file of the repository outside `target/` and `.git/`, with its
/// length and modification time.
fn snapshot(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, (u64, Option<SystemTime>)>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("dir entry");
        let path = entry.path();
        let rel = path.strip_prefix(root).expect("under root").to_path_buf();
        if dir == root && (rel == Path::new("target") || rel == Path::new(".git")) {
            continue;
        }
        let meta = entry.metadata().expect("metadata");
        if meta.is_dir() {
            snapshot(&path, root, out);
        } else {
            out.insert(rel, (meta.len(), meta.modified().ok()));
        }
    }
}

#[test]
fn readme_quick_tour_runs_as_written_into_a_scratch_folder() {
    let root = repo();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("read README.md");
    let block = tour_block(&readme);
    for must in [
        "--algo rankrls",
        "--algo kpcrank",
        "--cv",
        " score ",
        " eval ",
        " inspect ",
        " export ",
        "--algo pref-gp",
        "--algo xpgp",
        " suggest ",
        "--algo kron-rls",
        " rank ",
        "--algo err",
        "rcdr",
    ] {
        assert!(block.contains(must), "the README's Quick tour no longer shows `{}`:\n{block}", must.trim());
    }

    let bin = Path::new(env!("CARGO_BIN_EXE_ranklet"));
    // <target dir>/<profile dir>/ranklet: the block finds the binary as
    // ${CARGO_TARGET_DIR:-target}/debug/ranklet.
    let profile_dir = bin.parent().expect("bin dir");
    assert_eq!(profile_dir.file_name().and_then(|n| n.to_str()), Some("debug"), "{}", bin.display());
    let target_dir = profile_dir.parent().expect("target dir");

    let scratch = std::env::temp_dir().join(format!("ranklet-readme-tour-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("create scratch");

    let mut before = BTreeMap::new();
    snapshot(&root, &root, &mut before);
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c"])
        .arg(&block)
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", target_dir)
        .env("TMPDIR", &scratch)
        .output()
        .expect("run bash");
    let log = format!(
        "exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the README's Quick tour failed:\n{log}");

    let mut after = BTreeMap::new();
    snapshot(&root, &root, &mut after);
    let changed: BTreeSet<String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| k.display().to_string())
        .collect();
    assert!(changed.is_empty(), "the Quick tour touched the repository: {changed:?}\n{log}");

    // The block's `T=$(mktemp -d)` is the one folder in the scratch.
    let dirs: Vec<PathBuf> = std::fs::read_dir(&scratch)
        .expect("read scratch")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}\n{log}");
    for f in ["m.rkl", "k.rkl", "m.scores", "my_model.c", "my_model.h", "p.rkl", "x.rkl", "dt.rkl", "order.rkl"] {
        assert!(dirs[0].join(f).is_file(), "the tour did not write {f} into its scratch folder\n{log}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
