//! The classic lab command lines, as thin front ends over the lab kinds (`crate::lab`): each
//! takes its parsed arguments, has the kind validate and run them, and prints: the answer alone
//! on stdout (so scripts can capture it), everything else on stderr. Nothing here is used by
//! the sweep or the explorer, and nothing here reads `cli` (the arguments are the kinds' own).

pub mod fast;
pub mod fleet_run;
pub mod knee;
pub mod run;
pub mod run2;
pub mod syscalls;
