//! Scoring is for unlabelled rows, and mismatches are loud: `score` reads
//! SVMlight lines and CSV files without labels (and gives the scores of the
//! same rows with labels); `eval` says a label is needed; scoring a model on
//! data of another width warns on stderr; an undefined metric says why; a
//! CSV file read as SVMlight says so and names `--format csv`; `-o` into a
//! missing directory fails before the data is read.

use std::ffi::OsString;
use std::path::Path;

mod support;
use support::{assert_bad_input, os, ranklet, Run, Scratch};

/// Two queries over two features.
const LABELLED: &str = "3 qid:1 1:1 2:0.5\n1 qid:1 1:-1 2:0.25\n2 qid:2 1:0.5 2:1\n0 qid:2 1:-0.5 2:-1\n";

fn run(dir: &Scratch, args: &[&str], paths: &[(&str, &Path)]) -> Run {
    let mut v: Vec<OsString> = args.iter().map(OsString::from).collect();
    for (flag, p) in paths {
        v.push(flag.into());
        v.push(os(p));
    }
    ranklet(dir, v)
}

/// A linear model of `data`, written beside `in/` and `out/` (which stays
/// empty for the bad-input contract).
fn model(dir: &Scratch, data: &Path) -> std::path::PathBuf {
    let m = dir.root.join("m.rkl");
    let r = run(
        dir,
        &["train", "--algo", "rankrls", "--kernel", "linear", "--lambda", "1"],
        &[("--data", data), ("-o", &m)],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    m
}

fn score(dir: &Scratch, m: &Path, data: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["score"];
    args.extend_from_slice(extra);
    run(dir, &args, &[("-m", m), ("--data", data)])
}

/// SVMlight rows without labels, with and without qids, and a CSV file
/// without a label column are scored like the same rows with labels.
#[test]
fn score_reads_rows_without_labels() {
    let dir = Scratch::new("unlabelled");
    let m = model(&dir, &dir.input("train.light", LABELLED));
    let labelled = score(&dir, &m, &dir.input("l.light", LABELLED), &[]);
    assert_eq!(labelled.code, Some(0), "{labelled:?}");
    let bare: String = LABELLED.lines().map(|l| l.split_once(' ').unwrap().1.to_owned() + "\n").collect();
    let no_qid: String = bare.lines().map(|l| l.split_once(' ').unwrap().1.to_owned() + "\n").collect();
    assert!(bare.starts_with("qid:1 1:1") && no_qid.starts_with("1:1 2:0.5"), "{bare}{no_qid}");
    for (name, text) in [("u.light", bare), ("v.light", no_qid)] {
        let r = score(&dir, &m, &dir.input(name, text), &[]);
        assert_eq!((r.code, &r.stdout), (Some(0), &labelled.stdout), "{r:?}");
        assert!(r.stderr.is_empty(), "{r:?}");
    }
    let csv = dir.input("u.csv", "a,b\n1,0.5\n-1,0.25\n0.5,1\n-0.5,-1\n");
    let r = score(&dir, &m, &csv, &[]);
    assert_eq!((r.code, &r.stdout), (Some(0), &labelled.stdout), "{r:?}");
}

/// `eval` needs labels and says so, with a labelled line as the example.
#[test]
fn eval_says_a_label_is_needed() {
    let dir = Scratch::new("eval-unlabelled");
    let m = model(&dir, &dir.input("train.light", LABELLED));
    let data = dir.input("u.light", "1:1 2:0.5\n1:-1 2:0.25\n");
    let r = run(&dir, &["eval"], &[("-m", &m), ("--data", &data)]);
    assert_bad_input(&r, &dir, Some(&data), Some(1), &["no label", "e.g. `2 qid:1 1:0.5`"]);
    let csv = dir.input("u.csv", "a,b\n1,0.5\n");
    let r = run(&dir, &["eval"], &[("-m", &m), ("--data", &csv)]);
    assert_bad_input(&r, &dir, Some(&csv), Some(1), &["no label column", "--label-col"]);
}

/// Most feature values beyond the model's 2 features, or rows all of
/// another width: scored, with a warning naming the counts and the
/// model's dimension. Data that fits gives no warning (above).
#[test]
fn data_of_another_width_is_warned() {
    let dir = Scratch::new("width");
    let m = model(&dir, &dir.input("train.light", LABELLED));
    let far = dir.input("far.light", "1 5:1 9:2\n0 7:1\n1 1:1 8:3\n");
    let r = score(&dir, &m, &far, &[]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("warning") && r.stderr.contains("4 of its 5 feature values"), "{r:?}");
    assert!(r.stderr.contains("4 distinct indices up to 9") && r.stderr.contains("model's 2 features"), "{r:?}");
    let wide = dir.input("wide.light", "1 1:1 2:2 3:3\n0 1:1 2:1 3:0\n");
    let r = score(&dir, &m, &wide, &[]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("every row has 3 features, the model 2"), "{r:?}");
    let r = run(&dir, &["eval"], &[("-m", &m), ("--data", &wide)]);
    assert!(r.stderr.contains("every row has 3 features, the model 2"), "{r:?}");
}

/// A metric with nothing to measure says why: every score equal, one
/// label only, no query with two distinct labels.
#[test]
fn an_undefined_metric_says_why() {
    let dir = Scratch::new("undefined");
    let m = model(&dir, &dir.input("train.light", LABELLED));
    let cases = [
        ("flat.light", "1 qid:1 7:1\n0 qid:1 8:1\n", "all 2 scores are equal"),
        ("one.light", "1 qid:1 1:1\n1 qid:1 1:2\n", "every row has the label 1"),
        (
            "split.light",
            "1 qid:1 1:1\n1 qid:1 1:2\n0 qid:2 1:3\n0 qid:2 1:1\n",
            "none of the 2 queries has two distinct labels",
        ),
    ];
    for (name, text, why) in cases {
        let data = dir.input(name, text);
        let r = run(&dir, &["eval", "--metric", "kendall"], &[("-m", &m), ("--data", &data)]);
        assert_bad_input(&r, &dir, Some(&data), None, &["kendall: undefined here", why]);
    }
}

/// A CSV file whose name does not end in .csv: the error says it was read
/// as SVMlight by its extension and names `--format csv`; so does
/// `--label-col` on it, naming the file; with `--format csv` it scores.
#[test]
fn a_csv_file_read_as_svmlight_says_so() {
    let dir = Scratch::new("misnamed");
    let m = model(&dir, &dir.input("train.light", LABELLED));
    let data = dir.input("rows.txt", "\"a\",\"b\",\"y\"\n1,0.5,3\n-1,0.25,1\n");
    let r = score(&dir, &m, &data, &[]);
    assert_bad_input(&r, &dir, Some(&data), Some(1), &["read as SVMlight by its extension", "--format csv"]);
    let r = score(&dir, &m, &data, &["--label-col", "y"]);
    assert_bad_input(&r, &dir, Some(&data), None, &["apply to CSV data only", "--format csv"]);
    let r = score(&dir, &m, &data, &["--label-col", "y", "--format", "csv"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout.lines().count(), 2, "{r:?}");
}

/// `-o` into a directory that does not exist is refused before the data
/// is read (the data file here is malformed: its error would come first
/// otherwise), and `-o` naming a directory likewise.
#[test]
fn output_is_checked_before_training() {
    let dir = Scratch::new("output");
    let data = dir.input("bad.light", "1 qid:1 1:x\n");
    let missing = dir.root.join("no-such-dir").join("m.rkl");
    let r = run(&dir, &["train", "--algo", "rankrls"], &[("--data", &data), ("-o", &missing)]);
    assert_bad_input(&r, &dir, None, None, &["no-such-dir does not exist", "mkdir -p"]);
    let r = run(&dir, &["train", "--algo", "rankrls"], &[("--data", &data), ("-o", &dir.root.join("out"))]);
    assert_bad_input(&r, &dir, None, None, &["is a directory", "model.rkl"]);
}
