use thiserror::Error;

/// Failures that stop a whole step. A bad row is not one of them: importers skip it, count it
/// and keep a message naming the file and row (see `ImportReport`).
#[derive(Debug, Error)]
pub enum IngestError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error(transparent)]
    Core(#[from] storemap_core::CoreError),
    #[error("{0}")]
    Invalid(String),
}

impl IngestError {
    pub fn file(path: impl std::fmt::Display, message: impl std::fmt::Display) -> IngestError {
        IngestError::File { path: path.to_string(), message: message.to_string() }
    }
    pub fn io(path: impl std::fmt::Display, source: std::io::Error) -> IngestError {
        IngestError::Io { path: path.to_string(), source }
    }
}

pub type Result<T> = std::result::Result<T, IngestError>;
