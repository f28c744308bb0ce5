//! Diagnostics about a program, as plain data, and their one renderer:
//! `file:line:col: error: message`, the source line quoted, and a caret
//! under the column, the way mlir-opt prints them. The compiler captures
//! MLIR's diagnostics into this form (pw-tools); the runtime passes them on
//! (the lowering a pw-server does for a client) without linking MLIR.

use serde::{Deserialize, Serialize};
use std::fmt::{self, Write};

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// One diagnostic, its notes beside it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub position: Option<Position>,
    pub message: String,
    pub notes: Vec<Diagnostic>,
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
        // No text (a program read from bytecode): nothing to quote.
        let lines = if text.is_empty() {
            Vec::new()
        } else {
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        };
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
    pub fn render(&self, d: &Diagnostic, out: &mut String) {
        self.render_one(d, out);
        for note in &d.notes {
            self.render_one(note, out);
        }
    }

    fn render_one(&self, d: &Diagnostic, out: &mut String) {
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

/// The diagnostics of one program text: what lowering it said, with the
/// text, so that they render with its lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    /// The name the program's locations use, and its text.
    pub name: String,
    pub text: String,
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Adds an error without a position (the one that stopped the work).
    pub fn error(&mut self, message: impl Into<String>) {
        self.items.push(Diagnostic {
            severity: Severity::Error,
            position: None,
            message: message.into(),
            notes: Vec::new(),
        });
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = Source::new(&self.name, &self.text);
        let mut out = String::new();
        for d in &self.items {
            source.render(d, &mut out);
        }
        f.write_str(out.trim_end())
    }
}
