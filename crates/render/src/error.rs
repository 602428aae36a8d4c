use storemap_core::ErrorCode;
use thiserror::Error;

/// Every renderer failure, with the stable code the service maps to an HTTP status.
#[derive(Debug, Error)]
pub enum RenderError {
    #[error("image size {width}x{height} is out of range (1..={max} per side)")]
    InvalidSize { width: u32, height: u32, max: u32 },
    #[error("invalid colour {0:?}: expected 6-digit hex")]
    InvalidColor(String),
    #[error("unknown style {0:?}")]
    UnknownStyle(String),
    #[error("invalid viewport: {0}")]
    InvalidViewport(String),
    /// A focus map of a country the reference borders do not have (`focus_country`).
    #[error("no shape for country {0:?}")]
    UnknownCountry(String),
    /// A focus-map option that cannot apply, under the request field that gave it.
    #[error("invalid focus map: {message}")]
    InvalidFocus { field: &'static str, message: String },
    #[error("basemap shapes: {0}")]
    Shapes(String),
    #[error("encoding failed: {0}")]
    Encode(String),
    #[error("{points} points of {each} px each would draw {} marker pixels; the limit is {max} (ask for fewer locations, a smaller marker_radius or scale)", points.saturating_mul(*each))]
    TooMuchWork { points: u64, each: u64, max: u64 },
    #[error("the request's time ran out before the map was finished")]
    DeadlinePassed,
    /// The request's rows could not be selected (a filter the dataset refuses).
    #[error(transparent)]
    Data(#[from] storemap_core::CoreError),
}

impl RenderError {
    pub fn kind(&self) -> ErrorCode {
        match self {
            RenderError::InvalidSize { .. }
            | RenderError::InvalidColor(_)
            | RenderError::UnknownStyle(_)
            | RenderError::InvalidViewport(_)
            | RenderError::UnknownCountry(_)
            | RenderError::InvalidFocus { .. }
            | RenderError::TooMuchWork { .. } => ErrorCode::InvalidRequest,
            RenderError::DeadlinePassed => ErrorCode::Timeout,
            RenderError::Shapes(_) | RenderError::Encode(_) => ErrorCode::Internal,
            RenderError::Data(e) => e.kind(),
        }
    }

    /// The request field at fault, where one is (the service's 400 lists it in `details`).
    pub fn field(&self) -> Option<&'static str> {
        match self {
            RenderError::UnknownCountry(_) => Some("focus_country"),
            RenderError::InvalidFocus { field, .. } => Some(field),
            _ => None,
        }
    }

    /// The code as the service spells it.
    pub fn code(&self) -> &'static str {
        self.kind().as_str()
    }
}

pub type Result<T> = std::result::Result<T, RenderError>;
