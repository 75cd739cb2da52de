//! The preference-GP readers (`parse_prefs_str`, `parse_relation_str`,
//! `parse_groups_str`) on arbitrary text over a few item ids (the first
//! byte gives their number, 0..=15: ids `"0"`, `"1"`, …); the rest is the
//! file (invalid UTF-8 replaced by U+FFFD).
//!
//! Contract under test: no panic; every judgement names two different known
//! items with a finite difference; every relation edge has `i < j < n` and
//! a finite weight `>= 0`; every membership names a known item.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ranklet::data::prefs::{Outcome, RelationKind};
use ranklet::data::{parse_groups_str, parse_prefs_str, parse_relation_str};

fuzz_target!(|data: &[u8]| {
    let (n, rest) = match data {
        [a, rest @ ..] => (usize::from(*a & 15), rest),
        _ => (0, data),
    };
    let ids: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let text = String::from_utf8_lossy(rest);
    if let Ok(p) = parse_prefs_str(&text, "fuzz.prefs", &ids) {
        assert!(!p.is_empty());
        for j in p.judgements() {
            assert!(j.a < n && j.b < n && j.a != j.b, "{j:?}");
            if let Outcome::Difference(d) = j.outcome {
                assert!(d.is_finite());
            }
        }
        let b = p.binary();
        assert_eq!(b.pairs.len() + b.ties_dropped, p.len());
    }
    if let Ok(r) = parse_relation_str(&text, "fuzz.rel", &ids) {
        let RelationKind::Edges(e) = r.kind else { panic!("a relation file gives edges") };
        for (i, j, w) in e {
            assert!(i < j && j < n && w.is_finite() && w >= 0.0, "({i}, {j}, {w})");
        }
    }
    if let Ok(r) = parse_groups_str(&text, "fuzz.groups", &ids) {
        let RelationKind::Groups(g) = r.kind else { panic!("a group file gives memberships") };
        assert!(g.iter().all(|&(i, _)| i < n));
    }
});
