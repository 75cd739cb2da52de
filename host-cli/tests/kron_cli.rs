//! `ranklet train/score/eval/rank` on labelled edges (Kronecker learners,
//! paper 004) end to end: hostile input (exit 2, stderr naming the file and
//! line or the offending ids, silent stdout, nothing in the output
//! directory), flags of another data kind refused, and the happy paths
//! (complete graph → closed form with CV over conditioning nodes,
//! incomplete graph → CG, train → score → eval → rank, a reciprocal model
//! exactly antisymmetric).

use std::ffi::OsString;
use std::path::Path;

mod support;
use support::{assert_bad_input, os, ranklet, Run, Scratch};

/// Six nodes with two features each (one node set).
const NODES: &str = "a 1:1 2:0\nb 1:0 2:1\nc 1:1 2:1\nd 1:-1 2:0.5\ne 1:0.5 2:-1\nf 1:2 2:0.3\n";

/// A relation on NODES: y(u, v) = x_uᵀ·M·x_v with a fixed M, every ordered pair.
fn complete_edges() -> String {
    let x: [(f64, f64); 6] = [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (-1.0, 0.5), (0.5, -1.0), (2.0, 0.3)];
    let ids = ["a", "b", "c", "d", "e", "f"];
    let m = [[0.3, 1.0], [-0.7, 0.2]];
    let mut s = String::new();
    for (i, u) in x.iter().enumerate() {
        for (j, v) in x.iter().enumerate() {
            let y = u.0 * (m[0][0] * v.0 + m[0][1] * v.1) + u.1 * (m[1][0] * v.0 + m[1][1] * v.1);
            s.push_str(&format!("{} {} {y}\n", ids[i], ids[j]));
        }
    }
    s
}

fn train_edges(dir: &Scratch, edges: &Path, nodes_flag: &[OsString], extra: &[&str]) -> Run {
    // `--lambda 0.01` unless `extra` sets it.
    let lambda: &[&str] = if extra.contains(&"--lambda") { &[] } else { &["--lambda", "0.01"] };
    let mut v: Vec<OsString> =
        ["train", "--algo", "kron-rankrls", "--kernel", "linear"].iter().chain(lambda).map(OsString::from).collect();
    v.push("--edges".into());
    v.push(os(edges));
    v.extend(nodes_flag.iter().cloned());
    v.push("-o".into());
    v.push(os(&dir.out("m.rkl")));
    v.extend(extra.iter().map(OsString::from));
    ranklet(dir, v)
}

fn nodes_flag(p: &Path) -> Vec<OsString> {
    vec!["--nodes".into(), os(p)]
}

#[test]
fn edge_naming_an_unknown_node_names_file_and_line() {
    let dir = Scratch::new("kron-unknown");
    let nodes = dir.input("nodes.txt", NODES);
    let edges = dir.input("e.txt", "a b 1\nb c 0\nc zz 1\n");
    let run = train_edges(&dir, &edges, &nodes_flag(&nodes), &[]);
    assert_bad_input(&run, &dir, Some(&edges), Some(3), &["zz"]);
}

#[test]
fn duplicate_edge_names_file_and_both_lines() {
    let dir = Scratch::new("kron-dup");
    let nodes = dir.input("nodes.txt", NODES);
    let edges = dir.input("e.txt", "a b 1\nb c 0\na b 0\n");
    let run = train_edges(&dir, &edges, &nodes_flag(&nodes), &[]);
    assert_bad_input(&run, &dir, Some(&edges), Some(3), &["1"]);
}

#[test]
fn non_finite_label_names_file_and_line() {
    let dir = Scratch::new("kron-nan");
    let nodes = dir.input("nodes.txt", NODES);
    for bad in ["nan", "inf", "-inf", "1e999"] {
        let edges = dir.input("e.txt", format!("a b 1\nb c {bad}\n"));
        let run = train_edges(&dir, &edges, &nodes_flag(&nodes), &[]);
        assert_bad_input(&run, &dir, Some(&edges), Some(2), &[]);
    }
}

#[test]
fn non_square_precomputed_kernel_is_refused() {
    let dir = Scratch::new("kron-nonsquare");
    let k = dir.input("k.txt", "1 0.5 0.2\n0.5 1 0.1\n");
    let edges = dir.input("e.txt", "0 1 1\n1 0 0\n");
    let kf = format!("precomputed:{}", k.display());
    let run = train_edges(&dir, &edges, &["--kernel-u".into(), kf.into()], &[]);
    assert_bad_input(&run, &dir, Some(&k), None, &["square"]);
}

#[test]
fn asymmetric_kernel_is_refused_without_symmetrize() {
    let dir = Scratch::new("kron-asym");
    let k = dir.input("k.txt", "   x  y  z\nx  1  0.5  0.2\ny  0.4  1  0.1\nz  0.2  0.1  1\n");
    let edges = dir.input("e.txt", "x y 1\ny z 0\nz x 1\nx z 0\n");
    let kf = format!("precomputed:{}", k.display());
    let run = train_edges(&dir, &edges, &["--kernel-u".into(), kf.clone().into()], &[]);
    assert_bad_input(&run, &dir, Some(&k), Some(2), &["\"x\"", "\"y\"", "symmetri"]);
    // With --symmetrize it trains.
    let run = train_edges(&dir, &edges, &["--kernel-u".into(), kf.into(), "--symmetrize".into()], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn row_flags_are_refused_with_edges() {
    let dir = Scratch::new("kron-flags");
    let nodes = dir.input("nodes.txt", NODES);
    let edges = dir.input("e.txt", "a b 1\n");
    for extra in [
        &["--data", "d.svm"][..],
        &["--pairs", "p.txt"],
        &["--items", "i.csv", "--orders", "o.txt"],
        &["--components", "2"],
        &["--standardize"],
        &["--qid-col", "q"],
    ] {
        let run = train_edges(&dir, &edges, &nodes_flag(&nodes), extra);
        assert_eq!(run.code, Some(2), "{extra:?}: {run:?}");
        assert!(run.stderr.contains(extra[0]), "{extra:?}: {run:?}");
        assert_eq!(dir.out_entries(), Vec::<String>::new());
    }
    // Edge flags with row data.
    let data = dir.input("d.svm", "1 qid:1 1:1\n0 qid:1 1:0\n");
    let mut v: Vec<OsString> = ["train", "--algo", "rankrls", "--data"].iter().map(OsString::from).collect();
    v.push(os(&data));
    v.extend(["--nodes".into(), os(&nodes), "-o".into(), os(&dir.out("m.rkl"))]);
    let run = ranklet(&dir, v);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("--nodes") && run.stderr.contains("--data"), "{run:?}");
    // A row learner on edges, a kron learner on rows.
    let run = ranklet(
        &dir,
        [
            os(Path::new("train")),
            "--algo".into(),
            "rls".into(),
            "--edges".into(),
            os(&edges),
            "--nodes".into(),
            os(&nodes),
            "-o".into(),
            os(&dir.out("m.rkl")),
        ],
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("kron-rls"), "{run:?}");
    assert_eq!(dir.out_entries(), Vec::<String>::new());
}

#[test]
fn sym_pair_kernel_needs_one_node_set() {
    let dir = Scratch::new("kron-sym2");
    let nodes = dir.input("nodes.txt", NODES);
    let edges = dir.input("e.txt", "a b 1\nb a 0\n");
    let flags = vec!["--nodes-u".into(), os(&nodes), "--nodes-v".into(), os(&nodes)];
    let run = train_edges(&dir, &edges, &flags, &["--pair-kernel", "sym"]);
    assert_bad_input(&run, &dir, None, None, &["one node set"]);
}

/// Complete graph: closed form, CV over conditioning nodes, CV table on
/// stdout; then score (input order), eval and rank with the written model.
#[test]
fn complete_graph_trains_with_cv_and_scores_evaluates_ranks() {
    let dir = Scratch::new("kron-complete");
    let nodes = dir.input("nodes.txt", NODES);
    let edges = dir.input("e.txt", complete_edges());
    let mut args = vec!["--lambda", "0.001,0.1,10", "--cv", "3"];
    args.extend(["--precision", "f64"]);
    let run = train_edges(&dir, &edges, &nodes_flag(&nodes), &args);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("closed form"), "{run:?}");
    assert!(run.stdout.contains("3-fold over conditioning nodes") && run.stdout.contains("condrankloss"), "{run:?}");
    assert_eq!(run.stdout.lines().count(), 2 + 3, "{run:?}");
    let model = dir.out("m.rkl");
    // The relation is bilinear in the features: small λ recovers its ranking.
    let eval = ranklet(
        &dir,
        [os(Path::new("eval")), "-m".into(), os(&model), "--edges".into(), os(&edges), "--nodes".into(), os(&nodes)],
    );
    assert_eq!(eval.code, Some(0), "{eval:?}");
    let loss: f64 = eval.stdout.trim().split('\t').nth(1).unwrap().parse().unwrap();
    assert!(loss < 0.05, "{eval:?}");
    // Scores in input order: reversing the file reverses the scores.
    let rev: String = complete_edges().lines().rev().map(|l| format!("{l}\n")).collect();
    let edges_rev = dir.input("rev.txt", rev);
    let s1 = ranklet(
        &dir,
        [os(Path::new("score")), "-m".into(), os(&model), "--edges".into(), os(&edges), "--nodes".into(), os(&nodes)],
    );
    let s2 = ranklet(
        &dir,
        [
            os(Path::new("score")),
            "-m".into(),
            os(&model),
            "--edges".into(),
            os(&edges_rev),
            "--nodes".into(),
            os(&nodes),
        ],
    );
    assert_eq!(s1.code, Some(0), "{s1:?}");
    let a: Vec<&str> = s1.stdout.lines().collect();
    let mut b: Vec<&str> = s2.stdout.lines().collect();
    b.reverse();
    assert_eq!(a.len(), 36);
    assert_eq!(a, b);
    // rank: top 2 for node a, best first, ids from the candidates file.
    let r = ranklet(
        &dir,
        [
            os(Path::new("rank")),
            "-m".into(),
            os(&model),
            "--for".into(),
            "a".into(),
            "--candidates".into(),
            os(&nodes),
            "-k".into(),
            "2".into(),
        ],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{r:?}");
    let s: Vec<f64> = lines.iter().map(|l| l.split('\t').nth(1).unwrap().parse().unwrap()).collect();
    assert!(s[0] >= s[1], "{r:?}");
    // eval auc refuses non-0/1 labels, naming the line.
    let e = ranklet(
        &dir,
        [
            os(Path::new("eval")),
            "-m".into(),
            os(&model),
            "--edges".into(),
            os(&edges),
            "--nodes".into(),
            os(&nodes),
            "--metric".into(),
            "auc".into(),
        ],
    );
    assert_eq!(e.code, Some(2), "{e:?}");
    assert!(e.stderr.contains("0/1"), "{e:?}");
}

/// Incomplete graph: CG with the iteration count and residual reported; a
/// reciprocal model scores (u, v) and (v, u) with opposite signs exactly.
#[test]
fn incomplete_graph_uses_cg_and_reciprocal_scores_are_antisymmetric() {
    let dir = Scratch::new("kron-cg");
    let nodes = dir.input("nodes.txt", NODES);
    let edges = dir.input("e.txt", "a b 1\nb a -1\nb c 1\nc b -1\nc a 1\na c -1\nd e 1\ne d -1\nf a 1\na f -1\n");
    let run = train_edges(
        &dir,
        &edges,
        &nodes_flag(&nodes),
        &["--pair-kernel", "recip", "--max-iter", "50", "--precision", "f64"],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("CG: ") && run.stderr.contains("iterations, relative residual"), "{run:?}");
    let all = dir.input("all.txt", "a b 0\nb a 0\nd f 0\nf d 0\n");
    let s = ranklet(
        &dir,
        [
            os(Path::new("score")),
            "-m".into(),
            os(&dir.out("m.rkl")),
            "--edges".into(),
            os(&all),
            "--nodes".into(),
            os(&nodes),
        ],
    );
    assert_eq!(s.code, Some(0), "{s:?}");
    let v: Vec<f64> = s.stdout.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(v[0], -v[1], "{s:?}");
    assert_eq!(v[2], -v[3], "{s:?}");
    assert!(v[0] != 0.0, "{s:?}");
}

#[test]
fn scoring_an_unknown_node_names_file_and_line() {
    let dir = Scratch::new("kron-score-unknown");
    let nodes = dir.input("nodes.txt", NODES);
    let edges = dir.input("e.txt", complete_edges());
    let run = train_edges(&dir, &edges, &nodes_flag(&nodes), &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let model = dir.out("m.rkl");
    let test = dir.input("t.txt", "a b 0\nq a 0\n");
    let s = ranklet(
        &dir,
        [os(Path::new("score")), "-m".into(), os(&model), "--edges".into(), os(&test), "--nodes".into(), os(&nodes)],
    );
    assert_eq!(s.code, Some(2), "{s:?}");
    assert!(s.stdout.is_empty() && s.stderr.contains(&format!("{}:2:", test.display())), "{s:?}");
}

/// The model kinds: a linear node kernel writes a bilinear model (format
/// 1.2, kind 3), an RBF node kernel a dual pair model (kind 6); both score
/// through the device parser's pair entry points.
#[test]
fn feature_models_are_pair_kinds_of_the_format() {
    let dir = Scratch::new("kron-kinds");
    let nodes = dir.input("nodes.txt", NODES);
    let edges = dir.input("e.txt", complete_edges());
    for (kernel, kind) in [("linear", "bilinear"), ("rbf:0.5", "dual-pair")] {
        let mut v: Vec<OsString> =
            ["train", "--algo", "kron-rls", "--lambda", "0.1", "--kernel", kernel].iter().map(OsString::from).collect();
        v.extend(["--edges".into(), os(&edges), "--nodes".into(), os(&nodes), "-o".into(), os(&dir.out("m.rkl"))]);
        let run = ranklet(&dir, v);
        assert_eq!(run.code, Some(0), "{run:?}");
        let i = ranklet(&dir, [os(Path::new("inspect")), "-m".into(), os(&dir.out("m.rkl"))]);
        assert!(i.stdout.contains(&format!("kind: {kind}")), "{kernel}: {i:?}");
        let e = ranklet(
            &dir,
            [
                os(Path::new("eval")),
                "-m".into(),
                os(&dir.out("m.rkl")),
                "--edges".into(),
                os(&edges),
                "--nodes".into(),
                os(&nodes),
            ],
        );
        assert_eq!(e.code, Some(0), "{e:?}");
        let loss: f64 = e.stdout.trim().split('\t').nth(1).unwrap().parse().unwrap();
        assert!(loss < 0.2, "{kernel}: {e:?}");
    }
}

/// Precomputed kernels (two node sets, bare matrices): train, then score
/// new first nodes from their kernel rows against the training nodes.
#[test]
fn precomputed_kernels_train_and_score_from_kernel_rows() {
    let dir = Scratch::new("kron-precomputed");
    let ku = dir.input("ku.txt", "1 0.5 0.2\n0.5 1 0.3\n0.2 0.3 1\n");
    let kv = dir.input("kv.txt", "1 0.1\n0.1 1\n");
    let edges = dir.input("e.txt", "0 0 1\n0 1 0\n1 0 0\n1 1 1\n2 0 1\n2 1 0\n");
    let mut v: Vec<OsString> =
        ["train", "--algo", "kron-rankrls", "--lambda", "0.1"].iter().map(OsString::from).collect();
    v.extend(["--edges".into(), os(&edges)]);
    v.extend(["--kernel-u".into(), format!("precomputed:{}", ku.display()).into()]);
    v.extend(["--kernel-v".into(), format!("precomputed:{}", kv.display()).into()]);
    v.extend(["-o".into(), os(&dir.out("m.rkl")), "--precision".into(), "f64".into()]);
    let run = ranklet(&dir, v);
    assert_eq!(run.code, Some(0), "{run:?}");
    // Kernel rows of the training nodes themselves reproduce the fit: the
    // new node "0" has u-row 0 of K_u.
    let rows_u = dir.input("ru.txt", "1 0.5 0.2\n");
    let rows_v = dir.input("rv.txt", "1 0.1\n0.1 1\n");
    let test = dir.input("t.txt", "0 0 1\n0 1 0\n");
    let s = ranklet(
        &dir,
        [
            os(Path::new("score")),
            "-m".into(),
            os(&dir.out("m.rkl")),
            "--edges".into(),
            os(&test),
            "--kernel-u".into(),
            format!("precomputed:{}", rows_u.display()).into(),
            "--kernel-v".into(),
            format!("precomputed:{}", rows_v.display()).into(),
        ],
    );
    assert_eq!(s.code, Some(0), "{s:?}");
    let v: Vec<f64> = s.stdout.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(v.len(), 2);
    assert!(v[0] > v[1], "the positive edge ranks first: {s:?}");
}
