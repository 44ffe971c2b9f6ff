//! The machine a report or a page was made on, as (name, value) facts for the page: host, kernel, CPU,
//! memory, from a [`Context`] (collected by the front end; [`machine`] reads this machine's,
//! through [`Context::machine`], the one place that reads them). Anything unavailable is left
//! out rather than guessed.

use super::context::Context;

/// (name, value) pairs describing this machine (read now: for a front end, not an exporter).
pub fn machine() -> Vec<(String, String)> {
    facts_of(&Context::machine())
}

/// (name, value) pairs describing the machine of `c`.
pub fn facts_of(c: &Context) -> Vec<(String, String)> {
    let c = c.clone();
    let mut v = Vec::new();
    if !c.host.is_empty() {
        v.push(("host".to_string(), c.host));
    }
    if !c.kernel.is_empty() {
        v.push((
            "kernel".to_string(),
            format!("Linux {} {}", c.kernel, std::env::consts::ARCH),
        ));
    }
    let cores = c.cpu_count;
    v.push((
        "CPU".into(),
        if c.cpu_model.is_empty() {
            format!("{cores} usable cores")
        } else {
            format!("{} ({cores} usable cores)", c.cpu_model)
        },
    ));
    if c.mem_total_bytes > 0 {
        v.push((
            "memory".into(),
            format!("{:.1} GiB", c.mem_total_bytes as f64 / (1u64 << 30) as f64),
        ));
    }
    v
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
    }
}
