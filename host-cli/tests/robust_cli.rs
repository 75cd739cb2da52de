//! No size of ordinary data crashes `ranklet train`: linear RankRLS on
//! sparse rows takes the primal form (a `d × d` system, never the `n × n`
//! kernel matrix) and gives the dense fit's model; a buffer that cannot fit
//! in memory is refused before work starts, with its size and the way out,
//! exit 1 (a resource limit) or 2 (a feature index that makes it so); never
//! an abort.
//!
//! `RANKLET_MEMORY_LIMIT` sets the memory the run may use, so each refusal
//! is triggered at a small size.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

mod support;
use support::{assert_bad_input, lowrank_pref_model, os, Run, Scratch, BIN};

/// `ranklet args…` in `dir` with `RANKLET_MEMORY_LIMIT=limit` where given.
fn ranklet_limited(dir: &Scratch, limit: Option<&str>, args: &[OsString]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(&dir.root).env_remove("RANKLET_MEMORY_LIMIT");
    if let Some(l) = limit {
        cmd.env("RANKLET_MEMORY_LIMIT", l);
    }
    let out = cmd.output().expect("run ranklet");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

fn args(list: &[&str], data: &Path, model: &Path) -> Vec<OsString> {
    let mut v: Vec<OsString> = list.iter().map(OsString::from).collect();
    v.extend(["--data".into(), os(data), "-o".into(), os(model)]);
    v
}

/// The weights `inspect` shows of a linear model, by feature (all of
/// them for up to 100 features).
fn weights(dir: &Scratch, model: &Path) -> Vec<f64> {
    let run = ranklet_limited(dir, None, &["inspect".into(), "-m".into(), os(model), "--top".into(), "100".into()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.starts_with("kind: linear\n"), "{run:?}");
    let mut w: Vec<(usize, f64)> = run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  feature "))
        .map(|l| {
            let (j, v) = l.split_once('\t').unwrap();
            (j.parse().unwrap(), v.parse().unwrap())
        })
        .collect();
    w.sort_by_key(|&(j, _)| j);
    w.into_iter().map(|(_, v)| v).collect()
}

/// 300 rows in queries of 5 (the first query's last line moved to the end
/// of the file, so the fit reads the file into memory rather than
/// streaming it), 10 features, about a third of them set per row.
fn sparse_letor() -> String {
    letor_with(10)
}

/// 53-bit xorshift numbers from `seed`.
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut rng = seed;
    move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng >> 11
    }
}

/// As [`sparse_letor`] with `d` features.
fn letor_with(d: usize) -> String {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let mut lines = Vec::new();
    for q in 0..60 {
        for _ in 0..5 {
            let mut line = format!("{} qid:{}", next() % 4, q + 1);
            for j in 1..=d {
                if next() % 3 == 0 {
                    line.push_str(&format!(" {j}:{:.4}", (next() % 20_000) as f64 / 1e4 + 1.0));
                }
            }
            lines.push(line);
        }
    }
    let moved = lines.remove(4);
    lines.push(moved);
    lines.join("\n") + "\n"
}

/// With too little memory for a dense copy (24 000 bytes) but enough for
/// the primal system (under 4 kB), the rows stay sparse; linear RankRLS and
/// RLS still take the primal form (a linear model, not a kernel expansion
/// over 300 rows) and give the weights of the dense fit to 1e-10 of the
/// largest (the same centred products summed in another order). Under
/// that limit the dual form (a 720 000-byte kernel matrix) would be refused.
#[test]
fn sparse_linear_rows_take_the_primal_form_and_give_the_dense_model() {
    let dir = Scratch::new("sparse-primal");
    let data = dir.input("q.light", sparse_letor());
    for algo in ["rankrls", "rls"] {
        let train = ["train", "--algo", algo, "--kernel", "linear", "--lambda", "0.5", "--precision", "f64"];
        let (sparse, dense) = (dir.out(&format!("{algo}-sparse.rkl")), dir.out(&format!("{algo}-dense.rkl")));
        let run = ranklet_limited(&dir, Some("16K"), &args(&train, &data, &sparse));
        assert_eq!(run.code, Some(0), "{run:?}");
        let run = ranklet_limited(&dir, None, &args(&train, &data, &dense));
        assert_eq!(run.code, Some(0), "{run:?}");
        let (ws, wd) = (weights(&dir, &sparse), weights(&dir, &dense));
        assert_eq!((ws.len(), wd.len()), (10, 10));
        let scale = wd.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 0.0);
        for (u, v) in ws.iter().zip(&wd) {
            assert!((u - v).abs() <= 1e-10 * scale, "{algo}: {ws:?} vs {wd:?}");
        }
    }
}

/// One feature index of 4 000 000 000 would need a 32 GB weight vector:
/// refused as bad input naming the file, the line and the index (not an
/// allocation abort), before any work.
#[test]
fn a_huge_feature_index_is_refused_with_its_line() {
    let dir = Scratch::new("huge-index");
    let data = dir.input("big.light", "1 qid:1 1:1\n0 qid:1 4000000000:2\n1 qid:1 2:1\n");
    let run = ranklet_limited(&dir, Some("1G"), &args(&["train", "--algo", "rankrls"], &data, &dir.out("m.rkl")));
    assert_bad_input(&run, &dir, Some(&data), Some(2), &["feature index 4000000000", "32 000 000 000 bytes"]);
}

/// KPCRank's kernel matrix over 3000 rows (72 MB) with 8 MB allowed:
/// refused before work with exit 1, naming its size in bytes and
/// `--basis M`; nothing written. With `--basis 50` the same run trains.
#[test]
fn an_oversize_kernel_matrix_is_refused_with_its_size() {
    let dir = Scratch::new("oversize-kernel");
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!("{} qid:{} 1:{} 2:{}\n", i % 3, i / 10, (i % 17) as f64 / 17.0, (i % 5) as f64));
    }
    let data = dir.input("k.light", text);
    let model = dir.out("m.rkl");
    let train = ["train", "--algo", "kpcrank", "--kernel", "rbf:0.5", "--components", "5", "--lambda", "1"];
    let run = ranklet_limited(&dir, Some("8M"), &args(&train, &data, &model));
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("kernel matrix") && run.stderr.contains("(3000 × 3000 values)"), "{run:?}");
    assert!(
        run.stderr.contains(" bytes, more than the 8 388 608 bytes") && run.stderr.contains("--basis M"),
        "{run:?}"
    );
    assert!(run.stdout.is_empty() && dir.out_entries().is_empty(), "{run:?}");
    let mut with_basis = args(&train, &data, &model);
    with_basis.extend(["--basis".into(), "50".into()]);
    let run = ranklet_limited(&dir, Some("8M"), &with_basis);
    assert_eq!(run.code, Some(0), "{run:?}");
}

/// Cross-validation copies the rows for one fold at a time, and the fold's
/// fit needs its workspace beside the copy: their sum is checked before the
/// first fold. Past the limit the run is refused with the size and the
/// one-pass alternative, nothing written, also where the copy alone would
/// fit (24 976 bytes here, 36 976 with the fit's workspace); under a
/// generous limit it runs.
#[test]
fn a_cross_validation_split_beyond_the_memory_limit_is_refused() {
    let dir = Scratch::new("cv-split-limit");
    let mut text = String::new();
    for i in 0..200 {
        text.push_str(&format!("{} qid:{}", i % 3, i / 10 + 1));
        for j in 1..=5 {
            text.push_str(&format!(" {j}:{}", ((i * 7 + j * 13) % 29) as f64 / 29.0));
        }
        text.push('\n');
    }
    let data = dir.input("cv.light", text);
    let model = dir.out("m.rkl");
    let train = ["train", "--algo", "rankrls", "--kernel", "linear", "--lambda", "0.1,1", "--cv", "5"];
    for (limit, shown) in [("20K", "20 480"), ("30K", "30 720")] {
        let run = ranklet_limited(&dir, Some(limit), &args(&train, &data, &model));
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(
            run.stderr.contains("a fold's copy of the rows (its training and validation sets) and the primal system"),
            "{run:?}"
        );
        assert!(run.stderr.contains("needs 36 976 bytes"), "{run:?}");
        assert!(
            run.stderr.contains(&format!("more than the {shown} bytes")) && run.stderr.contains("--from-stats --cv K"),
            "{run:?}"
        );
        assert!(run.stdout.is_empty() && dir.out_entries().is_empty(), "{run:?}");
    }
    let run = ranklet_limited(&dir, Some("1M"), &args(&train, &data, &model));
    assert_eq!(run.code, Some(0), "{run:?}");
}

/// A malformed limit is bad input naming the variable and a valid value.
#[test]
fn a_malformed_memory_limit_is_bad_input() {
    let dir = Scratch::new("bad-limit");
    let data = dir.input("q.light", sparse_letor());
    let run = ranklet_limited(
        &dir,
        Some("lots"),
        &args(&["train", "--algo", "rankrls", "--kernel", "rbf:1", "--lambda", "1"], &data, &dir.out("m.rkl")),
    );
    assert_bad_input(&run, &dir, None, None, &["RANKLET_MEMORY_LIMIT", "512M"]);
}

/// 300 rows of 60 sparse features with 16 kB allowed: neither a dense copy
/// (144 000 bytes) nor the 60 × 60 primal system with its scratch
/// (33 120 bytes) fits, so the fit solves the primal system by conjugate
/// gradient from the rows (6 720 bytes) and says so; its weights equal the
/// dense fit's to 1e-8 of the largest (CG stops at a relative residual of
/// 1e-10 on a well-conditioned system).
#[test]
fn a_primal_system_too_large_for_memory_is_solved_by_conjugate_gradient() {
    let dir = Scratch::new("sparse-cg");
    let data = dir.input("w.light", letor_with(60));
    let train = ["train", "--algo", "rankrls", "--kernel", "linear", "--lambda", "0.5", "--precision", "f64"];
    let (cg, dense) = (dir.out("cg.rkl"), dir.out("dense.rkl"));
    let run = ranklet_limited(&dir, Some("16K"), &args(&train, &data, &cg));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("solved by conjugate gradient"), "{run:?}");
    let run = ranklet_limited(&dir, None, &args(&train, &data, &dense));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(!run.stderr.contains("conjugate"), "{run:?}");
    let (wc, wd) = (weights(&dir, &cg), weights(&dir, &dense));
    assert_eq!((wc.len(), wd.len()), (60, 60));
    let scale = wd.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (u, v) in wc.iter().zip(&wd) {
        assert!((u - v).abs() <= 1e-8 * scale, "{wc:?} vs {wd:?}");
    }
}

/// `ranklet stats --pairs`: the rows that wait for the other row of a
/// pair are counted from the pairs before any row is summed. Pairs 150 rows
/// apart keep 150 rows at once (about 190 bytes each here: about 10 of 30
/// features set, at 12 bytes, plus 64): refused under a 26 kB limit, which
/// the 150 pairs themselves fit in (24 000 bytes at 160), with the count,
/// the row where it peaks and the way out (exit 1, nothing written);
/// summed under 1 MB.
#[test]
fn stats_pairs_whose_rows_cannot_wait_in_memory_are_refused() {
    let dir = Scratch::new("pairs-wait");
    let data = dir.input("q.light", letor_with(30));
    let pairs = dir.input("far.pairs", (0..150).map(|i| format!("{} {i} 1\n", i + 150)).collect::<String>());
    let out = dir.out("s.rks");
    let a: Vec<OsString> =
        vec!["stats".into(), "--data".into(), os(&data), "--pairs".into(), os(&pairs), "-o".into(), os(&out)];
    let run = ranklet_limited(&dir, Some("26K"), &a);
    assert_eq!(run.code, Some(1), "{run:?}");
    for says in ["far.pairs", "up to 150 rows waiting at once", "at row 149", "more shards", "26 624 bytes"] {
        assert!(run.stderr.contains(says), "{says}: {run:?}");
    }
    assert!(run.stdout.is_empty() && dir.out_entries().is_empty(), "{run:?}");
    let run = ranklet_limited(&dir, Some("1M"), &a);
    assert_eq!(run.code, Some(0), "{run:?}");
}

/// A memory refusal: exit 1, stderr saying each of `says`, nothing on
/// stdout, nothing written.
fn assert_refused(run: &Run, dir: &Scratch, says: &[&str]) {
    assert_eq!(run.code, Some(1), "{run:?}");
    for s in says {
        assert!(run.stderr.contains(s), "{s}: {run:?}");
    }
    assert!(run.stdout.is_empty() && dir.out_entries().is_empty(), "{run:?}");
}

/// 299 pairs of neighbouring rows (`i+1 i`, a comment line first).
fn neighbour_pairs() -> String {
    "# neighbours\n".to_string() + &(0..299).map(|i| format!("{} {i}\n", i + 1)).collect::<String>()
}

/// `ranklet stats --pairs` checks the pairs themselves against memory
/// while it reads them, at 160 bytes each (the pair and its index by row):
/// under a 16 kB limit (102 pairs) the 103rd pair, on line 104, is
/// refused with the file, the line, the pairs and bytes so far, the limit
/// and the way out (exit 1, nothing written); under 1 MB the same files
/// give the statistics file of a run without a limit, byte for byte.
#[test]
fn stats_pairs_beyond_the_memory_limit_are_refused_while_read() {
    let dir = Scratch::new("pairs-count");
    let data = dir.input("q.light", sparse_letor());
    let pairs = dir.input("near.pairs", neighbour_pairs());
    let run_to = |limit: Option<&str>, out: &Path| {
        let a: Vec<OsString> =
            vec!["stats".into(), "--data".into(), os(&data), "--pairs".into(), os(&pairs), "-o".into(), os(out)];
        ranklet_limited(&dir, limit, &a)
    };
    let out = dir.out("s.rks");
    let says = [
        "near.pairs: holding the first 103 pairs (read up to line 104)",
        "~160 bytes each",
        "needs 16 480 bytes, more than the 16 384 bytes",
        "RANKLET_MEMORY_LIMIT",
        "more shards",
        "each with the pairs of its own rows",
    ];
    assert_refused(&run_to(Some("16K"), &out), &dir, &says);
    let run = run_to(Some("1M"), &out);
    assert_eq!(run.code, Some(0), "{run:?}");
    let free = dir.out("free.rks");
    assert_eq!(run_to(None, &free).code, Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&free).unwrap());
}

/// `ranklet train --pairs` checks the pairs against memory while it reads
/// them, at 24 bytes each without --cv (the training graph borrows them):
/// under a 4 kB limit (170 pairs) the 171st, on line 172, is refused with
/// the file, line, pairs, bytes, limit and the ways out (exit 1, no
/// model); with --cv 3, at 24 + 3·24 + 17 = 113 bytes each, under 16 kB
/// (144 pairs) the 145th, on line 146; under 1 MB the model is the one of
/// a run without a limit.
#[test]
fn train_pairs_beyond_the_memory_limit_are_refused_while_read() {
    let dir = Scratch::new("train-pairs-count");
    let data = dir.input("q.light", sparse_letor());
    let pairs = dir.input("near.pairs", neighbour_pairs());
    let model = dir.out("m.rkl");
    let train = |extra: &[&str], out: &Path| {
        let mut a = args(&["train", "--algo", "rankrls", "--lambda", "1"], &data, out);
        a.extend(["--pairs".into(), os(&pairs)]);
        a.extend(extra.iter().map(OsString::from));
        a
    };
    let says = [
        "near.pairs: holding the first 171 pairs (read up to line 172) at ~24 bytes each for training on them",
        "needs 4 104 bytes, more than the 4 096 bytes",
        "ranklet stats --data SHARD --pairs SHARD_PAIRS",
        "--from-stats",
        "fewer pairs",
    ];
    assert_refused(&ranklet_limited(&dir, Some("4K"), &train(&[], &model)), &dir, &says);
    let run = ranklet_limited(&dir, Some("16K"), &train(&["--cv", "3"], &model));
    assert_refused(&run, &dir, &["the first 145 pairs (read up to line 146) at ~113 bytes"]);
    let run = ranklet_limited(&dir, Some("1M"), &train(&[], &model));
    assert_eq!(run.code, Some(0), "{run:?}");
    let free = dir.out("free.rkl");
    assert_eq!(ranklet_limited(&dir, None, &train(&[], &free)).code, Some(0));
    let (w, w_free) = (weights(&dir, &model), weights(&dir, &free));
    assert!(!w.is_empty() && w == w_free, "{w:?} vs {w_free:?}");
}

/// The low-rank xpgp with `--relation-residual constant` (one feature per
/// judged item: 383 of 400 here) is refused before work under a limit that
/// the plain truncation of the same ranks fits in, naming the bytes and
/// `--relation-residual none` as a way out; exit 1, nothing written.
#[test]
fn xpgp_relation_residual_beyond_the_memory_limit_is_refused_with_the_way_out() {
    let dir = Scratch::new("robust-xpgp-residual");
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let n = 400u64;
    let items: String = (0..n).map(|i| format!("i{i} 1:{} 2:{}\n", next() % 1000, next() % 1000)).collect();
    let mut prefs = String::new();
    while prefs.lines().count() < 600 {
        let (a, b) = (next() % n, next() % n);
        if a != b {
            prefs.push_str(&format!("i{a} i{b}\n"));
        }
    }
    let rel: String = (0..n).map(|i| format!("i{i} i{}\n", (i + 1) % n)).collect();
    let (items, prefs, rel) = (dir.input("items.txt", &items), dir.input("p.txt", &prefs), dir.input("r.txt", &rel));
    let model = dir.out("m.rkl");
    let train = |residual: &str| -> Vec<OsString> {
        let mut v: Vec<OsString> = ["train", "--algo", "xpgp", "--items"].iter().map(OsString::from).collect();
        v.extend([os(&items), "--prefs".into(), os(&prefs), "--relation".into(), os(&rel), "-o".into(), os(&model)]);
        v.extend(
            ["--basis", "10", "--relation-rank", "10", "--relation-residual", residual].iter().map(OsString::from),
        );
        v
    };
    let run = ranklet_limited(&dir, Some("2M"), &train("constant"));
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.contains("of them the relations' residual on the judged items")
            && run.stderr.contains(" bytes, more than the 2 097 152 bytes")
            && run.stderr.contains("--relation-residual none"),
        "{run:?}"
    );
    assert!(!model.exists());
    let run = ranklet_limited(&dir, Some("2M"), &train("none"));
    assert_eq!(run.code, Some(0), "{run:?}");
}

/// `ranklet suggest` on a low-rank model (kind 10) checks the factor it
/// updates between picks, `n·(p + 2k) + 3n + p + 2k` values (core's
/// `select_lowrank_workspace_len`: 200·23 + 600 + 23 = 5 223 here, 41 784
/// bytes), against memory before work: under 16 kB it is refused naming
/// the model file, the factor, the bytes, the limit and `-k` as the way
/// out (exit 1, nothing on stdout); under 1 MB the 10 pairs come.
#[test]
fn suggest_lowrank_beyond_the_memory_limit_is_refused_with_the_way_out() {
    let dir = Scratch::new("robust-suggest-lowrank");
    let model = dir.input("lr.rkl", lowrank_pref_model(200, 3, 1.0));
    let a: Vec<OsString> = vec!["suggest".into(), "-k".into(), "10".into(), "-m".into(), os(&model)];
    let says = [
        "lr.rkl: the factor of 200 items at rank 3 for 10 pairs needs 41 784 bytes, more than the 16 384 bytes",
        "RANKLET_MEMORY_LIMIT",
        "ask for fewer pairs (-k)",
    ];
    assert_refused(&ranklet_limited(&dir, Some("16K"), &a), &dir, &says);
    let run = ranklet_limited(&dir, Some("1M"), &a);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout.lines().count(), 10, "{run:?}");
}
