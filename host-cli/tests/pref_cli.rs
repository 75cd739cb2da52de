//! `ranklet train/eval/suggest/inspect` on preferences between items
//! (preference GPs, papers 000 §5 and 001) end to end: hostile input (exit
//! 2, stderr naming the file and line, silent stdout, nothing in the output
//! directory), flags that do not apply refused, and the happy paths.

use std::ffi::OsString;
use std::path::Path;

mod support;
use support::{assert_bad_input, lowrank_pref_model, os, ranklet, Run, Scratch};

/// Six items with two attributes (SVMlight-style node features).
const ITEMS: &str = "a 1:1 2:0\nb 1:0 2:1\nc 1:1 2:1\nd 1:-1 2:0.5\ne 1:0.5 2:-1\nf 1:2 2:0.3\n";

/// The same items as CSV.
const ITEMS_CSV: &str = "id,x1,x2\na,1,0\nb,0,1\nc,1,1\nd,-1,0.5\ne,0.5,-1\nf,2,0.3\n";

/// Preferences consistent with the score x1 + x2 (f > c > a > b > e > d
/// … roughly), with a comment, a blank line and a tie.
const PREFS: &str = "# winner loser\nf c\nc a\n\na b # ok\nb e\ne d\nc d\nf b tie\na e\n";

fn train(dir: &Scratch, algo: &str, items: &Path, prefs: &Path, extra: &[OsString]) -> Run {
    let mut v: Vec<OsString> = ["train", "--algo", algo, "--items"].iter().map(OsString::from).collect();
    v.push(os(items));
    v.push("--prefs".into());
    v.push(os(prefs));
    v.push("-o".into());
    v.push(os(&dir.out("m.rkl")));
    v.extend(extra.iter().cloned());
    ranklet(dir, v)
}

fn flag(name: &str, p: &Path) -> Vec<OsString> {
    vec![name.into(), os(p)]
}

fn strs(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

#[test]
fn unknown_item_in_prefs_names_file_and_line() {
    let dir = Scratch::new("pref-unknown");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", "a b\n# c\nb zz\n");
    let run = train(&dir, "pref-gp", &items, &prefs, &[]);
    assert_bad_input(&run, &dir, Some(&prefs), Some(3), &["zz"]);
}

#[test]
fn self_preference_names_file_and_line() {
    let dir = Scratch::new("pref-self");
    let items = dir.input("items.csv", ITEMS_CSV);
    let prefs = dir.input("p.txt", "a b\nc c\n");
    let run = train(&dir, "pref-gp", &items, &prefs, &[]);
    assert_bad_input(&run, &dir, Some(&prefs), Some(2), &["itself"]);
}

#[test]
fn non_finite_difference_names_file_and_line() {
    let dir = Scratch::new("pref-nan");
    let items = dir.input("items.txt", ITEMS);
    for bad in ["nan", "inf", "-inf", "1e999"] {
        let prefs = dir.input("p.txt", format!("a b 0.5\nb c {bad}\n"));
        let run = train(&dir, "diff-gp", &items, &prefs, &[]);
        assert_bad_input(&run, &dir, Some(&prefs), Some(2), &["non-finite"]);
    }
}

#[test]
fn relation_edge_to_unknown_item_names_file_and_line() {
    let dir = Scratch::new("pref-rel-unknown");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    let rel = dir.input("r.txt", "a b 0.5\nb c\nc nobody 1\n");
    let run = train(&dir, "xpgp", &items, &prefs, &flag("--relation", &rel));
    assert_bad_input(&run, &dir, Some(&rel), Some(3), &["nobody"]);
}

#[test]
fn relation_weight_non_finite_or_negative_names_file_and_line() {
    let dir = Scratch::new("pref-rel-weight");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    for (bad, why) in [("nan", "non-finite"), ("inf", "non-finite"), ("-0.5", "negative")] {
        let rel = dir.input("r.txt", format!("a b 1\nb c {bad}\n"));
        let run = train(&dir, "xpgp", &items, &prefs, &flag("--relation", &rel));
        assert_bad_input(&run, &dir, Some(&rel), Some(2), &[why]);
    }
}

#[test]
fn second_relation_file_is_checked_too() {
    let dir = Scratch::new("pref-rel-second");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    let good = dir.input("r1.txt", "a b\n");
    let bad = dir.input("r2.txt", "a b 1\nb a 2\n");
    let mut extra = flag("--relation", &good);
    extra.extend(flag("--relation", &bad));
    let run = train(&dir, "xpgp", &items, &prefs, &extra);
    assert_bad_input(&run, &dir, Some(&bad), Some(2), &["one weight"]);
}

#[test]
fn group_relation_with_unknown_item_names_file_and_line() {
    let dir = Scratch::new("pref-groups");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    let groups = dir.input("g.txt", "a winery1\nb winery1\nq winery2\n");
    let run = train(&dir, "xpgp", &items, &prefs, &flag("--relation-groups", &groups));
    assert_bad_input(&run, &dir, Some(&groups), Some(3), &["\"q\""]);
}

#[test]
fn malformed_items_file_names_file_and_line() {
    let dir = Scratch::new("pref-items");
    let items = dir.input("items.csv", "id,x1\na,1\nb,oops\n");
    let prefs = dir.input("p.txt", "a b\n");
    let run = train(&dir, "pref-gp", &items, &prefs, &[]);
    assert_bad_input(&run, &dir, Some(&items), Some(3), &[]);
}

#[test]
fn diff_gp_needs_a_difference_on_every_line() {
    let dir = Scratch::new("pref-diff-bare");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", "a b 1\nc d tie\ne f\n");
    let run = train(&dir, "diff-gp", &items, &prefs, &[]);
    assert_bad_input(&run, &dir, Some(&prefs), Some(3), &["diff-gp"]);
}

#[test]
fn only_ties_is_an_error_for_the_probit_learners() {
    let dir = Scratch::new("pref-ties");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", "a b tie\nc d 0\n");
    let run = train(&dir, "pref-gp", &items, &prefs, &[]);
    assert_bad_input(&run, &dir, Some(&prefs), None, &["tie"]);
    assert!(run.stderr.contains("2 ties dropped"), "{run:?}");
}

/// `--ties both`: a tie is two opposite judgements. On `PREFS` (f ≻ c ≻ a …,
/// and `f b tie`) the tie pulls f and b together: their mean difference
/// is smaller than when the tie is dropped, and 9 judgements are absorbed.
#[test]
fn ties_both_keeps_a_tie_as_two_opposite_judgements() {
    let dir = Scratch::new("pref-ties-both");
    let items = dir.input("items.csv", ITEMS_CSV);
    let prefs = dir.input("p.txt", PREFS);
    let gap = |extra: &[&str]| {
        let mut args = vec!["--kernel", "rbf:0.5", "--precision", "f64"];
        args.extend_from_slice(extra);
        let run = train(&dir, "pref-gp", &items, &prefs, &strs(&args));
        assert_eq!(run.code, Some(0), "{run:?}");
        let bytes = std::fs::read(dir.out("m.rkl")).unwrap();
        let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
        let gp = view.pref_gp().expect("kind 8");
        let at = |s: &str| (0..gp.items()).find(|&i| gp.item_name(i) == Some(s)).unwrap();
        let mean: Vec<f64> = gp.mean().iter().collect();
        (mean[at("f")] - mean[at("b")], run.stderr)
    };
    let (dropped, err_drop) = gap(&[]);
    let (both, err_both) = gap(&["--ties", "both"]);
    assert!(err_drop.contains("1 ties dropped"), "{err_drop}");
    assert!(err_both.contains("1 ties kept as two opposite judgements each (9 judgements in all)"), "{err_both}");
    assert!(dropped > 0.0 && both.abs() < dropped, "f − b: dropped {dropped}, both {both}");
    // Only ties: an error when dropped, a valid (prior-centred) fit when kept.
    let only = dir.input("only.txt", "a b tie\nc d 0\n");
    let run = train(&dir, "pref-gp", &items, &only, &strs(&["--kernel", "rbf:0.5", "--ties", "both"]));
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn relations_belong_to_xpgp_only() {
    let dir = Scratch::new("pref-rel-algo");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    let rel = dir.input("r.txt", "a b\n");
    let run = train(&dir, "pref-gp", &items, &prefs, &flag("--relation", &rel));
    assert_bad_input(&run, &dir, None, None, &["xpgp"]);
    let run = train(&dir, "xpgp", &items, &prefs, &[]);
    assert_bad_input(&run, &dir, None, None, &["--relation"]);
}

#[test]
fn flags_that_do_not_apply_are_refused() {
    let dir = Scratch::new("pref-flags");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    for extra in [
        &["--kernel", "linear"][..],
        &["--kernel", "rbf:1,2"],
        &["--lambda", "1"],
        &["--cv", "3"],
        &["--metric", "pairerror"],
    ] {
        let run = train(&dir, "pref-gp", &items, &prefs, &strs(extra));
        assert_bad_input(&run, &dir, None, None, &[extra[0]]);
    }
    // A row learner with preferences between items, and rbf:auto elsewhere.
    let run = train(&dir, "rankrls", &items, &prefs, &[]);
    assert_bad_input(&run, &dir, None, None, &["pref-gp"]);
    let data = dir.input("d.svm", "1 1:0\n0 1:1\n");
    let run = ranklet(
        &dir,
        strs(&["train", "--algo", "rankrls", "--kernel", "rbf:auto", "-o"]).into_iter().chain([
            os(&dir.out("m.rkl")),
            "--data".into(),
            os(&data),
        ]),
    );
    assert_bad_input(&run, &dir, None, None, &["rbf:auto"]);
}

#[test]
fn flags_of_other_data_kinds_are_refused_by_the_parser() {
    let dir = Scratch::new("pref-clap");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    let other = dir.input("o.txt", "a b\n");
    for (name, other_flag) in [("--pairs", "--pairs"), ("--orders", "--orders"), ("--edges", "--edges")] {
        let run = train(&dir, "pref-gp", &items, &prefs, &flag(name, &other));
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains(other_flag) && run.stderr.contains("cannot be used"), "{run:?}");
        assert!(dir.out_entries().is_empty());
    }
    // --relation without --prefs.
    let run = ranklet(
        &dir,
        strs(&["train", "--algo", "xpgp", "--items"]).into_iter().chain([
            os(&items),
            "--relation".into(),
            os(&other),
            "-o".into(),
            os(&dir.out("m.rkl")),
        ]),
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("--prefs"), "{run:?}");
}

// ---------------------------------------------------------------------------
// Happy paths, checked against independent computations in this file.

/// Φ by Simpson's rule on the normal density (independent of core's
/// erfc-based Φ): absolute error below 1e-13 for |z| ≤ 8.
fn phi(z: f64) -> f64 {
    if z < 0.0 {
        return 1.0 - phi(-z);
    }
    let n = 20_000;
    let h = z / n as f64;
    let f = |t: f64| (-0.5 * t * t).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let mut s = f(0.0) + f(z);
    for k in 1..n {
        s += f(k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
    }
    0.5 + s * h / 3.0
}

/// Solves `A x = b` (A symmetric positive definite, row-major `n × n`) by
/// Gaussian elimination with partial pivoting; also returns `log |A|`.
fn solve(a: &[f64], b: &[f64], n: usize) -> (Vec<f64>, f64) {
    let mut m: Vec<f64> = a.to_vec();
    let mut x = b.to_vec();
    let mut logdet = 0.0;
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| m[i * n + c].abs().total_cmp(&m[j * n + c].abs())).unwrap();
        if p != c {
            for k in 0..n {
                m.swap(c * n + k, p * n + k);
            }
            x.swap(c, p);
        }
        logdet += m[c * n + c].abs().ln();
        for r in c + 1..n {
            let f = m[r * n + c] / m[c * n + c];
            for k in c..n {
                m[r * n + k] -= f * m[c * n + k];
            }
            x[r] -= f * x[c];
        }
    }
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| m[c * n + k] * x[k]).sum();
        x[c] = (x[c] - s) / m[c * n + c];
    }
    (x, logdet)
}

fn meta_f64(meta: &str, key: &str) -> f64 {
    meta.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{key} missing in\n{meta}"))
        .parse()
        .unwrap()
}

/// Items of ITEMS as vectors, by id.
fn item_x(id: &str) -> [f64; 2] {
    match id {
        "a" => [1.0, 0.0],
        "b" => [0.0, 1.0],
        "c" => [1.0, 1.0],
        "d" => [-1.0, 0.5],
        "e" => [0.5, -1.0],
        "f" => [2.0, 0.3],
        "p" => [0.2, 0.2],
        "q" => [1.5, -0.5],
        "r" => [-0.5, -0.5],
        _ => unreachable!(),
    }
}

/// The score-difference GP in closed form (000 §5), as GP regression on
/// linear functionals `y_s = f(x_a) − f(x_b) + ε`: with `g(x) = D·k(X, x)`
/// (m) and `A = D K Dᵀ + noise²I`, the predictive mean is `g(x)ᵀA⁻¹y` and the
/// covariance `k(x, x') − g(x)ᵀA⁻¹g(x')`; the evidence is
/// `log N(y | 0, A)`.
struct DiffGp {
    a: f64,
    gamma: f64,
    noise: f64,
    train: Vec<[f64; 2]>,
    obs: Vec<(usize, usize, f64)>,
}

impl DiffGp {
    fn k(&self, x: &[f64; 2], y: &[f64; 2]) -> f64 {
        self.a * (-self.gamma * ((x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2))).exp()
    }
    fn g(&self, x: &[f64; 2]) -> Vec<f64> {
        self.obs.iter().map(|&(i, j, _)| self.k(&self.train[i], x) - self.k(&self.train[j], x)).collect()
    }
    fn a_matrix(&self) -> Vec<f64> {
        let m = self.obs.len();
        let mut a = vec![0.0; m * m];
        for (s, &(i, j, _)) in self.obs.iter().enumerate() {
            let gs = |x: &[f64; 2]| self.k(&self.train[i], x) - self.k(&self.train[j], x);
            for (t, &(u, v, _)) in self.obs.iter().enumerate() {
                a[s * m + t] = gs(&self.train[u]) - gs(&self.train[v]);
            }
            a[s * m + s] += self.noise * self.noise;
        }
        a
    }
    fn evidence(&self) -> f64 {
        let m = self.obs.len();
        let y: Vec<f64> = self.obs.iter().map(|o| o.2).collect();
        let (ay, logdet) = solve(&self.a_matrix(), &y, m);
        let quad: f64 = y.iter().zip(&ay).map(|(a, b)| a * b).sum();
        -0.5 * quad - 0.5 * logdet - 0.5 * m as f64 * (2.0 * std::f64::consts::PI).ln()
    }
    /// Mean of f(x) and covariance of f(x), f(x').
    fn predict(&self, x: &[f64; 2], x2: &[f64; 2]) -> (f64, f64) {
        let m = self.obs.len();
        let y: Vec<f64> = self.obs.iter().map(|o| o.2).collect();
        let a = self.a_matrix();
        let (ay, _) = solve(&a, &y, m);
        let gx = self.g(x);
        let (agx2, _) = solve(&a, &self.g(x2), m);
        let mean = gx.iter().zip(&ay).map(|(p, q)| p * q).sum();
        let cov = self.k(x, x2) - gx.iter().zip(&agx2).map(|(p, q)| p * q).sum::<f64>();
        (mean, cov)
    }
}

const DIFFS: &str = "a b 0.8\nc a 0.35\nf c 1.2\nd e -0.4\nb d 0.9\nf a 1.6\ne b -0.2\nc d 1.1\n";

#[test]
fn diff_gp_equals_its_closed_form_and_maximises_the_evidence() {
    let dir = Scratch::new("pref-diff");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", DIFFS);
    let run = train(&dir, "diff-gp", &items, &prefs, &strs(&["--inductive", "--precision", "f64"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(run.stderr.contains("diff-gp: a="), "{run:?}");
    let bytes = std::fs::read(dir.out("m.rkl")).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    assert!(view.pref_inductive().is_some());
    let meta = view.metadata();
    let ids = ["a", "b", "c", "d", "e", "f"];
    let obs: Vec<(usize, usize, f64)> = DIFFS
        .lines()
        .map(|l| {
            let t: Vec<&str> = l.split(' ').collect();
            let ix = |s: &str| ids.iter().position(|i| *i == s).unwrap();
            (ix(t[0]), ix(t[1]), t[2].parse().unwrap())
        })
        .collect();
    let gp = DiffGp {
        a: meta_f64(meta, "a"),
        gamma: meta_f64(meta, "gamma"),
        noise: meta_f64(meta, "noise"),
        train: ids.iter().map(|i| item_x(i)).collect(),
        obs,
    };
    // The stored evidence is the exact one at the stored hyperparameters.
    let ev = gp.evidence();
    assert!((meta_f64(meta, "log_evidence") - ev).abs() < 1e-8 * ev.abs().max(1.0), "{ev} vs {meta}");
    // And it is a maximum: a step of ±0.05 in any log-parameter lowers it.
    for which in 0..3 {
        for step in [-0.05, 0.05] {
            let f = step_f(which, step);
            let moved = DiffGp { a: gp.a * f.0, gamma: gp.gamma * f.1, noise: gp.noise * f.2, ..clone(&gp) };
            assert!(moved.evidence() < ev, "parameter {which} step {step}: {} ≥ {ev}", moved.evidence());
        }
    }
    // Predictions at new points: `score --sd` against the closed form.
    let new = dir.input("new.csv", "x1,x2,label\n0.2,0.2,0\n1.5,-0.5,0\n-0.5,-0.5,0\n");
    let run = ranklet(
        &dir,
        strs(&["score", "--sd", "-m"]).into_iter().chain([os(&dir.out("m.rkl")), "--data".into(), os(&new)]),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    for (line, id) in run.stdout.lines().zip(["p", "q", "r"]) {
        let v: Vec<f64> = line.split('\t').map(|t| t.parse().unwrap()).collect();
        let (m, var) = gp.predict(&item_x(id), &item_x(id));
        assert!((v[0] - m).abs() < 1e-9 && (v[1] - var.sqrt()).abs() < 1e-9, "{id}: {v:?} vs {m} {}", var.sqrt());
    }
    // Held-out preferences among new items: eval against the closed form.
    let test_items = dir.input("test.txt", "p 1:0.2 2:0.2\nq 1:1.5 2:-0.5\nr 1:-0.5 2:-0.5\n");
    let held = dir.input("held.txt", "q p\np r\nr q\nq r tie\n");
    let run = ranklet(
        &dir,
        strs(&["eval", "--metric", "pairerror,auc,logloss", "-m"]).into_iter().chain([
            os(&dir.out("m.rkl")),
            "--items".into(),
            os(&test_items),
            "--prefs".into(),
            os(&held),
        ]),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("1 ties dropped"), "{run:?}");
    let got: Vec<f64> = run.stdout.lines().map(|l| l.split('\t').nth(1).unwrap().parse().unwrap()).collect();
    let pairs = [("q", "p"), ("p", "r"), ("r", "q")];
    let (mut wrong, mut z) = (0.0, Vec::new());
    for (w, l) in pairs {
        let (mw, vw) = gp.predict(&item_x(w), &item_x(w));
        let (ml, vl) = gp.predict(&item_x(l), &item_x(l));
        let (_, c) = gp.predict(&item_x(w), &item_x(l));
        let v = vw + vl - 2.0 * c;
        wrong += if mw < ml {
            1.0
        } else if mw == ml {
            0.5
        } else {
            0.0
        };
        z.push((mw - ml) / (gp.noise * gp.noise + v).sqrt());
    }
    let logloss = -z.iter().map(|&z| phi(z).ln()).sum::<f64>() / 3.0;
    // AUC of {Φ(z)} vs {Φ(−z)}, by the ranks of z (Φ is monotone).
    let mut wins = 0.0;
    for &p in &z {
        for &n in &z {
            wins += if p > -n {
                1.0
            } else if p == -n {
                0.5
            } else {
                0.0
            };
        }
    }
    let want = [wrong / 3.0, wins / 9.0, logloss];
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-6, "metric {k}: {g} vs {w}\n{run:?}");
    }
}

fn step_f(which: usize, step: f64) -> (f64, f64, f64) {
    let e = step.exp();
    match which {
        0 => (e, 1.0, 1.0),
        1 => (1.0, e, 1.0),
        _ => (1.0, 1.0, e),
    }
}

fn clone(g: &DiffGp) -> DiffGp {
    DiffGp { a: g.a, gamma: g.gamma, noise: g.noise, train: g.train.clone(), obs: g.obs.clone() }
}

#[test]
fn pref_gp_train_eval_suggest_inspect_on_fixed_items() {
    let dir = Scratch::new("pref-fixed");
    let items = dir.input("items.csv", ITEMS_CSV);
    let prefs = dir.input("p.txt", PREFS);
    let run = train(&dir, "pref-gp", &items, &prefs, &strs(&["--precision", "f64"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("1 ties dropped (7 preferences kept)"), "{run:?}");
    let model = dir.out("m.rkl");
    let bytes = std::fs::read(&model).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    let gp = view.pref_gp().expect("kind 8");
    let n = gp.items();
    assert_eq!(n, 6);
    let mean: Vec<f64> = gp.mean().iter().collect();
    let var = |i: usize, j: usize| gp.cov(i, i) + gp.cov(j, j) - 2.0 * gp.cov(i, j);
    // The means follow the judgements: f beats c beats a beats b … (a
    // consistent chain in the data).
    let id = |i: usize| gp.item_name(i).unwrap().to_string();
    let at = |s: &str| (0..n).find(|&i| id(i) == s).unwrap();
    assert!(mean[at("f")] > mean[at("c")] && mean[at("c")] > mean[at("a")] && mean[at("a")] > mean[at("b")]);

    // inspect: the header and the fitted hyperparameters and evidence.
    let run = ranklet(&dir, strs(&["inspect", "-m"]).into_iter().chain([os(&model)]));
    assert_eq!(run.code, Some(0), "{run:?}");
    for want in ["kind: pref-gp", "items: 6", "preferences_absorbed: 7", "  a=", "  gamma=", "  log_evidence="] {
        assert!(run.stdout.contains(want), "{want} missing:\n{}", run.stdout);
    }

    // suggest: the first pair is the brute-force maximiser of v/m² over
    // all pairs of the stored posterior, with its variance and mean.
    let run = ranklet(&dir, strs(&["suggest", "-k", "3", "-m"]).into_iter().chain([os(&model)]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<Vec<&str>> = run.stdout.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 3, "{run:?}");
    let mut best = (0, 0, f64::NEG_INFINITY);
    for i in 0..n {
        for j in i + 1..n {
            let m = mean[i] - mean[j];
            let r = var(i, j) / (m * m);
            if r > best.2 {
                best = (i, j, r);
            }
        }
    }
    assert_eq!((lines[0][0], lines[0][1]), (id(best.0).as_str(), id(best.1).as_str()), "{run:?}");
    let (v0, m0): (f64, f64) = (lines[0][2].parse().unwrap(), lines[0][3].parse().unwrap());
    assert!(
        (v0 - var(best.0, best.1)).abs() < 1e-6 * v0 && (m0 - (mean[best.0] - mean[best.1])).abs() < 1e-6 * m0.abs()
    );
    let distinct: std::collections::HashSet<(&str, &str)> = lines.iter().map(|l| (l[0], l[1])).collect();
    assert_eq!(distinct.len(), 3);

    // eval by item id against the stored posterior (Φ by quadrature here).
    let held = dir.input("held.txt", "c b\nd f\ne a\n");
    let run = ranklet(
        &dir,
        strs(&["eval", "--metric", "pairerror,logloss", "-m"]).into_iter().chain([
            os(&model),
            "--items".into(),
            os(&items),
            "--prefs".into(),
            os(&held),
        ]),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let got: Vec<f64> = run.stdout.lines().map(|l| l.split('\t').nth(1).unwrap().parse().unwrap()).collect();
    let (mut wrong, mut ll) = (0.0, 0.0);
    for (w, l) in [("c", "b"), ("d", "f"), ("e", "a")] {
        let (w, l) = (at(w), at(l));
        let m = mean[w] - mean[l];
        wrong += if m < 0.0 { 1.0 } else { 0.0 };
        ll -= phi(m / (2.0 * gp.sigma() * gp.sigma() + var(w, l)).sqrt()).ln();
    }
    // eval prints 6 decimals.
    assert!((got[0] - wrong / 3.0).abs() < 1e-6, "{run:?}");
    assert!((got[1] - ll / 3.0).abs() < 1e-6, "{run:?}: {}", ll / 3.0);

    // Held-out preferences naming an unknown item: exit 2 at the line.
    let bad = dir.input("bad.txt", "c b\nc zz\n");
    let run = ranklet(
        &dir,
        strs(&["eval", "-m"]).into_iter().chain([os(&model), "--items".into(), os(&items), "--prefs".into(), os(&bad)]),
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stdout.is_empty() && run.stderr.contains(&format!("{}:2:", bad.display())), "{run:?}");
}

#[test]
fn xpgp_with_relations_and_groups_trains_a_fixed_item_model() {
    let dir = Scratch::new("pref-xpgp");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    // A disconnected relation (two components) and a group file.
    let rel = dir.input("r.txt", "a b 0.5\nb c\nd e 2\n");
    let groups = dir.input("g.txt", "a w1\nc w1\nf w1\nd w2\ne w2\n");
    let mut extra = flag("--relation", &rel);
    extra.extend(flag("--relation-groups", &groups));
    let run = train(&dir, "xpgp", &items, &prefs, &extra);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("b_0=") && run.stderr.contains("iota_1="), "{run:?}");
    let bytes = std::fs::read(dir.out("m.rkl")).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    assert!(view.pref_gp().is_some());
    assert!(view.metadata().contains("relation_0=") && view.metadata().contains("(items covered: 5)"));
    // The relation file must not be inductive, and suggest refuses an
    // inductive model; eval --prefs refuses a row model.
    std::fs::remove_file(dir.out("m.rkl")).unwrap();
    let run = train(&dir, "xpgp", &items, &prefs, &[flag("--relation", &rel), strs(&["--inductive"])].concat());
    assert_bad_input(&run, &dir, None, None, &["--inductive"]);
}

#[test]
fn suggest_and_score_refuse_the_other_kind() {
    let dir = Scratch::new("pref-kinds");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    let run = train(&dir, "pref-gp", &items, &prefs, &strs(&["--inductive", "--kernel", "rbf:0.5"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let model = dir.out("m.rkl");
    let run = ranklet(&dir, strs(&["suggest", "-m"]).into_iter().chain([os(&model)]));
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("--inductive"), "{run:?}");
    let bytes = std::fs::read(&model).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    assert_eq!(view.pref_inductive().unwrap().kernel(), ranklet_core::kernel::Kernel::Rbf { gamma: 0.5 });
    assert!(view.metadata().contains("kernel_fitted=no"));
}

/// A learner's error in `suggest` on a low-rank model (kind 10) names the
/// model file, as the refusal of another kind does: a valid file whose
/// factor (entries up to 4·10¹⁹⁹) overflows the variances of differences
/// fails with the file, `suggest` and the overflow (exit 1,
/// nothing on stdout); the same items with an ordinary factor give pairs.
#[test]
fn suggest_on_a_lowrank_model_names_the_file_in_a_learner_error() {
    let dir = Scratch::new("pref-lowrank-suggest-error");
    let model = dir.input("huge.rkl", lowrank_pref_model(6, 2, 1e200));
    let run = ranklet(&dir, strs(&["suggest", "-k", "2", "-m"]).into_iter().chain([os(&model)]));
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains(&format!("{}: suggest: ", model.display())), "{run:?}");
    assert!(run.stderr.contains("NaN or infinity"), "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    let model = dir.input("ok.rkl", lowrank_pref_model(6, 2, 1.0));
    let run = ranklet(&dir, strs(&["suggest", "-k", "2", "-m"]).into_iter().chain([os(&model)]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout.lines().count(), 2, "{run:?}");
    assert!(run.stdout.lines().all(|l| l.starts_with("it")), "{run:?}");
}

/// `--basis M` (sparse EP on inducing items) with every item inducing is
/// the dense inductive model: the same evidence, and `score --sd` gives
/// the same means and standard deviations at new points (both models fit
/// their hyperparameters by their own evidence, equal at `M = n`, so the
/// optimiser takes the same path up to rounding; 1e-6 relative asserted).
/// M above the item count is every item (with a note); M = 0 is refused
/// by name; `inspect` shows the approximation and M.
#[test]
fn basis_with_every_item_inducing_is_the_dense_inductive_model() {
    let dir = Scratch::new("pref-basis");
    let items = dir.input("items.txt", ITEMS);
    let new = dir.input("new.csv", "x1,x2,label\n0.2,0.2,0\n1.5,-0.5,0\n-0.5,-0.5,0\n");
    let score = |model: &Path| -> Vec<f64> {
        let run =
            ranklet(&dir, strs(&["score", "--sd", "-m"]).into_iter().chain([os(model), "--data".into(), os(&new)]));
        assert_eq!(run.code, Some(0), "{run:?}");
        run.stdout.lines().flat_map(|l| l.split('\t').map(|t| t.parse::<f64>().unwrap()).collect::<Vec<_>>()).collect()
    };
    for (algo, prefs) in [("pref-gp", PREFS), ("diff-gp", DIFFS)] {
        let prefs = dir.input("p.txt", prefs);
        let run = train(&dir, algo, &items, &prefs, &strs(&["--inductive", "--precision", "f64"]));
        assert_eq!(run.code, Some(0), "{run:?}");
        let dense = dir.out("dense.rkl");
        std::fs::rename(dir.out("m.rkl"), &dense).unwrap();
        let run = train(&dir, algo, &items, &prefs, &strs(&["--basis", "100", "--precision", "f64"]));
        assert_eq!(run.code, Some(0), "{run:?}");
        assert!(run.stderr.contains("every item is an inducing point"), "{run:?}");
        assert!(run.stderr.contains("sparse DTC, 6 inducing items"), "{run:?}");
        let (d, s) = (score(&dense), score(&dir.out("m.rkl")));
        assert_eq!(d.len(), 6);
        for (a, b) in d.iter().zip(&s) {
            assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "{algo}: dense {d:?} vs sparse {s:?}");
        }
        let (bd, bs) = (std::fs::read(&dense).unwrap(), std::fs::read(dir.out("m.rkl")).unwrap());
        let (vd, vs) = (
            ranklet_core::format::ModelView::new_checked(&bd).unwrap(),
            ranklet_core::format::ModelView::new_checked(&bs).unwrap(),
        );
        let (ed, es) = (meta_f64(vd.metadata(), "log_evidence"), meta_f64(vs.metadata(), "log_evidence"));
        assert!((ed - es).abs() <= 1e-6 * ed.abs(), "{algo}: evidence {ed} vs {es}");
        let run = ranklet(&dir, strs(&["inspect"]).into_iter().chain([os(&dir.out("m.rkl"))]));
        assert!(
            run.stdout.contains("approximation=sparse EP, DTC") && run.stdout.contains("inducing_points=6"),
            "{run:?}"
        );
        assert!(run.stdout.contains("basis_rows: 6"), "{run:?}");
    }
    std::fs::remove_file(dir.out("m.rkl")).unwrap();
    std::fs::remove_file(dir.out("dense.rkl")).unwrap();
    let prefs = dir.input("p.txt", PREFS);
    let run = train(&dir, "pref-gp", &items, &prefs, &strs(&["--basis", "0"]));
    assert_bad_input(&run, &dir, None, None, &["--basis"]);
}

/// `train --algo xpgp --basis M` end to end: with every item inducing and
/// every Laplacian eigenpair kept (`M`, `--relation-rank` above the item
/// count, with notes) it is the dense xpgp — the same posterior, here in
/// the low-rank kind 10 (means and covariance 1e-6 relative: both fits
/// maximise the same evidence up to rounding, so the optimiser takes the
/// same path) and the same evidence; `inspect` shows M, the ranks and the
/// evidence; `eval` gives the dense model's metrics; `suggest` picks the
/// brute-force best pair of the rule over all pairs first, and `-k 3` the
/// dense model's three pairs (each after pretend answers). Truncated
/// (M = 3, K = 2) it fits a model of 3 + 2·2 features, and with
/// `--relation-residual constant` 6 more (one per judged item), the
/// constants shown by `inspect`. `--relation-rank` 0, `--relation-rank` or
/// `--relation-residual` without `--basis` or for a learner without
/// relations, and `--inductive` with relations, are refused by name.
#[test]
fn xpgp_basis_with_every_item_and_eigenpair_is_the_dense_xpgp() {
    let dir = Scratch::new("pref-xpgp-basis");
    let items = dir.input("items.txt", ITEMS);
    let prefs = dir.input("p.txt", PREFS);
    let rel = dir.input("r.txt", "a b 0.5\nb c\nd e 2\n");
    let groups = dir.input("g.txt", "a w1\nc w1\nf w1\nd w2\ne w2\n");
    let rels = [flag("--relation", &rel), flag("--relation-groups", &groups)].concat();
    let f64s = strs(&["--precision", "f64", "--kernel", "rbf:0.5"]);
    let run = train(&dir, "xpgp", &items, &prefs, &[rels.clone(), f64s.clone()].concat());
    assert_eq!(run.code, Some(0), "{run:?}");
    let dense = dir.out("dense.rkl");
    std::fs::rename(dir.out("m.rkl"), &dense).unwrap();
    let lowrank = [rels.clone(), f64s.clone(), strs(&["--basis", "100", "--relation-rank", "50"])].concat();
    let run = train(&dir, "xpgp", &items, &prefs, &lowrank);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("every item is an inducing point"), "{run:?}");
    assert!(run.stderr.contains("every eigenpair is kept"), "{run:?}");
    assert!(run.stderr.contains("low-rank: 6 inducing items, relation rank 6"), "{run:?}");
    let model = dir.out("m.rkl");
    let (bd, bl) = (std::fs::read(&dense).unwrap(), std::fs::read(&model).unwrap());
    let (vd, vl) = (
        ranklet_core::format::ModelView::new_checked(&bd).unwrap(),
        ranklet_core::format::ModelView::new_checked(&bl).unwrap(),
    );
    let (gd, gl) = (vd.pref_gp().expect("kind 8"), vl.pref_lowrank().expect("kind 10"));
    assert_eq!((gd.items(), gl.items()), (6, 6));
    let scale = (0..6).map(|i| gd.cov(i, i)).fold(0.0f64, f64::max);
    for i in 0..6 {
        let (a, b) = (gd.mean().iter().nth(i).unwrap(), gl.mean().iter().nth(i).unwrap());
        assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "mean[{i}]: dense {a} vs low-rank {b}");
        for j in 0..=i {
            let (a, b) = (gd.cov(i, j), gl.cov(i, j));
            assert!((a - b).abs() <= 1e-6 * scale, "cov[{i}][{j}]: dense {a} vs low-rank {b}");
        }
        assert_eq!(gd.item_name(i), gl.item_name(i));
    }
    let (ed, el) = (meta_f64(vd.metadata(), "log_evidence"), meta_f64(vl.metadata(), "log_evidence"));
    assert!((ed - el).abs() <= 1e-6 * ed.abs(), "evidence {ed} vs {el}");
    let run = ranklet(&dir, strs(&["inspect"]).into_iter().chain([os(&model)]));
    assert_eq!(run.code, Some(0), "{run:?}");
    for want in [
        "kind: pref-gp-lowrank",
        "covariance: low-rank, factor rank 18",
        "inducing_points=6",
        "relation_0_rank=6",
        "relation_1_rank=6",
        "relation_0_components=3",
        "features=18",
        "log_evidence=",
        "approximation=low-rank XPGP",
    ] {
        assert!(run.stdout.contains(want), "{want} missing:\n{}", run.stdout);
    }
    let held = dir.input("held.txt", "c b\nd f\ne a\n");
    let eval = |m: &Path| {
        let run = ranklet(
            &dir,
            strs(&["eval", "--metric", "pairerror,logloss,auc", "-m"]).into_iter().chain([
                os(m),
                "--items".into(),
                os(&items),
                "--prefs".into(),
                os(&held),
            ]),
        );
        assert_eq!(run.code, Some(0), "{run:?}");
        run.stdout.lines().map(|l| l.split('\t').nth(1).unwrap().parse::<f64>().unwrap()).collect::<Vec<_>>()
    };
    let (ed_, el_) = (eval(&dense), eval(&model));
    assert!(!ed_.is_empty() && ed_.len() == el_.len(), "eval: dense {ed_:?} vs low-rank {el_:?}");
    for (a, b) in ed_.iter().zip(&el_) {
        assert!((a - b).abs() <= 1e-5, "eval: dense {ed_:?} vs low-rank {el_:?}");
    }
    let suggest = |m: &Path| {
        let run = ranklet(&dir, strs(&["suggest", "-k", "3", "-m"]).into_iter().chain([os(m)]));
        assert_eq!(run.code, Some(0), "{run:?}");
        assert!(run.stderr.is_empty(), "{run:?}");
        run.stdout
    };
    let (sd, sl) = (suggest(&dense), suggest(&model));
    assert_eq!(sl.lines().count(), 3, "{sl}");
    assert_eq!(sd.lines().count(), 3, "{sd}");
    for (a, b) in sd.lines().zip(sl.lines()) {
        let (a, b): (Vec<&str>, Vec<&str>) = (a.split('\t').collect(), b.split('\t').collect());
        assert_eq!(a[..2], b[..2], "dense\n{sd}low-rank\n{sl}");
        for t in 2..4 {
            let (x, y): (f64, f64) = (a[t].parse().unwrap(), b[t].parse().unwrap());
            assert!((x - y).abs() <= 1e-5 * x.abs().max(1e-3), "dense\n{sd}low-rank\n{sl}");
        }
    }
    let got: Vec<&str> = sl.lines().next().unwrap().split('\t').collect();
    let mean: Vec<f64> = gl.mean().iter().collect();
    let mut best = (0, 0, f64::NEG_INFINITY);
    for i in 0..6 {
        for j in i + 1..6 {
            let (m, v) = gl.pair(i, j).unwrap();
            assert!((m - (mean[i] - mean[j])).abs() < 1e-15);
            if v / (m * m) > best.2 {
                best = (i, j, v / (m * m));
            }
        }
    }
    let name = |i: usize| gl.item_name(i).unwrap();
    assert_eq!((got[0], got[1]), (name(best.0), name(best.1)), "{run:?}");

    // Truncated: 3 inducing items, 2 eigenpairs per relation.
    std::fs::remove_file(&model).unwrap();
    let run =
        train(&dir, "xpgp", &items, &prefs, &[rels.clone(), strs(&["--basis", "3", "--relation-rank", "2"])].concat());
    assert_eq!(run.code, Some(0), "{run:?}");
    let bytes = std::fs::read(&model).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    assert_eq!(view.pref_lowrank().map(|g| g.rank()), Some(7));
    let meta = view.metadata();
    assert!(meta.contains("inducing_points=3") && meta.contains("features=7"), "{meta}");
    assert!(meta.contains("relation_0_rank=2") && meta.contains("relation_1_rank=2"), "{meta}");
    assert!(meta.contains("relation_residual=none") && meta.contains("residual_features=0"), "{meta}");
    // The dropped spectra as constants: one feature per judged item (all 6).
    std::fs::remove_file(&model).unwrap();
    let extra = strs(&["--basis", "3", "--relation-rank", "2", "--relation-residual", "constant"]);
    let run = train(&dir, "xpgp", &items, &prefs, &[rels.clone(), extra].concat());
    assert_eq!(run.code, Some(0), "{run:?}");
    let bytes = std::fs::read(&model).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    assert_eq!(view.pref_lowrank().map(|g| g.rank()), Some(13));
    let shown = ranklet(&dir, strs(&["inspect"]).into_iter().chain([os(&model)])).stdout;
    let want = [
        "features=13",
        "relation_residual=constant",
        "residual_features=6",
        "relation_0_dropped_mean_laplacian_eigenvalue=",
        "relation_0_residual_constant=",
        "relation_1_residual_variance=",
    ];
    let missing: Vec<&str> = want.into_iter().filter(|w| !shown.contains(w)).collect();
    assert!(missing.is_empty(), "{missing:?} missing:\n{shown}");

    // Refused by name.
    std::fs::remove_file(&model).unwrap();
    std::fs::remove_file(&dense).unwrap();
    for (algo, extra, name) in [
        ("xpgp", [rels.clone(), strs(&["--basis", "3", "--relation-rank", "0"])].concat(), "--relation-rank"),
        ("xpgp", [rels.clone(), strs(&["--basis", "3", "--inductive"])].concat(), "--inductive"),
        ("pref-gp", strs(&["--basis", "3", "--relation-rank", "2"]), "--relation-rank"),
        ("pref-gp", strs(&["--basis", "3", "--relation-residual", "constant"]), "--relation-residual"),
    ] {
        let run = train(&dir, algo, &items, &prefs, &extra);
        assert_bad_input(&run, &dir, None, None, &[name]);
    }
    for flags in [strs(&["--relation-rank", "2"]), strs(&["--relation-residual", "constant"])] {
        let run = train(&dir, "xpgp", &items, &prefs, &[rels.clone(), flags].concat());
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains("--basis") && run.stdout.is_empty(), "{run:?}");
    }
}

/// `suggest` on a `--basis` model chooses among every pair of `--items`
/// without an `n × n` matrix (the screened search): on 40 items (8 of them
/// inducing) the pair equals brute force over all 780 pairs with the
/// model's own variances (`PrefInductiveView::prob`) and means by the one
/// rule of `learn::next_pair`, and the printed variance and mean
/// difference equal the model's for that pair (so the chosen pair's score
/// is the rule's score). More than one pair asked is one pair with a note;
/// `--items` on a fixed-set model is refused.
#[test]
fn suggest_on_a_basis_model_equals_brute_force_over_all_pairs() {
    use ranklet_core::learn::next_pair::{offer, PairScore};
    let dir = Scratch::new("pref-basis-suggest");
    let n = 40;
    let x: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            let t = i as f64;
            ((t * 0.37).sin() * 1.5, (t * 0.61).cos() * 1.2)
        })
        .collect();
    let mut csv = String::from("id,x1,x2\n");
    for (i, (a, b)) in x.iter().enumerate() {
        csv.push_str(&format!("it{i},{a},{b}\n"));
    }
    let items = dir.input("items.csv", &csv);
    let mut prefs = String::new();
    for k in 0..60usize {
        let (i, j) = ((k * 7) % n, (k * 13 + 5) % n);
        if i != j {
            let (si, sj) = (x[i].0 + x[i].1, x[j].0 + x[j].1);
            let (w, l) = if si >= sj { (i, j) } else { (j, i) };
            prefs.push_str(&format!("it{w} it{l}\n"));
        }
    }
    let prefs = dir.input("p.txt", &prefs);
    let run =
        train(&dir, "pref-gp", &items, &prefs, &strs(&["--basis", "8", "--kernel", "rbf:0.5", "--precision", "f64"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let model = dir.out("m.rkl");
    let run = ranklet(
        &dir,
        strs(&["suggest", "-k", "3", "-m"]).into_iter().chain([os(&model), "--items".into(), os(&items)]),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("1 pair suggested of the 3 asked"), "{run:?}");
    let f: Vec<&str> = run.stdout.trim().split('\t').collect();
    assert_eq!(f.len(), 4, "{run:?}");
    let (var, mean_diff): (f64, f64) = (f[2].parse().unwrap(), f[3].parse().unwrap());
    // Brute force with the model's own predictions.
    let bytes = std::fs::read(&model).unwrap();
    let view = ranklet_core::format::ModelView::new_checked(&bytes).unwrap();
    let gp = view.pref_inductive().unwrap();
    let mut work = vec![0.0; gp.prob_workspace_len()];
    let row = |i: usize| [x[i].0, x[i].1];
    let mean: Vec<f64> = (0..n).map(|i| gp.predict(&row(i), &mut work).unwrap().0).collect();
    let mut best: Option<PairScore<f64>> = None;
    for i in 0..n {
        for j in i + 1..n {
            let (_, v) = gp.prob(&row(i), &row(j), &mut work).unwrap();
            let mu = mean[i] - mean[j];
            offer(&mut best, PairScore::new(i, j, v, mu * mu));
        }
    }
    let b = best.unwrap();
    assert_eq!((f[0], f[1]), (format!("it{}", b.i).as_str(), format!("it{}", b.j).as_str()), "{run:?}");
    assert!((var - b.var).abs() <= 1e-6 * b.var, "variance {var} vs the model's {}", b.var);
    let mu = mean[b.i] - mean[b.j];
    assert!((mean_diff - mu).abs() <= 1e-6 * mu.abs().max(1e-12), "mean difference {mean_diff} vs {mu}");
    let ratio = var / (mean_diff * mean_diff);
    assert!((ratio - b.ratio()).abs() <= 1e-5 * b.ratio(), "score {ratio} vs the rule's {}", b.ratio());
    // --items on a fixed-set model is refused.
    let run = train(&dir, "pref-gp", &items, &prefs, &strs(&["--kernel", "rbf:0.5"]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let run = ranklet(&dir, strs(&["suggest", "-m"]).into_iter().chain([os(&model), "--items".into(), os(&items)]));
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("--items"), "{run:?}");
}
