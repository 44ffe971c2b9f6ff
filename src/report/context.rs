//! The machine a report was made on: host, kernel, CPU, memory, read from `uname(2)` and `/proc`.
//! Anything unavailable is left out rather than guessed.

/// (name, value) pairs describing this machine.
pub fn machine() -> Vec<(String, String)> {
    let mut v = Vec::new();
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    if !host.is_empty() {
        v.push(("host".to_string(), host));
    }
    if let Some(k) = kernel() {
        v.push(("kernel".to_string(), k));
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, m)| m.trim().to_string());
    let cores = std::thread::available_parallelism().map(|n| n.get()).ok();
    match (model, cores) {
        (Some(m), Some(n)) => v.push(("CPU".into(), format!("{m} ({n} usable cores)"))),
        (Some(m), None) => v.push(("CPU".into(), m)),
        (None, Some(n)) => v.push(("CPU".into(), format!("{n} usable cores"))),
        (None, None) => {}
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    if let Some(kib) = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse::<u64>().ok())
    {
        v.push((
            "memory".into(),
            format!("{:.1} GiB", kib as f64 / 1048576.0),
        ));
    }
    v
}

/// `Linux 6.1.0-18-amd64 x86_64`.
fn kernel() -> Option<String> {
    // SAFETY: utsname is plain old data; zeroed is a valid value and uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname for the duration of the call.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some(format!(
        "{} {} {}",
        field(&u.sysname),
        field(&u.release),
        field(&u.machine)
    ))
}

/// Now, UTC, as `2026-11-22 06:50 UTC`.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let s = crate::tui::save::utc_stamp(secs); // YYYYMMDD-HHMMSS
    format!(
        "{}-{}-{} {}:{} UTC",
        &s[0..4],
        &s[4..6],
        &s[6..8],
        &s[9..11],
        &s[11..13]
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_machine_has_a_kernel_and_memory() {
        let facts = super::machine();
        let names: Vec<&str> = facts.iter().map(|(k, _)| k.as_str()).collect();
        assert!(
            names.contains(&"kernel") && names.contains(&"memory"),
            "{facts:?}"
        );
        assert!(super::now_utc().ends_with(" UTC"));
    }
}
