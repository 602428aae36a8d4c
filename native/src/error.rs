//! How failures cross into JavaScript: as data. Every error the addon throws or rejects with
//! is a JS `Error` whose `code` is one of the service's stable error codes (`INVALID_REQUEST`,
//! `UNKNOWN_CITY`, `TIMEOUT`, `INTERNAL`, ...) and whose message is the cause, so
//! `ts/native.ts` reads `err.code` and never parses text. A panic becomes `INTERNAL`, never a
//! dead process.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use storemap_core::{CoreError, ErrorCode};
use storemap_render::RenderError;

/// Every code an error from the addon carries, as a string enum TypeScript gets too
/// (`NativeCode`): `NativeError.code` is typed by it and `fromNative` maps each one with the
/// compiler checking that none is missed.
#[napi(string_enum)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeCode {
    #[napi(value = "INVALID_REQUEST")]
    InvalidRequest,
    #[napi(value = "UNKNOWN_CITY")]
    UnknownCity,
    #[napi(value = "SINCE_OUT_OF_RANGE")]
    SinceOutOfRange,
    #[napi(value = "FROM_OUT_OF_RANGE")]
    FromOutOfRange,
    #[napi(value = "TO_OUT_OF_RANGE")]
    ToOutOfRange,
    #[napi(value = "SNAPSHOT_INVALID")]
    SnapshotInvalid,
    #[napi(value = "IO_ERROR")]
    IoError,
    #[napi(value = "TIMEOUT")]
    Timeout,
    #[napi(value = "INTERNAL")]
    Internal,
    #[napi(value = "NOT_IMPLEMENTED")]
    NotImplemented,
    #[napi(value = "FORBIDDEN")]
    Forbidden,
    #[napi(value = "INVALID_BASEMAP")]
    InvalidBasemap,
    /// A publisher's file that is not what it should be (a damaged Parquet footer).
    #[napi(value = "INVALID_SOURCE")]
    InvalidSource,
}

impl NativeCode {
    pub fn as_str(self) -> &'static str {
        match self {
            NativeCode::InvalidRequest => "INVALID_REQUEST",
            NativeCode::UnknownCity => "UNKNOWN_CITY",
            NativeCode::SinceOutOfRange => "SINCE_OUT_OF_RANGE",
            NativeCode::FromOutOfRange => "FROM_OUT_OF_RANGE",
            NativeCode::ToOutOfRange => "TO_OUT_OF_RANGE",
            NativeCode::SnapshotInvalid => "SNAPSHOT_INVALID",
            NativeCode::IoError => "IO_ERROR",
            NativeCode::Timeout => "TIMEOUT",
            NativeCode::Internal => "INTERNAL",
            NativeCode::NotImplemented => "NOT_IMPLEMENTED",
            NativeCode::Forbidden => "FORBIDDEN",
            NativeCode::InvalidBasemap => "INVALID_BASEMAP",
            NativeCode::InvalidSource => "INVALID_SOURCE",
        }
    }
}

impl From<ErrorCode> for NativeCode {
    fn from(c: ErrorCode) -> NativeCode {
        match c {
            ErrorCode::InvalidRequest => NativeCode::InvalidRequest,
            ErrorCode::UnknownCity => NativeCode::UnknownCity,
            ErrorCode::SinceOutOfRange => NativeCode::SinceOutOfRange,
            ErrorCode::FromOutOfRange => NativeCode::FromOutOfRange,
            ErrorCode::ToOutOfRange => NativeCode::ToOutOfRange,
            ErrorCode::SnapshotInvalid => NativeCode::SnapshotInvalid,
            ErrorCode::IoError => NativeCode::IoError,
            ErrorCode::Timeout => NativeCode::Timeout,
            ErrorCode::Internal => NativeCode::Internal,
        }
    }
}

/// A stable error code as napi's error status: napi-rs sets it as the JS error's `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code(pub NativeCode);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}

/// A failure on its way to JavaScript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: NativeCode,
    pub message: String,
    /// The request field at fault, where the failure knows it: the JS error's `field`.
    pub field: Option<&'static str>,
}

pub type Outcome<T> = std::result::Result<T, Failure>;

impl Failure {
    pub fn new(code: NativeCode, message: impl std::fmt::Display) -> Failure {
        Failure { code, message: message.to_string(), field: None }
    }

    /// The request's mistake, found while converting it.
    pub fn invalid(message: impl std::fmt::Display) -> Failure {
        Failure::new(NativeCode::InvalidRequest, message)
    }
}

impl From<CoreError> for Failure {
    fn from(e: CoreError) -> Failure {
        Failure::new(e.kind().into(), e)
    }
}

impl From<RenderError> for Failure {
    fn from(e: RenderError) -> Failure {
        Failure { field: e.field(), ..Failure::new(e.kind().into(), &e) }
    }
}

impl From<Failure> for napi::Error<Code> {
    fn from(f: Failure) -> napi::Error<Code> {
        napi::Error::new(Code(f.code), f.message)
    }
}

/// The process's panic hook, set before the addon's first call: the message and where, never a
/// stack trace. Rust's own hook walks the whole stack when RUST_BACKTRACE is set, and from the
/// addon that stack runs on through V8's generated code, which carries no unwind tables: Node 24
/// aborted the process there (SIGABRT in `npm test`'s Node 24 run, under RUST_BACKTRACE=1), so a
/// caught panic would still have taken the server down.
static PANIC_HOOK: std::sync::Once = std::sync::Once::new();

fn quiet_panic_hook(info: &std::panic::PanicHookInfo<'_>) {
    let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
    eprintln!("storemap-native: panicked{at}: {}", panic_message(info.payload()));
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_else(|| "panic".into())
}

/// Runs `f`, turning a panic into an `INTERNAL` failure.
pub fn guarded<T>(f: impl FnOnce() -> Outcome<T>) -> Outcome<T> {
    PANIC_HOOK.call_once(|| std::panic::set_hook(Box::new(quiet_panic_hook)));
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = panic_message(p.as_ref());
            eprintln!("storemap-native: panic caught at the boundary: {msg}");
            Err(Failure::new(NativeCode::Internal, msg))
        }
    }
}

/// Runs `f` for a `#[napi]` function, which returns `Result<T, Code>` (written out: napi's macro
/// reads the name): a panic or failure becomes a JS error with its code.
pub fn run<T>(f: impl FnOnce() -> Outcome<T>) -> napi::Result<T, Code> {
    guarded(f).map_err(Into::into)
}

/// Settles an async task's outcome on the JS thread. A task's `compute` carries its failure as
/// data (napi's task interface only knows napi's own statuses); here it becomes the JS error
/// the promise rejects with, `code` set.
pub fn settle<T>(env: Env, outcome: Outcome<T>) -> napi::Result<T> {
    outcome.map_err(|f| rejection(env, f))
}

/// The JS error for a failure, made on the JS thread and carried as napi's own error type (a
/// reference to the JS object, which the rejection or throw hands over as it is): `code`, and
/// `field` where the failure names one.
fn rejection(env: Env, f: Failure) -> napi::Error {
    let Some(field) = f.field else {
        return napi::Error::from(napi::JsError::from(napi::Error::<Code>::from(f)).into_unknown(env));
    };
    let with_field = || -> napi::Result<napi::Error> {
        let mut js = env.create_error(napi::Error::new(napi::Status::GenericFailure, f.message.clone()))?;
        js.set_named_property("code", f.code.as_str())?;
        js.set_named_property("field", field)?;
        Ok(napi::Error::from(js.to_unknown()))
    };
    with_field().unwrap_or_else(|e| e)
}
