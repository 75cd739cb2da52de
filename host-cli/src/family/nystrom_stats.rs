//! Nyström kernel rankers from statistics files, the host half of
//! [`ranklet_core::learn::nystrom_stats`]: the feature map (landmarks
//! chosen once from a sample by the pivoted Cholesky `--basis` uses, the
//! kernel, `L`), carried by every [`Shard`] computed with it and written
//! in the `.rks` map section; the model from merged statistics — RLS /
//! RankRLS by [`ranklet_core::learn::ls_stats::solve`] in the `m` feature
//! dimensions, KPCR / KPCRank by
//! [`ranklet_core::learn::nystrom_stats::kpc_solve_stats`] — as the usual
//! reduced-basis kernel expansion over the landmarks.

use std::path::{Path, PathBuf};

use ranklet_core::backend::Backend;
use ranklet_core::format::stats::{NystromMap, NystromView, StatsView};
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::ls_stats::Target;
use ranklet_core::learn::nystrom::{self, default_pivot_tol};
use ranklet_core::learn::nystrom_stats::{self as core_ns, FeatureMap, Grid, KpcOut};
use ranklet_core::learn::LearnError;
use ranklet_core::linalg::Rows;
use ranklet_core::{LinalgError, MatRef};

use crate::data::svmlight::{stream_svmlight, SvmlightOptions};
use crate::error::CliError;
use crate::family::ls_stats::Shard;
use crate::fit::Fitted;
use crate::mem::try_zeros;
use crate::rng::SplitMix64;
use crate::table::Table;

/// A Nyström feature map: `φ(x) = L⁻¹k_m(x)` over `m` landmark rows.
#[derive(Clone, Debug, PartialEq)]
pub struct NystromSpec {
    /// The kernel.
    pub kernel: Kernel,
    /// Input dimension `p` of the rows it maps.
    pub input_dim: usize,
    /// The landmarks, `m × p` row-major.
    pub landmarks: Vec<f64>,
    /// `L` (`m × m`, column-major, lower triangular).
    pub factor: Vec<f64>,
    /// The map section's FNV-1a hash (the `.rks` header's `map_hash`).
    pub fingerprint: u64,
}

impl NystromSpec {
    /// A map from its parts; computes the fingerprint (and checks the parts
    /// as the file writer does).
    ///
    /// # Errors
    /// A [`CliError::failure`] if the parts are inconsistent.
    pub fn new(kernel: Kernel, input_dim: usize, landmarks: Vec<f64>, factor: Vec<f64>) -> Result<Self, CliError> {
        let mut spec = NystromSpec { kernel, input_dim, landmarks, factor, fingerprint: 0 };
        let m = spec.m();
        let core = spec.as_core();
        let len = core.section_len(m).ok_or_else(|| CliError::failure("Nyström map too large"))?;
        let mut buf = vec![0u8; len];
        spec.fingerprint = core.emit(m, &mut buf).map_err(|e| CliError::failure(format!("Nyström map: {e}")))?;
        Ok(spec)
    }

    /// Landmarks `m`.
    pub fn m(&self) -> usize {
        self.landmarks.len() / self.input_dim.max(1)
    }

    /// The map as the file writer reads it.
    pub fn as_core(&self) -> NystromMap<'_> {
        NystromMap { kernel: self.kernel, input_dim: self.input_dim, landmarks: &self.landmarks, factor: &self.factor }
    }

    /// The map of a validated file's section.
    pub fn from_view(v: &NystromView<'_>) -> Result<Self, CliError> {
        let m = v.landmarks_len();
        let packed: Vec<f64> = v.factor_packed().iter().collect();
        let mut factor = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..=i {
                factor[j * m + i] = packed[i * (i + 1) / 2 + j];
            }
        }
        Self::new(v.kernel(), v.input_dim(), v.landmarks().iter().collect(), factor)
    }

    /// For messages: kernel, landmarks, fingerprint.
    pub fn describe(&self) -> String {
        format!(
            "kernel {}, {} landmarks of {} features, fingerprint {:016x}",
            self.kernel,
            self.m(),
            self.input_dim,
            self.fingerprint
        )
    }

    /// Landmarks from sample rows (`n × p` row-major): the pivoted Cholesky
    /// of [`nystrom::landmarks`], at most `m`, with the in-memory learners'
    /// tolerance `n·ε`.
    ///
    /// # Errors
    /// Sizes, a non-finite kernel value; a [`CliError::input`] for an empty
    /// sample.
    pub fn from_sample(kernel: Kernel, sample: &[f64], p: usize, m: usize) -> Result<Self, CliError> {
        let n = sample.len() / p.max(1);
        if n == 0 || m == 0 {
            return Err(CliError::input("--basis: no rows to choose landmarks from (an empty sample, or M = 0)"));
        }
        let m = m.min(n);
        crate::mem::check(
            &format!("choosing {m} landmarks among {n} sample rows"),
            n.checked_mul(m).and_then(|v| v.checked_add(n + m * m)),
            8,
            "give a smaller --sample or --basis",
        )?;
        let fail = |e: LinalgError| CliError::failure(format!("choosing landmarks: {e}"));
        let x = Rows::Dense(MatRef::from_row_major(sample, n, p).map_err(fail)?);
        let mut piv = vec![0usize; m];
        let mut lmat = try_zeros(m * m).map_err(fail)?;
        let mut work = try_zeros(nystrom::landmarks_workspace_len(n, m)).map_err(fail)?;
        let r = nystrom::landmarks(&kernel, &x, default_pivot_tol(n), &mut piv, &mut lmat, &mut work).map_err(fail)?;
        if r == 0 {
            return Err(CliError::input("--basis: the sample's kernel matrix is zero; no landmark can be chosen"));
        }
        let landmarks: Vec<f64> = piv[..r].iter().flat_map(|&i| sample[i * p..(i + 1) * p].iter().copied()).collect();
        Self::new(kernel, p, landmarks, lmat[..r * r].to_vec())
    }

    /// The features of `n` rows (`x`: `n × p` row-major), `n × m`.
    ///
    /// # Errors
    /// As [`core_ns::features`].
    pub fn features<B: Backend>(&self, backend: &mut B, x: &[f64]) -> Result<Vec<f64>, LearnError> {
        let (m, p) = (self.m(), self.input_dim);
        let n = x.len() / p;
        let lm = Rows::Dense(MatRef::from_row_major(&self.landmarks, m, p)?);
        let rows = Rows::Dense(MatRef::from_row_major(x, n, p)?);
        let map = FeatureMap { kernel: &self.kernel, landmarks: &lm, factor: &self.factor };
        let mut out = try_zeros(n * m)?;
        let mut work = try_zeros(core_ns::features_workspace_len(&map, &rows))?;
        core_ns::features(backend, &map, &rows, &mut out, &mut work)?;
        Ok(out)
    }

    /// The landmarks as the basis table of a model.
    pub fn landmark_table(&self) -> Table {
        let m = self.m();
        Table::from_dense(self.landmarks.clone(), self.input_dim, vec![0.0; m], vec![0, m])
    }

    /// The model `Σ_j a_j k(x, z_j) + offset` of feature-space weights `β`.
    fn model(&self, beta: &[f64], offset: f64) -> Result<Fitted, CliError> {
        let m = self.m();
        let mut alpha = vec![0.0; m];
        let fail = |e: LinalgError| CliError::failure(format!("Nyström coefficients: {e}"));
        nystrom::coefficients(&self.factor, beta, &mut alpha).map_err(fail)?;
        Fitted::from_expansion(self.kernel, self.landmark_table(), alpha, offset, None)
            .map_err(|e| CliError::failure(e.to_string()))
    }
}

/// A uniform sample of at most `n` rows (reservoir sampling, seeded; all
/// rows in the order offered when there are at most `n`).
pub struct Reservoir {
    n: usize,
    rng: SplitMix64,
    seen: usize,
    kept: Vec<(usize, Vec<u32>, Vec<f64>)>,
}

impl Reservoir {
    /// An empty sample of at most `n` rows.
    pub fn new(n: usize, seed: u64) -> Self {
        Reservoir { n, rng: SplitMix64(seed), seen: 0, kept: Vec::new() }
    }

    /// Offers one row (0-based sorted columns and values).
    pub fn offer(&mut self, cols: &[u32], vals: &[f64]) {
        let slot = if self.kept.len() < self.n {
            Some(self.kept.len())
        } else {
            let j = (self.rng.next_u64() % (self.seen as u64 + 1)) as usize;
            (j < self.n).then_some(j)
        };
        match slot {
            Some(s) if s == self.kept.len() => self.kept.push((self.seen, cols.to_vec(), vals.to_vec())),
            Some(s) => self.kept[s] = (self.seen, cols.to_vec(), vals.to_vec()),
            None => {}
        }
        self.seen += 1;
    }

    /// The sample, dense `rows × p` in the order offered, with `p` the
    /// `num_features` or the largest index met in the sample.
    ///
    /// # Errors
    /// Its size; an index beyond `num_features`.
    pub fn finish(mut self, num_features: Option<usize>) -> Result<(Vec<f64>, usize), CliError> {
        self.kept.sort_unstable_by_key(|r| r.0);
        let max_index = self.kept.iter().filter_map(|r| r.1.last()).map(|&c| c as usize + 1).max().unwrap_or(0);
        let p = num_features.unwrap_or(max_index).max(1);
        crate::mem::check(
            &format!("a sample of {} rows × {p} features", self.kept.len()),
            self.kept.len().checked_mul(p),
            8,
            "give a smaller --sample",
        )?;
        let mut x = vec![0.0; self.kept.len() * p];
        for (i, (_, cols, vals)) in self.kept.iter().enumerate() {
            for (&c, &v) in cols.iter().zip(vals) {
                *x.get_mut(i * p + c as usize).filter(|_| (c as usize) < p).ok_or_else(|| {
                    CliError::input(format!("sample row {}: feature index {} beyond --num-features {p}", i + 1, c + 1))
                })? = v;
            }
        }
        Ok((x, p))
    }
}

/// A uniform sample of at most `n` rows of SVMlight files ([`Reservoir`]).
///
/// # Errors
/// The readers' errors (file and line); the size of the sample.
pub fn sample_svmlight(
    paths: &[PathBuf],
    opts: &SvmlightOptions,
    n: usize,
    seed: u64,
) -> Result<(Vec<f64>, usize), CliError> {
    let mut r = Reservoir::new(n, seed);
    for path in paths {
        stream_svmlight(path, opts, |b| {
            for row in b.rows() {
                r.offer(row.cols, row.vals);
            }
            std::ops::ControlFlow::Continue(())
        })?;
    }
    r.finish(opts.num_features)
}

/// The learner of a Nyström model from statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NystromAlgo {
    /// RLS / RankRLS on the features.
    Ls(Target),
    /// KPCR (`Target::Rls`) / KPCRank (`Target::RankRls`).
    Kpc(Target),
}

/// A cross-validation table by labelled grid point: the fold count and, per
/// point, the held-out objective of every fold.
pub type PointTable = (usize, Vec<(String, Vec<f64>)>);

/// A Nyström model from merged statistics.
pub struct NystromFit {
    /// The model.
    pub fitted: Fitted,
    /// The chosen λ.
    pub lambda: f64,
    /// The chosen number of components (KPC).
    pub components: Option<usize>,
    /// Rows and distinct qids of the merged statistics.
    pub rows: usize,
    /// Distinct qids.
    pub queries: usize,
    /// With folds: the grid and each point's held-out objective per fold
    /// (points are λ, or `λ, p` for KPC, labelled).
    pub cv: Option<PointTable>,
    /// The map, for messages and metadata.
    pub map: String,
}

/// The model of merged Nyström statistics `all` for every point of the
/// grid, the one of least mean held-out objective chosen when there are
/// folds.
///
/// # Errors
/// Bad grids; a fold without rows; an unusable grid point for the full
/// data; numerical failures.
pub fn fit_nystrom<B: Backend>(
    backend: &mut B,
    all: &Shard,
    algo: NystromAlgo,
    lambdas: &[f64],
    components: &[usize],
    cv: Option<usize>,
) -> Result<NystromFit, CliError> {
    let spec = all
        .map
        .as_ref()
        .ok_or_else(|| CliError::input(format!("{}: linear statistics, not Nyström ones", all.source)))?;
    let s = all.shape;
    let (rows, queries) = (all.rows(), all.qids.len() + all.sealed_qids.len());
    if let Some(k) = cv.filter(|&k| k != s.folds) {
        return Err(CliError::input(format!(
            "--cv {k}: the statistics of {} have {} fold(s) (set by `ranklet stats --cv`)",
            all.source, s.folds
        )));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    match algo {
        NystromAlgo::Ls(target) => {
            if !components.is_empty() {
                return Err(CliError::input("--components applies to --algo kpcr and kpcrank"));
            }
            if lambdas.len() > 1 && cv.is_none() {
                return Err(CliError::input("a grid of values (comma list) needs --cv K to choose among them"));
            }
            let (w, table) = all.solve(backend, target, lambdas)?;
            let (nl, m) = (lambdas.len(), s.d);
            let (best, cvt) = match cv {
                Some(k) => {
                    let rows: Vec<(String, Vec<f64>)> = lambdas
                        .iter()
                        .enumerate()
                        .map(|(li, l)| (format!("lambda={l}"), (0..k).map(|f| table[f * nl + li]).collect()))
                        .collect();
                    let best = (0..nl).min_by(|&a, &b| mean(&rows[a].1).total_cmp(&mean(&rows[b].1))).unwrap_or(0);
                    (best, Some((k, rows)))
                }
                None => (0, None),
            };
            Ok(NystromFit {
                fitted: spec.model(&w[best * m..(best + 1) * m], 0.0)?,
                lambda: lambdas[best],
                components: None,
                rows,
                queries,
                cv: cvt,
                map: spec.describe(),
            })
        }
        NystromAlgo::Kpc(target) => {
            if components.is_empty() {
                return Err(CliError::input("--algo kpcr/kpcrank needs --components P (or a comma list)"));
            }
            if lambdas.len() * components.len() > 1 && cv.is_none() {
                return Err(CliError::input("a grid of values (comma list) needs --cv K to choose among them"));
            }
            if let Some(&p) = components.iter().find(|&&p| p == 0 || p > s.d) {
                return Err(CliError::input(format!(
                    "--components {p}: from 1 to the {} landmarks of the statistics ({})",
                    s.d,
                    spec.describe()
                )));
            }
            let grid = Grid { lambdas, components };
            let (m, np, pts) = (s.d, components.len(), lambdas.len() * components.len());
            let (mut beta, mut offset) = (vec![0.0; pts * m], vec![0.0; pts]);
            let mut table = vec![0.0; if s.folds > 1 { s.folds * pts } else { 0 }];
            let mut work = vec![0.0; core_ns::kpc_solve_stats_workspace_len(m, s.folds, &grid)];
            core_ns::kpc_solve_stats(
                backend,
                &all.as_ref(),
                target,
                &grid,
                KpcOut { beta: &mut beta, offset: &mut offset, cv: &mut table },
                &mut work,
            )
            .map_err(|e| CliError::input(format!("{}: {e}", all.source)))?;
            let label = |pt: usize| format!("lambda={} components={}", lambdas[pt / np], components[pt % np]);
            let (best, cvt) = match cv {
                Some(k) => {
                    let rows: Vec<(String, Vec<f64>)> =
                        (0..pts).map(|pt| (label(pt), (0..k).map(|f| table[f * pts + pt]).collect())).collect();
                    // Unusable points (NaN in a fold) are never chosen.
                    let score = |pt: usize| {
                        let v = mean(&rows[pt].1);
                        if v.is_nan() || offset[pt].is_nan() {
                            f64::INFINITY
                        } else {
                            v
                        }
                    };
                    let best = (0..pts).min_by(|&a, &b| score(a).total_cmp(&score(b))).unwrap_or(0);
                    (best, Some((k, rows)))
                }
                None => (0, None),
            };
            if offset[best].is_nan() {
                return Err(CliError::input(format!(
                    "{}: {} components are more than the numerical rank of the centred Nyström features \
                     (or than a positive definite system allows); give fewer --components",
                    all.source,
                    components[best % np]
                )));
            }
            Ok(NystromFit {
                fitted: spec.model(&beta[best * m..(best + 1) * m], offset[best])?,
                lambda: lambdas[best / np],
                components: Some(components[best % np]),
                rows,
                queries,
                cv: cvt,
                map: spec.describe(),
            })
        }
    }
}

impl NystromFit {
    fn mean_std(v: &[f64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        (mean, (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt())
    }

    /// The metadata lines of the cross-validation (empty without).
    pub fn cv_meta(&self) -> String {
        let Some((k, rows)) = &self.cv else { return String::new() };
        let mut m = format!("cv={k}-fold by query hash (statistics)\ncv_metric=objective\n");
        for (i, (l, v)) in rows.iter().enumerate() {
            let (mean, std) = Self::mean_std(v);
            m.push_str(&format!("cv.{i}={l} mean={mean} std={std}\n"));
        }
        m
    }

    /// The cross-validation table the binary prints to stdout, one line
    /// each (empty without).
    pub fn cv_table(&self) -> String {
        let Some((k, rows)) = &self.cv else { return String::new() };
        let mut t = format!(
            "# cross-validation: {k}-fold by query hash (statistics), metric objective (held-out (s−f)ᵀL(s−f) per row)\n"
        );
        t.push_str("point\tmean\tstd\n");
        for (l, v) in rows {
            let (mean, std) = Self::mean_std(v);
            t.push_str(&format!("{l}\t{mean:.6}\t{std:.6}\n"));
        }
        t
    }
}

/// The map of a statistics file, for `--landmarks`: its Nyström section
/// (refused, by name, for linear statistics).
///
/// # Errors
/// An unreadable or invalid file; linear statistics.
pub fn read_map(path: &Path) -> Result<NystromSpec, CliError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
    map_from_bytes(&bytes, &name)
}

/// The map of `.rks` bytes (`name` for errors): what `--landmarks` reads
/// from a file and the Dask layer ships to its workers.
///
/// # Errors
/// Invalid bytes; linear statistics.
pub fn map_from_bytes(bytes: &[u8], name: &str) -> Result<NystromSpec, CliError> {
    let v = StatsView::new_checked(bytes).map_err(|e| CliError::input(format!("{name}: {e}")))?;
    let sect = v.nystrom().ok_or_else(|| {
        CliError::input(format!("{name}: linear statistics carry no landmarks (--landmarks reads a Nyström .rks)"))
    })?;
    NystromSpec::from_view(&sect)
}

impl NystromSpec {
    /// The map as the bytes of a `.rks` without rows (one fold, equal
    /// weighting, seed 0): a file `--landmarks` reads ([`map_from_bytes`]).
    ///
    /// # Errors
    /// Its size.
    pub fn to_rks_bytes(&self) -> Result<Vec<u8>, CliError> {
        let shape = ranklet_core::learn::ls_stats::StatsShape {
            d: self.m(),
            folds: 1,
            weight: ranklet_core::graph::QueryWeight::Equal,
        };
        let mut shard = Shard::new(shape, 0, "landmarks".to_string())?;
        shard.map = Some(self.clone());
        shard.finish();
        shard.to_bytes()
    }
}
