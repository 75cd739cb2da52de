//! PNG figures: the cross-validation curve of `ranklet train --plot-cv`
//! and line plots of tab-separated columns (`ranklet plot-lines`, used by
//! the experiments in `experiments/`).
//!
//! Rendering is plotters' bitmap backend with text drawn by `ab_glyph` from
//! a font compiled into the binary (DejaVu Sans, `host-cli/assets/fonts/`,
//! Bitstream Vera licence), so no system font library is needed. Files are
//! written atomically: rendered to a temporary file in the target
//! directory, then renamed over the target.

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;
use ranklet::cv::CvReport;
use ranklet::error::CliError;
use ranklet::family::{describe, Family};

static FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

fn ensure_font() {
    REGISTER.call_once(|| {
        // The font is compiled in and known to parse; a failure here would
        // only mean text is not drawn.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// One line of a figure, with an optional band (`lo..hi` at every x).
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Abscissae.
    pub x: Vec<f64>,
    /// Ordinates (non-finite values are skipped).
    pub y: Vec<f64>,
    /// Lower and upper edge of a shaded band, if any.
    pub band: Option<(Vec<f64>, Vec<f64>)>,
    /// Draw a marker at every point.
    pub markers: bool,
}

/// A figure of lines.
#[derive(Clone, Debug)]
pub struct Figure {
    /// Title.
    pub title: String,
    /// Label of the x axis.
    pub xlabel: String,
    /// Label of the y axis.
    pub ylabel: String,
    /// Logarithmic x axis (values ≤ 0 are dropped).
    pub log_x: bool,
    /// The lines.
    pub series: Vec<Series>,
    /// A highlighted point and its label (e.g. the chosen grid point).
    pub highlight: Option<(f64, f64, String)>,
    /// Size in pixels.
    pub size: (u32, u32),
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Renders `fig` as a PNG at `path`, atomically.
pub fn draw(path: &Path, fig: &Figure) -> Result<(), CliError> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| CliError::input(format!("{}: not a file name", path.display())))?;
    if !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
        return Err(CliError::input(format!("{}: the plot is written as PNG; name it .png", path.display())));
    }
    // plotters picks the encoder from the extension: keep `.png` last.
    let tmp = dir.join(format!(".{}.tmp-{}.png", name.to_string_lossy(), std::process::id()));
    let result = render(&tmp, fig).and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|e| CliError::failure(format!("{}: cannot write: {e}", path.display())))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn tx(log_x: bool, x: f64) -> f64 {
    if log_x {
        x.log10()
    } else {
        x
    }
}

fn bounds(fig: &Figure) -> Option<((f64, f64), (f64, f64))> {
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for s in &fig.series {
        for (i, (&x, &y)) in s.x.iter().zip(&s.y).enumerate() {
            let x = tx(fig.log_x, x);
            if !x.is_finite() || !y.is_finite() {
                continue;
            }
            x0 = x0.min(x);
            x1 = x1.max(x);
            let (lo, hi) = match &s.band {
                Some((l, h)) if l[i].is_finite() && h[i].is_finite() => (l[i].min(y), h[i].max(y)),
                _ => (y, y),
            };
            y0 = y0.min(lo);
            y1 = y1.max(hi);
        }
    }
    if !x0.is_finite() {
        return None;
    }
    let pad = |a: f64, b: f64, f: f64| {
        let w = if b > a { (b - a) * f } else { a.abs().max(1.0) * 0.05 };
        (a - w, b + w)
    };
    Some((pad(x0, x1, 0.02), pad(y0, y1, 0.06)))
}

fn render(tmp: &Path, fig: &Figure) -> Result<(), CliError> {
    ensure_font();
    let fail = |e: &dyn std::fmt::Display| CliError::failure(format!("{}: cannot draw: {e}", tmp.display()));
    let ((x0, x1), (y0, y1)) = bounds(fig).ok_or_else(|| CliError::input("nothing to plot: no finite point"))?;
    let root = BitMapBackend::new(tmp, fig.size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let log_x = fig.log_x;
    let mut chart = ChartBuilder::on(&root)
        .caption(&fig.title, ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| fail(&e))?;
    let xfmt = move |v: &f64| {
        if log_x {
            let p = 10f64.powf(*v);
            if (v - v.round()).abs() < 1e-9 {
                format!("1e{}", v.round() as i64)
            } else {
                format!("{p:.2e}")
            }
        } else {
            let r = (v * 1000.0).round() / 1000.0;
            format!("{r}")
        }
    };
    let yfmt = |v: &f64| format!("{:.3}", v);
    chart
        .configure_mesh()
        .x_desc(&fig.xlabel)
        .y_desc(&fig.ylabel)
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| fail(&e))?;
    for (si, s) in fig.series.iter().enumerate() {
        let c = PALETTE[si % PALETTE.len()];
        let pts: Vec<(f64, f64)> =
            s.x.iter()
                .zip(&s.y)
                .map(|(&x, &y)| (tx(log_x, x), y))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
        if let Some((lo, hi)) = &s.band {
            let edge = |v: &[f64]| -> Vec<(f64, f64)> {
                s.x.iter()
                    .zip(&s.y)
                    .zip(v)
                    .map(|((&x, &y), &b)| (tx(log_x, x), y, b))
                    .filter(|(x, y, b)| x.is_finite() && y.is_finite() && b.is_finite())
                    .map(|(x, _, b)| (x, b))
                    .collect()
            };
            let mut poly = edge(lo);
            poly.extend(edge(hi).into_iter().rev());
            if poly.len() >= 3 {
                chart.draw_series(std::iter::once(Polygon::new(poly, c.mix(0.15)))).map_err(|e| fail(&e))?;
            }
        }
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            .map_err(|e| fail(&e))?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        if s.markers {
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled()))).map_err(|e| fail(&e))?;
        }
    }
    if let Some((x, y, label)) = &fig.highlight {
        let p = (tx(log_x, *x), *y);
        chart
            .draw_series(std::iter::once(Circle::new(p, 7, BLACK.stroke_width(2))))
            .map_err(|e| fail(&e))?
            .label(label.clone())
            .legend(|(x, y)| Circle::new((x + 10, y), 5, BLACK.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

/// The cross-validation figure of `ranklet train --plot-cv`: the metric
/// (mean over folds, band ± one standard deviation over folds) against the
/// family's x value ([`Family::plot_point`]: the number of components p for
/// kpcr/kpcrank, one line per (kernel, λ); λ on a log axis for
/// rls/rankrls, one line per kernel). The chosen point is circled. Failed
/// grid points are left out.
pub fn cv_figure<F: Family>(report: &CvReport<F::Point>, family: &F) -> Figure {
    let mut series: Vec<Series> = Vec::new();
    let mut key_of: Vec<String> = Vec::new();
    for p in &report.points {
        let (x, key) = family.plot_point(&p.params);
        let (m, sd) = (p.mean(), p.std());
        let idx = match key_of.iter().position(|k| *k == key) {
            Some(i) => i,
            None => {
                key_of.push(key.clone());
                series.push(Series {
                    name: key,
                    x: Vec::new(),
                    y: Vec::new(),
                    band: Some((Vec::new(), Vec::new())),
                    markers: true,
                });
                series.len() - 1
            }
        };
        let s = &mut series[idx];
        s.x.push(x);
        s.y.push(m);
        if let Some((lo, hi)) = &mut s.band {
            lo.push(m - sd);
            hi.push(m + sd);
        }
    }
    for s in &mut series {
        // Sort each line by x so the path and the band are monotone.
        let mut ord: Vec<usize> = (0..s.x.len()).collect();
        ord.sort_by(|&a, &b| s.x[a].total_cmp(&s.x[b]));
        let pick = |v: &[f64]| ord.iter().map(|&i| v[i]).collect::<Vec<f64>>();
        s.x = pick(&s.x);
        s.y = pick(&s.y);
        if let Some((lo, hi)) = &mut s.band {
            *lo = pick(lo);
            *hi = pick(hi);
        }
    }
    let highlight = report.best().map(|b| {
        let p = &report.points[b];
        let (x, _) = family.plot_point(&p.params);
        (x, p.mean(), format!("chosen: {}", describe(family, &p.params)))
    });
    let (xlabel, log_x) = family.plot_axis();
    Figure {
        title: format!("{} — {}", family.name(), report.scheme),
        xlabel: xlabel.into(),
        ylabel: format!("{} (mean ± std over folds)", report.metric.name()),
        log_x,
        series,
        highlight,
        size: (900, 560),
    }
}

/// Writes the cross-validation figure (see [`cv_figure`]) to `path`.
pub fn plot_cv<F: Family>(path: &Path, report: &CvReport<F::Point>, family: &F) -> Result<(), CliError> {
    let fig = cv_figure(report, family);
    if fig.log_x && report.points.iter().any(|p| family.plot_point(&p.params).0 <= 0.0) {
        let (xlabel, _) = family.plot_axis();
        eprintln!("ranklet: note: values ≤ 0 of {xlabel} cannot be shown on the log axis of {}", path.display());
    }
    draw(path, &fig)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
