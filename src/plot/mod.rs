//! Plates as SVG, drawn generically from a [`Plate`]: each experiment describes its panels
//! (axes, scales, series), and this module draws any of them with plotters. The output is a
//! pure function of the plate.

mod draw;

use std::path::Path;

use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::pipeline::measurement::Measurement;
use crate::report::write_atomic;

pub use draw::{Marker, Shape};
use draw::{draw_panel, plot_error};

/// Size of one panel, in pixels, legend column included.
pub const PANEL: (u32, u32) = (960, 480);

/// Width of the legend column at the right of each panel.
pub const LEGEND_WIDTH: u32 = 250;

/// A figure: panels stacked vertically.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plate {
    pub panels: Vec<Panel>,
}

/// One chart: its title, axes and series. The legend has a column of its own at the right,
/// outside the data.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
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

    pub fn integer(mut self) -> Self {
        self.ticks = Ticks::Integer;
        self
    }

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

/// A colour: the i-th of the palette (any i: the palette cycles, and [`Colour::marker`]
/// keeps the first 24 apart), black, or the highlight vermillion.
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
    /// A measured point with its interval: the colour's [`Marker`] and a vertical error bar.
    Measured,
    /// A predicted point: an outlined triangle.
    Triangle,
    /// A predicted point: a diagonal cross.
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
