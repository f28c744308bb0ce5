//! Captures MLIR diagnostics as [`pw_core::diagnostic`]s (whose renderer
//! prints them the way mlir-opt does).

use melior::{diagnostic::DiagnosticSeverity, ir::Location, Context};
pub use pw_core::diagnostic::{Diagnostic, Position, Severity, Source};
use pw_dialect::diag::Reported;
use std::{cell::RefCell, rc::Rc};

/// Collects every diagnostic emitted in a context while it lives.
pub struct Capture<'c> {
    context: &'c Context,
    id: melior::diagnostic::DiagnosticHandlerId,
    captured: Rc<RefCell<Vec<Diagnostic>>>,
}

impl<'c> Capture<'c> {
    pub fn new(context: &'c Context) -> Self {
        let captured = Rc::new(RefCell::new(Vec::new()));
        let sink = captured.clone();
        let id = pw_dialect::diag::attach_handler(context, move |d| {
            sink.borrow_mut().push(convert(&d));
            true
        });
        Self {
            context,
            id,
            captured,
        }
    }

    /// Takes what has been captured so far.
    pub fn take(&self) -> Vec<Diagnostic> {
        std::mem::take(&mut *self.captured.borrow_mut())
    }
}

impl Drop for Capture<'_> {
    fn drop(&mut self) {
        self.context.detach_diagnostic_handler(self.id);
    }
}

fn convert(d: &Reported) -> Diagnostic {
    let severity = match d.severity {
        DiagnosticSeverity::Error => Severity::Error,
        DiagnosticSeverity::Warning => Severity::Warning,
        DiagnosticSeverity::Note => Severity::Note,
        DiagnosticSeverity::Remark => Severity::Remark,
    };
    Diagnostic {
        severity,
        position: position(d.location, 0),
        message: d.message.clone(),
        notes: d.notes.iter().map(convert).collect(),
    }
}

/// The file position a location points at, looking through names, call
/// sites (the callee) and fusions (the first).
pub fn position(location: Location, depth: usize) -> Option<Position> {
    if depth > 8 {
        return None;
    }
    if location.is_file_line_col_range() {
        let file = location.file_line_col_range_filename();
        // An empty buffer's module sits at 0:0; point at the first column.
        return Some(Position {
            file: pw_dialect::ops::string_ref(file.as_string_ref().to_raw()),
            line: location.file_line_col_range_start_line().max(1),
            column: location.file_line_col_range_start_column().max(1),
        });
    }
    if location.is_name() {
        return position(location.name_child_location(), depth + 1);
    }
    if location.is_call_site() {
        return position(location.call_site_callee(), depth + 1);
    }
    if location.is_fused() && location.fused_num_locations() > 0 {
        return position(location.fused_location(0), depth + 1);
    }
    None
}
