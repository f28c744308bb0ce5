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

/// The input diagnostics point into: its name and text, with an index of
/// where its lines start (built once, so rendering is linear in the
/// diagnostics however many there are).
pub struct Source<'s> {
    name: &'s str,
    text: &'s str,
    lines: Vec<usize>,
}

/// The most characters of a source line quoted under a diagnostic.
const QUOTE_WIDTH: usize = 512;

impl<'s> Source<'s> {
    pub fn new(name: &'s str, text: &'s str) -> Self {
        let lines = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self { name, text, lines }
    }

    /// Line `line` (1-based) of the text, without its newline.
    fn line(&self, line: usize) -> Option<&'s str> {
        let start = *self.lines.get(line.checked_sub(1)?)?;
        let end = self
            .lines
            .get(line)
            .map_or(self.text.len(), |&next| next - 1);
        self.text.get(start..end)
    }

    /// Renders a diagnostic and its notes onto `out`: lines of this source
    /// are quoted, with a caret (long lines are cut around the column).
    pub fn render(&self, d: &Captured, out: &mut String) {
        self.render_one(d, out);
        for note in &d.notes {
            self.render_one(note, out);
        }
    }

    fn render_one(&self, d: &Captured, out: &mut String) {
        let Some(p) = &d.position else {
            let _ = writeln!(out, "{}: {}", d.severity.name(), d.message);
            return;
        };
        let _ = writeln!(
            out,
            "{}:{}:{}: {}: {}",
            p.file,
            p.line,
            p.column,
            d.severity.name(),
            d.message
        );
        let Some(line) = (p.file == self.name).then(|| self.line(p.line)).flatten() else {
            return;
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        // Columns count bytes; quote whole characters around the caret.
        let column = p.column.saturating_sub(1).min(line.len());
        let mut start = column.saturating_sub(QUOTE_WIDTH / 2);
        while !line.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + QUOTE_WIDTH).min(line.len());
        while !line.is_char_boundary(end) {
            end += 1;
        }
        let (before, after) = (start > 0, end < line.len());
        let _ = writeln!(
            out,
            "{}{}{}",
            if before { "..." } else { "" },
            &line[start..end],
            if after { "..." } else { "" }
        );
        let caret = line[start..column].chars().count() + if before { 3 } else { 0 };
        let _ = writeln!(out, "{}^", " ".repeat(caret));
    }
}
