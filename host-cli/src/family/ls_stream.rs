//! Linear RLS / RankRLS straight from an SVMlight file, for `ranklet train`
//! with one λ and no cross-validation: the primal system of 000 eq. 5,
//! `(XᵀLX + λI)·w = XᵀLs`, summed block by block while the file is parsed
//! ([`ranklet_core::learn::ls::ls_primal_accumulate`]), so the `n × d` data
//! is never held: `O(d²)` memory beyond one block of rows, and no copies of
//! the data set into a table, a dense matrix and `L^{½}X`.
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

use ranklet_core::backend::Backend;
use ranklet_core::graph::{Graph, QueryWeight};
use ranklet_core::learn::{ls, LearnError};

use crate::data::svmlight::{stream_blocks, RowBlock, SvmlightOptions, BLOCK_BYTES_PER_THREAD, CHUNK_BYTES};
use crate::data::DataError;
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
/// on in the next block.
struct Acc<'b, B> {
    backend: &'b mut B,
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
    /// Queries already complete (a row of one of them later in the file
    /// means the queries are not on consecutive lines).
    closed: Vec<bool>,
    xb: Vec<f64>,
    sb: Vec<f64>,
    qptr: Vec<usize>,
    work: Vec<f64>,
}

impl<B: Backend> Acc<'_, B> {
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

    /// Adds rows `0..n` of the block buffers (whole queries, `qptr` over
    /// them for a ranker).
    fn accumulate(&mut self, n: usize) -> Result<(), LearnError> {
        let d = self.d;
        if n == 0 {
            return Ok(());
        }
        let g = if self.ranker {
            Graph::Queries { query_ptr: &self.qptr, weight: self.weight }
        } else {
            Graph::Identity { n }
        };
        self.work.resize(ls::ls_primal_accumulate_workspace_len(n, d), 0.0);
        let x = &mut self.xb[..n * d];
        ls::ls_primal_accumulate(self.backend, x, d, &g, &self.sb[..n], &mut self.a, &mut self.rhs, &mut self.work)
    }

    /// One block: the pending rows and the block's, all but the last query
    /// added to the system. `Break` where the streamed fit does not apply.
    fn block(&mut self, block: &RowBlock<'_>) -> ControlFlow<()> {
        let d = self.fixed_d.unwrap_or_else(|| self.d.max(block.max_index()));
        if d > DENSE_MAX_D {
            return ControlFlow::Break(());
        }
        self.widen(d);
        self.xb.clear();
        self.xb.extend_from_slice(&self.pend_x);
        self.sb.clear();
        self.sb.extend_from_slice(&self.pend_s);
        self.qptr.clear();
        self.qptr.push(0);
        let mut cur = self.pend_q;
        for row in block.rows() {
            if self.ranker {
                // Without query ids the file is one query: not streamed.
                let Some(q) = row.query else {
                    return ControlFlow::Break(());
                };
                if cur != Some(q) {
                    if let Some(c) = cur {
                        self.qptr.push(self.sb.len());
                        if self.closed.len() <= c {
                            self.closed.resize(c + 1, false);
                        }
                        self.closed[c] = true;
                    }
                    if self.closed.get(q) == Some(&true) {
                        return ControlFlow::Break(());
                    }
                    cur = Some(q);
                }
            }
            let at = self.xb.len();
            self.xb.resize(at + d, 0.0);
            let Some(dst) = self.xb.get_mut(at..) else {
                return ControlFlow::Break(());
            };
            for (&c, &v) in row.cols.iter().zip(row.vals) {
                match dst.get_mut(c as usize) {
                    Some(x) => *x = v,
                    None => return ControlFlow::Break(()),
                }
            }
            self.sb.push(row.label);
        }
        let done = if self.ranker { self.qptr.last().copied().unwrap_or(0) } else { self.sb.len() };
        if self.accumulate(done).is_err() {
            return ControlFlow::Break(());
        }
        self.pend_x.clear();
        self.pend_x.extend_from_slice(&self.xb[done * d..]);
        self.pend_s.clear();
        self.pend_s.extend_from_slice(&self.sb[done..]);
        self.pend_q = cur;
        ControlFlow::Continue(())
    }

    /// Adds the last query.
    fn finish(&mut self) -> Result<(), LearnError> {
        std::mem::swap(&mut self.xb, &mut self.pend_x);
        std::mem::swap(&mut self.sb, &mut self.pend_s);
        let n = self.sb.len();
        self.qptr.clear();
        self.qptr.extend([0, n]);
        self.accumulate(n)
    }
}

/// Linear RLS (`ranker = false`) or RankRLS with query weighting `weight`
/// and ridge `lambda`, read and fitted in one pass over the SVMlight file
/// at `path` (see the [module docs](self)).
///
/// Returns `Ok(None)` where the streamed fit does not apply (the caller
/// then fits in memory), `Ok(Some(Err(_)))` for a failed fit (the errors
/// of [`ls::ls_primal`]).
///
/// # Errors
///
/// The reader's errors, as [`crate::data::read_svmlight`] reports them.
pub fn fit_linear_stream<B: Backend + Send>(
    backend: &mut B,
    path: &Path,
    opts: &SvmlightOptions,
    ranker: bool,
    weight: QueryWeight,
    lambda: f64,
) -> Result<Option<Result<Streamed, LearnError>>, DataError> {
    let block = BLOCK_BYTES_PER_THREAD * rayon::current_num_threads().max(1);
    fit_blocks(backend, path, opts, ranker, weight, lambda, block, CHUNK_BYTES)
}

/// [`fit_linear_stream`] reading blocks of about `block` bytes in chunks of
/// about `chunk` bytes.
#[allow(clippy::too_many_arguments)]
fn fit_blocks<B: Backend + Send>(
    backend: &mut B,
    path: &Path,
    opts: &SvmlightOptions,
    ranker: bool,
    weight: QueryWeight,
    lambda: f64,
    block: usize,
    chunk: usize,
) -> Result<Option<Result<Streamed, LearnError>>, DataError> {
    let mut acc = Acc {
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
        closed: Vec::new(),
        xb: Vec::new(),
        sb: Vec::new(),
        qptr: Vec::new(),
        work: Vec::new(),
    };
    let Some(summary) = stream_blocks(path, opts, block, chunk, |b| acc.block(b))? else {
        return Ok(None);
    };
    let (n, d) = (summary.rows, summary.d);
    // Where the in-memory fit would not be primal.
    if n < 2 || d == 0 || d > n || d != acc.d {
        return Ok(None);
    }
    if acc.finish().is_err() {
        return Ok(None);
    }
    let mut w = std::mem::take(&mut acc.rhs);
    if let Err(e) = ls::ls_primal_solve(acc.backend, &mut acc.a, lambda, &mut w) {
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
    /// every block size, both rankers' weightings and RLS; the streamed fit
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
                    let got = fit_blocks(&mut backend, &path, &opts, ranker, weight, 0.5, block, chunk);
                    let got = got.unwrap().expect("streamed").unwrap();
                    assert!(close(&got.w, &want), "{ranker} {weight:?} block {block}: {:?} vs {want:?}", got.w);
                    assert_eq!((got.d, got.queries), (7, 40));
                }
            }
        }
        // --num-features widens d.
        let wide = SvmlightOptions { num_features: Some(9), ..Default::default() };
        let want = in_memory(&path, &wide, true, QueryWeight::Equal, 0.5);
        let got =
            fit_blocks(&mut backend, &path, &wide, true, QueryWeight::Equal, 0.5, 100, 7).unwrap().unwrap().unwrap();
        assert!(close(&got.w, &want) && got.d == 9);

        let resumed = dir.join("r.light");
        std::fs::write(&resumed, letor(&mut rng, 40, 7, true, true)).unwrap();
        let r = fit_blocks(&mut backend, &resumed, &opts, true, QueryWeight::Equal, 0.5, 100, 7).unwrap();
        assert!(r.is_none());
        // RLS has no queries to keep together.
        let want = in_memory(&resumed, &opts, false, QueryWeight::Equal, 0.5);
        let got = fit_blocks(&mut backend, &resumed, &opts, false, QueryWeight::Equal, 0.5, 100, 7);
        assert!(close(&got.unwrap().unwrap().unwrap().w, &want));

        let noqid = dir.join("n.light");
        std::fs::write(&noqid, letor(&mut rng, 40, 7, false, false)).unwrap();
        assert!(fit_blocks(&mut backend, &noqid, &opts, true, QueryWeight::Equal, 0.5, 100, 7).unwrap().is_none());
        let tall = dir.join("t.light");
        std::fs::write(&tall, "1 qid:1 1:1 9:2\n0 qid:1 2:1\n").unwrap();
        assert!(fit_blocks(&mut backend, &tall, &opts, true, QueryWeight::Equal, 0.5, 100, 7).unwrap().is_none());
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
                let got = fit_blocks(&mut backend, &path, &opts, true, QueryWeight::Equal, 1.0, block, 5).unwrap_err();
                assert_eq!(got, want, "{text:?} block {block}");
            }
        }
        let path = dir.join("ok.light");
        std::fs::write(&path, "1 qid:1 1:1\n0 qid:1 1:2\n").unwrap();
        let r = fit_blocks(&mut backend, &path, &opts, true, QueryWeight::Equal, -1.0, 100, 5).unwrap().unwrap();
        assert_eq!(r, Err(LearnError::BadLambda));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
