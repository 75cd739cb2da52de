//! `parse_svmlight_str` on arbitrary text (invalid UTF-8 replaced by U+FFFD).
//!
//! Contract under test (host-cli/src/data/mod.rs): no input makes a reader
//! panic, and a returned `Dataset` keeps its guarantees (CSR with strictly
//! increasing 0-based columns `< n_features()`, finite labels and values,
//! qids on every row or none). A file read with its own dimension as
//! `num_features` reads the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ranklet::data::{parse_svmlight_str, Dataset, SvmlightOptions};

fn check(ds: &Dataset) {
    let n = ds.n_rows();
    assert!(n > 0, "a data set without rows");
    let d = ds.n_features();
    let ptr = ds.row_ptr();
    assert_eq!(ptr.len(), n + 1);
    assert_eq!(ptr[0], 0);
    assert_eq!(ptr[n], ds.nnz());
    assert_eq!(ds.col().len(), ds.nnz());
    assert_eq!(ds.labels().len(), n);
    assert!(ds.labels().iter().all(|v| v.is_finite()));
    assert!(ds.val().iter().all(|v| v.is_finite()));
    for i in 0..n {
        let (c, v) = ds.row(i);
        assert_eq!(c.len(), v.len());
        assert!(c.iter().all(|&j| (j as usize) < d), "column >= n_features");
        assert!(c.windows(2).all(|w| w[0] < w[1]), "columns not strictly increasing");
        let _ = ds.source_line(i);
        let _ = ds.qid_of_row(i);
    }
    let g = ds.query_groups();
    assert_eq!(g.rows().len(), n);
    let mut seen = vec![false; n];
    for q in g.iter() {
        for &r in q {
            assert!(!std::mem::replace(&mut seen[r], true), "row in two queries");
        }
    }
    assert!(seen.iter().all(|&s| s), "row in no query");
    if let Some(ids) = ds.query_ids() {
        assert_eq!(ids.len(), g.len());
    }
    let _ = ds.feature_names();
    let _ = ds.dense_len();
    if let Some(x) = ds.to_dense(1 << 16) {
        assert_eq!(x.len(), n * d);
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(ds) = parse_svmlight_str(&text, "fuzz.svm", &SvmlightOptions::default()) else {
        return;
    };
    check(&ds);
    let d = ds.n_features();
    let again = parse_svmlight_str(&text, "fuzz.svm", &SvmlightOptions { num_features: Some(d) })
        .expect("file rejected with its own dimension");
    assert_eq!(again, ds);
    if let Ok(wider) = parse_svmlight_str(&text, "fuzz.svm", &SvmlightOptions { num_features: Some(d + 5) }) {
        check(&wider);
        assert_eq!(wider.n_features(), d + 5);
    }
    if ds.nnz() > 0 && d > 0 {
        // The largest index is d, so d − 1 features must be refused.
        let narrower = parse_svmlight_str(&text, "fuzz.svm", &SvmlightOptions { num_features: Some(d - 1) });
        assert!(narrower.is_err(), "index beyond num_features accepted");
    }
});
