//! The proxy layer's one error type, and its one rendering: the status an
//! IFRT response carries ([`Failure`]: a `tensorflow.error.Code` and a
//! message), which JAX raises as `JaxRuntimeError`.

/// `Result` with the proxy's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything an IFRT request can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A request pw cannot serve as given: malformed, or asking what pw's
    /// arrays cannot be (the message says which).
    #[error("{0}")]
    Invalid(String),

    /// An IFRT operation or form pw does not implement.
    #[error("{0}")]
    Unimplemented(String),

    /// A handle the session does not know.
    #[error("there is no {what} {handle} in this session")]
    Unknown { what: &'static str, handle: u64 },

    /// An array whose making failed, or that was donated or deleted.
    #[error("{0}")]
    Unusable(String),

    /// What the request for `name` failed with.
    #[error("{name}: {source}")]
    In {
        name: String,
        #[source]
        source: Box<Error>,
    },

    /// A small plan that does not fit its arrays.
    #[error(transparent)]
    Plan(#[from] pw_core::plans::Unfit),

    /// Host bytes that do not check out.
    #[error(transparent)]
    Wire(#[from] pw_wire::Error),

    /// The session refused or failed it.
    #[error(transparent)]
    Controller(#[from] pw_controller::Error),
}

/// `tensorflow.error.Code`s.
const INVALID_ARGUMENT: i32 = 3;
const NOT_FOUND: i32 = 5;
const PERMISSION_DENIED: i32 = 7;
const RESOURCE_EXHAUSTED: i32 = 8;
const FAILED_PRECONDITION: i32 = 9;
const UNIMPLEMENTED: i32 = 12;
const INTERNAL: i32 = 13;

impl Error {
    /// The status code the response carries.
    pub fn code(&self) -> i32 {
        use pw_controller::Kind;
        match self {
            Error::Invalid(_) | Error::Plan(_) | Error::Wire(_) => INVALID_ARGUMENT,
            Error::Unimplemented(_) => UNIMPLEMENTED,
            Error::Unknown { .. } => NOT_FOUND,
            Error::Unusable(_) => FAILED_PRECONDITION,
            Error::In { source, .. } => source.code(),
            Error::Controller(e) => match e.kind() {
                Kind::Session => NOT_FOUND,
                Kind::Program | Kind::Argument => INVALID_ARGUMENT,
                Kind::Array => FAILED_PRECONDITION,
                Kind::Run | Kind::Busy => INTERNAL,
                Kind::Denied => PERMISSION_DENIED,
                Kind::Limit => RESOURCE_EXHAUSTED,
            },
        }
    }
}

/// A failure, as the response's status carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// A `tensorflow.error.Code`.
    pub code: i32,
    pub message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure {
            code: e.code(),
            message: e.to_string(),
        }
    }
}
