//! `--split-input-file`: one input, several independent buffers.

/// The separator line, as in mlir-opt.
pub const SEPARATOR: &str = "// -----";

/// One buffer of a split input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The buffer's text, preceded by blank lines so that line numbers are
    /// those of the whole file.
    pub text: String,
}

/// Splits at lines that start with `// -----`.
pub fn split(source: &str) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut text = String::new();
    let mut line = 0usize;
    for l in source.split_inclusive('\n') {
        line += 1;
        if l.trim_start().starts_with(SEPARATOR) {
            chunks.push(Chunk {
                text: std::mem::take(&mut text),
            });
            text = "\n".repeat(line);
        } else {
            text.push_str(l);
        }
    }
    chunks.push(Chunk { text });
    chunks
}
