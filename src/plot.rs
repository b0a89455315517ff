//! Plates as SVG, drawn generically from a [`Plate`]: each experiment describes its panels
//! (axes, scales, series), and this module draws any of them with plotters. The output is a
//! pure function of the plate.

use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::measure::Measurement;
use crate::report::{percent, write_atomic};

/// Size of one panel, in pixels.
pub const PANEL: (u32, u32) = (800, 500);

/// A figure: panels stacked vertically.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plate {
    pub panels: Vec<Panel>,
}

/// One chart: its title, axes, legend corner and series.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub legend: Corner,
    pub series: Vec<Series>,
}

/// An axis: its label, its scale, and how its ticks read.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub ticks: Ticks,
    /// A fixed range; otherwise the range holds every point (log axes push zeros to a floor).
    pub range: Option<(f64, f64)>,
}

impl Axis {
    /// A linear axis with decimal ticks.
    pub fn linear(label: impl Into<String>) -> Self {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            ticks: Ticks::Decimal,
            range: None,
        }
    }

    /// The rate axis of every plate: false-positive rate, log scale, in percent.
    pub fn rate() -> Self {
        Axis {
            label: "false-positive rate".into(),
            scale: Scale::Log,
            ticks: Ticks::Percent,
            range: None,
        }
    }

    /// Whole-number ticks.
    pub fn integer(mut self) -> Self {
        self.ticks = Ticks::Integer;
        self
    }

    /// A fixed range.
    pub fn within(mut self, low: f64, high: f64) -> Self {
        self.range = Some((low, high));
        self
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ticks {
    Integer,
    Decimal,
    Percent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corner {
    UpperLeft,
    UpperRight,
    LowerRight,
}

/// A colour: the i-th of the palette (any i: the palette never runs out), black, or the
/// highlight red.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    Palette(usize),
    Black,
    Highlight,
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mark {
    /// A solid line through the points, `width` pixels.
    Line(u32),
    /// A dashed line through the points.
    Dashed(u32),
    /// A measured point with its interval: a circle and a vertical error bar.
    Measured,
    Triangle,
    Cross,
}

/// A named set of points drawn one way. A series without a label stays out of the legend.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: Option<String>,
    pub colour: Colour,
    pub mark: Mark,
    pub points: Vec<Point>,
}

/// A point; `interval` is `(low, high)` for measured points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub interval: Option<(f64, f64)>,
}

impl Series {
    /// A series of plain points.
    pub fn new(
        label: Option<String>,
        colour: Colour,
        mark: Mark,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) -> Self {
        Series {
            label,
            colour,
            mark,
            points: points
                .into_iter()
                .map(|(x, y)| Point {
                    x,
                    y,
                    interval: None,
                })
                .collect(),
        }
    }

    /// Measured rates at their x, each with its 95% interval.
    pub fn measured<'m>(
        label: Option<String>,
        colour: Colour,
        points: impl IntoIterator<Item = (f64, &'m Measurement)>,
    ) -> Self {
        Series {
            label,
            colour,
            mark: Mark::Measured,
            points: points
                .into_iter()
                .map(|(x, m)| Point {
                    x,
                    y: m.fpr_measured,
                    interval: Some((m.ci_low, m.ci_high)),
                })
                .collect(),
        }
    }

    /// `f(x)` at 101 points evenly spread over `[low, high]`.
    pub fn curve(
        label: impl Into<String>,
        colour: Colour,
        mark: Mark,
        (low, high): (f64, f64),
        f: impl Fn(f64) -> f64,
    ) -> Self {
        let points = (0..=100).map(|j| {
            let x = low + (high - low) * j as f64 / 100.0;
            (x, f(x))
        });
        Series::new(Some(label.into()), colour, mark, points)
    }

    /// A horizontal line at `y` across `[low, high]`.
    pub fn level(label: Option<String>, colour: Colour, mark: Mark, y: f64, x: (f64, f64)) -> Self {
        Series::new(label, colour, mark, [(x.0, y), (x.1, y)])
    }
}

/// The smallest and largest of `values`.
pub fn extent(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    values
        .into_iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(57, 59, 121),
];

/// The palette's colours first, then hues spread by the golden angle, so that any number
/// of series get distinct colours.
fn rgb(colour: Colour) -> RGBColor {
    match colour {
        Colour::Black => BLACK,
        Colour::Highlight => RGBColor(214, 39, 40),
        Colour::Palette(i) if i < PALETTE.len() => PALETTE[i],
        Colour::Palette(i) => {
            let hue = (i as f64 * 137.507_764) % 360.0;
            let (r, g, b) = HSLColor(hue / 360.0, 0.65, 0.45).rgb();
            RGBColor(r, g, b)
        }
    }
}

fn plot_error(e: impl std::fmt::Display) -> Error {
    Error::Output(format!("plot: {e}"))
}

/// An axis range holding every value: padded on a linear axis, zeros pushed to a floor on a
/// log one.
fn range_of(axis: &Axis, values: &[f64]) -> (f64, f64) {
    if let Some(range) = axis.range {
        return range;
    }
    match axis.scale {
        Scale::Log => {
            let low = values
                .iter()
                .copied()
                .filter(|v| *v > 0.0)
                .fold(f64::INFINITY, f64::min);
            let high = values.iter().copied().fold(0.0, f64::max);
            let low = if low.is_finite() { low } else { 1e-6 };
            (low / 1.6, (high * 1.6).min(1.0).max(low * 2.0))
        }
        Scale::Linear => {
            let (lo, hi) = extent(values.iter().copied());
            if lo == hi {
                (lo - 1.0, hi + 1.0)
            } else {
                (lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
            }
        }
    }
}

fn tick_label(ticks: Ticks, v: f64) -> String {
    match ticks {
        Ticks::Integer => format!("{v:.0}"),
        Ticks::Percent => percent(v),
        Ticks::Decimal => {
            let text = format!("{v:.2}");
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
}

/// Draws the series on a chart whose y coordinate is `Y` (linear or log).
macro_rules! draw_series_on {
    ($chart:expr, $panel:expr, $floor:expr) => {{
        let chart = $chart;
        for series in &$panel.series {
            let c = rgb(series.colour);
            let y = |v: f64| v.max($floor);
            let points: Vec<(f64, f64)> = series.points.iter().map(|p| (p.x, y(p.y))).collect();
            let drawn = match series.mark {
                Mark::Line(w) => chart
                    .draw_series(LineSeries::new(points, c.stroke_width(w)))
                    .map_err(plot_error)?,
                Mark::Dashed(w) => chart
                    .draw_series(DashedLineSeries::new(points, 6, 4, c.stroke_width(w)))
                    .map_err(plot_error)?,
                Mark::Triangle => chart
                    .draw_series(points.into_iter().map(|p| TriangleMarker::new(p, 5, c)))
                    .map_err(plot_error)?,
                Mark::Cross => chart
                    .draw_series(
                        points
                            .into_iter()
                            .map(|p| Cross::new(p, 5, c.stroke_width(2))),
                    )
                    .map_err(plot_error)?,
                Mark::Measured => chart
                    .draw_series(series.points.iter().map(|p| {
                        let (lo, hi) = p.interval.unwrap_or((p.y, p.y));
                        ErrorBar::new_vertical(p.x, y(lo), y(p.y), y(hi), c.filled(), 8)
                    }))
                    .map_err(plot_error)?,
            };
            if let Some(label) = &series.label {
                let anno = drawn.label(label.clone());
                match series.mark {
                    Mark::Line(w) => anno.legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(w.max(2)))
                    }),
                    Mark::Dashed(_) => {
                        anno.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 8, y)], c))
                    }
                    Mark::Triangle => {
                        anno.legend(move |(x, y)| TriangleMarker::new((x + 10, y), 5, c))
                    }
                    Mark::Cross => {
                        anno.legend(move |(x, y)| Cross::new((x + 10, y), 5, c.stroke_width(2)))
                    }
                    Mark::Measured => anno.legend(move |(x, y)| {
                        Rectangle::new([(x + 6, y - 4), (x + 14, y + 4)], c.filled())
                    }),
                };
            }
        }
        chart
            .configure_series_labels()
            .position(match $panel.legend {
                Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
                Corner::UpperRight => SeriesLabelPosition::UpperRight,
                Corner::LowerRight => SeriesLabelPosition::LowerRight,
            })
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(plot_error)
    }};
}

fn draw_panel(area: &DrawingArea<SVGBackend<'_>, Shift>, panel: &Panel) -> Result<()> {
    let xs: Vec<f64> = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    let ys: Vec<f64> = panel
        .series
        .iter()
        .flat_map(|s| {
            s.points.iter().flat_map(|p| {
                let (lo, hi) = p.interval.unwrap_or((p.y, p.y));
                [p.y, lo, hi]
            })
        })
        .collect();
    let x = range_of(&panel.x, &xs);
    let y = range_of(&panel.y, &ys);
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&panel.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(75);
    let (x_ticks, y_ticks) = (panel.x.ticks, panel.y.ticks);
    match panel.y.scale {
        Scale::Log => {
            let mut chart = builder
                .build_cartesian_2d(x.0..x.1, (y.0..y.1).log_scale())
                .map_err(plot_error)?;
            chart
                .configure_mesh()
                .x_desc(&panel.x.label)
                .y_desc(&panel.y.label)
                .x_label_formatter(&|v| tick_label(x_ticks, *v))
                .y_label_formatter(&|v| tick_label(y_ticks, *v))
                .draw()
                .map_err(plot_error)?;
            draw_series_on!(&mut chart, panel, y.0)
        }
        Scale::Linear => {
            let mut chart: ChartContext<_, Cartesian2d<RangedCoordf64, RangedCoordf64>> = builder
                .build_cartesian_2d(x.0..x.1, y.0..y.1)
                .map_err(plot_error)?;
            chart
                .configure_mesh()
                .x_desc(&panel.x.label)
                .y_desc(&panel.y.label)
                .x_label_formatter(&|v| tick_label(x_ticks, *v))
                .y_label_formatter(&|v| tick_label(y_ticks, *v))
                .draw()
                .map_err(plot_error)?;
            draw_series_on!(&mut chart, panel, f64::NEG_INFINITY)
        }
    }
}

/// An SVG page naming the plate's panels and saying that nothing was measured.
fn empty_svg(plate: &Plate) -> String {
    let lines: String = plate
        .panels
        .iter()
        .enumerate()
        .map(|(i, panel)| {
            format!(
                "<text x=\"20\" y=\"{}\">{}: no rows to draw</text>",
                40 + 24 * i,
                crate::report::escape(&panel.title)
            )
        })
        .collect();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" \
         font-family=\"sans-serif\" font-size=\"14\"><rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>{lines}</svg>\n",
        PANEL.0,
        60 + 24 * plate.panels.len()
    )
}

/// A plate as an SVG document; a plate without a point (every filter of an audit skipped)
/// is a page that says so, so that a run with nothing to draw still writes its plot.
pub fn render_svg(plate: &Plate) -> Result<String> {
    if plate
        .panels
        .iter()
        .all(|p| p.series.iter().all(|s| s.points.is_empty()))
    {
        return Ok(empty_svg(plate));
    }
    let mut svg = String::new();
    {
        let height = PANEL.1 * plate.panels.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (PANEL.0, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let areas = root.split_evenly((plate.panels.len(), 1));
        for (area, panel) in areas.iter().zip(&plate.panels) {
            draw_panel(area, panel)?;
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Writes the plate to `path` (atomically). Only SVG is supported: PNG output would need the
/// system font libraries that plotters' bitmap text depends on.
pub fn write_plot(plate: &Plate, path: &Path) -> Result<()> {
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
    write_atomic(path, render_svg(plate)?.as_bytes())
}
