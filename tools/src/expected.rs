//! `--verify-diagnostics`: checks diagnostics against `// expected-error
//! {{...}}` comments, the way mlir-opt does.
//!
//! A comment `expected-<severity>[@<where>] {{<text>}}` expects a diagnostic
//! of that severity whose message contains `<text>`, on the comment's line,
//! or on the line `@+N`/`@-N` away, or the line `@above`/`@below` it.
//! Severities: error, warning, note, remark. Every expected diagnostic must
//! be produced and every produced one expected.

use crate::diagnostics::{Diagnostic, Position, Severity};

#[derive(Clone, Debug)]
pub struct Expected {
    pub severity: Severity,
    /// The line the diagnostic is expected on.
    pub line: usize,
    /// The line of the comment.
    pub comment_line: usize,
    pub column: usize,
    pub text: String,
    matched: bool,
}

/// A problem found while checking: rendered as an error at `position`.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub position: Option<Position>,
    pub message: String,
}

/// Parses the expectations of a buffer. Malformed ones are mismatches.
pub fn parse(source: &str, file: &str) -> (Vec<Expected>, Vec<Mismatch>) {
    let mut expected = Vec::new();
    let mut problems = Vec::new();
    for (index, line) in source.lines().enumerate() {
        let number = index + 1;
        let mut rest = line;
        while let Some(start) = rest.find("expected-") {
            let column = line.len() - rest.len() + start + 1;
            let directive = &rest[start + "expected-".len()..];
            rest = directive;
            let Some((severity, after)) = [
                ("error", Severity::Error),
                ("warning", Severity::Warning),
                ("note", Severity::Note),
                ("remark", Severity::Remark),
            ]
            .iter()
            .find_map(|(name, s)| directive.strip_prefix(name).map(|a| (*s, a))) else {
                continue;
            };
            let (target, after) = match after.strip_prefix('@') {
                Some(at) => {
                    let end = at
                        .find(|c: char| c.is_whitespace() || c == '{')
                        .unwrap_or(at.len());
                    let spec = &at[..end];
                    let target = match spec {
                        "above" => number.checked_sub(1),
                        "below" => Some(number + 1),
                        _ => spec
                            .strip_prefix('+')
                            .and_then(|n| n.parse::<usize>().ok())
                            .and_then(|n| number.checked_add(n))
                            .or_else(|| {
                                spec.strip_prefix('-')
                                    .and_then(|n| n.parse::<usize>().ok())
                                    .and_then(|n| number.checked_sub(n))
                            }),
                    };
                    (target, &at[end..])
                }
                None => (Some(number), after),
            };
            let position = Some(Position {
                file: file.to_owned(),
                line: number,
                column,
            });
            let Some(target) = target.filter(|&t| t > 0) else {
                problems.push(Mismatch {
                    position,
                    message: "invalid line designator in expected-* directive".into(),
                });
                continue;
            };
            let body = after.trim_start();
            let text = body
                .strip_prefix("{{")
                .and_then(|b| b.find("}}").map(|end| b[..end].to_owned()));
            let Some(text) = text else {
                problems.push(Mismatch {
                    position,
                    message: "expected-* directive needs a message in {{...}}".into(),
                });
                continue;
            };
            expected.push(Expected {
                severity,
                line: target,
                comment_line: number,
                column,
                text,
                matched: false,
            });
        }
    }
    (expected, problems)
}

/// Matches produced diagnostics (notes included) against expectations;
/// returns everything that does not line up.
pub fn check(expected: &mut [Expected], produced: &[Diagnostic], file: &str) -> Vec<Mismatch> {
    let mut mismatches = Vec::new();
    // Expectations by line, so matching is linear in the diagnostics.
    let mut by_line: std::collections::HashMap<usize, Vec<usize>> = Default::default();
    for (i, e) in expected.iter().enumerate() {
        by_line.entry(e.line).or_default().push(i);
    }
    let flat = produced
        .iter()
        .flat_map(|d| std::iter::once(d).chain(d.notes.iter()));
    for d in flat {
        let line = d
            .position
            .as_ref()
            .filter(|p| p.file == file)
            .map(|p| p.line);
        let hit = line
            .and_then(|line| by_line.get(&line))
            .and_then(|candidates| {
                candidates.iter().copied().find(|&i| {
                    let e = &expected[i];
                    !e.matched && e.severity == d.severity && d.message.contains(&e.text)
                })
            });
        match hit {
            Some(i) => expected[i].matched = true,
            None => mismatches.push(Mismatch {
                position: d.position.clone(),
                message: format!("unexpected {}: {}", d.severity.name(), d.message),
            }),
        }
    }
    for e in expected.iter().filter(|e| !e.matched) {
        mismatches.push(Mismatch {
            position: Some(Position {
                file: file.to_owned(),
                line: e.comment_line,
                column: e.column,
            }),
            message: format!(
                "expected {} \"{}\" was not produced",
                e.severity.name(),
                e.text
            ),
        });
    }
    mismatches
}
