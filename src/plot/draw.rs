//! Drawing a [`Panel`] with plotters: the data on the left, its legend in a column of its own
//! at the right (never over a point), a light grid, and measured points that differ in shape
//! as well as in colour.

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::{Axis, Colour, LEGEND_WIDTH, Mark, PANEL, Panel, Scale, Series, Ticks, extent};
use crate::error::{Error, Result};
use crate::report::percent;

/// Characters of a legend line before it wraps (the legend font, about 12 px, in
/// [`LEGEND_WIDTH`]).
const LEGEND_CHARS: usize = 30;

/// The grid: the major lines faint, the minor ones fainter, both well under the data.
const GRID_MAJOR: RGBColor = RGBColor(221, 221, 221);
const GRID_MINOR: RGBColor = RGBColor(243, 243, 243);

/// Vermillion, the Okabe–Ito red: the highlight's colour (with a shape of its own) and the
/// palette's last.
const VERMILLION: RGBColor = RGBColor(213, 94, 0);

/// The Okabe–Ito palette without its black ([`Colour::Black`]) and its yellow (too faint on
/// white): hues told apart under the common colour-vision deficiencies (Okabe & Ito, "Color
/// Universal Design", 2008).
const OKABE_ITO: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    VERMILLION,
];

/// The outline shapes of measured points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Circle,
    Square,
    Up,
    Down,
    Diamond,
}

/// The marker of a measured point: a shape, filled or an outline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Marker {
    pub shape: Shape,
    pub filled: bool,
}

/// The shapes [`Colour::Palette`] cycles through; the diamond is the highlight's own.
const SHAPES: [Shape; 4] = [Shape::Circle, Shape::Square, Shape::Up, Shape::Down];

impl Colour {
    /// The marker of measured points in this colour, so that series differ in shape as well
    /// as in colour. Palette entry i takes colour i mod 6, shape i mod 4, filled for
    /// i mod 8 < 4 and an outline otherwise: the first 24 entries (lcm(6, 8)) are distinct
    /// pairs of colour and marker, and any two consecutive ones differ in both.
    pub fn marker(self) -> Marker {
        match self {
            Colour::Black => Marker {
                shape: Shape::Circle,
                filled: true,
            },
            Colour::Highlight => Marker {
                shape: Shape::Diamond,
                filled: true,
            },
            Colour::Palette(i) => Marker {
                shape: SHAPES[i % SHAPES.len()],
                filled: i % (2 * SHAPES.len()) < SHAPES.len(),
            },
        }
    }
}

fn rgb(colour: Colour) -> RGBColor {
    match colour {
        Colour::Black => BLACK,
        Colour::Highlight => VERMILLION,
        Colour::Palette(i) => OKABE_ITO[i % OKABE_ITO.len()],
    }
}

pub(super) fn plot_error(e: impl std::fmt::Display) -> Error {
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

type Svg<'a> = SVGBackend<'a>;

/// Draws one panel: the title across it, the chart on the left, the legend at the right.
pub(super) fn draw_panel(area: &DrawingArea<Svg<'_>, Shift>, panel: &Panel) -> Result<()> {
    let body = area
        .titled(&panel.title, ("sans-serif", 18))
        .map_err(plot_error)?;
    let (plot, legend) = body.split_horizontally(PANEL.0 - LEGEND_WIDTH);
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
    let mut builder = ChartBuilder::on(&plot);
    builder
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(75);
    match panel.y.scale {
        Scale::Log => {
            let mut chart = builder
                .build_cartesian_2d(x.0..x.1, (y.0..y.1).log_scale())
                .map_err(plot_error)?;
            mesh(&mut chart.configure_mesh(), &panel.x, &panel.y)?;
            draw_series(chart.plotting_area(), &panel.series, y.0)?;
        }
        Scale::Linear => {
            let mut chart: ChartContext<_, Cartesian2d<RangedCoordf64, RangedCoordf64>> = builder
                .build_cartesian_2d(x.0..x.1, y.0..y.1)
                .map_err(plot_error)?;
            mesh(&mut chart.configure_mesh(), &panel.x, &panel.y)?;
            draw_series(chart.plotting_area(), &panel.series, f64::NEG_INFINITY)?;
        }
    }
    draw_legend(&legend, &panel.series)
}

/// The axes, their labels and the light grid.
fn mesh<X, Y>(
    mesh: &mut plotters::chart::MeshStyle<'_, '_, X, Y, Svg<'_>>,
    x: &Axis,
    y: &Axis,
) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    mesh.x_desc(&x.label)
        .y_desc(&y.label)
        .x_label_formatter(formatter(x.ticks))
        .y_label_formatter(formatter(y.ticks))
        .bold_line_style(GRID_MAJOR)
        .light_line_style(GRID_MINOR)
        .draw()
        .map_err(plot_error)
}

/// The tick labels of `ticks`, as the `'static` function the mesh keeps.
fn formatter(ticks: Ticks) -> &'static dyn Fn(&f64) -> String {
    match ticks {
        Ticks::Integer => &|v| tick_label(Ticks::Integer, *v),
        Ticks::Decimal => &|v| tick_label(Ticks::Decimal, *v),
        Ticks::Percent => &|v| tick_label(Ticks::Percent, *v),
    }
}

/// Every series on the chart's plotting area; values on a log axis are raised to `floor`.
fn draw_series<CT>(area: &DrawingArea<Svg<'_>, CT>, series: &[Series], floor: f64) -> Result<()>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    let y = |v: f64| v.max(floor);
    for s in series {
        let c = rgb(s.colour);
        let points: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, y(p.y))).collect();
        match s.mark {
            Mark::Line(_) | Mark::Dashed(_) => line(area, points, s.mark, c)?,
            Mark::Triangle | Mark::Cross => {
                for p in points {
                    prediction(area, p, s.mark, c)?;
                }
            }
            Mark::Measured => {
                for p in &s.points {
                    let (lo, hi) = p.interval.unwrap_or((p.y, p.y));
                    error_bar(area, p.x, (y(lo), y(hi)), c)?;
                    marker(area, (p.x, y(p.y)), s.colour.marker(), c)?;
                }
            }
        }
    }
    Ok(())
}

/// A solid or dashed line through `points`.
fn line<C, CT>(
    area: &DrawingArea<Svg<'_>, CT>,
    points: Vec<C>,
    mark: Mark,
    c: RGBColor,
) -> Result<()>
where
    C: Clone + 'static,
    CT: CoordTranslate<From = C>,
{
    match mark {
        Mark::Dashed(w) => area.draw(&DashedPathElement::new(points, 6, 4, c.stroke_width(w))),
        Mark::Line(w) => area.draw(&PathElement::new(points, c.stroke_width(w))),
        _ => Ok(()),
    }
    .map_err(plot_error)
}

/// A predicted point: an outlined triangle or a cross.
fn prediction<C, CT>(area: &DrawingArea<Svg<'_>, CT>, at: C, mark: Mark, c: RGBColor) -> Result<()>
where
    C: Clone + 'static,
    CT: CoordTranslate<From = C>,
{
    let e = EmptyElement::at(at);
    match mark {
        Mark::Cross => area.draw(&(e + Cross::new((0, 0), 5, c.stroke_width(2)))),
        _ => area.draw(&(e + PathElement::new(closed(Shape::Up, 6), c.stroke_width(1)))),
    }
    .map_err(plot_error)
}

/// A vertical bar from `lo` to `hi` at `x`, with caps.
fn error_bar<CT>(
    area: &DrawingArea<Svg<'_>, CT>,
    x: f64,
    (lo, hi): (f64, f64),
    c: RGBColor,
) -> Result<()>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    let style = c.stroke_width(1);
    area.draw(&PathElement::new(vec![(x, lo), (x, hi)], style))
        .map_err(plot_error)?;
    for end in [lo, hi] {
        area.draw(&(EmptyElement::at((x, end)) + PathElement::new(vec![(-4, 0), (4, 0)], style)))
            .map_err(plot_error)?;
    }
    Ok(())
}

/// A measured point's marker at `at`: filled, or an outline two pixels wide.
fn marker<C, CT>(area: &DrawingArea<Svg<'_>, CT>, at: C, marker: Marker, c: RGBColor) -> Result<()>
where
    C: Clone + 'static,
    CT: CoordTranslate<From = C>,
{
    let style = if marker.filled {
        c.filled()
    } else {
        c.stroke_width(2)
    };
    let e = EmptyElement::at(at);
    match (marker.shape, marker.filled) {
        (Shape::Circle, _) => area.draw(&(e + Circle::new((0, 0), 5, style))),
        (Shape::Square, _) => area.draw(&(e + Rectangle::new([(-4, -4), (4, 4)], style))),
        (shape, true) => area.draw(&(e + Polygon::new(outline(shape, 6), style))),
        (shape, false) => area.draw(&(e + PathElement::new(closed(shape, 6), style))),
    }
    .map_err(plot_error)
}

/// The corners of a polygonal shape of half-size `r` pixels, around the origin.
fn outline(shape: Shape, r: i32) -> Vec<(i32, i32)> {
    match shape {
        Shape::Up => vec![(0, -r), (r, r * 3 / 4), (-r, r * 3 / 4)],
        Shape::Down => vec![(0, r), (r, -r * 3 / 4), (-r, -r * 3 / 4)],
        Shape::Diamond => vec![(0, -r), (r, 0), (0, r), (-r, 0)],
        Shape::Circle | Shape::Square => vec![(-r, -r), (r, -r), (r, r), (-r, r)],
    }
}

/// [`outline`] closed back to its first corner, to stroke.
fn closed(shape: Shape, r: i32) -> Vec<(i32, i32)> {
    let mut corners = outline(shape, r);
    corners.push(corners[0]);
    corners
}

/// The legend column: one entry per labelled series with a point, its sample then its label, wrapped.
/// A line's sample carries the marker of the unlabelled measured series of its colour (the
/// points it describes), once per colour.
fn draw_legend(area: &DrawingArea<Svg<'_>, Shift>, series: &[Series]) -> Result<()> {
    let font = ("sans-serif", 15).into_font();
    let mut y = 20;
    let mut shown: Vec<Colour> = Vec::new();
    for s in series.iter().filter(|s| !s.points.is_empty()) {
        let Some(label) = &s.label else { continue };
        let c = rgb(s.colour);
        let centre = (14, y);
        match s.mark {
            Mark::Line(_) | Mark::Dashed(_) => {
                line(area, vec![(2, y), (26, y)], s.mark, c)?;
                let described = series
                    .iter()
                    .any(|o| o.label.is_none() && o.mark == Mark::Measured && o.colour == s.colour);
                if described && !shown.contains(&s.colour) {
                    shown.push(s.colour);
                    marker(area, centre, s.colour.marker(), c)?;
                }
            }
            Mark::Triangle | Mark::Cross => prediction(area, centre, s.mark, c)?,
            Mark::Measured => {
                shown.push(s.colour);
                area.draw(&PathElement::new(
                    vec![(14, y - 8), (14, y + 8)],
                    c.stroke_width(1),
                ))
                .map_err(plot_error)?;
                marker(area, centre, s.colour.marker(), c)?;
            }
        }
        for line in wrap(label, LEGEND_CHARS) {
            area.draw(&Text::new(line, (34, y - 7), font.clone()))
                .map_err(plot_error)?;
            y += 16;
        }
        y += 8;
    }
    Ok(())
}

/// `text` in lines of at most `width` characters, broken between words (a longer word
/// stands alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(last) if last.chars().count() + 1 + word.chars().count() <= width => {
                last.push(' ');
                last.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_24_palette_entries_differ_in_colour_or_marker_and_neighbours_in_both() {
        let style = |i: usize| (rgb(Colour::Palette(i)), Colour::Palette(i).marker());
        for i in 0..24 {
            for j in 0..i {
                assert_ne!(style(i), style(j), "entries {j} and {i}");
            }
            let (a, b) = (style(i), style(i + 1));
            assert!(
                a.0 != b.0 && a.1.shape != b.1.shape,
                "entries {i} and {}",
                i + 1
            );
        }
    }

    #[test]
    fn legend_labels_wrap_between_words() {
        assert_eq!(
            wrap("information floor: rate 2^-bits per key spent", 20),
            ["information floor:", "rate 2^-bits per key", "spent"]
        );
        assert_eq!(
            wrap("a-very-long-single-word", 5),
            ["a-very-long-single-word"]
        );
    }
}
