//! Located errors, emitted through the context's MLIR diagnostic handlers.
//!
//! Every error pw reports about a program is a [`Located`] error of its
//! layer (the dialect's [`Error`], the passes', lowering's) and goes out
//! through [`Located::emit`], so tools render them the MLIR way
//! (`file:line:col: error: ...`) and `--verify-diagnostics` can check them.

use crate::{error::Error, ffi};
use melior::{ir::Location, StringRef};
use mlir_sys::MlirLocation;
use std::fmt::Display;

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
