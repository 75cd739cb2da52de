//! Simulated users for the on-device learner
//! ([`ranklet_core::learn::online::OnlineRankRls`]): a user who answers
//! "which of these two do you prefer?" by a hidden true ranking, asked by
//! the learner's next-pair rule (paper 001 §5, `--active`) or at random
//! (`--random`), starting from a host-trained prior. The learner runs in
//! `f32`, as on a device.
//!
//! One simulated user: the items are shuffled and split into a held-out
//! test set (`test_frac` of them) and a pool. Every round draws
//! `candidates` items from the pool (the items the device has at hand,
//! e.g. the current menu); the rule picks a pair among them, the user
//! answers by the oracle scores, and the learner observes the answer. A
//! pair the oracle scores equal is answered "same" and teaches nothing,
//! but counts as a question asked, for both rules. After every `every`
//! answers the held-out disagreement (000 eq. 4, ties ½) of the learner's
//! weights over the test items is recorded.

use ranklet_core::format::{ElementType, ModelSpec, ModelView};
use ranklet_core::learn::online::OnlineRankRls;

use crate::error::CliError;
use crate::metric::Metric;
use crate::rng::SplitMix64;

/// How the next question is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The pair with the largest variance / squared mean difference of the
    /// score difference (001 §5).
    Active,
    /// A uniformly random pair of the candidates.
    Random,
}

impl Rule {
    /// The name in tables and legends.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Active => "active",
            Rule::Random => "random",
        }
    }
}

/// What one simulation run needs.
#[derive(Clone, Debug)]
pub struct Setup<'a> {
    /// Items, `n × d` row-major, `f32` as on the device.
    pub x: &'a [f32],
    /// Feature dimension.
    pub d: usize,
    /// The hidden true scores (higher is preferred), one per item.
    pub oracle: &'a [f64],
    /// The prior model file (a linear model).
    pub prior: &'a [u8],
    /// Ridge towards the prior.
    pub lambda: f32,
    /// Questions per user.
    pub rounds: usize,
    /// Record the held-out error after every this many answers.
    pub every: usize,
    /// Items drawn from the pool per question.
    pub candidates: usize,
    /// Fraction of the items held out for testing.
    pub test_frac: f64,
}

/// The learning curve of one user: held-out disagreement after 0, every,
/// 2·every, … answers.
pub type Curve = Vec<f64>;

/// What one simulated user ends with.
pub struct Run {
    /// The learning curve.
    pub curve: Curve,
    /// Questions answered "same" (equal oracle scores): asked, but nothing
    /// learned.
    pub ties: usize,
    /// The `.rkl` file of the final state, if asked for.
    pub state: Option<Vec<u8>>,
}

/// The CLI's splitmix64 stream, with the draws the simulation needs.
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// The first `k` entries of `v` become a uniform random sample.
    fn partial_shuffle(&mut self, v: &mut [usize], k: usize) {
        for i in 0..k.min(v.len()) {
            let j = i + self.below(v.len() - i);
            v.swap(i, j);
        }
    }
}

impl Setup<'_> {
    fn n(&self) -> usize {
        self.oracle.len()
    }

    fn row(&self, i: usize) -> &[f32] {
        &self.x[i * self.d..(i + 1) * self.d]
    }

    /// Checks the setup once, before any user runs.
    pub fn check(&self) -> Result<(), CliError> {
        let n = self.n();
        if n < 4 || self.x.len() != n * self.d {
            return Err(CliError::input(format!("need at least 4 items with {} features each", self.d)));
        }
        if !(self.test_frac > 0.0 && self.test_frac < 1.0) {
            return Err(CliError::input("--test-frac must be in (0, 1)"));
        }
        let n_test = self.n_test();
        if n_test < 2 || n - n_test < 2 {
            return Err(CliError::input("--test-frac leaves fewer than 2 test or 2 pool items"));
        }
        if self.candidates < 2 {
            return Err(CliError::input("--candidates must be at least 2"));
        }
        if self.every == 0 {
            return Err(CliError::input("--every must be at least 1"));
        }
        let mut storage = self.storage();
        self.start(&mut storage).map(|_| ())
    }

    fn n_test(&self) -> usize {
        ((self.n() as f64) * self.test_frac).round() as usize
    }

    fn storage(&self) -> Vec<f32> {
        vec![0f32; OnlineRankRls::<f32>::storage_len(self.d)]
    }

    /// A learner at the prior, in `storage`, and the prior's offset.
    fn start<'s>(&self, storage: &'s mut [f32]) -> Result<(OnlineRankRls<'s, f32>, f64), CliError> {
        let view = ModelView::new_checked(self.prior).map_err(|e| CliError::input(format!("prior: {e}")))?;
        if view.dim() != self.d {
            return Err(CliError::input(format!("the prior has {} features, the items {}", view.dim(), self.d)));
        }
        let prior_id = crate::model_io::crc_of(self.prior);
        OnlineRankRls::from_linear_model(storage, &view, self.lambda, prior_id)
            .map_err(|e| CliError::input(format!("prior: {e}")))
    }

    /// Held-out disagreement of the learner's current weights.
    fn test_error(&self, learner: &OnlineRankRls<'_, f32>, test: &[usize]) -> Result<f64, CliError> {
        let labels: Vec<f64> = test.iter().map(|&i| self.oracle[i]).collect();
        let preds = test
            .iter()
            .map(|&i| learner.score(self.row(i)).map(f64::from))
            .collect::<Result<Vec<f64>, _>>()
            .map_err(CliError::from)?;
        Metric::Disagreement.eval_labels(&labels, &preds, &[0, test.len()])
    }

    /// Runs one simulated user (seeded by `seed`) under `rule`; with
    /// `keep_state`, also the `.rkl` file of the state it ends in.
    pub fn run(&self, rule: Rule, seed: u64, keep_state: bool) -> Result<Run, CliError> {
        let mut storage = self.storage();
        let (mut learner, offset) = self.start(&mut storage)?;
        let mut rng = Rng(SplitMix64(seed));
        let mut order: Vec<usize> = (0..self.n()).collect();
        rng.partial_shuffle(&mut order, self.n());
        let (test, pool) = order.split_at(self.n_test());
        let mut pool = pool.to_vec();
        let c = self.candidates.min(pool.len());
        let mut cand_rows = vec![0f32; c * self.d];
        let mut work = vec![0f32; OnlineRankRls::<f32>::next_pair_workspace_len(c, self.d)];
        let mut curve = vec![self.test_error(&learner, test)?];
        let mut ties = 0;
        for round in 1..=self.rounds {
            rng.partial_shuffle(&mut pool, c);
            let cand = &pool[..c];
            let (a, b) = match rule {
                Rule::Random => {
                    let a = rng.below(c);
                    let b = (a + 1 + rng.below(c - 1)) % c;
                    (a, b)
                }
                Rule::Active => {
                    for (k, &i) in cand.iter().enumerate() {
                        cand_rows[k * self.d..(k + 1) * self.d].copy_from_slice(self.row(i));
                    }
                    let best = learner
                        .next_pair(&cand_rows, c, &mut work)
                        .map_err(|e| CliError::failure(format!("next pair: {e}")))?;
                    match best {
                        Some((a, b, _)) => (a, b),
                        None => (0, 1),
                    }
                }
            };
            let (i, j) = (cand[a], cand[b]);
            let (yi, yj) = (self.oracle[i], self.oracle[j]);
            if yi == yj {
                ties += 1;
            } else {
                let (w, l) = if yi > yj { (i, j) } else { (j, i) };
                learner
                    .observe(self.row(w), self.row(l), 1.0)
                    .map_err(|e| CliError::failure(format!("observe: {e}")))?;
            }
            if round % self.every == 0 {
                curve.push(self.test_error(&learner, test)?);
            }
        }
        let state = keep_state
            .then(|| {
                let spec = ModelSpec::new(learner.to_model(offset), ElementType::F32);
                let mut buf = vec![0u8; spec.buffer_len()];
                spec.emit(&mut buf).map(|_| buf)
            })
            .transpose()
            .map_err(|e| CliError::failure(format!("state: {e}")))?;
        Ok(Run { curve, ties, state })
    }
}

/// Mean and standard deviation of the curves, point by point.
pub fn mean_std(curves: &[Curve]) -> (Vec<f64>, Vec<f64>) {
    let len = curves.iter().map(Vec::len).min().unwrap_or(0);
    let k = curves.len().max(1) as f64;
    (0..len)
        .map(|t| {
            let m = curves.iter().map(|c| c[t]).sum::<f64>() / k;
            let v = curves.iter().map(|c| (c[t] - m).powi(2)).sum::<f64>() / (k - 1.0).max(1.0);
            (m, v.sqrt())
        })
        .unzip()
}

/// The first number of answers at which `curve` (points every `every`
/// answers) is at or below `target`.
pub fn answers_to_reach(curve: &[f64], target: f64, every: usize) -> Option<usize> {
    curve.iter().position(|&e| e <= target).map(|t| t * every)
}
