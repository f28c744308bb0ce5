//! The binding's one error type.

use std::fmt;
use std::path::PathBuf;

use pw_core::DType;

/// `Result` with the runtime's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the binding.
///
/// Plugin failures keep the plugin's own message and the C function that
/// reported it ([`Error::Pjrt`]); the other variants are checks this crate
/// makes before calling into a plugin, so that a mistake is reported in terms
/// of the caller's objects rather than as a crash or an opaque plugin error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No file at the plugin path.
    #[error("PJRT plugin not found: {path} does not exist")]
    PluginNotFound { path: PathBuf },

    /// The dynamic loader refused the file (not a shared object, missing
    /// dependencies, wrong architecture...).
    #[error("cannot load PJRT plugin {path}: {reason}")]
    PluginLoad { path: PathBuf, reason: String },

    /// A shared object without a usable `GetPjrtApi` entry point.
    #[error("{path} is not a PJRT plugin: {reason}")]
    NotAPlugin { path: PathBuf, reason: String },

    /// The plugin's C API version cannot be driven by this binding.
    #[error(
        "PJRT plugin {path} implements PJRT C API {found}, which this binding cannot use: {reason} \
         (supported: {supported})"
    )]
    IncompatibleVersion {
        path: PathBuf,
        found: ApiVersion,
        supported: String,
        reason: String,
    },

    /// The plugin's function table has no entry (or a null one) for a function.
    #[error("{function} is not provided by this PJRT plugin (C API {version})")]
    Unsupported {
        function: &'static str,
        version: ApiVersion,
    },

    /// A PJRT C API call returned an error.
    #[error("{function} failed [{code}]: {message}")]
    Pjrt {
        function: &'static str,
        code: ErrorCode,
        message: String,
    },

    /// An argument this crate checks before calling the plugin.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// Two shapes that must agree do not.
    #[error("shape mismatch in {context}: expected {expected:?}, got {actual:?}")]
    ShapeMismatch {
        context: String,
        expected: Vec<usize>,
        actual: Vec<usize>,
    },

    /// Two element types that must agree do not.
    #[error("dtype mismatch in {context}: expected {expected}, got {actual}")]
    DTypeMismatch {
        context: String,
        expected: DType,
        actual: DType,
    },

    /// An element type this crate (or the plugin) cannot represent.
    #[error("unsupported element type: {0}")]
    UnsupportedDType(String),

    /// A token buffer asked for its data (it has none).
    #[error("the buffer is a token, which carries no data: Cannot convert a token-shape buffer to a numpy array.")]
    Token,

    /// More devices were asked for than the client has.
    #[error("{what} needs {needed} devices, but the client has {available}")]
    NotEnoughDevices {
        what: String,
        needed: usize,
        available: usize,
    },

    /// An I/O error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A PJRT C API version (`major.minor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiVersion {
    pub major: i32,
    pub minor: i32,
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The status code of a PJRT error (absl status codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    Cancelled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    ResourceExhausted,
    FailedPrecondition,
    Aborted,
    OutOfRange,
    Unimplemented,
    Internal,
    Unavailable,
    DataLoss,
    Unauthenticated,
    /// A code this crate does not know (or `PJRT_Error_GetCode` itself failed).
    Other(i32),
}

impl ErrorCode {
    pub(crate) fn from_raw(code: i32) -> Self {
        match code {
            1 => Self::Cancelled,
            2 => Self::Unknown,
            3 => Self::InvalidArgument,
            4 => Self::DeadlineExceeded,
            5 => Self::NotFound,
            6 => Self::AlreadyExists,
            7 => Self::PermissionDenied,
            8 => Self::ResourceExhausted,
            9 => Self::FailedPrecondition,
            10 => Self::Aborted,
            11 => Self::OutOfRange,
            12 => Self::Unimplemented,
            13 => Self::Internal,
            14 => Self::Unavailable,
            15 => Self::DataLoss,
            16 => Self::Unauthenticated,
            other => Self::Other(other),
        }
    }

    pub(crate) fn to_raw(self) -> i32 {
        match self {
            Self::Cancelled => 1,
            Self::Unknown => 2,
            Self::InvalidArgument => 3,
            Self::DeadlineExceeded => 4,
            Self::NotFound => 5,
            Self::AlreadyExists => 6,
            Self::PermissionDenied => 7,
            Self::ResourceExhausted => 8,
            Self::FailedPrecondition => 9,
            Self::Aborted => 10,
            Self::OutOfRange => 11,
            Self::Unimplemented => 12,
            Self::Internal => 13,
            Self::Unavailable => 14,
            Self::DataLoss => 15,
            Self::Unauthenticated => 16,
            Self::Other(code) => code,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Other(code) => write!(f, "code {code}"),
            known => fmt::Debug::fmt(known, f),
        }
    }
}

impl Error {
    /// The PJRT status code, for errors a plugin reported.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Pjrt { code, .. } => Some(*code),
            _ => None,
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        Self::InvalidArgument(msg.into())
    }
}
