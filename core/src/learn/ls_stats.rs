//! Linear RLS / RankRLS from **additive statistics** of row blocks: the
//! primal normal equations of 000 eq. 5, `(XᵀLX + λI)·w = XᵀLs`, need only
//! sums over rows, so blocks of rows — parts of a file, partitions on other
//! machines — are summarised independently, the summaries merged in any
//! order, and the system solved for a whole λ grid and every
//! cross-validation fold from them. A query split across blocks contributes
//! exactly as if it were whole once the partials of its qid are merged.
//!
//! # The statistics
//!
//! Per fold `k` (a query's fold is [`fold_of`] its qid), a **total record**
//! over the fold's rows: `n`, the means `ȳ`, `x̄` (`d`), and the
//! co-moments `Σ(y−ȳ)²`, `Σ(x−x̄)(y−ȳ)` (`d`) and `M = Σ(x−x̄)(x−x̄)ᵀ`
//! (lower triangle, packed by rows: entry `(i, j)`, `j ≤ i`, at
//! `i(i+1)/2 + j`). Per query, a **query record** with its partials: `n_q`,
//! `ȳ_q`, `x̄_q` for `--query-weight equal`; the whole total layout for
//! `--query-weight pairs`. Per fold a **sealed record** (total layout, zero
//! means) holding the RankRLS terms already final: for `equal` the
//! within-query co-moments of every query of the fold, for `pairs` the
//! `l·M_q` of sealed queries. The layouts are [`StatsShape::total_len`]
//! and [`StatsShape::query_len`] values long. Records of disjoint rows
//! merge by Chan, Golub and LeVeque's pairwise update ([`merge_record`]),
//! whose added terms are positive semi-definite: no digits cancel,
//! whatever the features' offsets and scales.
//!
//! # The systems (000 eq. 5)
//!
//! With `L = ⊕_q L_q` block diagonal over the queries,
//! `XᵀLX = Σ_q X_qᵀL_qX_q`, `XᵀLs = Σ_q X_qᵀL_qs_q`, `sᵀLs = Σ_q s_qᵀL_qs_q`,
//! and for one query of `l = n_q` rows:
//!
//! - `equal`, `L_q = I − 11ᵀ/l`: `X_qᵀL_qX_q = M_q`, `X_qᵀL_qs_q` and
//!   `s_qᵀL_qs_q` the query's other co-moments. Each run of a query's rows
//!   adds its co-moments about the run's means to the fold's sealed
//!   record, and each merge of two partials of the query adds its
//!   `f·δδᵀ` there ([`merge_query`]), so the sealed record is
//!   `Σ_q X_qᵀL_qX_q` exactly and query records need only `n_q`, `ȳ_q`,
//!   `x̄_q` (for later merges).
//! - `pairs`, `L_q = l·I − 11ᵀ`: `X_qᵀL_qX_q = l·M_q`, and the same for
//!   `Xᵀs`, `sᵀs`. The factor `l` is known only once every part of the
//!   query has been merged, so the query keeps its own co-moments
//!   (`O(d²)` per query) until it is sealed or solved.
//! - RLS, `L = I`: `XᵀX = M + n·x̄x̄ᵀ` (and alike) from the fold totals.
//!
//! Fold `k`'s training system is the sum of the other folds' systems
//! (never the total minus fold `k`'s, which would cancel digits; the
//! held-out fold is whole queries, so its `L` is a block of `L`); its
//! held-out objective `(s − Xw)ᵀL_k(s − Xw) = sᵀL_ks − 2wᵀXᵀL_ks + wᵀXᵀL_kXw`
//! comes from fold `k`'s own system, without a second pass.
//!
//! # Sealed queries
//!
//! A query known to be whole (its rows all summed and merged) can be
//! **sealed** ([`seal`]): its terms above go into its fold's sealed record
//! and its own record is dropped, so statistics of many whole queries stay
//! `O(K·d²)` instead of growing with the number of queries. A sealed qid met
//! again cannot be merged exactly; callers keep the sealed ids to refuse
//! it.
//!
//! # Rounding
//!
//! Every record is stored as values and their **Neumaier compensations**
//! (`2·len` elements: the values, then the compensations; the value is
//! `value + compensation`). A block's rows of one fold are summarised
//! exactly (means with one correction pass, then one syrk of the centred
//! rows) and merged with compensation, and so is each run of a query's
//! consecutive rows into its query record; merging is associative and
//! order-independent up to rounding (≈ one rounding of the result, not one
//! per block).
//!
//! # Solving
//!
//! [`solve`] forms each training system once and solves it for every λ
//! of the grid by [`solve_normal`]'s rule (equilibrated Cholesky; with
//! `λ > 0` never refused for rounding; constant or collinear features
//! named at `λ = 0`).

use super::normal::{normal_workspace_len, solve_normal};
use super::{check_lambda, LearnError};
use crate::backend::Backend;
pub use crate::format::stats::{value, StatsRef, StatsShape, N, SX, SY};
use crate::graph::QueryWeight;
use crate::{scratch, LinalgError, MatMut, MatRef};

/// The fold of a query: `splitmix64(qid ^ seed) mod K`, where splitmix64 is
/// Steele, Lea & Flood's finaliser applied once to `z + 0x9E3779B97F4A7C15`
/// (the first output of a splitmix64 stream seeded with `qid ^ seed`).
/// Every row of a query lands in the same fold, whichever block it is in.
pub fn fold_of(qid: u64, seed: u64, folds: usize) -> usize {
    let mut z = (qid ^ seed).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z % folds.max(1) as u64) as usize
}

/// Adds `v` to the compensated sum `(s, c)` (Neumaier's variant of Kahan
/// summation: the rounding error of each addition goes into `c`).
#[inline]
fn add_compensated(s: &mut f64, c: &mut f64, v: f64) {
    let t = *s + v;
    *c += if s.abs() >= v.abs() { (*s - t) + v } else { (v - t) + *s };
    *s = t;
}

/// Adds plain values `v` (`m`) to the record `dst` (`2m`: sums, then
/// compensations).
pub fn add_values(dst: &mut [f64], v: &[f64]) -> Result<(), LinalgError> {
    let m = v.len();
    if dst.len() != 2 * m {
        return Err(LinalgError::DimensionMismatch);
    }
    let (s, c) = dst.split_at_mut(m);
    for ((s, c), &v) in s.iter_mut().zip(c.iter_mut()).zip(v) {
        add_compensated(s, c, v);
    }
    Ok(())
}

/// Adds the record of sums `src` into `dst` (both `2m`: sums, then
/// compensations; the sealed records, which are sums): `dst`'s sums take
/// `src`'s with compensation, the compensations add. Total and query
/// records, which hold means and co-moments, merge by [`merge_totals`] and
/// [`merge_query`].
pub fn add_records(dst: &mut [f64], src: &[f64]) -> Result<(), LinalgError> {
    if dst.len() != src.len() || dst.len() % 2 != 0 {
        return Err(LinalgError::DimensionMismatch);
    }
    let m = dst.len() / 2;
    let (s, c) = dst.split_at_mut(m);
    for ((s, c), (&vs, &vc)) in s.iter_mut().zip(c.iter_mut()).zip(src[..m].iter().zip(&src[m..])) {
        add_compensated(s, c, vs);
        *c += vc;
    }
    Ok(())
}

/// Copies a record (`2·len` values: sums, then compensations) of `from`'s
/// layout into `to`'s, for more features (`to.d ≥ from.d`): the features
/// added were zero in every row summed, so their sums are zero. `total`
/// picks the total layout, else the query layout.
pub fn widen_record(
    from: &StatsShape,
    to: &StatsShape,
    total: bool,
    src: &[f64],
    dst: &mut [f64],
) -> Result<(), LinalgError> {
    let (d0, d1) = (from.d, to.d);
    let (m0, m1) = if total { (from.total_len(), to.total_len()) } else { (from.query_len(), to.query_len()) };
    if d1 < d0 || from.weight != to.weight || src.len() != 2 * m0 || dst.len() != 2 * m1 {
        return Err(LinalgError::DimensionMismatch);
    }
    dst.fill(0.0);
    for h in 0..2 {
        let (s, t) = (&src[h * m0..(h + 1) * m0], &mut dst[h * m1..(h + 1) * m1]);
        t[..SX + d0].copy_from_slice(&s[..SX + d0]);
        if m0 > SX + d0 {
            t[to.syy()] = s[from.syy()];
            t[to.sxy()..to.sxy() + d0].copy_from_slice(&s[from.sxy()..from.sxy() + d0]);
            // Packed by rows: the first d0 rows of the triangle are a prefix.
            let p = StatsShape::packed_len(d0);
            t[to.sxx()..to.sxx() + p].copy_from_slice(&s[from.sxx()..from.sxx() + p]);
        }
    }
    Ok(())
}

/// The labels and query bookkeeping of a block of `n` rows, as
/// [`accumulate`] and [`accumulate_sparse`] take them: `y` the labels,
/// `qids` each row's query id (rows without query ids: one id for all,
/// e.g. 0), `slots` each row's query record, an index into
/// [`StatsMut::queries`] that the caller keeps per qid.
#[derive(Clone, Copy, Debug)]
pub struct RowBlock<'a> {
    /// One label per row.
    pub y: &'a [f64],
    /// One query id per row.
    pub qids: &'a [u64],
    /// One query-record index per row.
    pub slots: &'a [usize],
}

/// The running statistics [`accumulate`] and [`accumulate_sparse`] add
/// to: `totals`, `K` total records (`K·2·total_len`), and `queries`, query
/// records of `2·query_len` each.
#[derive(Debug)]
pub struct StatsMut<'a> {
    /// The per-fold total records.
    pub totals: &'a mut [f64],
    /// The per-fold sealed records ([`seal`]; with `equal` also the
    /// within-query co-moments of every query, open or sealed).
    pub sealed: &'a mut [f64],
    /// The per-query records.
    pub queries: &'a mut [f64],
}

/// Scratch for [`accumulate`] with a block of `n` rows: the rows of one
/// fold centred, their labels, a `d × d` product, one record.
pub fn accumulate_workspace_len(shape: &StatsShape, n: usize) -> usize {
    n * shape.d + n + shape.d * shape.d + shape.d + 2 * shape.total_len()
}

/// Chan, Golub and LeVeque's pairwise update: merges the record `src`
/// into `dst` (both `2m`: values, then compensations). With `full` the
/// records hold co-moments (the total layout) and
/// `M = M_a + M_b + (n_a n_b / n)·δδᵀ` (δ the difference of the means,
/// labels included); otherwise (a query record of `equal`: count and
/// means only) that last term goes into `within`'s co-moments when given.
/// The means become `x̄_a + δ·n_b/n`. Every co-moment term added is a
/// positive semi-definite part, so no digits cancel, whatever the scale
/// of the features.
pub fn merge_record(
    shape: &StatsShape,
    full: bool,
    dst: &mut [f64],
    src: &[f64],
    within: Option<&mut [f64]>,
) -> Result<(), LinalgError> {
    let d = shape.d;
    let (m, mt) = (if full { shape.total_len() } else { SX + d }, shape.total_len());
    if dst.len() != 2 * m || src.len() != 2 * m || within.as_ref().is_some_and(|w| w.len() != 2 * mt) {
        return Err(LinalgError::DimensionMismatch);
    }
    let (na, nb) = (value(dst, N), value(src, N));
    if nb == 0.0 {
        return Ok(());
    }
    if na == 0.0 {
        dst.copy_from_slice(src);
        return Ok(());
    }
    let n = na + nb;
    let f = na * nb / n;
    let (s, c) = dst.split_at_mut(m);
    let (ss, sc) = src.split_at(m);
    let (s_mean, s_mom) = s.split_at_mut(SX + d);
    let (c_mean, c_mom) = c.split_at_mut(SX + d);
    let delta = |i: usize| (ss[i] + sc[i]) - (s_mean[i] + c_mean[i]);
    // Co-moments relative to the offset of `syy` (`Σ(y−ȳ)²`, then `xy`, then `xxᵀ`).
    let between = |ts: &mut [f64], tc: &mut [f64]| {
        let dy = delta(SY);
        add_compensated(&mut ts[0], &mut tc[0], f * dy * dy);
        for i in 0..d {
            add_compensated(&mut ts[1 + i], &mut tc[1 + i], f * delta(SX + i) * dy);
        }
        let mut o = 1 + d;
        for i in 0..d {
            let fi = f * delta(SX + i);
            for j in 0..=i {
                add_compensated(&mut ts[o], &mut tc[o], fi * delta(SX + j));
                o += 1;
            }
        }
    };
    if full {
        between(s_mom, c_mom);
        for (k, (sv, cv)) in s_mom.iter_mut().zip(c_mom.iter_mut()).enumerate() {
            add_compensated(sv, cv, ss[SX + d + k]);
            *cv += sc[SX + d + k];
        }
    } else if let Some(w) = within {
        let (ws, wc) = w.split_at_mut(mt);
        between(&mut ws[SX + d..], &mut wc[SX + d..]);
    }
    for i in SY..SX + d {
        let (a, b) = (s_mean[i] + c_mean[i], ss[i] + sc[i]);
        s_mean[i] = a + (b - a) * (nb / n);
        c_mean[i] = 0.0;
    }
    s_mean[N] = n;
    c_mean[N] = 0.0;
    Ok(())
}

/// [`merge_record`] of every fold's total record.
pub fn merge_totals(shape: &StatsShape, dst: &mut [f64], src: &[f64]) -> Result<(), LinalgError> {
    let mt2 = 2 * shape.total_len();
    if dst.len() != shape.totals_buffer_len() || src.len() != dst.len() {
        return Err(LinalgError::DimensionMismatch);
    }
    for (a, b) in dst.chunks_exact_mut(mt2).zip(src.chunks_exact(mt2)) {
        merge_record(shape, true, a, b, None)?;
    }
    Ok(())
}

/// [`merge_record`] of two partials of the query `qid`: with `equal` the
/// between-part of the merge goes to its fold's record of `sealed`, which
/// holds the within-query co-moments ([`seal`]).
pub fn merge_query(
    shape: &StatsShape,
    seed: u64,
    qid: u64,
    dst: &mut [f64],
    src: &[f64],
    sealed: &mut [f64],
) -> Result<(), LinalgError> {
    let mt2 = 2 * shape.total_len();
    if sealed.len() != shape.totals_buffer_len() {
        return Err(LinalgError::DimensionMismatch);
    }
    let k = fold_of(qid, seed, shape.folds);
    match shape.weight {
        QueryWeight::Pairs => merge_record(shape, true, dst, src, None),
        QueryWeight::Equal => merge_record(shape, false, dst, src, Some(&mut sealed[k * mt2..(k + 1) * mt2])),
    }
}

/// Count and means of `n` rows (row-major `n × d`) and their labels into
/// `rec` (`N`, `SY`, `SX..`), with one correction pass (the mean of the
/// residuals added back); `tmp` holds `d` values.
fn means_into(rec: &mut [f64], rows: &[f64], y: &[f64], d: usize, tmp: &mut [f64]) {
    let n = y.len();
    let inv = 1.0 / n as f64;
    rec[N] = n as f64;
    let my = y.iter().sum::<f64>() * inv;
    rec[SY] = my + y.iter().map(|v| v - my).sum::<f64>() * inv;
    let mx = &mut rec[SX..SX + d];
    mx.fill(0.0);
    for r in rows.chunks_exact(d) {
        for (m, v) in mx.iter_mut().zip(r) {
            *m += v;
        }
    }
    mx.iter_mut().for_each(|m| *m *= inv);
    tmp.fill(0.0);
    for r in rows.chunks_exact(d) {
        for ((t, m), v) in tmp.iter_mut().zip(mx.iter()).zip(r) {
            *t += v - m;
        }
    }
    for (m, t) in mx.iter_mut().zip(tmp.iter()) {
        *m += t * inv;
    }
}

/// Rows and labels minus the means of `rec`, into `g` and `yc`.
fn centre_into(rec: &[f64], rows: &[f64], y: &[f64], d: usize, g: &mut [f64], yc: &mut [f64]) {
    for ((dst, src), (yd, &ys)) in g.chunks_exact_mut(d).zip(rows.chunks_exact(d)).zip(yc.iter_mut().zip(y)) {
        for ((a, &v), &m) in dst.iter_mut().zip(src).zip(&rec[SX..SX + d]) {
            *a = v - m;
        }
        *yd = ys - rec[SY];
    }
}

/// The co-moments of centred rows `g` (`n × d`) and labels `yc` into the
/// total-layout values `rec` (one syrk for `Σ(x−x̄)(x−x̄)ᵀ`; `c`: `d × d`).
fn moments_into<B: Backend>(
    backend: &mut B,
    shape: &StatsShape,
    rec: &mut [f64],
    g: &[f64],
    yc: &[f64],
    c: &mut [f64],
) -> Result<(), LearnError> {
    let (d, n) = (shape.d, yc.len());
    rec[shape.syy()] = yc.iter().map(|v| v * v).sum();
    let sxy = shape.sxy();
    rec[sxy..sxy + d].fill(0.0);
    for (r, &yv) in g.chunks_exact(d).zip(yc) {
        for (s, &v) in rec[sxy..sxy + d].iter_mut().zip(r) {
            *s += v * yv;
        }
    }
    let gm = MatRef::from_row_major(g, n, d)?;
    backend.syrk(1.0, gm.t(), 0.0, MatMut::from_col_major(c, d, d)?)?;
    pack_lower(c, d, &mut rec[shape.sxx()..]);
    Ok(())
}

/// Adds a block of rows to the statistics.
///
/// Each fold's rows of the block are summarised exactly — their means,
/// then the co-moments of the centred rows (one syrk) — and merged into
/// the fold's total record ([`merge_record`]). Each run of consecutive
/// rows of one query is summarised alike and merged into its query
/// record ([`merge_query`]); with `equal` the co-moments of the rows
/// centred on their run's means (one syrk per fold) go to the fold's
/// `sealed` record, which so holds `Σ_q X_qᵀL_qX_q` exactly, whatever the
/// features' offsets.
///
/// # Arguments
/// - `x`: the block, `n × d` row-major; `block`: its `n` labels, query ids
///   and query-record slots ([`RowBlock`]).
/// - `seed`: the fold seed ([`fold_of`]).
/// - `stats`: the total, sealed and query records added to ([`StatsMut`]).
///
/// # Errors
/// Dimension and workspace errors; `NonFinite` for a NaN or ±∞ in `x` or
/// `y`; a slot out of range. Nothing is added on error.
pub fn accumulate<B: Backend>(
    backend: &mut B,
    shape: &StatsShape,
    seed: u64,
    x: &[f64],
    block: &RowBlock<'_>,
    stats: StatsMut<'_>,
    work: &mut [f64],
) -> Result<(), LearnError> {
    let RowBlock { y, qids, slots } = *block;
    let StatsMut { totals, sealed, queries } = stats;
    shape.check()?;
    let (d, n, mt, mq) = (shape.d, y.len(), shape.total_len(), shape.query_len());
    if n.checked_mul(d) != Some(x.len())
        || qids.len() != n
        || slots.len() != n
        || totals.len() != shape.totals_buffer_len()
        || sealed.len() != shape.totals_buffer_len()
        || queries.len() % (2 * mq) != 0
    {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if x.iter().chain(y).any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    if slots.iter().any(|&s| s >= queries.len() / (2 * mq)) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let need = accumulate_workspace_len(shape, n);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let (g, rest) = work.split_at_mut(n * d);
    let (yk, rest) = rest.split_at_mut(n);
    let (c, rest) = rest.split_at_mut(d * d);
    let (tmp, rest) = rest.split_at_mut(d);
    let rec = &mut rest[..2 * mt];
    let fold = |i: usize| fold_of(qids[i], seed, shape.folds);
    // The runs of consecutive rows of one query.
    let runs = || {
        let mut i0 = 0;
        core::iter::from_fn(move || {
            (i0 < n).then(|| {
                let start = i0;
                i0 = (start..n).find(|&i| slots[i] != slots[start]).unwrap_or(n);
                (start, i0)
            })
        })
    };
    for k in 0..shape.folds {
        // The fold's rows: gathered, summarised, merged.
        let mut nk = 0;
        for i in (0..n).filter(|&i| shape.folds == 1 || fold(i) == k) {
            g[nk * d..(nk + 1) * d].copy_from_slice(&x[i * d..(i + 1) * d]);
            yk[nk] = y[i];
            nk += 1;
        }
        if nk == 0 {
            continue;
        }
        rec.fill(0.0);
        means_into(rec, &g[..nk * d], &yk[..nk], d, tmp);
        for (r, yv) in g[..nk * d].chunks_exact_mut(d).zip(yk[..nk].iter_mut()) {
            for (v, &m) in r.iter_mut().zip(&rec[SX..SX + d]) {
                *v -= m;
            }
            *yv -= rec[SY];
        }
        moments_into(backend, shape, &mut rec[..mt], &g[..nk * d], &yk[..nk], c)?;
        merge_record(shape, true, &mut totals[k * 2 * mt..(k + 1) * 2 * mt], rec, None)?;
        if shape.weight != QueryWeight::Equal {
            continue;
        }
        // Its runs: means into the query records; the rows centred on
        // their run's means, whose co-moments are within-query scatter.
        let mut nw = 0;
        for (i0, i1) in runs().filter(|&(i0, _)| fold(i0) == k) {
            let part = &mut rec[..2 * mq];
            part.fill(0.0);
            means_into(part, &x[i0 * d..i1 * d], &y[i0..i1], d, tmp);
            let (gr, yr) = (&mut g[nw * d..(nw + i1 - i0) * d], &mut yk[nw..nw + i1 - i0]);
            centre_into(part, &x[i0 * d..i1 * d], &y[i0..i1], d, gr, yr);
            nw += i1 - i0;
            let slot = slots[i0];
            merge_query(shape, seed, qids[i0], &mut queries[slot * 2 * mq..(slot + 1) * 2 * mq], part, sealed)?;
        }
        rec.fill(0.0);
        moments_into(backend, shape, &mut rec[..mt], &g[..nw * d], &yk[..nw], c)?;
        add_values(&mut sealed[k * 2 * mt..(k + 1) * 2 * mt], &rec[..mt])?;
    }
    if shape.weight == QueryWeight::Pairs {
        // Each run's whole record (its co-moments by one syrk) into its
        // query's record.
        for (i0, i1) in runs() {
            let (rows, yr) = (&x[i0 * d..i1 * d], &y[i0..i1]);
            rec.fill(0.0);
            means_into(rec, rows, yr, d, tmp);
            centre_into(rec, rows, yr, d, &mut g[..(i1 - i0) * d], &mut yk[..i1 - i0]);
            moments_into(backend, shape, &mut rec[..mt], &g[..(i1 - i0) * d], &yk[..i1 - i0], c)?;
            let slot = slots[i0];
            merge_query(shape, seed, qids[i0], &mut queries[slot * 2 * mq..(slot + 1) * 2 * mq], rec, sealed)?;
        }
    }
    Ok(())
}

/// The lower triangle of the column-major `d × d` matrix `c`, packed by
/// rows into `out` (entry `(i, j)`, `j ≤ i`, at `i(i+1)/2 + j`).
#[inline]
fn pack_lower(c: &[f64], d: usize, out: &mut [f64]) {
    let mut o = 0;
    for i in 0..d {
        for j in 0..=i {
            out[o] = c[j * d + i];
            o += 1;
        }
    }
}

/// Rows per dense chunk of [`accumulate_sparse`].
fn sparse_chunk_rows(d: usize) -> usize {
    (SPARSE_CHUNK_VALUES / d.max(1)).max(1)
}

/// Values of one dense chunk of [`accumulate_sparse`] (1 MiB of `f64`).
const SPARSE_CHUNK_VALUES: usize = 1 << 17;

/// Scratch for [`accumulate_sparse`]: one dense chunk of rows and
/// [`accumulate`]'s scratch for it.
pub fn accumulate_sparse_workspace_len(shape: &StatsShape) -> usize {
    let r = sparse_chunk_rows(shape.d);
    r * shape.d + accumulate_workspace_len(shape, r)
}

/// [`accumulate`] for rows in CSR form: row `i` is
/// `cols[row_ptr[i]..row_ptr[i + 1]]` (0-based, strictly increasing,
/// `< d`) with `vals` alike. The rows are made dense a chunk at a time
/// (about 1 MiB) and summarised as [`accumulate`] does, so the statistics
/// are exact at any feature offset; the cost is `n·d²` like dense rows
/// (the `d²` statistics bound `d` anyway).
///
/// # Errors
/// As [`accumulate`]; `DimensionMismatch` for a bad row pointer or a column
/// out of order or `≥ d`. Nothing is added on error.
// Eight inputs: the CSR rows' three arrays beside the block's other columns, the sums and the workspace.
#[allow(clippy::too_many_arguments)]
pub fn accumulate_sparse<B: Backend>(
    backend: &mut B,
    shape: &StatsShape,
    seed: u64,
    row_ptr: &[usize],
    cols: &[u32],
    vals: &[f64],
    block: &RowBlock<'_>,
    stats: StatsMut<'_>,
    work: &mut [f64],
) -> Result<(), LearnError> {
    let RowBlock { y, qids, slots } = *block;
    let StatsMut { totals, sealed, queries } = stats;
    shape.check()?;
    let (d, n, mq) = (shape.d, y.len(), shape.query_len());
    let ptr_ok = row_ptr.len() == n + 1
        && row_ptr.first() == Some(&0)
        && row_ptr.last() == Some(&cols.len())
        && row_ptr.windows(2).all(|w| w[0] <= w[1]);
    if !ptr_ok
        || cols.len() != vals.len()
        || qids.len() != n
        || slots.len() != n
        || totals.len() != shape.totals_buffer_len()
        || sealed.len() != shape.totals_buffer_len()
        || queries.len() % (2 * mq) != 0
    {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let cols_ok = (0..n).all(|i| {
        let c = &cols[row_ptr[i]..row_ptr[i + 1]];
        c.windows(2).all(|w| w[0] < w[1]) && c.last().is_none_or(|&l| (l as usize) < d)
    });
    if !cols_ok || slots.iter().any(|&s| s >= queries.len() / (2 * mq)) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if vals.iter().chain(y).any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    let need = accumulate_sparse_workspace_len(shape);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let r = sparse_chunk_rows(d);
    let (dense, rest) = work.split_at_mut(r * d);
    let mut i0 = 0;
    while i0 < n {
        let i1 = (i0 + r).min(n);
        let xd = &mut dense[..(i1 - i0) * d];
        xd.fill(0.0);
        for i in i0..i1 {
            for p in row_ptr[i]..row_ptr[i + 1] {
                xd[(i - i0) * d + cols[p] as usize] = vals[p];
            }
        }
        let chunk = RowBlock { y: &y[i0..i1], qids: &qids[i0..i1], slots: &slots[i0..i1] };
        let stats = StatsMut { totals: &mut *totals, sealed: &mut *sealed, queries: &mut *queries };
        accumulate(backend, shape, seed, xd, &chunk, stats, rest)?;
        i0 = i1;
    }
    Ok(())
}

/// Which learner [`solve`] fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// RLS: `L = I`.
    Rls,
    /// RankRLS with the statistics' query weighting.
    RankRls,
}

scratch! {
    /// Scratch of [`solve`].
    struct SolveScratch(d: usize, k: usize) {
        /// Each fold's system `A_k` (`d × d`, lower triangle).
        a: k * d * d,
        /// Each fold's `b_k`.
        b: k * d,
        /// Each fold's `sᵀL_ks` and row count.
        c: k * 2,
        /// A training system.
        m: d * d,
        /// Its right-hand side.
        z: d,
        /// `A_k·w`.
        t: d,
        /// A held-out fold's weights when they are not asked for.
        wk: d,
        /// [`solve_normal`]'s scratch.
        normal: normal_workspace_len(d),
    }
}

/// Scratch for [`solve`].
pub fn solve_workspace_len(shape: &StatsShape) -> usize {
    SolveScratch::len(shape.d, shape.folds)
}

/// Every λ of a grid, for the full data and (with `K > 1` folds) every
/// fold's training part, from merged statistics.
///
/// Each training system is the sum of its folds' systems (never the total
/// minus a fold, which would cancel digits), solved for each λ by
/// [`solve_normal`]'s rule: with `λ > 0` never refused for rounding.
///
/// # Arguments
/// - `stats`: the merged statistics.
/// - `w`: `lambdas.len() × d`, the full-data weights of each λ.
/// - `cv`: `K × lambdas.len()` (empty when `K = 1`): fold `k`'s held-out
///   objective per held-out row, `(s − Xw)ᵀL_k(s − Xw)/n_k`, of the model
///   trained without fold `k`.
/// - `fold_w`: empty, or `K × lambdas.len() × d`: those models' weights.
///
/// # Errors
/// `BadLambda`; `ConstantFeature`/`Collinear` for a singular system at
/// `λ = 0`; `BadGraph` for a query record with no rows, or an empty fold;
/// dimension and workspace errors.
// Eight inputs: the statistics, the λ grid, three outputs and the workspace.
#[allow(clippy::too_many_arguments)]
pub fn solve<B: Backend>(
    backend: &mut B,
    stats: &StatsRef<'_>,
    target: Target,
    lambdas: &[f64],
    w: &mut [f64],
    cv: &mut [f64],
    fold_w: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    let shape = &stats.shape;
    shape.check()?;
    let (d, kf, mq, nl) = (shape.d, shape.folds, shape.query_len(), lambdas.len());
    let cv_len = if kf > 1 { kf * nl } else { 0 };
    if stats.totals.len() != shape.totals_buffer_len()
        || stats.sealed.len() != shape.totals_buffer_len()
        || stats.queries.len() != stats.qids.len() * 2 * mq
        || w.len() != nl * d
        || cv.len() != cv_len
        || !(fold_w.is_empty() || (kf > 1 && fold_w.len() == kf * nl * d))
    {
        return Err(LinalgError::DimensionMismatch.into());
    }
    for &l in lambdas {
        check_lambda(l, false)?;
    }
    let (SolveScratch { a, b, c, m, z, t, wk, normal }, _) = SolveScratch::split(work, d, kf)?;
    fold_systems(stats, target, a, b, c)?;
    let dd = d * d;
    let fits = if kf > 1 { kf + 1 } else { 1 };
    for f in 0..fits {
        // f < K (with folds): fold f held out; f = K or no folds: all data.
        let held = (kf > 1 && f < kf).then_some(f);
        m.fill(0.0);
        z.fill(0.0);
        for k in (0..kf).filter(|&k| held != Some(k)) {
            for (mv, av) in m.iter_mut().zip(&a[k * dd..(k + 1) * dd]) {
                *mv += av;
            }
            for (zv, bv) in z.iter_mut().zip(&b[k * d..(k + 1) * d]) {
                *zv += bv;
            }
        }
        for (li, &lambda) in lambdas.iter().enumerate() {
            let out = match held {
                Some(k) if !fold_w.is_empty() => &mut fold_w[(k * nl + li) * d..(k * nl + li + 1) * d],
                Some(_) => &mut wk[..],
                None => &mut w[li * d..(li + 1) * d],
            };
            solve_normal(backend, m, z, lambda, out, normal)?;
            if let Some(k) = held {
                // Held-out objective from fold k's own system.
                let (ak, bk, ck, nk) = (&a[k * dd..(k + 1) * dd], &b[k * d..(k + 1) * d], c[2 * k], c[2 * k + 1]);
                let wv: &[f64] = out;
                sym_lower_gemv(ak, d, wv, t);
                let quad: f64 = wv.iter().zip(t.iter()).map(|(p, q)| p * q).sum();
                let lin: f64 = wv.iter().zip(bk).map(|(p, q)| p * q).sum();
                cv[k * nl + li] = (ck - 2.0 * lin + quad) / nk;
            }
        }
    }
    Ok(())
}

/// `a`, `b`, `c` (`d × d` lower, `d`, scalar) plus `scale` times the
/// co-moments `Σ(x−x̄)(x−x̄)ᵀ`, `Σ(x−x̄)(y−ȳ)`, `Σ(y−ȳ)²` of a
/// `2·total_len` record.
fn add_system(shape: &StatsShape, rec: &[f64], scale: f64, a: &mut [f64], b: &mut [f64], c: &mut f64) {
    let d = shape.d;
    for i in 0..d {
        for j in 0..=i {
            a[j * d + i] += scale * value(rec, shape.sxx() + i * (i + 1) / 2 + j);
        }
        b[i] += scale * value(rec, shape.sxy() + i);
    }
    *c += scale * value(rec, shape.syy());
}

/// Scratch for [`seal`]: one record.
pub fn seal_workspace_len(shape: &StatsShape) -> usize {
    shape.total_len()
}

/// Seals whole queries: their RankRLS terms go into their folds' sealed
/// records (`sealed`: `K` records in the total layout, whose `n` counts
/// the sealed queries and whose co-moments hold the terms), so their own
/// records can be dropped. `qids` and `recs` (`2·query_len` each) are the
/// queries. The caller must know that no other rows of these qids exist
/// anywhere (all their rows met and merged): a sealed qid met again cannot
/// be merged exactly.
///
/// With `equal` (`L_q = I − 11ᵀ/l`, `X_qᵀL_qX_q = M_q`, the query's
/// co-moments) the terms are already in the sealed records
/// ([`accumulate`], [`merge_query`]): sealing only counts the query. With
/// `pairs` (`L_q = l·I − 11ᵀ`, `X_qᵀL_qX_q = l·M_q`) it adds `l·M_q`.
///
/// # Errors
/// Dimension and workspace errors; `BadGraph` for a record without rows.
/// Nothing is added on error.
pub fn seal(
    shape: &StatsShape,
    seed: u64,
    qids: &[u64],
    recs: &[f64],
    sealed: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    shape.check()?;
    let (mt, mq, n) = (shape.total_len(), 2 * shape.query_len(), qids.len());
    if recs.len() != n * mq || sealed.len() != shape.totals_buffer_len() {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if recs.chunks_exact(mq).any(|r| !(value(r, N) >= 1.0)) {
        return Err(LearnError::BadGraph);
    }
    let need = seal_workspace_len(shape);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let t = &mut work[..mt];
    for (qid, rec) in qids.iter().zip(recs.chunks_exact(mq)) {
        let k = fold_of(*qid, seed, shape.folds);
        t.fill(0.0);
        t[N] = 1.0;
        if shape.weight == QueryWeight::Pairs {
            let l = value(rec, N);
            for (i, v) in t.iter_mut().enumerate().skip(shape.syy()) {
                *v = l * value(rec, i);
            }
        }
        add_values(&mut sealed[k * 2 * mt..(k + 1) * 2 * mt], t)?;
    }
    Ok(())
}

/// `y ← A·x` for a symmetric `A` (`d × d`, column-major, lower triangle
/// read).
fn sym_lower_gemv(a: &[f64], d: usize, x: &[f64], y: &mut [f64]) {
    for i in 0..d {
        let mut s = 0.0;
        for j in 0..d {
            let (r, col) = if i >= j { (i, j) } else { (j, i) };
            s += a[col * d + r] * x[j];
        }
        y[i] = s;
    }
}

/// Each fold's system `(A_k, b_k, sᵀL_ks, n_k)` (the module docs'
/// equations): RLS `XᵀX = M + n·x̄x̄ᵀ` (and alike for `b`, `c`) from the
/// fold's total record; RankRLS from its sealed record (`equal`: every
/// query's within co-moments; `pairs`: the sealed queries' `l·M_q`) plus,
/// with `pairs`, each open query's `l·M_q`.
pub(crate) fn fold_systems(
    stats: &StatsRef<'_>,
    target: Target,
    a: &mut [f64],
    b: &mut [f64],
    c: &mut [f64],
) -> Result<(), LearnError> {
    let StatsRef { shape, seed, totals, sealed, qids, queries } = *stats;
    let shape = &shape;
    let (d, kf, mt, mq) = (shape.d, shape.folds, shape.total_len(), shape.query_len());
    let dd = d * d;
    a[..kf * dd].fill(0.0);
    b[..kf * d].fill(0.0);
    c[..2 * kf].fill(0.0);
    for k in 0..kf {
        let rec = &totals[k * 2 * mt..(k + 1) * 2 * mt];
        let nk = value(rec, N);
        if !(nk >= 1.0) {
            return Err(LearnError::BadGraph);
        }
        c[2 * k + 1] = nk;
        let (ak, bk) = (&mut a[k * dd..(k + 1) * dd], &mut b[k * d..(k + 1) * d]);
        match target {
            Target::Rls => {
                add_system(shape, rec, 1.0, ak, bk, &mut c[2 * k]);
                let my = value(rec, SY);
                for i in 0..d {
                    let xi = nk * value(rec, SX + i);
                    for j in 0..=i {
                        ak[j * d + i] += xi * value(rec, SX + j);
                    }
                    bk[i] += xi * my;
                }
                c[2 * k] += nk * my * my;
            }
            Target::RankRls => add_system(shape, &sealed[k * 2 * mt..(k + 1) * 2 * mt], 1.0, ak, bk, &mut c[2 * k]),
        }
    }
    if target == Target::Rls || shape.weight == QueryWeight::Equal {
        return Ok(());
    }
    for (qi, &qid) in qids.iter().enumerate() {
        let rec = &queries[qi * 2 * mq..(qi + 1) * 2 * mq];
        let l = value(rec, N);
        if !(l >= 1.0) {
            return Err(LearnError::BadGraph);
        }
        let k = fold_of(qid, seed, kf);
        let (ak, bk) = (&mut a[k * dd..(k + 1) * dd], &mut b[k * d..(k + 1) * d]);
        add_system(shape, rec, l, ak, bk, &mut c[2 * k]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::backend::Portable;
    use crate::graph::Graph;
    use crate::learn::ls::{ls_primal, ls_primal_workspace_len};

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Statistics of some rows in caller buffers, queries keyed by qid.
    struct Stats {
        totals: Vec<f64>,
        sealed: Vec<f64>,
        qids: Vec<u64>,
        queries: Vec<f64>,
    }

    impl Stats {
        fn new(shape: &StatsShape) -> Stats {
            let z = vec![0.0; shape.totals_buffer_len()];
            Stats { totals: z.clone(), sealed: z, qids: Vec::new(), queries: Vec::new() }
        }

        fn slot(&mut self, shape: &StatsShape, qid: u64) -> usize {
            match self.qids.iter().position(|&q| q == qid) {
                Some(s) => s,
                None => {
                    self.qids.push(qid);
                    self.queries.resize(self.qids.len() * 2 * shape.query_len(), 0.0);
                    self.qids.len() - 1
                }
            }
        }

        fn add_rows(&mut self, shape: &StatsShape, seed: u64, x: &[f64], y: &[f64], qids: &[u64]) {
            let slots: Vec<usize> = qids.iter().map(|&q| self.slot(shape, q)).collect();
            let mut pw = vec![0.0; Portable::workspace_len(shape.d)];
            let mut work = vec![0.0; accumulate_workspace_len(shape, y.len())];
            accumulate(
                &mut Portable::new(&mut pw),
                shape,
                seed,
                x,
                &RowBlock { y, qids, slots: &slots },
                StatsMut { totals: &mut self.totals, sealed: &mut self.sealed, queries: &mut self.queries },
                &mut work,
            )
            .unwrap();
        }

        fn merge_from(&mut self, shape: &StatsShape, seed: u64, o: &Stats) {
            merge_totals(shape, &mut self.totals, &o.totals).unwrap();
            add_records(&mut self.sealed, &o.sealed).unwrap();
            let mq = 2 * shape.query_len();
            for (j, &q) in o.qids.iter().enumerate() {
                let s = self.slot(shape, q);
                let dst = &mut self.queries[s * mq..(s + 1) * mq];
                merge_query(shape, seed, q, dst, &o.queries[j * mq..(j + 1) * mq], &mut self.sealed).unwrap();
            }
        }
    }

    /// Rows of `nq` queries of 1 to 9 rows, qids not in order; row-major.
    fn data(rng: &mut Rng, nq: usize, d: usize) -> (Vec<f64>, Vec<f64>, Vec<u64>) {
        let (mut x, mut y, mut q) = (Vec::new(), Vec::new(), Vec::new());
        for qi in 0..nq {
            let qid = (qi as u64 * 7919) % 1009 + 3;
            for _ in 0..1 + (rng.next() * 9.0) as usize {
                x.extend((0..d).map(|_| rng.next() * 2.0 - 0.5));
                y.push((rng.next() * 5.0).floor());
                q.push(qid);
            }
        }
        (x, y, q)
    }

    fn rel(a: f64, b: f64, scale: f64) -> f64 {
        (a - b).abs() / scale
    }

    /// The one-pass table — 5 folds × 10 λ, from statistics of blocks that
    /// split queries, merged in shuffled order, a third of the queries then
    /// sealed — equals five separate fold
    /// fits by the in-memory primal solver (`ls_primal` on the rows of the
    /// other folds, grouped by query) to 1e-10 relative, weights and
    /// held-out objective (computed from the held-out residuals with the
    /// held-out graph's `L`); the full-data weights likewise; for both
    /// query weightings and RLS.
    #[test]
    fn one_pass_cv_equals_separate_fold_fits() {
        const D: usize = 6;
        const K: usize = 5;
        let lambdas = [1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (x, y, q) = data(&mut rng, 60, D);
        let n = y.len();
        let seed = 11;
        for (target, weight) in [
            (Target::RankRls, QueryWeight::Equal),
            (Target::RankRls, QueryWeight::Pairs),
            (Target::Rls, QueryWeight::Equal),
        ] {
            let shape = StatsShape { d: D, folds: K, weight };
            // Blocks of 1 to 40 consecutive rows: queries cut at block ends.
            let mut parts = Vec::new();
            let mut at = 0;
            while at < n {
                let e = (at + 1 + (rng.next() * 40.0) as usize).min(n);
                let mut s = Stats::new(&shape);
                s.add_rows(&shape, seed, &x[at * D..e * D], &y[at..e], &q[at..e]);
                parts.push(s);
                at = e;
            }
            assert!(parts.len() > 4);
            let mut all = Stats::new(&shape);
            for p in parts.iter().rev() {
                all.merge_from(&shape, seed, p);
            }
            // Whole queries sealed: every third qid's record folded away.
            let mq = 2 * shape.query_len();
            let (mut kept_q, mut kept_r, mut seal_q, mut seal_r) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for (j, &qid) in all.qids.iter().enumerate() {
                let rec = &all.queries[j * mq..(j + 1) * mq];
                let (qs, rs) = if j % 3 == 0 { (&mut seal_q, &mut seal_r) } else { (&mut kept_q, &mut kept_r) };
                qs.push(qid);
                rs.extend_from_slice(rec);
            }
            let mut sw = vec![0.0; seal_workspace_len(&shape)];
            seal(&shape, seed, &seal_q, &seal_r, &mut all.sealed, &mut sw).unwrap();
            (all.qids, all.queries) = (kept_q, kept_r);
            let nl = lambdas.len();
            let (mut w, mut cv, mut fw) = (vec![0.0; nl * D], vec![0.0; K * nl], vec![0.0; K * nl * D]);
            let mut pw = vec![0.0; Portable::workspace_len(D)];
            let mut work = vec![0.0; solve_workspace_len(&shape)];
            solve(
                &mut Portable::new(&mut pw),
                &StatsRef {
                    shape,
                    seed,
                    totals: &all.totals,
                    sealed: &all.sealed,
                    qids: &all.qids,
                    queries: &all.queries,
                },
                target,
                &lambdas,
                &mut w,
                &mut cv,
                &mut fw,
                &mut work,
            )
            .unwrap();
            // The reference: rows of a fold set, grouped by query.
            let subset = |keep: &dyn Fn(u64) -> bool| {
                let mut ids: Vec<u64> = q.iter().copied().filter(|&v| keep(v)).collect();
                ids.sort_unstable();
                ids.dedup();
                let (mut xs, mut ys, mut ptr) = (Vec::new(), Vec::new(), vec![0usize]);
                for id in ids {
                    for i in (0..n).filter(|&i| q[i] == id) {
                        xs.extend_from_slice(&x[i * D..(i + 1) * D]);
                        ys.push(y[i]);
                    }
                    ptr.push(ys.len());
                }
                (xs, ys, ptr)
            };
            fn graph(target: Target, weight: QueryWeight, ptr: &[usize], m: usize) -> Graph<'_> {
                match target {
                    Target::Rls => Graph::Identity { n: m },
                    Target::RankRls => Graph::Queries { query_ptr: ptr, weight },
                }
            }
            let fit = |xs: &[f64], ys: &[f64], ptr: &[usize], lambda: f64| {
                let m = ys.len();
                let mut wr = vec![0.0; D];
                let mut wk = vec![0.0; ls_primal_workspace_len(m, D)];
                let mut pw = vec![0.0; Portable::workspace_len(D)];
                let xm = MatRef::from_row_major(xs, m, D).unwrap();
                ls_primal(
                    &mut Portable::new(&mut pw),
                    xm,
                    &graph(target, weight, ptr, m),
                    ys,
                    lambda,
                    &mut wr,
                    &mut wk,
                )
                .unwrap();
                wr
            };
            let (xa, ya, pa) = subset(&|_| true);
            for (li, &l) in lambdas.iter().enumerate() {
                let wr = fit(&xa, &ya, &pa, l);
                let sc = wr.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                for j in 0..D {
                    assert!(rel(w[li * D + j], wr[j], sc) < 1e-10, "{target:?} {weight:?} λ {l}");
                }
            }
            for k in 0..K {
                let (xt, yt, pt) = subset(&|v| fold_of(v, seed, K) != k);
                let (xh, yh, ph) = subset(&|v| fold_of(v, seed, K) == k);
                assert!(!yh.is_empty() && !yt.is_empty());
                for (li, &l) in lambdas.iter().enumerate() {
                    let wr = fit(&xt, &yt, &pt, l);
                    let sc = wr.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    let got = &fw[(k * nl + li) * D..(k * nl + li + 1) * D];
                    for j in 0..D {
                        assert!(rel(got[j], wr[j], sc) < 1e-10, "{target:?} {weight:?} fold {k} λ {l}");
                    }
                    let m = yh.len();
                    let r: Vec<f64> =
                        (0..m).map(|i| yh[i] - (0..D).map(|j| xh[i * D + j] * wr[j]).sum::<f64>()).collect();
                    let mut lr = vec![0.0; m];
                    graph(target, weight, &ph, m).apply(&r, &mut lr).unwrap();
                    let want = r.iter().zip(&lr).map(|(a, b)| a * b).sum::<f64>() / m as f64;
                    let got = cv[k * nl + li];
                    assert!(rel(got, want, want.abs()) < 1e-10, "{target:?} {weight:?} fold {k} λ {l}: {got} {want}");
                }
            }
        }
    }

    /// CSR rows (about a third of the entries present, some rows empty)
    /// give the statistics of the same rows densified, to 1e-14 relative
    /// per value (the dense path sums by syrk, in another order), for both
    /// record layouts; a column out of order or `≥ d` is refused and
    /// nothing is added.
    #[test]
    fn sparse_rows_equal_their_dense_form() {
        let mut rng = Rng(99);
        for weight in [QueryWeight::Equal, QueryWeight::Pairs] {
            let shape = StatsShape { d: 7, folds: 3, weight };
            let (x, y, q) = data(&mut rng, 12, 7);
            let n = y.len();
            let x: Vec<f64> = x.iter().map(|&v| if rng.next() < 0.65 { 0.0 } else { v }).collect();
            let (mut ptr, mut cols, mut vals) = (vec![0usize], Vec::new(), Vec::new());
            for i in 0..n {
                for j in 0..7 {
                    if x[i * 7 + j] != 0.0 {
                        cols.push(j as u32);
                        vals.push(x[i * 7 + j]);
                    }
                }
                ptr.push(cols.len());
            }
            let mut dense = Stats::new(&shape);
            dense.add_rows(&shape, 4, &x, &y, &q);
            let mut sp = Stats::new(&shape);
            let slots: Vec<usize> = q.iter().map(|&v| sp.slot(&shape, v)).collect();
            let mut work = vec![0.0; accumulate_sparse_workspace_len(&shape)];
            let mut pw = vec![0.0; Portable::workspace_len(shape.d)];
            accumulate_sparse(
                &mut Portable::new(&mut pw),
                &shape,
                4,
                &ptr,
                &cols,
                &vals,
                &RowBlock { y: &y, qids: &q, slots: &slots },
                StatsMut { totals: &mut sp.totals, sealed: &mut sp.sealed, queries: &mut sp.queries },
                &mut work,
            )
            .unwrap();
            assert_eq!(dense.qids, sp.qids);
            let close = |a: &[f64], b: &[f64], m: usize| {
                for r in 0..a.len() / (2 * m) {
                    for i in 0..m {
                        let (u, v) = (value(&a[r * 2 * m..], i), value(&b[r * 2 * m..], i));
                        assert!((u - v).abs() <= 1e-14 * u.abs().max(1.0), "{weight:?} record {r} value {i}: {u} {v}");
                    }
                }
            };
            close(&dense.totals, &sp.totals, shape.total_len());
            close(&dense.queries, &sp.queries, shape.query_len());
            close(&dense.sealed, &sp.sealed, shape.total_len());
            let before = sp.totals.clone();
            let bad_cols: Vec<u32> = cols.iter().map(|&c| if c == 6 { 7 } else { c }).collect();
            let r = accumulate_sparse(
                &mut Portable::new(&mut pw),
                &shape,
                4,
                &ptr,
                &bad_cols,
                &vals,
                &RowBlock { y: &y, qids: &q, slots: &slots },
                StatsMut { totals: &mut sp.totals, sealed: &mut sp.sealed, queries: &mut sp.queries },
                &mut work,
            );
            assert_eq!(r, Err(LearnError::Numerics(LinalgError::DimensionMismatch)));
            assert_eq!(before, sp.totals);
        }
    }

    /// A record widened to more features equals the statistics of the
    /// same rows with zero columns appended, for both record layouts.
    #[test]
    fn widen_equals_zero_padded_rows() {
        let mut rng = Rng(5);
        for weight in [QueryWeight::Equal, QueryWeight::Pairs] {
            let (small, big) = (StatsShape { d: 3, folds: 2, weight }, StatsShape { d: 5, folds: 2, weight });
            let (x, y, q) = data(&mut rng, 8, 3);
            let xw: Vec<f64> = x.chunks(3).flat_map(|r| r.iter().copied().chain([0.0, 0.0])).collect();
            let (mut a, mut b) = (Stats::new(&small), Stats::new(&big));
            a.add_rows(&small, 1, &x, &y, &q);
            b.add_rows(&big, 1, &xw, &y, &q);
            let mut wide = vec![0.0; big.totals_buffer_len()];
            let (m0, m1) = (2 * small.total_len(), 2 * big.total_len());
            for k in 0..2 {
                widen_record(&small, &big, true, &a.totals[k * m0..(k + 1) * m0], &mut wide[k * m1..(k + 1) * m1])
                    .unwrap();
            }
            assert_eq!(wide, b.totals);
            let (q0, q1) = (2 * small.query_len(), 2 * big.query_len());
            for j in 0..a.qids.len() {
                let mut r = vec![0.0; q1];
                widen_record(&small, &big, false, &a.queries[j * q0..(j + 1) * q0], &mut r).unwrap();
                assert_eq!(r, b.queries[j * q1..(j + 1) * q1]);
            }
        }
    }

    /// Merging is associative and order-independent to the last bits:
    /// records of blocks whose plain sums cancel catastrophically
    /// (`1e16 + 1 − 1e16`) merge to the same values (relative 1e-15, in
    /// fact equal here) in any order and tree shape, and the compensated
    /// value keeps the small term exactly.
    #[test]
    fn merge_is_associative_and_compensated() {
        let mut rng = Rng(77);
        let m = 50;
        let recs: Vec<Vec<f64>> = (0..7)
            .map(|b| {
                let mut r = vec![0.0; 2 * m];
                let v: Vec<f64> = (0..m)
                    .map(|i| match (b, i % 3) {
                        (0, 0) => 1e16,
                        (3, 0) => -1e16,
                        _ => rng.next() * 1e3 - 500.0,
                    })
                    .collect();
                add_values(&mut r, &v).unwrap();
                r
            })
            .collect();
        let fold = |order: &[usize]| {
            let mut acc = vec![0.0; 2 * m];
            for &i in order {
                add_records(&mut acc, &recs[i]).unwrap();
            }
            acc
        };
        let left = fold(&[0, 1, 2, 3, 4, 5, 6]);
        let right = fold(&[6, 5, 4, 3, 2, 1, 0]);
        let mut tree = fold(&[0, 1, 2]);
        add_records(&mut tree, &fold(&[3, 4])).unwrap();
        add_records(&mut tree, &fold(&[5, 6])).unwrap();
        for i in 0..m {
            let exact: f64 = (0..7).filter(|&b| !(i % 3 == 0 && (b == 0 || b == 3))).map(|b| value(&recs[b], i)).sum();
            for r in [&left, &right, &tree] {
                let v = value(r, i);
                assert!((v - value(&left, i)).abs() <= 1e-15 * v.abs().max(1.0), "{i}");
                assert!((v - exact).abs() <= 1e-12 * exact.abs().max(1.0), "{i}: {v} vs {exact}");
            }
        }
    }

    /// A non-finite value or a slot out of range is refused and nothing is
    /// added; a fold without rows, or λ < 0, is refused by the solve.
    #[test]
    fn bad_input_is_refused() {
        let shape = StatsShape { d: 2, folds: 2, weight: QueryWeight::Equal };
        let mut s = Stats::new(&shape);
        let mut pw = vec![0.0; Portable::workspace_len(2)];
        let mut work = vec![0.0; accumulate_workspace_len(&shape, 2)];
        s.slot(&shape, 1);
        let x = [1.0, f64::NAN, 0.0, 1.0];
        let mut q = s.queries.clone();
        let r = accumulate(
            &mut Portable::new(&mut pw),
            &shape,
            0,
            &x,
            &RowBlock { y: &[1.0, 0.0], qids: &[1, 1], slots: &[0, 0] },
            StatsMut { totals: &mut s.totals, sealed: &mut s.sealed, queries: &mut q },
            &mut work,
        );
        assert_eq!(r, Err(LearnError::Numerics(LinalgError::NonFinite)));
        let r = accumulate(
            &mut Portable::new(&mut pw),
            &shape,
            0,
            &[1.0; 4],
            &RowBlock { y: &[1.0, 0.0], qids: &[1, 1], slots: &[0, 1] },
            StatsMut { totals: &mut s.totals, sealed: &mut s.sealed, queries: &mut q },
            &mut work,
        );
        assert_eq!(r, Err(LearnError::Numerics(LinalgError::DimensionMismatch)));
        assert!(s.totals.iter().chain(&q).all(|v| *v == 0.0));
        // One query: one fold is empty.
        s.add_rows(&shape, 0, &[1.0, 0.0, 0.0, 1.0], &[1.0, 0.0], &[1, 1]);
        let (mut w, mut cv) = (vec![0.0; 2], vec![0.0; 2]);
        let mut work = vec![0.0; solve_workspace_len(&shape)];
        let r = solve(
            &mut Portable::new(&mut pw),
            &StatsRef { shape, seed: 0, totals: &s.totals, sealed: &s.sealed, qids: &s.qids, queries: &s.queries },
            Target::Rls,
            &[1.0],
            &mut w,
            &mut cv,
            &mut [],
            &mut work,
        );
        assert_eq!(r, Err(LearnError::BadGraph));
        let one = StatsShape { folds: 1, ..shape };
        let mut t = Stats::new(&one);
        t.add_rows(&one, 0, &[1.0, 0.0, 0.0, 1.0], &[1.0, 0.0], &[1, 1]);
        let r = solve(
            &mut Portable::new(&mut pw),
            &StatsRef { shape: one, seed: 0, totals: &t.totals, sealed: &t.sealed, qids: &t.qids, queries: &t.queries },
            Target::Rls,
            &[-1.0],
            &mut w,
            &mut [],
            &mut [],
            &mut work,
        );
        assert_eq!(r, Err(LearnError::BadLambda));
        // λ = 0 on a rank-deficient system (one query, RankRLS: rank 1 of 2).
        let r = solve(
            &mut Portable::new(&mut pw),
            &StatsRef { shape: one, seed: 0, totals: &t.totals, sealed: &t.sealed, qids: &t.qids, queries: &t.queries },
            Target::RankRls,
            &[0.0],
            &mut w,
            &mut [],
            &mut [],
            &mut work,
        );
        assert!(matches!(r, Err(LearnError::Collinear { .. } | LearnError::ConstantFeature { .. })), "{r:?}");
    }
}
