//! The chunking every bulk transfer uses.
//!
//! A payload is sent as [`Chunk`]s of at most [`CHUNK_BYTES`]
//! bytes ([`chunks`]); the receiver checks each with a [`ChunkCheck`]: the
//! declared size (against a limit, before anything is allocated), the order
//! of offsets, and the CRC-32 of the whole payload on the last chunk. A
//! truncated, reordered, oversized or corrupted payload is an error.

use crate::{
    proto::{self, Chunk},
    Error,
};
use bytes::Bytes;
use pw_core::DType;
use std::time::Duration;

/// Bytes per chunk (also the HTTP/2 frame budget per message).
pub const CHUNK_BYTES: usize = 1 << 20;

/// A shard this small travels inside the message it belongs to (an input
/// in its part's `ExecuteRequest`), not in chunks of its own.
pub const INLINE_SHARD_BYTES: u64 = 64 << 10;

/// The most bytes of shards one `ExecuteRequest` carries inline.
pub const MAX_INLINE_BYTES: u64 = 1 << 20;

/// The most bytes a `ReadRequest` returns (larger shards are fetched with
/// `Worker.Fetch`, in chunks).
pub const MAX_READ_BYTES: u64 = 1 << 20;

/// The largest gRPC message pw sends or accepts: control messages (a part
/// of a big program, a run's report) may be large; bulk bytes always travel
/// in chunks of [`CHUNK_BYTES`].
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// HTTP/2 flow-control windows that let one stream fill a fast link
/// (measured: 1.0-1.4 GB/s on loopback, against 0.3-0.9 with the defaults).
pub const STREAM_WINDOW: u32 = 16 << 20;
pub const CONNECTION_WINDOW: u32 = 32 << 20;

/// HTTP/2 keepalive: a silent peer is declared gone within about
/// `KEEPALIVE + KEEPALIVE_TIMEOUT`.
pub const KEEPALIVE: Duration = Duration::from_millis(500);
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(1);

/// The byte ranges of the chunks of a payload of `len` bytes: at most
/// [`CHUNK_BYTES`] each, one (empty) range for an empty payload.
pub fn chunk_ranges(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let count = len.div_ceil(CHUNK_BYTES).max(1);
    (0..count).map(move |i| i * CHUNK_BYTES..((i + 1) * CHUNK_BYTES).min(len))
}

/// Splits `data` into chunks (sharing its memory); the last carries the
/// CRC-32 of all of it.
pub fn chunks(data: Bytes) -> Vec<Chunk> {
    let total = data.len() as u64;
    let crc = crc32fast::hash(&data);
    chunk_ranges(data.len())
        .map(|r| Chunk {
            offset: r.start as u64,
            total,
            crc32: (r.end == data.len()).then_some(crc),
            data: data.slice(r),
        })
        .collect()
}

/// Checks a stream of chunks as it arrives (see the module doc).
#[derive(Debug)]
pub struct ChunkCheck {
    total: u64,
    next: u64,
    hasher: crc32fast::Hasher,
    done: bool,
    what: String,
}

impl ChunkCheck {
    /// Expects a payload the first chunk declares, of at most `limit` bytes
    /// (exactly `expected` when given); `what` names it in errors.
    pub fn new(
        first: &Chunk,
        limit: u64,
        expected: Option<u64>,
        what: impl Into<String>,
    ) -> Result<ChunkCheck, Error> {
        let what = what.into();
        if first.total > limit {
            return Err(Error::TooLarge {
                what,
                declared: first.total,
                limit,
            });
        }
        if let Some(e) = expected {
            if first.total != e {
                return Err(Error::Unexpected {
                    what,
                    declared: first.total,
                    expected: e,
                });
            }
        }
        Ok(ChunkCheck {
            total: first.total,
            next: 0,
            hasher: crc32fast::Hasher::new(),
            done: false,
            what,
        })
    }

    /// Bytes the payload has.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.next
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Checks the next chunk; `Ok(true)` when it completes the payload (its
    /// checksum verified).
    pub fn check(&mut self, chunk: &Chunk) -> Result<bool, Error> {
        let what = || self.what.clone();
        if self.done {
            return Err(Error::AfterLast { what: what() });
        }
        if chunk.total != self.total {
            return Err(Error::TotalChanged {
                what: what(),
                declared: chunk.total,
                first: self.total,
            });
        }
        if chunk.offset != self.next {
            return Err(Error::OutOfOrder {
                what: what(),
                offset: chunk.offset,
                expected: self.next,
            });
        }
        let end = self
            .next
            .checked_add(chunk.data.len() as u64)
            .filter(|&e| e <= self.total)
            .ok_or_else(|| Error::PastEnd {
                what: what(),
                len: chunk.data.len(),
                offset: chunk.offset,
                total: self.total,
            })?;
        self.hasher.update(&chunk.data);
        self.next = end;
        let last = end == self.total;
        match (last, chunk.crc32) {
            (true, Some(crc)) => {
                let actual = std::mem::take(&mut self.hasher).finalize();
                if actual != crc {
                    return Err(Error::Checksum {
                        what: self.what.clone(),
                        actual,
                        sent: crc,
                    });
                }
                self.done = true;
                Ok(true)
            }
            (true, None) => Err(Error::NoChecksum { what: what() }),
            (false, Some(_)) => Err(Error::EarlyChecksum {
                what: what(),
                at: end,
                total: self.total,
            }),
            (false, None) => Ok(false),
        }
    }

    /// The error for a stream that ended before the last chunk.
    pub fn truncated(&self) -> Error {
        Error::Truncated {
            what: self.what.clone(),
            received: self.next,
            total: self.total,
        }
    }
}

/// Collects a whole payload in memory, checked.
#[derive(Debug)]
pub struct Collect {
    check: ChunkCheck,
    data: Vec<u8>,
}

impl Collect {
    /// See [`ChunkCheck::new`]. Memory is taken as bytes arrive, never
    /// on the word of the first chunk alone: a request that declares a
    /// huge payload and sends little costs little.
    pub fn new(
        first: &Chunk,
        limit: u64,
        expected: Option<u64>,
        what: impl Into<String>,
    ) -> Result<Collect, Error> {
        let check = ChunkCheck::new(first, limit, expected, what)?;
        Ok(Collect {
            check,
            data: Vec::new(),
        })
    }

    /// Adds the next chunk; the payload once complete.
    pub fn push(&mut self, chunk: &Chunk) -> Result<Option<Vec<u8>>, Error> {
        let last = self.check.check(chunk)?;
        if self.data.is_empty() && !last {
            // The first of several chunks: room for a few more at once.
            let room = self.check.total().min(4 * CHUNK_BYTES as u64) as usize;
            self.reserve(room)?;
        }
        self.reserve(chunk.data.len())?;
        self.data.extend_from_slice(&chunk.data);
        Ok(last.then(|| std::mem::take(&mut self.data)))
    }

    /// Room for `more` bytes, or an error when memory is short.
    fn reserve(&mut self, more: usize) -> Result<(), Error> {
        self.data.try_reserve(more).map_err(|_| Error::OutOfMemory {
            what: self.check.what.clone(),
            bytes: self.data.len() as u64 + more as u64,
        })
    }

    pub fn truncated(&self) -> Error {
        self.check.truncated()
    }
}

/// An array that came whole: its dtype, dims and bytes.
pub type Received = (DType, Vec<usize>, Vec<u8>);

/// Arrays sent one after another as numbered, typed chunks (`RunInput`,
/// `RunOutput`): each array's chunks in order, the first of them carrying
/// its type; each array's declared size is checked against what is left
/// of `limit` bytes (for all of them together) before anything of it is
/// allocated.
pub struct Arrays {
    what: &'static str,
    limit: u64,
    used: u64,
    done: usize,
    current: Option<(DType, Vec<usize>, Collect)>,
}

impl Arrays {
    /// Arrays called `what` (`input`, `output`) in messages.
    pub fn new(what: &'static str, limit: u64) -> Arrays {
        Arrays {
            what,
            limit,
            used: 0,
            done: 0,
            current: None,
        }
    }

    /// How many arrays are complete.
    pub fn done(&self) -> usize {
        self.done
    }

    /// Takes the next chunk, of array `index` (typed `ty` when it is the
    /// array's first); returns the array's dtype, dims and bytes once it is
    /// complete.
    pub fn push(
        &mut self,
        index: u32,
        ty: Option<&proto::ArrayType>,
        chunk: Option<&Chunk>,
    ) -> Result<Option<Received>, Error> {
        let (what, expected) = (self.what, self.done);
        if index as usize != expected {
            return Err(Error::OutOfSequence {
                what,
                index,
                expected,
            });
        }
        let chunk = chunk.ok_or(Error::Incomplete {
            what,
            index,
            lacks: "data",
        })?;
        let (_, _, collect) = match &mut self.current {
            Some(c) => c,
            None => {
                let ty = ty.ok_or(Error::Incomplete {
                    what,
                    index,
                    lacks: "a type",
                })?;
                let (dtype, dims, bytes) = ty.read(self.limit - self.used)?;
                self.used += bytes;
                let collect = Collect::new(chunk, bytes, Some(bytes), format!("{what} #{index}"))?;
                self.current.insert((dtype, dims, collect))
            }
        };
        let Some(data) = collect.push(chunk)? else {
            return Ok(None);
        };
        let complete = self
            .current
            .take()
            .map(|(dtype, dims, _)| (dtype, dims, data));
        self.done += 1;
        Ok(complete)
    }

    /// An error if the stream ended inside an array.
    pub fn finish(&self) -> Result<(), Error> {
        match &self.current {
            Some((_, _, collect)) => Err(collect.truncated()),
            None => Ok(()),
        }
    }
}

impl proto::ArrayType {
    pub fn of(dtype: DType, dims: &[usize]) -> proto::ArrayType {
        proto::ArrayType {
            dtype: dtype.name().into(),
            dims: dims.iter().map(|&d| d as u64).collect(),
        }
    }

    /// The dtype and shape, with their byte size checked against `limit`.
    pub fn read(&self, limit: u64) -> Result<(DType, Vec<usize>, u64), Error> {
        let dtype =
            DType::from_name(&self.dtype).ok_or_else(|| Error::UnknownDType(self.dtype.clone()))?;
        let mut bytes = dtype.size_in_bytes() as u64;
        let mut dims = Vec::with_capacity(self.dims.len().min(64));
        for &d in &self.dims {
            bytes = bytes
                .checked_mul(d)
                .filter(|&b| b <= limit)
                .ok_or_else(|| Error::ArrayTooLarge {
                    dtype,
                    dims: self.dims.clone(),
                    limit,
                })?;
            dims.push(usize::try_from(d).map_err(|_| Error::ArrayTooLarge {
                dtype,
                dims: self.dims.clone(),
                limit,
            })?);
        }
        Ok((dtype, dims, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(n: usize) -> Bytes {
        Bytes::from((0..n).map(|i| (i * 7 % 251) as u8).collect::<Vec<_>>())
    }

    #[test]
    fn chunks_round_trip() {
        for n in [0, 1, CHUNK_BYTES, CHUNK_BYTES + 1, 3 * CHUNK_BYTES - 5] {
            let data = payload(n);
            let parts = chunks(data.clone());
            let mut c = Collect::new(&parts[0], n as u64, Some(n as u64), "t").unwrap();
            let mut got = None;
            for p in &parts {
                got = c.push(p).unwrap();
            }
            assert_eq!(got.as_deref(), Some(&data[..]), "{n} bytes");
        }
    }

    #[test]
    fn bad_streams_are_errors() {
        let parts = chunks(payload(2 * CHUNK_BYTES + 10));
        // Over the limit, or not the size expected.
        assert!(matches!(
            ChunkCheck::new(&parts[0], 100, None, "t"),
            Err(Error::TooLarge { limit: 100, .. })
        ));
        assert!(matches!(
            ChunkCheck::new(&parts[0], u64::MAX, Some(5), "t"),
            Err(Error::Unexpected { expected: 5, .. })
        ));
        // Out of order.
        let mut c = ChunkCheck::new(&parts[0], u64::MAX, None, "t").unwrap();
        assert!(matches!(
            c.check(&parts[1]),
            Err(Error::OutOfOrder { offset, expected: 0, .. }) if offset == CHUNK_BYTES as u64
        ));
        // Corrupted.
        let mut c = ChunkCheck::new(&parts[0], u64::MAX, None, "t").unwrap();
        let mut bad = parts[2].clone();
        let mut data = bad.data.to_vec();
        data[3] ^= 0x10;
        bad.data = Bytes::from(data);
        c.check(&parts[0]).unwrap();
        c.check(&parts[1]).unwrap();
        let err = c.check(&bad).unwrap_err();
        assert!(matches!(err, Error::Checksum { .. }), "{err}");
        assert!(err.to_string().contains("checksum mismatch"), "{err}");
        // Truncated.
        let mut c = ChunkCheck::new(&parts[0], u64::MAX, None, "t").unwrap();
        c.check(&parts[0]).unwrap();
        assert!(matches!(
            c.truncated(),
            Error::Truncated { received, .. } if received == CHUNK_BYTES as u64
        ));
        // A chunk past the end.
        let mut c = ChunkCheck::new(&parts[0], u64::MAX, None, "t").unwrap();
        let mut long = parts[0].clone();
        long.data = payload(3 * CHUNK_BYTES);
        assert!(c.check(&long).is_err());
    }

    #[test]
    fn array_types_are_bounded() {
        let t = proto::ArrayType {
            dtype: "float32".into(),
            dims: vec![1 << 40, 1 << 40],
        };
        assert!(t.read(u64::MAX).is_err());
        let t = proto::ArrayType::of(DType::BF16, &[3, 4]);
        assert_eq!(t.read(1 << 20).unwrap(), (DType::BF16, vec![3, 4], 24));
    }
}
