//! `ranklet stats` and `ranklet train --from-stats`: shards of a file —
//! cut in the middle of queries, one query's rows also far apart — give the
//! model `ranklet train --data` gives on the whole file, for both query
//! weightings and RLS, with and without cross-validation; mismatched,
//! corrupted and truncated shards and bad data are refused with exit 2 and
//! nothing written.

mod support;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use support::{assert_bad_input, os, ranklet, Scratch};

/// A LETOR-like file: 70 queries of 1 to 12 rows, 9 features (most rows
/// sparse), labels 0–4, 6 decimals; with `apart`, query 5's last row moved
/// to the end of the file (a query on lines far apart). Returns the lines.
fn letor(apart: bool) -> Vec<String> {
    let mut s = 0x853c_49e6_748f_ea9bu64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut lines = Vec::new();
    for q in 0..70u64 {
        let qid = 1000 + (q * 7_919) % 10_007;
        for _ in 0..1 + next() % 12 {
            let mut line = format!("{} qid:{qid}", next() % 5);
            for j in 1..=9 {
                if next() % 5 != 0 {
                    line.push_str(&format!(" {j}:{:.6}", (next() % 3_000_000) as f64 / 1e6 - 1.0));
                }
            }
            lines.push(line);
        }
    }
    if apart {
        let qid5 = format!("qid:{} ", 1000 + (5 * 7_919) % 10_007);
        let last = lines.iter().rposition(|l| l.contains(&qid5)).unwrap();
        let moved = lines.remove(last);
        lines.push(moved);
    }
    lines
}

/// Shards of the lines cut at three places inside queries; the whole file.
fn shards(dir: &Scratch, lines: &[String]) -> (PathBuf, Vec<PathBuf>) {
    let qid = |l: &str| l.split_whitespace().nth(1).unwrap().to_string();
    let n = lines.len();
    let mut cuts = vec![0];
    for target in [n / 4, n / 2, 3 * n / 4] {
        let c = (target..n).find(|&i| qid(&lines[i - 1]) == qid(&lines[i])).unwrap();
        cuts.push(c);
    }
    cuts.push(n);
    let text = |ls: &[String]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    let parts = cuts.windows(2).enumerate().map(|(i, w)| dir.input(&format!("s{i}.light"), text(&lines[w[0]..w[1]])));
    (dir.input("all.light", text(lines)), parts.collect())
}

fn args(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

/// `ranklet stats` of each shard into `in/` (as another machine would
/// have made them).
fn stats(dir: &Scratch, parts: &[PathBuf], extra: &[&str]) -> Vec<PathBuf> {
    parts
        .iter()
        .map(|p| {
            let out = p.with_extension("rks");
            let mut a = args(&["stats", "--num-features", "9"]);
            a.extend(args(extra));
            a.extend(["--data".into(), os(p), "-o".into(), os(&out)]);
            let run = ranklet(dir, a);
            assert_eq!(run.code, Some(0), "{run:?}");
            out
        })
        .collect()
}

fn train(dir: &Scratch, input: &[OsString], extra: &[&str], out: &Path) -> support::Run {
    let mut a = args(&["train"]);
    a.extend(input.iter().cloned());
    a.extend(args(extra));
    a.extend(["-o".into(), os(out)]);
    ranklet(dir, a)
}

fn from_stats(files: &[PathBuf]) -> Vec<OsString> {
    let mut a = vec![OsString::from("--from-stats")];
    a.extend(files.iter().map(|f| os(f)));
    a
}

/// The weights of a linear model file, and the bytes of its parameters.
fn weights(path: &Path) -> (Vec<f64>, Vec<u8>) {
    let bytes = fs::read(path).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    let l = view.linear().expect("a linear model");
    assert_eq!(l.offset(), 0.0);
    (l.weights().iter().collect(), l.weights().as_bytes().to_vec())
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-10 * scale, "{what}: {got:?} vs {want:?}");
    }
}

/// Shards cut mid-query give the whole file's model — with the inner
/// queries sealed (the default), and with `--keep-queries` when one query's
/// rows are also far apart: weights to 1e-10 relative to the largest (f64
/// models), the same f32 parameter bytes, and the same rows/queries
/// metadata; for RankRLS with both weightings and RLS. With `--cv 5` the
/// table has every λ and the chosen λ's model is again `train --data`'s at
/// that λ.
#[test]
fn from_stats_over_shards_equals_train_data() {
    let dir = Scratch::new("stats");
    for ((algo, weight), apart) in
        [("rankrls", "equal"), ("rankrls", "pairs"), ("rls", "equal")].into_iter().flat_map(|c| [(c, false), (c, true)])
    {
        let (all, parts) = shards(&dir, &letor(apart));
        let keep: &[&str] = if apart { &["--keep-queries"] } else { &[] };
        let rks = stats(&dir, &parts, &[&["--query-weight", weight], keep].concat());
        let common = ["--algo", algo, "--query-weight", weight, "--lambda", "0.3"];
        for precision in ["f64", "f32"] {
            let (a, b) = (dir.out("fs.rkl"), dir.out("d.rkl"));
            let mut extra = common.to_vec();
            extra.extend(["--precision", precision]);
            let run = train(&dir, &from_stats(&rks), &extra, &a);
            assert_eq!(run.code, Some(0), "{run:?}");
            let run = train(&dir, &[OsString::from("--data"), os(&all)], &extra, &b);
            assert_eq!(run.code, Some(0), "{run:?}");
            let ((wa, ba), (wb, bb)) = (weights(&a), weights(&b));
            assert_close(&wa, &wb, &format!("{algo} {weight} {precision}"));
            if precision == "f32" {
                assert_eq!(ba, bb, "{algo} {weight}: f32 parameter bytes");
            }
            let meta = |p: &Path| {
                let bytes = fs::read(p).unwrap();
                let v = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
                ["rows", "queries", "query_weight", "lambda", "algorithm"].map(|k| v.metadata_get(k).map(str::to_owned))
            };
            assert_eq!(meta(&a), meta(&b));
        }
    }
    // One pass with folds: the table, and the chosen λ's model.
    let (all, parts) = shards(&dir, &letor(false));
    let rks = stats(&dir, &parts, &["--cv", "5", "--seed", "9"]);
    let out = dir.out("cv.rkl");
    let run = train(
        &dir,
        &from_stats(&rks),
        &["--algo", "rankrls", "--cv", "5", "--lambda", "0.01,1,100", "--precision", "f64"],
        &out,
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let table: Vec<&str> = run.stdout.lines().skip(2).collect();
    assert_eq!(table.len(), 3, "{run:?}");
    assert!(table.iter().all(|l| l.split('\t').count() == 3 && l.split('\t').all(|c| c.parse::<f64>().is_ok())));
    let chosen = run.stderr.lines().find_map(|l| l.strip_prefix("chosen: kernel=linear lambda=")).unwrap().to_string();
    let d = dir.out("d.rkl");
    let run = train(
        &dir,
        &[OsString::from("--data"), os(&all)],
        &["--algo", "rankrls", "--lambda", &chosen, "--precision", "f64"],
        &d,
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_close(&weights(&out).0, &weights(&d).0, "cv");
}

/// Shards of another d, weighting, fold count or seed are refused naming
/// both files; a corrupted or truncated shard by its checks; bad rows with
/// their file and line; `--cv` unlike the shards'. Exit 2, nothing on
/// stdout, nothing written.
#[test]
fn mismatched_and_corrupted_shards_are_refused() {
    let dir = Scratch::new("stats-bad");
    let (_, parts) = shards(&dir, &letor(false));
    let good = stats(&dir, &parts[..1], &[]);
    let other = |name: &str, extra: &[&str]| {
        let p = dir.input(name, "");
        let mut a = args(&["stats"]);
        a.extend(args(extra));
        a.extend(["--data".into(), os(&parts[1]), "-o".into(), os(&p)]);
        assert_eq!(ranklet(&dir, a).code, Some(0));
        p
    };
    let model = dir.out("m.rkl");
    for (name, extra, says) in [
        ("d.rks", vec!["--num-features", "12"], "d = 12"),
        ("w.rks", vec!["--num-features", "9", "--query-weight", "pairs"], "--query-weight pairs"),
        ("k.rks", vec!["--num-features", "9", "--cv", "3"], "folds 3"),
        ("s.rks", vec!["--num-features", "9", "--seed", "4"], "seed 4"),
    ] {
        let bad = other(name, &extra);
        let run = train(&dir, &from_stats(&[good[0].clone(), bad.clone()]), &["--algo", "rankrls"], &model);
        assert_bad_input(&run, &dir, Some(&bad), None, &[&good[0].display().to_string(), says]);
    }
    let bytes = fs::read(&good[0]).unwrap();
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x04;
    let corrupt = dir.input("corrupt.rks", &flipped);
    let run = train(&dir, &from_stats(&[good[0].clone(), corrupt.clone()]), &["--algo", "rankrls"], &model);
    assert_bad_input(&run, &dir, Some(&corrupt), None, &["checksum"]);
    let short = dir.input("short.rks", &bytes[..bytes.len() - 9]);
    let run = train(&dir, &from_stats(std::slice::from_ref(&short)), &["--algo", "rls"], &model);
    assert_bad_input(&run, &dir, Some(&short), None, &["length"]);
    let run = train(&dir, &from_stats(&good), &["--algo", "rankrls", "--cv", "5", "--lambda", "1,2"], &model);
    assert_bad_input(&run, &dir, None, None, &["--cv 5", "1 fold"]);
    let run = train(&dir, &from_stats(&good), &["--algo", "rankrls", "--query-weight", "pairs"], &model);
    assert_bad_input(&run, &dir, None, None, &["--query-weight"]);

    // A query sealed in one shard (its rows inside it) met in another; a
    // query resumed later in one file, sealed by default.
    let (all, apart) = shards(&dir, &letor(true));
    let sealed = stats(&dir, &apart, &[]);
    let run = train(&dir, &from_stats(&sealed), &["--algo", "rankrls"], &model);
    assert_bad_input(&run, &dir, None, None, &["qid ", "sealed", "--keep-queries"]);
    let out = dir.out("s.rks");
    let run = ranklet(&dir, [OsString::from("stats"), "--data".into(), os(&all), "-o".into(), os(&out)]);
    assert_bad_input(&run, &dir, Some(&all), None, &["resume", "--keep-queries"]);

    let bad_rows = dir.input("bad.light", "1 qid:1 1:0.5\n0 qid:1 2:x\n");
    let run = ranklet(&dir, [OsString::from("stats"), "--data".into(), os(&bad_rows), "-o".into(), os(&out)]);
    assert_bad_input(&run, &dir, Some(&bad_rows), Some(2), &[]);
}

/// A feature index whose d × d sums cannot fit (4·10⁹ features) is refused
/// before any allocation, naming the size and the way out (exit 1, a
/// resource limit, not an abort), and nothing is written.
#[test]
fn huge_feature_index_is_refused_before_allocating() {
    let dir = Scratch::new("stats-huge");
    let data = dir.input("big.light", "1 qid:1 1:0.5\n0 qid:1 4000000000:1\n2 qid:2 1:0.3\n");
    let out = dir.out("s.rks");
    let run = ranklet(&dir, [OsString::from("stats"), "--data".into(), os(&data), "-o".into(), os(&out)]);
    assert_eq!(run.code, Some(1), "{run:?}");
    for says in ["4000000000 features", "bytes", "--num-features"] {
        assert!(run.stderr.contains(says), "{says:?} missing: {run:?}");
    }
    assert!(!out.exists(), "nothing written on error");
}

/// Sparse data whose d × d sums cannot fit (`--num-features` fixes d at the
/// start) is refused before any allocation, and the message points to the
/// sparse primal fit of `train --data`.
#[test]
fn wide_fixed_dimension_is_refused_before_allocating() {
    let dir = Scratch::new("stats-wide");
    let data = dir.input("wide.light", "1 qid:1 1:0.5\n0 qid:1 2:1\n");
    let out = dir.out("s.rks");
    let run = ranklet(
        &dir,
        [
            OsString::from("stats"),
            "--num-features".into(),
            "3000000".into(),
            "--data".into(),
            os(&data),
            "-o".into(),
            os(&out),
        ],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    for says in ["3000000 features", "bytes", "train --data"] {
        assert!(run.stderr.contains(says), "{says:?} missing: {run:?}");
    }
    assert!(!out.exists(), "nothing written on error");
}

/// CSV shards (`--label-col`/`--qid-col`, as `train --data` reads CSV;
/// queries cut between the shards and string qids) give the model `train
/// --data` gives on the whole CSV file (weights to 1e-10); a CSV and an
/// SVMlight file in one shard are refused naming both, before reading; an
/// output directory that does not exist is refused before the data is read.
#[test]
fn csv_shards_equal_train_data_and_bad_input_is_refused_first() {
    let dir = Scratch::new("stats-csv");
    let lines = letor(false);
    let row = |l: &String| {
        let mut it = l.split_whitespace();
        let y = it.next().unwrap().to_string();
        let q = format!("q{}", it.next().unwrap().trim_start_matches("qid:"));
        let mut x = vec!["0".to_string(); 9];
        for f in it {
            let (j, v) = f.split_once(':').unwrap();
            x[j.parse::<usize>().unwrap() - 1] = v.to_string();
        }
        format!("{},{y},{q}\n", x.join(","))
    };
    let header = "f1,f2,f3,f4,f5,f6,f7,f8,f9,grade,query\n";
    let cut = (lines.len() / 2..lines.len())
        .find(|&i| lines[i].split_whitespace().nth(1) == lines[i - 1].split_whitespace().nth(1))
        .unwrap();
    let part = |ls: &[String]| format!("{header}{}", ls.iter().map(row).collect::<String>());
    let whole = dir.input("all.csv", part(&lines));
    let (a, b) = (dir.input("a.csv", part(&lines[..cut])), dir.input("b.csv", part(&lines[cut..])));
    let rks: Vec<PathBuf> = [&a, &b]
        .iter()
        .map(|p| {
            let out = p.with_extension("rks");
            let mut v = args(&["stats", "--label-col", "grade", "--qid-col", "query", "--data"]);
            v.extend([os(p), "-o".into(), os(&out)]);
            let run = ranklet(&dir, v);
            assert_eq!(run.code, Some(0), "{run:?}");
            out
        })
        .collect();
    let (fs_model, d_model) = (dir.out("fs.rkl"), dir.out("d.rkl"));
    let common = ["--algo", "rankrls", "--lambda", "0.3", "--precision", "f64"];
    let run = train(&dir, &from_stats(&rks), &common, &fs_model);
    assert_eq!(run.code, Some(0), "{run:?}");
    let mut input = vec![OsString::from("--data"), os(&whole)];
    input.extend(args(&["--label-col", "grade", "--qid-col", "query"]));
    let run = train(&dir, &input, &common, &d_model);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_close(&weights(&fs_model).0, &weights(&d_model).0, "csv shards");
    fs::remove_file(&fs_model).unwrap();
    fs::remove_file(&d_model).unwrap();

    let csv = dir.input("wine.csv", "a,b,label\n1,2,3\n");
    let light = dir.input("x.light", "1 qid:1 1:0.5\n");
    let out = dir.out("s.rks");
    let run = ranklet(&dir, [OsString::from("stats"), "--data".into(), os(&csv), os(&light), "-o".into(), os(&out)]);
    assert_bad_input(&run, &dir, Some(&csv), None, &[&light.display().to_string(), "one format"]);
    let data = dir.input("ok.light", "1 qid:1 1:0.5\n0 qid:1 2:1\n");
    let missing = dir.out("no/such/dir/s.rks");
    let run = ranklet(&dir, [OsString::from("stats"), "--data".into(), os(&data), "-o".into(), os(&missing)]);
    assert_ne!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("no/such/dir"), "the message names the directory: {run:?}");
    assert!(!missing.exists());
}

/// Sparse rows (3 of 40 features per row: the CSR path, no densifying)
/// in two shards cut inside a query give `train --data`'s weights on the
/// whole file to 1e-10, for both weightings.
#[test]
fn sparse_rows_equal_train_data() {
    let dir = Scratch::new("stats-sparse");
    let mut s = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut lines = Vec::new();
    for q in 0..60u64 {
        for _ in 0..2 + next() % 8 {
            let mut cols: Vec<u64> = (0..3).map(|_| 1 + next() % 40).collect();
            cols.sort_unstable();
            cols.dedup();
            let feats: Vec<String> =
                cols.iter().map(|c| format!("{c}:{:.6}", (next() % 2_000_000) as f64 / 1e6 - 1.0)).collect();
            lines.push(format!("{} qid:{} {}", next() % 5, q + 1, feats.join(" ")));
        }
    }
    let cut = (lines.len() / 2..lines.len())
        .find(|&i| lines[i].split_whitespace().nth(1) == lines[i - 1].split_whitespace().nth(1))
        .unwrap();
    let text = |ls: &[String]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    let all = dir.input("all.light", text(&lines));
    let parts = [dir.input("a.light", text(&lines[..cut])), dir.input("b.light", text(&lines[cut..]))];
    for weight in ["equal", "pairs"] {
        let rks: Vec<PathBuf> = parts
            .iter()
            .map(|p| {
                let out = p.with_extension(format!("{weight}.rks"));
                let mut a = args(&["stats", "--num-features", "40", "--query-weight", weight, "--data"]);
                a.extend([os(p), "-o".into(), os(&out)]);
                let run = ranklet(&dir, a);
                assert_eq!(run.code, Some(0), "{run:?}");
                out
            })
            .collect();
        let (a, b) = (dir.out("fs.rkl"), dir.out("d.rkl"));
        let common = [
            "--algo",
            "rankrls",
            "--query-weight",
            weight,
            "--lambda",
            "0.3",
            "--precision",
            "f64",
            "--num-features",
            "40",
        ];
        let run = train(&dir, &from_stats(&rks), &common[..8], &a);
        assert_eq!(run.code, Some(0), "{run:?}");
        let run = train(&dir, &[OsString::from("--data"), os(&all)], &common, &b);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert_close(&weights(&a).0, &weights(&b).0, weight);
        fs::remove_file(&a).unwrap();
        fs::remove_file(&b).unwrap();
    }
}

/// `ranklet stats --pairs`: explicit preference pairs summed into a shard
/// give `ranklet train --data F --pairs P`'s model — one shard of the whole
/// file, and two shards each with the pairs of its own rows (numbered
/// within it), whose merge is the whole file with the pairs of both —
/// weights to 1e-10 relative; pairs whose later row is far below the
/// earlier one, either side winning, magnitudes other than 1 and 0. A pair
/// whose row is not in the shard is refused naming the pair and the shard;
/// pair and row statistics do not merge; pair statistics train rankrls
/// only. (Their folds: `pair_folds_equal_separate_fits_on_the_other_pairs`.)
#[test]
fn pair_shards_equal_train_pairs() {
    let dir = Scratch::new("stats-pairs");
    let lines = letor(false);
    let n = lines.len();
    let cut = n / 2;
    let text = |ls: &[String]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    let all = dir.input("all.light", text(&lines));
    let parts = [dir.input("a.light", text(&lines[..cut])), dir.input("b.light", text(&lines[cut..]))];
    // Pairs within each half: neighbours and rows 37 apart, the winner
    // first or second, magnitudes 1, 0.25·k and 0.
    let mut halves: [Vec<(usize, usize, f64)>; 2] = [Vec::new(), Vec::new()];
    for (h, (lo, hi)) in [(0, cut), (cut, n)].into_iter().enumerate() {
        let len = hi - lo;
        for i in 0..len {
            if i + 1 < len {
                halves[h].push((i + 1, i, 1.0));
            }
            if i + 37 < len && i % 3 == 0 {
                halves[h].push((i, i + 37, 0.25 * (i % 7) as f64));
            }
        }
    }
    let pairs_text = |ps: &[(usize, usize, f64)], off: usize| {
        ps.iter().map(|&(w, l, m)| format!("{} {} {m}\n", w + off, l + off)).collect::<String>()
    };
    let pa = dir.input("a.pairs", format!("# winner loser magnitude\n{}", pairs_text(&halves[0], 0)));
    let pb = dir.input("b.pairs", pairs_text(&halves[1], 0));
    let pall = dir.input("all.pairs", pairs_text(&halves[0], 0) + &pairs_text(&halves[1], cut));
    let shard = |data: &Path, pairs: &Path, out: &str| {
        let out = dir.input(out, "");
        let a =
            [args(&["stats", "--num-features", "9", "--data"]), vec![os(data)], args(&["--pairs"]), vec![os(pairs)]];
        let mut a = a.concat();
        a.extend(["-o".into(), os(&out)]);
        let run = ranklet(&dir, a);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert!(run.stderr.contains(" pairs, d = 9"), "{run:?}");
        out
    };
    let whole = shard(&all, &pall, "all.pairs.rks");
    let sa = shard(&parts[0], &pa, "a.pairs.rks");
    let sb = shard(&parts[1], &pb, "b.pairs.rks");
    let extra = ["--algo", "rankrls", "--lambda", "0.3", "--precision", "f64"];
    let want = dir.input("d.rkl", "");
    let run = train(&dir, &[OsString::from("--data"), os(&all), OsString::from("--pairs"), os(&pall)], &extra, &want);
    assert_eq!(run.code, Some(0), "{run:?}");
    let want = weights(&want).0;
    for (files, what) in [(vec![whole.clone()], "one shard"), (vec![sa.clone(), sb.clone()], "two shards")] {
        let got = dir.out("fs.rkl");
        let run = train(&dir, &from_stats(&files), &extra, &got);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert_close(&weights(&got).0, &want, what);
        fs::remove_file(&got).unwrap();
    }
    // The second half's pairs numbered as in the whole file: their rows
    // are not in shard b.
    let run = ranklet(
        &dir,
        [
            args(&["stats", "--data"]),
            vec![os(&parts[1])],
            args(&["--pairs"]),
            vec![os(&pall)],
            args(&["-o"]),
            vec![os(&dir.out("x.rks"))],
        ]
        .concat(),
    );
    let numbered: Vec<usize> =
        halves[0].iter().map(|&(w, l, _)| w.max(l)).chain(halves[1].iter().map(|&(w, l, _)| w.max(l) + cut)).collect();
    let first_far = (0..numbered.len()).filter(|&k| numbered[k] >= n - cut).min_by_key(|&k| (numbered[k], k)).unwrap();
    assert_bad_input(
        &run,
        &dir,
        Some(&parts[1]),
        None,
        &[&pall.display().to_string(), &format!("pair {} ", first_far + 1), "both rows of a pair must be in one shard"],
    );
    // Pair statistics neither merge with row statistics nor train rls.
    let rows = stats(&dir, &parts[..1], &[]);
    let run = train(&dir, &from_stats(&[sa.clone(), rows[0].clone()]), &extra, &dir.out("m.rkl"));
    assert_bad_input(&run, &dir, None, None, &["explicit preference pairs", "merge shards of one kind"]);
    let run = train(&dir, &from_stats(&[sa]), &["--algo", "rls", "--lambda", "1"], &dir.out("m.rkl"));
    assert_bad_input(&run, &dir, None, None, &["train --algo rankrls"]);
}

/// `splitmix64(key XOR seed) mod K`, written here from its definition in
/// `docs/format.md`.
fn splitmix_fold(key: u64, seed: u64, k: usize) -> usize {
    let mut z = (key ^ seed).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) % k as u64) as usize
}

/// A pair's fold key as `docs/scale.md` defines it for rows without qids:
/// FNV-1a 64 of the winner's then the loser's nonzero (0-based index
/// `u32`, value `f64` bits) little-endian, separated by `u32::MAX`, then
/// the magnitude's bits.
fn pair_hash(w: &[f64], l: &[f64], m: f64) -> u64 {
    let mut bytes = Vec::new();
    for (i, row) in [w, l].into_iter().enumerate() {
        if i == 1 {
            bytes.extend(u32::MAX.to_le_bytes());
        }
        for (j, &v) in row.iter().enumerate().filter(|&(_, &v)| v != 0.0) {
            bytes.extend((j as u32).to_le_bytes());
            bytes.extend(v.to_bits().to_le_bytes());
        }
    }
    bytes.extend(m.to_bits().to_le_bytes());
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A one-pass CV table against separate fits, `want[f][λ]` being fold f's
/// held-out objective of the fit without fold f: `table` (the library's,
/// per λ the folds' values) to 1e-10 relative per fold and λ, and the
/// model's full-precision `cv.i` metadata (`view`) in λ, mean and std (the
/// std to 1e-10 of the mean: a spread of values of that size).
fn assert_cv_equals_separate_fits(
    table: &[(f64, Vec<f64>)],
    grid: &[f64],
    want: &[Vec<f64>],
    view: &ranklet_core::format::ModelView<'_>,
    tag: &str,
) {
    assert_eq!(table.len(), grid.len(), "{tag}");
    let k = want.len() as f64;
    for (li, ((gl, got), l)) in table.iter().zip(grid).enumerate() {
        let col: Vec<f64> = want.iter().map(|w| w[li]).collect();
        assert_eq!((gl, got.len()), (l, col.len()), "{tag}");
        for (f, (&g, &w)) in got.iter().zip(&col).enumerate() {
            assert!((g - w).abs() <= 1e-10 * w.abs(), "{tag} λ {l} fold {f}: one pass {g} vs separate {w}");
        }
        let mean = col.iter().sum::<f64>() / k;
        let std = (col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / k).sqrt();
        let line = view.metadata_get(&format!("cv.{li}")).unwrap();
        let field = |name: &str| -> f64 {
            line.split_whitespace().find_map(|t| t.strip_prefix(name)).unwrap().parse().unwrap()
        };
        assert_eq!(field("lambda="), *l, "{tag}: {line}");
        assert!((field("mean=") - mean).abs() <= 1e-10 * mean, "{tag} λ {l}: {line} vs mean {mean}");
        assert!((field("std=") - std).abs() <= 1e-10 * mean, "{tag} λ {l}: {line} vs std {std}");
    }
}

/// `ranklet stats --pairs --cv K`: a pair's fold is its winner's query's
/// (pairs inside a query, and pairs across two queries — rows 37 apart —
/// with the winner's), or, rows without qids, that of a hash of the pair's
/// values. `train --from-stats --cv K --lambda GRID` over two pair shards
/// (each with the pairs of its own rows) gives, for every fold and λ, the
/// held-out objective (mean squared `m − f(x_w) + f(x_l)` over the fold's
/// pairs) of `ranklet train --data … --pairs …` fitted on the other folds'
/// pairs, evaluated here: to 1e-10 relative per fold (through the library,
/// on the same shards) and in mean and std (the model's full-precision
/// `cv.i` metadata, through the binary); one CSV shard of the same rows and
/// every pair gives the same table; and the chosen λ's model is the fit on
/// every pair.
#[test]
fn pair_folds_equal_separate_fits_on_the_other_pairs() {
    use ranklet::family::ls_stats::{fit_merged, merge_files};
    use ranklet::hostbackend::{BackendChoice, HostBackend};
    use ranklet_core::graph::QueryWeight;
    use ranklet_core::learn::ls_stats::Target;

    let dir = Scratch::new("stats-pair-cv");
    let (k, seed, grid) = (3usize, 7u64, [0.01, 0.3, 10.0]);
    let grid_arg = "0.01,0.3,10";
    for with_qids in [true, false] {
        let tag = if with_qids { "q" } else { "n" };
        let mut lines = letor(false);
        let mut qids = Vec::new();
        for l in &mut lines {
            let q: String = l.split_whitespace().nth(1).unwrap().to_string();
            qids.push(q.trim_start_matches("qid:").parse::<u64>().unwrap());
            if !with_qids {
                *l = l.replacen(&format!(" {q}"), "", 1);
            }
        }
        let x: Vec<Vec<f64>> = lines
            .iter()
            .map(|l| {
                let mut x = vec![0.0; 9];
                for f in l.split_whitespace().filter(|f| !f.starts_with("qid:")).skip(1) {
                    let (j, v) = f.split_once(':').unwrap();
                    x[j.parse::<usize>().unwrap() - 1] = v.parse().unwrap();
                }
                x
            })
            .collect();
        let (n, cut) = (lines.len(), lines.len() / 2);
        let text = |ls: &[String]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
        let all = dir.input(&format!("{tag}all.light"), text(&lines));
        let parts = [
            dir.input(&format!("{tag}a.light"), text(&lines[..cut])),
            dir.input(&format!("{tag}b.light"), text(&lines[cut..])),
        ];
        // Pairs in global row numbers, each within one half: neighbours
        // (inside a query but at its ends) and rows 37 apart (across queries),
        // either side winning.
        let mut pairs: Vec<(usize, usize, f64)> = Vec::new();
        for (lo, hi) in [(0, cut), (cut, n)] {
            for i in lo..hi {
                if i + 1 < hi {
                    pairs.push((i + 1, i, 1.0 + 0.5 * (i % 3) as f64));
                }
                if i + 37 < hi && i % 3 == 0 {
                    let (w, l) = if i % 2 == 0 { (i, i + 37) } else { (i + 37, i) };
                    pairs.push((w, l, 0.25 * (i % 7) as f64));
                }
            }
        }
        let key = |&(w, l, m): &(usize, usize, f64)| if with_qids { qids[w] } else { pair_hash(&x[w], &x[l], m) };
        let fold: Vec<usize> = pairs.iter().map(|p| splitmix_fold(key(p), seed, k)).collect();
        for f in 0..k {
            assert!(fold.iter().filter(|&&g| g == f).count() > 10, "{tag}: fold {f} has too few pairs");
        }
        let pairs_text = |sel: &dyn Fn(usize) -> bool, off: usize| {
            (0..pairs.len())
                .filter(|&i| sel(i))
                .map(|i| format!("{} {} {}\n", pairs[i].0 - off, pairs[i].1 - off, pairs[i].2))
                .collect::<String>()
        };
        // The shards, each with its own rows' pairs numbered within it.
        let shard_files: Vec<PathBuf> = [(0, &parts[0]), (cut, &parts[1])]
            .iter()
            .enumerate()
            .map(|(h, &(off, data))| {
                let mine = |i: usize| (pairs[i].0 >= cut) == (h == 1);
                let pf = dir.input(&format!("{tag}{h}.pairs"), pairs_text(&mine, off));
                let out = dir.input(&format!("{tag}{h}.pairs.rks"), "");
                let a = [
                    args(&["stats", "--num-features", "9", "--cv", "3", "--seed", "7", "--data"]),
                    vec![os(data), "--pairs".into(), os(&pf), "-o".into(), os(&out)],
                ]
                .concat();
                let run = ranklet(&dir, a);
                assert_eq!(run.code, Some(0), "{run:?}");
                assert!(run.stderr.contains(" pairs, d = 9, 3 fold(s)"), "{run:?}");
                out
            })
            .collect();
        // One pass: the library's per-fold table, the binary's model.
        let merged = merge_files(&shard_files).unwrap();
        let mut be = HostBackend::new(BackendChoice::Faer);
        let fit = fit_merged(&mut be, &merged, Target::RankRls, QueryWeight::Equal, &grid, Some(k)).unwrap();
        let (_, table) = fit.cv.as_ref().unwrap();
        // The same rows as one CSV shard (read whole; its numeric qids are
        // the same ids) with every pair: the same folds, the same table.
        let every = dir.input(&format!("{tag}all.pairs"), pairs_text(&|_| true, 0));
        let csv: String =
            std::iter::once(format!("f1,f2,f3,f4,f5,f6,f7,f8,f9,label{}\n", if with_qids { ",query" } else { "" }))
                .chain(lines.iter().zip(&x).zip(&qids).map(|((l, xi), q)| {
                    let label = l.split_whitespace().next().unwrap();
                    let feats = xi.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",");
                    if with_qids {
                        format!("{feats},{label},{q}\n")
                    } else {
                        format!("{feats},{label}\n")
                    }
                }))
                .collect();
        let csv = dir.input(&format!("{tag}all.csv"), csv);
        let csv_rks = dir.input(&format!("{tag}csv.rks"), "");
        let mut a = args(&["stats", "--label-col", "label", "--cv", "3", "--seed", "7", "--data"]);
        a.extend([os(&csv), "--pairs".into(), os(&every), "-o".into(), os(&csv_rks)]);
        if with_qids {
            a.extend(args(&["--qid-col", "query"]));
        }
        let run = ranklet(&dir, a);
        assert_eq!(run.code, Some(0), "{run:?}");
        let from_csv = merge_files(std::slice::from_ref(&csv_rks)).unwrap();
        let csv_fit = fit_merged(&mut be, &from_csv, Target::RankRls, QueryWeight::Equal, &grid, Some(k)).unwrap();
        let csv_table = &csv_fit.cv.as_ref().unwrap().1;
        assert_eq!(csv_table.len(), table.len(), "{tag}: CV table rows");
        for ((_, a), (_, b)) in csv_table.iter().zip(table) {
            assert_eq!(a.len(), b.len(), "{tag}: CV table columns");
            for (x, y) in a.iter().zip(b) {
                assert!((x - y).abs() <= 1e-10 * y.abs(), "{tag}: CSV shard {x} vs SVMlight shards {y}");
            }
        }
        let cv_model = dir.out(&format!("{tag}cv.rkl"));
        let run = train(
            &dir,
            &from_stats(&shard_files),
            &["--algo", "rankrls", "--cv", "3", "--lambda", grid_arg, "--precision", "f64"],
            &cv_model,
        );
        assert_eq!(run.code, Some(0), "{run:?}");
        assert!(run.stdout.starts_with("# cross-validation: 3-fold by the winner's query hash (pair statistics)"));
        assert_eq!(run.stdout.lines().count(), 2 + grid.len(), "{run:?}");
        let bytes = fs::read(&cv_model).unwrap();
        let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
        // Separate fits on the other folds' pairs, evaluated on the fold's.
        // want[f][λ]: fold f's held-out objective of the fit without it.
        let mut want = vec![vec![0.0; grid.len()]; k];
        for (f, want_f) in want.iter_mut().enumerate() {
            let others = dir.input(&format!("{tag}not{f}.pairs"), pairs_text(&|i| fold[i] != f, 0));
            for (li, l) in grid.iter().enumerate() {
                let m = dir.out("sep.rkl");
                let input = [OsString::from("--data"), os(&all), OsString::from("--pairs"), os(&others)];
                let run =
                    train(&dir, &input, &["--algo", "rankrls", "--lambda", &l.to_string(), "--precision", "f64"], &m);
                assert_eq!(run.code, Some(0), "{run:?}");
                let w = weights(&m).0;
                fs::remove_file(&m).unwrap();
                let score = |i: usize| x[i].iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
                let held: Vec<f64> = (0..pairs.len())
                    .filter(|&i| fold[i] == f)
                    .map(|i| {
                        let (pw, pl, pm) = pairs[i];
                        (pm - score(pw) + score(pl)).powi(2)
                    })
                    .collect();
                want_f[li] = held.iter().sum::<f64>() / held.len() as f64;
            }
        }
        assert_cv_equals_separate_fits(table, &grid, &want, &view, tag);
        // The chosen λ's model: the fit on every pair.
        let m = dir.out("every.rkl");
        let input = [OsString::from("--data"), os(&all), OsString::from("--pairs"), os(&every)];
        let chosen = fit.lambda.to_string();
        let run = train(&dir, &input, &["--algo", "rankrls", "--lambda", &chosen, "--precision", "f64"], &m);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert_close(&weights(&cv_model).0, &weights(&m).0, &format!("{tag}: chosen λ {chosen}"));
        fs::remove_file(&m).unwrap();
        fs::remove_file(&cv_model).unwrap();
    }
}

/// The spec's check at the command line: the one-pass 5-fold × 10-λ table
/// of `train --from-stats` over shards cut mid-query equals five separate
/// fits, `ranklet train --data` on the rows outside each fold (a query's
/// fold is `splitmix64(qid XOR seed) mod 5`, written here from its
/// definition), evaluated here on the fold's rows by the held-out RankRLS
/// objective (per query, the squared residuals about their mean, over the
/// fold's rows): to 1e-10 relative per fold and λ (the library's table on
/// the same shards), and in mean and std (the model's full-precision
/// `cv.i` metadata, through the binary).
#[test]
fn one_pass_five_fold_ten_lambda_table_equals_separate_fold_fits() {
    use ranklet::family::ls_stats::{fit_merged, merge_files};
    use ranklet::hostbackend::{BackendChoice, HostBackend};
    use ranklet_core::graph::QueryWeight;
    use ranklet_core::learn::ls_stats::Target;

    let dir = Scratch::new("stats-cv5x10");
    let lines = letor(false);
    let (_, parts) = shards(&dir, &lines);
    let (k, seed) = (5usize, 9u64);
    let grid = [0.001, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0];
    let grid_arg = grid.map(|l| l.to_string()).join(",");
    let rks = stats(&dir, &parts, &["--cv", "5", "--seed", "9"]);
    let rows: Vec<(f64, u64, Vec<f64>)> = lines
        .iter()
        .map(|l| {
            let mut it = l.split_whitespace();
            let y: f64 = it.next().unwrap().parse().unwrap();
            let q: u64 = it.next().unwrap().trim_start_matches("qid:").parse().unwrap();
            let mut x = vec![0.0; 9];
            for f in it {
                let (j, v) = f.split_once(':').unwrap();
                x[j.parse::<usize>().unwrap() - 1] = v.parse().unwrap();
            }
            (y, q, x)
        })
        .collect();
    let fold: Vec<usize> = rows.iter().map(|r| splitmix_fold(r.1, seed, k)).collect();
    let merged = merge_files(&rks).unwrap();
    let mut be = HostBackend::new(BackendChoice::Faer);
    let fit = fit_merged(&mut be, &merged, Target::RankRls, QueryWeight::Equal, &grid, Some(k)).unwrap();
    let (_, table) = fit.cv.as_ref().unwrap();
    let cv_model = dir.out("cv.rkl");
    let run = train(
        &dir,
        &from_stats(&rks),
        &["--algo", "rankrls", "--cv", "5", "--lambda", &grid_arg, "--precision", "f64"],
        &cv_model,
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let bytes = fs::read(&cv_model).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    // want[f][λ]: fold f's held-out objective of the fit without it.
    let mut want = vec![vec![0.0; grid.len()]; k];
    for (f, want_f) in want.iter_mut().enumerate() {
        let text: String = (0..lines.len()).filter(|&i| fold[i] != f).map(|i| format!("{}\n", lines[i])).collect();
        let others = dir.input(&format!("not{f}.light"), text);
        for (li, l) in grid.iter().enumerate() {
            let m = dir.out("sep.rkl");
            let input = [OsString::from("--data"), os(&others)];
            let extra = ["--algo", "rankrls", "--num-features", "9", "--lambda", &l.to_string(), "--precision", "f64"];
            let run = train(&dir, &input, &extra, &m);
            assert_eq!(run.code, Some(0), "{run:?}");
            let w = weights(&m).0;
            fs::remove_file(&m).unwrap();
            // Residuals of the fold's rows, grouped by query.
            let mut by_q: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
            for (_, (y, q, x)) in rows.iter().enumerate().filter(|&(i, _)| fold[i] == f) {
                by_q.entry(*q).or_default().push(y - x.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>());
            }
            let n: usize = by_q.values().map(Vec::len).sum();
            let total: f64 = by_q
                .values()
                .map(|r| {
                    let mean = r.iter().sum::<f64>() / r.len() as f64;
                    r.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
                })
                .sum();
            want_f[li] = total / n as f64;
        }
    }
    assert_cv_equals_separate_fits(table, &grid, &want, &view, "rows");
}
