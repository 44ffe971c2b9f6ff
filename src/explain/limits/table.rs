//! How a profile is shown: the table `limits` prints (what it was measured on, every ceiling
//! with its spread) or its JSON. Apart from the measuring so printing never reaches the
//! machine.

use crate::explain::profile::{memory_words, Profile};
use crate::text::shown;

/// The profile as a table (or JSON) on stdout.
pub fn print_profile(p: &Profile, json: bool) -> anyhow::Result<()> {
    let text = if json {
        serde_json::to_string_pretty(p)? + "\n"
    } else {
        crate::text::shown_lines(&table(p)).into_owned()
    };
    crate::text::write_stdout(text.as_bytes())
}

/// The human table of a profile.
pub fn table(p: &Profile) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "context: {}", p.context);
    match &p.provenance {
        Some(pv) => {
            let _ = writeln!(s, "{}", pv.summary());
        }
        None => {
            let _ = writeln!(
                s,
                "measured on an unknown file under unknown load (stored before limits kept it)"
            );
        }
    }
    match &p.spread {
        Some(sp) => {
            let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}%"));
            let _ = writeln!(
                s,
                "spread over {} tries (best − worst): per-operation {:.0}%, memory {:.0}%, device {}, readahead {}",
                sp.tries,
                sp.methods_pct,
                sp.memory_pct,
                opt(sp.device_pct),
                opt(sp.readahead_pct)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "spread unknown: stored before limits kept it, so its error is unknown"
            );
        }
    }
    let _ = writeln!(s, "\nper-operation cost (1-byte reads, cached, one thread)");
    let _ = writeln!(s, "  {:<10} {:>14} {:>10}", "method", "ops/s", "ns/op");
    for m in &p.methods {
        let _ = writeln!(
            s,
            "  {:<10} {:>14.0} {:>10.1}",
            m.method.as_str(),
            m.ops_per_s,
            1e9 / m.ops_per_s.max(1e-9)
        );
    }
    let _ = writeln!(
        s,
        "\nmemory ceiling (sum over threads; copy+XOR by buffer size per thread and buffer memory)"
    );
    let _ = writeln!(
        s,
        "  {:>7} {:>11} {:>11}  copy+XOR MiB/s",
        "threads", "copy MiB/s", "XOR MiB/s"
    );
    for m in &p.memory {
        let levels: Vec<String> = m
            .read_levels
            .iter()
            .map(|l| {
                format!(
                    "{:.0} @ {} {}",
                    l.copy_xor_mib_s,
                    crate::size::format_bytes_approx(l.buffer_bytes),
                    l.buffers
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "  {:>7} {:>11.0} {:>11.0}  {}",
            m.threads,
            m.copy_mib_s,
            m.xor_mib_s,
            levels.join(", ")
        );
    }
    let _ = writeln!(s, "\ndevice (O_DIRECT)");
    if p.devices.is_empty() {
        let _ = writeln!(s, "  not measured");
    }
    for d in &p.devices {
        let _ = writeln!(s, "  {} buffers ({}):", memory_words(d.buffers), d.buffers);
        let _ = writeln!(
            s,
            "    sequential 1M: {:.0} MiB/s at QD 1, {:.0} MiB/s at QD 32",
            d.seq_qd1_mib_s, d.seq_qd32_mib_s
        );
        let _ = writeln!(
            s,
            "    random 4K:     {:.0} IOPS at QD 1, {:.0} IOPS at QD 32",
            d.rand4k_qd1_iops, d.rand4k_qd32_iops
        );
    }
    match p.cold_readahead_mib_s {
        Some(v) => {
            let _ = writeln!(s, "  cold readahead (buffered 1M reads): {v:.0} MiB/s");
        }
        None => {
            let _ = writeln!(s, "  cold readahead: not measured");
        }
    }
    for n in &p.notes {
        let _ = writeln!(s, "note: {}", shown(n));
    }
    s
}
