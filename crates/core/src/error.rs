use thiserror::Error;

/// Every failure the core can report. `code()` is the stable string the TS layer maps to an
/// HTTP status, so renaming a code is a breaking change.
#[derive(Debug, Error)]
pub enum CoreError {
    #[error("snapshot {path}: {message}")]
    Snapshot { path: String, message: String },
    #[error("io error on {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("unknown city '{0}': it is not in the gazetteer and no row carries it")]
    UnknownCity(String),
    #[error("radius_km requires city")]
    RadiusWithoutCity,
    #[error("invalid filter: {0}")]
    InvalidFilter(String),
    /// A change-feed date before the oldest snapshot the history holds (ISO 8601).
    #[error("since: the history begins at {0}")]
    SinceBeforeHistory(String),
}

impl CoreError {
    pub fn code(&self) -> &'static str {
        match self {
            CoreError::Snapshot { .. } => "SNAPSHOT_INVALID",
            CoreError::Io { .. } => "IO_ERROR",
            CoreError::UnknownCity(_) => "UNKNOWN_CITY",
            CoreError::RadiusWithoutCity => "INVALID_REQUEST",
            CoreError::InvalidFilter(_) => "INVALID_REQUEST",
            CoreError::SinceBeforeHistory(_) => "SINCE_OUT_OF_RANGE",
        }
    }
}

pub type Result<T> = std::result::Result<T, CoreError>;
