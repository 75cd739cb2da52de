//! nalgebra as an independent reference (nalgebra is a dev-dependency of
//! ranklet-core, so these run in `cargo test --workspace` without features).
//!
//! - `SymEigen<f32, N>` against nalgebra's `SymmetricEigen` at N = 8, 16, 32,
//!   64 on random, clustered and graded matrices, both measured against
//!   nalgebra's f64 decomposition of the same (f32-rounded) matrix.
//!
//!   Tolerance: both solvers are backward stable, so each computed eigenvalue
//!   is an exact eigenvalue of A + E with ‖E‖₂ ≤ c·N·ε·‖A‖₂ (Householder
//!   reduction and QL/QR rotations, c a small constant; Golub & Van Loan
//!   §8.3), and by Weyl's inequality |λ̂ − λ| ≤ ‖E‖₂. With ε = 2⁻²³ for f32
//!   we require c = 2 for ours: |λ̂ − λ| ≤ 2·N·ε·‖A‖₂ (at N = 64: 1.5e-5·‖A‖₂;
//!   measured ≤ 1.5e-6), and the same bound on ‖A·v − λ·v‖_∞ and on
//!   |vᵢᵀvⱼ − δᵢⱼ|.
//! - With feature `nalgebra`: matrices round-tripped between core's views and
//!   nalgebra's views in every layout core accepts.

use nalgebra::{SMatrix, SymmetricEigen};
use ranklet_core::eigen::fixed::SymEigen;
use ranklet_core::eigen::EigenParams;

#[path = "support/sym_matrices.rs"]
mod sym_matrices;
use sym_matrices::{clustered, graded, random_sym, Rng};

struct Report {
    ours_eig: f64,
    nal_eig: f64,
    ours_res: f64,
    ours_orth: f64,
}

macro_rules! compare {
    ($n:literal, $make:expr, $rep:expr) => {{
        const N: usize = $n;
        let mut rng = Rng(0x2545_F491_4F6C_DD1D ^ N as u64);
        let mut s = Box::new(SymEigen::<f32, N>::new());
        for _ in 0..4 {
            let a32: Vec<f32> = $make(N, &mut rng).iter().map(|&x| x as f32).collect();
            let a: Vec<f64> = a32.iter().map(|&x| x as f64).collect();
            let mut reference: Vec<f64> =
                SymmetricEigen::new(SMatrix::<f64, N, N>::from_column_slice(&a)).eigenvalues.iter().copied().collect();
            reference.sort_by(f64::total_cmp);
            let norm = reference[0].abs().max(reference[N - 1].abs());

            s.compute(&a32, N, &EigenParams::default()).unwrap();
            let mut nal: Vec<f64> = SymmetricEigen::new(SMatrix::<f32, N, N>::from_column_slice(&a32))
                .eigenvalues
                .iter()
                .map(|&x| x as f64)
                .collect();
            nal.sort_by(f64::total_cmp);
            for k in 0..N {
                $rep.ours_eig = $rep.ours_eig.max((s.values()[k] as f64 - reference[k]).abs() / norm);
                $rep.nal_eig = $rep.nal_eig.max((nal[k] - reference[k]).abs() / norm);
            }
            for j in 0..N {
                let v = s.vector(j).unwrap();
                for i in 0..N {
                    let av: f64 = (0..N).map(|p| a[i + p * N] * v[p] as f64).sum();
                    $rep.ours_res = $rep.ours_res.max((av - s.values()[j] as f64 * v[i] as f64).abs() / norm);
                    let vi = s.vector(i).unwrap();
                    let d: f64 = vi.iter().zip(v).map(|(x, y)| *x as f64 * *y as f64).sum();
                    $rep.ours_orth = $rep.ours_orth.max((d - if i == j { 1.0 } else { 0.0 }).abs());
                }
            }
        }
        let bound = 2.0 * N as f64 * f32::EPSILON as f64;
        eprintln!(
            "N = {N:>2}: max |λ−λref|/‖A‖ ours {:.1e}, nalgebra {:.1e}; ours residual {:.1e}, orthogonality {:.1e} (bound {bound:.1e})",
            $rep.ours_eig, $rep.nal_eig, $rep.ours_res, $rep.ours_orth
        );
        assert!($rep.ours_eig <= bound, "N = {N}: eigenvalue error {:e} > {bound:e}", $rep.ours_eig);
        assert!($rep.ours_res <= bound, "N = {N}: residual {:e} > {bound:e}", $rep.ours_res);
        assert!($rep.ours_orth <= bound, "N = {N}: orthogonality {:e} > {bound:e}", $rep.ours_orth);
        // Against nalgebra itself: ours at most twice its eigenvalue error
        // (with a floor of 4ε for cells where both are at rounding level);
        // measured: ours ≤ nalgebra in 11 of 12 benchmark cells.
        let vs_nal = 2.0 * $rep.nal_eig.max(4.0 * f32::EPSILON as f64);
        assert!($rep.ours_eig <= vs_nal, "N = {N}: eigenvalue error {:e} > 2 × nalgebra's ({:e})", $rep.ours_eig, $rep.nal_eig);
    }};
}

fn run(kind: &str, make: fn(usize, &mut Rng) -> Vec<f64>) {
    eprintln!("{kind}:");
    for_each_n(make);
}

fn for_each_n(make: fn(usize, &mut Rng) -> Vec<f64>) {
    let new = || Report { ours_eig: 0.0, nal_eig: 0.0, ours_res: 0.0, ours_orth: 0.0 };
    let mut r = new();
    compare!(8, make, r);
    let mut r = new();
    compare!(16, make, r);
    let mut r = new();
    compare!(32, make, r);
    let mut r = new();
    compare!(64, make, r);
}

#[test]
fn fixed_solver_matches_nalgebra_on_random_matrices() {
    run("random", random_sym);
}

#[test]
fn fixed_solver_matches_nalgebra_on_clustered_eigenvalues() {
    run("clustered", clustered);
}

#[test]
fn fixed_solver_matches_nalgebra_on_graded_matrices() {
    run("graded", graded);
}

#[cfg(feature = "nalgebra")]
mod views {
    use nalgebra::DMatrix;
    use proptest::prelude::*;
    use ranklet_core::interop_nalgebra::{mat_mut, mat_ref, view, view_mut};
    use ranklet_core::{MatMut, MatRef};

    /// (row stride, column stride, buffer length) for an nr × nc view in
    /// `layout`: 0 column-major, 1 row-major, 2 column-major with padding,
    /// 3 row-major with padding.
    fn layout(nr: usize, nc: usize, layout: u8, pad: usize) -> (usize, usize, usize) {
        let (rs, cs) = match layout {
            0 => (1, nr.max(1)),
            1 => (nc.max(1), 1),
            2 => (1, nr.max(1) + pad),
            _ => (nc.max(1) + pad, 1),
        };
        let len = if nr == 0 || nc == 0 { 0 } else { (nr - 1) * rs + (nc - 1) * cs + 1 + pad };
        (rs, cs, len)
    }

    proptest! {
        #[test]
        fn round_trip_through_core_and_nalgebra_views(
            nr in 0usize..7, nc in 0usize..7, lay in 0u8..4, pad in 0usize..3, transpose in any::<bool>()
        ) {
            let (rs, cs, len) = layout(nr, nc, lay, pad);
            let buf: Vec<f64> = (0..len).map(|k| k as f64 + 0.5).collect();
            let mut m = MatRef::new(&buf, nr, nc, rs, cs).unwrap();
            if transpose {
                m = m.t();
            }
            // core → nalgebra: the same elements.
            let v = view(m).unwrap();
            prop_assert_eq!((v.nrows(), v.ncols()), (m.nrows(), m.ncols()));
            for j in 0..m.ncols() {
                for i in 0..m.nrows() {
                    prop_assert_eq!(v[(i, j)], m.at(i, j));
                }
            }
            // nalgebra (owned) → core: the same elements again.
            let owned: DMatrix<f64> = v.clone_owned();
            let back = mat_ref(&owned).unwrap();
            for j in 0..m.ncols() {
                for i in 0..m.nrows() {
                    prop_assert_eq!(back.at(i, j), m.at(i, j));
                }
            }
            // Writes through a mutable nalgebra view land in core's buffer at
            // the view's offsets and nowhere else.
            let mut wbuf = buf.clone();
            let mut mm = MatMut::new(&mut wbuf, nr, nc, rs, cs).unwrap();
            {
                let mut vm = view_mut(&mut mm).unwrap();
                vm.iter_mut().for_each(|x| *x = -*x);
            }
            for (k, (x, y)) in wbuf.iter().zip(&buf).enumerate() {
                let inside = nr > 0 && nc > 0 && (0..nr).any(|i| (0..nc).any(|j| i * rs + j * cs == k));
                prop_assert_eq!(*x, if inside { -*y } else { *y }, "offset {}", k);
            }
            // And core's mutable view of an owned nalgebra matrix writes into it.
            let mut owned = owned;
            let (r, c) = (owned.nrows(), owned.ncols());
            let mut cm = mat_mut(&mut owned).unwrap();
            for j in 0..c {
                for i in 0..r {
                    *cm.at_mut(i, j) = (i * 10 + j) as f64;
                }
            }
            for j in 0..c {
                for i in 0..r {
                    prop_assert_eq!(owned[(i, j)], (i * 10 + j) as f64);
                }
            }
        }
    }
}
