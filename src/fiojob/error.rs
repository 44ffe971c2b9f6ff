//! The one error type of reading fio jobs: every variant names the file and line (and the option,
//! where one is at fault), so the front end prints it as one located line.

/// Where an option was written: the file (as the user named it) and its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A fio job that diskscope cannot plan, with the place it was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FioError {
    /// The job file (or an include) cannot be read.
    #[error("{file}: {message}")]
    Read { file: String, message: String },
    /// An `include` line that cannot be followed.
    #[error("{loc}: include: {message}")]
    Include { loc: Loc, message: String },
    /// Text that is not fio's job syntax.
    #[error("{loc}: {message}")]
    Syntax { loc: Loc, message: String },
    /// An option diskscope does not implement (or not with this value): refused by name.
    #[error("{loc}: option `{option}`: {message}")]
    Refused {
        loc: Loc,
        option: String,
        message: String,
    },
    /// An option with a value diskscope cannot read.
    #[error("{loc}: option `{option}`: {message}")]
    BadValue {
        loc: Loc,
        option: String,
        message: String,
    },
}

impl FioError {
    pub fn bad_value(loc: &Loc, option: &str, message: &str) -> FioError {
        FioError::BadValue {
            loc: loc.clone(),
            option: crate::text::shown(option).into_owned(),
            message: message.to_string(),
        }
    }

    pub fn refused(loc: &Loc, option: &str, message: &str) -> FioError {
        FioError::Refused {
            loc: loc.clone(),
            option: crate::text::shown(option).into_owned(),
            message: message.to_string(),
        }
    }
}
