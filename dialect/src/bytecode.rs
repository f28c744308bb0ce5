//! pw's bytecode: MLIR bytecode for programs that machines read back
//! (`pw-opt --emit-bytecode`), several times faster to parse than text.
//!
//! MLIR's bytecode reader is not hardened against damaged input: a few
//! flipped bytes can make it free memory twice. So pw reads only bytecode
//! that pw wrote: its header's producer string, which MLIR keeps but does
//! not interpret, is `pw-sha256:` and the SHA-256 (hex) of every byte after
//! the header, and [`check`] verifies it before MLIR sees the bytes. A
//! truncated or damaged file is then a clear error. (A checksum does not
//! make a file crafted to pass it safe: pw-server therefore also parses
//! bytecode from its clients in a child process first.) Other MLIR tools
//! read pw's bytecode as any other.

use crate::{ffi, print::append};
use melior::ir::operation::OperationLike;
use sha2::{Digest, Sha256};
use std::ffi::c_void;

/// The first bytes of MLIR bytecode.
pub const MAGIC: &[u8] = b"ML\xefR";

/// What starts the producer of pw's bytecode; the digest follows.
const PRODUCER: &str = "pw-sha256:";

/// Hex digits of a SHA-256.
const DIGEST_HEX: usize = 64;

/// Whether `source` is MLIR bytecode rather than text.
pub fn is_bytecode(source: &[u8]) -> bool {
    source.starts_with(MAGIC)
}

/// Why bytecode was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "MLIR bytecode that pw did not write (producer '{producer}'): pw reads the bytecode \
         of pw-opt --emit-bytecode, whose checksum it checks; give other programs as text"
    )]
    NotFromPw { producer: String },
    #[error("the bytecode is damaged or truncated: its checksum does not match its bytes")]
    Damaged,
}

/// `op` as pw's bytecode; None if MLIR could not write it.
pub fn write<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<Vec<u8>> {
    // A placeholder of the digest's length: the digest replaces it in
    // place, so no offset in the file moves.
    let producer = format!("{PRODUCER}{}", "0".repeat(DIGEST_HEX));
    let mut out: Vec<u8> = Vec::new();
    // SAFETY: the op is live, the producer outlives the call; the callback
    // gets `out` as its user data and only appends to it.
    let written = unsafe {
        ffi::pwOperationWriteBytecode(
            op.to_raw(),
            melior::StringRef::new(&producer).to_raw(),
            Some(append),
            &mut out as *mut Vec<u8> as *mut c_void,
        )
    };
    if !written {
        return None;
    }
    let (digest_at, body_at) = header(&out)?;
    let digest = hex(&Sha256::digest(&out[body_at..]));
    out[digest_at..digest_at + DIGEST_HEX].copy_from_slice(digest.as_bytes());
    Some(out)
}

/// Checks that `source` (bytecode) is pw's and intact.
pub fn check(source: &[u8]) -> Result<(), Refused> {
    let Some((digest_at, body_at)) = header(source) else {
        let producer = producer_of(source);
        // pw's producer, cut short: a file truncated within its header.
        if PRODUCER.starts_with(&producer) || producer.starts_with(PRODUCER) {
            return Err(Refused::Damaged);
        }
        return Err(Refused::NotFromPw { producer });
    };
    let digest = hex(&Sha256::digest(&source[body_at..]));
    if source[digest_at..digest_at + DIGEST_HEX] != *digest.as_bytes() {
        return Err(Refused::Damaged);
    }
    Ok(())
}

/// Where the digest of pw's producer string starts, and where the bytes
/// after the header start; None if the header is not pw's.
///
/// The header is the magic number, the format version (a small varint:
/// one byte for every version so far) and the producer, NUL-terminated.
fn header(bytes: &[u8]) -> Option<(usize, usize)> {
    let at = MAGIC.len() + 1;
    let digest_at = at + PRODUCER.len();
    let end = digest_at + DIGEST_HEX;
    let is_pw = bytes.starts_with(MAGIC)
        && bytes.get(at..digest_at) == Some(PRODUCER.as_bytes())
        && bytes.get(end) == Some(&0)
        && bytes[digest_at..end].iter().all(u8::is_ascii_hexdigit);
    is_pw.then_some((digest_at, end + 1))
}

/// The producer string of MLIR bytecode, for messages (at most 64
/// characters).
fn producer_of(bytes: &[u8]) -> String {
    let rest = bytes.get(MAGIC.len() + 1..).unwrap_or_default();
    let name = rest.split(|&b| b == 0).next().unwrap_or_default();
    String::from_utf8_lossy(&name[..name.len().min(64)]).into_owned()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
