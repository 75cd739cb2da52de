//! `ranklet_core::special` against mpmath (`fixtures/special/normal.txt`,
//! made by `gen_normal.py` beside it: exact values at each f64 `z`, rounded
//! once to f64) over `z ∈ [−40, 40]`, to the bounds the module documents,
//! in units of `f64::EPSILON` relative to the reference. A reference that
//! is subnormal or zero (`Φ` and `r` in the far tails) is checked to
//! `f64::MIN_POSITIVE` absolutely.

use ranklet_core::special::{log_norm_cdf, norm_cdf, probit_ratio, SWITCH};

/// Rows `[z, Φ, log Φ, r, z + r]`.
fn table() -> Vec<[f64; 5]> {
    include_str!("fixtures/special/normal.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let v: Vec<f64> = l.split_whitespace().map(|t| t.parse().expect("number")).collect();
            [v[0], v[1], v[2], v[3], v[4]]
        })
        .collect()
}

/// Relative error in units of ε; subnormal or zero references must match
/// to `MIN_POSITIVE` (reported as 0 or ∞).
fn ulps(got: f64, want: f64) -> f64 {
    if want.abs() < f64::MIN_POSITIVE {
        return if (got - want).abs() <= f64::MIN_POSITIVE { 0.0 } else { f64::INFINITY };
    }
    ((got - want) / want).abs() / f64::EPSILON
}

/// The documented bounds `[z < −2.5, −2.5 ≤ z ≤ 0, z > 0]` per column
/// (Φ, log Φ, r, z + r), about 1.5× the worst error measured.
const BOUNDS: [[f64; 3]; 4] = [[3.0, 5.0, 1.0], [2.0, 2.0, 5.0], [2.0, 6.0, 3.0], [2.0, 40.0, 2.0]];

#[test]
fn normal_functions_match_mpmath_across_minus_40_to_40() {
    let rows = table();
    assert!(rows.len() > 600 && rows[0][0] == -40.0 && rows[rows.len() - 1][0] == 40.0);
    let mut worst = [[0.0f64; 3]; 4];
    for &[z, phi, log_phi, r, zr] in &rows {
        let band = if z < SWITCH {
            0
        } else if z <= 0.0 {
            1
        } else {
            2
        };
        let (gr, gzr) = probit_ratio(z);
        let got = [norm_cdf(z), log_norm_cdf(z), gr, gzr];
        for (c, (&g, w)) in got.iter().zip([phi, log_phi, r, zr]).enumerate() {
            let e = ulps(g, w);
            worst[c][band] = worst[c][band].max(e);
            assert!(e <= BOUNDS[c][band], "column {c} at z = {z}: {g:e} vs {w:e} ({e} ε)");
        }
    }
    println!(
        "worst errors in ε [z < −2.5, −2.5 ≤ z ≤ 0, z > 0]: Φ {:?}, log Φ {:?}, r {:?}, z + r {:?}",
        worst[0], worst[1], worst[2], worst[3]
    );
}
