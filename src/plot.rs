//! The essay's plates as SVG: measured points with their 95% Wilson intervals beside the
//! predicted curves. Drawn with plotters; the output is a pure function of the rows.

use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::experiments::overfill::OverfillRow;
use crate::experiments::seed_check::SeedCheckRow;
use crate::experiments::sweep_k::SweepKRow;
use crate::experiments::{Outcome, Rows};
use crate::measure::Measurement;
use crate::report::{percent, write_atomic};
use crate::theory;

/// Size of one panel, in pixels.
pub const PANEL: (u32, u32) = (800, 500);

const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];
const HIGHLIGHT: RGBColor = RGBColor(214, 39, 40);

fn colour(i: usize) -> RGBColor {
    COLOURS[i % COLOURS.len()]
}

fn plot_error(e: impl std::fmt::Display) -> Error {
    Error::Output(format!("plot: {e}"))
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
type LogChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, LogCoord<f64>>>;

/// The y range of a log axis holding every rate and interval, zeros pushed to a floor.
fn rate_range<'r>(values: impl Iterator<Item = &'r f64> + Clone) -> (f64, f64) {
    let positive = values.clone().copied().filter(|v| *v > 0.0);
    let low = positive.clone().fold(f64::INFINITY, f64::min);
    let high = values.copied().fold(0.0, f64::max);
    let low = if low.is_finite() { low } else { 1e-6 };
    (low / 1.6, (high * 1.6).min(1.0).max(low * 2.0))
}

fn log_chart<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    x: (f64, f64),
    y: (f64, f64),
    x_desc: &str,
    integer_x: bool,
) -> Result<LogChart<'a, 'b>> {
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(x.0..x.1, (y.0..y.1).log_scale())
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("false-positive rate")
        .y_label_formatter(&|v| percent(*v))
        .x_label_formatter(&|v| {
            if integer_x {
                format!("{v:.0}")
            } else {
                let text = format!("{v:.2}");
                text.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        })
        .draw()
        .map_err(plot_error)?;
    Ok(chart)
}

fn span(values: impl Iterator<Item = f64>, pad: f64) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo == hi {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo - pad * (hi - lo), hi + pad * (hi - lo))
    }
}

fn setup_caption(rows: &[&Measurement]) -> String {
    let first = rows[0];
    format!(
        "n = {}, {} queries, hash {}",
        first.n, first.queries, first.hash
    )
}

/// Measured points with their intervals (one circle each), in `style`.
fn draw_measured<'r>(
    chart: &mut LogChart<'_, '_>,
    points: impl Iterator<Item = (f64, &'r Measurement)>,
    style: ShapeStyle,
    floor: f64,
) -> Result<()> {
    chart
        .draw_series(points.map(|(x, m)| {
            ErrorBar::new_vertical(
                x,
                m.ci_low.max(floor),
                m.fpr_measured.max(floor),
                m.ci_high.max(floor),
                style,
                8,
            )
        }))
        .map_err(plot_error)?;
    Ok(())
}

fn finish_legend<'a, 'b: 'a>(
    chart: &mut LogChart<'a, 'b>,
    position: SeriesLabelPosition,
) -> Result<()> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(plot_error)
}

fn sweep_size(area: &DrawingArea<SVGBackend<'_>, Shift>, rows: &[Measurement]) -> Result<()> {
    let all: Vec<&Measurement> = rows.iter().collect();
    let (y0, y1) = rate_range(
        rows.iter()
            .flat_map(|r| [&r.ci_low, &r.ci_high, &r.fpr_classic]),
    );
    let x = span(rows.iter().map(|r| r.bits_per_key), 0.05);
    let mut ks: Vec<u32> = rows.iter().map(|r| r.k).collect();
    ks.dedup();
    let k_list: Vec<String> = ks.iter().map(u32::to_string).collect();
    let title = format!(
        "Rate against space: k = {}, m = n × bits per key, {}",
        k_list.join(", "),
        setup_caption(&all)
    );
    let mut chart = log_chart(area, &title, x, (y0, y1), "bits per key (m/n)", false)?;
    for (i, &k) in ks.iter().enumerate() {
        let c = colour(i);
        let group: Vec<&Measurement> = rows.iter().filter(|r| r.k == k).collect();
        let n = group[0].n;
        let (lo, hi) = span(group.iter().map(|r| r.bits_per_key), 0.0);
        let curve = (0..=100).map(|j| {
            let bits = lo + (hi - lo) * j as f64 / 100.0;
            let m = ((n as f64 * bits).round() as u64).max(1);
            (bits, theory::fpr_classic(n, m, k).max(y0))
        });
        let label = format!("k = {k}: classic (1-e^(-kn/m))^k");
        chart
            .draw_series(LineSeries::new(curve, c.stroke_width(2)))
            .map_err(plot_error)?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart
            .draw_series(
                group
                    .iter()
                    .map(|r| TriangleMarker::new((r.bits_per_key, r.fpr_from_fill.max(y0)), 5, c)),
            )
            .map_err(plot_error)?
            .label(format!("k = {k}: fill^k"))
            .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 5, c));
        draw_measured(
            &mut chart,
            group.iter().map(|r| (r.bits_per_key, *r)),
            c.filled(),
            y0,
        )?;
    }
    finish_legend(&mut chart, SeriesLabelPosition::UpperRight)
}

fn sweep_k(area: &DrawingArea<SVGBackend<'_>, Shift>, rows: &[SweepKRow]) -> Result<()> {
    let all: Vec<&Measurement> = rows.iter().map(|r| &r.measurement).collect();
    let (y0, y1) = rate_range(
        all.iter()
            .flat_map(|r| [&r.ci_low, &r.ci_high, &r.fpr_classic]),
    );
    let x = span(all.iter().map(|r| r.k as f64), 0.05);
    let title = format!(
        "Rate against k: m = {} bits ({:.2} per key), {}",
        all[0].m,
        all[0].bits_per_key,
        setup_caption(&all)
    );
    let mut chart = log_chart(area, &title, x, (y0, y1), "number of hashes k", true)?;
    let mut sizes: Vec<u64> = all.iter().map(|r| r.m).collect();
    sizes.dedup();
    for (i, &m) in sizes.iter().enumerate() {
        let c = colour(i);
        let group: Vec<&SweepKRow> = rows.iter().filter(|r| r.measurement.m == m).collect();
        let bits = group[0].measurement.bits_per_key;
        chart
            .draw_series(LineSeries::new(
                group
                    .iter()
                    .map(|r| (r.measurement.k as f64, r.measurement.fpr_classic)),
                c.stroke_width(2),
            ))
            .map_err(plot_error)?
            .label(format!("{bits:.2} bits/key: classic"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        let optimum = group[0].k_optimal;
        chart
            .draw_series(LineSeries::new(
                [(optimum, y0), (optimum, y1)],
                c.stroke_width(1),
            ))
            .map_err(plot_error)?
            .label(format!("optimum (m/n) ln 2 = {optimum:.2}"))
            .legend(move |(x, y)| PathElement::new(vec![(x + 10, y - 6), (x + 10, y + 6)], c));
        draw_measured(
            &mut chart,
            group
                .iter()
                .filter(|r| !r.measured_min)
                .map(|r| (r.measurement.k as f64, &r.measurement)),
            c.filled(),
            y0,
        )?;
        draw_measured(
            &mut chart,
            group
                .iter()
                .filter(|r| r.measured_min)
                .map(|r| (r.measurement.k as f64, &r.measurement)),
            HIGHLIGHT.filled(),
            y0,
        )?;
    }
    chart
        .draw_series(std::iter::once(PathElement::new(
            Vec::<(f64, f64)>::new(),
            HIGHLIGHT,
        )))
        .map_err(plot_error)?
        .label("measured minimum")
        .legend(|(x, y)| Rectangle::new([(x + 6, y - 4), (x + 14, y + 4)], HIGHLIGHT.filled()));
    finish_legend(&mut chart, SeriesLabelPosition::UpperRight)
}

fn overfill(area: &DrawingArea<SVGBackend<'_>, Shift>, rows: &[OverfillRow]) -> Result<()> {
    let (top, bottom) = area.split_vertically(PANEL.1);
    let all: Vec<&Measurement> = rows.iter().map(|r| &r.measurement).collect();
    let (y0, y1) = rate_range(rows.iter().flat_map(|r| {
        [
            &r.measurement.ci_low,
            &r.measurement.ci_high,
            &r.fpr_closed_form,
            &r.fpr_design,
        ]
    }));
    let x = span(rows.iter().map(|r| r.overfill_factor), 0.05);
    let title = format!(
        "Overfill: m = {}, designed for n = {}, {} queries",
        all[0].m, rows[0].design_n, all[0].queries
    );
    let mut chart = log_chart(
        &top,
        &title,
        x,
        (y0, y1),
        "overfill factor s = n / design n",
        false,
    )?;
    let mut ks: Vec<u32> = all.iter().map(|r| r.k).collect();
    ks.dedup();
    let (s_lo, s_hi) = span(rows.iter().map(|r| r.overfill_factor), 0.0);
    for (i, &k) in ks.iter().enumerate() {
        let c = colour(i);
        let group: Vec<&OverfillRow> = rows.iter().filter(|r| r.measurement.k == k).collect();
        let curve = (0..=100).map(|j| {
            let s = s_lo + (s_hi - s_lo) * j as f64 / 100.0;
            (s, theory::fpr_closed_form(s, k).max(y0))
        });
        chart
            .draw_series(LineSeries::new(curve, c.stroke_width(2)))
            .map_err(plot_error)?
            .label(format!("k = {k}: closed form (1-2^-s)^k"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        let design = group[0].fpr_design;
        chart
            .draw_series(DashedLineSeries::new(
                [(x.0, design), (x.1, design)],
                6,
                4,
                c.stroke_width(1),
            ))
            .map_err(plot_error)?
            .label(format!("k = {k}: design rate {}", percent(design)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c));
        draw_measured(
            &mut chart,
            group.iter().map(|r| (r.overfill_factor, &r.measurement)),
            c.filled(),
            y0,
        )?;
    }
    finish_legend(&mut chart, SeriesLabelPosition::LowerRight)?;

    let mut fill_chart: Chart = ChartBuilder::on(&bottom)
        .caption(
            "Fill against overfill: 1 - 2^-s, one half at the design point",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(x.0..x.1, 0.0..1.0)
        .map_err(plot_error)?;
    fill_chart
        .configure_mesh()
        .x_desc("overfill factor s = n / design n")
        .y_desc("fraction of bits set")
        .y_label_formatter(&|v| percent(*v))
        .draw()
        .map_err(plot_error)?;
    fill_chart
        .draw_series(LineSeries::new(
            (0..=100).map(|j| {
                let s = s_lo + (s_hi - s_lo) * j as f64 / 100.0;
                (s, theory::fill_closed_form(s))
            }),
            BLACK.stroke_width(2),
        ))
        .map_err(plot_error)?
        .label("closed form 1 - 2^-s")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    fill_chart
        .draw_series(DashedLineSeries::new(
            [(x.0, 0.5), (x.1, 0.5)],
            6,
            4,
            BLACK.into(),
        ))
        .map_err(plot_error)?;
    for (i, &k) in ks.iter().enumerate() {
        let c = colour(i);
        fill_chart
            .draw_series(rows.iter().filter(|r| r.measurement.k == k).map(|r| {
                Cross::new(
                    (r.overfill_factor, r.measurement.fill_measured),
                    5,
                    c.stroke_width(2),
                )
            }))
            .map_err(plot_error)?
            .label(format!("k = {k}: measured fill"))
            .legend(move |(x, y)| Cross::new((x + 10, y), 5, c.stroke_width(2)));
    }
    fill_chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(plot_error)
}

fn seed_check(area: &DrawingArea<SVGBackend<'_>, Shift>, rows: &[SeedCheckRow]) -> Result<()> {
    let seeds: Vec<&Measurement> = rows
        .iter()
        .filter(|r| r.check == "hash-seed")
        .map(|r| &r.measurement)
        .collect();
    let crate::measure::Spread {
        pooled,
        pooled_low: pooled_lo,
        pooled_high: pooled_hi,
        ..
    } = crate::measure::Spread::of(&seeds);
    let (y0, y1) = rate_range(seeds.iter().flat_map(|r| [&r.ci_low, &r.ci_high]));
    let x = span(seeds.iter().map(|r| r.hash_seed as f64), 0.08);
    let title = format!(
        "Rate per hash seed: n = {}, m = {}, k = {}, {} queries",
        seeds[0].n, seeds[0].m, seeds[0].k, seeds[0].queries
    );
    let mut chart = log_chart(area, &title, x, (y0, y1), "hash seed", true)?;
    for (value, dashed, label) in [
        (pooled, false, format!("pooled rate {}", percent(pooled))),
        (pooled_lo, true, "pooled 95% interval".to_string()),
        (pooled_hi, true, String::new()),
    ] {
        let style = BLACK.stroke_width(if dashed { 1 } else { 2 });
        let series = chart
            .draw_series(DashedLineSeries::new(
                [(x.0, value), (x.1, value)],
                if dashed { 4 } else { 1000 },
                if dashed { 4 } else { 0 },
                style,
            ))
            .map_err(plot_error)?;
        if !label.is_empty() {
            series
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
    }
    draw_measured(
        &mut chart,
        seeds.iter().map(|r| (r.hash_seed as f64, *r)),
        colour(0).filled(),
        y0,
    )?;
    finish_legend(&mut chart, SeriesLabelPosition::UpperRight)
}

fn compare(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    rows: &[crate::compare::CompareRow],
) -> Result<()> {
    let all: Vec<&Measurement> = rows.iter().map(|r| &r.measurement).collect();
    let (y0, y1) = rate_range(all.iter().flat_map(|r| [&r.ci_low, &r.ci_high]));
    let x = span(rows.iter().map(|r| r.bits_per_key_spent), 0.05);
    let x = (0.0f64.min(x.0), x.1);
    let title = format!(
        "Rate against space per structure: n = {}, {} queries or more",
        all[0].n, all[0].queries
    );
    let mut chart = log_chart(area, &title, x, (y0, y1), "bits per key spent", false)?;
    chart
        .draw_series(LineSeries::new(
            (0..=400)
                .map(|j| {
                    let bits = x.0 + (x.1 - x.0) * j as f64 / 400.0;
                    (bits, (-bits).exp2())
                })
                .filter(|&(_, rate)| (y0..=y1).contains(&rate)),
            BLACK.stroke_width(2),
        ))
        .map_err(plot_error)?
        .label("information floor: rate 2^-bits")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    for (i, kind) in crate::structures::FilterKind::all().iter().enumerate() {
        let c = colour(i);
        let group: Vec<&crate::compare::CompareRow> = rows
            .iter()
            .filter(|r| r.measurement.filter == *kind)
            .collect();
        if group.is_empty() {
            continue;
        }
        chart
            .draw_series(LineSeries::new(
                group
                    .iter()
                    .map(|r| (r.bits_per_key_spent, r.measurement.fpr_measured.max(y0))),
                c.stroke_width(1),
            ))
            .map_err(plot_error)?
            .label(kind.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        draw_measured(
            &mut chart,
            group.iter().map(|r| (r.bits_per_key_spent, &r.measurement)),
            c.filled(),
            y0,
        )?;
    }
    finish_legend(&mut chart, SeriesLabelPosition::UpperRight)
}

/// One panel per configured rate: each crate's measured rate (with its interval) against
/// the load n / n planned, its own predicted rate as a dashed line, and the promise (the
/// configured rate) as a black line.
fn audit(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    rows: &[crate::experiments::audit::AuditRow],
) -> Result<()> {
    let mut rates: Vec<f64> = rows.iter().map(|r| r.fpr_configured).collect();
    rates.dedup();
    let panels = area.split_evenly((rates.len(), 1));
    for (panel, &fpr) in panels.iter().zip(&rates) {
        let group: Vec<&crate::experiments::audit::AuditRow> =
            rows.iter().filter(|r| r.fpr_configured == fpr).collect();
        let (y0, y1) = rate_range(group.iter().flat_map(|r| {
            [
                &r.measurement.ci_low,
                &r.measurement.ci_high,
                &r.fpr_configured,
            ]
        }));
        let x = span(group.iter().map(|r| r.load), 0.06);
        let title = format!(
            "Configured {} for n = {}: measured against the promise, {} queries",
            percent(fpr),
            group[0].n_planned,
            group[0].measurement.queries
        );
        let mut chart = log_chart(
            panel,
            &title,
            x,
            (y0, y1),
            "load: keys inserted / n planned",
            false,
        )?;
        chart
            .draw_series(LineSeries::new(
                [(x.0, fpr), (x.1, fpr)],
                BLACK.stroke_width(2),
            ))
            .map_err(plot_error)?
            .label(format!("configured {}", percent(fpr)))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        let mut kinds: Vec<crate::structures::FilterKind> =
            group.iter().map(|r| r.measurement.filter).collect();
        kinds.dedup();
        for (i, kind) in kinds.iter().enumerate() {
            let c = colour(i);
            let own: Vec<&Measurement> = group
                .iter()
                .filter(|r| r.measurement.filter == *kind)
                .map(|r| &r.measurement)
                .collect();
            // Crates configured alike sit on the same points: spread them a little in x.
            let offset = (i as f64 - (kinds.len() as f64 - 1.0) / 2.0) * (x.1 - x.0) * 0.008;
            let loads = group
                .iter()
                .filter(|r| r.measurement.filter == *kind)
                .map(move |r| r.load + offset);
            chart
                .draw_series(DashedLineSeries::new(
                    loads
                        .clone()
                        .zip(&own)
                        .map(|(l, m)| (l, m.fpr_exact.max(y0))),
                    5,
                    4,
                    c.stroke_width(1),
                ))
                .map_err(plot_error)?;
            draw_measured(&mut chart, loads.zip(own.iter().copied()), c.filled(), y0)?;
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(plot_error)?
                .label(format!("{kind}: measured, dashed predicted"))
                .legend(move |(x, y)| {
                    Rectangle::new([(x + 6, y - 4), (x + 14, y + 4)], c.filled())
                });
        }
        finish_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }
    Ok(())
}

/// The plate of an outcome as an SVG document.
pub fn render_svg(outcome: &Outcome) -> Result<String> {
    let panels = match &outcome.rows {
        Rows::Overfill(_) => 2,
        Rows::Audit(rows) => {
            let mut rates: Vec<f64> = rows.iter().map(|r| r.fpr_configured).collect();
            rates.dedup();
            rates.len().max(1) as u32
        }
        _ => 1,
    };
    if outcome.measurements().is_empty() {
        return Err(Error::Output("plot: no rows to draw".into()));
    }
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (PANEL.0, PANEL.1 * panels)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        match &outcome.rows {
            Rows::SweepSize(rows) => sweep_size(&root, rows)?,
            Rows::SweepK(rows) => sweep_k(&root, rows)?,
            Rows::Overfill(rows) => overfill(&root, rows)?,
            Rows::SeedCheck(rows) => seed_check(&root, rows)?,
            Rows::Compare(rows) => compare(&root, rows)?,
            Rows::Audit(rows) => audit(&root, rows)?,
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Writes the plate to `path` (atomically). Only SVG is supported: PNG output would need the
/// system font libraries that plotters' bitmap text depends on.
pub fn write_plot(outcome: &Outcome, path: &Path) -> Result<()> {
    let is_svg = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if !is_svg {
        return Err(Error::invalid(
            "plot",
            path.display(),
            "only SVG plots are supported (PNG would need system font libraries)",
            "a file name ending in .svg",
        ));
    }
    write_atomic(path, render_svg(outcome)?.as_bytes())
}
