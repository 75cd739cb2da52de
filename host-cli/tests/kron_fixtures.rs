//! The Kronecker reference fixtures (`tests/fixtures/kron/`, RLScore's
//! KronRLS / CGKronRLS, see the README there) read with ranklet's readers,
//! and the conventions the README states re-checked on them: which index is
//! u and which v, what system each dual vector solves, how predictions on
//! new nodes are formed. No learner is involved; these tests pin the data
//! layer and the write-up the learners are matched against.

use std::path::PathBuf;

use ranklet::data::{
    read_edges, read_kernel_rows, read_node_csv, read_node_kernel, EdgeData, EdgeOptions, KernelOptions, KernelRows,
    MatrixLayout, NodeKernel,
};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kron").join(name)
}

struct Problem {
    ku: NodeKernel,
    kv: NodeKernel,
    ku_test: KernelRows,
    kv_test: KernelRows,
}

fn problem() -> Problem {
    let ku = read_node_kernel(fixture("k_u.tsv"), &KernelOptions::default()).unwrap();
    let kv = read_node_kernel(fixture("k_v.tsv"), &KernelOptions::default()).unwrap();
    let ku_test = read_kernel_rows(fixture("k_u_test.tsv"), ku.ids(), MatrixLayout::Auto).unwrap();
    let kv_test = read_kernel_rows(fixture("k_v_test.tsv"), kv.ids(), MatrixLayout::Auto).unwrap();
    Problem { ku, kv, ku_test, kv_test }
}

/// Edges (or per-edge values) in the edges format, on the training nodes.
fn edges_on(name: &str, u: &[String], v: &[String]) -> EdgeData {
    read_edges(fixture(name), &EdgeOptions::default()).unwrap().on_nodes(u, v).unwrap()
}

fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// `P[i, j] = Σ_e Ku_test[i, r_e] · Kv_test[j, c_e] · a_e`, row-major
/// `n_u_test × n_v_test`.
fn predict(p: &Problem, edges: &[(usize, usize)], a: &[f64]) -> Vec<f64> {
    let (nt_u, nt_v) = (p.ku_test.len(), p.kv_test.len());
    let mut out = vec![0.0; nt_u * nt_v];
    for i in 0..nt_u {
        for j in 0..nt_v {
            out[i * nt_v + j] =
                edges.iter().zip(a).map(|(&(r, c), &ae)| p.ku_test.row(i)[r] * p.kv_test.row(j)[c] * ae).sum();
        }
    }
    out
}

/// `G a − y` with `G[e, f] = Ku[r_e, r_f] · Kv[c_e, c_f] + λ δ_ef`.
fn dual_residual(p: &Problem, edges: &[(usize, usize)], a: &[f64], y: &[f64], lambda: f64) -> Vec<f64> {
    edges
        .iter()
        .enumerate()
        .map(|(e, &(re, ce))| {
            let ga: f64 = edges.iter().zip(a).map(|(&(rf, cf), &af)| p.ku.get(re, rf) * p.kv.get(ce, cf) * af).sum();
            ga + lambda * a[e] - y[e]
        })
        .collect()
}

/// Predictions file on the new nodes as a row-major `n_u_test × n_v_test`
/// matrix.
fn predictions(p: &Problem, name: &str) -> Vec<f64> {
    let e = edges_on(name, p.ku_test.ids(), p.kv_test.ids());
    assert!(e.is_complete(), "{name}");
    e.label_matrix().unwrap()
}

#[test]
fn inputs_read_and_kernels_match_the_node_features() {
    let p = problem();
    assert_eq!((p.ku.len(), p.kv.len(), p.ku_test.len(), p.kv_test.len()), (9, 7, 4, 3));
    assert!(p.ku.asymmetry().is_none() && p.kv.asymmetry().is_none());
    let xu = read_node_csv(fixture("nodes_u.csv")).unwrap();
    let xv = read_node_csv(fixture("nodes_v.csv")).unwrap();
    assert_eq!((xu.len(), xu.n_features(), xv.len(), xv.n_features()), (13, 4, 10, 3));
    let (du, dv) = (xu.to_dense(1000).unwrap(), xv.to_dense(1000).unwrap());
    let row = |x: &[f64], d: usize, i: usize| x[i * d..(i + 1) * d].to_vec();
    let rbf = |a: &[f64], b: &[f64]| (-0.3 * a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>()).exp();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    for (i, id) in p.ku.ids().iter().enumerate() {
        let xi = row(&du, 4, xu.index_of(id).unwrap());
        for (k, kid) in p.ku.ids().iter().enumerate() {
            assert!((p.ku.get(i, k) - rbf(&xi, &row(&du, 4, xu.index_of(kid).unwrap()))).abs() < 1e-13);
        }
    }
    for (i, id) in p.kv_test.ids().iter().enumerate() {
        let xi = row(&dv, 3, xv.index_of(id).unwrap());
        for (k, kid) in p.kv.ids().iter().enumerate() {
            assert!((p.kv_test.row(i)[k] - dot(&xi, &row(&dv, 3, xv.index_of(kid).unwrap()))).abs() < 1e-12);
        }
    }
}

#[test]
fn kronrls_dual_solves_ku_a_kv_plus_lambda_a_eq_y() {
    let p = problem();
    let edges = edges_on("complete_edges.txt", p.ku.ids(), p.kv.ids());
    assert!(edges.is_complete());
    let y = edges.label_matrix().unwrap(); // Y[i * n_v + j]: label of (u_i, v_j)
    let (nu, nv) = (p.ku.len(), p.kv.len());
    for (lambda, tag, tol) in [(0.5, "lam0.5", 1e-12), (0.001, "lam0.001", 1e-9)] {
        let dual = edges_on(&format!("kronrls_{tag}_dual.txt"), p.ku.ids(), p.kv.ids());
        let a = dual.label_matrix().unwrap();
        // (K_u A K_v)[i, j] + λ A[i, j] − Y[i, j]
        let mut res = vec![0.0; nu * nv];
        for i in 0..nu {
            for j in 0..nv {
                let mut s = lambda * a[i * nv + j] - y[i * nv + j];
                for k in 0..nu {
                    for l in 0..nv {
                        s += p.ku.get(i, k) * a[k * nv + l] * p.kv.get(l, j);
                    }
                }
                res[i * nv + j] = s;
            }
        }
        assert!(max_abs(&res) < tol, "{tag}: residual {}", max_abs(&res));
        // The same coefficients as per-edge duals solve G a = y.
        let r = dual_residual(&p, dual.edges(), dual.labels(), edges.labels(), lambda);
        assert!(max_abs(&r) < tol, "{tag}");
        let want = predictions(&p, &format!("kronrls_{tag}_pred_test.txt"));
        let got = predict(&p, dual.edges(), dual.labels());
        let diff: Vec<f64> = got.iter().zip(&want).map(|(g, w)| g - w).collect();
        assert!(max_abs(&diff) < 1e-12, "{tag}: predictions differ by {}", max_abs(&diff));
    }
}

#[test]
fn cgkronrls_duals_are_per_edge_in_file_order_and_converge_to_the_exact_solve() {
    let p = problem();
    for graph in ["complete", "incomplete"] {
        let edges = edges_on(&format!("{graph}_edges.txt"), p.ku.ids(), p.kv.ids());
        assert_eq!(edges.is_complete(), graph == "complete");
        for (lambda, tag, tol) in [(0.5, "lam0.5", 1e-12), (0.001, "lam0.001", 1e-8)] {
            let exact = edges_on(&format!("{graph}_{tag}_exact_dual.txt"), p.ku.ids(), p.kv.ids());
            assert_eq!(exact.edges(), edges.edges(), "{graph} {tag}: the duals follow the edges file's order");
            let r = dual_residual(&p, exact.edges(), exact.labels(), edges.labels(), lambda);
            assert!(max_abs(&r) < tol, "{graph} {tag}: exact residual {}", max_abs(&r));
            for it in [10, 20, 50] {
                let name = format!("{graph}_{tag}_cgkronrls_it{it}");
                let a = edges_on(&format!("{name}_dual.txt"), p.ku.ids(), p.kv.ids());
                assert_eq!(a.edges(), edges.edges(), "{name}");
                let want = predictions(&p, &format!("{name}_pred_test.txt"));
                let got = predict(&p, a.edges(), a.labels());
                let diff: Vec<f64> = got.iter().zip(&want).map(|(g, w)| g - w).collect();
                assert!(max_abs(&diff) < 1e-10, "{name}: predictions differ by {}", max_abs(&diff));
                let cg = edges_on(&format!("{graph}_{tag}_cg_it{it}_dual.txt"), p.ku.ids(), p.kv.ids());
                assert_eq!(cg.edges(), edges.edges());
                if it == 50 {
                    // MINRES stopped by itself (29–33 iterations): converged.
                    let d: Vec<f64> = a.labels().iter().zip(exact.labels()).map(|(x, y)| x - y).collect();
                    assert!(max_abs(&d) < tol * max_abs(exact.labels()).max(1.0), "{name}: {}", max_abs(&d));
                }
            }
        }
    }
}
