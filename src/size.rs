//! Byte sizes as users type them (`4096`, `4K`, `1M`, `1MiB`, `2G`) and as we print them.
//!
//! Every suffix is binary (K = 1024), as in fio and in the lab handout: nobody sweeping block sizes
//! wants `4K` to mean 4000. `B`, `iB` and case are accepted so `4k`, `4KB`, `4KiB` all mean 4096.

/// Parses a size such as `4096`, `4K`, `1M`, `1MiB`, `3g`. Returns a message naming the problem.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    // Shown escaped, so a control character or newline in the input keeps the message one line.
    let text = text.escape_debug().to_string();
    if t.is_empty() {
        return Err("empty size; write bytes or use a suffix such as 4K, 1M, 1G".into());
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{text}' is not a size; write bytes or use a suffix such as 4K, 1M, 1G"
        ));
    }
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{text}' is too large to be a size"))?;
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "'{text}' has an unknown suffix '{}'; use K, M, G or T (binary, 1K = 1024)",
                suffix.escape_debug()
            ))
        }
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("'{text}' is too large to be a size"))
}

/// Formats bytes compactly and exactly where possible: `4K`, `1M`, `1536`, `3G`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u32, &str); 4] = [(40, "T"), (30, "G"), (20, "M"), (10, "K")];
    for (shift, unit) in UNITS {
        let base = 1u64 << shift;
        if bytes >= base && bytes.is_multiple_of(base) {
            return format!("{}{unit}", bytes / base);
        }
    }
    bytes.to_string()
}

/// Formats bytes approximately for humans: `1.50 GiB`.
pub fn format_bytes_approx(bytes: u64) -> String {
    let b = bytes as f64;
    const UNITS: [(f64, &str); 4] = [
        (1024.0 * 1024.0 * 1024.0 * 1024.0, "TiB"),
        (1024.0 * 1024.0 * 1024.0, "GiB"),
        (1024.0 * 1024.0, "MiB"),
        (1024.0, "KiB"),
    ];
    for (base, unit) in UNITS {
        if b >= base {
            return format!("{:.2} {unit}", b / base);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_are_binary_and_case_insensitive() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("1mb"), Ok(1 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("7B"), Ok(7));
    }

    #[test]
    fn garbage_and_overflow_are_rejected_with_a_reason() {
        assert!(parse_size("").is_err());
        assert!(parse_size("abc").unwrap_err().contains("not a size"));
        assert!(parse_size("4X").unwrap_err().contains("unknown suffix"));
        assert!(parse_size("1.5K").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn formatting_round_trips() {
        for v in [1u64, 512, 1536, 4096, 1 << 20, 3 << 30, 5 << 40] {
            assert_eq!(parse_size(&format_size(v)), Ok(v));
        }
        assert_eq!(format_size(4096), "4K");
        assert_eq!(format_bytes_approx(1536 * 1024 * 1024), "1.50 GiB");
    }
}
