//! Located errors, emitted through the context's MLIR diagnostic handlers.
//!
//! Every error pw reports about a program goes through here, so tools render
//! them the MLIR way (`file:line:col: error: ...`) and `--verify-diagnostics`
//! can check them.

use crate::ffi;
use melior::{ir::Location, StringRef};
use mlir_sys::MlirLocation;

/// One error about a place in the program.
#[derive(Clone, Debug)]
pub struct Diag<'c> {
    pub location: Location<'c>,
    pub message: String,
}

impl<'c> Diag<'c> {
    pub fn error(location: Location<'c>, message: impl Into<String>) -> Self {
        Self {
            location,
            message: message.into(),
        }
    }

    /// Sends the error to the context's handlers.
    pub fn emit(&self) {
        let message = StringRef::new(&self.message);
        let no_note = MlirLocation {
            ptr: std::ptr::null(),
        };
        // SAFETY: the location is valid, the null note location means "no
        // note", and the strings outlive the call.
        unsafe {
            ffi::pwEmitDiagnostic(
                self.location.to_raw(),
                ffi::SEVERITY_ERROR,
                message.to_raw(),
                no_note,
                StringRef::new("").to_raw(),
            )
        }
    }
}

/// Emits every error; returns whether there was any.
pub fn emit_all(diags: &[Diag]) -> bool {
    diags.iter().for_each(Diag::emit);
    !diags.is_empty()
}
