//! The `ranklet` binary end to end: hostile input (exit code, stderr naming
//! the file and line, silent stdout, no model and no temporary left
//! behind), and the happy paths (train → score → eval, the f32 device
//! scores against the f64 host predictions, input order with queries that
//! are not contiguous, pair training).
//!
//! Every test runs the binary in a fresh directory under the system temp
//! dir with `in/` (inputs) and `out/` (the `-o` directory, which must stay
//! empty when a command fails). The directory is removed when a test passes
//! and kept for inspection when it fails.
//!
//! Fixtures: `fixtures/cli/` (small dense data, see the comment line of each
//! file) and the parse-rank data in `data/parse-rank/` (a copy of `../shared/data/parse-rank/`, MIT) (the tests
//! that use it fail when it is missing).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use ranklet::data::svmlight::{read_svmlight, SvmlightOptions};
use ranklet::family::{Algo, RowFamily};
use ranklet::fit::{self, Target};
use ranklet::hostbackend::{BackendChoice, HostBackend};
use ranklet::table::Table;
use ranklet_core::graph::QueryWeight;
use ranklet_core::kernel::Kernel;

mod support;
use support::{assert_bad_input, os, ranklet, Run, Scratch};
const PARSE_TRAIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/parse-rank/rank_train.light");
const PARSE_TEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/parse-rank/rank_test.light");

/// f32 device scores against f64 host predictions: DESIGN.md's bound,
/// relative to the largest |score| of the file. (Per element it is
/// meaningless for scores near 0; the f32 rounding of inputs, weights and
/// the accumulation is ~1e-7 of the magnitudes involved, so 1e-5 leaves a
/// margin of 100 for cancellation.)
const F32_REL: f64 = 1e-5;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cli").join(name)
}

fn shared(path: &str) -> PathBuf {
    let p = PathBuf::from(path);
    assert!(p.exists(), "shared data file {} is missing: the repository's data/ copy must be present", p.display());
    p
}

/// `train --algo rankrls --kernel linear --lambda 1 --data <data> -o out/m.rkl`
/// plus `extra`.
fn train_args(data: &Path, model: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut v: Vec<OsString> = ["train", "--algo", "rankrls", "--kernel", "linear", "--lambda", "1", "--data"]
        .iter()
        .map(OsString::from)
        .collect();
    v.push(os(data));
    v.push("-o".into());
    v.push(os(model));
    v.extend(extra.iter().map(OsString::from));
    v
}

/// Three good lines of training data (two queries).
const GOOD: &str = "3 qid:1 1:1 2:0.5\n1 qid:1 1:-1 2:0.25\n2 qid:2 1:0.5 2:1\n0 qid:2 1:-0.5 2:-1\n";

/// `GOOD` with line `line` (1-based) replaced.
fn good_with(line: usize, replacement: &str) -> String {
    GOOD.lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == line { replacement } else { l })
        .fold(String::new(), |acc, l| acc + l + "\n")
}

fn train_bad_data(tag: &str, content: &str, line: Option<usize>, also: &[&str]) {
    let dir = Scratch::new(tag);
    let data = dir.input("bad.light", content);
    let run = ranklet(&dir, train_args(&data, &dir.out("m.rkl"), &[]));
    assert_bad_input(&run, &dir, Some(&data), line, also);
}

// ---------------------------------------------------------------------------
// Hostile input.

#[test]
fn malformed_value_names_file_and_line() {
    train_bad_data("malformed", &good_with(3, "2 qid:2 1:0.5 2:abc"), Some(3), &["abc"]);
}

#[test]
fn malformed_label_names_file_and_line() {
    train_bad_data("malformed-label", &good_with(2, "one qid:1 1:-1 2:0.25"), Some(2), &[]);
}

#[test]
fn nan_value_names_file_and_line() {
    train_bad_data("nan", &good_with(2, "1 qid:1 1:NaN 2:0.25"), Some(2), &[]);
}

#[test]
fn inf_label_names_file_and_line() {
    train_bad_data("inf", &good_with(4, "inf qid:2 1:-0.5 2:-1"), Some(4), &[]);
}

#[test]
fn overflowing_value_names_file_and_line() {
    train_bad_data("overflow", &good_with(3, "2 qid:2 1:1e999 2:1"), Some(3), &[]);
}

#[test]
fn feature_index_zero_names_file_and_line() {
    train_bad_data("index0", &good_with(3, "2 qid:2 0:0.5 2:1"), Some(3), &[]);
}

#[test]
fn qid_on_some_lines_only_names_file_and_line() {
    train_bad_data("qid-some", &good_with(3, "2 1:0.5 2:1"), Some(3), &["qid"]);
}

#[test]
fn empty_file_is_an_error() {
    train_bad_data("empty", "", None, &[]);
}

#[test]
fn comments_only_file_is_an_error() {
    train_bad_data("comments", "# nothing here\n\n   \n", None, &[]);
}

#[test]
fn missing_file_is_an_error() {
    let dir = Scratch::new("missing");
    let data = dir.root.join("in").join("does-not-exist.light");
    let run = ranklet(&dir, train_args(&data, &dir.out("m.rkl"), &[]));
    assert_bad_input(&run, &dir, Some(&data), None, &[]);
}

#[test]
fn pair_naming_an_unknown_row_names_file_and_line() {
    let dir = Scratch::new("pair-unknown");
    let data = dir.input("items.light", "1 1:1 2:0\n0 1:0 2:1\n2 1:1 2:1\n");
    let pairs = dir.input("items.pairs", "0 1\n2 1\n1 3\n");
    let run = ranklet(&dir, train_args(&data, &dir.out("m.rkl"), &["--pairs", pairs.to_str().unwrap()]));
    assert_bad_input(&run, &dir, Some(&pairs), Some(3), &[]);
}

#[test]
fn negative_lambda_is_an_error() {
    let dir = Scratch::new("neg-lambda");
    let data = dir.input("ok.light", GOOD);
    let mut args = train_args(&data, &dir.out("m.rkl"), &[]);
    // `--lambda=-0.5` reaches ranklet's own validation …
    let mut eq = args.clone();
    eq.splice(5..7, ["--lambda=-0.5".into()]);
    let run = ranklet(&dir, &eq);
    assert_bad_input(&run, &dir, None, None, &["lambda", "-0.5"]);
    // … and `--lambda -0.5` must fail as well (clap may read it as a flag).
    args[6] = "-0.5".into();
    let run = ranklet(&dir, &args);
    assert_bad_input(&run, &dir, None, None, &[]);
    // In a grid, too.
    let mut grid = train_args(&data, &dir.out("m.rkl"), &["--cv", "2"]);
    grid[6] = "0.1,-1".into();
    let run = ranklet(&dir, &grid);
    assert_bad_input(&run, &dir, None, None, &["lambda"]);
}

#[test]
fn components_beyond_the_kernel_rank_is_an_error() {
    // The centred linear kernel of 2 features has rank ≤ 2.
    let dir = Scratch::new("p-rank");
    let data = dir.input("ok.light", GOOD);
    let args: Vec<OsString> = ["train", "--algo", "kpcrank", "--kernel", "linear", "--components", "3", "--data"]
        .iter()
        .map(OsString::from)
        .chain([os(&data), "-o".into(), os(&dir.out("m.rkl"))])
        .collect();
    let run = ranklet(&dir, &args);
    assert_bad_input(&run, &dir, None, None, &["components", "rank"]);
}

#[test]
fn components_beyond_the_kernel_rank_in_every_grid_point_is_an_error() {
    // Every point of the grid fails on every fold: no model, and (as for
    // any error) nothing on stdout.
    let dir = Scratch::new("p-rank-grid");
    let data = fixture("train.light"); // 3 features: rank ≤ 3
    let args: Vec<OsString> = ["train", "--algo", "kpcrank", "--kernel", "linear", "--components", "4,5", "--cv", "2"]
        .iter()
        .map(OsString::from)
        .chain(["--data".into(), os(&data), "-o".into(), os(&dir.out("m.rkl"))])
        .collect();
    let run = ranklet(&dir, &args);
    assert_bad_input(&run, &dir, None, None, &["components"]);
}

#[test]
fn unknown_kernel_is_an_error() {
    let dir = Scratch::new("kernel");
    let data = dir.input("ok.light", GOOD);
    let mut args = train_args(&data, &dir.out("m.rkl"), &[]);
    args[4] = "sigmoid:1".into();
    let run = ranklet(&dir, &args);
    assert_bad_input(&run, &dir, None, None, &["sigmoid"]);
}

#[test]
fn grid_without_cv_is_an_error() {
    let dir = Scratch::new("grid-nocv");
    let data = dir.input("ok.light", GOOD);
    let mut args = train_args(&data, &dir.out("m.rkl"), &[]);
    args[6] = "0.1,1".into();
    let run = ranklet(&dir, &args);
    assert_bad_input(&run, &dir, None, None, &["--cv"]);
}

#[test]
fn failed_train_leaves_an_existing_model_untouched() {
    let dir = Scratch::new("keep");
    let data = fixture("train.light");
    let model = dir.out("m.rkl");
    let run = ranklet(&dir, train_args(&data, &model, &[]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let before = fs::read(&model).unwrap();
    let bad = dir.input("bad.light", good_with(3, "2 qid:2 1:0.5 2:abc"));
    let run = ranklet(&dir, train_args(&bad, &model, &[]));
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert_eq!(fs::read(&model).unwrap(), before, "the old model must survive a failed train");
    assert_eq!(dir.out_entries(), vec!["m.rkl".to_string()], "no temporary may be left behind");
}

/// A model for the score/eval tests, in `in/` so that `out/` stays empty.
fn good_model(dir: &Scratch) -> (PathBuf, Vec<u8>) {
    let model = dir.root.join("in").join("m.rkl");
    let run = ranklet(dir, train_args(&fixture("train.light"), &model, &[]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let bytes = fs::read(&model).unwrap();
    (model, bytes)
}

fn assert_bad_model(tag: &str, corrupt: impl Fn(&mut Vec<u8>)) {
    let dir = Scratch::new(tag);
    let (model, mut bytes) = good_model(&dir);
    corrupt(&mut bytes);
    fs::write(&model, &bytes).unwrap();
    let test = fixture("test_interleaved.light");
    for cmd in ["score", "eval"] {
        let run = ranklet(&dir, [OsString::from(cmd), "-m".into(), os(&model), "--data".into(), os(&test)]);
        assert_bad_input(&run, &dir, Some(&model), None, &[]);
    }
}

#[test]
fn truncated_model_is_an_error() {
    assert_bad_model("truncated", |b| b.truncate(b.len() / 2));
}

#[test]
fn model_without_its_last_byte_is_an_error() {
    assert_bad_model("truncated1", |b| {
        b.pop();
    });
}

#[test]
fn corrupted_model_is_an_error() {
    // One flipped bit in the middle (payload; the checksum catches it).
    assert_bad_model("corrupt-mid", |b| {
        let i = b.len() / 2;
        b[i] ^= 0x10;
    });
}

#[test]
fn corrupted_magic_is_an_error() {
    assert_bad_model("corrupt-magic", |b| b[0] ^= 0xff);
}

#[test]
fn empty_model_is_an_error() {
    assert_bad_model("empty-model", |b| b.clear());
}

#[test]
fn data_file_given_as_model_is_an_error() {
    assert_bad_model("text-model", |b| *b = GOOD.as_bytes().to_vec());
}

#[test]
fn eval_on_real_valued_labels_never_prints_a_partial_table() {
    // Labels of a RankRLS data set may be any real scores; ndcg needs
    // non-negative gains. Whatever eval decides (skip ndcg, or refuse the
    // file), it must not print half a table and then fail.
    let dir = Scratch::new("eval-neg");
    let (model, _) = good_model(&dir);
    let data = dir.input("neg.light", "-1.5 qid:1 1:1 2:2 3:3\n0.5 qid:1 1:-1 2:0 3:1\n2 qid:1 1:0 2:1 3:0\n");
    let run = ranklet(&dir, [OsString::from("eval"), "-m".into(), os(&model), "--data".into(), os(&data)]);
    if run.code != Some(0) {
        assert_bad_input(&run, &dir, Some(&data), None, &[]);
    } else {
        assert!(run.stdout.lines().all(|l| l.split('\t').count() == 2), "{run:?}");
    }
}

#[test]
fn score_with_bad_data_names_file_and_line() {
    let dir = Scratch::new("score-bad-data");
    let (model, _) = good_model(&dir);
    let data = dir.input("bad.light", "1 qid:1 1:1 2:2 3:3\n1 qid:1 1:1 2:x 3:3\n");
    let run = ranklet(&dir, [OsString::from("score"), "-m".into(), os(&model), "--data".into(), os(&data)]);
    assert_bad_input(&run, &dir, Some(&data), Some(2), &[]);
}

// ---------------------------------------------------------------------------
// Happy paths.

#[test]
fn help_exits_zero() {
    let dir = Scratch::new("help");
    for args in [vec!["--help"], vec!["train", "--help"], vec!["score", "--help"], vec!["eval", "--help"]] {
        let run = ranklet(&dir, &args);
        assert_eq!(run.code, Some(0), "{args:?}: {run:?}");
        assert!(run.stdout.contains("Usage"), "{args:?}: {run:?}");
    }
    let run = ranklet(&dir, ["train", "--help"]);
    for flag in ["--algo", "--kernel", "--lambda", "--components", "--cv", "--data", "--pairs", "--output"] {
        assert!(run.stdout.contains(flag), "train --help lacks {flag}: {run:?}");
    }
}

fn parse_scores(run: &Run) -> Vec<f64> {
    assert_eq!(run.code, Some(0), "{run:?}");
    run.stdout
        .lines()
        .map(|l| {
            let v: f64 = l.trim().parse().unwrap_or_else(|_| panic!("score line {l:?} is not a number: {run:?}"));
            assert!(v.is_finite(), "{run:?}");
            v
        })
        .collect()
}

fn score(dir: &Scratch, model: &Path, data: &Path, extra: &[&str]) -> Vec<f64> {
    let mut args = vec![OsString::from("score"), "-m".into(), os(model), "--data".into(), os(data)];
    args.extend(extra.iter().map(OsString::from));
    parse_scores(&ranklet(dir, args))
}

/// `eval` output as (metric, value) pairs, checking the `metric<TAB>value`
/// shape of every line.
fn eval(dir: &Scratch, model: &Path, data: &Path, extra: &[&str]) -> Vec<(String, f64)> {
    let mut args = vec![OsString::from("eval"), "-m".into(), os(model), "--data".into(), os(data)];
    args.extend(extra.iter().map(OsString::from));
    let run = ranklet(dir, args);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.stdout
        .lines()
        .map(|l| {
            let (name, value) = l.split_once('\t').unwrap_or_else(|| panic!("line {l:?} is not metric<TAB>value"));
            assert!(!name.is_empty() && !value.contains('\t'), "{l:?}");
            let v: f64 = value.parse().unwrap_or_else(|_| panic!("value of {l:?}"));
            assert!(v.is_finite(), "{l:?}");
            (name.to_string(), v)
        })
        .collect()
}

fn n_data_rows(path: &Path) -> usize {
    fs::read_to_string(path).unwrap().lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).count()
}

#[test]
fn train_score_eval() {
    let dir = Scratch::new("happy");
    let model = dir.out("m.rkl");
    let run = ranklet(&dir, train_args(&fixture("train.light"), &model, &[]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(dir.out_entries(), vec!["m.rkl".to_string()], "exactly the model, no temporary");
    let test = fixture("test_interleaved.light");
    let s = score(&dir, &model, &test, &[]);
    assert_eq!(s.len(), n_data_rows(&test), "one score per data row");
    assert!(s.iter().any(|&v| v != s[0]), "scores are not all equal");
    let m = eval(&dir, &model, &test, &[]);
    let names: Vec<&str> = m.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["disagreement", "cindex", "kendall"]);
    assert!(m.iter().all(|(_, v)| (-1.0..=1.0).contains(v)), "{m:?}");
    assert!((0.0..=1.0).contains(&m[0].1) && (0.0..=1.0).contains(&m[1].1), "{m:?}");
    // The data is nearly linear in the features: a linear ranker orders
    // most pairs right.
    assert!(m[0].1 < 0.3, "{m:?}");
}

#[test]
fn train_with_a_grid_and_cv_prints_the_table_and_writes_the_model() {
    let dir = Scratch::new("cv");
    let model = dir.out("m.rkl");
    let mut args = train_args(&fixture("train.light"), &model, &["--cv", "2"]);
    args[6] = "0.01,0.1,1".into();
    let run = ranklet(&dir, &args);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout.lines().filter(|l| l.starts_with("linear\t")).count(), 3, "{run:?}");
    assert_eq!(dir.out_entries(), vec!["m.rkl".to_string()]);
}

/// `ranklet train` (f32 model) then `ranklet score`, against `fit` +
/// `Fitted::predict` in f64 on the same data and parameters.
/// One row learner at one grid point.
#[derive(Clone, Copy, Debug)]
struct Params {
    kernel: Kernel,
    lambda: f64,
    components: usize,
}

/// Fits `algo` at `p` through the learner family the CLI uses.
fn fit_one(be: &mut HostBackend, algo: Algo, p: &Params, table: &Table, target: &Target<'_>) -> fit::Fitted {
    let comps = algo.is_kpc().then(|| vec![p.components]);
    RowFamily::new(algo, vec![p.kernel], vec![p.lambda], comps).unwrap().fit_first(be, table, target).unwrap()
}

fn f32_scores_match_f64(tag: &str, train_flags: &[&str], algo: Algo, params: Params, num_features: Option<usize>) {
    let dir = Scratch::new(tag);
    let (train, test) = (shared(PARSE_TRAIN), shared(PARSE_TEST));
    let model = dir.out("m.rkl");
    let mut args: Vec<OsString> = vec!["train".into()];
    args.extend(train_flags.iter().map(OsString::from));
    args.extend(["--data".into(), os(&train), "-o".into(), os(&model)]);
    if let Some(d) = num_features {
        args.extend(["--num-features".into(), d.to_string().into()]);
    }
    let run = ranklet(&dir, &args);
    assert_eq!(run.code, Some(0), "{run:?}");
    let got = score(&dir, &model, &test, &[]);

    let d_test = read_svmlight(&test, &SvmlightOptions::default()).unwrap().n_features();
    let tr = read_svmlight(&train, &SvmlightOptions { num_features, ..Default::default() }).unwrap();
    // Host side: the test rows at the common width (for a linear model the
    // extra features have weight 0, which is what the device path does by
    // dropping them).
    let d = tr.n_features().max(d_test);
    let tr = read_svmlight(&train, &SvmlightOptions { num_features: Some(d), ..Default::default() }).unwrap();
    let te = read_svmlight(&test, &SvmlightOptions { num_features: Some(d), ..Default::default() }).unwrap();
    let mut be = HostBackend::new(BackendChoice::Faer);
    let fitted = fit_one(&mut be, algo, &params, &Table::from_dataset(&tr, true), &Target::Labels(QueryWeight::Equal));
    let t = Table::from_dataset(&te, true);
    let p = fitted.predict(&mut be, &t).unwrap();
    let mut want = vec![f64::NAN; te.n_rows()];
    t.orig.iter().zip(&p).for_each(|(&r, &v)| want[r] = v);

    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let dev = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max) / scale;
    eprintln!("{tag}: f32 score vs f64 predict, max relative deviation {dev:.3e}");
    assert!(dev <= F32_REL, "{tag}: {dev:.3e} > {F32_REL:e}");
}

#[test]
fn f32_scores_match_f64_rankrls_linear_parse_rank() {
    // The test file has features past the training ones: weight 0.
    let flags = ["--algo", "rankrls", "--kernel", "linear", "--lambda", "1"];
    let params = Params { kernel: Kernel::Linear, lambda: 1.0, components: 0 };
    f32_scores_match_f64("f32-lin", &flags, Algo::Rankrls, params, None);
}

#[test]
fn f32_scores_match_f64_rankrls_rbf_parse_rank() {
    let d = read_svmlight(shared(PARSE_TEST), &SvmlightOptions::default()).unwrap().n_features();
    let flags = ["--algo", "rankrls", "--kernel", "rbf:0.001", "--lambda", "0.1"];
    let params = Params { kernel: Kernel::Rbf { gamma: 1e-3 }, lambda: 0.1, components: 0 };
    f32_scores_match_f64("f32-rbf", &flags, Algo::Rankrls, params, Some(d));
}

#[test]
fn f32_scores_match_f64_kpcrank_rbf_parse_rank() {
    let d = read_svmlight(shared(PARSE_TEST), &SvmlightOptions::default()).unwrap().n_features();
    let flags = ["--algo", "kpcrank", "--kernel", "rbf:0.001", "--components", "15"];
    let params = Params { kernel: Kernel::Rbf { gamma: 1e-3 }, lambda: 0.0, components: 15 };
    f32_scores_match_f64("f32-kpc", &flags, Algo::Kpcrank, params, Some(d));
}

/// `ranklet train … --precision f64` on the parse-rank training file
/// (without `--num-features`, so the model has the training file's width),
/// then `ranklet score` of the test file, whose rows have features past
/// that width. Returns the scores and the learner's own predictions of the
/// test rows, computed in-process at the common width (the training rows
/// being 0 in the extra features).
fn f64_scores_and_predictions(tag: &str, train_flags: &[&str], algo: Algo, params: Params) -> (Vec<f64>, Vec<f64>) {
    let dir = Scratch::new(tag);
    let (train, test) = (shared(PARSE_TRAIN), shared(PARSE_TEST));
    let model = dir.out("m.rkl");
    let mut args: Vec<OsString> = vec!["train".into()];
    args.extend(train_flags.iter().map(OsString::from));
    args.extend(["--precision".into(), "f64".into(), "--data".into(), os(&train), "-o".into(), os(&model)]);
    let run = ranklet(&dir, &args);
    assert_eq!(run.code, Some(0), "{run:?}");
    let run = ranklet(&dir, [OsString::from("score"), "-m".into(), os(&model), "--data".into(), os(&test)]);
    assert!(run.stderr.is_empty(), "{run:?}");
    let got = parse_scores(&run);

    let d_train = read_svmlight(&train, &SvmlightOptions::default()).unwrap().n_features();
    let d_test = read_svmlight(&test, &SvmlightOptions::default()).unwrap().n_features();
    assert!(d_test > d_train, "the test file must reach past the training features");
    let tr = read_svmlight(&train, &SvmlightOptions { num_features: Some(d_test), ..Default::default() }).unwrap();
    let te = read_svmlight(&test, &SvmlightOptions { num_features: Some(d_test), ..Default::default() }).unwrap();
    let mut be = HostBackend::new(BackendChoice::Faer);
    let fitted = fit_one(&mut be, algo, &params, &Table::from_dataset(&tr, true), &Target::Labels(QueryWeight::Equal));
    let t = Table::from_dataset(&te, true);
    let p = fitted.predict(&mut be, &t).unwrap();
    let mut want = vec![f64::NAN; te.n_rows()];
    t.orig.iter().zip(&p).for_each(|(&r, &v)| want[r] = v);
    assert_eq!(got.len(), want.len());
    (got, want)
}

/// Host scoring of an f64 model equals the learner's predictions: every
/// score within 1e-12 of the largest |prediction| (the summation order
/// differs between the scorer and the learner's matrix products; per
/// element, scores near 0 would measure that cancellation, not the scorer).
fn f64_scores_equal_predictions(tag: &str, train_flags: &[&str], algo: Algo, params: Params) {
    let (got, want) = f64_scores_and_predictions(tag, train_flags, algo, params);
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let dev = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max) / scale;
    let rel = got.iter().zip(&want).map(|(g, w)| (g - w).abs() / w.abs()).fold(0.0, f64::max);
    eprintln!("{tag}: f64 score vs learner: max deviation {dev:.3e} of the scale, {rel:.3e} per element");
    assert!(dev <= 1e-12, "{tag}: {dev:.3e} > 1e-12");
}

#[test]
fn f64_scores_equal_predictions_rankrls_linear() {
    let flags = ["--algo", "rankrls", "--kernel", "linear", "--lambda", "1"];
    f64_scores_equal_predictions(
        "f64-lin",
        &flags,
        Algo::Rankrls,
        Params { kernel: Kernel::Linear, lambda: 1.0, components: 0 },
    );
}

#[test]
fn f64_scores_equal_predictions_rankrls_rbf_past_training_features() {
    // The test rows' features past the training width are scored by core
    // (each squared distance gains their squared norm), no --num-features.
    let flags = ["--algo", "rankrls", "--kernel", "rbf:0.001", "--lambda", "0.1"];
    let params = Params { kernel: Kernel::Rbf { gamma: 1e-3 }, lambda: 0.1, components: 0 };
    f64_scores_equal_predictions("f64-rbf", &flags, Algo::Rankrls, params);
}

#[test]
fn f64_scores_equal_predictions_kpcrank_rbf() {
    let flags = ["--algo", "kpcrank", "--kernel", "rbf:0.001", "--components", "15"];
    let params = Params { kernel: Kernel::Rbf { gamma: 1e-3 }, lambda: 0.0, components: 15 };
    f64_scores_equal_predictions("f64-kpc", &flags, Algo::Kpcrank, params);
}

#[test]
fn f64_scores_equal_predictions_rls_poly() {
    let flags = ["--algo", "rls", "--kernel", "poly:2:0.01:1", "--lambda", "1"];
    let params =
        Params { kernel: Kernel::Polynomial { gamma: 0.01, coef0: 1.0, degree: 2 }, lambda: 1.0, components: 0 };
    f64_scores_equal_predictions("f64-rls", &flags, Algo::Rls, params);
}

#[test]
fn rbf_past_training_features_equals_num_features_model() {
    // The RBF test rows of the parse-rank test file against a model trained
    // without --num-features equal those against the model trained with
    // --num-features covering both files (f64 models, f64 scoring).
    let dir = Scratch::new("rbf-dim");
    let (train, test) = (shared(PARSE_TRAIN), shared(PARSE_TEST));
    let d_test = read_svmlight(&test, &SvmlightOptions::default()).unwrap().n_features().to_string();
    let (narrow, wide) = (dir.out("narrow.rkl"), dir.out("wide.rkl"));
    for (model, extra) in [(&narrow, vec![]), (&wide, vec!["--num-features", d_test.as_str()])] {
        let mut args: Vec<OsString> = ["train", "--algo", "rankrls", "--kernel", "rbf:0.001", "--lambda", "0.1"]
            .iter()
            .chain(&["--precision", "f64"])
            .chain(&extra)
            .map(OsString::from)
            .collect();
        args.extend(["--data".into(), os(&train), "-o".into(), os(model)]);
        assert_eq!(ranklet(&dir, &args).code, Some(0));
    }
    let (a, b) = (score(&dir, &narrow, &test, &[]), score(&dir, &wide, &test, &[]));
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() <= 1e-12 * y.abs(), "row {i}: {x} vs {y}");
    }
    // and the f32 device path agrees with the f64 scores to the f32 bound
    let c = score(&dir, &narrow, &test, &["--precision", "f32"]);
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let dev = c.iter().zip(&b).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max) / scale;
    assert!(dev <= F32_REL, "{dev:e}");
}

#[test]
fn score_precision_f32_is_the_device_path() {
    // `--precision f32` on an f64 model prints what the device computes
    // (core's f32 entry point on f32 inputs), as the shortest f32 decimal.
    let dir = Scratch::new("score-f32");
    let model = dir.out("m.rkl");
    let run = ranklet(&dir, train_args(&fixture("train.light"), &model, &["--precision", "f64"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let data = fixture("test_interleaved.light");
    let args = [OsString::from("score"), "-m".into(), os(&model), "--data".into(), os(&data)];
    let run = ranklet(&dir, args.iter().cloned().chain(["--precision".into(), "f32".into()]));
    let bytes = fs::read(&model).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    let ds = read_svmlight(&data, &SvmlightOptions::default()).unwrap();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), ds.n_rows(), "{run:?}");
    for (i, line) in lines.iter().enumerate() {
        let (c, v) = ds.row(i);
        let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        let device = view.score_sparse(c, &v32).unwrap();
        assert_eq!(line.parse::<f32>().unwrap().to_bits(), device.to_bits(), "row {i}: {line}");
        assert_eq!(*line, device.to_string());
    }
    // The default for an f64 model is f64: round-trippable f64 scores.
    let f64_out = ranklet(&dir, args.iter().cloned()).stdout;
    for (i, line) in f64_out.lines().enumerate() {
        let (c, v) = ds.row(i);
        assert_eq!(line.parse::<f64>().unwrap(), view.score_sparse_f64(c, v).unwrap(), "row {i}");
    }
}

#[test]
fn rows_of_non_contiguous_queries_score_in_input_order() {
    let dir = Scratch::new("noncontig");
    let model = dir.out("m.rkl");
    let run = ranklet(&dir, train_args(&fixture("train.light"), &model, &["--precision", "f64"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let (inter, contig) = (fixture("test_interleaved.light"), fixture("test_contiguous.light"));
    let a = score(&dir, &model, &inter, &[]);
    let b = score(&dir, &model, &contig, &[]);
    // Row i of test_contiguous.light is row PERM[i] of test_interleaved.light
    // (its comment line).
    let head = fs::read_to_string(&contig).unwrap();
    let perm: Vec<usize> = head
        .lines()
        .next()
        .unwrap()
        .split("PERM = ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(a.len(), 12);
    assert_eq!(b.len(), 12);
    for (i, &p) in perm.iter().enumerate() {
        // Same row, same model, same arithmetic: bit-identical.
        assert_eq!(b[i], a[p], "row {p} of the interleaved file");
    }
    // And against the host model in file order (f64 model: 1e-9 covers the
    // f32 inputs, which these 3-decimal features survive exactly, and
    // summation order).
    let tr = read_svmlight(fixture("train.light"), &SvmlightOptions::default()).unwrap();
    let te = read_svmlight(&inter, &SvmlightOptions::default()).unwrap();
    let mut be = HostBackend::new(BackendChoice::Faer);
    let params = Params { kernel: Kernel::Linear, lambda: 1.0, components: 0 };
    let fitted =
        fit_one(&mut be, Algo::Rankrls, &params, &Table::from_dataset(&tr, true), &Target::Labels(QueryWeight::Equal));
    let want: Vec<f64> = match &fitted {
        fit::Fitted::Linear { w, offset } => (0..te.n_rows())
            .map(|i| {
                let (c, v) = te.row(i);
                offset + c.iter().zip(v).map(|(&c, &v)| w[c as usize] * v).sum::<f64>()
            })
            .collect(),
        fit::Fitted::Kernel { .. } => panic!("linear kernel gives a linear model"),
    };
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in a.iter().zip(&want).enumerate() {
        assert!((g - w).abs() <= 1e-6 * scale, "row {i}: {g} vs {w}");
    }
    // The metrics group rows by qid, wherever they are in the file.
    assert_eq!(eval(&dir, &model, &inter, &[]), eval(&dir, &model, &contig, &[]));
}

#[test]
fn pairs_training_and_pairerror() {
    let dir = Scratch::new("pairs");
    let model = dir.out("m.rkl");
    let (data, pairs) = (fixture("items.light"), fixture("items.pairs"));
    let run = ranklet(&dir, train_args(&data, &model, &["--pairs", pairs.to_str().unwrap()]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(dir.out_entries(), vec!["m.rkl".to_string()]);
    let m = eval(&dir, &model, &data, &["--pairs", pairs.to_str().unwrap()]);
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].0, "pairerror");
    // The pairs follow a linear score of the features: the fit orders
    // (nearly) all of them.
    assert!((0.0..0.2).contains(&m[0].1), "{m:?}");
    let s = score(&dir, &model, &data, &[]);
    assert_eq!(s.len(), 10);
    // Pair CV works too.
    let mut args = train_args(&data, &dir.out("cv.rkl"), &["--pairs", pairs.to_str().unwrap(), "--cv", "3"]);
    args[6] = "0.1,1".into();
    let run = ranklet(&dir, &args);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("pairs"), "{run:?}");
}

// ---------------------------------------------------------------------------
// One grammar: `-m` everywhere, sample orders through the one parser.

/// `train` of linear RankRLS fits while it reads when each query's lines
/// are consecutive (`a`), from memory when a query resumes later in the
/// file (`b`, the last line of query 1 moved after query 2: the table's
/// learner order is `a`'s). Same rows in the same order: the same
/// metadata but for the file name, and the same weights to 1e-12 of the
/// largest (the streamed fit sums the Gram matrix block by block: they
/// differ in the last bits, ~1e-15 here).
#[test]
fn streamed_and_in_memory_train_write_the_same_model() {
    let dir = Scratch::new("stream-vs-memory");
    let a = "1 qid:1 1:0.5 2:0.25\n0 qid:1 1:0.1 3:0.7\n2 qid:1 2:0.9\n1 qid:2 1:0.3 2:0.2 3:0.1\n0 qid:2 3:0.4\n\
             2 qid:3 1:0.8 3:0.6\n1 qid:3 2:0.5\n0 qid:3 1:0.2 2:0.1\n";
    let b = "1 qid:1 1:0.5 2:0.25\n0 qid:1 1:0.1 3:0.7\n1 qid:2 1:0.3 2:0.2 3:0.1\n0 qid:2 3:0.4\n2 qid:1 2:0.9\n\
             2 qid:3 1:0.8 3:0.6\n1 qid:3 2:0.5\n0 qid:3 1:0.2 2:0.1\n";
    let (mut shown, mut weights) = (Vec::new(), Vec::new());
    for (name, text) in [("a", a), ("b", b)] {
        let data = dir.input(&format!("{name}.light"), text);
        let model = dir.out(&format!("{name}.rkl"));
        let run = ranklet(&dir, train_args(&data, &model, &["--precision", "f64"]));
        assert_eq!(run.code, Some(0), "{run:?}");
        let run = ranklet(&dir, [OsString::from("inspect"), "-m".into(), os(&model)]);
        assert_eq!(run.code, Some(0), "{run:?}");
        let (w, kept): (Vec<&str>, Vec<&str>) = run
            .stdout
            .lines()
            .filter(|l| !l.starts_with("checksum") && !l.contains("training_data="))
            .partition(|l| l.starts_with("  feature "));
        shown.push(kept.join("\n"));
        weights.push(w.iter().map(|l| l.rsplit('\t').next().unwrap().parse::<f64>().unwrap()).collect::<Vec<f64>>());
    }
    assert_eq!(shown[0], shown[1]);
    assert_eq!(weights[0].len(), 3);
    let scale = weights[1].iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (u, v) in weights[0].iter().zip(&weights[1]) {
        assert!((u - v).abs() <= 1e-12 * scale, "{:?} vs {:?}", weights[0], weights[1]);
    }
    assert!(shown[0].contains("queries=3") && shown[0].contains("rows=8"), "{}", shown[0]);
}

/// The streamed fit of a file of several chunks writes the same model
/// bytes on 1, 2 and 3 threads (RankRLS and RLS).
#[test]
fn streamed_train_writes_the_same_bytes_on_any_number_of_threads() {
    let dir = Scratch::new("stream-threads");
    let mut rng = ranklet::rng::SplitMix64(21);
    let mut text = String::new();
    for i in 0..12_000 {
        text.push_str(&format!("{} qid:{}", rng.next_u64() % 3, i / 7));
        for j in 1..=30 {
            text.push_str(&format!(" {j}:{:.6}", (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64));
        }
        text.push('\n');
    }
    assert!(text.len() > 3 << 20);
    let data = dir.input("big.light", text);
    for algo in ["rankrls", "rls"] {
        let models: Vec<Vec<u8>> = [1, 2, 3]
            .iter()
            .map(|t| {
                let model = dir.out(&format!("{algo}{t}.rkl"));
                let mut args = train_args(&data, &model, &["--precision", "f64"]);
                args[2] = algo.into();
                let out = std::process::Command::new(env!("CARGO_BIN_EXE_ranklet"))
                    .args(&args)
                    .env("RAYON_NUM_THREADS", t.to_string())
                    .current_dir(&dir.root)
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{out:?}");
                fs::read(&model).unwrap()
            })
            .collect();
        assert_eq!(models[0], models[1], "{algo}");
        assert_eq!(models[0], models[2], "{algo}");
    }
}

#[test]
fn inspect_takes_the_model_with_m_and_keeps_the_positional_alias() {
    let dir = Scratch::new("inspect-m");
    let (model, mut bytes) = good_model(&dir);
    let run = ranklet(&dir, [OsString::from("inspect"), "-m".into(), os(&model)]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.starts_with("kind: linear\n"), "{run:?}");
    let alias = ranklet(&dir, [OsString::from("inspect"), os(&model)]);
    assert_eq!((alias.code, &alias.stdout), (Some(0), &run.stdout), "{alias:?}");
    let both = ranklet(&dir, [OsString::from("inspect"), "-m".into(), os(&model), os(&model)]);
    assert_bad_input(&both, &dir, None, None, &[]);
    let none = ranklet(&dir, ["inspect"]);
    assert_bad_input(&none, &dir, None, None, &["--model"]);
    bytes.truncate(bytes.len() - 1);
    fs::write(&model, &bytes).unwrap();
    let bad = ranklet(&dir, [OsString::from("inspect"), "-m".into(), os(&model)]);
    assert_bad_input(&bad, &dir, Some(&model), None, &[]);
}

const ITEMS: &str = "id,a,b,c\ni1,1.0,0.2,0.3\ni2,0.5,0.9,0.1\ni3,0.1,0.4,0.8\ni4,0.7,0.3,0.5\ni5,0.2,0.6,0.2\n";
const ORDERS: &str = "i1 i4 i2 i5 i3\ni1 i2 i4 i3\ni4 i1 i5 i3\ni2 i1 i4 i5 i3\n";

#[test]
fn sample_orders_train_and_eval_through_the_one_parser() {
    let dir = Scratch::new("orders");
    let items = dir.input("items.csv", ITEMS);
    let orders = dir.input("orders.txt", ORDERS);
    let model = dir.out("o.rkl");
    let mut args: Vec<OsString> =
        ["train", "--algo", "err", "--reduce", "pca:2", "--items"].map(OsString::from).to_vec();
    args.extend([os(&items), "--orders".into(), os(&orders), "-o".into(), os(&model)]);
    let run = ranklet(&dir, &args);
    assert_eq!(run.code, Some(0), "{run:?}");
    let run = ranklet(
        &dir,
        [OsString::from("eval"), "-m".into(), os(&model), "--items".into(), os(&items), "--orders".into(), os(&orders)],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let names: Vec<&str> = run.stdout.lines().filter_map(|l| l.split('\t').next()).collect();
    assert_eq!(names, ["spearman", "kendall"], "{run:?}");
    fs::remove_file(&model).unwrap();
    // Flags of another data kind: refused by the parser, naming both flags.
    for (flag, value) in [("--data", "x.light"), ("--kernel", "rbf:1"), ("--cv", "3"), ("--pairs", "p.txt")] {
        let mut bad = args.clone();
        bad.extend([flag.into(), value.into()]);
        let run = ranklet(&dir, &bad);
        assert_bad_input(&run, &dir, None, None, &[flag]);
        assert!(run.stderr.contains("--items") || run.stderr.contains("--orders") || run.stderr.contains("--reduce"));
    }
    // A learner of rows on orders, and err on rows: bad input.
    let mut rows_learner = args.clone();
    rows_learner[2] = "kpcrank".into();
    assert_bad_input(&ranklet(&dir, &rows_learner), &dir, None, None, &["kpcrank", "err"]);
    let mut err_on_rows = train_args(&fixture("train.light"), &dir.out("m.rkl"), &[]);
    err_on_rows[2] = "err".into();
    assert_bad_input(&ranklet(&dir, &err_on_rows), &dir, None, None, &["--items"]);
}

// ---------------------------------------------------------------------------
// Learning on the device: online-update and simulate-feedback.

/// A linear prior trained on the CLI fixture, in `out/`.
fn online_prior(dir: &Scratch) -> PathBuf {
    let prior = dir.out("prior.rkl");
    let run = ranklet(dir, train_args(&fixture("train.light"), &prior, &[]));
    assert_eq!(run.code, Some(0), "{run:?}");
    prior
}

fn inspect_value(dir: &Scratch, model: &Path, key: &str) -> String {
    let run = ranklet(dir, ["inspect".into(), "-m".into(), os(model)]);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")).map(str::to_string))
        .unwrap_or_else(|| panic!("no `{key}:` in {run:?}"))
}

#[test]
fn online_update_applies_feedback_and_continues_a_saved_state() {
    let dir = Scratch::new("online-update");
    let prior = online_prior(&dir);
    let pairs = dir.input("fb.pairs", "# winner loser [magnitude]\n1 0\n5 2 2\n7 3\n3 7 0\n");
    let data = fixture("train.light");
    let state = dir.out("state.rkl");
    let args = |model: &Path, out: &Path, extra: &[&str]| {
        let mut v: Vec<OsString> = vec!["online-update".into(), "-m".into(), os(model), "--data".into(), os(&data)];
        v.extend(["--pairs".into(), os(&pairs), "-o".into(), os(out)]);
        v.extend(extra.iter().map(OsString::from));
        v
    };
    let run = ranklet(&dir, args(&prior, &state, &["--lambda", "2"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(inspect_value(&dir, &state, "kind"), "online-rankrls");
    // The magnitude-0 line is skipped, as a device would not send it.
    assert_eq!(inspect_value(&dir, &state, "observations"), "3");
    assert_eq!(inspect_value(&dir, &state, "lambda"), "2");
    let scored = ranklet(&dir, ["score".into(), "-m".into(), os(&state), "--data".into(), os(&data)]);
    assert_eq!(scored.code, Some(0), "{scored:?}");
    assert_eq!(scored.stdout.lines().count(), 24);
    // Continue the saved state: it keeps its λ.
    let again = dir.out("again.rkl");
    let run = ranklet(&dir, args(&state, &again, &[]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(inspect_value(&dir, &again, "observations"), "6");
    fs::remove_file(&again).unwrap();
    fs::remove_file(&state).unwrap();
    fs::remove_file(&prior).unwrap();
    let prior = dir.input("prior.rkl", fs::read(online_prior(&dir)).unwrap());
    fs::remove_file(dir.out("prior.rkl")).unwrap();
    // Bad input: exit 2, the output directory stays empty.
    let state_in = dir.input("state.rkl", {
        let run = ranklet(&dir, args(&prior, &dir.out("s.rkl"), &["--lambda", "2"]));
        assert_eq!(run.code, Some(0), "{run:?}");
        let b = fs::read(dir.out("s.rkl")).unwrap();
        fs::remove_file(dir.out("s.rkl")).unwrap();
        b
    });
    assert_bad_input(&ranklet(&dir, args(&prior, &state, &[])), &dir, None, None, &["--lambda"]);
    assert_bad_input(&ranklet(&dir, args(&prior, &state, &["--lambda", "0"])), &dir, None, None, &["lambda"]);
    assert_bad_input(&ranklet(&dir, args(&state_in, &state, &["--lambda", "3"])), &dir, None, None, &["keeps"]);
    let bad_pairs = dir.input("bad.pairs", "1 0\n2 99\n");
    let mut bad = args(&prior, &state, &["--lambda", "1"]);
    bad[6] = os(&bad_pairs);
    assert_bad_input(&ranklet(&dir, &bad), &dir, Some(&bad_pairs), Some(2), &[]);
}

#[test]
fn simulate_feedback_prints_curves_and_writes_plot_and_state() {
    let dir = Scratch::new("simulate");
    let prior = dir.input("prior.rkl", fs::read(online_prior(&dir)).unwrap());
    fs::remove_file(dir.out("prior.rkl")).unwrap();
    let data = fixture("train.light");
    let base: Vec<OsString> = ["simulate-feedback", "-m"]
        .iter()
        .map(OsString::from)
        .chain([os(&prior), "--data".into(), os(&data)])
        .chain(["--rounds", "20", "--users", "3", "--every", "5", "--candidates", "6"].iter().map(OsString::from))
        .collect();
    let mut args = base.clone();
    args.extend(["--plot".into(), os(&dir.out("curve.png")), "--save-state".into(), os(&dir.out("s.rkl"))]);
    let run = ranklet(&dir, &args);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "answers\trandom\trandom:lo\trandom:hi\tactive\tactive:lo\tactive:hi", "{run:?}");
    assert_eq!(lines.len(), 1 + 5, "0, 5, 10, 15, 20 answers: {run:?}");
    for l in &lines[1..] {
        let v: Vec<f64> = l.split('\t').map(|x| x.parse().unwrap()).collect();
        assert!(v[1..].iter().all(|e| e.is_finite()), "{l}");
        assert!((0.0..=1.0).contains(&v[1]) && (0.0..=1.0).contains(&v[4]), "{l}");
    }
    // Both rules start from the same prior on the same users.
    let first: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!(first[1], first[4], "{run:?}");
    assert!(run.stderr.contains("answered \"same\""), "{run:?}");
    assert_eq!(dir.out_entries(), ["curve.png", "s.rkl"]);
    assert_eq!(inspect_value(&dir, &dir.out("s.rkl"), "kind"), "online-rankrls");
    fs::remove_file(dir.out("curve.png")).unwrap();
    fs::remove_file(dir.out("s.rkl")).unwrap();
    // --active alone: one rule.
    let mut args = base.clone();
    args.push("--active".into());
    let run = ranklet(&dir, &args);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.starts_with("answers\tactive\tactive:lo\tactive:hi\n"), "{run:?}");
    // A bad oracle file names its line; nothing is written.
    let oracle = dir.input("oracle.txt", "1\nx\n");
    let mut args = base.clone();
    args.extend(["--oracle".into(), os(&oracle), "--plot".into(), os(&dir.out("c.png"))]);
    assert_bad_input(&ranklet(&dir, &args), &dir, Some(&oracle), Some(2), &[]);
    let short = dir.input("short.txt", "1\n2\n");
    let mut args = base.clone();
    args.extend(["--oracle".into(), os(&short)]);
    assert_bad_input(&ranklet(&dir, &args), &dir, Some(&short), None, &["2 scores for 24 items"]);
    let mut args = base;
    args.extend(["--test-frac".into(), "1.5".into()]);
    assert_bad_input(&ranklet(&dir, &args), &dir, None, None, &["--test-frac"]);
}
