//! The Kronecker learners' readers on arbitrary text: `parse_edges_str`
//! (two domains and one), `parse_edge_matrix_str`, `parse_node_kernel_str`
//! (refusing and symmetrizing), `parse_kernel_rows_str`,
//! `parse_node_svmlight_str` and `parse_node_csv_str`, each on the whole
//! input (invalid UTF-8 replaced by U+FFFD), and `EdgeData::on_nodes` of
//! parsed edges onto parsed node sets.
//!
//! Contract under test: no panic; edges index their id lists, appear once,
//! carry finite labels, and `is_complete` agrees with a count of the pairs;
//! a kernel is square, finite and exactly symmetric, with `index_of` finding
//! every id; kernel rows are `len() × n_train()` finite values; node
//! features are CSR with strictly increasing columns `< n_features()`.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use ranklet::data::{
    parse_edge_matrix_str, parse_edges_str, parse_kernel_rows_str, parse_node_csv_str, parse_node_kernel_str,
    parse_node_svmlight_str, EdgeData, EdgeMatrixOptions, EdgeOptions, KernelOptions, MatrixLayout, NodeFeatureOptions,
    NodeFeatures,
};

fn check_edges(e: &EdgeData) {
    assert!(!e.is_empty());
    assert_eq!(e.labels().len(), e.len());
    assert!(e.labels().iter().all(|l| l.is_finite()));
    let mut seen = HashSet::new();
    for &(i, j) in e.edges() {
        assert!(i < e.n_u() && j < e.n_v(), "({i}, {j}) out of range");
        assert!(seen.insert((i, j)), "edge ({i}, {j}) twice");
    }
    if e.one_domain() {
        assert_eq!(e.u_ids(), e.v_ids());
    }
    assert_eq!(e.is_complete(), seen.len() == e.n_u() * e.n_v());
    if let Some(y) = e.label_matrix() {
        assert_eq!(y.len(), e.n_u() * e.n_v());
    }
    let t = e.transposed();
    assert_eq!((t.n_u(), t.n_v(), t.len()), (e.n_v(), e.n_u(), e.len()));
    // Onto its own node sets: the same edges.
    let on = e.on_nodes(e.u_ids(), e.v_ids()).expect("own node sets");
    assert_eq!(on.edges(), e.edges());
}

fn check_features(f: &NodeFeatures) {
    assert!(!f.is_empty());
    assert_eq!(f.row_ptr().len(), f.len() + 1);
    for i in 0..f.len() {
        let (cols, vals) = f.row(i);
        assert!(cols.windows(2).all(|w| w[0] < w[1]));
        assert!(cols.iter().all(|&c| (c as usize) < f.n_features()));
        assert!(vals.iter().all(|v| v.is_finite()));
        assert_eq!(f.index_of(&f.ids()[i]), Some(i));
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for one_domain in [false, true] {
        if let Ok(e) = parse_edges_str(&text, "fuzz.edges", &EdgeOptions { one_domain, ..EdgeOptions::default() }) {
            check_edges(&e);
        }
        for layout in [MatrixLayout::Auto, MatrixLayout::Labelled, MatrixLayout::Bare] {
            if let Ok(e) = parse_edge_matrix_str(&text, "fuzz.matrix", &EdgeMatrixOptions { one_domain, layout }) {
                check_edges(&e);
                assert!(e.is_complete());
            }
        }
    }
    let mut kernel_ids = None;
    for symmetrize in [false, true] {
        if let Ok(k) =
            parse_node_kernel_str(&text, "fuzz.kernel", &KernelOptions { symmetrize, layout: MatrixLayout::Auto })
        {
            let n = k.len();
            assert!(n > 0);
            assert_eq!(k.values().len(), n * n);
            for i in 0..n {
                assert_eq!(k.index_of(&k.ids()[i]), Some(i));
                for j in 0..n {
                    assert!(k.get(i, j).is_finite());
                    assert_eq!(k.get(i, j).to_bits(), k.get(j, i).to_bits(), "not exactly symmetric");
                }
            }
            kernel_ids = Some(k.ids().to_vec());
        }
    }
    let train: Vec<String> = kernel_ids.unwrap_or_else(|| ["a", "b", "0", "1"].map(String::from).to_vec());
    if let Ok(r) = parse_kernel_rows_str(&text, "fuzz.rows", &train, MatrixLayout::Auto) {
        assert_eq!(r.n_train(), train.len());
        assert_eq!(r.values().len(), r.len() * r.n_train());
        assert!(r.values().iter().all(|v| v.is_finite()));
    }
    let svm = parse_node_svmlight_str(&text, "fuzz.nodes", &NodeFeatureOptions::default());
    if let Ok(f) = &svm {
        check_features(f);
    }
    if let Ok(f) = parse_node_csv_str(&text, "fuzz.csv") {
        check_features(&f);
    }
    // Edges of a fixed file onto parsed nodes: Ok only if every node is known.
    let fixed = parse_edges_str("a b 1\n0 1 2\n", "fixed", &EdgeOptions::default()).expect("fixed edges");
    if let Ok(f) = &svm {
        if let Ok(on) = fixed.on_nodes(f.ids(), f.ids()) {
            assert_eq!(on.n_u(), f.len());
            check_edges(&on);
        }
    }
});
