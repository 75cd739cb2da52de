//! Argument values shared by several commands: comma lists, kernels (the
//! `--kernel` grammar, its printed form and its model-file form).

use ranklet_core::format;
use ranklet_core::kernel::Kernel;

use crate::error::CliError;

/// Parses a comma list of numbers.
pub fn parse_list<T: std::str::FromStr>(flag: &str, s: &str) -> Result<Vec<T>, CliError> {
    s.split(',')
        .map(|t| {
            t.trim().parse::<T>().map_err(|_| CliError::input(format!("--{flag}: '{}' is not a valid value", t.trim())))
        })
        .collect()
}

/// Parses one finite number.
pub fn parse_f64(flag: &str, s: &str) -> Result<f64, CliError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(CliError::input(format!("--{flag}: '{}' is not a finite number", s.trim()))),
    }
}

/// Parses `--kernel`: comma-separated specs where a bare number repeats the
/// previous kernel with a new first parameter (`rbf:0.5,1,2`).
pub fn parse_kernels(s: &str) -> Result<Vec<Kernel>, CliError> {
    let mut out: Vec<Kernel> = Vec::new();
    for tok in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let k = if tok.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            match out.last() {
                Some(Kernel::Rbf { .. }) => Kernel::Rbf { gamma: parse_f64("kernel", tok)? },
                Some(Kernel::Poly { gamma, coef0, .. }) => Kernel::Poly {
                    degree: tok.parse().map_err(|_| CliError::input(format!("--kernel: bad degree '{tok}'")))?,
                    gamma: *gamma,
                    coef0: *coef0,
                },
                _ => return Err(CliError::input(format!("--kernel: '{tok}' does not follow an rbf or poly kernel"))),
            }
        } else {
            let mut parts = tok.split(':');
            match parts.next().unwrap_or("") {
                "linear" if parts.clone().next().is_none() => Kernel::Linear,
                "rbf" => {
                    let g = parts.next().ok_or_else(|| CliError::input("--kernel: rbf needs its width, rbf:G"))?;
                    Kernel::Rbf { gamma: parse_f64("kernel", g)? }
                }
                "poly" => {
                    let d = parts.next().ok_or_else(|| CliError::input("--kernel: poly needs its degree, poly:D"))?;
                    Kernel::Poly {
                        degree: d.parse().map_err(|_| CliError::input(format!("--kernel: bad degree '{d}'")))?,
                        gamma: parts.next().map(|g| parse_f64("kernel", g)).transpose()?.unwrap_or(1.0),
                        coef0: parts.next().map(|c| parse_f64("kernel", c)).transpose()?.unwrap_or(1.0),
                    }
                }
                _ => {
                    return Err(CliError::input(format!(
                        "--kernel: unknown kernel '{tok}' (linear, rbf:G, poly:D[:G[:C]])"
                    )))
                }
            }
        };
        k.validate().map_err(|_| {
            CliError::input(format!("--kernel: parameters of '{tok}' out of range (γ > 0, c ≥ 0, degree ≥ 1)"))
        })?;
        out.push(k);
    }
    if out.is_empty() {
        return Err(CliError::input("--kernel: empty"));
    }
    Ok(out)
}

/// Human-readable kernel, as on the command line.
pub fn kernel_name(k: &Kernel) -> String {
    match *k {
        Kernel::Linear => "linear".into(),
        Kernel::Rbf { gamma } => format!("rbf:{gamma}"),
        Kernel::Poly { degree, gamma, coef0 } => format!("poly:{degree}:{gamma}:{coef0}"),
    }
}

/// The model file's form of a training kernel.
pub fn to_format_kernel(k: &Kernel) -> Result<format::Kernel, CliError> {
    Ok(match *k {
        Kernel::Linear => format::Kernel::Linear,
        Kernel::Rbf { gamma } => format::Kernel::Rbf { gamma },
        Kernel::Poly { degree, gamma, coef0 } => format::Kernel::Polynomial {
            gamma,
            coef0,
            degree: u8::try_from(degree).map_err(|_| CliError::input("polynomial degree above 255"))?,
        },
    })
}
