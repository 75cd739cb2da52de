//! `ranklet plot-lines` (hidden): a line plot (PNG) of the columns of a
//! tab-separated file, used by the experiment scripts.

use std::path::PathBuf;

use clap::Args;
use ranklet::error::CliError;

use crate::plot::{draw, Figure, Series};

/// `ranklet plot-lines`: a line plot of the columns of a tab-separated
/// file. The first line is a header; the first column is x, every other
/// column a line, except that columns named `NAME:lo` and `NAME:hi` are the
/// band of the line `NAME`.
#[derive(Args, Debug)]
pub struct PlotLinesArgs {
    /// Tab-separated input with a header line.
    #[arg(long)]
    pub input: PathBuf,
    /// Title.
    #[arg(long, default_value = "")]
    pub title: String,
    /// Label of the x axis (default: the first column's name).
    #[arg(long)]
    pub xlabel: Option<String>,
    /// Label of the y axis.
    #[arg(long, default_value = "")]
    pub ylabel: String,
    /// Logarithmic x axis.
    #[arg(long)]
    pub log_x: bool,
    /// Output PNG.
    #[arg(short, long)]
    pub output: PathBuf,
}

/// `ranklet plot-lines`.
pub fn plot_lines(a: PlotLinesArgs) -> Result<(), CliError> {
    let text = std::fs::read_to_string(&a.input).map_err(|e| CliError::input(format!("{}: {e}", a.input.display())))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or_else(|| CliError::input(format!("{}: empty", a.input.display())))?;
    let names: Vec<&str> = header.split('\t').map(str::trim).collect();
    if names.len() < 2 {
        return Err(CliError::input(format!("{}:1: need an x column and at least one line", a.input.display())));
    }
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for (ln, l) in lines {
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() != names.len() {
            return Err(CliError::input(format!(
                "{}:{}: {} fields, the header has {}",
                a.input.display(),
                ln + 1,
                f.len(),
                names.len()
            )));
        }
        for (c, v) in f.iter().enumerate() {
            let v = v.trim();
            let x = if v.is_empty() || v == "nan" || v == "NaN" {
                f64::NAN
            } else {
                v.parse::<f64>()
                    .map_err(|_| CliError::input(format!("{}:{}: '{v}' is not a number", a.input.display(), ln + 1)))?
            };
            cols[c].push(x);
        }
    }
    let col = |n: &str| names.iter().position(|m| *m == n);
    let mut series = Vec::new();
    for (c, n) in names.iter().enumerate().skip(1) {
        if n.ends_with(":lo") || n.ends_with(":hi") {
            continue;
        }
        let band = match (col(&format!("{n}:lo")), col(&format!("{n}:hi"))) {
            (Some(l), Some(h)) => Some((cols[l].clone(), cols[h].clone())),
            _ => None,
        };
        series.push(Series { name: n.to_string(), x: cols[0].clone(), y: cols[c].clone(), band, markers: false });
    }
    let fig = Figure {
        title: a.title,
        xlabel: a.xlabel.unwrap_or_else(|| names[0].to_string()),
        ylabel: a.ylabel,
        log_x: a.log_x,
        series,
        highlight: None,
        size: (900, 560),
    };
    draw(&a.output, &fig)?;
    eprintln!("wrote {}", a.output.display());
    Ok(())
}
