//! Located errors, emitted through the context's MLIR diagnostic handlers.
//!
//! Every error pw reports about a program is a [`Located`] error of its
//! layer (the dialect's [`Error`], the passes', lowering's) and goes out
//! through [`Located::emit`], so tools render them the MLIR way
//! (`file:line:col: error: ...`) and `--verify-diagnostics` can check them.

use crate::{error::Error, ffi};
use melior::{
    diagnostic::{DiagnosticHandlerId, DiagnosticSeverity},
    ir::Location,
    Context, StringRef,
};
use mlir_sys::{
    mlirContextAttachDiagnosticHandler, mlirDiagnosticGetLocation, mlirDiagnosticGetNote,
    mlirDiagnosticGetNumNotes, mlirDiagnosticGetSeverity, mlirDiagnosticPrint, MlirDiagnostic,
    MlirLocation, MlirLogicalResult,
};
use std::{ffi::c_void, fmt::Display};

/// The most errors a check reports before it stops (as compilers cap
/// theirs): a broken program of 100k ops gets a readable report, in time
/// linear in what is reported.
pub const MAX_ERRORS: usize = 100;

/// An error of some layer, at a place in the program.
#[derive(Clone, Debug)]
pub struct Located<'c, E> {
    pub location: Location<'c>,
    pub error: E,
}

/// An error of the dialect layer, at a place in the program.
pub type Diag<'c> = Located<'c, Error>;

impl<'c, E> Located<'c, E> {
    pub fn new(location: Location<'c>, error: E) -> Self {
        Self { location, error }
    }

    /// The same place, another error (of a layer above).
    pub fn map<F>(self, f: impl FnOnce(E) -> F) -> Located<'c, F> {
        Located {
            location: self.location,
            error: f(self.error),
        }
    }
}

impl<E: Display> Located<'_, E> {
    /// Sends the error to the context's handlers.
    pub fn emit(&self) {
        emit_error(self.location, &self.error.to_string());
    }
}

/// Emits every error; returns whether there was any.
pub fn emit_all<E: Display>(errors: &[Located<'_, E>]) -> bool {
    errors.iter().for_each(Located::emit);
    !errors.is_empty()
}

/// Emits one error message at `location` (the one place errors leave pw
/// for MLIR's handlers).
pub fn emit_error(location: Location, message: &str) {
    let message = StringRef::new(message);
    let no_note = MlirLocation {
        ptr: std::ptr::null(),
    };
    // SAFETY: the location is valid, the null note location means "no
    // note", and the strings outlive the call.
    unsafe {
        ffi::pwEmitDiagnostic(
            location.to_raw(),
            ffi::SEVERITY_ERROR,
            message.to_raw(),
            no_note,
            StringRef::new("").to_raw(),
        )
    }
}

/// A diagnostic MLIR reported, as data: what a handler of
/// [`attach_handler`] gets.
#[derive(Clone, Debug)]
pub struct Reported<'c> {
    pub severity: DiagnosticSeverity,
    pub location: Location<'c>,
    /// The message, with bytes that are not UTF-8 replaced: a program's
    /// strings may hold any bytes, and messages quote them.
    pub message: String,
    pub notes: Vec<Reported<'c>>,
}

impl<'c> Reported<'c> {
    /// # Safety
    /// `raw` is a live diagnostic of a context that outlives `'c`.
    unsafe fn from_raw(raw: MlirDiagnostic) -> Self {
        // SAFETY: the diagnostic is live (caller); the print callback gets
        // `message` as its user data and only appends to it.
        unsafe {
            let mut message: Vec<u8> = Vec::new();
            mlirDiagnosticPrint(
                raw,
                Some(crate::print::append),
                &mut message as *mut Vec<u8> as *mut c_void,
            );
            let severity = DiagnosticSeverity::try_from(mlirDiagnosticGetSeverity(raw))
                .unwrap_or(DiagnosticSeverity::Error);
            let notes = (0..mlirDiagnosticGetNumNotes(raw).max(0))
                .map(|i| Self::from_raw(mlirDiagnosticGetNote(raw, i)))
                .collect();
            Self {
                severity,
                location: Location::from_raw(mlirDiagnosticGetLocation(raw)),
                message: String::from_utf8_lossy(&message).into_owned(),
                notes,
            }
        }
    }
}

/// Attaches `handler` to `context`'s diagnostics (detach it with melior's
/// `Context::detach_diagnostic_handler`). Unlike melior's own handlers,
/// it never panics on a message that is not UTF-8, and a panic of
/// `handler` does not cross into MLIR (the diagnostic then counts as not
/// handled).
pub fn attach_handler<'c, F>(context: &'c Context, handler: F) -> DiagnosticHandlerId
where
    F: FnMut(Reported<'c>) -> bool + 'static,
{
    struct Boxed<'c>(Box<dyn FnMut(Reported<'c>) -> bool>);
    unsafe extern "C" fn handle(raw: MlirDiagnostic, data: *mut c_void) -> MlirLogicalResult {
        // SAFETY: `data` is the Boxed of attach_handler, alive until
        // `destroy`; the diagnostic is live while it is handled.
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            let boxed = &mut *(data as *mut Boxed);
            (boxed.0)(Reported::from_raw(raw))
        }))
        .unwrap_or(false);
        MlirLogicalResult {
            value: i8::from(handled),
        }
    }
    unsafe extern "C" fn destroy(data: *mut c_void) {
        // SAFETY: `data` came from Box::into_raw in attach_handler.
        drop(unsafe { Box::from_raw(data as *mut Boxed) });
    }
    let data = Box::into_raw(Box::new(Boxed(Box::new(handler))));
    // SAFETY: the context is live; `handle` and `destroy` match `data`.
    unsafe {
        DiagnosticHandlerId::from_raw(mlirContextAttachDiagnosticHandler(
            context.to_raw(),
            Some(handle),
            data as *mut c_void,
            Some(destroy),
        ))
    }
}

/// Collects errors up to [`MAX_ERRORS`]; past that, one last error says
/// the report stopped, and [`Errors::full`] tells checks to stop too.
#[derive(Debug)]
pub struct Errors<'c, E = Error> {
    list: Vec<Located<'c, E>>,
    full: bool,
}

impl<E> Default for Errors<'_, E> {
    fn default() -> Self {
        Self {
            list: Vec::new(),
            full: false,
        }
    }
}

impl<'c, E> Errors<'c, E> {
    pub fn push(&mut self, location: Location<'c>, error: E)
    where
        E: From<Error>,
    {
        if self.full {
            return;
        }
        if self.list.len() == MAX_ERRORS {
            self.list.push(Located::new(
                location,
                Error::TooManyErrors { limit: MAX_ERRORS }.into(),
            ));
            self.full = true;
            return;
        }
        self.list.push(Located::new(location, error));
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether the cap was reached: checks stop.
    pub fn full(&self) -> bool {
        self.full
    }

    pub fn into_vec(self) -> Vec<Located<'c, E>> {
        self.list
    }
}
