//! `run2 FILE BLOCK_SIZE [--target SECONDS]`: the lab's "reasonable block count" search. Starting
//! at one block, doubles the count until a read takes at least the target, then prints the count.

use crate::config::usage;
use crate::lab::println_stdout;
use crate::lab::throughput::{run2_spec, Run2Args};
use crate::runner::{Run, RunError};
use crate::size::format_size;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// One step of the search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub block_count: u64,
    pub bytes: u64,
    pub seconds: f64,
}

/// How the search ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchEnd {
    /// This count took at least the target.
    Found(Step),
    /// The file ended before the target was reached; the last step read the whole file.
    FileTooSmall(Step),
}

/// Doubles the block count from 1 until `measure(count)` takes `target` seconds or the file
/// ends (a step reads fewer bytes than asked). `measure` returns bytes read and seconds.
pub fn search(
    block_size: u64,
    target: f64,
    mut measure: impl FnMut(u64) -> anyhow::Result<(u64, f64)>,
) -> anyhow::Result<SearchEnd> {
    let mut count = 1u64;
    loop {
        let (bytes, seconds) = measure(count)?;
        let step = Step {
            block_count: count,
            bytes,
            seconds,
        };
        if seconds >= target {
            return Ok(SearchEnd::Found(step));
        }
        if bytes < block_size.saturating_mul(count) {
            return Ok(SearchEnd::FileTooSmall(step));
        }
        count = count
            .checked_mul(2)
            .filter(|c| block_size.checked_mul(*c).is_some())
            .ok_or_else(|| anyhow::anyhow!("block count overflowed before reaching the target"))?;
    }
}

pub fn execute(a: &Run2Args) -> anyhow::Result<i32> {
    crate::config::check_seconds(a.target, "--target")?;
    // The search reads the file again and again: it must be a file that ends, with data.
    // (A missing file is reported by the first run, as before.)
    crate::fsguard::check_input_if_present(&a.file, "FILE").map_err(|e| usage(e.to_string()))?;
    if std::fs::metadata(&a.file).is_ok_and(|m| m.is_file() && m.len() == 0) {
        return Err(usage(format!(
            "FILE: {} is empty, so no block count can take {} s to read; make a file with data, \
             e.g. `run BIGFILE -w 1M 1024`, and time that",
            crate::text::shown_path(&a.file),
            a.target
        )));
    }
    let mut spec = run2_spec(a)?;
    let bs = spec.setup.block_size_bytes;
    let mut last = None;
    let end = search(bs, a.target, |count| {
        spec.target.block_count = Some(count);
        let mut o = Run::start(&spec, "run2", Arc::new(AtomicBool::new(false)))?
            .finish()
            .map_err(RunError::into_anyhow)?;
        crate::explain::judge_result(&mut o.result);
        let done = (o.result.figures.bytes, o.result.figures.seconds);
        last = Some(o);
        Ok(done)
    })?;
    match end {
        SearchEnd::Found(s) => {
            match (&last, a.json) {
                (Some(o), true) => println_stdout(&crate::explain::json::run_document(
                    "run2", &spec, &o.result, &o.notes,
                )?)?,
                _ => println_stdout(&s.block_count.to_string())?,
            }
            crate::eprintln_shown!(
                "file size {} bytes ({}), {} blocks of {} = {} bytes read in {:.3} s: {:.1} MiB/s",
                std::fs::metadata(&a.file).map(|m| m.len()).unwrap_or(0),
                crate::size::format_bytes_approx(
                    std::fs::metadata(&a.file).map(|m| m.len()).unwrap_or(0)
                ),
                s.block_count,
                format_size(bs),
                s.bytes,
                s.seconds,
                s.bytes as f64 / (1024.0 * 1024.0) / s.seconds.max(1e-9)
            );
            if let Some(o) = &last {
                for line in crate::explain::stderr_lines(&spec.target.path, &o.result) {
                    crate::eprintln_shown!("{line}");
                }
                for line in crate::explain::verdict::lines_of(&o.result) {
                    crate::eprintln_shown!("{line}");
                }
            }
            Ok(0)
        }
        SearchEnd::FileTooSmall(s) => {
            let memory = crate::runner::mem_available_bytes();
            crate::eprintln_shown!(
                "error: {}",
                too_small_advice(
                    crate::text::shown_path(&a.file).as_ref(),
                    s,
                    bs,
                    a.target,
                    memory
                )
            );
            Ok(1)
        }
    }
}

/// Block size of the suggested write: 1 MiB writes make a big file many times faster than
/// 4 KiB ones (the run's own block size when it is larger).
const SUGGESTED_WRITE_BLOCK_BYTES: u64 = 1 << 20;

/// What to do when the file ended before the target: the size the search needs (the first
/// power-of-two block count whose read, at the rate just measured, takes the target), the
/// `run -w` line that makes it in 1 MiB writes, how long reading it will take at that rate,
/// and, when it is larger than the memory available, why the rate will drop (its reads will
/// come from the device, so a smaller file may already do).
fn too_small_advice(
    file: &str,
    s: Step,
    bs: u64,
    target: f64,
    memory_available: Option<u64>,
) -> String {
    let rate = s.bytes as f64 / s.seconds.max(1e-9);
    let need = (rate * target * 1.25) as u64;
    let count = need.div_ceil(bs).max(1).next_power_of_two();
    let size = count.saturating_mul(bs);
    let write_bs = bs.max(SUGGESTED_WRITE_BLOCK_BYTES);
    let write_count = size.div_ceil(write_bs);
    let mut msg = format!(
        "{file} ends after {} bytes, read in {:.3} s ({:.1} MiB/s), before the {target} s \
         target; at that rate reaching it needs a file of about {} ({count} blocks of {}, read \
         in about {:.0} s); make one with: run BIGFILE -w {} {write_count}",
        s.bytes,
        s.seconds,
        rate / (1024.0 * 1024.0),
        crate::size::format_bytes_approx(size),
        format_size(bs),
        size as f64 / rate.max(1.0),
        format_size(write_bs),
    );
    if let Some(m) = memory_available.filter(|m| size > *m) {
        msg += &format!(
            " (larger than the {} of memory available: its reads will come from the device, \
             slower than this file's, so a smaller file may reach the target; run2 it to see)",
            crate::size::format_bytes_approx(m)
        );
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_doubles_until_the_target_is_reached() {
        // 1 ms per block: 5 ms needs 8 blocks (1, 2, 4 are too fast).
        let mut asked = Vec::new();
        let end = search(10, 0.005, |c| {
            asked.push(c);
            Ok((c * 10, c as f64 * 0.001))
        })
        .unwrap();
        assert_eq!(asked, vec![1, 2, 4, 8]);
        assert!(matches!(end, SearchEnd::Found(s) if s.block_count == 8));
    }

    #[test]
    fn a_file_too_small_is_answered_with_1m_writes_of_the_size_the_rate_needs() {
        // 100 MiB in 0.1 s (1000 MiB/s), 4K blocks, 5 s target: 6.1 GiB with the margin, so
        // 2^21 blocks of 4K (8 GiB), written as 8192 blocks of 1M.
        let step = Step {
            block_count: 25600,
            bytes: 100 << 20,
            seconds: 0.1,
        };
        let m = too_small_advice("f", step, 4096, 5.0, None);
        assert!(m.contains("run BIGFILE -w 1M 8192"), "{m}");
        assert!(m.contains("2097152 blocks of 4K"), "{m}");
        assert!(!m.contains("memory available"), "{m}");
        let m = too_small_advice("f", step, 4096, 5.0, Some(4 << 30));
        assert!(m.contains("memory available"), "{m}");
        // A block larger than 1 MiB is written as it is read.
        let m = too_small_advice("f", step, 4 << 20, 5.0, None);
        assert!(m.contains("-w 4M "), "{m}");
    }

    #[test]
    fn search_stops_when_the_file_ends_first() {
        // A 35-byte file of 10-byte blocks: the count of 4 reads only 35 bytes.
        let end = search(10, 100.0, |c| Ok(((c * 10).min(35), 0.001))).unwrap();
        assert!(matches!(end, SearchEnd::FileTooSmall(s) if s.block_count == 4 && s.bytes == 35));
    }
}
