//! The kinds of sweep experiment, one module each: `throughput` (diskscope's own runs),
//! `command` (an external program timed on the same file), `syscalls` (the cost of a system
//! call) and `locality` (many small files vs one packed file). Each implements
//! [`SweepKind`]: its keys, its planning, its run and its summary. The planner, the executor
//! and the writers ask the kind; none of them lists kinds. Adding a kind is one module here and
//! one line in [`ALL`].

use super::experiment::SweepKind;

pub mod command;
pub mod knee;
pub mod locality;
pub mod syscalls;
pub mod throughput;

/// Every kind, in the order error messages list them.
pub const ALL: &[&dyn SweepKind] = &[
    &throughput::Throughput,
    &syscalls::Syscalls,
    &command::Command,
    &locality::Locality,
    &knee::Knee,
];

/// The kind named `name` in a sweep file.
pub fn by_name(name: &str) -> Option<&'static dyn SweepKind> {
    ALL.iter().copied().find(|k| k.name() == name)
}

/// `throughput, syscalls, command, locality`: for "use one of" messages.
pub fn names() -> String {
    ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_distinct_name_and_keys_the_section_knows() {
        let all = crate::sweep::layered::all_keys();
        let mut seen = std::collections::HashSet::new();
        for k in ALL {
            assert!(seen.insert(k.name()), "{} listed twice", k.name());
            assert_eq!(by_name(k.name()).map(|b| b.name()), Some(k.name()));
            for key in k.keys() {
                assert!(
                    all.contains(key),
                    "{}: key {key} is not a section key",
                    k.name()
                );
            }
        }
        assert_eq!(names(), "throughput, syscalls, command, locality, knee");
        assert!(by_name("thruput").is_none());
    }
}
