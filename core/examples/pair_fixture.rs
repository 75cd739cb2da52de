//! The pair-model fixture of the firmware test (`tests/firmware/run.sh`):
//! fits a symmetric Kronecker regression model (one domain, linear node
//! kernel) on the rows of an SVMlight file, turns it into a bilinear model
//! (kind 3) with `format::pair_model`, writes it as f32, and writes the
//! scores ranklet-core computes on the host for every candidate row `v`
//! given each of two first nodes `u` (rows 0 and 1), as f32 bit patterns.
//!
//! ```text
//! cargo run --release -p ranklet-core --example pair_fixture -- DATA OUT_DIR
//! ```
//!
//! writes `OUT_DIR/bilinear.rkl` and `OUT_DIR/bilinear.host` (lines
//! `u r bits`). Labels of the pairs: `y(i, j) = −|rel_i − rel_j|` (how alike
//! two rows' relevances are, a symmetric relation).

use std::fmt::Write as _;

use ranklet_core::backend::Portable;
use ranklet_core::format::{pair_model, pair_model_buffer_len, ElementType, ModelSpec, ModelView, PairDomain};
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::kron::{self, Domains, Loss, PairKernel};
use ranklet_core::{MatMut, MatRef};

/// Rows of an SVMlight file as `(relevance, features)`, every feature
/// listed (values rounded decimal → f64 → f32 as `ranklet score` and
/// `fwtool.py` do).
fn read_rows(path: &str) -> (Vec<f64>, Vec<f32>, usize) {
    let text = std::fs::read_to_string(path).expect("read data");
    let (mut rel, mut rows, mut dim) = (Vec::new(), Vec::new(), 0);
    for line in text.lines() {
        let t: Vec<&str> = line.split('#').next().unwrap_or("").split_whitespace().collect();
        if t.is_empty() {
            continue;
        }
        rel.push(t[0].parse::<f64>().expect("label"));
        let feats: Vec<f32> = t[1..]
            .iter()
            .filter(|x| !x.starts_with("qid:"))
            .map(|x| x.split_once(':').expect("j:v").1.parse::<f64>().expect("value") as f32)
            .collect();
        dim = feats.len();
        rows.extend(feats);
    }
    (rel, rows, dim)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (data, out) = (&args[1], std::path::Path::new(&args[2]));
    let (rel, rows32, d) = read_rows(data);
    let p = rel.len();
    let rows: Vec<f64> = rows32.iter().map(|&x| x as f64).collect();
    // Linear kernel matrix (column-major) and labels.
    let mut k = vec![0.0; p * p];
    let mut y = vec![0.0; p * p];
    for i in 0..p {
        for j in 0..p {
            k[i + j * p] = (0..d).map(|c| rows[i * d + c] * rows[j * d + c]).sum();
            y[i + j * p] = -(rel[i] - rel[j]).abs();
        }
    }
    let pair = PairKernel::Symmetric;
    let domains = Domains::One { k: MatRef::from_col_major(&k, p, p).unwrap(), pair };
    let mut coef = vec![0.0; p * p];
    let mut work = vec![0.0; kron::fit_workspace_len(p, p)];
    let mut bw = vec![0.0; Portable::workspace_len(p)];
    kron::fit(
        &mut Portable::new(&mut bw),
        &domains,
        Loss::Regression,
        MatRef::from_col_major(&y, p, p).unwrap(),
        1.0,
        MatMut::from_col_major(&mut coef, p, p).unwrap(),
        &mut work,
    )
    .expect("kron fit");
    let u = PairDomain { kernel: Kernel::Linear, dim: d, basis: &rows };
    let mut buf = vec![0.0; pair_model_buffer_len(&u, None)];
    let a = MatRef::from_col_major(&coef, p, p).unwrap();
    let model = pair_model(u, None, pair, a, 0.0, &mut buf).expect("pair model");
    let spec = ModelSpec::new(model, ElementType::F32).with_metadata("algorithm=kron\npair=symmetric\nlambda=1\n");
    let mut bytes = vec![0u8; spec.buffer_len()];
    spec.emit(&mut bytes).expect("emit");
    std::fs::write(out.join("bilinear.rkl"), &bytes).expect("write model");

    let view = ModelView::new_checked(&bytes).expect("parse");
    let mut ws = vec![0f32; view.pair_workspace_len()];
    let mut scores = vec![0f32; p];
    let mut text = String::new();
    for uu in 0..2 {
        view.score_pair_rows(&rows32[uu * d..(uu + 1) * d], &rows32, &mut ws, &mut scores).expect("score");
        for (r, s) in scores.iter().enumerate() {
            writeln!(text, "{uu} {r} {:08x}", s.to_bits()).unwrap();
        }
    }
    std::fs::write(out.join("bilinear.host"), text).expect("write scores");
    println!("pair_fixture: bilinear.rkl ({} bytes, d = {d}, {p} training nodes), bilinear.host", bytes.len());
}
