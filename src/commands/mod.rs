//! `run` under mpirun: the one front end that joins a lab kind (`throughput`) with the fleet
//! (`crate::fleet`). Every other command line lives with its kind, in `crate::lab` (its
//! parameters, its run and its printing, `lab::<kind>::command`); a local `run` never reaches
//! here (`cli::run_command` picks this only when an MPI launcher started the process).

pub mod fleet_run;
