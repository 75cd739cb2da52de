//! Preferences between items keyed by id, and the relations between those
//! items: the data of the probabilistic preference learners (`--algo
//! pref-gp | xpgp | diff-gp`; papers 000 §5 and 001).
//!
//! The items themselves are node features ([`nodes`](super::nodes): CSV
//! with an `id` column, or `id index:value …` lines), or the rows of
//! `--data`, whose ids are then the 0-based data row numbers `"0"`, `"1"`, …
//! Every reader here takes the item ids and reports an id it does not know
//! at its line.
//!
//! # Preferences file (`--prefs`)
//!
//! ```text
//! # winner  loser  [tie | difference]
//! a         b                 # a ≻ b
//! c         a      tie        # neither preferred
//! b         c      0.25       # s_b − s_c = 0.25 (so b ≻ c)
//! ```
//!
//! - `a b`: item `a` was preferred to item `b`. The same judgement twice is
//!   kept twice, and contradictory judgements (`a b` and `b a`) are kept:
//!   they are noisy data (disagreeing judges), not a malformed file.
//! - `a b tie`: no preference. The probit likelihood of 000 eq. 10 /
//!   001 §3.2 has no tie outcome, so the binary learners (pref-gp, xpgp)
//!   **drop** ties by default (the CLI prints how many). With
//!   `--ties both` a tie is kept as the two opposite judgements `a ≻ b` and
//!   `b ≻ a`: its likelihood `Φ(d/c)·Φ(−d/c)` (`d = f_a − f_b`, `c = √2σ`)
//!   is largest at `d = 0` and pulls the two items together, with no new
//!   site type in EP. The score-difference learner (diff-gp) keeps a tie as
//!   the observed difference 0.
//! - `a b d`: the observed score difference `s_a − s_b = d` (finite), the
//!   data of the score-difference GP (000 §5, last part). The binary learners
//!   read its sign: `d > 0` is `a ≻ b`, `d < 0` is `b ≻ a`, `d = 0` a tie.
//!   diff-gp needs a difference (or `tie`) on every line.
//! - An item preferred to itself is an error; so is an unknown id.
//! - `#` starts a comment; blank lines are skipped. A file without any line
//!   of data is an error.
//!
//! # Relation files (`--relation`, several allowed)
//!
//! One relation type per file (001 §7): an undirected weighted graph over
//! the items, one edge per line, `u v [w]` (the [edges](super::edges) rules;
//! `w` defaults to 1). A weight must be finite and ≥ 0 (the regularised
//! Laplacian of 001 eq. 2 needs a graph with non-negative weights); `a b w`
//! and `b a w` name the same edge, and giving it twice is an error unless
//! both weights are equal (then the second is redundant and ignored). A loop
//! `a a` is accepted and has no effect (a Laplacian does not see loops). An
//! edge to an unknown item is an error at its line. Items without edges are
//! fine (the graph may be disconnected).
//!
//! # Group files (`--relation-groups`, several allowed)
//!
//! A bipartite relation `item group` (a wine and its producer, a film and
//! its director), projected to co-membership as 001 §7 does (by core's
//! learner): items `i ≠ j` are related with weight `W_ij` = the number of
//! groups they share; each group becomes a clique. Group ids are a name
//! space of their own. Every item id must be known; the same (item, group)
//! twice is an error; there are no weights (a third field other than `1`
//! is an error).

use std::{collections::HashMap, path::Path};

use super::{
    edges::{id_index, parse_edges_str, EdgeOptions},
    parse_finite, quote, read_text, strip_bom, DataError, ErrorKind,
};

/// The outcome of one judgement between items `a` and `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// `a ≻ b`.
    Win,
    /// Neither is preferred.
    Tie,
    /// The observed score difference `s_a − s_b` (finite).
    Difference(f64),
}

/// One judgement: items `a` and `b` (indices into the item ids, `a ≠ b`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// The first item of the line.
    pub a: usize,
    /// The second item of the line.
    pub b: usize,
    /// What was observed.
    pub outcome: Outcome,
}

/// The judgements of a preferences file, in file order.
///
/// Guarantees: at least one judgement; every index below the number of item
/// ids the file was read against; `a ≠ b`; differences finite.
#[derive(Debug, Clone, PartialEq)]
pub struct Prefs {
    judgements: Vec<Judgement>,
    lines: Vec<usize>,
    source: String,
}

/// Preferences for a binary learner: `(winner, loser)` pairs in file order,
/// and what became of the ties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    /// `(winner, loser)` item indices.
    pub pairs: Vec<(usize, usize)>,
    /// Ties (and zero differences) left out ([`Ties::Drop`]).
    pub ties_dropped: usize,
    /// Ties kept as two opposite judgements ([`Ties::Both`]).
    pub ties_both: usize,
}

/// What the binary learners make of a tie (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ties {
    /// Leave ties out.
    #[default]
    Drop,
    /// A tie `a b` becomes `a ≻ b` and `b ≻ a`.
    Both,
}

impl Prefs {
    /// The judgements, in file order.
    pub fn judgements(&self) -> &[Judgement] {
        &self.judgements
    }

    /// Number of judgements.
    pub fn len(&self) -> usize {
        self.judgements.len()
    }

    /// `true` when there are none (never, for a file read by [`read_prefs`]).
    pub fn is_empty(&self) -> bool {
        self.judgements.is_empty()
    }

    /// The 1-based line of judgement `k`.
    ///
    /// # Panics
    ///
    /// If `k >= len()`.
    pub fn source_line(&self, k: usize) -> usize {
        self.lines[k]
    }

    /// The file, as printed in errors.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The strict preferences `(winner, loser)`: `a b` as is, a difference
    /// by its sign; ties and zero differences dropped and counted.
    pub fn binary(&self) -> Binary {
        self.binary_with(Ties::Drop)
    }

    /// As [`binary`](Self::binary), ties (and zero differences) dropped or
    /// kept as `(a, b)` followed by `(b, a)`, by `ties`.
    pub fn binary_with(&self, ties: Ties) -> Binary {
        let mut pairs = Vec::with_capacity(self.len());
        let (mut ties_dropped, mut ties_both) = (0, 0);
        for j in &self.judgements {
            match j.outcome {
                Outcome::Win => pairs.push((j.a, j.b)),
                Outcome::Difference(d) if d > 0.0 => pairs.push((j.a, j.b)),
                Outcome::Difference(d) if d < 0.0 => pairs.push((j.b, j.a)),
                Outcome::Tie | Outcome::Difference(_) => match ties {
                    Ties::Drop => ties_dropped += 1,
                    Ties::Both => {
                        pairs.push((j.a, j.b));
                        pairs.push((j.b, j.a));
                        ties_both += 1;
                    }
                },
            }
        }
        Binary { pairs, ties_dropped, ties_both }
    }

    /// The observed differences `(a, b, s_a − s_b)`, a tie as 0.
    ///
    /// # Errors
    ///
    /// A line with a bare preference `a b` ([`ErrorKind::Invalid`], at its
    /// line): the score-difference learner needs the difference.
    pub fn differences(&self) -> Result<Vec<(usize, usize, f64)>, DataError> {
        self.judgements
            .iter()
            .zip(&self.lines)
            .map(|(j, &line)| match j.outcome {
                Outcome::Difference(d) => Ok((j.a, j.b, d)),
                Outcome::Tie => Ok((j.a, j.b, 0.0)),
                Outcome::Win => Err(DataError::at(
                    &self.source,
                    line,
                    ErrorKind::Invalid,
                    "a preference without a score difference (`a b d` or `a b tie`), which diff-gp needs".to_owned(),
                )),
            })
            .collect()
    }
}

/// Reads a preferences file over the items `ids`. See the
/// [module docs](self).
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, no
/// judgements, a line of other than 2 or 3 fields, an unknown id, an item
/// preferred to itself, or a third field that is neither `tie` nor a finite
/// number.
pub fn read_prefs(path: impl AsRef<Path>, ids: &[String]) -> Result<Prefs, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_prefs_str(&text, &path.display().to_string(), ids)
}

/// Parses a preferences text; `name` is printed in errors.
///
/// # Errors
///
/// As [`read_prefs`].
pub fn parse_prefs_str(text: &str, name: &str, ids: &[String]) -> Result<Prefs, DataError> {
    let index = id_index(ids);
    let mut judgements = Vec::new();
    let mut lines = Vec::new();
    for (i, raw) in strip_bom(text).lines().enumerate() {
        let line_no = i + 1;
        let err = |kind, msg| DataError::at(name, line_no, kind, msg);
        let line = raw.find('#').map_or(raw, |p| &raw[..p]);
        let tokens: Vec<&str> = line.split_ascii_whitespace().take(4).collect();
        let (a, b, third) = match tokens[..] {
            [] => continue,
            [a, b] => (a, b, None),
            [a, b, t] => (a, b, Some(t)),
            _ => {
                let n = line.split_ascii_whitespace().count();
                return Err(err(
                    ErrorKind::Malformed,
                    format!("expected `winner loser [tie|difference]`, found {n} fields"),
                ));
            }
        };
        let item = |tok: &str| {
            index.get(tok).copied().ok_or_else(|| {
                err(ErrorKind::Unknown, format!("unknown item {}: not among the {} item ids", quote(tok), ids.len()))
            })
        };
        let (ia, ib) = (item(a)?, item(b)?);
        if ia == ib {
            return Err(err(ErrorKind::Invalid, format!("item {} is compared with itself", quote(a))));
        }
        let outcome = match third {
            None => Outcome::Win,
            Some("tie") => Outcome::Tie,
            Some(t) => Outcome::Difference(parse_finite(t, "score difference").map_err(|(k, m)| err(k, m))?),
        };
        judgements.push(Judgement { a: ia, b: ib, outcome });
        lines.push(line_no);
    }
    if judgements.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "no preferences".to_owned()));
    }
    Ok(Prefs { judgements, lines, source: name.to_owned() })
}

/// One relation type over the items (001 §7).
#[derive(Debug, Clone, PartialEq)]
pub struct Relation {
    /// The file it came from (its name in reports).
    pub source: String,
    /// The relation.
    pub kind: RelationKind,
}

/// The two shapes of a relation file.
#[derive(Debug, Clone, PartialEq)]
pub enum RelationKind {
    /// An undirected graph with non-negative weights: each edge once as
    /// `(i, j, w)` with `i < j`, no loops, in order of first appearance.
    Edges(Vec<(usize, usize, f64)>),
    /// Memberships `(item, group)` of a bipartite relation, in file order,
    /// none twice; projected to co-membership by the learner
    /// (`ranklet_core::learn::pref::xpgp::Relation::Groups`).
    Groups(Vec<(usize, usize)>),
}

impl Relation {
    /// Number of items with at least one edge (sharing a group with
    /// another item, for groups).
    pub fn covered(&self, n: usize) -> usize {
        let mut seen = vec![false; n];
        match &self.kind {
            RelationKind::Edges(e) => e.iter().for_each(|&(i, j, _)| {
                seen[i] = true;
                seen[j] = true;
            }),
            RelationKind::Groups(g) => {
                let mut size: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
                g.iter().for_each(|&(_, k)| *size.entry(k).or_default() += 1);
                g.iter().filter(|&&(_, k)| size[&k] > 1).for_each(|&(i, _)| seen[i] = true);
            }
        }
        seen.iter().filter(|&&s| s).count()
    }
}

/// A weight of a relation or group file: finite (the reader checked) and
/// ≥ 0.
fn check_weight(source: &str, line: usize, w: f64) -> Result<f64, DataError> {
    if w < 0.0 {
        return Err(DataError::at(source, line, ErrorKind::Invalid, format!("negative weight {w}")));
    }
    Ok(w.abs())
}

/// Reads a relation file (`u v [w]`) over the items `ids`. See the
/// [module docs](self#relation-files---relation-several-allowed).
///
/// # Errors
///
/// The [edges reader's](super::read_edges) errors; an unknown item, a
/// negative weight, or the same edge twice with different weights, at the
/// line.
pub fn read_relation(path: impl AsRef<Path>, ids: &[String]) -> Result<Relation, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_relation_str(&text, &path.display().to_string(), ids)
}

/// Parses a relation text; `name` is printed in errors.
///
/// # Errors
///
/// As [`read_relation`].
pub fn parse_relation_str(text: &str, name: &str, ids: &[String]) -> Result<Relation, DataError> {
    let opts = EdgeOptions { one_domain: true, optional_label: true };
    let e = parse_edges_str(text, name, &opts)?.on_nodes(ids, ids)?;
    let mut seen: HashMap<(usize, usize), (f64, usize)> = HashMap::new();
    let mut edges = Vec::new();
    for (k, (&(i, j), &w)) in e.edges().iter().zip(e.labels()).enumerate() {
        let line = e.source_line(k);
        let w = check_weight(name, line, w)?;
        if i == j {
            continue;
        }
        let key = (i.min(j), i.max(j));
        match seen.get(&key) {
            Some(&(w0, _)) if w0 == w => continue,
            Some(&(w0, line0)) => {
                return Err(DataError::at(
                    name,
                    line,
                    ErrorKind::Duplicate,
                    format!(
                        "edge ({}, {}) has weight {w0} on line {line0}; an undirected edge has one weight",
                        quote(&ids[i]),
                        quote(&ids[j])
                    ),
                ))
            }
            None => {
                seen.insert(key, (w, line));
                edges.push((key.0, key.1, w));
            }
        }
    }
    Ok(Relation { source: name.to_owned(), kind: RelationKind::Edges(edges) })
}

/// Reads a group file (`item group [w]`) over the items `ids` and projects
/// it to co-membership (001 §7). See the
/// [module docs](self#group-files---relation-groups-several-allowed).
///
/// # Errors
///
/// The [edges reader's](super::read_edges) errors (among them the same
/// (item, group) twice); an unknown item or a negative weight, at the line.
pub fn read_groups(path: impl AsRef<Path>, ids: &[String]) -> Result<Relation, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_groups_str(&text, &path.display().to_string(), ids)
}

/// Parses a group text; `name` is printed in errors.
///
/// # Errors
///
/// As [`read_groups`].
pub fn parse_groups_str(text: &str, name: &str, ids: &[String]) -> Result<Relation, DataError> {
    let opts = EdgeOptions { one_domain: false, optional_label: true };
    let raw = parse_edges_str(text, name, &opts)?;
    let groups = raw.v_ids().to_vec();
    let e = raw.on_nodes(ids, &groups)?;
    if let Some(k) = e.labels().iter().position(|&w| w != 1.0) {
        return Err(DataError::at(
            name,
            e.source_line(k),
            ErrorKind::Invalid,
            format!("weight {}: a group file has no weights (items sharing a group are related with weight 1 per shared group)", e.labels()[k]),
        ));
    }
    Ok(Relation { source: name.to_owned(), kind: RelationKind::Groups(e.edges().to_vec()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn prefs_outcomes_ties_and_repeats() {
        let items = ids(&["a", "b", "c"]);
        let p = parse_prefs_str("# h\na b\n\nc a tie # t\nb c 0.25\nc b -1\nb a\na b\nb c 0\n", "p", &items).unwrap();
        assert_eq!(p.len(), 7);
        assert_eq!(p.source_line(1), 4);
        let bin = p.binary();
        assert_eq!(bin.pairs, vec![(0, 1), (1, 2), (1, 2), (1, 0), (0, 1)]);
        assert_eq!((bin.ties_dropped, bin.ties_both), (2, 0));
        let both = p.binary_with(Ties::Both);
        assert_eq!(both.pairs, vec![(0, 1), (2, 0), (0, 2), (1, 2), (1, 2), (1, 0), (0, 1), (1, 2), (2, 1)]);
        assert_eq!((both.ties_dropped, both.ties_both), (0, 2));
        let e = p.differences().unwrap_err();
        assert_eq!((e.line(), e.kind()), (Some(2), ErrorKind::Invalid));
        let d = parse_prefs_str("a b 0.5\nc a tie\n", "p", &items).unwrap().differences().unwrap();
        assert_eq!(d, vec![(0, 1, 0.5), (2, 0, 0.0)]);
    }

    #[test]
    fn prefs_errors_name_the_line() {
        let items = ids(&["a", "b"]);
        let err = |t: &str| {
            let e = parse_prefs_str(t, "p", &items).unwrap_err();
            (e.kind(), e.line())
        };
        assert_eq!(err("a b\nx b\n"), (ErrorKind::Unknown, Some(2)));
        assert_eq!(err("a b\nb z\n"), (ErrorKind::Unknown, Some(2)));
        assert_eq!(err("a a\n"), (ErrorKind::Invalid, Some(1)));
        assert_eq!(err("a b nan\n"), (ErrorKind::NonFinite, Some(1)));
        assert_eq!(err("a b inf\n"), (ErrorKind::NonFinite, Some(1)));
        assert_eq!(err("a b tied\n"), (ErrorKind::Malformed, Some(1)));
        assert_eq!(err("a\n"), (ErrorKind::Malformed, Some(1)));
        assert_eq!(err("a b 1 2\n"), (ErrorKind::Malformed, Some(1)));
        assert_eq!(err("# none\n\n"), (ErrorKind::Empty, None));
    }

    #[test]
    fn relation_is_undirected_weighted_and_checked() {
        let items = ids(&["a", "b", "c", "d"]);
        let r = parse_relation_str("a b\nc b 0.5\nb a 1\nd d 3\n", "r", &items).unwrap();
        assert_eq!(r.kind, RelationKind::Edges(vec![(0, 1, 1.0), (1, 2, 0.5)]));
        assert_eq!(r.covered(4), 3);
        let err = |t: &str| {
            let e = parse_relation_str(t, "r", &items).unwrap_err();
            (e.kind(), e.line())
        };
        assert_eq!(err("a b\na z 1\n"), (ErrorKind::Unknown, Some(2)));
        assert_eq!(err("a b nan\n"), (ErrorKind::NonFinite, Some(1)));
        assert_eq!(err("a b -1\n"), (ErrorKind::Invalid, Some(1)));
        assert_eq!(err("a b 1\nb a 2\n"), (ErrorKind::Duplicate, Some(2)));
        assert_eq!(err("a b 1\na b 1\n"), (ErrorKind::Duplicate, Some(2)));
        assert_eq!(err("a\n"), (ErrorKind::Malformed, Some(1)));
    }

    #[test]
    fn groups_are_memberships_checked_by_line() {
        let items = ids(&["a", "b", "c", "d"]);
        let r = parse_groups_str("a g1\nb g1\nc g1 1\nb g2\nd g3\n", "g", &items).unwrap();
        assert_eq!(r.kind, RelationKind::Groups(vec![(0, 0), (1, 0), (2, 0), (1, 1), (3, 2)]));
        assert_eq!(r.covered(4), 3);
        let e = parse_groups_str("a g\nq g\n", "g", &items).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::Unknown, Some(2)));
        let e = parse_groups_str("a g\na g\n", "g", &items).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::Duplicate, Some(2)));
        let e = parse_groups_str("a g\nb g inf\n", "g", &items).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::NonFinite, Some(2)));
        let e = parse_groups_str("a g 2\n", "g", &items).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::Invalid, Some(1)));
    }
}
