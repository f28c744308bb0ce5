//! Parsing programs: MLIR text, or MLIR bytecode (as `pw-opt
//! --emit-bytecode` writes it), told apart by bytecode's magic number.
//!
//! MLIR's parser is recursive descent and trusts its input: nesting of
//! brackets (attributes, types, dictionaries, regions) costs it stack at
//! every level, and a few inputs crash it outright. So text is screened in
//! one linear pass before MLIR sees it ([`screen`]): nesting is bounded
//! ([`MAX_NESTING`]), as are affine expressions (parsed recursively per
//! term), and constructs known to crash MLIR are refused, each with a
//! located error. The parse itself runs on a thread with a large stack
//! ([`PARSE_STACK_BYTES`]), so what the screen allows parses with room to
//! spare; everything after parsing (verifiers, passes, printing) recurses at
//! most as deep as the nesting, which the caller's stack holds.
//!
//! Bytecode is not screened but checked: it must be pw's, with a checksum
//! that matches ([`crate::bytecode`]); the attributes and types it stores
//! as text go through the same parser on the same large stack.

use crate::{bytecode, diag::Diag, error::Error, ffi};
use melior::{
    ir::{Location, Module},
    Context, StringRef,
};
use mlir_sys::{MlirContext, MlirModule};
use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};

/// The deepest nesting of `(`, `[`, `{` and `<` accepted. JAX's programs
/// nest a few dozen levels at most.
pub const MAX_NESTING: usize = 256;

/// The most operators one affine expression may have.
pub const MAX_AFFINE_TERMS: usize = 1024;

/// The largest input accepted.
pub const MAX_INPUT_BYTES: usize = 1 << 30;

/// The stack of the parsing thread (reserved, not committed, memory).
pub const PARSE_STACK_BYTES: usize = 256 << 20;

/// Parses `source`, MLIR text or bytecode, into a module; text's locations
/// name `source_name` (bytecode keeps the locations it was written with).
///
/// Top-level ops without an enclosing `module` are wrapped in one, as
/// mlir-opt does. On failure the errors (the screen's, or the parser's)
/// have gone to the context's diagnostic handlers and `None` is returned.
/// Parsing also runs MLIR's own verifier (op structure, SSA dominance,
/// symbol uniqueness).
pub fn parse_source<'c>(
    context: &'c Context,
    source: impl AsRef<[u8]>,
    source_name: &str,
) -> Option<Module<'c>> {
    let source = source.as_ref();
    if let Err(diag) = check(context, source, source_name) {
        diag.emit();
        return None;
    }
    /// Raw handles cross to the parsing thread and back; the calling thread
    /// waits for it, so the context is never used by both at once.
    struct Raw<T>(T);
    // SAFETY: see above: exactly one thread uses the handle at a time.
    unsafe impl<T> Send for Raw<T> {}
    // Counts the errors MLIR reports while it parses (passing them on), so
    // that a failure it does not explain still gets an error.
    let errors = Arc::new(AtomicUsize::new(0));
    let counter = errors.clone();
    let counting = crate::diag::attach_handler(context, move |d| {
        if matches!(d.severity, melior::diagnostic::DiagnosticSeverity::Error) {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        false
    });
    let raw_context = Raw(context.to_raw());
    let parsed = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("pw-parse".into())
            .stack_size(PARSE_STACK_BYTES)
            .spawn_scoped(scope, move || {
                let raw_context = raw_context;
                Raw(parse_raw(raw_context.0, source, source_name))
            })
            .ok()
            .map(|handle| handle.join())
    });
    let raw = match parsed {
        Some(Ok(raw)) => raw.0,
        // No thread (out of resources): parse here, within the screen's
        // limits.
        None => parse_raw(context.to_raw(), source, source_name),
        Some(Err(panic)) => std::panic::resume_unwind(panic),
    };
    context.detach_diagnostic_handler(counting);
    // SAFETY: the module was created in `context`; null maps to None.
    let module = unsafe { Module::from_option_raw(raw) };
    if module.is_none() && errors.load(Ordering::Relaxed) == 0 {
        Diag::new(Location::new(context, source_name, 1, 1), Error::Unreadable).emit();
    }
    module
}

fn parse_raw(context: MlirContext, source: &[u8], source_name: &str) -> MlirModule {
    let source = mlir_sys::MlirStringRef {
        data: source.as_ptr().cast(),
        length: source.len(),
    };
    let name = StringRef::new(source_name);
    // SAFETY: the context is live and used by this thread alone while it
    // parses; the bytes and the name outlive the call.
    unsafe { ffi::pwParseSourceString(context, source, name.to_raw()) }
}

/// Checks the input against the limits of the module documentation: its
/// size, and for text that it is UTF-8 and passes the [`screen`].
fn check<'c>(context: &'c Context, source: &[u8], source_name: &str) -> Result<(), Diag<'c>> {
    let at = |line: usize, column: usize, error: Error| {
        Diag::new(Location::new(context, source_name, line, column), error)
    };
    if source.len() > MAX_INPUT_BYTES {
        return Err(at(
            1,
            1,
            Error::InputTooLarge {
                bytes: source.len(),
                limit: MAX_INPUT_BYTES,
            },
        ));
    }
    if bytecode::is_bytecode(source) {
        return bytecode::check(source).map_err(|e| at(1, 1, Error::Bytecode(e)));
    }
    if let Err(e) = std::str::from_utf8(source) {
        let valid = &source[..e.valid_up_to()];
        let line = 1 + valid.iter().filter(|&&c| c == b'\n').count();
        let column = 1 + valid.iter().rev().take_while(|&&c| c != b'\n').count();
        return Err(at(line, column, Error::NotText));
    }
    screen(source).map_err(|e| {
        let (line, column, error) = *e;
        at(line, column, error)
    })
}

/// Checks text against the nesting and affine limits in one pass; the error
/// says where (line and column) a limit is crossed.
fn screen(bytes: &[u8]) -> Result<(), Box<(usize, usize, Error)>> {
    let at = |line: usize, column: usize, error: Error| Box::new((line, column, error));
    let (mut line, mut line_start) = (1usize, 0usize);
    let mut depth = 0usize;
    // The depth at which the innermost affine map or set opened, and the
    // operators seen in it so far.
    let mut affine: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < bytes.len() {
        let column = i - line_start + 1;
        match bytes[i] {
            b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            b'"' => {
                // A string: skip to its end, escapes included.
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    } else if bytes[i] == b'\n' {
                        line += 1;
                        line_start = i + 1;
                    }
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'-' | b'<' if matches!(bytes.get(i + 1), Some(b'>' | b'=')) => {
                // `->`, `<=`, `>=` are not brackets.
                i += 2;
                continue;
            }
            b'>' if bytes.get(i + 1) == Some(&b'=') => {
                i += 2;
                continue;
            }
            c @ (b'(' | b'[' | b'{' | b'<') => {
                if c == b'<' {
                    let word = word_before(bytes, i);
                    if word == b"array" && word_after(bytes, i + 1) == b"index" {
                        return Err(at(
                            line,
                            column,
                            Error::UnparsableConstruct {
                                construct: "a dense array of index elements (array<index: ...>)",
                            },
                        ));
                    }
                    if affine.is_none() && (word == b"affine_map" || word == b"affine_set") {
                        affine = Some((depth, 0));
                    }
                }
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(at(
                        line,
                        column,
                        Error::NestingTooDeep { limit: MAX_NESTING },
                    ));
                }
            }
            b')' | b']' | b'}' | b'>' => {
                depth = depth.saturating_sub(1);
                if affine.is_some_and(|(open, _)| depth <= open) {
                    affine = None;
                }
            }
            b'+' | b'-' | b'*' => {
                if let Some((_, terms)) = affine.as_mut() {
                    *terms += 1;
                    if *terms > MAX_AFFINE_TERMS {
                        return Err(at(
                            line,
                            column,
                            Error::UnparsableConstruct {
                                construct: "an affine expression of more than 1024 operators",
                            },
                        ));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$'
}

/// The identifier ending just before `end` (spaces between allowed).
fn word_before(bytes: &[u8], end: usize) -> &[u8] {
    let mut stop = end;
    while stop > 0 && bytes[stop - 1].is_ascii_whitespace() {
        stop -= 1;
    }
    let mut start = stop;
    while start > 0 && is_word(bytes[start - 1]) {
        start -= 1;
    }
    &bytes[start..stop]
}

/// The identifier starting at `start` (spaces before it allowed).
fn word_after(bytes: &[u8], start: usize) -> &[u8] {
    let mut begin = start;
    while begin < bytes.len() && bytes[begin].is_ascii_whitespace() {
        begin += 1;
    }
    let mut end = begin;
    while end < bytes.len() && is_word(bytes[end]) {
        end += 1;
    }
    &bytes[begin..end]
}
