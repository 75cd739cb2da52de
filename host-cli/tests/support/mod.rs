//! The harness shared by the CLI tests (`cli.rs`, `kron_cli.rs`): a
//! scratch directory with `in/` and `out/`, running the `ranklet` binary
//! in it, and the one contract for bad input.
#![allow(dead_code)]

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const BIN: &str = env!("CARGO_BIN_EXE_ranklet");

// ---------------------------------------------------------------------------
// A scratch directory and a way to run the binary in it.

pub struct Scratch {
    pub root: PathBuf,
}

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "ranklet-cli-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("in")).unwrap();
        fs::create_dir_all(root.join("out")).unwrap();
        Scratch { root }
    }
    /// Writes `in/<name>`.
    pub fn input(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.root.join("in").join(name);
        fs::write(&p, content).unwrap();
        p
    }
    /// `out/<name>` (not created).
    pub fn out(&self, name: &str) -> PathBuf {
        self.root.join("out").join(name)
    }
    /// Every entry of `out/`, hidden ones included.
    pub fn out_entries(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(self.root.join("out"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {:?}\n--- stdout ---\n{}--- stderr ---\n{}", self.code, self.stdout, self.stderr)
    }
}

pub fn ranklet<I, S>(dir: &Scratch, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let out = Command::new(BIN).args(&args).current_dir(&dir.root).output().expect("run ranklet");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

pub fn os(p: &Path) -> OsString {
    p.as_os_str().to_owned()
}

/// The contract for bad input: exit 2, nothing on stdout, a message on
/// stderr naming `file` (and `file:line:` when a line is to blame), and an
/// empty output directory (no model, no temporary).
pub fn assert_bad_input(run: &Run, dir: &Scratch, file: Option<&Path>, line: Option<usize>, also: &[&str]) {
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stdout.is_empty(), "stdout must be empty on error: {run:?}");
    assert!(run.stderr.starts_with("ranklet: ") || run.stderr.starts_with("error:"), "{run:?}");
    if let Some(f) = file {
        let name = f.display().to_string();
        match line {
            Some(l) => assert!(run.stderr.contains(&format!("{name}:{l}:")), "expected `{name}:{l}:` in {run:?}"),
            None => assert!(run.stderr.contains(&name), "expected the file name {name} in {run:?}"),
        }
    }
    for a in also {
        assert!(run.stderr.contains(a), "expected `{a}` in {run:?}");
    }
    assert_eq!(dir.out_entries(), Vec::<String>::new(), "the output directory must stay empty: {run:?}");
}

// ---------------------------------------------------------------------------
// Models written directly, for commands that read them.

/// A low-rank preference-GP model (kind 10, `f64`) over `n` items named
/// `it0`, `it1`, …, rank `p`: means `i/n`, per-item variances 0.1 and the
/// factor entries `scale·((i + t) mod 5 − 2)/5` (a large `scale` gives a
/// valid file whose variances overflow).
pub fn lowrank_pref_model(n: usize, p: usize, scale: f64) -> Vec<u8> {
    use ranklet_core::format::{ElementType, Model, ModelSpec, PrefLowRankModel, Values};
    let mean: Vec<f64> = (0..n).map(|i| i as f64 / n as f64).collect();
    let resid = vec![0.1; n];
    let factor: Vec<f64> = (0..n * p).map(|e| scale * (((e / p + e % p) % 5) as f64 - 2.0) / 5.0).collect();
    let names: String = (0..n).map(|i| format!("it{i}\n")).collect();
    let spec = ModelSpec::new(
        Model::PrefLowRank(PrefLowRankModel {
            sigma: 0.5,
            count: 0,
            rank: p,
            mean: Values::F64(&mean),
            resid: Values::F64(&resid),
            factor: Values::F64(&factor),
            item_names: &names,
        }),
        ElementType::F64,
    );
    let mut bytes = vec![0u8; spec.buffer_len()];
    spec.emit(&mut bytes).expect("a valid kind-10 model");
    bytes
}
