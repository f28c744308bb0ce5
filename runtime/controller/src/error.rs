//! The controller layer's one error type, and the one place it is rendered
//! for a client: a gRPC status whose message is the error's text and whose
//! `pw-error` metadata names its [`Kind`], so that the Python client raises
//! the matching exception.

use std::time::Duration;
use tonic::Status;

/// `Result` with the controller's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a client is told went wrong, by kind (the `pw-error` metadata).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The session does not exist (closed, lapsed, or the server
    /// restarted).
    Session,
    /// The program cannot be lowered or compiled.
    Program,
    /// Arguments that do not fit the executable (count, dtype, shape).
    Argument,
    /// An array that cannot be used: deleted, donated, another session's,
    /// lost, or the output of a failed call.
    Array,
    /// A run failed, or a worker it needed is gone.
    Run,
    /// The devices asked for were not free in time.
    Busy,
    /// The request names a session the client does not own.
    Denied,
    /// The request is over a limit of the server (a size, a quota).
    Limit,
}

impl Kind {
    /// The `pw-error` metadata value.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Session => "session",
            Kind::Program => "program",
            Kind::Argument => "argument",
            Kind::Array => "array",
            Kind::Run => "run",
            Kind::Busy => "busy",
            Kind::Denied => "denied",
            Kind::Limit => "limit",
        }
    }
}

/// Everything that can go wrong in the controller. Messages name the
/// session, array, worker and step involved; sources chain below.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ------------------------------------------------------------ cluster --
    #[error("no worker is registered with this server")]
    NoWorkers,

    #[error("worker {worker} is gone")]
    WorkerGone { worker: u32 },

    /// A payload that does not check out, or a connection that cannot be
    /// made.
    #[error(transparent)]
    Wire(#[from] pw_wire::Error),

    // ------------------------------------------- the client of a server --
    #[error("cannot reach pw-server at {address}: {source}")]
    Unreachable {
        address: String,
        #[source]
        source: pw_wire::Error,
    },

    /// What the server answered (rendered there: see [`Error::render`]).
    #[error("{message}")]
    Server { message: String },

    #[error("the server's reply: {what}")]
    Reply { what: String },

    #[error("pw-server at {address} did not answer within {waited:?}")]
    Silent { address: String, waited: Duration },

    #[error("worker {worker} left before the run started")]
    WorkerLeft { worker: u32 },

    /// A worker was lost while a run needed it (`at` says how far its part
    /// had got).
    #[error("{why}{at}")]
    WorkerLost {
        worker: u32,
        why: String,
        at: String,
    },

    // ----------------------------------------------------------- programs --
    /// The lowerer refused the program: its diagnostics.
    #[error("{diagnostics}")]
    Lowering {
        diagnostics: pw_core::diagnostic::Diagnostics,
    },

    #[error("lowering crashed: {message}")]
    LoweringCrashed { message: String },

    #[error("the lowered plan is not runnable: {source}")]
    Plan {
        #[source]
        source: pw_core::plan::PlanError,
    },

    #[error("{name}: {source}")]
    BadPlan {
        name: String,
        #[source]
        source: pw_core::plan::PlanError,
    },

    #[error(
        "mesh @{mesh} is bound to device {device}, which no registered worker offers (devices \
         {offered:?})"
    )]
    NotOffered {
        mesh: String,
        device: i64,
        offered: Vec<i64>,
    },

    #[error("compiling {what} for devices {devices:?} failed: {message}")]
    Compile {
        what: String,
        devices: Vec<i64>,
        message: String,
    },

    #[error("worker {worker} could not load {what}: {message}")]
    Ship {
        worker: u32,
        what: String,
        message: String,
    },

    #[error("the program does not compile: {message}")]
    Inspect { message: String },

    /// The executor layer's checks and host arrays.
    #[error(transparent)]
    Exec(#[from] pw_exec::Error),

    // ------------------------------------------------------- inputs, runs --
    #[error("the program takes {expected} inputs, {given} given")]
    InputCount { expected: usize, given: usize },

    #[error("input #{index} is {given}, but the program expects {expected}")]
    Input {
        index: usize,
        given: String,
        expected: String,
    },

    #[error("worker {worker} did not take an input shard: {message}")]
    Upload { worker: u32, message: String },

    #[error("worker {worker} refused its part: {message}")]
    PartRefused { worker: u32, message: String },

    /// A worker's part failed (its message names the step).
    #[error("{message}")]
    PartFailed { message: String },

    #[error("the run did not finish within {after:?} (waiting for workers {waiting:?})")]
    Timeout { after: Duration, waiting: Vec<u32> },

    #[error("the run's event channel closed")]
    EventsClosed,

    #[error("fetching {what} from worker {worker}: {message}")]
    Fetch {
        what: String,
        worker: u32,
        message: String,
    },

    #[error("{what}: {source}")]
    Output {
        what: String,
        #[source]
        source: Box<Error>,
    },

    #[error("{what}: no live worker holds it")]
    Unheld { what: String },

    #[error("{cause}\nerror: the run cannot recover: {reason}")]
    CannotRecover {
        cause: Box<Error>,
        #[source]
        reason: Box<Error>,
    },

    /// No healthy worker took a lost worker's devices in time.
    #[error("{placement} (waited {waited:.1} s for a worker to register); lost: {lost}")]
    NoCapacity {
        placement: crate::recovery::Unplaceable,
        waited: f64,
        lost: String,
    },

    // ----------------------------------------------------------- sessions --
    #[error("there is no session {session} on this server (it closed, or the server restarted)")]
    NoSession { session: u64 },

    #[error("session {session} is not this client's: a request naming a session must present the key the session was granted with (the {key_header} header)")]
    NotYours {
        session: u64,
        key_header: &'static str,
    },

    #[error("{what}: {asked} is over the limit of {limit} ({flag})")]
    OverLimit {
        what: String,
        asked: u64,
        limit: u64,
        /// The server's flag that sets the limit.
        flag: &'static str,
    },

    #[error("session {session} is closed: {why}")]
    SessionClosed { session: u64, why: String },

    #[error("session {session} has no devices left (its workers are gone)")]
    NoDevicesLeft { session: u64 },

    #[error("{asked} devices asked for, session {session} holds {held}")]
    TooManyDevices {
        session: u64,
        asked: usize,
        held: usize,
    },

    #[error(
        "{name} needs {needed} devices; session {session} has {have} left (its other workers are \
         gone, and no free devices came in {waited:?})"
    )]
    ShortOfDevices {
        name: String,
        needed: usize,
        session: u64,
        have: usize,
        waited: Duration,
    },

    #[error("{name} uses device {device}, which session {session} does not hold")]
    NotHeld {
        name: String,
        device: i64,
        session: u64,
    },

    #[error("cannot lay an argument out as the call takes it: {source}")]
    Relayout {
        #[source]
        source: pw_core::plans::Unfit,
    },

    #[error("{name} was built for devices of which some are gone")]
    Rebuild { name: String },

    #[error("checkpoint {path}: {why}")]
    Checkpoint { path: String, why: String },

    #[error(transparent)]
    Journal {
        #[from]
        source: crate::journal::JournalError,
    },

    #[error("session {session} cannot be taken back: {why}")]
    NotReattachable { session: u64, why: String },

    #[error("checkpoint {path}: {source}")]
    CheckpointFile {
        path: String,
        #[source]
        source: pw_exec::Error,
    },

    #[error("checkpoint {path}: worker {worker} could not {what}: {why}")]
    CheckpointShard {
        path: String,
        worker: u32,
        what: String,
        why: String,
    },

    #[error("session {session} is {phase}: {doing} waits until `client.resume()` has finished")]
    Paused {
        session: u64,
        phase: &'static str,
        doing: &'static str,
    },

    #[error("session {session} cannot {doing}: it is {phase}")]
    NotPausable {
        session: u64,
        doing: &'static str,
        phase: &'static str,
    },

    #[error(
        "session {session} cannot pause: executable {name} is a plan on fixed devices (the IFRT \
         proxy's), which cannot move to another slice"
    )]
    Unmovable { session: u64, name: String },

    #[error("session {session} cannot resize: {why}")]
    BadResize { session: u64, why: String },

    #[error("session {session} could not resume: {why}")]
    Resume {
        session: u64,
        why: String,
        #[source]
        source: Box<Error>,
    },

    #[error("cannot open a session: {why}")]
    Refused { why: String },

    #[error("waited {waited:?} for {wanted}; they are held by {holders}")]
    Busy {
        waited: Duration,
        wanted: String,
        holders: String,
    },

    #[error("session {session} has no executable {handle}")]
    NoExecutable { session: u64, handle: u64 },

    #[error("{name} takes {expected} arguments, {given} given")]
    ArgumentCount {
        name: String,
        expected: usize,
        given: usize,
    },

    #[error("argument #{index} is {given}, but {name} expects {expected}")]
    ArgumentType {
        index: usize,
        given: String,
        name: String,
        expected: String,
    },

    #[error("argument #{index}: {what}")]
    Argument { index: usize, what: &'static str },

    #[error("donated argument #{index}: the program takes {inputs} inputs")]
    DonatedOutOfRange { index: usize, inputs: usize },

    #[error(
        "argument #{index} is array {array} of session {owner}, not of this session ({session})"
    )]
    ForeignArray {
        index: usize,
        array: u64,
        owner: u64,
        session: u64,
    },

    #[error("{}", no_array(*index, *array, *session))]
    NoArray {
        index: Option<usize>,
        array: u64,
        session: u64,
    },

    /// An array that failed: lost with a worker, or made by a failed call.
    #[error("{} {}", array_name(*index, *array), unusable(why))]
    Unusable {
        index: Option<usize>,
        array: u64,
        why: String,
    },

    /// An array waited for (`kind`: to fetch it, or to wait for it) that
    /// did not become ready.
    #[error("array {array}: {source}")]
    NotReady {
        array: u64,
        #[source]
        source: Box<Error>,
        kind: Kind,
    },

    #[error("{name}: the outputs session {session}'s client named: {why}")]
    OutputHandles {
        name: String,
        session: u64,
        why: String,
    },

    /// An output of a call that was refused before it made its outputs
    /// (`kind`: the refusal's).
    #[error("array {array}: the call that makes it was refused: {why}")]
    CallRefused { array: u64, why: String, kind: Kind },

    #[error("its call did not finish in time")]
    CallTimedOut,

    #[error("its call was abandoned")]
    CallAbandoned,

    #[error("it {}", unusable(why))]
    CallFailed { why: String },

    #[error(
        "array {array} {}; it has no lineage to compute it again from (an upload of it did not \
         fit the server's --lineage-budget-mb, or it is more than {limit} calls deep), so compute \
         it again (the session goes on with its other devices and arrays)",
        unusable(why)
    )]
    NoLineage {
        array: u64,
        why: String,
        limit: usize,
    },

    #[error("array {array} was lost with a worker and cannot be computed again: {source}")]
    CannotRecompute {
        array: u64,
        #[source]
        source: Box<Error>,
    },

    #[error("array {array} (argument #{index} of a call that made it) is gone and has no lineage")]
    LineageBroken { array: u64, index: usize },

    #[error("the call that made it did not run again")]
    NotReplayed,

    #[error("its device has no worker")]
    Unplaced,
}

/// How an array's failure begins when it was lost with its worker.
pub(crate) const DATA_LOSS: &str = "data loss";

/// `argument #i (array N)` for an argument, `array N` otherwise.
fn array_name(index: Option<usize>, array: u64) -> String {
    match index {
        Some(i) => format!("argument #{i} (array {array})"),
        None => format!("array {array}"),
    }
}

fn no_array(index: Option<usize>, array: u64, session: u64) -> String {
    match index {
        Some(i) => format!(
            "argument #{i}: array {array} does not exist in session {session}: it was deleted, \
             or donated to an earlier call"
        ),
        None => format!(
            "array {array} does not exist in session {session}: it was deleted, or donated to a \
             call"
        ),
    }
}

/// Why an array that failed cannot be used, after "it" or "array N".
fn unusable(failure: &str) -> String {
    if failure.starts_with(DATA_LOSS) {
        format!("is lost ({failure})")
    } else {
        format!("is the output of a call that failed: {failure}")
    }
}

impl Error {
    /// The worker whose link failed, when the error is one: a put, a
    /// part, an executable or a fetch that did not reach it, or a worker
    /// that is gone. Such an error may be a lost worker the controller has
    /// not noticed yet.
    pub fn worker(&self) -> Option<u32> {
        use Error::*;
        match self {
            WorkerGone { worker }
            | WorkerLeft { worker }
            | WorkerLost { worker, .. }
            | Upload { worker, .. }
            | PartRefused { worker, .. }
            | Ship { worker, .. }
            | Fetch { worker, .. } => Some(*worker),
            Output { source, .. } => source.worker(),
            _ => None,
        }
    }

    /// Its kind, for clients.
    pub fn kind(&self) -> Kind {
        use Error::*;
        match self {
            NoSession { .. }
            | SessionClosed { .. }
            | NoDevicesLeft { .. }
            | Paused { .. }
            | NotPausable { .. }
            | Unmovable { .. } => Kind::Session,
            Resume { source, .. } => source.kind(),
            Lowering { .. }
            | LoweringCrashed { .. }
            | Plan { .. }
            | BadPlan { .. }
            | NotOffered { .. }
            | Compile { .. }
            | Ship { .. }
            | Inspect { .. }
            | TooManyDevices { .. }
            | NotHeld { .. } => Kind::Program,
            InputCount { .. }
            | Input { .. }
            | NoExecutable { .. }
            | ArgumentCount { .. }
            | ArgumentType { .. }
            | Argument { .. }
            | OutputHandles { .. }
            | DonatedOutOfRange { .. } => Kind::Argument,
            ForeignArray { .. }
            | NoArray { .. }
            | Unusable { .. }
            | NoLineage { .. }
            | CannotRecompute { .. }
            | LineageBroken { .. } => Kind::Array,
            Busy { .. } => Kind::Busy,
            Refused { .. } | Checkpoint { .. } | CheckpointFile { .. } | BadResize { .. } => {
                Kind::Argument
            }
            NotYours { .. } => Kind::Denied,
            NotReattachable { .. } => Kind::Session,
            OverLimit { .. } => Kind::Limit,
            NotReady { kind, .. } | CallRefused { kind, .. } => *kind,
            _ => Kind::Run,
        }
    }
}

impl Error {
    /// The error as a person reads it: `error: ` and the message, or a
    /// program's diagnostics (each of which says its severity), or what a
    /// server already rendered.
    pub fn render(&self) -> String {
        match self {
            Error::Lowering { .. } | Error::Server { .. } => self.to_string(),
            _ => format!("error: {self}"),
        }
    }
}

impl From<Error> for Status {
    fn from(e: Error) -> Status {
        let kind = e.kind();
        let message = e.render();
        let mut status = match kind {
            Kind::Session => Status::not_found(message),
            Kind::Program | Kind::Argument => Status::invalid_argument(message),
            Kind::Array => Status::failed_precondition(message),
            Kind::Run => Status::aborted(message),
            Kind::Busy => Status::deadline_exceeded(message),
            Kind::Denied => Status::permission_denied(message),
            Kind::Limit => Status::resource_exhausted(message),
        };
        if let Ok(v) = kind.name().parse() {
            status.metadata_mut().insert("pw-error", v);
        }
        status
    }
}
