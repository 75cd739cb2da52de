//! Linear RLS / RankRLS from statistics files (`.rks`), the host half of
//! [`ranklet_core::learn::ls_stats`]: `ranklet stats` streams SVMlight
//! files into a [`Shard`] (the statistics of their rows) and writes it;
//! `ranklet train --from-stats` reads shards, merges them and solves a λ
//! grid, with the cross-validation table when the shards carry folds.
//!
//! Streaming: each block (a fixed 16 MB of lines) is parsed in chunks of
//! about 1 MB, and each chunk of dense raw features is summed on its own
//! thread into records of its own, merged in file order — so the shard's
//! bytes do not depend on the number of threads. With `--pairs`
//! ([`PairSummer`]) the shard sums the difference rows of explicit
//! preference pairs instead of rows and queries.
//!
//! Memory while streaming: one block of rows (dense, `rows × d`), the `K`
//! fold totals and sealed records (`O(K·d²)`), the ids of sealed queries,
//! and the partials of open queries — `d + 2` values each with
//! `--query-weight equal`, `O(d²)` with `pairs` (the weighting's factor
//! `l_q` is known only once a query is whole; see the core module). A query
//! is sealed when its run of lines ends, unless `--keep-queries` (then
//! every query stays open) or it is a file's first or last run, which may
//! go on in another shard. Rows without qids are one query, qid 0, as the in-memory
//! ranker treats them.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ranklet_core::backend::Backend;
use ranklet_core::format::stats::{FeatureMap, StatsContent, StatsFile, StatsView};
use ranklet_core::graph::{Pair, QueryWeight};
use ranklet_core::learn::ls_stats::{self, StatsRef, StatsShape, Target, N};
use ranklet_core::learn::LearnError;

use rayon::prelude::*;

use crate::data::svmlight::{stream_blocks, RowBlock, SvmlightOptions, CHUNK_BYTES};
use crate::error::CliError;
use crate::family::nystrom_stats::NystromSpec;
use crate::hostbackend::HostBackend;
use crate::mem::{read_pairs_checked, PairCost};

/// Bytes of a block of a streamed SVMlight file (cut into chunks of
/// [`CHUNK_BYTES`] parsed and summed in parallel): fixed, not scaled by the
/// number of threads as the plain reader's blocks, so that the chunks —
/// and the rounding of the statistics — are the same whatever the number
/// of threads; 16 chunks keep up to 16 threads busy.
const STATS_BLOCK_BYTES: usize = 16 * CHUNK_BYTES;

/// The statistics of some rows: fold totals and per-query partials, with
/// the qids strictly increasing once [`Shard::finish`]ed.
#[derive(Clone, Debug)]
pub struct Shard {
    /// Dimension, folds, query weighting.
    pub shape: StatsShape,
    /// The fold seed.
    pub seed: u64,
    /// `K` total records.
    pub totals: Vec<f64>,
    /// `K` records of the sealed queries.
    pub sealed: Vec<f64>,
    /// The sealed queries' ids.
    pub sealed_qids: Vec<u64>,
    /// Query ids.
    pub qids: Vec<u64>,
    /// Their records.
    pub queries: Vec<f64>,
    /// What the statistics were computed from, for messages.
    pub source: String,
    /// The Nyström feature map the rows go through (`None`: the raw
    /// features); `shape.d` is then its `m`.
    pub map: Option<NystromSpec>,
    /// Rows and their queries, or explicit preference pairs (then the
    /// totals are those of the pairs' difference rows, and there are no
    /// query records).
    pub content: StatsContent,
    /// The record of each qid (`qids` inverted).
    slots: HashMap<u64, usize>,
    /// Each row's record, and [`ls_stats::accumulate`]'s scratch.
    row_slots: Vec<usize>,
    work: Vec<f64>,
}

fn weight_name(w: QueryWeight) -> &'static str {
    match w {
        QueryWeight::Equal => "equal",
        QueryWeight::Pairs => "pairs",
    }
}

/// Refuses statistics over `d` features that cannot fit in memory, before
/// any allocation: Σxxᵀ is d(d+1)/2 values (plus 4d sums), twice
/// (compensated), for the totals and the sealed queries of each of the
/// `folds` records — checked arithmetic, so a `d` whose lengths would
/// overflow is refused as too large rather than wrapped.
fn check_fits(d: usize, folds: usize) -> Result<(), CliError> {
    let elems = d
        .checked_add(1)
        .and_then(|d1| d.checked_mul(d1))
        .map(|dd| dd / 2)
        .and_then(|p| p.checked_add(d.checked_mul(4)?))
        .and_then(|v| v.checked_mul(4 * folds.max(1)));
    crate::mem::check(
        &format!("statistics over {d} features (a {d} × {d} matrix of sums)"),
        elems,
        8,
        "statistics are dense in the features: renumber them densely from 1, bound them with --num-features, \
         or train sparse data with `ranklet train --data` (its primal form sums XᵀLX from the sparse rows)",
    )
}

impl Shard {
    /// Empty statistics.
    ///
    /// # Errors
    /// A [`CliError::failure`] naming the size when they cannot fit.
    pub fn new(shape: StatsShape, seed: u64, source: String) -> Result<Shard, CliError> {
        check_fits(shape.d, shape.folds)?;
        Ok(Shard {
            shape,
            seed,
            totals: vec![0.0; shape.totals_buffer_len()],
            sealed: vec![0.0; shape.totals_buffer_len()],
            sealed_qids: Vec::new(),
            qids: Vec::new(),
            queries: Vec::new(),
            source,
            map: None,
            content: StatsContent::Rows,
            slots: HashMap::new(),
            row_slots: Vec::new(),
            work: Vec::new(),
        })
    }

    /// Adds a block of rows: `x` row-major `rows × d` (`rows × p`, the
    /// map's input dimension, with a Nyström map: the rows are mapped to
    /// its `m` features first), labels `y`, each row's qid (rows without
    /// qids: 0). A qid already met adds to that query's partials, whichever
    /// block it was in.
    ///
    /// # Errors
    /// As [`ls_stats::accumulate`] (sizes, NaN or ±∞); nothing is added.
    pub fn add_rows<B: Backend>(
        &mut self,
        backend: &mut B,
        x: &[f64],
        y: &[f64],
        qids: &[u64],
    ) -> Result<(), LearnError> {
        let mapped;
        let x = match &self.map {
            Some(spec) => {
                if x.len() != y.len() * spec.input_dim {
                    return Err(ranklet_core::LinalgError::DimensionMismatch.into());
                }
                mapped = spec.features(backend, x)?;
                &mapped[..]
            }
            None => x,
        };
        self.assign_slots(qids);
        self.work.resize(ls_stats::accumulate_workspace_len(&self.shape, y.len()), 0.0);
        ls_stats::accumulate(
            backend,
            &self.shape,
            self.seed,
            x,
            &ls_stats::RowBlock { y, qids, slots: &self.row_slots },
            ls_stats::StatsMut { totals: &mut self.totals, sealed: &mut self.sealed, queries: &mut self.queries },
            &mut self.work,
        )
    }

    /// Each row's query record (new qids get one), into `row_slots`.
    fn assign_slots(&mut self, qids: &[u64]) {
        let mq = 2 * self.shape.query_len();
        self.row_slots.clear();
        for &qid in qids {
            let next = self.qids.len();
            let slot = *self.slots.entry(qid).or_insert(next);
            if slot == next {
                self.qids.push(qid);
            }
            self.row_slots.push(slot);
        }
        self.queries.resize(self.qids.len() * mq, 0.0);
    }

    /// Merges the `K` total records of rows summed apart
    /// ([`ls_stats::merge_totals`]).
    ///
    /// # Errors
    /// Records of another shape; nothing is added then.
    fn merge_totals(&mut self, totals: &[f64]) -> Result<(), LearnError> {
        Ok(ls_stats::merge_totals(&self.shape, &mut self.totals, totals)?)
    }

    /// Merges the records `recs` of the queries `qids` (each once) and the
    /// sealed records `sealed` of rows summed apart
    /// ([`ls_stats::merge_query`], [`ls_stats::add_records`]): with
    /// [`Shard::merge_totals`], what [`Shard::add_rows`] adds for those
    /// rows, up to rounding.
    ///
    /// # Errors
    /// Records of another shape; nothing is added then.
    fn merge_queries(&mut self, qids: &[u64], recs: &[f64], sealed: &[f64]) -> Result<(), LearnError> {
        let mq = 2 * self.shape.query_len();
        if recs.len() != qids.len() * mq || sealed.len() != self.sealed.len() {
            return Err(ranklet_core::LinalgError::DimensionMismatch.into());
        }
        ls_stats::add_records(&mut self.sealed, sealed)?;
        self.assign_slots(qids);
        for (k, &slot) in self.row_slots.iter().enumerate() {
            let dst = &mut self.queries[slot * mq..(slot + 1) * mq];
            ls_stats::merge_query(&self.shape, self.seed, qids[k], dst, &recs[k * mq..(k + 1) * mq], &mut self.sealed)?;
        }
        Ok(())
    }

    /// Adds the difference rows `x_winner − x_loser` of explicit pairs
    /// (`x` row-major `pairs × d`, raw features) with their magnitudes `m`
    /// as labels to the totals of pair statistics
    /// ([`StatsContent::Pairs`]), each to the fold of its key in `keys`
    /// ([`pair_key`]); no query records are kept.
    ///
    /// # Errors
    /// As [`ls_stats::accumulate`]; nothing is added.
    pub fn add_difference_rows<B: Backend>(
        &mut self,
        backend: &mut B,
        x: &[f64],
        m: &[f64],
        keys: &[u64],
    ) -> Result<(), LearnError> {
        let n = m.len();
        let slots = vec![0usize; n];
        let mut discard = vec![0.0; 2 * self.shape.query_len()];
        // Pair statistics are RLS on difference rows: the totals alone.
        let mut discard_sealed = vec![0.0; self.shape.totals_buffer_len()];
        self.work.resize(ls_stats::accumulate_workspace_len(&self.shape, n).max(self.work.len()), 0.0);
        ls_stats::accumulate(
            backend,
            &self.shape,
            self.seed,
            x,
            &ls_stats::RowBlock { y: m, qids: keys, slots: &slots },
            ls_stats::StatsMut { totals: &mut self.totals, sealed: &mut discard_sealed, queries: &mut discard },
            &mut self.work,
        )
    }

    /// [`Shard::add_rows`] for CSR rows of the raw features (no Nyström
    /// map), without densifying ([`ls_stats::accumulate_sparse`]).
    ///
    /// # Errors
    /// As [`ls_stats::accumulate_sparse`]; nothing is added.
    pub fn add_sparse_rows<B: Backend>(
        &mut self,
        backend: &mut B,
        row_ptr: &[usize],
        cols: &[u32],
        vals: &[f64],
        y: &[f64],
        qids: &[u64],
    ) -> Result<(), LearnError> {
        if self.map.is_some() {
            return Err(LearnError::Unsupported);
        }
        self.assign_slots(qids);
        self.work.resize(ls_stats::accumulate_sparse_workspace_len(&self.shape).max(self.work.len()), 0.0);
        ls_stats::accumulate_sparse(
            backend,
            &self.shape,
            self.seed,
            row_ptr,
            cols,
            vals,
            &ls_stats::RowBlock { y, qids, slots: &self.row_slots },
            ls_stats::StatsMut { totals: &mut self.totals, sealed: &mut self.sealed, queries: &mut self.queries },
            &mut self.work,
        )
    }

    /// Seals the queries `qids`, whose rows have all been added: their
    /// terms go into the sealed records and their records are dropped
    /// ([`ls_stats::seal`]). Unknown qids are ignored.
    pub fn seal(&mut self, qids: &[u64]) -> Result<(), LearnError> {
        let mq = 2 * self.shape.query_len();
        let qids: Vec<u64> = qids.iter().copied().filter(|q| self.slots.contains_key(q)).collect();
        let mut recs = Vec::with_capacity(qids.len() * mq);
        for q in &qids {
            let j = self.slots[q];
            recs.extend_from_slice(&self.queries[j * mq..(j + 1) * mq]);
        }
        self.work.resize(ls_stats::seal_workspace_len(&self.shape).max(self.work.len()), 0.0);
        ls_stats::seal(&self.shape, self.seed, &qids, &recs, &mut self.sealed, &mut self.work)?;
        for &q in &qids {
            // The last record moves into the hole.
            let Some(j) = self.slots.remove(&q) else { continue };
            let last = self.qids.len() - 1;
            self.queries.copy_within(last * mq..(last + 1) * mq, j * mq);
            self.queries.truncate(last * mq);
            self.qids.swap_remove(j);
            if j < last {
                self.slots.insert(self.qids[j], j);
            }
            self.sealed_qids.push(q);
        }
        Ok(())
    }

    /// The statistics as core reads them.
    pub fn as_ref(&self) -> StatsRef<'_> {
        StatsRef {
            shape: self.shape,
            seed: self.seed,
            totals: &self.totals,
            sealed: &self.sealed,
            qids: &self.qids,
            queries: &self.queries,
        }
    }

    /// `slots` from `qids` after they were reordered.
    fn reindex(&mut self) {
        self.slots = self.qids.iter().enumerate().map(|(j, &q)| (q, j)).collect();
    }

    /// Rows summarised.
    pub fn rows(&self) -> usize {
        let m = 2 * self.shape.total_len();
        self.totals.chunks_exact(m).map(|r| ls_stats::value(r, N)).sum::<f64>() as usize
    }

    /// The same statistics for `d ≥ shape.d` features.
    fn widen(&mut self, d: usize) -> Result<(), CliError> {
        if d <= self.shape.d {
            return Ok(());
        }
        check_fits(d, self.shape.folds)?;
        let to = StatsShape { d, ..self.shape };
        let re = |total: bool, src: &[f64], m0: usize, m1: usize| -> Result<Vec<f64>, CliError> {
            let mut out = vec![0.0; src.len() / m0 * m1];
            for (s, t) in src.chunks_exact(m0).zip(out.chunks_exact_mut(m1)) {
                ls_stats::widen_record(&self.shape, &to, total, s, t).map_err(|e| CliError::failure(e.to_string()))?;
            }
            Ok(out)
        };
        self.totals = re(true, &self.totals, 2 * self.shape.total_len(), 2 * to.total_len())?;
        self.sealed = re(true, &self.sealed, 2 * self.shape.total_len(), 2 * to.total_len())?;
        self.queries = re(false, &self.queries, 2 * self.shape.query_len(), 2 * to.query_len())?;
        self.shape = to;
        Ok(())
    }

    /// Sorts the query records by qid, as the file wants them.
    pub fn finish(&mut self) {
        let mq = 2 * self.shape.query_len();
        let mut order: Vec<usize> = (0..self.qids.len()).collect();
        order.sort_unstable_by_key(|&j| self.qids[j]);
        self.qids = order.iter().map(|&j| self.qids[j]).collect();
        self.queries = order.iter().flat_map(|&j| self.queries[j * mq..(j + 1) * mq].iter().copied()).collect();
        self.sealed_qids.sort_unstable();
        self.reindex();
    }

    /// The `.rks` bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, CliError> {
        let (map, nystrom) = match &self.map {
            Some(spec) => (FeatureMap::Nystrom, Some(spec.as_core())),
            None => (FeatureMap::Linear, None),
        };
        let f = StatsFile { stats: self.as_ref(), sealed_qids: &self.sealed_qids, content: self.content, map, nystrom };
        let bad = |e: ranklet_core::format::stats::StatsFileError| CliError::failure(format!("statistics: {e}"));
        let mut out = vec![0u8; f.buffer_len().map_err(bad)?];
        f.emit(&mut out).map_err(bad)?;
        Ok(out)
    }

    /// Reads a `.rks` file, validated completely.
    pub fn read(path: &Path) -> Result<Shard, CliError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
        Shard::from_bytes(&bytes, name)
    }

    /// A shard from `.rks` bytes, validated completely; `name` names it in
    /// errors (a file, or a partition of a Dask collection).
    pub fn from_bytes(bytes: &[u8], name: String) -> Result<Shard, CliError> {
        let v = StatsView::new_checked(bytes).map_err(|e| CliError::input(format!("{name}: {e}")))?;
        let mut shard = Shard::new(v.shape(), v.seed(), name)?;
        shard.map = v.nystrom().map(|m| NystromSpec::from_view(&m)).transpose()?;
        shard.content = v.content();
        shard.totals = v.totals().iter().collect();
        shard.sealed = v.sealed().iter().collect();
        shard.sealed_qids = (0..v.n_sealed()).map(|j| v.sealed_qid(j)).collect();
        shard.qids = (0..v.n_queries()).map(|j| v.qid(j)).collect();
        shard.queries = v.queries().iter().collect();
        shard.reindex();
        Ok(shard)
    }

    /// Adds `other`'s statistics (both finished): refuses shards of another
    /// dimension, weighting, fold count or seed, naming both.
    pub fn merge(&mut self, other: &Shard) -> Result<(), CliError> {
        let (a, b) = (&self.shape, &other.shape);
        let clash = |what: &str, mine: String, theirs: String, hint: &str| {
            CliError::input(format!("{}: {what} {theirs}, but {} has {what} {mine}: {hint}", other.source, self.source))
        };
        let describe = |m: &Option<NystromSpec>| m.as_ref().map_or("linear features".to_string(), |s| s.describe());
        if self.content != other.content {
            let what = |c: StatsContent| match c {
                StatsContent::Pairs => "explicit preference pairs (`ranklet stats --pairs`)".to_string(),
                _ => "rows and their queries".to_string(),
            };
            return Err(clash(
                "statistics of",
                what(self.content),
                what(other.content),
                "pair statistics and row statistics are different objectives: merge shards of one kind",
            ));
        }
        if self.map.as_ref().map(|m| m.fingerprint) != other.map.as_ref().map(|m| m.fingerprint) {
            return Err(clash(
                "feature map",
                describe(&self.map),
                describe(&other.map),
                "compute every shard with the same landmarks (`ranklet stats --landmarks` one shard's file)",
            ));
        }
        if a.d != b.d {
            return Err(clash(
                "d =",
                a.d.to_string(),
                b.d.to_string(),
                "compute every shard with the same --num-features",
            ));
        }
        if a.weight != b.weight {
            let (x, y) = (weight_name(a.weight).to_string(), weight_name(b.weight).to_string());
            return Err(clash("--query-weight", x, y, "compute every shard with the same --query-weight"));
        }
        if a.folds != b.folds || self.seed != other.seed {
            let f = |s: &StatsShape, seed: u64| format!("{} (seed {seed})", s.folds);
            return Err(clash(
                "folds",
                f(a, self.seed),
                f(b, other.seed),
                "compute every shard with the same --cv and --seed",
            ));
        }
        let conflict = |x: &Shard, y: &Shard| {
            first_common(&x.sealed_qids, &y.qids).or_else(|| first_common(&x.sealed_qids, &y.sealed_qids))
        };
        for (sealer, q) in [(&self.source, conflict(self, other)), (&other.source, conflict(other, self))] {
            if let Some(q) = q {
                return Err(CliError::input(format!(
                    "qid {q} has rows in {} and in {}, but {sealer} sealed it as whole (its rows were inside that shard): \
                     make shards of consecutive lines of a file whose queries are on consecutive lines, or run \
                     `ranklet stats --keep-queries`",
                    self.source, other.source
                )));
            }
        }
        ls_stats::merge_totals(&self.shape, &mut self.totals, &other.totals)
            .map_err(|e| CliError::failure(e.to_string()))?;
        ls_stats::add_records(&mut self.sealed, &other.sealed).map_err(|e| CliError::failure(e.to_string()))?;
        let mut sq: Vec<u64> = self.sealed_qids.iter().chain(&other.sealed_qids).copied().collect();
        sq.sort_unstable();
        self.sealed_qids = sq;
        let mq = 2 * a.query_len();
        let (mut qids, mut recs) = (Vec::with_capacity(self.qids.len() + other.qids.len()), Vec::new());
        let (mut i, mut j) = (0, 0);
        while i < self.qids.len() || j < other.qids.len() {
            use std::cmp::Ordering;
            let order = match (self.qids.get(i), other.qids.get(j)) {
                (Some(x), Some(y)) => x.cmp(y),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            let start = recs.len();
            if order != Ordering::Greater {
                recs.extend_from_slice(&self.queries[i * mq..(i + 1) * mq]);
                qids.push(self.qids[i]);
                i += 1;
            }
            match order {
                Ordering::Equal => {
                    let src = &other.queries[j * mq..(j + 1) * mq];
                    ls_stats::merge_query(
                        &self.shape,
                        self.seed,
                        other.qids[j],
                        &mut recs[start..],
                        src,
                        &mut self.sealed,
                    )
                    .map_err(|e| CliError::failure(e.to_string()))?;
                    j += 1;
                }
                Ordering::Greater => {
                    recs.extend_from_slice(&other.queries[j * mq..(j + 1) * mq]);
                    qids.push(other.qids[j]);
                    j += 1;
                }
                Ordering::Less => {}
            }
        }
        self.qids = qids;
        self.queries = recs;
        self.reindex();
        self.source = format!("{} + {}", self.source, other.source);
        Ok(())
    }

    /// Every λ of `lambdas` for the full data and, with folds, the
    /// held-out objective of every fold (`K × λ`, row-major).
    pub fn solve<B: Backend>(
        &self,
        backend: &mut B,
        target: Target,
        lambdas: &[f64],
    ) -> Result<(Vec<f64>, Vec<f64>), CliError> {
        let s = &self.shape;
        let m = 2 * s.total_len();
        for (k, rec) in self.totals.chunks_exact(m).enumerate() {
            if s.folds > 1 && ls_stats::value(rec, N) < 1.0 {
                let by = match self.content {
                    StatsContent::Pairs => format!(
                        "folds of pairs are by the winner's query, or a hash of the pair without qids: {} pairs",
                        self.rows()
                    ),
                    _ => format!("folds are by query: {} queries", self.qids.len() + self.sealed_qids.len()),
                };
                return Err(CliError::input(format!(
                    "{}: fold {k} of {} has no rows ({by}); use fewer --cv folds",
                    self.source, s.folds
                )));
            }
        }
        let (nl, d) = (lambdas.len(), s.d);
        let mut w = vec![0.0; nl * d];
        let mut cv = vec![0.0; if s.folds > 1 { s.folds * nl } else { 0 }];
        let mut work = vec![0.0; ls_stats::solve_workspace_len(s)];
        ls_stats::solve(backend, &self.as_ref(), target, lambdas, &mut w, &mut cv, &mut [], &mut work).map_err(
            |e| match e {
                LearnError::Numerics(ranklet_core::LinalgError::NotPositiveDefinite { .. }) => {
                    CliError::failure(format!("{}: {e}", self.source))
                }
                _ => CliError::input(format!("{}: {e}", self.source)),
            },
        )?;
        Ok((w, cv))
    }
}

/// The first value two increasing lists share.
fn first_common(a: &[u64], b: &[u64]) -> Option<u64> {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => return Some(a[i]),
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    None
}

/// Which queries a shard may seal as its rows arrive: each query once its
/// run of consecutive rows ends, except a part's (a file's, a partition's)
/// first and last runs, which may go on in another shard; a query whose rows
/// resume after its run ended is an error (the caller names the row). With
/// `seal` false nothing is sealed and rows of a query may be anywhere.
pub struct RunSealer {
    seal: bool,
    /// First and last runs' qids, never sealed.
    keep_open: std::collections::HashSet<u64>,
    /// The qid of the current run (`None` at the start of a part).
    run: Option<u64>,
    /// Qids whose run has ended (sealed, or to be at the next `seal_ended`).
    closed: std::collections::HashSet<u64>,
    ended: Vec<u64>,
}

impl RunSealer {
    /// A sealer; `seal` false keeps every query's partial sums.
    pub fn new(seal: bool) -> RunSealer {
        RunSealer { seal, keep_open: Default::default(), run: None, closed: Default::default(), ended: Vec::new() }
    }

    /// Notes the next row's qid. `Err(qid)`: its rows resume after its run
    /// ended.
    pub fn row(&mut self, qid: u64) -> Result<(), u64> {
        if !self.seal || self.run == Some(qid) {
            return Ok(());
        }
        if self.closed.contains(&qid) {
            return Err(qid);
        }
        match self.run {
            None => {
                self.keep_open.insert(qid);
            }
            Some(r) if !self.keep_open.contains(&r) => {
                self.closed.insert(r);
                self.ended.push(r);
            }
            Some(_) => {}
        }
        self.run = Some(qid);
        Ok(())
    }

    /// Ends a part (a file, a partition): its last run stays open, and the
    /// next row starts a first run.
    pub fn end_part(&mut self) {
        if let Some(last) = self.run.take() {
            self.keep_open.insert(last);
        }
    }

    /// Seals in `shard` the queries whose runs ended since the last call
    /// (their rows must all have been added).
    pub fn seal_ended(&mut self, shard: &mut Shard) -> Result<(), LearnError> {
        shard.seal(&self.ended)?;
        self.ended.clear();
        Ok(())
    }
}

/// The statistics of one parsed chunk of a block, computed in parallel
/// with the block's other chunks ([`Acc::block`]) into records of its own,
/// then merged into the shard in file order.
struct Piece {
    /// A single-threaded backend of the streaming backend's kind.
    backend: HostBackend,
    /// The chunk's rows, dense; labels; qids; each row's record.
    x: Vec<f64>,
    y: Vec<f64>,
    q: Vec<u64>,
    slots: Vec<usize>,
    /// The chunk's qids in order of first appearance, and their records.
    qids: Vec<u64>,
    recs: Vec<f64>,
    /// The record of each qid of the chunk.
    index: HashMap<u64, usize>,
    /// The chunk's `K` total and sealed records, and [`ls_stats::accumulate`]'s scratch.
    totals: Vec<f64>,
    sealed: Vec<f64>,
    work: Vec<f64>,
    /// The first error, after the rows in `q` (which the caller still
    /// checks for a resumed query first, as row order demands).
    error: Option<CliError>,
}

impl Piece {
    fn new(backend: HostBackend) -> Piece {
        Piece {
            backend,
            x: Vec::new(),
            y: Vec::new(),
            q: Vec::new(),
            slots: Vec::new(),
            qids: Vec::new(),
            recs: Vec::new(),
            index: HashMap::new(),
            totals: Vec::new(),
            sealed: Vec::new(),
            work: Vec::new(),
            error: None,
        }
    }

    /// The statistics of the chunk `block` (raw features, densified to
    /// `shape.d`) in the piece's own records.
    fn compute(&mut self, block: &RowBlock<'_>, shape: &StatsShape, seed: u64, name: &str) {
        self.error = self.compute_inner(block, shape, seed, name).err();
    }

    fn compute_inner(
        &mut self,
        block: &RowBlock<'_>,
        shape: &StatsShape,
        seed: u64,
        name: &str,
    ) -> Result<(), CliError> {
        let d = shape.d;
        self.x.clear();
        self.y.clear();
        self.q.clear();
        self.slots.clear();
        self.qids.clear();
        self.index.clear();
        let mut last: Option<(u64, usize)> = None;
        for row in block.rows() {
            let at = self.x.len();
            self.x.resize(at + d, 0.0);
            let dst = &mut self.x[at..];
            for (&c, &v) in row.cols.iter().zip(row.vals) {
                let x = dst.get_mut(c as usize);
                *x.ok_or_else(|| CliError::input(format!("{name}: feature index {} beyond d = {d}", c + 1)))? = v;
            }
            self.y.push(row.label);
            let qid = row.query.and_then(|q| block.qid(q)).unwrap_or(0);
            let slot = match last {
                Some((l, s)) if l == qid => s,
                _ => {
                    let next = self.qids.len();
                    let s = *self.index.entry(qid).or_insert(next);
                    if s == next {
                        self.qids.push(qid);
                    }
                    s
                }
            };
            last = Some((qid, slot));
            self.q.push(qid);
            self.slots.push(slot);
        }
        self.recs.clear();
        self.recs.resize(self.qids.len() * 2 * shape.query_len(), 0.0);
        self.totals.clear();
        self.totals.resize(shape.totals_buffer_len(), 0.0);
        self.sealed.clear();
        self.sealed.resize(shape.totals_buffer_len(), 0.0);
        self.work.resize(ls_stats::accumulate_workspace_len(shape, self.y.len()), 0.0);
        ls_stats::accumulate(
            &mut self.backend,
            shape,
            seed,
            &self.x,
            &ls_stats::RowBlock { y: &self.y, qids: &self.q, slots: &self.slots },
            ls_stats::StatsMut { totals: &mut self.totals, sealed: &mut self.sealed, queries: &mut self.recs },
            &mut self.work,
        )
        .map_err(|e| CliError::input(format!("{name}: {e}")))
    }
}

/// Explicit preference pairs summed as the rows of a shard go by
/// ([`StatsContent::Pairs`]): rows are numbered from 0 across the shard's
/// data; a pair's difference row `x_winner − x_loser` (label: its
/// magnitude) is formed when its later row arrives, its earlier row kept
/// (sparse) until its last pair is done — so any pair within the shard is
/// summed exactly, with memory for the rows that still wait for a partner.
///
/// Each pair has a fold key ([`pair_key`]): its winner's qid, or without
/// one a hash of the pair's values; its fold is
/// [`ls_stats::fold_of`] that key, as a row's is of its qid.
pub struct PairSummer {
    pairs: Vec<Pair>,
    /// Pair indices by their later row (then file order).
    order: Vec<usize>,
    /// The next pair of `order` to complete.
    next: usize,
    /// Rows that are the earlier row of some pair: how many of those pairs
    /// are still to complete, and the later row of the last.
    wanted: HashMap<usize, (usize, usize)>,
    /// The earlier rows kept, sparse, with their qids.
    kept: HashMap<usize, KeptRow>,
    /// Rows seen so far.
    rows: usize,
    /// The pairs file, for messages.
    name: String,
    /// The difference rows formed since the last flush (dense), their
    /// labels and fold keys.
    diffs: Vec<f64>,
    targets: Vec<f64>,
    keys: Vec<u64>,
    /// The most rows kept at once, and the row at which that happens
    /// (known from the pairs before any row is read).
    peak: (usize, usize),
    /// Whether the kept rows' memory was checked ([`PairSummer::check_memory`]).
    checked: bool,
}

/// A row kept until its last pair is done: columns, values, qid.
type KeptRow = (Vec<u32>, Vec<f64>, Option<u64>);

/// The fold key of a pair (its fold is [`ls_stats::fold_of`] the key): the
/// winner row's qid when it has one — so a pair within a query is in that
/// query's fold, the fold its rows have in row statistics, and a query's
/// pairs are held out together —, else (rows without qids) the FNV-1a 64
/// hash of the pair's values: for the winner then the loser, each nonzero
/// feature as its 0-based index (`u32`) and value (`f64` bits), both
/// little-endian, the rows separated by the index `u32::MAX`, then the
/// magnitude's bits. Both depend on the pair alone, never on its shard or
/// its place in a pairs file, so the folds are the same however the data
/// is cut.
pub fn pair_key(winner: (&[u32], &[f64], Option<u64>), loser: (&[u32], &[f64]), magnitude: f64) -> u64 {
    if let Some(q) = winner.2 {
        return q;
    }
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for (i, (cols, vals)) in [(winner.0, winner.1), loser].into_iter().enumerate() {
        if i == 1 {
            eat(&u32::MAX.to_le_bytes());
        }
        for (&c, &v) in cols.iter().zip(vals).filter(|&(_, &v)| v != 0.0) {
            eat(&c.to_le_bytes());
            eat(&v.to_bits().to_le_bytes());
        }
    }
    eat(&magnitude.to_bits().to_le_bytes());
    h
}

impl PairSummer {
    /// The bytes each pair costs `ranklet stats --pairs`, the pair
    /// included, an upper bound of the structures [`PairSummer::new`]
    /// builds and of the memory they were measured to take.
    ///
    /// The structures at their peak: the pairs (24: two `usize` and an
    /// `f64`, held without spare capacity by [`read_pairs_checked`]),
    /// `order` (8: a `usize`), and `wanted`, at most one entry per pair
    /// (each pair's earlier row, all distinct in the worst case) in a hash
    /// table of 24-byte entries and 1 control byte per bucket, whose
    /// buckets are a power of two at most 7/8 full: right after it
    /// doubles, the old table (B/2 buckets) and the new one (B) are both
    /// held for 7/16·B entries, 1.5·25/(7/16) ≈ 85.7 bytes per entry. The
    /// other moments are lower: the stable sort of `order` borrows at most
    /// 8 bytes per pair (24 + 8 + 8), and the events (16 per entry,
    /// allocated exactly) come once the table has settled (≤ 2·25·8/7 ≈
    /// 57.2 per entry): 24 + 8 + 57.2 + 16 ≈ 105. So 24 + 8 + 85.7 ≈ 118.
    ///
    /// Measured (`docs/performance.md`, "Memory of `ranklet stats
    /// --pairs`"), the peak RSS above that of a one-pair run is 128 bytes
    /// per pair for 10⁶ pairs each with its own earlier row (the table's
    /// worst case) and 98 for 10⁶ pairs within queries of 10: above the
    /// structures' 118, as the allocator keeps some freed buffers resident.
    /// 160 covers both with a quarter to spare. The rows kept while they
    /// wait for a partner are checked apart, once the first block's row
    /// width is known ([`PairSummer::check_memory`]).
    pub const BYTES_PER_PAIR: usize = 160;

    /// Reads the pairs file `path` (rows numbered across the shard, checked
    /// against them once the rows have all streamed by) for
    /// [`PairSummer::new`], refusing it while it is read once its pairs
    /// would not fit in memory ([`PairSummer::BYTES_PER_PAIR`] each).
    ///
    /// # Errors
    /// The reader's errors; the refusal (exit 1), naming the file, the line
    /// reached, the pairs and bytes, the limit and the way out: more shards.
    pub fn read(path: &Path) -> Result<PairSummer, CliError> {
        let cost = PairCost {
            bytes: Self::BYTES_PER_PAIR,
            holds: "the pairs and their index by row (ranklet stats --pairs)",
            way_out: "cut the data and its pairs into more shards (ranklet stats per shard, merged by ranklet train \
                      --from-stats), each with the pairs of its own rows",
        };
        let pairs = read_pairs_checked(path, usize::MAX, &cost)?;
        Ok(PairSummer::new(pairs, path.display().to_string()))
    }

    /// Pairs (as `ranklet train --pairs` reads them) over the rows of a
    /// shard; `name` (the pairs file) names them in errors.
    pub fn new(pairs: Vec<Pair>, name: String) -> PairSummer {
        let later = |p: &Pair| p.winner.max(p.loser);
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.sort_by_key(|&k| (later(&pairs[k]), k));
        let mut wanted: HashMap<usize, (usize, usize)> = HashMap::new();
        for p in &pairs {
            let w = wanted.entry(p.winner.min(p.loser)).or_insert((0, 0));
            *w = (w.0 + 1, w.1.max(later(p)));
        }
        // Each earlier row is kept from its arrival until the later row of
        // its last pair (dropped there, before that row is kept itself):
        // events `2·row + 1` (kept) and `2·row` (dropped), in order
        // (saturated for rows past usize::MAX / 2, which no shard has: such
        // pairs are refused once the rows have streamed by).
        let ev = |row: usize, kept: bool| row.saturating_mul(2).saturating_add(usize::from(kept));
        let mut events: Vec<usize> = Vec::with_capacity(2 * wanted.len());
        events.extend(wanted.iter().flat_map(|(&e, &(_, l))| [ev(e, true), ev(l, false)]));
        events.sort_unstable();
        let (mut now, mut peak) = (0usize, (0usize, 0usize));
        for e in events {
            now = if e % 2 == 1 { now + 1 } else { now.saturating_sub(1) };
            if now > peak.0 {
                peak = (now, e / 2);
            }
        }
        PairSummer {
            pairs,
            order,
            next: 0,
            wanted,
            kept: HashMap::new(),
            rows: 0,
            name,
            diffs: Vec::new(),
            targets: Vec::new(),
            keys: Vec::new(),
            peak,
            checked: false,
        }
    }

    /// Refuses, before the rows are summed, pairs whose earlier rows would
    /// not fit in memory while they wait for their partners: the most rows
    /// kept at once ([`PairSummer::new`] counts them from the pairs) times
    /// a kept row's bytes — its nonzeros at 12 bytes (`u32` index, `f64`
    /// value), estimated by the first block's mean `nnz` per row, plus 64
    /// bytes of bookkeeping — against [`crate::mem::limit_bytes`]. Checked
    /// once, at the first block (`rows`, `nnz`).
    ///
    /// # Errors
    /// The refusal ([`crate::mem::check`]), naming the pairs file, the rows
    /// kept, the row where they peak, and the way out.
    fn check_memory(&mut self, rows: usize, nnz: usize) -> Result<(), CliError> {
        if self.checked || rows == 0 {
            return Ok(());
        }
        self.checked = true;
        let per_row = nnz.div_ceil(rows) * 12 + 64;
        crate::mem::check(
            &format!(
                "{}: up to {} rows waiting at once for the other row of a pair (the most at row {}, numbered \
                 across the shard's data; each is kept until its last pair is summed, ~{per_row} bytes each)",
                self.name, self.peak.0, self.peak.1
            ),
            Some(self.peak.0),
            per_row,
            "put the two rows of each pair near each other (pairs within queries, each query's rows on consecutive \
             lines), or cut the data into more shards, each with the pairs of its own rows",
        )
    }

    /// Takes the next row (0-based columns, increasing, all `< d`; its
    /// qid, if any): the difference rows (`d` features) of the pairs it
    /// completes are added to the pending ones, with their fold keys.
    fn row(&mut self, cols: &[u32], vals: &[f64], qid: Option<u64>, d: usize) {
        let i = self.rows;
        self.rows += 1;
        while let Some(&k) = self.order.get(self.next) {
            let p = self.pairs[k];
            if p.winner.max(p.loser) != i {
                break;
            }
            self.next += 1;
            let other = p.winner.min(p.loser);
            // `x_winner − x_loser`: this row's values with the sign of its
            // side, the kept row's with the other.
            let sign = if p.winner == i { 1.0 } else { -1.0 };
            let at = self.diffs.len();
            self.diffs.resize(at + d, 0.0);
            let dst = &mut self.diffs[at..];
            for (&c, &v) in cols.iter().zip(vals) {
                dst[c as usize] += sign * v;
            }
            let empty: KeptRow = (Vec::new(), Vec::new(), None);
            let (oc, ov, oq) = self.kept.get(&other).unwrap_or(&empty);
            for (&c, &v) in oc.iter().zip(ov) {
                dst[c as usize] -= sign * v;
            }
            let (mine, theirs) = ((cols, vals, qid), (&oc[..], &ov[..], *oq));
            let (w, l) = if p.winner == i { (mine, theirs) } else { (theirs, mine) };
            self.keys.push(pair_key(w, (l.0, l.1), p.magnitude));
            self.targets.push(p.magnitude);
            if let Some((n, _)) = self.wanted.get_mut(&other) {
                *n -= 1;
                if *n == 0 {
                    self.wanted.remove(&other);
                    self.kept.remove(&other);
                }
            }
        }
        if self.wanted.contains_key(&i) {
            self.kept.insert(i, (cols.to_vec(), vals.to_vec(), qid));
        }
    }

    /// Adds the pending difference rows to `shard`.
    fn flush<B: Backend>(&mut self, shard: &mut Shard, backend: &mut B) -> Result<(), LearnError> {
        if !self.targets.is_empty() {
            shard.add_difference_rows(backend, &self.diffs, &self.targets, &self.keys)?;
        }
        self.diffs.clear();
        self.targets.clear();
        self.keys.clear();
        Ok(())
    }

    /// After the shard's last row: every pair must have met both its rows.
    ///
    /// # Errors
    /// The first pair (in file order of its later row) with a row beyond
    /// the shard's, naming the pair and the shard.
    fn finish(&self, shard: &str) -> Result<(), CliError> {
        match self.order.get(self.next) {
            Some(&k) => {
                let p = self.pairs[k];
                Err(CliError::input(format!(
                    "{}: pair {} (winner {}, loser {}): row {} is not in shard {shard} ({} rows, numbered from 0 \
                     across its --data files): both rows of a pair must be in one shard; give each shard the pairs \
                     of its own rows, numbered within it",
                    self.name,
                    k + 1,
                    p.winner,
                    p.loser,
                    p.winner.max(p.loser),
                    self.rows
                )))
            }
            None => Ok(()),
        }
    }
}

/// The streaming state of [`Shard::from_svmlight`].
struct Acc<'b> {
    backend: &'b mut HostBackend,
    shard: Shard,
    fixed_d: Option<usize>,
    xb: Vec<f64>,
    yb: Vec<f64>,
    qb: Vec<u64>,
    /// A sparse block's row pointer and columns (its values in `xb`).
    ptr: Vec<usize>,
    cols: Vec<u32>,
    /// One per chunk of a block, reused from block to block.
    pieces: Vec<Piece>,
    /// Explicit pairs instead of rows and queries.
    pairs: Option<PairSummer>,
    error: Option<CliError>,
    /// Each file is a part: its first and last runs stay open.
    sealer: RunSealer,
}

/// The error of a query whose rows resume after its run ended.
fn resumed(name: &str, qid: u64) -> CliError {
    CliError::input(format!(
        "{name}: rows of qid {qid} resume after other queries' rows; statistics seal each query \
         when its lines end: put each query's rows on consecutive lines, or give --keep-queries"
    ))
}

impl Acc<'_> {
    fn block(&mut self, block: &RowBlock<'_>, name: &str) -> Result<(), CliError> {
        let d = self.fixed_d.unwrap_or_else(|| self.shard.shape.d.max(block.max_index()));
        if self.shard.map.is_none() {
            self.shard.widen(d)?;
        }
        // Sparse blocks of raw features go in as CSR (no densifying): under
        // a quarter of the entries present, where Σ nnz²/2 per row beats
        // the dense syrk's d² per row.
        let (rows, nnz) = block.rows().fold((0usize, 0usize), |(r, z), row| (r + 1, z + row.cols.len()));
        let sparse = self.shard.map.is_none() && nnz.saturating_mul(4) < rows.saturating_mul(d);
        if let Some(ps) = &mut self.pairs {
            ps.check_memory(rows, nnz)?;
            for row in block.rows() {
                if let Some(&c) = row.cols.last().filter(|&&c| c as usize >= d) {
                    return Err(CliError::input(format!("{name}: feature index {} beyond d = {d}", c + 1)));
                }
                ps.row(row.cols, row.vals, row.query.and_then(|q| block.qid(q)), d);
            }
            return ps.flush(&mut self.shard, self.backend).map_err(|e| CliError::input(format!("{name}: {e}")));
        }
        if self.shard.map.is_none() && !sparse {
            return self.dense_block(block, name);
        }
        self.xb.clear();
        self.yb.clear();
        self.qb.clear();
        self.ptr.clear();
        self.ptr.push(0);
        self.cols.clear();
        for row in block.rows() {
            if sparse {
                if let Some(&c) = row.cols.last().filter(|&&c| c as usize >= d) {
                    return Err(CliError::input(format!("{name}: feature index {} beyond d = {d}", c + 1)));
                }
                self.cols.extend_from_slice(row.cols);
                self.xb.extend_from_slice(row.vals);
                self.ptr.push(self.cols.len());
            } else {
                let at = self.xb.len();
                self.xb.resize(at + d, 0.0);
                for (&c, &v) in row.cols.iter().zip(row.vals) {
                    let x = self.xb.get_mut(at + c as usize).filter(|_| (c as usize) < d);
                    *x.ok_or_else(|| CliError::input(format!("{name}: feature index {} beyond d = {d}", c + 1)))? = v;
                }
            }
            self.yb.push(row.label);
            let qid = row.query.and_then(|q| block.qid(q)).unwrap_or(0);
            self.qb.push(qid);
            self.sealer.row(qid).map_err(|qid| resumed(name, qid))?;
        }
        let err = |e: LearnError| CliError::input(format!("{name}: {e}"));
        if sparse {
            self.shard
                .add_sparse_rows(self.backend, &self.ptr, &self.cols, &self.xb, &self.yb, &self.qb)
                .map_err(err)?;
        } else {
            self.shard.add_rows(self.backend, &self.xb, &self.yb, &self.qb).map_err(err)?;
        }
        self.sealer.seal_ended(&mut self.shard).map_err(err)?;
        Ok(())
    }

    /// A dense block of raw features: each chunk's statistics in parallel
    /// (densified, summed, one syrk per fold, each on one thread), then
    /// merged into the shard in file order, and the queries whose runs
    /// ended sealed. Chunks are cut by the read's fixed block and chunk
    /// sizes and merged in order, so the shard's bytes do not depend on the
    /// number of threads.
    fn dense_block(&mut self, block: &RowBlock<'_>, name: &str) -> Result<(), CliError> {
        let pieces = block.pieces();
        while self.pieces.len() < pieces.len() {
            self.pieces.push(Piece::new(self.backend.sequential()));
        }
        let (shape, seed) = (self.shard.shape, self.shard.seed);
        self.pieces[..pieces.len()].par_iter_mut().zip(&pieces).for_each(|(p, b)| p.compute(b, &shape, seed, name));
        let err = |e: LearnError| CliError::input(format!("{name}: {e}"));
        for p in &mut self.pieces[..pieces.len()] {
            for &qid in &p.q {
                self.sealer.row(qid).map_err(|qid| resumed(name, qid))?;
            }
            if let Some(e) = p.error.take() {
                return Err(e);
            }
            self.shard.merge_queries(&p.qids, &p.recs, &p.sealed).map_err(err)?;
        }
        // The chunks' totals merged in chunk order.
        for p in &self.pieces[..pieces.len()] {
            self.shard.merge_totals(&p.totals).map_err(err)?;
        }
        self.sealer.seal_ended(&mut self.shard).map_err(err)
    }
}

impl Shard {
    /// The statistics of the rows of SVMlight files, streamed block by
    /// block (each file's reader checks and errors, file and line, as
    /// `ranklet train --data` reports them).
    pub fn from_svmlight(
        backend: &mut HostBackend,
        paths: &[PathBuf],
        opts: &SvmlightOptions,
        weight: QueryWeight,
        folds: usize,
        seed: u64,
        keep_queries: bool,
    ) -> Result<Shard, CliError> {
        Self::from_svmlight_mapped(backend, paths, opts, weight, folds, seed, keep_queries, None, None)
    }

    /// [`Shard::from_svmlight`] through a Nyström feature map: every row
    /// (of the map's input dimension; a larger feature index is refused
    /// with its file and block) mapped to the map's `m` features.
    #[allow(clippy::too_many_arguments)]
    pub fn from_svmlight_mapped(
        backend: &mut HostBackend,
        paths: &[PathBuf],
        opts: &SvmlightOptions,
        weight: QueryWeight,
        folds: usize,
        seed: u64,
        keep_queries: bool,
        map: Option<NystromSpec>,
        pairs: Option<PairSummer>,
    ) -> Result<Shard, CliError> {
        if pairs.is_some() && (map.is_some() || keep_queries) {
            return Err(CliError::input(
                "--pairs: statistics of explicit pairs are of the raw features, without --keep-queries",
            ));
        }
        let source = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(",");
        let d0 = map.as_ref().map_or(opts.num_features.unwrap_or(1).max(1), NystromSpec::m);
        let fixed_d = map.as_ref().map_or(opts.num_features, |m| Some(m.input_dim));
        let mut shard = Shard::new(StatsShape { d: d0, folds, weight }, seed, source)?;
        shard.map = map;
        if pairs.is_some() {
            shard.content = StatsContent::Pairs;
        }
        let mut acc = Acc {
            backend,
            shard,
            fixed_d,
            xb: Vec::new(),
            yb: Vec::new(),
            qb: Vec::new(),
            ptr: Vec::new(),
            cols: Vec::new(),
            pieces: Vec::new(),
            pairs,
            error: None,
            sealer: RunSealer::new(!keep_queries),
        };
        if opts.num_features == Some(0) {
            return Err(CliError::input("--num-features must be at least 1"));
        }
        for path in paths {
            let name = path.display().to_string();
            let summary = stream_blocks(path, opts, STATS_BLOCK_BYTES, CHUNK_BYTES, |b| match acc.block(b, &name) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    acc.error = Some(e);
                    ControlFlow::Break(())
                }
            })?;
            if let Some(e) = acc.error.take() {
                return Err(e);
            }
            // A file's first and last runs stay open: they may go on in
            // another shard.
            acc.sealer.end_part();
            if summary.is_none() {
                return Err(CliError::failure(format!("{name}: read stopped")));
            }
        }
        let mut shard = acc.shard;
        if let Some(ps) = &acc.pairs {
            ps.finish(&shard.source)?;
        }
        shard.finish();
        Ok(shard)
    }
}

/// The `u64` qid of a CSV query id: the number itself when it is one (as
/// SVMlight's `qid:`), else the FNV-1a 64-bit hash of its text, so that the
/// same id gets the same qid in every shard.
pub fn csv_qid(name: &str) -> u64 {
    name.parse::<u64>().unwrap_or_else(|_| ranklet_core::format::stats::fnv1a64(name.as_bytes()))
}

impl Shard {
    /// The statistics of a data set read whole (CSV), in blocks of rows in
    /// file order, sealing as [`Shard::from_svmlight_mapped`] does: each
    /// query once its run of lines ends, except the file's first and last
    /// runs (and none with `keep_queries`); a query resuming after its run
    /// ended is refused (file and line) unless `keep_queries`.
    #[allow(clippy::too_many_arguments)]
    pub fn from_dataset<B: Backend>(
        backend: &mut B,
        ds: &crate::data::Dataset,
        name: &str,
        weight: QueryWeight,
        folds: usize,
        seed: u64,
        keep_queries: bool,
        map: Option<NystromSpec>,
    ) -> Result<Shard, CliError> {
        let p = ds.n_features().max(1);
        if let Some(m) = map.as_ref().filter(|m| m.input_dim != p) {
            return Err(CliError::input(format!(
                "{name}: {p} feature columns, but the landmarks have {} features",
                m.input_dim
            )));
        }
        let d0 = map.as_ref().map_or(p, NystromSpec::m);
        let mut shard = Shard::new(StatsShape { d: d0, folds, weight }, seed, name.to_string())?;
        shard.map = map;
        let n = ds.n_rows();
        let qid = |i: usize| ds.qid_of_row(i).map_or(0, csv_qid);
        let mut sealer = RunSealer::new(!keep_queries);
        const BLOCK: usize = 4096;
        let (mut xb, mut yb, mut qb) = (Vec::new(), Vec::new(), Vec::new());
        let mut start = 0;
        while start < n {
            let end = (start + BLOCK).min(n);
            xb.clear();
            xb.resize((end - start) * p, 0.0);
            yb.clear();
            qb.clear();
            for i in start..end {
                let (c, v) = ds.row(i);
                for (&c, &v) in c.iter().zip(v) {
                    xb[(i - start) * p + c as usize] = v;
                }
                yb.push(ds.labels()[i]);
                qb.push(qid(i));
                sealer.row(qid(i)).map_err(|q| {
                    CliError::input(format!(
                        "{name}:{}: rows of qid {q} resume after other queries' rows; statistics seal each query \
                         when its lines end: put each query's rows on consecutive lines, or give --keep-queries",
                        ds.source_line(i)
                    ))
                })?;
            }
            let err = |e: LearnError| CliError::input(format!("{name}: {e}"));
            shard.add_rows(backend, &xb, &yb, &qb).map_err(err)?;
            sealer.seal_ended(&mut shard).map_err(err)?;
            start = end;
        }
        shard.finish();
        Ok(shard)
    }

    /// Pair statistics ([`StatsContent::Pairs`]) of data sets read whole
    /// (CSV), their rows numbered from 0 across them in order, as
    /// [`Shard::from_svmlight_mapped`] sums them from SVMlight files; with
    /// `folds > 1`, each pair in the fold of its [`pair_key`] (a CSV qid
    /// counts as [`csv_qid`]).
    ///
    /// # Errors
    /// A pair with a row beyond the data sets' ([`PairSummer`]'s error);
    /// statistics too large for memory.
    #[allow(clippy::too_many_arguments)]
    pub fn pairs_from_datasets<B: Backend>(
        backend: &mut B,
        sets: &[&crate::data::Dataset],
        name: &str,
        weight: QueryWeight,
        folds: usize,
        seed: u64,
        mut pairs: PairSummer,
    ) -> Result<Shard, CliError> {
        let d = sets.iter().map(|ds| ds.n_features()).max().unwrap_or(1).max(1);
        let mut shard = Shard::new(StatsShape { d, folds, weight }, seed, name.to_string())?;
        shard.content = StatsContent::Pairs;
        let err = |e: LearnError| CliError::input(format!("{name}: {e}"));
        if let Some(ds) = sets.first() {
            let rows = ds.n_rows().min(4096);
            pairs.check_memory(rows, (0..rows).map(|i| ds.row(i).0.len()).sum())?;
        }
        for ds in sets {
            for i in 0..ds.n_rows() {
                let (c, v) = ds.row(i);
                pairs.row(c, v, ds.qid_of_row(i).map(csv_qid), d);
                if pairs.targets.len() >= 4096 {
                    pairs.flush(&mut shard, backend).map_err(err)?;
                }
            }
        }
        pairs.flush(&mut shard, backend).map_err(err)?;
        pairs.finish(name)?;
        shard.finish();
        Ok(shard)
    }
}

/// A cross-validation table: the fold count and, per λ, the held-out
/// objective of every fold.
pub type CvTable = (usize, Vec<(f64, Vec<f64>)>);

/// A model from statistics files: what `ranklet train --from-stats`
/// writes and prints.
pub struct FromStats {
    /// The weights at the chosen λ.
    pub w: Vec<f64>,
    /// The chosen λ, and its index in the grid.
    pub lambda: f64,
    /// The index of `lambda` in the grid.
    pub best: usize,
    /// Dimension, rows, queries of the merged statistics.
    pub d: usize,
    /// Rows.
    pub rows: usize,
    /// Distinct qids.
    pub queries: usize,
    /// With folds: the grid and each λ's held-out objective per fold.
    pub cv: Option<CvTable>,
    /// Statistics of explicit pairs (folds by the winner's query, the
    /// objective per pair).
    pub pairs: bool,
}

impl FromStats {
    /// How the folds were drawn, and what the objective is per.
    fn scheme(&self) -> (&'static str, &'static str) {
        if self.pairs {
            ("by the winner's query hash (pair statistics)", "(m − f(x_w) + f(x_l))² per pair")
        } else {
            ("by query hash (statistics)", "(s−Xw)ᵀL(s−Xw) per row")
        }
    }

    fn mean_std(v: &[f64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        (mean, (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt())
    }

    /// The metadata lines of the cross-validation (empty without).
    pub fn cv_meta(&self) -> String {
        let Some((k, rows)) = &self.cv else { return String::new() };
        let mut m = format!("cv={k}-fold {}\ncv_metric=objective\n", self.scheme().0);
        for (i, (l, v)) in rows.iter().enumerate() {
            let (mean, std) = Self::mean_std(v);
            m.push_str(&format!("cv.{i}=lambda={l} mean={mean} std={std}\n"));
        }
        m
    }

    /// The cross-validation table the binary prints to stdout, one line
    /// each (empty without).
    pub fn cv_table(&self) -> String {
        let Some((k, rows)) = &self.cv else { return String::new() };
        let (by, per) = self.scheme();
        let mut t = format!("# cross-validation: {k}-fold {by}, metric objective (held-out {per})\n");
        t.push_str("lambda\tmean\tstd\n");
        for (l, v) in rows {
            let (mean, std) = Self::mean_std(v);
            t.push_str(&format!("{l}\t{mean:.6}\t{std:.6}\n"));
        }
        t
    }
}

/// Reads statistics files and merges them (each refused, naming both
/// files, if it does not describe the same problem as the others).
pub fn merge_files(files: &[PathBuf]) -> Result<Shard, CliError> {
    let mut shards = files.iter().map(|f| Shard::read(f));
    let mut all = shards.next().ok_or_else(|| CliError::input("--from-stats needs at least one file"))??;
    for s in shards {
        all.merge(&s?)?;
    }
    Ok(all)
}

/// Solves every λ of merged linear statistics (and, with `cv`, every
/// fold), and picks the λ of least mean held-out objective. What
/// `ranklet train --from-stats` and the Python extension's Dask layer fit.
///
/// `weight` must be the statistics' query weighting and `cv` (if given)
/// their fold count: each refused otherwise, naming both.
///
/// # Errors
/// Nyström statistics, a weighting or fold count other than the
/// statistics', a grid without `cv`, an empty grid, no rows
/// ([`CliError::input`]); a singular system ([`CliError::failure`]).
pub fn fit_merged<B: Backend>(
    backend: &mut B,
    all: &Shard,
    target: Target,
    weight: QueryWeight,
    lambdas: &[f64],
    cv: Option<usize>,
) -> Result<FromStats, CliError> {
    if let Some(m) = &all.map {
        return Err(CliError::input(format!(
            "{}: Nyström statistics ({}): they train kernel models (ranklet train --from-stats fits them), not linear weights",
            all.source,
            m.describe()
        )));
    }
    let s = all.shape;
    let pairs = all.content == StatsContent::Pairs;
    if pairs && target != Target::RankRls {
        return Err(CliError::input(format!(
            "{}: statistics of explicit preference pairs (`ranklet stats --pairs`) train --algo rankrls",
            all.source
        )));
    }
    if !pairs && target == Target::RankRls && s.weight != weight {
        return Err(CliError::input(format!(
            "{}: statistics weighted --query-weight {}, but --query-weight {} was asked",
            all.source,
            weight_name(s.weight),
            weight_name(weight)
        )));
    }
    if let Some(k) = cv.filter(|&k| k != s.folds) {
        return Err(CliError::input(format!(
            "--cv {k}: the statistics of {} have {} fold(s) (set by `ranklet stats --cv`)",
            all.source, s.folds
        )));
    }
    if lambdas.is_empty() {
        return Err(CliError::input("no λ to fit"));
    }
    if lambdas.len() > 1 && cv.is_none() {
        return Err(CliError::input("a grid of values (comma list) needs --cv K to choose among them"));
    }
    if all.rows() == 0 {
        return Err(CliError::input(format!("{}: the statistics hold no rows", all.source)));
    }
    // Pairs: the totals are those of the difference rows, whose least
    // squares (L = I on them) is RankRLS on the pairs.
    let (w, table) = all.solve(backend, if pairs { Target::Rls } else { target }, lambdas)?;
    let (nl, d) = (lambdas.len(), s.d);
    let (best, cv) = match cv {
        Some(k) => {
            let rows: Vec<(f64, Vec<f64>)> =
                lambdas.iter().enumerate().map(|(li, &l)| (l, (0..k).map(|f| table[f * nl + li]).collect())).collect();
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let best = (0..nl).min_by(|&a, &b| mean(&rows[a].1).total_cmp(&mean(&rows[b].1))).unwrap_or(0);
            (best, Some((k, rows)))
        }
        None => (0, None),
    };
    Ok(FromStats {
        w: w[best * d..(best + 1) * d].to_vec(),
        lambda: lambdas[best],
        best,
        d,
        rows: all.rows(),
        queries: all.qids.len() + all.sealed_qids.len(),
        cv,
        pairs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::svmlight::read_svmlight;
    use crate::hostbackend::BackendChoice;

    /// A dense LETOR-like file of about 3.4 MB (several 1 MB chunks):
    /// 2000 rows × 136 features, queries of 1 to 15 rows, 6 decimals.
    fn big_file(dir: &Path) -> PathBuf {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut text = String::new();
        let (mut row, mut q) = (0, 0u64);
        while row < 2000 {
            q += 1;
            for _ in 0..1 + next() % 15 {
                text.push_str(&format!("{} qid:{q}", next() % 5));
                for j in 1..=136 {
                    text.push_str(&format!(" {j}:{:.6}", (next() % 2_000_000) as f64 / 1e6));
                }
                text.push('\n');
                row += 1;
            }
        }
        let path = dir.join("big.light");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The streamed statistics of a file of several chunks (summed in
    /// parallel, merged in order) are the same bytes on 1, 2 and 3
    /// threads, with and without folds, and equal the statistics of the
    /// same rows added in blocks of 4096 rows in memory to 1e-13 relative
    /// (rounding only: other blocks, other plain sums).
    #[test]
    fn streamed_statistics_do_not_depend_on_threads() {
        let dir = std::env::temp_dir().join(format!("ranklet-stats-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = big_file(&dir);
        let opts = SvmlightOptions::default();
        for folds in [1, 3] {
            let run = |t: usize| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
                pool.install(|| {
                    let mut be = HostBackend::new(BackendChoice::Faer);
                    let s = Shard::from_svmlight_mapped(
                        &mut be,
                        std::slice::from_ref(&path),
                        &opts,
                        QueryWeight::Equal,
                        folds,
                        5,
                        false,
                        None,
                        None,
                    )
                    .unwrap();
                    (s.to_bytes().unwrap(), s)
                })
            };
            let (one, shard) = run(1);
            assert_eq!(one, run(2).0, "folds {folds}: 1 vs 2 threads");
            assert_eq!(one, run(3).0, "folds {folds}: 1 vs 3 threads");
            let ds = read_svmlight(&path, &opts).unwrap();
            let mut be = HostBackend::new(BackendChoice::Faer);
            let name = path.display().to_string();
            let want = Shard::from_dataset(&mut be, &ds, &name, QueryWeight::Equal, folds, 5, false, None).unwrap();
            assert_eq!((shard.qids.clone(), shard.sealed_qids.clone()), (want.qids.clone(), want.sealed_qids.clone()));
            let close = |a: &[f64], b: &[f64], m: usize, what: &str| {
                let (va, vb): (Vec<f64>, Vec<f64>) = a
                    .chunks_exact(m)
                    .zip(b.chunks_exact(m))
                    .flat_map(|(x, y)| (0..m / 2).map(move |i| (ls_stats::value(x, i), ls_stats::value(y, i))))
                    .unzip();
                let scale = vb.iter().fold(0.0f64, |s, v| s.max(v.abs()));
                for (x, y) in va.iter().zip(&vb) {
                    assert!((x - y).abs() <= 1e-13 * scale, "{what}: {x} vs {y}");
                }
            };
            let mt = 2 * shard.shape.total_len();
            close(&shard.totals, &want.totals, mt, "totals");
            close(&shard.sealed, &want.sealed, mt, "sealed");
            close(&shard.queries, &want.queries, 2 * shard.shape.query_len(), "queries");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Pair statistics are the RLS statistics of the difference rows: a
    /// pair's later row may come many rows after its earlier one, either
    /// may be the winner, and a pair past the shard's rows is refused
    /// naming the pair and the shard.
    #[test]
    fn pair_statistics_are_those_of_the_difference_rows() {
        let text = "1 1:1 3:2\n0 2:1\n2 1:0.5 2:0.5 3:0.5\n0 3:4\n";
        let rows: [[f64; 3]; 4] = [[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.5], [0.0, 0.0, 4.0]];
        let pairs = vec![
            Pair { winner: 3, loser: 0, magnitude: 1.0 },
            Pair { winner: 1, loser: 2, magnitude: 0.5 },
            Pair { winner: 0, loser: 1, magnitude: 0.0 },
            Pair { winner: 2, loser: 0, magnitude: 2.0 },
        ];
        let ds = crate::data::svmlight::parse_svmlight_str(text, "t", &SvmlightOptions::default()).unwrap();
        let mut be = HostBackend::new(BackendChoice::Portable);
        let summer = PairSummer::new(pairs.clone(), "p".into());
        // Rows 0 (until row 3) and 1 (until row 2) wait at once from row 1.
        assert_eq!(summer.peak, (2, 1));
        let s = Shard::pairs_from_datasets(&mut be, &[&ds], "t", QueryWeight::Equal, 1, 1, summer).unwrap();
        assert_eq!((s.content, s.qids.len(), s.sealed_qids.len()), (StatsContent::Pairs, 0, 0));
        let (mut sxx, mut sxy, mut syy) = ([[0.0; 3]; 3], [0.0; 3], 0.0);
        for p in &pairs {
            let dx: Vec<f64> = (0..3).map(|j| rows[p.winner][j] - rows[p.loser][j]).collect();
            for a in 0..3 {
                sxy[a] += dx[a] * p.magnitude;
                for b in 0..3 {
                    sxx[a][b] += dx[a] * dx[b];
                }
            }
            syy += p.magnitude * p.magnitude;
        }
        let sh = s.shape;
        // The record holds means and co-moments: the raw sums are
        // `M + n·x̄x̄ᵀ` (and alike), to rounding.
        let v = |i: usize| ls_stats::value(&s.totals, i);
        let n = v(N);
        assert_eq!(n, 4.0);
        let close = |got: f64, want: f64| assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{got} {want}");
        close(v(sh.syy()) + n * v(ls_stats::SY) * v(ls_stats::SY), syy);
        for (a, (row, &xy)) in sxx.iter().zip(&sxy).enumerate() {
            close(v(sh.sxy() + a) + n * v(ls_stats::SX + a) * v(ls_stats::SY), xy);
            for (b, &xx) in row.iter().enumerate().take(a + 1) {
                close(v(sh.sxx() + a * (a + 1) / 2 + b) + n * v(ls_stats::SX + a) * v(ls_stats::SX + b), xx);
            }
        }
        // Bytes round trip keeps the kind; a row shard does not merge in.
        let back = Shard::from_bytes(&s.to_bytes().unwrap(), "t.rks".into()).unwrap();
        assert_eq!(back.content, StatsContent::Pairs);
        let rows_shard = Shard::from_dataset(&mut be, &ds, "r", QueryWeight::Equal, 1, 1, false, None).unwrap();
        let mut m = back.clone();
        let e = m.merge(&rows_shard).unwrap_err().to_string();
        assert!(e.contains("pairs") && e.contains("r"), "{e}");
        // A pair beyond the shard's rows.
        let far = PairSummer::new(vec![Pair { winner: 1, loser: 7, magnitude: 1.0 }], "p.pairs".into());
        let e = Shard::pairs_from_datasets(&mut be, &[&ds], "t.light", QueryWeight::Equal, 1, 1, far).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("p.pairs") && e.contains("pair 1") && e.contains("row 7") && e.contains("t.light"), "{e}");
    }
}
