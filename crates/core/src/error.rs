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
    /// A change-feed date before the oldest snapshot the history holds (ISO 8601). The field is
    /// the code's to name (`since`), not the message's.
    #[error("the history begins at {0}")]
    SinceBeforeHistory(String),
    /// A history range's `from` before the history's first period, or after `to`.
    #[error("{0}")]
    FromOutOfRange(String),
    /// A history range's `to` after the serving snapshot's period.
    #[error("{0}")]
    ToOutOfRange(String),
}

/// The stable codes failures carry to the service, for every crate (the renderer's too). The
/// addon's napi string enum is matched against this one, so the compiler sees every code cross
/// the binding; renaming one is a breaking change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidRequest,
    UnknownCity,
    SinceOutOfRange,
    FromOutOfRange,
    ToOutOfRange,
    SnapshotInvalid,
    IoError,
    Timeout,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::UnknownCity => "UNKNOWN_CITY",
            ErrorCode::SinceOutOfRange => "SINCE_OUT_OF_RANGE",
            ErrorCode::FromOutOfRange => "FROM_OUT_OF_RANGE",
            ErrorCode::ToOutOfRange => "TO_OUT_OF_RANGE",
            ErrorCode::SnapshotInvalid => "SNAPSHOT_INVALID",
            ErrorCode::IoError => "IO_ERROR",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl CoreError {
    pub fn kind(&self) -> ErrorCode {
        match self {
            CoreError::Snapshot { .. } => ErrorCode::SnapshotInvalid,
            CoreError::Io { .. } => ErrorCode::IoError,
            CoreError::UnknownCity(_) => ErrorCode::UnknownCity,
            CoreError::RadiusWithoutCity | CoreError::InvalidFilter(_) => ErrorCode::InvalidRequest,
            CoreError::SinceBeforeHistory(_) => ErrorCode::SinceOutOfRange,
            CoreError::FromOutOfRange(_) => ErrorCode::FromOutOfRange,
            CoreError::ToOutOfRange(_) => ErrorCode::ToOutOfRange,
        }
    }

    /// The code as the service spells it.
    pub fn code(&self) -> &'static str {
        self.kind().as_str()
    }
}

pub type Result<T> = std::result::Result<T, CoreError>;
