//! The one description of a figure, and the one place that draws it ([`render`], in
//! [`svg`]). Every chart diskscope writes — a sweep's bars, a run's timeline, the
//! explorer's session page, the knee, compare's OLD vs NEW, a fleet's clients — is built as a
//! [`Figure`] by its front end and rendered here, so fonts, colours, ticks, legends and notes
//! look and behave the same everywhere, and a fix to one (a legend that runs off the image,
//! labels that overlap) is a fix to all.
//!
//! The model is small on purpose: a title and subtitle lines, panels stacked top to bottom
//! (each with two [`Axis`] — linear or log — and [`Layer`]s drawn in order: lines, points, bars
//! with whiskers, shaded bands, rules, text), a legend made from the named layers, notes under
//! the panels and an optional monospace table. Values are given in data units; the renderer
//! maps them (log10 on a log axis), places ticks (round numbers, decades), picks where the
//! legend fits without covering data (a corner, else wrapped rows under the plot, growing the
//! image), drops value labels that do not fit their bar and turns category labels that would
//! overlap.

pub mod model;
pub mod svg;

pub use model::*;
pub use svg::render;
