//! `e`: the session as an SVG page (throughput over time, the latency histogram, the results
//! table) and a JSON document (every row with batch mode's fields, the throughput history, the
//! baseline), beside the CSV of `s` with the same stem. Existing files are never replaced: each
//! export is created with `O_CREAT|O_EXCL` and takes the next free `-N` suffix.

use super::app::App;
use super::widgets::{fmt_ns, results};
use crate::export::session_svg::{render, SessionFigure};
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
            app.row_extra.get(i),
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
        title: format!("diskscope session: {}", file_name(&app.file)),
        subtitle: subtitle(app),
        series: app.history.iter().map(|v| app.in_unit(*v)).collect(),
        marks: {
            let oldest = app.history_pushed - app.history.len() as u64;
            app.marks
                .iter()
                .filter(|(at, _)| *at >= oldest)
                .map(|(at, l)| ((at - oldest) as usize, l.clone()))
                .collect()
        },
        bin_s: 0.1,
        unit: app.unit().into(),
        histogram,
        table,
    }
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
        app.file.display(),
        crate::size::format_bytes_approx(app.file_size_bytes),
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
        "file_size_bytes": app.file_size_bytes,
        "history_mib_s_per_100ms": app.history.iter().collect::<Vec<_>>(),
        "baseline": baseline,
        "rows": app.rows,
        "rows_delta_pct": app.rows.iter().map(|r| app.delta_pct(r)).collect::<Vec<_>>(),
    })
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
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
    }
    anyhow::bail!("{}: 999 exports already; move some away", dir.display())
}

/// Writes the SVG and the JSON beside the CSV file; returns their paths.
pub fn write_session(app: &App) -> anyhow::Result<Vec<PathBuf>> {
    let dir = app
        .csv_path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let stem = app
        .csv_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tui".into());
    let mut out = Vec::new();
    let (svg_path, mut f) = create_new(dir, &stem, "svg")?;
    f.write_all(render(&figure(app)).as_bytes())
        .with_context(|| format!("writing {}", svg_path.display()))?;
    out.push(svg_path);
    let (json_path, mut f) = create_new(dir, &stem, "json")?;
    let text = serde_json::to_string_pretty(&json(app))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", json_path.display()))?;
    out.push(json_path);
    Ok(out)
}
