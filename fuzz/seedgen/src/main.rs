//! Writes the seed corpora under `fuzz/corpus/` (run by
//! `scripts/make-fuzz-seeds.sh`): one small valid model file per kind,
//! element type, basis storage and optional section, written by the core
//! writer, plus a few byte strings for `model_roundtrip`. The data-format
//! seeds are plain text files written by the script itself.

use std::{fs, path::Path};

use ranklet_core::format::{
    Basis, BilinearModel, DualPairModel, ElementType, FeatureCentring, Kernel, KernelCentring, KernelModel,
    LinearModel, Model, ModelSpec, OnlineModel, PairDomain, PairKernel, PrefGpModel, PrefInductiveModel,
    PrefLowRankModel, QuantModel, QuantWidth, Values,
};

fn write(dir: &Path, name: &str, spec: &ModelSpec<'_>) {
    let mut buf = vec![0u8; spec.buffer_len()];
    let n = spec.emit(&mut buf).expect("seed spec is valid");
    assert_eq!(n, buf.len());
    fs::write(dir.join(name), &buf).expect("write seed");
    println!("{name}: {n} bytes");
}

fn main() {
    let root = std::env::args().nth(1).expect("usage: seedgen <fuzz/corpus>");
    let models = Path::new(&root).join("model_parser");
    fs::create_dir_all(&models).unwrap();

    let w = [0.5, -1.25, 2.0];
    let mean = [1.0, 0.0, -2.0];
    let scale = [2.0, 0.5, 1.0];
    let fc = FeatureCentring { mean: &mean, scale: &scale };
    let meta = "algorithm=rankrls\nlambda=1\nkernel=linear\n";

    for (et, tag) in [(ElementType::F32, "f32"), (ElementType::F64, "f64")] {
        let lin = Model::Linear(LinearModel { w: &w, offset: 0.25, centring: None });
        write(&models, &format!("linear_{tag}"), &ModelSpec::new(lin, et));
        let lin_c = Model::Linear(LinearModel { w: &w, offset: -1.0, centring: Some(fc) });
        write(&models, &format!("linear_centred_meta_{tag}"), &ModelSpec::new(lin_c, et).with_metadata(meta));
    }

    // Kernel expansions, m = 2 rows over d = 3.
    let dense = [1.0, 0.0, -1.0, 0.5, 0.25, 2.0];
    let coeffs = [0.75, -0.5];
    let row_ptr = [0u32, 2, 3];
    let indices = [0u32, 2, 1];
    let values = [1.0, -1.0, 0.5];
    let col_means = [0.125, -0.25];
    let kc = KernelCentring { col_means: &col_means, grand_mean: 0.0625 };
    let kernels = [
        ("linear", Kernel::Linear),
        ("rbf", Kernel::Rbf { gamma: 0.5 }),
        ("poly", Kernel::Polynomial { gamma: 1.0, coef0: 1.0, degree: 3 }),
    ];
    for (et, tag) in [(ElementType::F32, "f32"), (ElementType::F64, "f64")] {
        for (i, &(kname, kernel)) in kernels.iter().enumerate() {
            let dense_model = KernelModel {
                dim: 3,
                kernel,
                basis: Basis::Dense(&dense),
                coeffs: &coeffs,
                offset: 0.5,
                centring: if i == 1 { Some(fc) } else { None },
                kernel_centring: if i == 2 { Some(kc) } else { None },
            };
            write(&models, &format!("kernel_{kname}_dense_{tag}"), &ModelSpec::new(Model::Kernel(dense_model), et));
            let sparse_model = KernelModel {
                basis: Basis::Sparse { row_ptr: &row_ptr, indices: &indices, values: &values },
                centring: if i == 0 { Some(fc) } else { None },
                kernel_centring: if i != 2 { Some(kc) } else { None },
                ..dense_model
            };
            let spec = ModelSpec::new(Model::Kernel(sparse_model), et).with_metadata("algorithm=kpcrank\n");
            write(&models, &format!("kernel_{kname}_sparse_{tag}"), &spec);
        }
    }

    // Online RankRLS states, d = 3, λ = 2 (factor diagonal above √2).
    let l_packed = [1.5f32, 0.3, 1.6, -0.2, 0.1, 1.45];
    let w32 = [0.5f32, -1.25, 2.0];
    for (et, tag) in [(ElementType::F32, "f32"), (ElementType::F64, "f64")] {
        let online = Model::Online(OnlineModel {
            lambda: 2.0,
            count: 12,
            prior_id: 0x1234_5678,
            offset: 0.25,
            w: Values::F32(&w32),
            b: Values::F64(&w),
            b_comp: Values::F32(&[0.0; 3]),
            w0: Values::F64(&w),
            l_packed: Values::F32(&l_packed),
        });
        write(&models, &format!("online_{tag}"), &ModelSpec::new(online, et));
    }

    // Pair models: bilinear (d_u = 2, d_v = 3; and symmetric, reciprocal
    // over d = 2) and dual (two domains; one domain, symmetric).
    static W_RECT: [f64; 6] = [0.5, -1.0, 0.25, 2.0, 0.0, -0.75];
    static W_SYM: [f64; 4] = [1.0, -0.5, -0.5, 2.0];
    static W_ANTI: [f64; 4] = [0.0, 1.5, -1.5, 0.0];
    let bu = [1.0, 0.0, -1.0, 0.5];
    let bv = [1.0, 0.0, -1.0, 0.5, 0.25, 2.0, -0.5, 1.5, 0.0];
    let a23 = [0.75, -0.5, 0.25, 1.0, 0.0, -1.25];
    let a22 = [0.75, -0.5, 0.25, 1.0];
    for (et, tag) in [(ElementType::F32, "f32"), (ElementType::F64, "f64")] {
        let bil = |pair, dim_v, w: &'static [f64], offset| {
            Model::Bilinear(BilinearModel { pair, dim_u: 2, dim_v, w, offset })
        };
        write(
            &models,
            &format!("bilinear_kron_{tag}"),
            &ModelSpec::new(bil(PairKernel::Kronecker, 3, &W_RECT, 0.5), et),
        );
        let sym = ModelSpec::new(bil(PairKernel::Symmetric, 2, &W_SYM, -0.25), et).with_metadata("pair=symmetric\n");
        write(&models, &format!("bilinear_sym_{tag}"), &sym);
        write(
            &models,
            &format!("bilinear_recip_{tag}"),
            &ModelSpec::new(bil(PairKernel::Reciprocal, 2, &W_ANTI, 0.0), et),
        );
        let two = DualPairModel {
            pair: PairKernel::Kronecker,
            u: PairDomain { kernel: Kernel::Rbf { gamma: 0.5 }, dim: 2, basis: &bu },
            v: Some(PairDomain {
                kernel: Kernel::Polynomial { gamma: 1.0, coef0: 1.0, degree: 2 },
                dim: 3,
                basis: &bv,
            }),
            coeffs: &a23,
            offset: 0.125,
        };
        write(&models, &format!("dual_kron_two_{tag}"), &ModelSpec::new(Model::DualPair(two), et));
        let one = DualPairModel {
            pair: PairKernel::Symmetric,
            u: PairDomain { kernel: Kernel::Linear, dim: 2, basis: &bu },
            v: None,
            coeffs: &a22,
            offset: -0.5,
        };
        write(&models, &format!("dual_sym_one_{tag}"), &ModelSpec::new(Model::DualPair(one), et));
    }

    // Quantised linear models (kind 7): i16 with metadata, i8 without;
    // the second's bias sits at the accumulator bound for its d (so a
    // mutation of d or of the bias crosses it).
    let (qa, qz) = ([0.5f32, 0.25, 2.0], [1.0f32, -3.0, 0.0]);
    let q16 = QuantModel {
        width: QuantWidth::I16,
        scale: 1.5e-4,
        bias: -12345,
        input_scale: &qa,
        zero_point: &qz,
        weights: &[32767, -32768, 7],
    };
    write(&models, "quant_i16_meta", &ModelSpec::new(Model::Quant(q16), ElementType::F32).with_metadata(meta));
    let q8 = QuantModel { width: QuantWidth::I8, bias: i64::MAX - 3 * (1 << 22), weights: &[127, -128, 0], ..q16 };
    write(&models, "quant_i8_at_bound", &ModelSpec::new(Model::Quant(q8), ElementType::F32));
    // Preference GPs (format 1.4): kind 8 over 3 items (with and without
    // item names) and kind 9 over m = 2 basis rows of d = 2.
    static PREF_MEAN: [f64; 3] = [0.5, -0.25, 1.0];
    static PREF_COV: [f64; 6] = [1.0, 0.2, 0.8, -0.1, 0.3, 1.5];
    let basis = [0.0, 1.0, 1.0, -0.5];
    for (et, tag) in [(ElementType::F32, "f32"), (ElementType::F64, "f64")] {
        let gp = |names| {
            Model::PrefGp(PrefGpModel {
                sigma: 0.5,
                count: 4,
                mean: Values::F64(&PREF_MEAN),
                cov_packed: Values::F64(&PREF_COV),
                item_names: names,
            })
        };
        write(&models, &format!("pref_gp_{tag}"), &ModelSpec::new(gp(""), et));
        write(&models, &format!("pref_gp_names_{tag}"), &ModelSpec::new(gp("a\nb\nc\n"), et).with_metadata("sigma=0.5\n"));
        let ind = Model::PrefInductive(PrefInductiveModel {
            kernel: Kernel::Rbf { gamma: 0.5 },
            scale: 2.0,
            sigma: 0.3,
            count: 5,
            dim: 2,
            basis: &basis,
            alpha: &[0.5, -1.0],
            w_packed: &[0.05, 0.01, 0.04],
        });
        write(&models, &format!("pref_inductive_{tag}"), &ModelSpec::new(ind, et));
        // Kind 10 (format 1.5): the low-rank posterior over the same 3 items, rank 2.
        let lowrank = Model::PrefLowRank(PrefLowRankModel {
            sigma: 0.5,
            count: 4,
            rank: 2,
            mean: Values::F64(&PREF_MEAN),
            resid: Values::F64(&[0.1, 0.0, 0.2]),
            factor: Values::F64(&[1.0, 0.5, -0.5, 0.25, 0.0, 2.0]),
            item_names: "a\nb\nc\n",
        });
        write(&models, &format!("pref_lowrank_{tag}"), &ModelSpec::new(lowrank, et));
    }

    // model_roundtrip decodes its input with `arbitrary`; any bytes will do.
    let rt = Path::new(&root).join("model_roundtrip");
    fs::create_dir_all(&rt).unwrap();
    fs::write(rt.join("zeros"), [0u8; 256]).unwrap();
    fs::write(rt.join("ones"), [0xffu8; 256]).unwrap();
    let counting: Vec<u8> = (0..=255u8).collect();
    fs::write(rt.join("counting"), &counting).unwrap();
    let mut small: Vec<u8> = Vec::new();
    for k in 0..64u8 {
        small.extend_from_slice(&[k % 3, 4 + k % 5, 16 + k]);
    }
    fs::write(rt.join("small_values"), &small).unwrap();
}
