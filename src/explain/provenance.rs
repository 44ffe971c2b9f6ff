//! Where results were measured, as the exporters need it: the storage under each file
//! (`ext4 on vda`, for a figure's subtitle) and the machine's `diskscope limits` profile for
//! its device (for the model line over block-size bars and the JSON's explanations). A front
//! end gathers it once, where the run is judged and while the test file still exists
//! ([`Provenance::gather`] with a lookup it chooses), and hands it to the exporters, which are
//! then pure functions of the results and this: none reads the machine, the profile store or
//! `/proc/self/mountinfo`, so a figure drawn twice from the same rows is the same figure, and
//! a test can give any profile it likes.

use super::profile::Profile;
use crate::measure::RunResult;
use std::path::Path;

/// What is known of one measured file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileFacts {
    /// The file as the rows name it.
    pub file: String,
    /// Its storage in words: `ext4 on vda (QEMU HARDDISK)`, with a warning when it is not a
    /// plain local disk; None when unknown.
    pub storage: Option<String>,
    /// The `limits` profile of its device; None without one.
    pub profile: Option<Profile>,
}

/// What is known of every file some results were measured on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Provenance {
    pub files: Vec<FileFacts>,
}

impl Provenance {
    /// Nothing known: figures without a model line or storage, JSON without explanations.
    pub fn none() -> Provenance {
        Provenance::default()
    }

    /// The facts of every distinct file of `rows`, each looked up once with `look` (the front
    /// end's choice: the machine's, or made up in a test).
    pub fn gather<'a>(
        rows: impl IntoIterator<Item = &'a RunResult>,
        look: impl Fn(&Path) -> FileFacts,
    ) -> Provenance {
        let mut files: Vec<FileFacts> = Vec::new();
        for r in rows {
            if r.identity.file.is_empty() || files.iter().any(|f| f.file == r.identity.file) {
                continue;
            }
            files.push(FileFacts {
                file: r.identity.file.clone(),
                ..look(Path::new(&r.identity.file))
            });
        }
        Provenance { files }
    }

    /// The same profile and storage for every file (tests, a synthetic example).
    pub fn everywhere(storage: Option<String>, profile: Option<Profile>) -> Provenance {
        Provenance {
            files: vec![FileFacts {
                file: String::new(),
                storage,
                profile,
            }],
        }
    }

    fn of(&self, file: &str) -> Option<&FileFacts> {
        self.files
            .iter()
            .find(|f| f.file == file)
            .or_else(|| self.files.iter().find(|f| f.file.is_empty()))
    }

    /// The profile for `file`'s device.
    pub fn profile(&self, file: &str) -> Option<&Profile> {
        self.of(file)?.profile.as_ref()
    }

    /// The storage under `file`, in words.
    pub fn storage(&self, file: &str) -> Option<&str> {
        self.of(file)?.storage.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_is_looked_up_once_and_found_by_its_name() {
        let row = |f: &str| RunResult {
            identity: crate::measure::result::Identity {
                file: f.into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let rows = [row("/a"), row("/b"), row("/a"), row("")];
        let looked = std::cell::Cell::new(0);
        let p = Provenance::gather(&rows, |path| {
            looked.set(looked.get() + 1);
            FileFacts {
                storage: Some(format!("on {}", path.display())),
                ..FileFacts::default()
            }
        });
        assert_eq!(looked.get(), 2);
        assert_eq!(p.storage("/b"), Some("on /b"));
        assert_eq!(p.storage("/c"), None);
        assert!(p.profile("/a").is_none());
        let all = Provenance::everywhere(Some("tmpfs".into()), None);
        assert_eq!(all.storage("/anything"), Some("tmpfs"));
    }
}
