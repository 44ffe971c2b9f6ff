//! Where a profile lives and how it is read and written: the cache directory (never the
//! user's in a unit test), the file name per host and device, a capped read that follows no
//! symlink and never blocks on a FIFO, one warning per ignored file, and the store.

use super::records::*;
use super::validate::*;
use crate::explain::context::Context;
use crate::text::{shown, shown_path};
use anyhow::Context as _;
use serde::Deserialize;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Seconds since the Unix epoch, now.
pub fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `$XDG_CACHE_HOME/diskscope/profiles` or `~/.cache/diskscope/profiles`: the one place a
/// profile is stored ([`store`]) and read ([`load_for`]). In the crate's own unit tests there
/// is none, so no test reads or writes the profile of the user who runs them (the integration
/// tests give each binary its own `HOME` and `XDG_CACHE_HOME`).
pub fn profile_dir() -> Option<PathBuf> {
    if cfg!(test) {
        return None;
    }
    profile_dir_in(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

/// [`profile_dir`] for these values of `XDG_CACHE_HOME` and `HOME` (an empty or relative
/// `XDG_CACHE_HOME` is ignored, as the XDG base directory specification says).
pub(super) fn profile_dir_in(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let base = xdg_cache_home
        .filter(|v| !v.is_empty() && Path::new(v).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            home.filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("diskscope").join("profiles"))
}

/// The file name of a context's profile: `<host>-<device>.json`, with path separators removed.
pub fn profile_file_name(ctx: &Context) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}-{}.json", clean(&ctx.host), clean(&ctx.device_key()))
}

/// Where the profile of `ctx` is stored.
pub fn profile_path(ctx: &Context) -> Option<PathBuf> {
    Some(profile_dir()?.join(profile_file_name(ctx)))
}

/// The text of the file at `path`, read safely: Ok(None) when there is none; an error for a
/// symbolic link (never followed: `O_NOFOLLOW`), anything but a regular file (a FIFO would
/// block the reader forever, `/dev/zero` would fill its memory), or a file over
/// [`MAX_PROFILE_BYTES`]. The type is checked before the open (`lstat`) and again on the open
/// descriptor (`fstat`), the open never blocks (`O_NONBLOCK`), and at most the cap and one byte
/// are read, so a file swapped or grown under us cannot change that.
pub fn read_capped(path: &Path) -> Result<Option<String>, ProfileError> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    fn kind_of(t: std::fs::FileType) -> Result<(), ProfileError> {
        if t.is_symlink() {
            Err(ProfileError::Symlink)
        } else if t.is_file() {
            Ok(())
        } else if t.is_fifo() {
            Err(ProfileError::NotRegular("a FIFO"))
        } else if t.is_char_device() || t.is_block_device() {
            Err(ProfileError::NotRegular("a device"))
        } else if t.is_dir() {
            Err(ProfileError::NotRegular("a directory"))
        } else {
            Err(ProfileError::NotRegular("a socket or other special file"))
        }
    }
    let before = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    kind_of(before.file_type())?;
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(ProfileError::Symlink),
        Err(e) => return Err(e.into()),
    };
    let m = f.metadata()?;
    kind_of(m.file_type())?;
    if m.len() > MAX_PROFILE_BYTES {
        return Err(ProfileError::TooLarge(m.len()));
    }
    if (m.dev(), m.ino()) != (before.dev(), before.ino()) {
        return Err(ProfileError::Parse(
            "it was replaced while being read".into(),
        ));
    }
    let mut bytes = Vec::new();
    f.take(MAX_PROFILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(ProfileError::TooLarge(bytes.len() as u64));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ProfileError::Parse("not UTF-8 text".into()))
}

/// The profile stored at `path`: Ok(None) when there is none or it has another format version
/// (an older diskscope's, measured again by `limits`); an error when it cannot be read safely,
/// is not a profile, or holds a value out of bounds.
pub fn load_path(path: &Path) -> Result<Option<Profile>, ProfileError> {
    let Some(text) = read_capped(path)? else {
        return Ok(None);
    };
    #[derive(Deserialize)]
    struct Version {
        version: u32,
    }
    match serde_json::from_str::<Version>(&text) {
        Ok(v) if v.version != PROFILE_VERSION => return Ok(None),
        _ => {}
    }
    let p: Profile = serde_json::from_str(&text).map_err(|e| ProfileError::Parse(e.to_string()))?;
    p.validate()?;
    Ok(Some(p))
}

/// The one warning line for a profile that was not used.
pub fn ignored_warning(path: &Path, e: &ProfileError) -> String {
    format!(
        "warning: ignoring the limits profile {}: {}; run `diskscope limits --refresh`",
        shown_path(path),
        shown(&e.to_string())
    )
}

/// Loads the profile for `ctx` if one is stored, readable and valid. A profile that is there
/// but cannot be used is ignored with one warning line on stderr (once per file and process).
pub fn load_for(ctx: &Context) -> Option<Profile> {
    let path = profile_path(ctx)?;
    match load_path(&path) {
        Ok(p) => p,
        Err(e) => {
            warn_once(&path, &ignored_warning(&path, &e));
            None
        }
    }
}

/// Prints `line` on stderr unless it was printed for `path` already in this process.
pub(super) fn warn_once(path: &Path, line: &str) {
    static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let Ok(mut warned) = WARNED.lock() else {
        return;
    };
    if !warned.iter().any(|w| w == path) {
        warned.push(path.to_path_buf());
        crate::eprintln_shown!("{line}");
    }
}

/// Stores `p` (replacing the earlier profile of the same host and device: the file is ours, by
/// its name under our cache directory). Written to a temporary name first, then renamed, so a
/// crash never leaves half a profile.
pub fn store(p: &Profile) -> anyhow::Result<PathBuf> {
    let path = profile_path(&p.context)
        .context("no cache directory: set HOME or XDG_CACHE_HOME to store the profile")?;
    let dir = path.parent().context("profile path has no parent")?;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating {}", crate::text::shown_path(dir)))?;
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    let text = serde_json::to_string_pretty(p)?;
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .with_context(|| format!("creating {}", crate::text::shown_path(&tmp)))?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)
        .with_context(|| format!("storing {}", crate::text::shown_path(&path)))?;
    Ok(path)
}
