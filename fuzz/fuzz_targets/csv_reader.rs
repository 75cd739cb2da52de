//! `parse_csv_str` on arbitrary text (invalid UTF-8 replaced by U+FFFD),
//! with the default options, `--label-col y --qid-col qid`, a qid column
//! that is also the label, and `--label-col quality` (the wine data).
//!
//! Contract under test (host-cli/src/data/mod.rs): no input makes a reader
//! panic, and a returned `Dataset` keeps its guarantees (every feature of
//! every row stored, finite, one name per feature).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ranklet::data::{parse_csv_str, CsvOptions, Dataset};

fn check(ds: &Dataset) {
    let n = ds.n_rows();
    assert!(n > 0, "a data set without rows");
    let d = ds.n_features();
    assert_eq!(ds.row_ptr().len(), n + 1);
    assert_eq!(ds.nnz(), n * d, "CSV stores every feature");
    assert!(ds.labels().iter().all(|v| v.is_finite()));
    assert!(ds.val().iter().all(|v| v.is_finite()));
    if let Some(names) = ds.feature_names() {
        assert_eq!(names.len(), d);
    }
    for i in 0..n {
        let (c, v) = ds.row(i);
        assert_eq!(c.len(), d);
        assert_eq!(v.len(), d);
        assert!(c.iter().enumerate().all(|(k, &j)| j as usize == k));
        let _ = ds.source_line(i);
        let _ = ds.qid_of_row(i);
    }
    let g = ds.query_groups();
    assert_eq!(g.rows().len(), n);
    if let Some(ids) = ds.query_ids() {
        assert_eq!(ids.len(), g.len());
    }
    if let Some(x) = ds.to_dense(1 << 16) {
        assert_eq!(x.len(), n * d);
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let opts = [
        CsvOptions::default(),
        CsvOptions { label_col: Some("y".into()), qid_col: Some("qid".into()) },
        CsvOptions { label_col: None, qid_col: Some("label".into()) },
        CsvOptions { label_col: Some("quality".into()), qid_col: None },
    ];
    for o in &opts {
        if let Ok(ds) = parse_csv_str(&text, "fuzz.csv", o) {
            check(&ds);
            assert_eq!(ds.has_qids(), o.qid_col.is_some());
        }
    }
});
