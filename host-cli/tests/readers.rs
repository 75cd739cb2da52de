//! Data readers against the shared real data and hostile fixtures
//! (`tests/fixtures/data/`).

use std::path::PathBuf;

use proptest::prelude::*;
use ranklet::data::{
    parse_csv_str, parse_items_str, parse_orders_str, parse_pairs_str, parse_svmlight_str, read_csv, read_items,
    read_orders, read_pairs, read_svmlight, CsvOptions, DataError, Dataset, ErrorKind, SvmlightOptions,
};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/data").join(name)
}

/// `data/` of the repository (copies of `../shared/data/`, licences beside them).
fn shared(rel: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data").join(rel);
    assert!(p.exists(), "shared data file {} is missing", p.display());
    p
}

fn svm(path: &PathBuf) -> Result<Dataset, DataError> {
    read_svmlight(path, &SvmlightOptions::default())
}

fn csv_label(label: &str) -> CsvOptions {
    CsvOptions { label_col: Some(label.to_owned()), qid_col: None, ..Default::default() }
}

#[test]
fn parse_rank_train_and_test() {
    let train = svm(&shared("parse-rank/rank_train.light")).unwrap();
    assert_eq!(train.n_rows(), 100);
    assert_eq!(train.n_features(), 195_094);
    assert_eq!(train.query_groups().len(), 22);
    assert_eq!(train.query_ids().unwrap()[0], "10");
    assert_eq!(train.row(0).0[0], 279); // "280:1.0", 0-based
    assert_eq!(train.row(0).1[0], 1.0);

    let test = svm(&shared("parse-rank/rank_test.light")).unwrap();
    assert_eq!(test.n_rows(), 100);
    assert_eq!(test.n_features(), 195_097);
    assert_eq!(test.query_groups().len(), 20);

    // Test data against the train dimension: the test file uses indices the
    // train file does not reach, which must be reported, not dropped.
    let opts = SvmlightOptions { num_features: Some(train.n_features()), ..Default::default() };
    let e = read_svmlight(shared("parse-rank/rank_test.light"), &opts).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::FeatureIndex);
    assert!(e.to_string().contains("rank_test.light:"), "{e}");
    assert!(e.to_string().contains("195094 features"), "{e}");
    // With a large enough dimension the test file reads with that dimension.
    let opts = SvmlightOptions { num_features: Some(200_000), ..Default::default() };
    let ds = read_svmlight(shared("parse-rank/rank_test.light"), &opts).unwrap();
    assert_eq!(ds.n_features(), 200_000);
}

#[test]
fn wine_csv_matches_wine_svmlight() {
    let csv = read_csv(shared("wine-quality/winequality_red.csv"), &csv_label("quality")).unwrap();
    assert_eq!((csv.n_rows(), csv.n_features()), (1599, 11));
    assert_eq!(csv.feature_names().unwrap()[0], "fixed acidity");
    assert_eq!(csv.query_groups().len(), 1);

    let svm = svm(&shared("wine-quality/winequality_red.svmlight")).unwrap();
    assert_eq!((svm.n_rows(), svm.n_features()), (1599, 11));
    assert_eq!(csv.labels(), svm.labels());
    assert_eq!(csv.to_dense(1 << 20), svm.to_dense(1 << 20));

    // Without --label-col the wine file has no "label" column.
    let e = read_csv(shared("wine-quality/winequality_red.csv"), &CsvOptions::default()).unwrap_err();
    assert_eq!((e.kind(), e.line()), (ErrorKind::Unknown, Some(1)));
    assert!(e.to_string().contains("\"quality\""), "{e}");
}

#[test]
fn non_contiguous_queries_group_in_first_appearance_order() {
    let ds = svm(&fixture("noncontiguous.light")).unwrap();
    assert_eq!(ds.n_rows(), 6);
    assert_eq!(ds.n_features(), 4);
    assert_eq!(ds.query_ids().unwrap(), &["7", "3", "9"]);
    let g = ds.query_groups();
    let groups: Vec<&[usize]> = g.iter().collect();
    assert_eq!(groups, vec![&[0, 2, 5][..], &[1, 3][..], &[4][..]]);
    assert_eq!(g.query_ptr(), &[0, 3, 5, 6]);
    // Rows stay in input order; each knows its line.
    assert_eq!(ds.labels(), &[2.0, 1.0, 0.0, 1.0, 3.0, 1.0]);
    let lines: Vec<usize> = (0..6).map(|i| ds.source_line(i)).collect();
    assert_eq!(lines, vec![2, 3, 5, 6, 7, 8]);
    assert_eq!(ds.qid_of_row(5), Some("7"));
}

#[test]
fn quoted_csv_with_qid_column() {
    let opts = CsvOptions { label_col: None, qid_col: Some("q".into()), ..Default::default() };
    let ds = read_csv(fixture("quoted.csv"), &opts).unwrap();
    assert_eq!(ds.feature_names().unwrap(), &["name, with comma", "say \"hi\""]);
    assert_eq!(ds.labels(), &[3.0, 6.0, 9.0]);
    assert_eq!(ds.to_dense(100).unwrap(), vec![1.0, 2.0, 4.0, 5.0, 7.0, 8.0]);
    let g = ds.query_groups();
    assert_eq!(g.query(0), &[0, 2]);
    assert_eq!(g.query(1), &[1]);
}

#[test]
fn pairs_items_and_orders_that_are_fine() {
    let p = read_pairs(fixture("pairs_ok.txt"), 3).unwrap();
    assert_eq!(p.len(), 4, "duplicates and contradictions are kept");
    assert_eq!(p[1].magnitude, 2.0);
    assert_eq!(p[3].magnitude, 0.0);

    let items = read_items(fixture("items.csv")).unwrap();
    assert_eq!(items.ids(), &["espresso", "latte", "mocha", "tea"]);
    assert_eq!(items.attr_names(), &["price", "rating"]);
    assert_eq!(items.attrs_of(1), &[3.5, 5.0]);
    let orders = read_orders(fixture("orders_ok.txt"), &items).unwrap();
    assert_eq!(orders, vec![vec![1, 2, 0], vec![3, 1]]);
}

enum Reader {
    Svm,
    Csv,
    Pairs(usize),
    Items,
    Orders,
}

/// (fixture, reader, expected line, expected kind, text the message must
/// contain)
#[rustfmt::skip]
const HOSTILE: &[(&str, Reader, Option<usize>, ErrorKind, &str)] = &[
    ("missing.light",         Reader::Svm,       None,    ErrorKind::NotFound,     "cannot read"),
    ("partial_qid.light",     Reader::Svm,       Some(5), ErrorKind::Inconsistent, "line 2 has none"),
    ("partial_qid2.light",    Reader::Svm,       Some(4), ErrorKind::Inconsistent, "line 1 has one"),
    ("zero_index.light",      Reader::Svm,       Some(2), ErrorKind::FeatureIndex, "\"0:1\""),
    ("nan_value.light",       Reader::Svm,       Some(3), ErrorKind::NonFinite,    "\"2:NaN\""),
    ("inf_label.light",       Reader::Svm,       Some(2), ErrorKind::NonFinite,    "\"inf\""),
    ("decreasing.light",      Reader::Svm,       Some(1), ErrorKind::FeatureIndex, "index 3 after index 5"),
    ("repeated_index.light",  Reader::Svm,       Some(2), ErrorKind::FeatureIndex, "index 2 after index 2"),
    ("bad_value.light",       Reader::Svm,       Some(2), ErrorKind::Malformed,    "\"2:1.2.3\""),
    ("bad_label.light",       Reader::Svm,       Some(2), ErrorKind::Malformed,    "label \"x\""),
    ("no_colon.light",        Reader::Svm,       Some(2), ErrorKind::Malformed,    "\"2\""),
    ("empty.light",           Reader::Svm,       None,    ErrorKind::Empty,        "no data rows"),
    ("zero_bytes.light",      Reader::Svm,       None,    ErrorKind::Empty,        "no data rows"),
    ("unterminated.csv",      Reader::Csv,       Some(3), ErrorKind::Malformed,    "unterminated quote"),
    ("ragged.csv",            Reader::Csv,       Some(4), ErrorKind::Inconsistent, "2 fields"),
    ("empty_field.csv",       Reader::Csv,       Some(2), ErrorKind::Malformed,    "column \"b\""),
    ("overflow.csv",          Reader::Csv,       Some(3), ErrorKind::NonFinite,    "\"1e999\""),
    ("bad_number.csv",        Reader::Csv,       Some(3), ErrorKind::Malformed,    "\"five\""),
    ("no_label.csv",          Reader::Csv,       Some(1), ErrorKind::Unknown,      "\"x\", \"y\""),
    ("dup_header.csv",        Reader::Csv,       Some(1), ErrorKind::Duplicate,    "\"a\""),
    ("zero_bytes.light",      Reader::Csv,       None,    ErrorKind::Empty,        "no header"),
    ("pairs_unknown.txt",     Reader::Pairs(3),  Some(5), ErrorKind::Unknown,      "row 5"),
    ("pairs_self.txt",        Reader::Pairs(3),  Some(2), ErrorKind::Invalid,      "row 1 is paired with itself"),
    ("pairs_negative.txt",    Reader::Pairs(3),  Some(1), ErrorKind::Invalid,      "\"-2\""),
    ("pairs_inf.txt",         Reader::Pairs(3),  Some(1), ErrorKind::NonFinite,    "\"inf\""),
    ("pairs_bad_magnitude.txt", Reader::Pairs(3), Some(2), ErrorKind::Malformed,   "\"x\""),
    ("empty.light",           Reader::Pairs(3),  None,    ErrorKind::Empty,        "no pairs"),
    ("items_dup.csv",         Reader::Items,     Some(4), ErrorKind::Duplicate,    "line 2"),
    ("items_missing.csv",     Reader::Items,     Some(3), ErrorKind::Malformed,    "missing attribute"),
    ("items_nan.csv",         Reader::Items,     Some(3), ErrorKind::NonFinite,    "\"nan\""),
    ("orders_unknown.txt",    Reader::Orders,    Some(3), ErrorKind::Unknown,      "\"cappuccino\""),
    ("orders_repeat.txt",     Reader::Orders,    Some(1), ErrorKind::Duplicate,    "\"latte\""),
    ("orders_short.txt",      Reader::Orders,    Some(2), ErrorKind::Invalid,      "at least 2"),
    ("empty.light",           Reader::Orders,    None,    ErrorKind::Empty,        "no orders"),
];

#[test]
fn hostile_files_name_file_line_and_cause() {
    let items = read_items(fixture("items.csv")).unwrap();
    for (file, reader, line, kind, needle) in HOSTILE {
        let path = fixture(file);
        let err = match reader {
            Reader::Svm => svm(&path).map(|_| ()),
            Reader::Csv => read_csv(&path, &CsvOptions::default()).map(|_| ()),
            Reader::Pairs(n) => read_pairs(&path, *n).map(|_| ()),
            Reader::Items => read_items(&path).map(|_| ()),
            Reader::Orders => read_orders(&path, &items).map(|_| ()),
        }
        .expect_err(file);
        let msg = err.to_string();
        let prefix = match line {
            Some(l) => format!("{}:{l}: ", path.display()),
            None => format!("{}: ", path.display()),
        };
        assert!(msg.starts_with(&prefix), "{file}: {msg:?} lacks {prefix:?}");
        assert_eq!(err.line(), *line, "{file}: {msg}");
        assert_eq!(err.kind(), *kind, "{file}: {msg}");
        assert!(msg.contains(needle), "{file}: {msg:?} lacks {needle:?}");
        assert!(err.is_bad_input(), "{file}");
    }
}

#[test]
fn invalid_utf8_is_reported_with_its_line() {
    let dir = std::env::temp_dir().join(format!("ranklet-readers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latin1.light");
    std::fs::write(&path, b"1 1:1\n0 2:1 # caf\xe9\n").unwrap();
    let e = svm(&path).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!((e.kind(), e.line()), (ErrorKind::Encoding, Some(2)));
}

#[test]
fn byte_order_mark_is_ignored() {
    let ds = parse_csv_str("\u{feff}label,x\n1,2\n", "bom.csv", &CsvOptions::default()).unwrap();
    assert_eq!(ds.feature_names().unwrap(), &["x"]);
    let ds = parse_svmlight_str("\u{feff}1 1:2\n", "bom.light", &SvmlightOptions::default()).unwrap();
    assert_eq!(ds.labels(), &[1.0]);
}

// ---- properties -------------------------------------------------------------

/// A well-formed row: label, qid and sorted distinct 1-based indices.
fn row_strategy() -> impl Strategy<Value = (f64, u64, Vec<(usize, f64)>)> {
    let finite =
        prop_oneof![-1e6f64..1e6, Just(0.0), Just(-0.0), Just(f64::MIN_POSITIVE), Just(f64::MAX), Just(-f64::MAX),];
    (finite.clone(), 0u64..5, proptest::collection::btree_map(1usize..200, finite, 0..8))
        .prop_map(|(l, q, m)| (l, q, m.into_iter().collect()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn svmlight_never_panics(text in "[0-9qid:#. \\-+eEnaNf\t\r\n]{0,200}") {
        let _ = parse_svmlight_str(&text, "fuzz", &SvmlightOptions::default());
        let _ = parse_svmlight_str(&text, "fuzz", &SvmlightOptions { num_features: Some(3), ..Default::default() });
    }

    #[test]
    fn readers_never_panic_on_any_string(text in "\\PC{0,200}|[\"',a-z0-9 \n#]{0,200}") {
        let _ = parse_svmlight_str(&text, "fuzz", &SvmlightOptions::default());
        let _ = parse_csv_str(&text, "fuzz", &CsvOptions::default());
        let _ = parse_csv_str(&text, "fuzz", &CsvOptions {
            label_col: Some("a".into()), qid_col: Some("b".into()), ..Default::default()
        });
        let _ = parse_pairs_str(&text, "fuzz", 4);
        let _ = parse_pairs_str(&text, "fuzz", 0);
        if let Ok(items) = parse_items_str(&text, "fuzz") {
            let _ = parse_orders_str(&text, "fuzz", &items);
        }
        let items = parse_items_str("id\na\nb\n", "items").unwrap();
        let _ = parse_orders_str(&text, "fuzz", &items);
    }

    #[test]
    fn svmlight_round_trips(
        rows in proptest::collection::vec(row_strategy(), 1..30),
        with_qid in any::<bool>(),
        comments in any::<bool>(),
    ) {
        let mut text = String::new();
        for (label, qid, feats) in &rows {
            if comments {
                text.push_str("# a comment\n\n");
            }
            text.push_str(&label.to_string());
            if with_qid {
                text.push_str(&format!(" qid:{qid}"));
            }
            for (i, v) in feats {
                text.push_str(&format!(" {i}:{v}"));
            }
            if comments {
                text.push_str(" # trailing");
            }
            text.push('\n');
        }
        let ds = parse_svmlight_str(&text, "gen", &SvmlightOptions::default()).unwrap();
        prop_assert_eq!(ds.n_rows(), rows.len());
        let d = rows.iter().flat_map(|r| r.2.iter().map(|f| f.0)).max().unwrap_or(0);
        prop_assert_eq!(ds.n_features(), d);
        prop_assert_eq!(ds.has_qids(), with_qid);
        for (i, (label, qid, feats)) in rows.iter().enumerate() {
            prop_assert_eq!(ds.labels()[i].to_bits(), label.to_bits());
            let (cols, vals) = ds.row(i);
            let want_cols: Vec<u32> = feats.iter().map(|f| f.0 as u32 - 1).collect();
            let want_vals: Vec<u64> = feats.iter().map(|f| f.1.to_bits()).collect();
            let got_vals: Vec<u64> = vals.iter().map(|v| v.to_bits()).collect();
            prop_assert_eq!(cols, &want_cols[..]);
            prop_assert_eq!(got_vals, want_vals);
            if with_qid {
                let want = qid.to_string();
                prop_assert_eq!(ds.qid_of_row(i), Some(want.as_str()));
            }
        }
        // Groups: a permutation, each group one qid, file order inside.
        let g = ds.query_groups();
        let mut all: Vec<usize> = g.rows().to_vec();
        all.sort_unstable();
        prop_assert_eq!(all, (0..rows.len()).collect::<Vec<_>>());
        for q in g.iter() {
            prop_assert!(q.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(q.iter().all(|&r| ds.qid_of_row(r) == ds.qid_of_row(q[0])));
        }
    }
}

/// The drug–target data (`data/drug-target-nr/`, RLScore's test data): bare
/// whitespace matrices without ids. Rows of the interaction matrix are the
/// 54 drugs (the rows of the drug similarity), columns the 26 targets.
#[test]
fn drug_target_nr_reads_as_bare_matrices() {
    use ranklet::data::{read_edge_matrix, read_node_kernel, EdgeMatrixOptions, KernelOptions, MatrixLayout};

    let y = read_edge_matrix(shared("drug-target-nr/nr_admat_dgc.txt"), &EdgeMatrixOptions::default()).unwrap();
    assert_eq!((y.n_u(), y.n_v(), y.len()), (54, 26, 54 * 26));
    assert!(y.is_complete() && !y.one_domain());
    assert_eq!(y.labels().iter().filter(|&&l| l == 1.0).count(), 90);
    assert!(y.labels().iter().all(|&l| l == 0.0 || l == 1.0));
    // Row 0 (drug "0") interacts with target 16 only (line 1 of the file).
    let ones: Vec<usize> = (0..26).filter(|&j| y.labels()[j] == 1.0).collect();
    assert_eq!(ones, [16]);
    assert_eq!(y.source_line(53 * 26), 54);

    let opts = KernelOptions::default();
    let targets = read_node_kernel(shared("drug-target-nr/nr_simmat_dg.txt"), &opts).unwrap();
    assert_eq!(targets.len(), 26);
    assert_eq!(targets.layout(), MatrixLayout::Bare);
    assert!(targets.asymmetry().is_none(), "the target similarity is exactly symmetric");

    // The drug similarity is not symmetric: refused, naming the worst pair.
    let e = read_node_kernel(shared("drug-target-nr/nr_simmat_dc.txt"), &opts).unwrap_err();
    assert_eq!((e.kind(), e.line()), (ErrorKind::Invalid, Some(1)));
    let msg = e.to_string();
    assert!(msg.contains("nr_simmat_dc.txt:1: kernel not symmetric"), "{msg}");
    assert!(msg.contains("K[\"0\", \"16\"] = 0.5 on this line but K[\"16\", \"0\"] = 0.425 on line 17"), "{msg}");
    assert!(msg.contains("largest of 20 unequal pairs"), "{msg}");
    let drugs = read_node_kernel(
        shared("drug-target-nr/nr_simmat_dc.txt"),
        &KernelOptions { symmetrize: true, ..KernelOptions::default() },
    )
    .unwrap();
    assert_eq!(drugs.len(), 54);
    let a = drugs.asymmetry().unwrap();
    assert_eq!((a.row.as_str(), a.col.as_str(), a.n_unequal), ("0", "16", 20));
    assert!((a.max_abs_diff - 0.075).abs() < 1e-12);
    assert!((drugs.get(0, 16) - 0.4625).abs() < 1e-15 && drugs.get(16, 0) == drugs.get(0, 16));

    // Edges map onto both kernels as they are (bare ids are positions).
    let on = y.on_nodes(drugs.ids(), targets.ids()).unwrap();
    assert!(on.is_complete());
    assert_eq!(on.edges(), y.edges());
    // Targets as the u domain.
    let t = y.transposed().on_nodes(targets.ids(), drugs.ids()).unwrap();
    assert_eq!((t.n_u(), t.n_v()), (26, 54));
    assert_eq!(t.label_matrix().unwrap()[16 * 54], 1.0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The graph readers never panic, and what they accept keeps their
    /// guarantees (edges in range and unique; kernels square and exactly
    /// symmetric).
    #[test]
    fn graph_readers_never_panic(text in "[ab01.\\-e# \t\n:,]{0,160}|\\PC{0,120}") {
        use ranklet::data::{
            parse_edge_matrix_str, parse_edges_str, parse_node_csv_str, parse_node_kernel_str,
            parse_node_svmlight_str, EdgeMatrixOptions, EdgeOptions, KernelOptions, NodeFeatureOptions,
        };
        for one_domain in [false, true] {
            for e in [
                parse_edges_str(&text, "g", &EdgeOptions { one_domain, ..EdgeOptions::default() }),
                parse_edge_matrix_str(&text, "g", &EdgeMatrixOptions { one_domain, ..Default::default() }),
            ]
            .into_iter()
            .flatten()
            {
                let mut seen = std::collections::HashSet::new();
                for &(i, j) in e.edges() {
                    prop_assert!(i < e.n_u() && j < e.n_v() && seen.insert((i, j)));
                }
                prop_assert!(e.labels().iter().all(|l| l.is_finite()));
                prop_assert_eq!(e.is_complete(), seen.len() == e.n_u() * e.n_v());
            }
        }
        for symmetrize in [false, true] {
            if let Ok(k) = parse_node_kernel_str(&text, "g", &KernelOptions { symmetrize, ..Default::default() }) {
                let n = k.len();
                prop_assert_eq!(k.values().len(), n * n);
                for i in 0..n {
                    for j in 0..n {
                        prop_assert_eq!(k.get(i, j).to_bits(), k.get(j, i).to_bits());
                    }
                }
            }
        }
        let _ = parse_node_svmlight_str(&text, "g", &NodeFeatureOptions::default());
        let _ = parse_node_csv_str(&text, "g");
    }

    /// Unique random edges written as text read back as the same edges, in
    /// order, and complete exactly when every pair is there.
    #[test]
    fn edges_round_trip(pairs in proptest::collection::btree_map((0usize..5, 0usize..4), -1e3f64..1e3, 1..20)) {
        use ranklet::data::{parse_edges_str, EdgeOptions};
        let text: String = pairs.iter().map(|(&(u, v), y)| format!("u{u}\tv{v}  {y:?}\n")).collect();
        let e = parse_edges_str(&text, "g", &EdgeOptions::default()).unwrap();
        prop_assert_eq!(e.len(), pairs.len());
        for (k, (&(u, v), &y)) in pairs.iter().enumerate() {
            let (i, j) = e.edges()[k];
            prop_assert_eq!(&e.u_ids()[i], &format!("u{u}"));
            prop_assert_eq!(&e.v_ids()[j], &format!("v{v}"));
            prop_assert_eq!(e.labels()[k].to_bits(), y.to_bits());
        }
        let us: Vec<String> = (0..5).map(|u| format!("u{u}")).collect();
        let vs: Vec<String> = (0..4).map(|v| format!("v{v}")).collect();
        let on = e.on_nodes(&us, &vs).unwrap();
        prop_assert_eq!(on.is_complete(), pairs.len() == 20);
    }
}
