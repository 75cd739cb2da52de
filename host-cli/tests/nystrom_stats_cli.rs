//! Nyström statistics (`ranklet stats --kernel K --basis M`, `--landmarks`)
//! and `ranklet train --from-stats` on them, against the in-memory
//! learners: with every row a landmark the model is the exact kernel
//! RankRLS; with `M < n` landmarks it is `ranklet train --data --basis M`
//! (RLS, RankRLS, KPCR, KPCRank; the same landmarks, since the sample is
//! every row in file order); shards in any partitioning — queries split
//! across shards, rows of a query far apart — give the whole file's model;
//! shards of another kernel or other landmarks are refused naming both
//! files, nothing written.

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use support::{assert_bad_input, os, ranklet, Scratch};

/// `nq` queries of 3 to 9 dense rows over `d` features, labels a smooth
/// function of the features plus noise, queries on consecutive lines in
/// increasing qid order (so the in-memory learners' rows, grouped by query,
/// are in file order). Returns the lines.
fn letor(nq: u64, d: usize, seed: u64) -> Vec<String> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut lines = Vec::new();
    for q in 0..nq {
        for _ in 0..3 + (next() * 7.0) as usize {
            let x: Vec<f64> = (0..d).map(|_| next() * 4.0 - 2.0).collect();
            let y = x[0] - 0.5 * x[1] * x[d - 1] + 0.3 * next();
            let mut line = format!("{y:.6} qid:{}", 10 + q);
            for (j, v) in x.iter().enumerate() {
                line.push_str(&format!(" {}:{v:.6}", j + 1));
            }
            lines.push(line);
        }
    }
    lines
}

fn text(ls: &[String]) -> String {
    ls.iter().map(|l| format!("{l}\n")).collect()
}

fn args(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

fn run_ok(dir: &Scratch, a: Vec<OsString>) -> support::Run {
    let run = ranklet(dir, a);
    assert_eq!(run.code, Some(0), "{run:?}");
    run
}

/// `ranklet stats` of `data` with `extra` flags into `in/<name>`.
fn stats(dir: &Scratch, data: &[&Path], extra: &[&str], name: &str) -> PathBuf {
    let out = dir.root.join("in").join(name);
    let mut a = args(&["stats"]);
    a.extend(args(extra));
    a.push("--data".into());
    a.extend(data.iter().map(|p| os(p)));
    a.extend(["-o".into(), os(&out)]);
    run_ok(dir, a);
    out
}

/// Trains `extra` from `input` into `in/<name>` (f64) and returns the f64
/// scores of the rows of `data`.
fn scores(dir: &Scratch, input: Vec<OsString>, extra: &[&str], name: &str, data: &Path) -> Vec<f64> {
    let model = dir.root.join("in").join(name);
    let mut a = args(&["train", "--precision", "f64"]);
    a.extend(input);
    a.extend(args(extra));
    a.extend(["-o".into(), os(&model)]);
    run_ok(dir, a);
    let run = run_ok(
        dir,
        vec![
            "score".into(),
            "--precision".into(),
            "f64".into(),
            "--model".into(),
            os(&model),
            "--data".into(),
            os(data),
        ],
    );
    run.stdout.lines().map(|l| l.trim().parse().unwrap()).collect()
}

fn from_stats(files: &[PathBuf]) -> Vec<OsString> {
    let mut a = vec![OsString::from("--from-stats")];
    a.extend(files.iter().map(|f| os(f)));
    a
}

fn data_arg(p: &Path) -> Vec<OsString> {
    vec!["--data".into(), os(p)]
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert_eq!(got.len(), want.len(), "{what}");
    let worst = got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    assert!(worst <= tol * scale, "{what}: max |Δ| {worst:e} > {tol:e} × {scale}");
}

/// Every row a landmark (`--basis` ≥ n, the sample all rows): the Nyström
/// features span the kernel's feature space, so Nyström RankRLS is the
/// exact kernel RankRLS (`(𝓛K + λI)a = 𝓛s`) — scores to 1e-9 relative.
/// Tolerance: the two solve different but equivalent systems (the primal
/// in `G = K·L⁻ᵀ`, the dual in `K`); their difference is bounded by
/// `cond(K)·ε` times the scores, and with γ = 0.3 on 4 features spread over
/// [−2, 2] the 60-row kernel matrix has condition number below 10⁶ (its
/// pivoted Cholesky takes all rows at the `n·ε` tolerance), so 1e-9 leaves
/// a margin of 100 over ~1e-11; measured ~1e-14.
#[test]
fn every_row_a_landmark_is_exact_kernel_rankrls() {
    let dir = Scratch::new("nys-exact");
    let lines = letor(10, 4, 7);
    let n = lines.len();
    let all = dir.input("all.light", text(&lines));
    let rks = stats(&dir, &[&all], &["--kernel", "rbf:0.3", "--basis", &n.to_string(), "--sample", "100000"], "a.rks");
    let v = fs::read(&rks).unwrap();
    let view = ranklet_core::format::stats::StatsView::new_checked(&v).unwrap();
    assert_eq!(view.shape().d, n, "all {n} rows are landmarks");
    for weight in ["equal", "pairs"] {
        let rks = stats(
            &dir,
            &[&all],
            &["--kernel", "rbf:0.3", "--basis", "1000", "--query-weight", weight],
            &format!("{weight}.rks"),
        );
        let common = ["--algo", "rankrls", "--lambda", "0.05", "--query-weight", weight];
        let got = scores(&dir, from_stats(&[rks]), &common, "ns.rkl", &all);
        let want = scores(&dir, data_arg(&all), &[&common[..], &["--kernel", "rbf:0.3"]].concat(), "ex.rkl", &all);
        assert_close(&got, &want, 1e-9, weight);
    }
}

/// `M < n` landmarks: the statistics' model equals `ranklet train --data
/// --kernel rbf:G --basis M` on the same rows (the same pivoted Cholesky on
/// the same rows in the same order chooses the same landmarks), scores to
/// 1e-9 relative, for RLS, RankRLS (both weightings), KPCR and KPCRank.
/// The two differ only in how `φ` is computed (the Cholesky recursion vs a
/// triangular solve with `L`, both backward stable in `cond(L)`).
#[test]
fn fewer_landmarks_equal_the_in_memory_basis_fit() {
    let dir = Scratch::new("nys-basis");
    let lines = letor(25, 5, 11);
    let all = dir.input("all.light", text(&lines));
    for (algo, weight, extra) in [
        ("rankrls", "equal", vec!["--lambda", "0.1"]),
        ("rankrls", "pairs", vec!["--lambda", "0.1"]),
        ("rls", "equal", vec!["--lambda", "0.1"]),
        ("kpcrank", "equal", vec!["--lambda", "0", "--components", "7"]),
        ("kpcrank", "pairs", vec!["--lambda", "0.2", "--components", "10"]),
        ("kpcr", "equal", vec!["--lambda", "0", "--components", "6"]),
    ] {
        let rks = stats(
            &dir,
            &[&all],
            &["--kernel", "rbf:0.2", "--basis", "18", "--query-weight", weight],
            &format!("{algo}{weight}.rks"),
        );
        let common = [&["--algo", algo, "--query-weight", weight][..], &extra].concat();
        let got = scores(&dir, from_stats(&[rks]), &common, "ns.rkl", &all);
        let want = scores(
            &dir,
            data_arg(&all),
            &[&common[..], &["--kernel", "rbf:0.2", "--basis", "18"]].concat(),
            "mem.rkl",
            &all,
        );
        assert_close(&got, &want, 1e-9, &format!("{algo} {weight}"));
    }
}

/// Shards in several random partitionings of the rows — each shard a random
/// subset, so queries are split across shards and a query's rows are far
/// apart (`--keep-queries`) — all with the whole file's landmarks
/// (`--landmarks`), merged, give the whole file's model to 1e-10 relative
/// (sums are compensated; the merge order is the shard order): RankRLS,
/// RLS and KPCRank, and with `--cv 4` the same table (mean and std of every (λ, p) to
/// 1e-10 relative, read at full precision from the models' `cv.i` metadata).
#[test]
fn shards_in_any_partitioning_equal_the_whole() {
    let dir = Scratch::new("nys-shards");
    let lines = letor(30, 4, 23);
    let all = dir.input("all.light", text(&lines));
    let map = stats(&dir, &[&all], &["--kernel", "rbf:0.4", "--basis", "15", "--cv", "4", "--keep-queries"], "map.rks");
    let mut s = 0x2545_f491_4f6c_dd1du64;
    for trial in 0..3 {
        let k = 2 + trial;
        let mut parts: Vec<Vec<String>> = vec![Vec::new(); k];
        for l in &lines {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            parts[(s % k as u64) as usize].push(l.clone());
        }
        let rks: Vec<PathBuf> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let f = dir.input(&format!("t{trial}p{i}.light"), text(p));
                stats(
                    &dir,
                    &[&f],
                    &["--landmarks", &map.display().to_string(), "--cv", "4", "--keep-queries"],
                    &format!("t{trial}p{i}.rks"),
                )
            })
            .collect();
        for extra in [
            vec!["--algo", "rankrls", "--lambda", "0.1"],
            vec!["--algo", "rls", "--lambda", "0.1"],
            vec!["--algo", "kpcrank", "--lambda", "0", "--components", "6"],
        ] {
            let got = scores(&dir, from_stats(&rks), &extra, "sh.rkl", &all);
            let want = scores(&dir, from_stats(std::slice::from_ref(&map)), &extra, "wh.rkl", &all);
            assert_close(&got, &want, 1e-10, &format!("trial {trial} {extra:?}"));
        }
        // The table at full precision: the model's `cv.i` metadata (the
        // printed table has 6 decimals), (mean, std) per (λ, p).
        let table = |files: &[PathBuf]| {
            let model = dir.root.join("in").join("cv.rkl");
            let mut a = args(&["train", "--algo", "kpcrank", "--cv", "4", "--lambda", "0,1", "--components", "3,6"]);
            a.extend(from_stats(files));
            a.extend(["-o".into(), os(&model)]);
            let run = run_ok(&dir, a);
            assert_eq!(run.stdout.lines().skip(2).count(), 4, "{run:?}");
            let bytes = fs::read(&model).unwrap();
            let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
            (0..4)
                .map(|i| {
                    let line = view.metadata_get(&format!("cv.{i}")).unwrap().to_string();
                    let field = |k: &str| -> f64 {
                        line.split_whitespace().find_map(|t| t.strip_prefix(k)).unwrap().parse().unwrap()
                    };
                    (line.split(" mean=").next().unwrap().to_string(), [field("mean="), field("std=")])
                })
                .collect::<Vec<_>>()
        };
        let (a, b) = (table(&rks), table(std::slice::from_ref(&map)));
        for ((pa, x), (pb, y)) in a.iter().zip(&b) {
            assert_eq!(pa, pb);
            // Both relative to the mean: the std is a spread of values of
            // that size.
            for (what, g, w) in [("mean", x[0], y[0]), ("std", x[1], y[1])] {
                assert!((g - w).abs() <= 1e-10 * y[0].abs(), "cv table {pa}: {what} {g} vs {w}");
            }
        }
    }
}

/// Shards with another kernel, or other landmarks (another sample seed), or
/// linear statistics, are refused naming both files and both maps; a
/// linear file given to `--landmarks` is refused by name; exit 2, nothing
/// written.
#[test]
fn other_maps_are_refused_naming_both() {
    let dir = Scratch::new("nys-bad");
    let lines = letor(20, 4, 5);
    let (a, b) = (dir.input("a.light", text(&lines[..40])), dir.input("b.light", text(&lines[40..])));
    let good = stats(&dir, &[&a], &["--kernel", "rbf:0.3", "--basis", "10", "--sample", "20", "--seed", "3"], "g.rks");
    let kernel =
        stats(&dir, &[&b], &["--kernel", "rbf:0.5", "--basis", "10", "--sample", "20", "--seed", "3"], "k.rks");
    let marks = stats(&dir, &[&b], &["--kernel", "rbf:0.3", "--basis", "10", "--sample", "20", "--seed", "3"], "l.rks");
    let linear = stats(&dir, &[&b], &["--seed", "3"], "lin.rks");
    let model = dir.out("m.rkl");
    for (bad, says) in [(&kernel, "rbf:0.5"), (&marks, "fingerprint"), (&linear, "linear features")] {
        let mut a = args(&["train", "--algo", "rankrls"]);
        a.extend(from_stats(&[good.clone(), bad.clone()]));
        a.extend(["-o".into(), os(&model)]);
        let run = ranklet(&dir, a);
        assert_bad_input(&run, &dir, Some(bad), None, &[&good.display().to_string(), says, "feature map"]);
    }
    let out = dir.out("s.rks");
    let run = ranklet(
        &dir,
        [OsString::from("stats"), "--data".into(), os(&b), "--landmarks".into(), os(&linear), "-o".into(), os(&out)],
    );
    assert_bad_input(&run, &dir, Some(&linear), None, &["landmarks"]);
    let mut a = args(&["train", "--algo", "kpcrank", "--components", "3"]);
    a.extend(from_stats(std::slice::from_ref(&linear)));
    a.extend(["-o".into(), os(&model)]);
    let run = ranklet(&dir, a);
    assert_bad_input(&run, &dir, Some(&linear), None, &["Nyström"]);
    let mut a = args(&["train", "--algo", "kpcrank", "--components", "11"]);
    a.extend(from_stats(std::slice::from_ref(&good)));
    a.extend(["-o".into(), os(&model)]);
    let run = ranklet(&dir, a);
    assert_bad_input(&run, &dir, None, None, &["--components 11"]);
}
