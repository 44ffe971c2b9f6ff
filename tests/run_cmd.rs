//! run / run2 / fast / syscalls from the outside.
