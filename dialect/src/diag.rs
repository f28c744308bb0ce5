//! Located diagnostics, emitted through the context's MLIR handlers.
//!
//! Every error pw reports about a program goes through here, so tools render
//! them the MLIR way (`file:line:col: error: ...`) and `--verify-diagnostics`
//! can check them.

use crate::ffi;
use melior::{ir::Location, StringRef};
use mlir_sys::MlirLocation;

/// One diagnostic about a place in the program.
#[derive(Clone, Debug)]
pub struct Diag<'c> {
    pub location: Location<'c>,
    pub message: String,
    pub note: Option<(Location<'c>, String)>,
    pub severity: Severity,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Remark,
}

impl<'c> Diag<'c> {
    pub fn error(location: Location<'c>, message: impl Into<String>) -> Self {
        Self {
            location,
            message: message.into(),
            note: None,
            severity: Severity::Error,
        }
    }

    pub fn remark(location: Location<'c>, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Remark,
            ..Self::error(location, message)
        }
    }

    pub fn with_note(mut self, location: Location<'c>, note: impl Into<String>) -> Self {
        self.note = Some((location, note.into()));
        self
    }

    /// Sends the diagnostic to the context's handlers.
    pub fn emit(&self) {
        let severity = match self.severity {
            Severity::Error => ffi::SEVERITY_ERROR,
            Severity::Warning => ffi::SEVERITY_WARNING,
            Severity::Remark => ffi::SEVERITY_REMARK,
        };
        let message = StringRef::new(&self.message);
        let (note_location, note) = match &self.note {
            Some((location, note)) => (location.to_raw(), StringRef::new(note)),
            None => (
                MlirLocation {
                    ptr: std::ptr::null(),
                },
                StringRef::new(""),
            ),
        };
        // SAFETY: the locations are valid (or null for "no note") and the
        // strings outlive the call.
        unsafe {
            ffi::pwEmitDiagnostic(
                self.location.to_raw(),
                severity,
                message.to_raw(),
                note_location,
                note.to_raw(),
            )
        }
    }
}

/// Emits every diagnostic; returns whether any was an error.
pub fn emit_all(diags: &[Diag]) -> bool {
    diags.iter().for_each(Diag::emit);
    diags.iter().any(|d| d.severity == Severity::Error)
}
