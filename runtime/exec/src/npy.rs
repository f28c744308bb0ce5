//! Arrays in and out of NumPy `.npy` files.
//!
//! The format (NumPy's `format.py`): the magic `\x93NUMPY`, a version
//! (1.0, 2.0 or 3.0), the length of a header, the header itself, a Python
//! dict literal such as `{'descr': '<f4', 'fortran_order': False, 'shape':
//! (3, 4), }`, and then the elements, densely.
//!
//! Supported element types: `bool` (`|b1`), signed and unsigned integers of
//! 1, 2, 4 and 8 bytes, `float16`, `float32`, `float64` (either byte order;
//! C or Fortran order on reading), and `bfloat16`. NumPy has no bfloat16:
//! `np.save` writes an `ml_dtypes.bfloat16` array (what JAX users have) as the
//! raw 2-byte type `<V2`, so a 2-byte void is read as bfloat16 and bfloat16 is
//! written as `<V2`; load it in Python with `np.load(p).view(ml_dtypes.bfloat16)`.
//! `complex64` and `complex128` are `c8` and `c16`. The 8-bit floats and
//! the sub-byte types (int2, int4, uint2, uint4, float4_e2m1fn: one byte
//! per element, the value in its low bits) are written as `np.save` writes
//! them, one raw byte (`|V1`, view it as the ml_dtypes type), and read only
//! where the reader says which type it expects: such a file does not say
//! which of the thirteen it holds. Arrays are always written in C order and native byte
//! order.
//!
//! Files are untrusted: the header is parsed in one linear pass and is at
//! most [`MAX_HEADER_BYTES`] long; sizes are computed with checked
//! arithmetic; and the element bytes are allocated only once the file is
//! known to hold that many (a header cannot make the reader allocate more
//! than the file's size). Reading and writing move the element bytes in
//! bulk: one read or write of the whole payload, byte swapping in place only
//! for the other byte order. Like NumPy, a large read buffer is backed by
//! transparent huge pages where the kernel offers them (`madvise`), which
//! spares a page fault per 4 KiB of it, and a file's blocks are reserved
//! before its data is written (`fallocate`).

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::host::HostArray;
use pw_core::DType;
use pw_pjrt::os;

/// The longest header accepted (NumPy's own reader refuses headers over
/// 10,000 bytes by default).
pub const MAX_HEADER_BYTES: usize = 1 << 16;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Reads a `.npy` file.
pub fn read(path: impl AsRef<Path>) -> Result<HostArray> {
    read_file(path.as_ref(), None)
}

/// Reads a `.npy` file that should hold `want` elements: a file of one
/// raw byte per element (how `np.save` writes ml_dtypes' 8-bit floats) is
/// read as `want` when that is one of them.
pub fn read_expecting(path: impl AsRef<Path>, want: DType) -> Result<HostArray> {
    read_file(path.as_ref(), Some(want))
}

fn read_file(path: &Path, want: Option<DType>) -> Result<HostArray> {
    let name = path.display().to_string();
    let mut file = File::open(path).map_err(|e| npy_error(&name, e))?;
    let meta = file.metadata().map_err(|e| npy_error(&name, e))?;
    // A pipe or device has no length to check against: read what comes.
    let size = meta.is_file().then_some(meta.len());
    read_sized(&mut file, size, &name, want)
}

/// Writes a `.npy` file.
pub fn write(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let mut file = File::create(path).map_err(|e| npy_error(&name, e))?;
    os::reserve(
        &file,
        (header_bytes(array).len() + array.bytes().len()) as u64,
    );
    write_to(&mut file, array, &name)
}

fn npy_error(name: &str, reason: impl std::fmt::Display) -> Error {
    Error::Npy {
        path: name.to_string(),
        reason: reason.to_string(),
    }
}

/// Reads `.npy` data from any reader; `name` labels errors. Memory grows
/// with the bytes actually read, never with what the header declares.
pub fn read_from(mut reader: impl Read, name: &str) -> Result<HostArray> {
    read_sized(&mut reader, None, name, None)
}

/// What a header says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Header {
    dtype: DType,
    /// Whether the file's element bytes are in the other byte order.
    swap: bool,
    fortran: bool,
    shape: Vec<usize>,
}

/// Reads one file; `size`, when known, is the whole file's length.
fn read_sized(
    reader: &mut dyn Read,
    size: Option<u64>,
    name: &str,
    want: Option<DType>,
) -> Result<HostArray> {
    let err = |reason: String| npy_error(name, reason);
    let io = |e: std::io::Error| npy_error(name, e);
    let mut preamble = [0u8; 8];
    read_exactly(reader, &mut preamble, "the magic string").map_err(err)?;
    if &preamble[..6] != MAGIC {
        return Err(err("not a .npy file (no \\x93NUMPY magic string)".into()));
    }
    let (major, minor) = (preamble[6], preamble[7]);
    let length_bytes = match major {
        1 => 2,
        2 | 3 => 4,
        _ => {
            return Err(err(format!(
                "format version {major}.{minor} is not supported (1.0, 2.0 and 3.0 are)"
            )))
        }
    };
    let mut length = [0u8; 4];
    read_exactly(reader, &mut length[..length_bytes], "the header length").map_err(err)?;
    let header_len = u32::from_le_bytes(length) as usize;
    if header_len > MAX_HEADER_BYTES {
        return Err(err(format!(
            "the header is {header_len} bytes long; at most {MAX_HEADER_BYTES} are accepted"
        )));
    }
    let mut header = vec![0u8; header_len];
    read_exactly(reader, &mut header, "the header").map_err(err)?;
    // Version 3 allows UTF-8; 1 and 2 are Latin-1, of which pw needs ASCII.
    let text = std::str::from_utf8(&header)
        .map_err(|_| err("the header is not ASCII/UTF-8 text".into()))?;
    let header = parse_header(text, want).map_err(|e| err(format!("bad header: {e}")))?;
    let bytes = payload_bytes(&header).map_err(err)?;
    let offset = (8 + length_bytes + header_len) as u64;
    if let Some(size) = size {
        let available = size.saturating_sub(offset);
        if available != bytes as u64 {
            return Err(err(format!(
                "the header declares {} {}{:?} ({bytes} bytes), but the file holds {available} bytes of data",
                header.dtype, if header.fortran { "Fortran-order " } else { "" }, header.shape
            )));
        }
    }
    let mut data = Vec::new();
    if size.is_some() {
        // The file size bounded the allocation above.
        data.try_reserve_exact(bytes)
            .map_err(|e| err(format!("cannot allocate {bytes} bytes: {e}")))?;
        os::advise_huge_pages(&mut data);
    }
    let read = reader
        .take(bytes as u64)
        .read_to_end(&mut data)
        .map_err(io)?;
    if read != bytes {
        return Err(err(format!(
            "the file ends after {read} of the {bytes} bytes of data its header declares"
        )));
    }
    if size.is_none() {
        let mut extra = [0u8; 1];
        if reader.read(&mut extra).map_err(io)? != 0 {
            return Err(err(
                "there are bytes after the data the header declares".into()
            ));
        }
    }
    let width = header.dtype.size_in_bytes();
    if header.swap {
        // A complex number's two halves each in the other order.
        let part = if header.dtype.is_complex() {
            width / 2
        } else {
            width
        };
        swap_bytes(&mut data, part);
    }
    if header.dtype == DType::Bool {
        // Anything but 0 is true, as NumPy reads it; pw's bool bytes are 0/1.
        for b in &mut data {
            *b = u8::from(*b != 0);
        }
    }
    if header.fortran && header.shape.len() > 1 {
        data = fortran_to_c(&data, &header.shape, width);
    }
    HostArray::new(header.dtype, &header.shape, data).map_err(|e| err(e.to_string()))
}

/// Fills `buf`, or says which part of the file is missing.
fn read_exactly(reader: &mut dyn Read, buf: &mut [u8], what: &str) -> Result<(), String> {
    reader.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => format!("the file ends inside {what}"),
        _ => e.to_string(),
    })
}

/// Bytes of the elements a header declares, checked.
fn payload_bytes(header: &Header) -> Result<usize, String> {
    header
        .shape
        .iter()
        .try_fold(header.dtype.size_in_bytes(), |acc, &d| acc.checked_mul(d))
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            format!(
                "the shape {:?} of {} is too large to address",
                header.shape, header.dtype
            )
        })
}

/// Parses the header dict in one pass: exactly the keys `descr`,
/// `fortran_order` and `shape`, in any order.
fn parse_header(text: &str, want: Option<DType>) -> Result<Header, String> {
    let mut p = Lexer { rest: text };
    p.expect('{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        if p.eat('}') {
            break;
        }
        let key = p.string()?;
        p.expect(':')?;
        match key {
            "descr" if descr.is_none() => descr = Some(p.string()?),
            "fortran_order" if fortran.is_none() => fortran = Some(p.boolean()?),
            "shape" if shape.is_none() => shape = Some(p.tuple()?),
            "descr" | "fortran_order" | "shape" => return Err(format!("key '{key}' is repeated")),
            other => return Err(format!("unknown key '{other}'")),
        }
        if !p.eat(',') {
            p.expect('}')?;
            break;
        }
    }
    if !p.rest.trim().is_empty() {
        return Err(format!(
            "unexpected text after the dict: {:?}",
            clip(p.rest)
        ));
    }
    let descr = descr.ok_or("no 'descr' key")?;
    let (dtype, swap) = parse_descr(descr, want)?;
    Ok(Header {
        dtype,
        swap,
        fortran: fortran.ok_or("no 'fortran_order' key")?,
        shape: shape.ok_or("no 'shape' key")?,
    })
}

/// A NumPy type string: its dtype, and whether its bytes are in the other
/// byte order than this machine's.
fn parse_descr(descr: &str, want: Option<DType>) -> Result<(DType, bool), String> {
    let unsupported = || format!("element type '{descr}' is not supported");
    let mut chars = descr.chars();
    let order = chars.next().ok_or_else(unsupported)?;
    let little = match order {
        '<' => Some(true),
        '>' => Some(false),
        '|' => None,
        '=' => Some(cfg!(target_endian = "little")),
        _ => return Err(unsupported()),
    };
    let dtype = match chars.as_str() {
        "b1" => DType::Bool,
        "i1" => DType::I8,
        "i2" => DType::I16,
        "i4" => DType::I32,
        "i8" => DType::I64,
        "u1" => DType::U8,
        "u2" => DType::U16,
        "u4" => DType::U32,
        "u8" => DType::U64,
        "f2" => DType::F16,
        "f4" => DType::F32,
        "f8" => DType::F64,
        "c8" => DType::C64,
        "c16" => DType::C128,
        // ml_dtypes' bfloat16: raw little-endian bits, whatever the mark.
        "V2" => return Ok((DType::BF16, cfg!(target_endian = "big"))),
        "V1" | "f1" => match want {
            Some(raw) if raw.is_raw_byte() => raw,
            _ => {
                return Err(format!(
                    "element type '{descr}' is one raw byte: an ml_dtypes float8 or sub-byte \
                     array, whose kind the file does not say; pw reads one only where the \
                     program says which (a pw-run input)"
                ))
            }
        },
        _ => return Err(unsupported()),
    };
    let swap = match little {
        _ if dtype.size_in_bytes() == 1 => false,
        Some(little) => little != cfg!(target_endian = "little"),
        None => return Err(format!("'{descr}' needs a byte order ('<' or '>')")),
    };
    Ok((dtype, swap))
}

fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

/// The tokens of a header: one pass, no backtracking.
struct Lexer<'a> {
    rest: &'a str,
}

impl<'a> Lexer<'a> {
    fn skip_space(&mut self) {
        self.rest = self.rest.trim_start();
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        match self.rest.strip_prefix(c) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{c}' at {:?}", clip(self.rest)))
        }
    }

    /// A quoted string without escapes (keys and type strings have none).
    fn string(&mut self) -> Result<&'a str, String> {
        self.skip_space();
        let quote = self
            .rest
            .chars()
            .next()
            .filter(|c| *c == '\'' || *c == '"')
            .ok_or_else(|| format!("expected a string at {:?}", clip(self.rest)))?;
        let body = &self.rest[1..];
        let end = body
            .find(quote)
            .ok_or_else(|| "unterminated string".to_owned())?;
        let s = &body[..end];
        if s.contains('\\') {
            return Err(format!("escapes are not supported in {s:?}"));
        }
        self.rest = &body[end + 1..];
        Ok(s)
    }

    fn boolean(&mut self) -> Result<bool, String> {
        self.skip_space();
        for (word, value) in [("True", true), ("False", false)] {
            if let Some(rest) = self.rest.strip_prefix(word) {
                self.rest = rest;
                return Ok(value);
            }
        }
        Err(format!("expected True or False at {:?}", clip(self.rest)))
    }

    fn integer(&mut self) -> Result<usize, String> {
        self.skip_space();
        let end = self
            .rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(self.rest.len());
        let digits = &self.rest[..end];
        let value = digits
            .parse::<usize>()
            .map_err(|_| format!("expected a dimension at {:?}", clip(self.rest)))?;
        self.rest = &self.rest[end..];
        // NumPy writes Python 2's long suffix in some old files.
        if let Some(rest) = self.rest.strip_prefix('L') {
            self.rest = rest;
        }
        Ok(value)
    }

    /// `()`, `(3,)`, `(3, 4)`, `(3, 4,)`.
    fn tuple(&mut self) -> Result<Vec<usize>, String> {
        self.expect('(')?;
        let mut dims = Vec::new();
        loop {
            if self.eat(')') {
                return Ok(dims);
            }
            dims.push(self.integer()?);
            if !self.eat(',') {
                self.expect(')')?;
                if dims.len() == 1 {
                    return Err("a one-dimensional shape is written (n,)".into());
                }
                return Ok(dims);
            }
        }
    }
}

/// Reverses the bytes of every `width`-byte element.
fn swap_bytes(data: &mut [u8], width: usize) {
    match width {
        2 => data.chunks_exact_mut(2).for_each(|c| {
            c.copy_from_slice(&u16::from_ne_bytes([c[0], c[1]]).swap_bytes().to_ne_bytes())
        }),
        4 => data.chunks_exact_mut(4).for_each(|c| {
            let v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
            c.copy_from_slice(&v.swap_bytes().to_ne_bytes());
        }),
        8 => data.chunks_exact_mut(8).for_each(|c| {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(c);
            c.copy_from_slice(&u64::from_ne_bytes(raw).swap_bytes().to_ne_bytes());
        }),
        _ => {}
    }
}

/// Reorders column-major element bytes into row-major order.
fn fortran_to_c(data: &[u8], shape: &[usize], width: usize) -> Vec<u8> {
    let n: usize = shape.iter().product();
    let mut out = vec![0u8; data.len()];
    if n == 0 {
        return out;
    }
    // Column-major strides (in elements) of each dimension.
    let mut strides = vec![1usize; shape.len()];
    for d in 1..shape.len() {
        strides[d] = strides[d - 1] * shape[d - 1];
    }
    let rank = shape.len();
    let last = rank - 1;
    let mut index = vec![0usize; rank];
    let mut base = 0usize;
    let mut c_pos = 0usize;
    while c_pos < n {
        // One row of the output: the last index runs, with stride
        // `strides[last]` in the input.
        for j in 0..shape[last] {
            let f = (base + j * strides[last]) * width;
            out[(c_pos + j) * width..(c_pos + j + 1) * width].copy_from_slice(&data[f..f + width]);
        }
        c_pos += shape[last];
        // Odometer over the outer dimensions, keeping `base` in step.
        let mut d = last;
        while d > 0 {
            d -= 1;
            index[d] += 1;
            base += strides[d];
            if index[d] < shape[d] {
                break;
            }
            base -= index[d] * strides[d];
            index[d] = 0;
        }
    }
    out
}

/// Writes `.npy` data to any writer; `name` labels errors.
pub fn write_to(mut writer: impl Write, array: &HostArray, name: &str) -> Result<()> {
    let io = |e: std::io::Error| npy_error(name, e);
    writer.write_all(&header_bytes(array)).map_err(io)?;
    if array.dtype() == DType::BF16 && cfg!(target_endian = "big") {
        let mut data = array.bytes().to_vec();
        swap_bytes(&mut data, 2);
        writer.write_all(&data).map_err(io)?;
    } else {
        writer.write_all(array.bytes()).map_err(io)?;
    }
    writer.flush().map_err(io)
}

/// The magic string, version, length and padded header of `array`'s file.
fn header_bytes(array: &HostArray) -> Vec<u8> {
    let order = if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    let descr = match array.dtype() {
        DType::Bool => "|b1".to_owned(),
        DType::I8 => "|i1".to_owned(),
        DType::U8 => "|u1".to_owned(),
        DType::BF16 => "<V2".to_owned(),
        // As np.save writes ml_dtypes' float8 and sub-byte arrays: one raw
        // byte each.
        d if d.is_raw_byte() => "|V1".to_owned(),
        other => {
            let kind = match other {
                DType::F16 | DType::F32 | DType::F64 => 'f',
                DType::C64 | DType::C128 => 'c',
                DType::U16 | DType::U32 | DType::U64 => 'u',
                _ => 'i',
            };
            format!("{order}{kind}{}", other.size_in_bytes())
        }
    };
    let dims: Vec<String> = array.shape().iter().map(usize::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Version 1.0 stores the length in 2 bytes; 2.0 in 4.
    let (version, length_bytes) = if dict.len() + 1 + 10 <= u16::MAX as usize {
        (1u8, 2)
    } else {
        (2u8, 4)
    };
    let unpadded = MAGIC.len() + 2 + length_bytes + dict.len() + 1;
    dict.extend(std::iter::repeat_n(
        ' ',
        unpadded.next_multiple_of(64) - unpadded,
    ));
    dict.push('\n');
    let mut out = Vec::with_capacity(unpadded + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    let len = dict.len() as u32;
    out.extend_from_slice(&len.to_le_bytes()[..length_bytes]);
    out.extend_from_slice(dict.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_as_numpy_writes_them() {
        let h = parse_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }   \n",
            None,
        )
        .unwrap();
        assert_eq!(h.shape, [3, 4]);
        assert_eq!(h.dtype, DType::F32);
        assert!(!h.fortran);
        let h = parse_header(
            "{\"shape\": (), \"fortran_order\": True, \"descr\": \">i8\"}",
            None,
        )
        .unwrap();
        assert_eq!((h.shape.len(), h.fortran, h.dtype), (0, true, DType::I64));
        assert_eq!(
            parse_header("{'descr':'|b1','fortran_order':False,'shape':(5,)}", None)
                .unwrap()
                .shape,
            [5]
        );
        for bad in [
            "",
            "{",
            "{'descr': '<f4'}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }",
            "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }",
            "{'descr': '<c32', 'fortran_order': False, 'shape': (3,), }",
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x",
            "{'descr': 'f4', 'fortran_order': False, 'shape': (3,), }",
            "{'descr': '|f4', 'fortran_order': False, 'shape': (3,), }",
        ] {
            assert!(parse_header(bad, None).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn written_headers_are_padded_to_64_bytes() {
        for shape in [&[][..], &[3], &[2, 3, 4]] {
            let a = HostArray::zeros(DType::F32, shape);
            let h = header_bytes(&a);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(h.last(), Some(&b'\n'));
        }
    }

    #[test]
    fn fortran_order_is_transposed() {
        // A 2x3 array [[0, 1, 2], [3, 4, 5]] stored column-major.
        let f: Vec<u8> = [0u8, 3, 1, 4, 2, 5].to_vec();
        assert_eq!(fortran_to_c(&f, &[2, 3], 1), [0, 1, 2, 3, 4, 5]);
        // 2x2x2: element (i, j, k) is at i + 2j + 4k column-major.
        let f: Vec<u8> = (0..8).collect();
        let c: Vec<u8> = (0..8u8)
            .map(|p| {
                let (i, j, k) = (p / 4, (p / 2) % 2, p % 2);
                i + 2 * j + 4 * k
            })
            .collect();
        assert_eq!(fortran_to_c(&f, &[2, 2, 2], 1), c);
    }
}
