//! The model of a figure: what is drawn, in data units; the renderer ([`super::svg`]) decides
//! where.

/// A colour, as RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Color(pub u8, pub u8, pub u8);

impl Color {
    pub const BLACK: Color = Color(0, 0, 0);
    pub const WHITE: Color = Color(255, 255, 255);
    pub const GREY: Color = Color(127, 127, 127);
    pub const DARK_GREY: Color = Color(85, 85, 85);
    pub const RED: Color = Color(214, 39, 40);
    pub const GREEN: Color = Color(44, 160, 44);
    pub const BLUE: Color = Color(31, 119, 180);
    /// A note that warns (suspect results).
    pub const WARN: Color = Color(150, 30, 30);

    /// The colour of series `i` (matplotlib's tab10, in order), so a run keeps its colour
    /// across the bar and timeline figures.
    pub fn series(i: usize) -> Color {
        PALETTE[i % PALETTE.len()]
    }

    /// The same hue at half the brightness (a model line over its bars).
    pub fn darker(self) -> Color {
        Color(self.0 / 2, self.1 / 2, self.2 / 2)
    }

    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// matplotlib's tab10.
pub const PALETTE: [Color; 10] = [
    Color(31, 119, 180),
    Color(255, 127, 14),
    Color(44, 160, 44),
    Color(214, 39, 40),
    Color(148, 103, 189),
    Color(140, 86, 75),
    Color(227, 119, 194),
    Color(127, 127, 127),
    Color(188, 189, 34),
    Color(23, 190, 207),
];

/// A whole figure: a header, panels stacked top to bottom, notes, and an optional table.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub title: String,
    /// Grey lines under the title: where and when it was measured, how to read it.
    pub subtitle: Vec<String>,
    /// Image width, pixels; the height follows from the parts.
    pub width_px: f64,
    pub panels: Vec<Panel>,
    /// Lines under the panels, wrapped to the width.
    pub notes: Vec<Note>,
    /// A monospace table at the bottom (header first).
    pub table: Option<Table>,
}

impl Default for Figure {
    fn default() -> Self {
        Figure {
            title: String::new(),
            subtitle: Vec::new(),
            width_px: 1000.0,
            panels: Vec::new(),
            notes: Vec::new(),
            table: None,
        }
    }
}

impl Figure {
    /// A figure titled `title`, 1000 px wide.
    pub fn new(title: impl Into<String>) -> Figure {
        Figure {
            title: title.into(),
            ..Figure::default()
        }
    }

    /// Adds a subtitle line (an empty one is left out).
    pub fn subtitle(mut self, line: impl Into<String>) -> Figure {
        let line = line.into();
        if !line.is_empty() {
            self.subtitle.push(line);
        }
        self
    }

    pub fn panel(mut self, p: Panel) -> Figure {
        self.panels.push(p);
        self
    }

    pub fn note(mut self, text: impl Into<String>, color: Color) -> Figure {
        self.notes.push(Note {
            text: text.into(),
            color,
        });
        self
    }
}

/// A line of text under the panels.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub text: String,
    pub color: Color,
}

/// A monospace table: `rows[0]` is the header (bold); the first `left_columns` columns are
/// aligned left, the others right.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub caption: String,
    pub rows: Vec<Vec<String>>,
    pub left_columns: usize,
}

/// One plot: its caption, axes, layers and legend.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Above the plot area.
    pub caption: String,
    /// Height of the plot area, pixels.
    pub height_px: f64,
    pub x: Axis,
    pub y: Axis,
    /// Drawn in order, over the grid.
    pub layers: Vec<Layer>,
    pub legend: Legend,
    /// Written in the middle of the plot when no layer has anything to draw.
    pub empty_text: String,
}

impl Default for Panel {
    fn default() -> Self {
        Panel {
            caption: String::new(),
            height_px: 400.0,
            x: Axis::default(),
            y: Axis::default(),
            layers: Vec::new(),
            legend: Legend::Auto,
            empty_text: "nothing to draw".into(),
        }
    }
}

impl Panel {
    pub fn new(x: Axis, y: Axis) -> Panel {
        Panel {
            x,
            y,
            ..Panel::default()
        }
    }

    pub fn caption(mut self, c: impl Into<String>) -> Panel {
        self.caption = c.into();
        self
    }

    pub fn height(mut self, px: f64) -> Panel {
        self.height_px = px;
        self
    }

    pub fn legend(mut self, l: Legend) -> Panel {
        self.legend = l;
        self
    }

    pub fn layer(mut self, l: impl Into<Layer>) -> Panel {
        self.layers.push(l.into());
        self
    }

    pub fn empty_text(mut self, t: impl Into<String>) -> Panel {
        self.empty_text = t.into();
        self
    }
}

/// How values map to positions on an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    #[default]
    Linear,
    /// log10: equal distances are equal ratios; values at or below zero sit on the axis' start.
    Log,
}

/// Where an axis puts its ticks.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Ticks {
    /// Round steps (1, 2, 5 × 10^k) on a linear axis, decades on a log one.
    #[default]
    Auto,
    /// At these values, labelled with `axis::fmt_tick`.
    At(Vec<f64>),
    /// Named positions (categories).
    Labels(Vec<(f64, String)>),
    /// None, and no axis line.
    Hidden,
}

/// One axis: its label, scale, range and ticks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    /// `(lo, hi)` in data units; from the data when None (a linear axis from 0, when nothing
    /// is negative, to a round top above the largest value; a log axis over whole decades).
    pub range: Option<(f64, f64)>,
    pub ticks: Ticks,
    /// Light lines across the plot at the ticks (on by default for y).
    pub grid: bool,
}

impl Axis {
    /// A linear axis labelled `label`.
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            ..Axis::default()
        }
    }

    /// A log10 axis labelled `label`.
    pub fn log(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log,
            ..Axis::default()
        }
    }

    pub fn range(mut self, lo: f64, hi: f64) -> Axis {
        self.range = Some((lo, hi));
        self
    }

    pub fn ticks(mut self, t: Ticks) -> Axis {
        self.ticks = t;
        self
    }

    pub fn grid(mut self) -> Axis {
        self.grid = true;
        self
    }
}

/// Where the legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Legend {
    /// The upper corner that covers no data (right first), else wrapped rows under the plot.
    #[default]
    Auto,
    /// This corner first, then the others, then under the plot.
    Prefer(Corner),
    /// Wrapped rows under the plot.
    Below,
    /// No legend.
    Hidden,
}

/// A corner of the plot area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    UpperRight,
    UpperLeft,
    LowerRight,
    LowerLeft,
}

/// Something drawn in a panel.
#[derive(Debug, Clone, PartialEq)]
pub enum Layer {
    Line(Line),
    Points(Points),
    Bars(Bars),
    Band(Band),
    Rule(Rule),
    Text(Text),
}

impl From<Line> for Layer {
    fn from(l: Line) -> Layer {
        Layer::Line(l)
    }
}
impl From<Points> for Layer {
    fn from(l: Points) -> Layer {
        Layer::Points(l)
    }
}
impl From<Bars> for Layer {
    fn from(l: Bars) -> Layer {
        Layer::Bars(l)
    }
}
impl From<Band> for Layer {
    fn from(l: Band) -> Layer {
        Layer::Band(l)
    }
}
impl From<Rule> for Layer {
    fn from(l: Rule) -> Layer {
        Layer::Rule(l)
    }
}
impl From<Text> for Layer {
    fn from(l: Text) -> Layer {
        Layer::Text(l)
    }
}

/// A polyline through `points` (a non-finite value breaks it); named ones are in the legend.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: Option<String>,
    pub color: Color,
    pub width: f64,
    /// Dash and gap, pixels.
    pub dash: Option<(f64, f64)>,
    pub opacity: f64,
    pub points: Vec<(f64, f64)>,
}

impl Line {
    pub fn new(color: Color, points: Vec<(f64, f64)>) -> Line {
        Line {
            name: None,
            color,
            width: 1.5,
            dash: None,
            opacity: 1.0,
            points,
        }
    }

    pub fn name(mut self, n: impl Into<String>) -> Line {
        self.name = Some(n.into());
        self
    }

    pub fn width(mut self, px: f64) -> Line {
        self.width = px;
        self
    }

    pub fn dashed(mut self, dash: f64, gap: f64) -> Line {
        self.dash = Some((dash, gap));
        self
    }

    pub fn opacity(mut self, o: f64) -> Line {
        self.opacity = o;
        self
    }
}

/// Markers; each may carry an interval drawn as a vertical bar through it.
#[derive(Debug, Clone, PartialEq)]
pub struct Points {
    pub name: Option<String>,
    pub color: Color,
    pub radius: f64,
    pub marks: Vec<Mark>,
}

/// One marker: hollow (an outline) or filled, with an optional interval `(lo, hi)` in y.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub hollow: bool,
    pub interval: Option<(f64, f64)>,
}

/// Bars of one series (one legend entry).
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub name: Option<String>,
    pub color: Color,
    pub opacity: f64,
    pub bars: Vec<Bar>,
}

/// One bar from the axis' start (or `base`) to `y`, spanning `x0..x1`; hollow bars are
/// outlined. A whisker `(lo, hi)` and a dot (the median) are drawn over it, and `label` above
/// it where the bar is wide enough for the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub x0: f64,
    pub x1: f64,
    pub y: f64,
    pub base: Option<f64>,
    pub hollow: bool,
    pub whisker: Option<(f64, f64)>,
    pub dot: Option<f64>,
    pub label: Option<String>,
}

impl Bar {
    pub fn new(x0: f64, x1: f64, y: f64) -> Bar {
        Bar {
            x0,
            x1,
            y,
            base: None,
            hollow: false,
            whisker: None,
            dot: None,
            label: None,
        }
    }
}

/// A shaded rectangle: `x` and `y` ranges in data units, the whole axis where None.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub x: Option<(f64, f64)>,
    pub y: Option<(f64, f64)>,
    pub color: Color,
    pub opacity: f64,
}

/// A line across the whole plot at one value, with an optional label near its start.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub at: RuleAt,
    pub color: Color,
    pub width: f64,
    pub dash: Option<(f64, f64)>,
    /// Written beside the line (at the top of a vertical one, at the left of a horizontal one).
    pub label: Option<String>,
    /// Where a vertical rule's label sits down from the top, as a share of the height.
    pub label_down: f64,
    /// Its legend entry.
    pub name: Option<String>,
}

/// Which way a [`Rule`] runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RuleAt {
    /// Vertical, at this x.
    X(f64),
    /// Horizontal, at this y.
    Y(f64),
}

impl Rule {
    pub fn vertical(x: f64, color: Color) -> Rule {
        Rule {
            at: RuleAt::X(x),
            color,
            width: 1.0,
            dash: None,
            label: None,
            label_down: 0.02,
            name: None,
        }
    }

    pub fn horizontal(y: f64, color: Color) -> Rule {
        Rule {
            at: RuleAt::Y(y),
            ..Rule::vertical(0.0, color)
        }
    }

    pub fn width(mut self, px: f64) -> Rule {
        self.width = px;
        self
    }

    pub fn dashed(mut self, dash: f64, gap: f64) -> Rule {
        self.dash = Some((dash, gap));
        self
    }

    pub fn label(mut self, l: impl Into<String>, down: f64) -> Rule {
        self.label = Some(l.into());
        self.label_down = down;
        self
    }

    pub fn name(mut self, n: impl Into<String>) -> Rule {
        self.name = Some(n.into());
        self
    }
}

/// How text lines up with its point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Anchor {
    #[default]
    Start,
    Middle,
    End,
}

/// Text at a point in data units, moved by `dx`, `dy` pixels; `above`: its bottom sits at the
/// point (else its middle). A boxed text has a light background so lines under it do not cross
/// the words; texts that would overlap an earlier text of the panel are moved up until free.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub x: f64,
    pub y: f64,
    pub text: String,
    pub color: Color,
    pub size: f64,
    pub anchor: Anchor,
    pub above: bool,
    pub dx: f64,
    pub dy: f64,
    pub boxed: bool,
}

impl Text {
    pub fn new(x: f64, y: f64, text: impl Into<String>) -> Text {
        Text {
            x,
            y,
            text: text.into(),
            color: Color(20, 20, 20),
            size: 11.0,
            anchor: Anchor::Start,
            above: true,
            dx: 0.0,
            dy: 0.0,
            boxed: false,
        }
    }

    pub fn color(mut self, c: Color) -> Text {
        self.color = c;
        self
    }

    pub fn size(mut self, px: f64) -> Text {
        self.size = px;
        self
    }

    pub fn anchor(mut self, a: Anchor) -> Text {
        self.anchor = a;
        self
    }

    pub fn offset(mut self, dx: f64, dy: f64) -> Text {
        self.dx = dx;
        self.dy = dy;
        self
    }

    pub fn boxed(mut self) -> Text {
        self.boxed = true;
        self
    }
}
