//! `e`: the session as an SVG page (throughput over the chart's span with its setting changes;
//! the row under the cursor — the live one by default — over its whole run, with its latency
//! p50 and p99 and its verdict; the latency histogram; the results table; the context) and a
//! JSON document (every row with batch mode's fields, the history at each span, that row's
//! series, the baseline), beside the CSV of `s` with the same stem. Existing files are never
//! replaced: each export is created with `O_CREAT|O_EXCL` and takes the next free `-N` suffix.

use super::app::App;
use super::widgets::{fmt_ns, results};
use crate::export::session_svg::{render, RowFigure, SessionFigure};
use crate::measure::histogram::log_buckets;
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The page's figure of the session.
pub fn figure(app: &App) -> SessionFigure {
    let mut table = vec![results::headers(app)];
    if let Some(live) = &app.live {
        if let Some(r) = live.result(&live.experiment, live.seconds()) {
            if r.figures.ops > 0 {
                table.push(results::cells(app, "▶", &r, Some(&live.extra(false))));
            }
        }
    }
    for (i, r) in app.rows.iter().enumerate().rev() {
        table.push(results::cells(
            app,
            results::mark(app, i).trim(),
            r,
            app.runs.row_extra.get(i),
        ));
    }
    for row in &mut table {
        row.truncate(results::SUMMARY_COLUMNS);
    }
    if app.baseline.is_none() {
        for row in &mut table {
            row.remove(4);
        }
    }
    let histogram = app
        .live
        .as_ref()
        .filter(|l| l.agg.ops > 0)
        .map(|l| {
            let b = log_buckets(&l.agg.latency, 2);
            let first = b.iter().position(|x| x.count > 0).unwrap_or(0);
            let last = b.iter().rposition(|x| x.count > 0).unwrap_or(0);
            b[first..=last]
                .iter()
                .map(|x| (fmt_ns(x.lo_ns), x.count))
                .collect()
        })
        .unwrap_or_default();
    SessionFigure {
        context: app
            .explored
            .context
            .as_ref()
            .map(|c| c.to_string())
            .unwrap_or_default(),
        row: row_figure(app),
        title: format!("diskscope session: {}", file_name(&app.file)),
        subtitle: subtitle(app),
        series: app
            .history
            .points(app.view.span)
            .iter()
            .map(|p| app.in_unit(p.mib_s))
            .collect(),
        marks: app
            .history
            .marks(app.view.span)
            .into_iter()
            .map(|(at, l)| (at, l.to_string()))
            .collect(),
        bin_s: app.view.span.point_s(),
        unit: app.unit().into(),
        histogram,
        table,
    }
}

/// The row `e` draws over its whole run: the finished row under the cursor when its series is
/// kept, else the live one; with its verdict (the live one judged as it stands).
pub fn row_figure(app: &App) -> Option<RowFigure> {
    use crate::tui::history::RowSeries;
    let finished = app.row_under_cursor().and_then(|i| {
        let series = app.runs.row_extra.get(i)?.series.as_ref()?;
        Some((app.rows.get(i)?.clone(), series, false))
    });
    let live = || {
        let seg = app.live.as_ref()?;
        let row = app.live_row(&seg.experiment)?;
        Some((row, &seg.series, true))
    };
    let (row, series, is_live): (_, &RowSeries, _) = finished.or_else(live)?;
    let verdict = match row.judgement.verdict.as_str() {
        "" => String::new(),
        "ok" => "ok".into(),
        v => format!(
            "{v} ({}): {}",
            row.judgement.reasons.replace(';', ", "),
            row.judgement.why
        ),
    };
    Some(RowFigure {
        label: format!(
            "{}{}",
            results::setting_label(&row),
            if is_live { " (live)" } else { "" }
        ),
        bin_s: series.point_s(),
        series: series.points.iter().map(|p| app.in_unit(p.mib_s)).collect(),
        p50_us: series.points.iter().map(|p| p.p50_us).collect(),
        p99_us: series.points.iter().map(|p| p.p99_us).collect(),
        verdict,
    })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// `host · /data/big.bin (1.00 GiB) · 3 rows · 2026-11-22 07:10 UTC`.
pub fn subtitle(app: &App) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let stamp = super::save::utc_stamp(secs);
    format!(
        "{} · {} ({}) · {} row{} · {}-{}-{} {}:{} UTC",
        crate::runner::host_name(),
        crate::text::shown_path(&app.file),
        crate::size::format_bytes_approx(app.explored.size_bytes),
        app.rows.len(),
        if app.rows.len() == 1 { "" } else { "s" },
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13]
    )
}

/// The JSON document of the session.
pub fn json(app: &App) -> serde_json::Value {
    let baseline = app.baseline.as_ref().map(|b| match b {
        super::baseline::Baseline::Pinned { index, record } => serde_json::json!({
            "pinned_row": index,
            "setup": record.setup,
            "mib_s": record.mib_s,
            "p99_us": record.p99_us,
        }),
        super::baseline::Baseline::Records(list) => serde_json::json!({
            "records": list.iter().map(|r| serde_json::json!({
                "setup": r.setup, "mib_s": r.mib_s, "p99_us": r.p99_us
            })).collect::<Vec<_>>()
        }),
    });
    serde_json::json!({
        "tool": "diskscope",
        "subtitle": subtitle(app),
        "file": app.file.display().to_string(),
        "file_size_bytes": app.explored.size_bytes,
        "history_mib_s_per_100ms": app
            .history
            .points(super::history::Span::Minute)
            .iter()
            .map(|p| p.mib_s)
            .collect::<Vec<_>>(),
        "history": super::history::Span::ALL.iter().map(|span| {
            let points = app.history.points(*span);
            serde_json::json!({
                "span": span.label(),
                "point_s": span.point_s(),
                "mib_s": points.iter().map(|p| p.mib_s).collect::<Vec<_>>(),
                "p50_us": points.iter().map(|p| finite(p.p50_us)).collect::<Vec<_>>(),
                "p99_us": points.iter().map(|p| finite(p.p99_us)).collect::<Vec<_>>(),
            })
        }).collect::<Vec<_>>(),
        "row": row_figure(app).map(|r| serde_json::json!({
            "setting": r.label,
            "point_s": r.bin_s,
            "throughput": r.series,
            "unit": app.unit(),
            "p50_us": r.p50_us.iter().map(|v| finite(*v)).collect::<Vec<_>>(),
            "p99_us": r.p99_us.iter().map(|v| finite(*v)).collect::<Vec<_>>(),
            "verdict": r.verdict,
        })),
        "context": app.explored.context.as_ref().map(|c| c.to_string()),
        "baseline": baseline,
        "rows": app.rows,
        "rows_delta_pct": app.rows.iter().map(|r| app.delta_pct(r)).collect::<Vec<_>>(),
    })
}

/// A figure for JSON: `null` for NaN (a point without operations).
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Creates `stem.ext`, or `stem-2.ext`, `stem-3.ext`, … if taken; never replaces a file.
fn create_new(dir: &Path, stem: &str, ext: &str) -> anyhow::Result<(PathBuf, std::fs::File)> {
    for n in 1..1000 {
        let name = if n == 1 {
            format!("{stem}.{ext}")
        } else {
            format!("{stem}-{n}.{ext}")
        };
        let path = dir.join(name);
        // O_CREAT|O_EXCL|O_NOFOLLOW: a file or a symlink of that name is skipped, never opened.
        match crate::fsguard::create_exclusive(&path) {
            Ok((f, _)) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("creating {}", crate::text::shown_path(&path)))
            }
        }
    }
    anyhow::bail!(
        "{}: 999 exports already; move some away",
        crate::text::shown_path(dir)
    )
}

/// Writes the SVG and the JSON beside the CSV file; returns their paths.
pub fn write_session(app: &App) -> anyhow::Result<Vec<PathBuf>> {
    let dir = app
        .explored
        .csv_path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating {}", crate::text::shown_path(dir)))?;
    let stem = app
        .explored
        .csv_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tui".into());
    let mut out = Vec::new();
    let (svg_path, mut f) = create_new(dir, &stem, "svg")?;
    f.write_all(render(&figure(app)).as_bytes())
        .with_context(|| format!("writing {}", crate::text::shown_path(&svg_path)))?;
    out.push(svg_path);
    let (json_path, mut f) = create_new(dir, &stem, "json")?;
    let text = serde_json::to_string_pretty(&json(app))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", crate::text::shown_path(&json_path)))?;
    out.push(json_path);
    Ok(out)
}
