//! Linear RLS / RankRLS straight from an SVMlight file, for `ranklet train`
//! with one λ and no cross-validation: the primal system of 000 eq. 5,
//! `(XᵀLX + λI)·w = XᵀLs`, summed block by block while the file is parsed
//! ([`ranklet_core::learn::ls::ls_primal_accumulate`]), so the `n × d` data
//! is never held: `O(d²)` memory beyond one block of rows, and no copies of
//! the data set into a table, a dense matrix and `L^{½}X`. Each ~1 MB chunk
//! of a block is densified and its queries summed on its own thread (the
//! queries that run over a chunk boundary are completed and summed in file
//! order), and the blocks have a fixed size, so the model is the same bytes
//! for every number of threads.
//!
//! It applies where the in-memory fit takes the primal form on the same
//! rows in the same order: a ranker's queries each on consecutive lines
//! (then the table's query order is the file's), an RLS fit on any rows
//! (one identity graph), `d ≤ n` at any `n` (the primal form's condition,
//! dense or sparse rows), and at most [`DENSE_MAX_D`] features (a block's
//! rows are held dense; wider files are fitted in memory from sparse rows,
//! still in the primal form). Anywhere else
//! [`fit_linear_stream`] says so and the caller reads the file into memory
//! as before; the reader's checks and errors are the same either way.

use std::ops::ControlFlow;
use std::path::Path;

use ranklet_core::graph::{Graph, QueryWeight};
use ranklet_core::learn::{ls, LearnError};
use rayon::prelude::*;

use crate::data::svmlight::{stream_blocks, RowBlock, SvmlightOptions, CHUNK_BYTES};
use crate::data::DataError;
use crate::hostbackend::HostBackend;
use crate::table::DENSE_MAX_D;

/// A streamed fit: the weights and what the model metadata records.
#[derive(Clone, Debug, PartialEq)]
pub struct Streamed {
    /// The weights `w` (`d`).
    pub w: Vec<f64>,
    /// Data rows.
    pub rows: usize,
    /// Queries (1 without query ids).
    pub queries: usize,
    /// The dimension.
    pub d: usize,
}

/// The system summed so far, and the rows of the last query, which may go
/// on in the next chunk.
struct Acc<'b> {
    backend: &'b mut HostBackend,
    /// The most values held dense for one chunk or one query
    /// ([`STREAM_MAX_DENSE`]).
    max_dense: usize,
    ranker: bool,
    weight: QueryWeight,
    fixed_d: Option<usize>,
    d: usize,
    /// `Σ (L^{½}X_b)ᵀ(L^{½}X_b)`, `d × d`, lower triangle.
    a: Vec<f64>,
    /// `Σ (L^{½}X_b)ᵀ(L^{½}s_b)`.
    rhs: Vec<f64>,
    /// Rows of the last, maybe incomplete, query (row-major, width `d`).
    pend_x: Vec<f64>,
    pend_s: Vec<f64>,
    pend_q: Option<usize>,
    /// The queries completed across chunk boundaries in this block (rows,
    /// labels, query boundaries), summed in one call at the block's end.
    bnd_x: Vec<f64>,
    bnd_s: Vec<f64>,
    bnd_ptr: Vec<usize>,
    /// Queries already complete (a row of one of them later in the file
    /// means the queries are not on consecutive lines).
    closed: Vec<bool>,
    /// One per chunk of a block, reused from block to block.
    pieces: Vec<Piece>,
    work: Vec<f64>,
}

/// One chunk of a block ([`RowBlock::pieces`]): its rows dense, and the
/// system of its inner queries (all but its first and last runs of one
/// query, which may go on in the neighbouring chunks; every row for RLS),
/// summed on its own thread with its own single-threaded backend.
struct Piece {
    backend: HostBackend,
    /// The chunk's rows (row-major, width `d`) and labels.
    x: Vec<f64>,
    s: Vec<f64>,
    /// The query of each run of rows, and where each run starts in `s`
    /// (one more entry: the number of rows).
    runs: Vec<usize>,
    run_ptr: Vec<usize>,
    /// The inner queries' boundaries, from the first inner row.
    qptr: Vec<usize>,
    /// The inner queries' system (zero when there are none).
    a: Vec<f64>,
    rhs: Vec<f64>,
    work: Vec<f64>,
    /// Rows summed in `a` and `rhs`: `run_ptr[1]..run_ptr[runs.len() - 1]`
    /// for a ranker, all rows for RLS.
    inner: std::ops::Range<usize>,
    /// Whether the chunk can be fitted here (a ranker's rows carry qids,
    /// the indices fit `d`, the sums are finite).
    ok: bool,
}

impl Piece {
    fn new(backend: HostBackend) -> Piece {
        Piece {
            backend,
            x: Vec::new(),
            s: Vec::new(),
            runs: Vec::new(),
            run_ptr: Vec::new(),
            qptr: Vec::new(),
            a: Vec::new(),
            rhs: Vec::new(),
            work: Vec::new(),
            inner: 0..0,
            ok: true,
        }
    }

    /// Densifies the chunk to `d` features and sums its inner queries.
    fn compute(&mut self, block: &RowBlock<'_>, d: usize, ranker: bool, weight: QueryWeight) {
        self.ok = self.compute_inner(block, d, ranker, weight).is_some();
    }

    fn compute_inner(&mut self, block: &RowBlock<'_>, d: usize, ranker: bool, weight: QueryWeight) -> Option<()> {
        self.x.clear();
        self.s.clear();
        self.runs.clear();
        self.run_ptr.clear();
        for row in block.rows() {
            if ranker {
                // Without query ids the file is one query: not streamed.
                let q = row.query?;
                if self.runs.last() != Some(&q) {
                    self.runs.push(q);
                    self.run_ptr.push(self.s.len());
                }
            }
            let at = self.x.len();
            self.x.resize(at + d, 0.0);
            let dst = self.x.get_mut(at..)?;
            for (&c, &v) in row.cols.iter().zip(row.vals) {
                *dst.get_mut(c as usize)? = v;
            }
            self.s.push(row.label);
        }
        let n = self.s.len();
        self.run_ptr.push(n);
        self.inner = if ranker {
            match self.runs.len() {
                0..=2 => 0..0,
                r => self.run_ptr[1]..self.run_ptr[r - 1],
            }
        } else {
            0..n
        };
        self.a.clear();
        self.a.resize(d * d, 0.0);
        self.rhs.clear();
        self.rhs.resize(d, 0.0);
        let (lo, hi) = (self.inner.start, self.inner.end);
        if lo == hi {
            return Some(());
        }
        let m = hi - lo;
        self.qptr.clear();
        if ranker {
            self.qptr.extend(self.run_ptr.get(1..self.runs.len())?.iter().map(|&p| p - lo));
        }
        let g = if ranker { Graph::Queries { query_ptr: &self.qptr, weight } } else { Graph::Identity { n: m } };
        self.work.resize(ls::ls_primal_accumulate_workspace_len(m, d), 0.0);
        let x = self.x.get_mut(lo * d..hi * d)?;
        let s = self.s.get(lo..hi)?;
        ls::ls_primal_accumulate(&mut self.backend, x, d, &g, s, &mut self.a, &mut self.rhs, &mut self.work).ok()
    }
}

impl Acc<'_> {
    /// Grows the system and the pending rows to `d` features (the new
    /// features were zero in every earlier row).
    fn widen(&mut self, d: usize) {
        let old = self.d;
        if d <= old {
            return;
        }
        // Column-major `a` and row-major rows: `old` values of each column
        // or row move to the start of its new place (`chunks_exact` needs
        // `old > 0`; at 0 everything is zero).
        let mut a = vec![0.0; d * d];
        let mut x = vec![0.0; self.pend_s.len() * d];
        if old > 0 {
            for (dst, src) in a.chunks_exact_mut(d).zip(self.a.chunks_exact(old)) {
                dst[..old].copy_from_slice(src);
            }
            for (dst, src) in x.chunks_exact_mut(d).zip(self.pend_x.chunks_exact(old)) {
                dst[..old].copy_from_slice(src);
            }
        }
        self.a = a;
        self.rhs.resize(d, 0.0);
        self.pend_x = x;
        self.d = d;
    }

    /// The pending rows are a whole query: moves them to the block's
    /// completed boundary queries.
    fn complete(&mut self) {
        if self.pend_s.is_empty() {
            return;
        }
        if self.bnd_ptr.is_empty() {
            self.bnd_ptr.push(0);
        }
        self.bnd_x.extend_from_slice(&self.pend_x);
        self.bnd_s.extend_from_slice(&self.pend_s);
        self.bnd_ptr.push(self.bnd_s.len());
        self.pend_x.clear();
        self.pend_s.clear();
    }

    /// Adds the completed boundary queries to the system (one call for
    /// them all) and empties them.
    fn flush(&mut self) -> Result<(), LearnError> {
        let (d, n) = (self.d, self.bnd_s.len());
        if n == 0 {
            return Ok(());
        }
        let g = Graph::Queries { query_ptr: &self.bnd_ptr, weight: self.weight };
        self.work.resize(ls::ls_primal_accumulate_workspace_len(n, d), 0.0);
        let r = ls::ls_primal_accumulate(
            self.backend,
            &mut self.bnd_x,
            d,
            &g,
            &self.bnd_s,
            &mut self.a,
            &mut self.rhs,
            &mut self.work,
        );
        self.bnd_x.clear();
        self.bnd_s.clear();
        self.bnd_ptr.clear();
        r
    }

    /// Marks query `q` as met at this point of the file: `false` when it
    /// was complete already (its rows are not on consecutive lines).
    fn meet(&mut self, q: usize) -> bool {
        if self.pend_q == Some(q) {
            return true;
        }
        if let Some(c) = self.pend_q {
            if self.closed.len() <= c {
                self.closed.resize(c + 1, false);
            }
            self.closed[c] = true;
        }
        self.pend_q = Some(q);
        self.closed.get(q) != Some(&true)
    }

    /// One block: each chunk densified and its inner queries summed in
    /// parallel ([`Piece`]), then, in file order, the queries that run over
    /// chunk boundaries completed and summed, and the chunks' sums added.
    /// The chunks are the read's (fixed sizes), so the sums and their order
    /// do not depend on the number of threads. `Break` where the streamed
    /// fit does not apply.
    fn block(&mut self, block: &RowBlock<'_>) -> ControlFlow<()> {
        let d = self.fixed_d.unwrap_or_else(|| self.d.max(block.max_index()));
        if d > DENSE_MAX_D {
            return ControlFlow::Break(());
        }
        let chunks = block.pieces();
        if chunks.iter().any(|c| c.n_rows().saturating_mul(d) > self.max_dense) {
            return ControlFlow::Break(());
        }
        self.widen(d);
        while self.pieces.len() < chunks.len() {
            self.pieces.push(Piece::new(self.backend.sequential()));
        }
        let (ranker, weight) = (self.ranker, self.weight);
        let pieces = &mut self.pieces[..chunks.len()];
        pieces.par_iter_mut().zip(&chunks).for_each(|(p, c)| p.compute(c, d, ranker, weight));
        let pieces = std::mem::take(&mut self.pieces);
        let r = pieces[..chunks.len()].iter().try_for_each(|p| self.merge(p));
        self.pieces = pieces;
        if r.is_break() {
            return r;
        }
        match self.flush() {
            Ok(()) => ControlFlow::Continue(()),
            Err(_) => ControlFlow::Break(()),
        }
    }

    /// Adds one computed chunk, in file order.
    fn merge(&mut self, p: &Piece) -> ControlFlow<()> {
        if !p.ok {
            return ControlFlow::Break(());
        }
        let d = self.d;
        let last = p.runs.len().saturating_sub(1);
        let rows = |r: std::ops::Range<usize>| (&p.x[r.start * d..r.end * d], &p.s[r]);
        if !self.ranker {
            // RLS: the chunk's rows are all summed in the piece.
            for (a, b) in self.a.iter_mut().zip(&p.a) {
                *a += b;
            }
            for (a, b) in self.rhs.iter_mut().zip(&p.rhs) {
                *a += b;
            }
            return ControlFlow::Continue(());
        }
        for (k, &q) in p.runs.iter().enumerate() {
            let new = self.pend_q != Some(q);
            if !self.meet(q) {
                return ControlFlow::Break(());
            }
            // The first run may go on from the previous chunk; the last may
            // go on in the next; the runs between are the piece's.
            if k == 0 || k == last {
                if new {
                    self.complete();
                }
                let (x, s) = rows(p.run_ptr[k]..p.run_ptr[k + 1]);
                // A query as long as the file would be held whole.
                if (self.pend_s.len() + s.len()).saturating_mul(d) > self.max_dense {
                    return ControlFlow::Break(());
                }
                self.pend_x.extend_from_slice(x);
                self.pend_s.extend_from_slice(s);
            }
            if k == 0 && last > 0 {
                // The first run ends inside the chunk: that query is
                // complete; then the piece's own queries.
                self.complete();
                for (a, b) in self.a.iter_mut().zip(&p.a) {
                    *a += b;
                }
                for (a, b) in self.rhs.iter_mut().zip(&p.rhs) {
                    *a += b;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// Linear RLS (`ranker = false`) or RankRLS with query weighting `weight`
/// and ridge `lambda`, read and fitted in one pass over the SVMlight file
/// at `path` (see the [module docs](self)).
///
/// The file is read in blocks of [`STREAM_BLOCK_BYTES`], whatever the
/// number of threads, so the weights are the same bytes for every thread
/// count.
///
/// Returns `Ok(None)` where the streamed fit does not apply (the caller
/// then fits in memory), `Ok(Some(Err(_)))` for a failed fit (the errors
/// of [`ls::ls_primal`]).
///
/// # Errors
///
/// The reader's errors, as [`crate::data::read_svmlight`] reports them.
pub fn fit_linear_stream(
    backend: &mut HostBackend,
    path: &Path,
    opts: &SvmlightOptions,
    ranker: bool,
    weight: QueryWeight,
    lambda: f64,
) -> Result<Option<Result<Streamed, LearnError>>, DataError> {
    fit_blocks(backend, path, opts, ranker, weight, lambda, STREAM_BLOCK_BYTES, CHUNK_BYTES, STREAM_MAX_DENSE)
}

/// The block size of [`fit_linear_stream`]: 4 chunks, a fixed number so
/// that the chunks (and so the order of the sums) do not depend on the
/// number of threads. The parse of a block runs beside the sums of the
/// previous one, so two cores have 8 tasks; larger blocks measured more CPU
/// time on the LETOR benchmark file (8 chunks +4 %, 16 chunks +14 %: the
/// buffers leave the caches), smaller ones the same.
pub(crate) const STREAM_BLOCK_BYTES: usize = 4 * CHUNK_BYTES;

/// The most values the streamed fit holds dense for one chunk's rows or
/// one query's (128 MB of `f64`, 16 Mi values; LETOR's 1 MB chunks take
/// about 90 000): beyond, e.g. a chunk of 80 000 short rows in a file
/// whose widest row sets feature 4 096, the streamed fit declines and the
/// file is read into memory, where rows that wide stay sparse.
pub(crate) const STREAM_MAX_DENSE: usize = 1 << 24;

/// [`fit_linear_stream`] reading blocks of about `block` bytes in chunks of
/// about `chunk` bytes, declining where a chunk's or a query's rows would
/// hold more than `max_dense` values dense.
#[allow(clippy::too_many_arguments)]
fn fit_blocks(
    backend: &mut HostBackend,
    path: &Path,
    opts: &SvmlightOptions,
    ranker: bool,
    weight: QueryWeight,
    lambda: f64,
    block: usize,
    chunk: usize,
    max_dense: usize,
) -> Result<Option<Result<Streamed, LearnError>>, DataError> {
    let mut acc = Acc {
        max_dense,
        backend,
        ranker,
        weight,
        fixed_d: opts.num_features,
        d: 0,
        a: Vec::new(),
        rhs: Vec::new(),
        pend_x: Vec::new(),
        pend_s: Vec::new(),
        pend_q: None,
        bnd_x: Vec::new(),
        bnd_s: Vec::new(),
        bnd_ptr: Vec::new(),
        closed: Vec::new(),
        pieces: Vec::new(),
        work: Vec::new(),
    };
    // The read's loop on a worker of the pool, so that its joins start
    // there instead of being sent to the pool and waited for at every block.
    let Some(summary) = rayon::scope(|_| stream_blocks(path, opts, block, chunk, |b| acc.block(b)))? else {
        return Ok(None);
    };
    let (n, d) = (summary.rows, summary.d);
    // Where the in-memory fit would not be primal.
    if n < 2 || d == 0 || d > n || d != acc.d {
        return Ok(None);
    }
    acc.complete();
    if acc.flush().is_err() {
        return Ok(None);
    }
    let mut w = std::mem::take(&mut acc.rhs);
    let mut work = vec![0.0; ls::ls_primal_solve_workspace_len(d)];
    if let Err(e) = ls::ls_primal_solve(acc.backend, &acc.a, lambda, &mut w, &mut work) {
        return Ok(Some(Err(e)));
    }
    Ok(Some(Ok(Streamed { w, rows: n, queries: summary.queries.unwrap_or(1), d })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::read_svmlight;
    use crate::family::ls::{LeastSquares, LsPoint};
    use crate::family::Family;
    use crate::fit::{Fitted, Target};
    use crate::hostbackend::{BackendChoice, HostBackend};
    use crate::rng::SplitMix64;
    use crate::table::Table;
    use ranklet_core::kernel::Kernel;

    /// The in-memory fit (the reference): data set → table → `ls::fit`.
    fn in_memory(path: &Path, opts: &SvmlightOptions, ranker: bool, weight: QueryWeight, lambda: f64) -> Vec<f64> {
        let ds = read_svmlight(path, opts).unwrap();
        let table = Table::from_dataset(&ds, true);
        let fam = LeastSquares {
            ranker,
            kernels: vec![Kernel::Linear],
            lambdas: vec![lambda],
            basis: None,
            cg_note: Default::default(),
        };
        let p = LsPoint { kernel: Kernel::Linear, lambda };
        let mut backend = HostBackend::new(BackendChoice::Faer);
        match fam.fit(&mut backend, &p, &table, &Target::Labels(weight)).unwrap() {
            Fitted::Linear { w, .. } => w,
            Fitted::Kernel { .. } => panic!("not primal"),
        }
    }

    /// A LETOR-like file: queries of 1 to 6 rows on consecutive lines
    /// (`shuffle`: a query resumed later), sparse rows whose largest index
    /// grows along the file (so blocks widen the system), 6-decimal values.
    fn letor(rng: &mut SplitMix64, queries: usize, d: usize, qids: bool, shuffle: bool) -> String {
        let mut text = String::from("# generated\n");
        let mut rows = Vec::new();
        for q in 0..queries {
            for _ in 0..1 + rng.next_u64() % 6 {
                let width = 1 + (d * (q + 1)).div_ceil(queries);
                let mut line = format!("{:.6}", (rng.next_u64() % 1000) as f64 / 250.0);
                if qids {
                    line.push_str(&format!(" qid:{}", q + 1));
                }
                for j in 1..=width.min(d) {
                    if rng.next_u64() % 3 != 0 {
                        line.push_str(&format!(" {j}:{:.6}", (rng.next_u64() % 2_000_000) as f64 / 1e6 - 1.0));
                    }
                }
                rows.push(line);
            }
        }
        if shuffle {
            let last = rows.len() - 1;
            rows.swap(0, last);
        }
        for r in rows {
            text.push_str(&r);
            text.push('\n');
        }
        text
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-12 * scale)
    }

    /// The streamed weights equal the in-memory fit's to 1e-12 (relative to
    /// the largest weight; only the order of the Gram sums differs) for
    /// every block size, both rankers' weightings and RLS, and the same
    /// bytes for any number of threads; the streamed fit
    /// declines a query resumed later in the file and a ranker without
    /// qids (one query), and a file wider than it is tall.
    #[test]
    fn streamed_fit_equals_in_memory_fit() {
        let dir = std::env::temp_dir().join(format!("ranklet-ls-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = SplitMix64(5);
        let path = dir.join("q.light");
        std::fs::write(&path, letor(&mut rng, 40, 7, true, false)).unwrap();
        let len = std::fs::metadata(&path).unwrap().len() as usize;
        let opts = SvmlightOptions::default();
        let mut backend = HostBackend::new(BackendChoice::Faer);
        for (ranker, weight) in [(true, QueryWeight::Equal), (true, QueryWeight::Pairs), (false, QueryWeight::Equal)] {
            let want = in_memory(&path, &opts, ranker, weight, 0.5);
            for block in [1, 50, 333, len / 3, len + 1] {
                for chunk in [7, usize::MAX] {
                    let got =
                        fit_blocks(&mut backend, &path, &opts, ranker, weight, 0.5, block, chunk, STREAM_MAX_DENSE);
                    let got = got.unwrap().expect("streamed").unwrap();
                    assert!(close(&got.w, &want), "{ranker} {weight:?} block {block}: {:?} vs {want:?}", got.w);
                    assert_eq!((got.d, got.queries), (7, 40));
                }
            }
            // The same bytes on 1, 2 and 3 threads: the chunks are cut by
            // the read's sizes and summed in file order (queries across
            // chunk and block boundaries included).
            let on = |threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let w = pool.install(|| {
                    let mut backend = HostBackend::new(BackendChoice::Faer);
                    fit_blocks(&mut backend, &path, &opts, ranker, weight, 0.5, 333, 40, STREAM_MAX_DENSE)
                        .unwrap()
                        .unwrap()
                        .unwrap()
                        .w
                });
                w.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            };
            assert_eq!(on(2), on(1), "{ranker} {weight:?}");
            assert_eq!(on(3), on(1), "{ranker} {weight:?}");
        }
        // Beyond the dense cap, for a chunk's rows or a query's, it declines
        // (the file is then read into memory); at the cap it streams.
        let rows = read_svmlight(&path, &opts).unwrap().n_rows();
        let bytes = std::fs::metadata(&path).unwrap().len() as usize;
        for (block, chunk) in [(bytes + 1, usize::MAX), (100, 7)] {
            let longest_query = 6 * 7;
            let at_cap = fit_blocks(&mut backend, &path, &opts, true, QueryWeight::Equal, 0.5, block, chunk, rows * 7);
            assert!(at_cap.unwrap().is_some(), "{block} {chunk}");
            let cap = if chunk == 7 { longest_query - 1 } else { rows * 7 - 1 };
            let over = fit_blocks(&mut backend, &path, &opts, true, QueryWeight::Equal, 0.5, block, chunk, cap);
            assert!(over.unwrap().is_none(), "{block} {chunk}");
        }
        // --num-features widens d.
        let wide = SvmlightOptions { num_features: Some(9), ..Default::default() };
        let want = in_memory(&path, &wide, true, QueryWeight::Equal, 0.5);
        let got = fit_blocks(&mut backend, &path, &wide, true, QueryWeight::Equal, 0.5, 100, 7, STREAM_MAX_DENSE)
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(close(&got.w, &want) && got.d == 9);

        let resumed = dir.join("r.light");
        std::fs::write(&resumed, letor(&mut rng, 40, 7, true, true)).unwrap();
        let r =
            fit_blocks(&mut backend, &resumed, &opts, true, QueryWeight::Equal, 0.5, 100, 7, STREAM_MAX_DENSE).unwrap();
        assert!(r.is_none());
        // RLS has no queries to keep together.
        let want = in_memory(&resumed, &opts, false, QueryWeight::Equal, 0.5);
        let got = fit_blocks(&mut backend, &resumed, &opts, false, QueryWeight::Equal, 0.5, 100, 7, STREAM_MAX_DENSE);
        assert!(close(&got.unwrap().unwrap().unwrap().w, &want));

        let noqid = dir.join("n.light");
        std::fs::write(&noqid, letor(&mut rng, 40, 7, false, false)).unwrap();
        assert!(fit_blocks(&mut backend, &noqid, &opts, true, QueryWeight::Equal, 0.5, 100, 7, STREAM_MAX_DENSE)
            .unwrap()
            .is_none());
        let tall = dir.join("t.light");
        std::fs::write(&tall, "1 qid:1 1:1 9:2\n0 qid:1 2:1\n").unwrap();
        assert!(fit_blocks(&mut backend, &tall, &opts, true, QueryWeight::Equal, 0.5, 100, 7, STREAM_MAX_DENSE)
            .unwrap()
            .is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A bad file gives the reader's error, file and line, for every block
    /// size; a negative λ the learner's.
    #[test]
    fn streamed_fit_reports_the_readers_errors() {
        let dir = std::env::temp_dir().join(format!("ranklet-ls-stream-err-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let opts = SvmlightOptions::default();
        let mut backend = HostBackend::new(BackendChoice::Faer);
        let texts: [&[u8]; 5] = [
            b"1 qid:1 1:1\n0 qid:1 2:1\n1 qid:2 1:x\n",
            b"1 qid:1 1:1\n0 qid:1 2:1\n1 2:1\n",
            b"1 qid:1 1:1\n0 qid:1 2:1 2:3\n",
            b"1 qid:1 1:1\n0 qid:2 1:nan\n1 qid:2 1:\xff\n",
            b"# nothing\n",
        ];
        for (i, text) in texts.iter().enumerate() {
            let path = dir.join(format!("e{i}.light"));
            std::fs::write(&path, text).unwrap();
            let want = read_svmlight(&path, &opts).unwrap_err();
            for block in [1, 10, 1000] {
                let got =
                    fit_blocks(&mut backend, &path, &opts, true, QueryWeight::Equal, 1.0, block, 5, STREAM_MAX_DENSE)
                        .unwrap_err();
                assert_eq!(got, want, "{text:?} block {block}");
            }
        }
        let path = dir.join("ok.light");
        std::fs::write(&path, "1 qid:1 1:1\n0 qid:1 1:2\n").unwrap();
        let r = fit_blocks(&mut backend, &path, &opts, true, QueryWeight::Equal, -1.0, 100, 5, STREAM_MAX_DENSE)
            .unwrap()
            .unwrap();
        assert_eq!(r, Err(LearnError::BadLambda));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
