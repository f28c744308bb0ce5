//! Arrays on storage as zarr v3: what pw's checkpoints are written in, and
//! what it reads back, its own and other writers' (TensorStore, Orbax's
//! `zarr3` format, zarr-python).
//!
//! An array is a directory: `zarr.json` (its shape, element type, chunk
//! grid, chunk key encoding, fill value and codecs) and one file per chunk
//! (`c/1/0`: the chunk at grid index (1, 0); a missing file is a chunk of
//! the fill value). pw writes a regular grid whose chunk is a shard of the
//! array, stored raw (the `bytes` codec, the host's byte order), one file
//! per distinct shard, written by the worker that holds it.
//!
//! Read: the `bytes` codec (either byte order), `zstd`, `crc32c`, and
//! `sharding_indexed` (zarr's shards: a file of inner chunks and their
//! index, as Orbax writes them); anything else is refused by name. Element
//! types are pw's [`DType`]s by their NumPy names (`bfloat16` and the
//! 8-bit floats as TensorStore names them); the sub-byte types are refused
//! (their byte layout on storage is not settled among writers).
//!
//! A checkpoint also carries the tree metadata Orbax's restore reads
//! ([`orbax_tree`], `_METADATA`): each array as the leaf whose key path is
//! its name split at `.` (Orbax names a leaf's directory the same way).
//!
//! Files are untrusted: sizes and ranks are checked against limits, and
//! against what the file holds, before anything is allocated.

use crate::error::{Error, Result};
use crate::host::{sizes, HostArray};
use pw_core::{geometry::Region, DType};
use pw_pjrt::os;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The metadata file of an array (or a group).
pub const METADATA: &str = "zarr.json";

/// The file Orbax's restore reads a checkpoint's tree from.
pub const ORBAX_TREE: &str = "_METADATA";

/// The most dimensions an array may have.
pub const MAX_RANK: usize = 32;

/// The most bytes one decoded chunk (or a zarr.json) may have.
pub const MAX_CHUNK_BYTES: u64 = 4 << 30;

/// The most bytes of a metadata file.
const MAX_METADATA_BYTES: u64 = 1 << 20;

/// How the bytes of a chunk are encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plain {
    pub big_endian: bool,
    pub zstd: bool,
    /// A CRC-32C of the encoded bytes follows them.
    pub crc32c: bool,
}

/// The codecs of an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Codecs {
    Plain(Plain),
    /// Each chunk file holds inner chunks of `inner` shape and an index of
    /// them (at its end or its start).
    Sharded {
        inner: Vec<u64>,
        codecs: Plain,
        index_at_end: bool,
        index_crc32c: bool,
    },
}

/// What `zarr.json` says of an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayMeta {
    pub dtype: DType,
    pub shape: Vec<u64>,
    pub chunk: Vec<u64>,
    pub codecs: Codecs,
    /// One element of the fill value, in host bytes.
    pub fill: Vec<u8>,
    /// `c/1/0` (the default encoding) or `1.0` (`v2`), by separator.
    pub v2_keys: bool,
    pub separator: char,
}

fn bad(path: &Path, reason: impl Into<String>) -> Error {
    Error::Zarr {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Whether pw keeps arrays of `dtype` in zarr.
pub fn storable(dtype: DType) -> bool {
    !dtype.is_sub_byte()
}

impl ArrayMeta {
    /// An array as pw writes it: a regular grid of `chunk`, raw bytes in
    /// the host's order, fill value zero.
    pub fn raw(dtype: DType, shape: &[u64], chunk: &[u64]) -> ArrayMeta {
        ArrayMeta {
            dtype,
            shape: shape.to_vec(),
            chunk: chunk.to_vec(),
            codecs: Codecs::Plain(Plain {
                big_endian: cfg!(target_endian = "big"),
                zstd: false,
                crc32c: false,
            }),
            fill: vec![0; dtype.size_in_bytes()],
            v2_keys: false,
            separator: '/',
        }
    }

    /// `zarr.json` of an array pw writes (see [`ArrayMeta::raw`]), with
    /// `attributes`.
    pub fn to_json(&self, attributes: Value) -> Result<String> {
        let endian = match &self.codecs {
            Codecs::Plain(p) if !p.zstd && !p.crc32c => {
                if p.big_endian {
                    "big"
                } else {
                    "little"
                }
            }
            _ => {
                return Err(bad(
                    Path::new(METADATA),
                    "pw writes raw chunks only (the bytes codec)",
                ))
            }
        };
        let fill = if self.dtype == DType::Bool {
            json!(false)
        } else if self.dtype.is_complex() {
            json!([0.0, 0.0])
        } else if self.dtype.is_float() {
            json!(0.0)
        } else {
            json!(0)
        };
        let meta = json!({
            "zarr_format": 3,
            "node_type": "array",
            "shape": self.shape,
            "data_type": self.dtype.name(),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": self.chunk}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill,
            "codecs": [{"name": "bytes", "configuration": {"endian": endian}}],
            "attributes": attributes,
        });
        serde_json::to_string_pretty(&meta).map_err(|e| bad(Path::new(METADATA), e.to_string()))
    }

    /// Reads `dir/zarr.json`.
    pub fn read(dir: &Path) -> Result<ArrayMeta> {
        let path = dir.join(METADATA);
        let text = read_limited(&path, MAX_METADATA_BYTES)?;
        let v: Value = serde_json::from_slice(&text).map_err(|e| bad(&path, e.to_string()))?;
        ArrayMeta::parse(&v).map_err(|why| bad(&path, why))
    }

    fn parse(v: &Value) -> std::result::Result<ArrayMeta, String> {
        if v["zarr_format"] != json!(3) {
            return Err(format!("not zarr v3 (zarr_format is {})", v["zarr_format"]));
        }
        if v["node_type"] != json!("array") {
            return Err(format!("not an array (node_type is {})", v["node_type"]));
        }
        let shape = dims(&v["shape"], "shape", 0)?;
        let name = v["data_type"].as_str().ok_or("data_type is not a string")?;
        let dtype = DType::from_name(name)
            .filter(|&d| storable(d))
            .ok_or_else(|| format!("data_type {name:?} is not one pw holds"))?;
        if v["chunk_grid"]["name"] != json!("regular") {
            return Err(format!(
                "chunk grid {} (pw reads regular grids)",
                v["chunk_grid"]["name"]
            ));
        }
        let chunk = dims(
            &v["chunk_grid"]["configuration"]["chunk_shape"],
            "chunk_shape",
            1,
        )?;
        if chunk.len() != shape.len() {
            return Err(format!(
                "chunk_shape {chunk:?} is not of the rank of shape {shape:?}"
            ));
        }
        let keys = &v["chunk_key_encoding"];
        let v2_keys = match keys["name"].as_str() {
            Some("default") => false,
            Some("v2") => true,
            _ => return Err(format!("chunk_key_encoding {keys}")),
        };
        let separator = match keys["configuration"]["separator"].as_str() {
            None if v2_keys => '.',
            None | Some("/") => '/',
            Some(".") => '.',
            Some(s) => return Err(format!("chunk key separator {s:?}")),
        };
        let codecs = codecs(&v["codecs"], &chunk)?;
        let fill = fill(dtype, &v["fill_value"])?;
        let meta = ArrayMeta {
            dtype,
            shape,
            chunk,
            codecs,
            fill,
            v2_keys,
            separator,
        };
        meta.chunk_bytes(&meta.chunk)?;
        Ok(meta)
    }

    /// Bytes of a decoded chunk of `shape`, within [`MAX_CHUNK_BYTES`].
    fn chunk_bytes(&self, shape: &[u64]) -> std::result::Result<u64, String> {
        shape
            .iter()
            .try_fold(self.dtype.size_in_bytes() as u64, |a, &d| a.checked_mul(d))
            .filter(|&b| b <= MAX_CHUNK_BYTES)
            .ok_or_else(|| format!("a chunk of {shape:?} is over {MAX_CHUNK_BYTES} bytes"))
    }

    /// The file of the chunk at grid index `index`, relative to the
    /// array's directory.
    pub fn chunk_key(&self, index: &[u64]) -> String {
        let s = self.separator.to_string();
        let parts: Vec<String> = index.iter().map(u64::to_string).collect();
        match (self.v2_keys, parts.is_empty()) {
            (true, true) => "0".into(),
            (true, false) => parts.join(&s),
            (false, true) => "c".into(),
            (false, false) => format!("c{s}{}", parts.join(&s)),
        }
    }

    /// The grid index of the chunk at `offsets`, when a chunk starts there.
    pub fn chunk_at(&self, offsets: &[i64]) -> Option<Vec<u64>> {
        (offsets.len() == self.chunk.len())
            .then(|| {
                offsets
                    .iter()
                    .zip(&self.chunk)
                    .map(|(&o, &c)| u64::try_from(o).ok().filter(|o| o % c == 0).map(|o| o / c))
                    .collect()
            })
            .flatten()
    }

    /// The file of the one chunk that box `region` is, and its size, when
    /// the file holds the box's bytes as they lie in host memory (raw, in
    /// the host's byte order: what pw writes); None otherwise (read such a
    /// box with [`ArrayMeta::read_region`]).
    pub fn raw_chunk_file(&self, dir: &Path, region: &Region) -> Option<(PathBuf, u64)> {
        let host_order = cfg!(target_endian = "big");
        let raw = matches!(&self.codecs,
            Codecs::Plain(p) if !p.zstd && !p.crc32c && p.big_endian == host_order);
        let whole = region.sizes.len() == self.chunk.len()
            && region
                .sizes
                .iter()
                .zip(&self.chunk)
                .all(|(&s, &c)| u64::try_from(s) == Ok(c));
        if !raw || !whole || region.elements() == 0 {
            return None;
        }
        let index = self.chunk_at(&region.offsets)?;
        let bytes = self.chunk_bytes(&self.chunk).ok()?;
        Some((dir.join(self.chunk_key(&index)), bytes))
    }

    /// The box `region` of the array in the directory `dir`, read from the
    /// chunks it meets.
    pub fn read_region(&self, dir: &Path, region: &Region) -> Result<HostArray> {
        let whole: Vec<i64> = self.shape.iter().map(|&d| d as i64).collect();
        if region.offsets.len() != whole.len() || !region.fits(&whole) {
            return Err(bad(
                dir,
                format!(
                    "the box at {:?} of {:?} is not in the array's shape {:?}",
                    region.offsets, region.sizes, self.shape
                ),
            ));
        }
        let want: Vec<u64> = sizes(region).iter().map(|&s| s as u64).collect();
        self.chunk_bytes(&want).map_err(|why| bad(dir, why))?;
        let chunk: Vec<i64> = self.chunk.iter().map(|&c| c as i64).collect();
        // A box that is one whole chunk (a shard read back onto the layout
        // that wrote it) is that chunk, with no copy.
        if region.sizes == chunk && region.elements() > 0 {
            if let Some(index) = self.chunk_at(&region.offsets) {
                if let Some(whole) = self.read_chunk(&dir.join(self.chunk_key(&index)))? {
                    return Ok(whole);
                }
            }
        }
        let mut out = HostArray::zeros(self.dtype, &sizes(region));
        if region.elements() == 0 {
            return Ok(out);
        }
        let first: Vec<i64> = region
            .offsets
            .iter()
            .zip(&chunk)
            .map(|(o, c)| o / c)
            .collect();
        let last: Vec<i64> = (0..chunk.len())
            .map(|d| (region.offsets[d] + region.sizes[d] - 1) / chunk[d])
            .collect();
        let mut index = first.clone();
        loop {
            let at = Region {
                offsets: index.iter().zip(&chunk).map(|(i, c)| i * c).collect(),
                sizes: chunk.clone(),
            };
            if let Some(meet) = at.intersect(region) {
                let grid: Vec<u64> = index.iter().map(|&i| i as u64).collect();
                let file = dir.join(self.chunk_key(&grid));
                let to = Region {
                    offsets: meet
                        .offsets
                        .iter()
                        .zip(&region.offsets)
                        .map(|(m, r)| m - r)
                        .collect(),
                    sizes: meet.sizes.clone(),
                };
                match self.read_chunk(&file)? {
                    Some(data) => {
                        let from = Region {
                            offsets: meet
                                .offsets
                                .iter()
                                .zip(&at.offsets)
                                .map(|(m, a)| m - a)
                                .collect(),
                            sizes: meet.sizes.clone(),
                        };
                        out.write_slice(&to, &data.slice(&from)?)?;
                    }
                    // The box starts as zeros: another fill value is
                    // written where a chunk is missing.
                    None if self.fill.iter().any(|&b| b != 0) => {
                        out.write_slice(&to, &self.filled(&sizes(&meet)))?;
                    }
                    None => {}
                }
            }
            // The next grid index, last dimension fastest.
            let mut d = index.len();
            loop {
                if d == 0 {
                    return Ok(out);
                }
                d -= 1;
                if index[d] < last[d] {
                    index[d] += 1;
                    break;
                }
                index[d] = first[d];
            }
        }
    }

    /// One whole chunk; None where its file is missing (a chunk of the
    /// fill value).
    fn read_chunk(&self, file: &Path) -> Result<Option<HostArray>> {
        let shape: Vec<usize> = self.chunk.iter().map(|&c| c as usize).collect();
        let encoded = match File::open(file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(bad(file, format!("cannot open: {e}"))),
            Ok(_) => read_limited(file, MAX_CHUNK_BYTES.saturating_add(1 << 20))?,
        };
        let chunk = match &self.codecs {
            Codecs::Plain(p) => self.decode(file, p, encoded, &shape),
            Codecs::Sharded {
                inner,
                codecs,
                index_at_end,
                index_crc32c,
            } => self.unshard(file, &encoded, inner, codecs, *index_at_end, *index_crc32c),
        };
        chunk.map(Some)
    }

    fn filled(&self, shape: &[usize]) -> HostArray {
        let n: usize = shape.iter().product();
        let data = self.fill.repeat(n);
        HostArray::new(self.dtype, shape, data)
            .unwrap_or_else(|_| HostArray::zeros(self.dtype, shape))
    }

    /// The inner chunks of a shard file, in place in its chunk.
    fn unshard(
        &self,
        file: &Path,
        encoded: &[u8],
        inner: &[u64],
        codecs: &Plain,
        index_at_end: bool,
        index_crc32c: bool,
    ) -> Result<HostArray> {
        let per: Vec<u64> = self.chunk.iter().zip(inner).map(|(c, i)| c / i).collect();
        let count: u64 = per.iter().product();
        let index_len = count
            .checked_mul(16)
            .and_then(|n| n.checked_add(if index_crc32c { 4 } else { 0 }))
            .filter(|&n| n <= encoded.len() as u64)
            .ok_or_else(|| {
                bad(
                    file,
                    format!(
                        "shorter ({} bytes) than its index of {count} chunks",
                        encoded.len()
                    ),
                )
            })? as usize;
        let index = if index_at_end {
            &encoded[encoded.len() - index_len..]
        } else {
            &encoded[..index_len]
        };
        let (entries, crc) = index.split_at(count as usize * 16);
        if index_crc32c && crc32c(entries).to_le_bytes() != crc {
            return Err(bad(file, "its index's CRC-32C does not match"));
        }
        let shape: Vec<usize> = self.chunk.iter().map(|&c| c as usize).collect();
        let mut out = HostArray::zeros(self.dtype, &shape);
        let inner_shape: Vec<usize> = inner.iter().map(|&c| c as usize).collect();
        for (k, entry) in entries.chunks_exact(16).enumerate() {
            let word = |i: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&entry[i..i + 8]);
                u64::from_le_bytes(b)
            };
            let (offset, len) = (word(0), word(8));
            let part = if offset == u64::MAX && len == u64::MAX {
                self.filled(&inner_shape)
            } else {
                let end = offset
                    .checked_add(len)
                    .filter(|&e| e <= encoded.len() as u64)
                    .ok_or_else(|| bad(file, format!("inner chunk {k} lies outside the file")))?;
                let bytes = encoded[offset as usize..end as usize].to_vec();
                self.decode(file, codecs, bytes, &inner_shape)?
            };
            // Inner chunk k of the grid `per`, row-major.
            let mut rest = k as u64;
            let mut offsets = vec![0i64; per.len()];
            for d in (0..per.len()).rev() {
                offsets[d] = ((rest % per[d]) * inner[d]) as i64;
                rest /= per[d];
            }
            let to = Region {
                offsets,
                sizes: inner.iter().map(|&i| i as i64).collect(),
            };
            out.write_slice(&to, &part)?;
        }
        Ok(out)
    }

    /// A chunk of `shape` from its encoded bytes.
    fn decode(
        &self,
        file: &Path,
        p: &Plain,
        mut bytes: Vec<u8>,
        shape: &[usize],
    ) -> Result<HostArray> {
        if p.crc32c {
            if bytes.len() < 4 {
                return Err(bad(file, "a chunk shorter than its CRC-32C"));
            }
            let (data, crc) = bytes.split_at(bytes.len() - 4);
            if crc32c(data).to_le_bytes() != crc {
                return Err(bad(file, "a chunk's CRC-32C does not match"));
            }
            bytes.truncate(bytes.len() - 4);
        }
        let want = shape.iter().product::<usize>() * self.dtype.size_in_bytes();
        if p.zstd {
            let mut decoder = ruzstd::decoding::StreamingDecoder::new(bytes.as_slice())
                .map_err(|e| bad(file, format!("not zstd: {e}")))?;
            // Grown as the bytes come, not allocated from the declared
            // size; one byte more than a chunk holds tells one too long.
            let mut out = Vec::new();
            Read::by_ref(&mut decoder)
                .take(want as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| bad(file, format!("cannot decompress: {e}")))?;
            bytes = out;
        }
        if bytes.len() != want {
            return Err(bad(
                file,
                format!(
                    "a chunk of {} bytes; a {}{shape:?} chunk has {want}",
                    bytes.len(),
                    self.dtype
                ),
            ));
        }
        if p.big_endian != cfg!(target_endian = "big") {
            let width = if self.dtype.is_complex() {
                self.dtype.size_in_bytes() / 2
            } else {
                self.dtype.size_in_bytes()
            };
            if width > 1 {
                bytes.chunks_exact_mut(width).for_each(<[u8]>::reverse);
            }
        }
        HostArray::new(self.dtype, shape, bytes)
    }
}

/// Dimensions at `v` (each at least `min`), at most [`MAX_RANK`].
fn dims(v: &Value, what: &str, min: u64) -> std::result::Result<Vec<u64>, String> {
    let list = v
        .as_array()
        .ok_or_else(|| format!("{what} is not a list"))?;
    if list.len() > MAX_RANK {
        return Err(format!(
            "{what} has {} dimensions (at most {MAX_RANK})",
            list.len()
        ));
    }
    list.iter()
        .map(|d| d.as_u64().filter(|&d| d >= min && d <= i64::MAX as u64))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| format!("{what} {v} is not a list of sizes of at least {min}"))
}

/// The codecs pw reads (see the module doc).
fn codecs(v: &Value, chunk: &[u64]) -> std::result::Result<Codecs, String> {
    let list = v.as_array().ok_or("codecs is not a list")?;
    match list.first().and_then(|c| c["name"].as_str()) {
        Some("sharding_indexed") if list.len() == 1 => {
            let config = &list[0]["configuration"];
            let inner = dims(&config["chunk_shape"], "the inner chunk_shape", 1)?;
            if inner.len() != chunk.len() || chunk.iter().zip(&inner).any(|(c, i)| c % i != 0) {
                return Err(format!(
                    "inner chunks {inner:?} do not divide chunks {chunk:?}"
                ));
            }
            let index = plain(&config["index_codecs"])?;
            if index.zstd || index.big_endian {
                return Err("an index other than little-endian bytes (and crc32c)".into());
            }
            let index_at_end = match config["index_location"].as_str() {
                None | Some("end") => true,
                Some("start") => false,
                Some(other) => return Err(format!("index_location {other:?}")),
            };
            Ok(Codecs::Sharded {
                inner,
                codecs: plain(&config["codecs"])?,
                index_at_end,
                index_crc32c: index.crc32c,
            })
        }
        _ => plain(v).map(Codecs::Plain),
    }
}

/// A `bytes` codec, then `zstd` and `crc32c` as they come.
fn plain(v: &Value) -> std::result::Result<Plain, String> {
    let list = v.as_array().ok_or("codecs is not a list")?;
    let mut p = Plain {
        big_endian: false,
        zstd: false,
        crc32c: false,
    };
    let mut seen_bytes = false;
    for (k, c) in list.iter().enumerate() {
        let name = c["name"].as_str().unwrap_or("");
        match name {
            "bytes" if k == 0 => {
                seen_bytes = true;
                p.big_endian = c["configuration"]["endian"] == json!("big");
            }
            "zstd" if seen_bytes && !p.zstd && !p.crc32c => p.zstd = true,
            "crc32c" if seen_bytes && !p.crc32c => p.crc32c = true,
            _ => {
                return Err(format!(
                    "codec {c} (pw reads bytes, zstd, crc32c and sharding_indexed)"
                ))
            }
        }
    }
    if !seen_bytes {
        return Err(format!("codecs {v} have no bytes codec"));
    }
    Ok(p)
}

/// One element of the fill value `v`, in host bytes.
fn fill(dtype: DType, v: &Value) -> std::result::Result<Vec<u8>, String> {
    let zero = vec![0u8; dtype.size_in_bytes()];
    let number = |v: &Value| -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) if s == "NaN" => Some(f64::NAN),
            Value::String(s) if s == "Infinity" => Some(f64::INFINITY),
            Value::String(s) if s == "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        }
    };
    let unsupported = || format!("fill_value {v} for {dtype}");
    if v == &json!(false)
        || v == &json!(0)
        || v == &json!(0.0)
        || v == &json!([0.0, 0.0])
        || v == &json!([0, 0])
    {
        return Ok(zero);
    }
    let bytes = match dtype {
        DType::Bool => vec![u8::from(v.as_bool().ok_or_else(unsupported)?)],
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => {
            let n = v.as_i64().ok_or_else(unsupported)?;
            n.to_le_bytes()[..dtype.size_in_bytes()].to_vec()
        }
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => {
            let n = v.as_u64().ok_or_else(unsupported)?;
            n.to_le_bytes()[..dtype.size_in_bytes()].to_vec()
        }
        DType::F64 => number(v).ok_or_else(unsupported)?.to_le_bytes().to_vec(),
        DType::F32 => (number(v).ok_or_else(unsupported)? as f32)
            .to_le_bytes()
            .to_vec(),
        DType::F16 => half::f16::from_f64(number(v).ok_or_else(unsupported)?)
            .to_le_bytes()
            .to_vec(),
        DType::BF16 => half::bf16::from_f64(number(v).ok_or_else(unsupported)?)
            .to_le_bytes()
            .to_vec(),
        _ => return Err(unsupported()),
    };
    if cfg!(target_endian = "big") {
        return Ok(bytes.into_iter().rev().collect());
    }
    Ok(bytes)
}

/// The whole of `path`, at most `limit` bytes (more is an error).
fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let file = File::open(path).map_err(|e| bad(path, format!("cannot open: {e}")))?;
    let len = file
        .metadata()
        .map_err(|e| bad(path, format!("cannot stat: {e}")))?
        .len();
    if len > limit {
        return Err(bad(path, format!("{len} bytes, more than {limit}")));
    }
    let mut data = Vec::with_capacity(len as usize);
    os::advise_huge_pages(&mut data);
    file.take(limit + 1)
        .read_to_end(&mut data)
        .map_err(|e| bad(path, format!("cannot read: {e}")))?;
    if data.len() as u64 > limit {
        return Err(bad(path, format!("more than {limit} bytes")));
    }
    Ok(data)
}

/// Writes `bytes` to `path` (its directories made); when `durable`, the
/// file and its directory are synced before this returns.
pub fn write_file(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| bad(dir, format!("cannot make the directory: {e}")))?;
    let mut file = File::create(path).map_err(|e| bad(path, format!("cannot create: {e}")))?;
    os::reserve(&file, bytes.len() as u64);
    file.write_all(bytes)
        .and_then(|()| if durable { file.sync_all() } else { Ok(()) })
        .map_err(|e| bad(path, format!("cannot write: {e}")))?;
    if durable {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Orbax's tree metadata (`_METADATA`) for arrays named `arrays`, each
/// with its chunk shape (Orbax's `write_shape`): a tree of dicts whose
/// leaf at key path `a`, `b` is the array named `a.b`. None when the names
/// make no tree (an empty key, or a name that is both a leaf and a dict).
pub fn orbax_tree<'a>(arrays: impl IntoIterator<Item = (&'a str, &'a [u64])>) -> Option<String> {
    let mut tree = serde_json::Map::new();
    let mut paths: Vec<Vec<&str>> = Vec::new();
    for (name, chunk) in arrays {
        let keys: Vec<&str> = name.split('.').collect();
        if keys.iter().any(|k| k.is_empty()) {
            return None;
        }
        // Python's repr of the tuple of keys: the names hold no quotes.
        let quoted: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
        let repr = match quoted.len() {
            1 => format!("({},)", quoted[0]),
            _ => format!("({})", quoted.join(", ")),
        };
        let key_metadata: Vec<Value> = keys
            .iter()
            .map(|k| json!({"key": k, "key_type": 2}))
            .collect();
        tree.insert(
            repr,
            json!({
                "key_metadata": key_metadata,
                "value_metadata": {
                    "value_type": "jax.Array",
                    "skip_deserialize": false,
                    "write_shape": chunk,
                },
            }),
        );
        paths.push(keys);
    }
    let prefix = |a: &[&str], b: &[&str]| a.len() < b.len() && b.starts_with(a);
    if paths.iter().any(|a| paths.iter().any(|b| prefix(a, b))) {
        return None;
    }
    let metadata = json!({
        "tree_metadata": tree,
        "use_ocdbt": false,
        "use_zarr3": true,
        "store_array_data_equal_to_fill_value": true,
        "custom_metadata": null,
    });
    serde_json::to_string(&metadata).ok()
}

/// Syncs directory `dir` (its entries made durable).
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| bad(dir, format!("cannot sync the directory: {e}")))
}

/// The directory of array `name` in checkpoint `dir`.
pub fn array_dir(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// Whether `name` may name an array in a checkpoint (one path component
/// of letters, digits, `_`, `-` and `.`, not starting with `.`).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// CRC-32C (Castagnoli), as zarr's `crc32c` codec computes it.
pub fn crc32c(data: &[u8]) -> u32 {
    const POLY: u32 = 0x82F6_3B78;
    let table: [u32; 256] = std::array::from_fn(|i| {
        (0..8).fold(
            i as u32,
            |c, _| if c & 1 != 0 { POLY ^ (c >> 1) } else { c >> 1 },
        )
    });
    !data.iter().fold(!0u32, |c, &b| {
        table[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orbax_trees_follow_the_names() {
        let t = orbax_tree([("params.w", &[4u64, 4][..]), ("step", &[][..])]).unwrap();
        let v: Value = serde_json::from_str(&t).unwrap();
        let leaf = &v["tree_metadata"]["('params', 'w')"];
        assert_eq!(leaf["key_metadata"][1]["key"], "w");
        assert_eq!(leaf["value_metadata"]["write_shape"], json!([4, 4]));
        assert!(v["tree_metadata"]["('step',)"].is_object());
        assert_eq!(orbax_tree([("a", &[1u64][..]), ("a.b", &[1][..])]), None);
        assert_eq!(orbax_tree([("a.", &[1u64][..])]), None);
    }

    #[test]
    fn crc32c_matches_the_standard_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn chunk_keys_follow_the_encoding() {
        let mut m = ArrayMeta::raw(DType::F32, &[4, 6], &[2, 3]);
        assert_eq!(m.chunk_key(&[1, 0]), "c/1/0");
        m.v2_keys = true;
        m.separator = '.';
        assert_eq!(m.chunk_key(&[1, 0]), "1.0");
        let scalar = ArrayMeta::raw(DType::F32, &[], &[]);
        assert_eq!(scalar.chunk_key(&[]), "c");
    }
}
