//! Captures MLIR diagnostics and renders them the way mlir-opt does:
//! `file:line:col: error: message`, the source line, and a caret.

use melior::{diagnostic::DiagnosticSeverity, ir::Location, Context};
use std::{cell::RefCell, fmt::Write, rc::Rc};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
    Remark,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Remark => "remark",
        }
    }
}

/// A file position, 1-based as MLIR prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// One diagnostic as captured from the context, notes flattened out.
#[derive(Clone, Debug)]
pub struct Captured {
    pub severity: Severity,
    pub position: Option<Position>,
    pub message: String,
    pub notes: Vec<Captured>,
}

/// Collects every diagnostic emitted in a context while it lives.
pub struct Capture<'c> {
    context: &'c Context,
    id: melior::diagnostic::DiagnosticHandlerId,
    captured: Rc<RefCell<Vec<Captured>>>,
}

impl<'c> Capture<'c> {
    pub fn new(context: &'c Context) -> Self {
        let captured = Rc::new(RefCell::new(Vec::new()));
        let sink = captured.clone();
        let id = context.attach_diagnostic_handler(move |d| {
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
    pub fn take(&self) -> Vec<Captured> {
        std::mem::take(&mut *self.captured.borrow_mut())
    }
}

impl Drop for Capture<'_> {
    fn drop(&mut self) {
        self.context.detach_diagnostic_handler(self.id);
    }
}

fn convert(d: &melior::diagnostic::Diagnostic) -> Captured {
    let severity = match d.severity() {
        DiagnosticSeverity::Error => Severity::Error,
        DiagnosticSeverity::Warning => Severity::Warning,
        DiagnosticSeverity::Note => Severity::Note,
        DiagnosticSeverity::Remark => Severity::Remark,
    };
    let notes = (0..d.note_count())
        .filter_map(|i| d.note(i).ok())
        .map(|n| convert(&n))
        .collect();
    Captured {
        severity,
        position: position(d.location(), 0),
        message: d.to_string(),
        notes,
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

/// Renders a diagnostic and its notes; `source` is the input (its name and
/// text): lines of it are quoted, with a caret, for positions in it.
pub fn render(d: &Captured, source: Option<(&str, &str)>) -> String {
    let mut out = String::new();
    render_one(&mut out, d, source);
    for note in &d.notes {
        render_one(&mut out, note, source);
    }
    out
}

fn render_one(out: &mut String, d: &Captured, source: Option<(&str, &str)>) {
    match &d.position {
        Some(p) => {
            let _ = writeln!(
                out,
                "{}:{}:{}: {}: {}",
                p.file,
                p.line,
                p.column,
                d.severity.name(),
                d.message
            );
            let text = source
                .filter(|(name, _)| *name == p.file)
                .map(|(_, text)| text);
            if let Some(line) = text.and_then(|s| s.lines().nth(p.line.saturating_sub(1))) {
                let _ = writeln!(out, "{line}");
                let _ = writeln!(out, "{}^", " ".repeat(p.column.saturating_sub(1)));
            }
        }
        None => {
            let _ = writeln!(out, "{}: {}", d.severity.name(), d.message);
        }
    }
}
