//! `ranklet train --basis M` (reduced-basis kernel models) end to end: the
//! bad values (exit 2, a message naming the flag, no file), the model's
//! basis and metadata as `ranklet inspect` shows them, the f32 device
//! scores of a reduced-basis model against the f64 host predictions of the
//! same fit (so the existing kernel-expansion kind scores it unchanged),
//! and cross-validation with landmarks chosen inside each fold.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use ranklet::data::svmlight::{read_svmlight, SvmlightOptions};
use ranklet::family::{Algo, RowFamily};
use ranklet::fit::Target;
use ranklet::hostbackend::{BackendChoice, HostBackend};
use ranklet::table::Table;
use ranklet_core::graph::QueryWeight;
use ranklet_core::kernel::Kernel;

mod support;
use support::{assert_bad_input, os, ranklet, Run, Scratch};

const PARSE_TRAIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/parse-rank/rank_train.light");
const PARSE_TEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/parse-rank/rank_test.light");
/// f32 device scores against f64 host predictions, relative to the largest
/// |score|: the bound of `cli.rs` (f32 rounding ~1e-7, margin 100).
const F32_REL: f64 = 1e-5;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cli").join(name)
}

fn train(dir: &Scratch, data: &Path, model: &Path, flags: &[&str]) -> Run {
    let mut args: Vec<OsString> = vec!["train".into()];
    args.extend(flags.iter().map(OsString::from));
    args.extend(["--data".into(), os(data), "-o".into(), os(model)]);
    ranklet(dir, args)
}

#[test]
fn basis_zero_or_beyond_the_training_rows_is_refused() {
    let data = fixture("train.light"); // 24 rows
    for (m, also) in [("0", vec!["--basis must be ≥ 1"]), ("25", vec!["--basis 25 exceeds the 24 training rows"])] {
        let dir = Scratch::new("basis-bad");
        let flags = ["--algo", "kpcrank", "--kernel", "rbf:0.5", "--components", "3", "--basis", m];
        let run = train(&dir, &data, &dir.out("m.rkl"), &flags);
        let file = (m != "0").then_some(data.as_path());
        assert_bad_input(&run, &dir, file, None, &also);
    }
    // A negative M is a parse error of the flag's value (also exit 2).
    let dir = Scratch::new("basis-neg");
    let run = train(&dir, &data, &dir.out("m.rkl"), &["--algo", "rankrls", "--kernel", "rbf:0.5", "--basis=-3"]);
    assert_bad_input(&run, &dir, None, None, &["--basis"]);
}

fn inspect(dir: &Scratch, model: &Path) -> String {
    let run = ranklet(dir, [OsString::from("inspect"), "-m".into(), os(model)]);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.stdout
}

/// Trains `algo` with `--basis m` on the parse-rank data (sparse, RBF),
/// checks what `inspect` shows, and compares `ranklet score` (f32, device
/// parser) with the f64 host predictions of the same fit.
fn reduced_model_scores_like_its_fit(tag: &str, algo: Algo, flags: &[&str], lambda: f64, p: Option<usize>) {
    let dir = Scratch::new(tag);
    let (trn, tst) = (PathBuf::from(PARSE_TRAIN), PathBuf::from(PARSE_TEST));
    let d = read_svmlight(&tst, &SvmlightOptions::default()).unwrap().n_features();
    let model = dir.out("m.rkl");
    let m = 40;
    let mut all: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    all.extend(["--basis".into(), m.to_string(), "--num-features".into(), d.to_string()]);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let run = train(&dir, &trn, &model, &all);
    assert_eq!(run.code, Some(0), "{run:?}");
    let text = inspect(&dir, &model);
    for want in [format!("basis_rows: {m}"), format!("basis={m}"), "basis_method=pivoted-cholesky".into()] {
        assert!(text.contains(&want), "{want:?} not in\n{text}");
    }
    assert!(text.contains("kernel_centring: no"), "the centring is folded into the offset:\n{text}");

    let run = ranklet(&dir, [OsString::from("score"), "-m".into(), os(&model), "--data".into(), os(&tst)]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let got: Vec<f64> = run.stdout.lines().map(|l| l.parse().unwrap()).collect();

    let opts = SvmlightOptions { num_features: Some(d), ..Default::default() };
    let (tr, te) = (read_svmlight(&trn, &opts).unwrap(), read_svmlight(&tst, &opts).unwrap());
    let mut be = HostBackend::new(BackendChoice::Faer);
    let fam = RowFamily::new(algo, vec![Kernel::Rbf { gamma: 1e-3 }], vec![lambda], p.map(|p| vec![p]))
        .unwrap()
        .with_basis(Some(m))
        .unwrap();
    let fitted = fam.fit_first(&mut be, &Table::from_dataset(&tr, true), &Target::Labels(QueryWeight::Equal)).unwrap();
    assert_eq!(fitted.basis_rows(), Some(m));
    let t = Table::from_dataset(&te, true);
    let pred = fitted.predict(&mut be, &t).unwrap();
    let mut want = vec![f64::NAN; te.n_rows()];
    t.orig.iter().zip(&pred).for_each(|(&r, &v)| want[r] = v);
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.0);
    let dev = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max) / scale;
    eprintln!("{tag}: f32 score vs f64 predict, max relative deviation {dev:.3e}");
    assert!(dev <= F32_REL, "{tag}: {dev:.3e} > {F32_REL:e}");
}

#[test]
fn reduced_kpcrank_model_scores_on_the_device_path_like_its_fit() {
    let flags = ["--algo", "kpcrank", "--kernel", "rbf:0.001", "--components", "15"];
    reduced_model_scores_like_its_fit("basis-kpc", Algo::Kpcrank, &flags, 0.0, Some(15));
}

#[test]
fn reduced_rankrls_model_scores_on_the_device_path_like_its_fit() {
    let flags = ["--algo", "rankrls", "--kernel", "rbf:0.001", "--lambda", "0.1"];
    reduced_model_scores_like_its_fit("basis-rls", Algo::Rankrls, &flags, 0.1, None);
}

#[test]
fn cross_validation_chooses_landmarks_inside_each_fold() {
    // M = 20 of 24 rows: a 3-fold split trains on 16 rows, so every fold
    // takes all of its rows as candidates; the final fit takes 20.
    let dir = Scratch::new("basis-cv");
    let model = dir.out("m.rkl");
    let flags = ["--algo", "kpcrank", "--kernel", "rbf:0.1,0.5", "--components", "2,4", "--cv", "3", "--basis", "20"];
    let run = train(&dir, &fixture("train.light"), &model, &flags);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout.lines().filter(|l| l.starts_with("rbf:")).count(), 4, "{run:?}");
    assert!(run.stdout.lines().filter(|l| l.starts_with("rbf:")).all(|l| !l.contains("\t-\t")), "{run:?}");
    assert!(inspect(&dir, &model).contains("basis_rows: 20"));
    // The closed-form leave-query-out of RankRLS on the landmark features.
    let flags = ["--algo", "rankrls", "--kernel", "rbf:0.5", "--lambda", "0.1,1", "--cv", "loo", "--basis", "10"];
    let run = train(&dir, &fixture("train.light"), &dir.out("r.rkl"), &flags);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(inspect(&dir, &dir.out("r.rkl")).contains("basis_rows: 10"));
}
