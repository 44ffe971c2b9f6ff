//! Guards around every file diskscope creates, removes or opens as input, so the promises
//! "never overwrites", "removes only its own files" and "never hangs on a file that cannot end"
//! hold by construction rather than by care at each call site:
//!
//! * [`create_exclusive`] makes a new file with `O_CREAT|O_EXCL|O_NOFOLLOW`: it never opens a
//!   file (or a symlink) that was already there, and returns a [`Created`] record of the inode it
//!   made. [`Created::remove`] unlinks the path only while it still names that same inode, so a
//!   file the user put in its place later is left alone.
//! * [`free_bytes`] / [`ensure_free`] check the file system has room before a large write, on the
//!   nearest existing ancestor (so nothing is created just to be refused).
//! * [`DirLock`] is an exclusive `flock` on a lock file in an output directory: a second batch
//!   writing to the same `--out` is refused with the first one's pid instead of interleaving rows.
//! * [`check_input`] refuses, before any `open`, inputs that would block or never end: FIFOs,
//!   sockets, character devices (`/dev/zero`), and `/proc` or `/sys` pseudo-files. Since a path
//!   can change between that look and the `open`, [`open_then_check`] opens with `O_NONBLOCK`
//!   and checks the descriptor itself before clearing the flag, and [`reopen`] makes further
//!   descriptors of an open file through `/proc/self/fd`, never through the path.
//!
//! The parts: `create` (what this run made, and removing only that), `quote` (paths quoted for
//! a shell), `space` (room before a write), `lock` (the output directory's lock), `output`
//! (checks and writes of output files) and `input` (inputs that cannot hang the run).

mod create;
mod input;
mod lock;
mod output;
mod quote;
mod space;

pub use self::create::*;
pub use self::input::*;
pub use self::lock::*;
pub use self::output::*;
pub use self::quote::*;
pub use self::space::*;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn exclusive_creation_refuses_an_existing_file_and_a_symlink() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, b"user data").unwrap();
        let err = create_exclusive(&target).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(create_exclusive(&link).is_err());
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(create_exclusive(&dangling).is_err());
        assert!(!d.path().join("nowhere").exists());
        assert_eq!(std::fs::read(&target).unwrap(), b"user data");
    }

    #[test]
    fn removal_leaves_a_file_that_replaced_ours() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let (_f, created) = create_exclusive(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, b"user").unwrap();
        assert!(!created.remove());
        assert_eq!(std::fs::read(&p).unwrap(), b"user");
        let q = d.path().join("g");
        let (_g, mine) = create_exclusive(&q).unwrap();
        assert!(mine.remove());
        assert!(!q.exists());
    }

    #[test]
    fn a_second_lock_on_the_same_directory_names_the_holder() {
        let d = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(d.path(), "--out").unwrap();
        let err = DirLock::acquire(d.path(), "--out").unwrap_err();
        assert!(
            matches!(err, LockError::Held { pid: Some(p), .. } if p == std::process::id()),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert_eq!(lock_holder(d.path()), Some(std::process::id().to_string()));
        drop(first);
        assert!(!d.path().join(LOCK_NAME).exists());
        assert_eq!(lock_holder(d.path()), None);
        let again = DirLock::acquire(d.path(), "--out");
        assert!(again.is_ok());
        drop(again);
        std::fs::write(d.path().join(LOCK_NAME), b"my notes about this run").unwrap();
        let err = DirLock::acquire(d.path(), "--out").unwrap_err();
        assert!(matches!(err, LockError::NotOurs { .. }), "{err:?}");
        let err = err.to_string();
        assert!(err.contains("not provably a diskscope lock file"), "{err}");
        assert_eq!(
            std::fs::read(d.path().join(LOCK_NAME)).unwrap(),
            b"my notes about this run"
        );
    }

    #[test]
    fn inputs_that_cannot_end_are_refused_by_name() {
        let err = check_input(Path::new("/dev/zero"), "FILE").unwrap_err();
        assert!(matches!(err.problem, InputProblem::Kind(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "FILE: /dev/zero is a character device, which has no fixed size (a device such as \
             /dev/zero never ends); give a regular file (or a block device)"
        );
        let err = err.to_string();
        assert!(
            err.contains("/dev/zero") && err.contains("character device"),
            "{err}"
        );
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let err = check_input(&fifo, "FILE").unwrap_err().to_string();
        assert!(err.contains("FIFO") && err.contains("pipe"), "{err}");
        let err = check_input(Path::new("/proc/self/status"), "FILE").unwrap_err();
        assert!(matches!(err.problem, InputProblem::PseudoFile), "{err:?}");
        let err = err.to_string();
        assert!(err.contains("pseudo-file"), "{err}");
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        assert_eq!(check_input(&f, "FILE").unwrap().0, InputKind::Regular);
        // Streaming readers take the kernel's settings, but never another pseudo-file (some
        // never end), a named FIFO or /dev/zero.
        if Path::new("/proc/sys/kernel/ostype").exists() {
            assert!(matches!(
                check_stream_input(Path::new("/proc/sys/kernel/ostype"), "FILE"),
                Ok(false)
            ));
        }
        assert!(check_stream_input(Path::new("/proc/self/status"), "FILE").is_err());
        assert!(check_stream_input(&fifo, "FILE").is_err());
        assert!(check_stream_input(Path::new("/dev/zero"), "FILE").is_err());
    }

    #[test]
    fn shell_quoting_leaves_plain_paths_and_quotes_the_rest() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(shell_quote("/tmp/a.bin"), "/tmp/a.bin");
        assert_eq!(shell_quote("my file"), "'my file'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("a\u{1b}]0;x\u{7}"), "$'a\\x1b]0;x\\x07'");
        let p = std::ffi::OsStr::from_bytes(b"o\xff'\\");
        assert_eq!(shell_quote_path(Path::new(p)), "$'o\\xff\\'\\\\'");
    }
}
