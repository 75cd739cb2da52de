//! `ranklet train/eval/suggest/inspect` on preferences between items
//! (preference GPs, papers 000 §5 and 001) end to end: hostile input (exit
//! 2, stderr naming the file and line, silent stdout, nothing in the output
//! directory), flags that do not apply refused, and the happy paths.

use std::ffi::OsString;
use std::path::Path;

mod support;
use support::{assert_bad_input, os, ranklet, Run, Scratch};

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
