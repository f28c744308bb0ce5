//! Arrays in and out of NumPy `.npy` files (through the `npyz` crate).
//!
//! Supported element types: `bool` (`|b1`), signed and unsigned integers of
//! 1, 2, 4 and 8 bytes, `float16`, `float32`, `float64` (either byte order;
//! C or Fortran order on reading), and `bfloat16`. NumPy has no bfloat16:
//! `np.save` writes an `ml_dtypes.bfloat16` array (what JAX users have) as the
//! raw 2-byte type `<V2`, so a 2-byte void is read as bfloat16 and bfloat16 is
//! written as `<V2`; load it in Python with `np.load(p).view(ml_dtypes.bfloat16)`.
//! Arrays are always written in C order and native byte order.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use half::{bf16, f16};
use npyz::{TypeChar, TypeStr, WriterBuilder};

use crate::array::Array;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::host::HostArray;
use crate::pjrt::Client;
use crate::sharding::Sharding;

/// Reads a `.npy` file.
pub fn read(path: impl AsRef<Path>) -> Result<HostArray> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| npy_error(path, e))?;
    read_from(BufReader::new(file), &path.display().to_string())
}

/// Writes a `.npy` file.
pub fn write(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    let path = path.as_ref();
    let file = File::create(path).map_err(|e| npy_error(path, e))?;
    let mut out = BufWriter::new(file);
    write_to(&mut out, array, &path.display().to_string())?;
    out.flush().map_err(|e| npy_error(path, e))
}

/// Reads a `.npy` file into an array split by `sharding`.
pub fn load_array(client: &Client, path: impl AsRef<Path>, sharding: &Sharding) -> Result<Array> {
    Array::from_host(client, &read(path)?, sharding)
}

/// Writes an array (reassembled on the host) to a `.npy` file.
pub fn save_array(path: impl AsRef<Path>, array: &Array) -> Result<()> {
    write(path, &array.to_host()?)
}

fn npy_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Npy {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Reads `.npy` data from any reader; `name` labels errors.
pub fn read_from(reader: impl Read, name: &str) -> Result<HostArray> {
    let err = |reason: String| Error::Npy {
        path: name.to_string(),
        reason,
    };
    let npy = npyz::NpyFile::new(reader).map_err(|e| err(e.to_string()))?;
    let type_str = match npy.dtype() {
        npyz::DType::Plain(ts) => ts,
        other => {
            return Err(err(format!(
                "structured or array dtype {} is not supported",
                other.descr()
            )))
        }
    };
    let dtype = dtype_of(&type_str)
        .ok_or_else(|| err(format!("element type {type_str} is not supported")))?;
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let fortran = npy.order() == npyz::Order::Fortran;
    let io = |e: std::io::Error| err(e.to_string());
    let mut data = Vec::with_capacity(shape.iter().product::<usize>() * dtype.size_in_bytes());
    match dtype {
        DType::Bool => put(&mut data, npy.into_vec::<bool>().map_err(io)?),
        DType::I8 => put(&mut data, npy.into_vec::<i8>().map_err(io)?),
        DType::I16 => put(&mut data, npy.into_vec::<i16>().map_err(io)?),
        DType::I32 => put(&mut data, npy.into_vec::<i32>().map_err(io)?),
        DType::I64 => put(&mut data, npy.into_vec::<i64>().map_err(io)?),
        DType::U8 => put(&mut data, npy.into_vec::<u8>().map_err(io)?),
        DType::U16 => put(&mut data, npy.into_vec::<u16>().map_err(io)?),
        DType::U32 => put(&mut data, npy.into_vec::<u32>().map_err(io)?),
        DType::U64 => put(&mut data, npy.into_vec::<u64>().map_err(io)?),
        DType::F16 => put(&mut data, npy.into_vec::<f16>().map_err(io)?),
        DType::F32 => put(&mut data, npy.into_vec::<f32>().map_err(io)?),
        DType::F64 => put(&mut data, npy.into_vec::<f64>().map_err(io)?),
        DType::BF16 => {
            // ml_dtypes writes the raw little-endian bits of each value.
            let raw = npy.into_vec::<npyz::FixedSizeBytes<2>>().map_err(io)?;
            put(
                &mut data,
                raw.into_iter()
                    .map(|b| bf16::from_bits(u16::from_le_bytes(b.0)))
                    .collect(),
            );
        }
    }
    if fortran && shape.len() > 1 {
        data = fortran_to_c(&data, &shape, dtype.size_in_bytes());
    }
    HostArray::new(dtype, &shape, data).map_err(|e| err(e.to_string()))
}

/// Writes `.npy` data to any writer; `name` labels errors.
pub fn write_to(writer: impl Write, array: &HostArray, name: &str) -> Result<()> {
    let err = |e: std::io::Error| Error::Npy {
        path: name.to_string(),
        reason: e.to_string(),
    };
    let shape: Vec<u64> = array.shape().iter().map(|&d| d as u64).collect();
    macro_rules! write_typed {
        ($ty:ty, $values:expr, $descr:expr) => {{
            let type_str: TypeStr = $descr.parse().map_err(|e| Error::Npy {
                path: name.to_string(),
                reason: format!("bad type string {}: {e}", $descr),
            })?;
            let mut w = npyz::WriteOptions::<$ty>::new()
                .dtype(npyz::DType::Plain(type_str))
                .shape(&shape)
                .writer(writer)
                .begin_nd()
                .map_err(err)?;
            w.extend($values).map_err(err)?;
            w.finish().map_err(err)
        }};
    }
    let order = if cfg!(target_endian = "little") {
        "<"
    } else {
        ">"
    };
    match array.dtype() {
        DType::Bool => write_typed!(bool, array.to_vec::<bool>()?, "|b1"),
        DType::I8 => write_typed!(i8, array.to_vec::<i8>()?, "|i1"),
        DType::U8 => write_typed!(u8, array.to_vec::<u8>()?, "|u1"),
        DType::I16 => write_typed!(i16, array.to_vec::<i16>()?, format!("{order}i2")),
        DType::I32 => write_typed!(i32, array.to_vec::<i32>()?, format!("{order}i4")),
        DType::I64 => write_typed!(i64, array.to_vec::<i64>()?, format!("{order}i8")),
        DType::U16 => write_typed!(u16, array.to_vec::<u16>()?, format!("{order}u2")),
        DType::U32 => write_typed!(u32, array.to_vec::<u32>()?, format!("{order}u4")),
        DType::U64 => write_typed!(u64, array.to_vec::<u64>()?, format!("{order}u8")),
        DType::F16 => write_typed!(f16, array.to_vec::<f16>()?, format!("{order}f2")),
        DType::F32 => write_typed!(f32, array.to_vec::<f32>()?, format!("{order}f4")),
        DType::F64 => write_typed!(f64, array.to_vec::<f64>()?, format!("{order}f8")),
        DType::BF16 => {
            let raw: Vec<npyz::FixedSizeBytes<2>> = array
                .to_vec::<bf16>()?
                .into_iter()
                .map(|v| npyz::FixedSizeBytes(v.to_bits().to_le_bytes()))
                .collect();
            write_typed!(npyz::FixedSizeBytes<2>, raw, "<V2")
        }
    }
}

fn put<T: Element>(data: &mut Vec<u8>, values: Vec<T>) {
    for v in values {
        v.write_bytes(data);
    }
}

/// The [`DType`] of a NumPy type string, if supported.
fn dtype_of(ts: &TypeStr) -> Option<DType> {
    let size = ts.size_field();
    Some(match (ts.type_char(), size) {
        (TypeChar::Bool, 1) => DType::Bool,
        (TypeChar::Int, 1) => DType::I8,
        (TypeChar::Int, 2) => DType::I16,
        (TypeChar::Int, 4) => DType::I32,
        (TypeChar::Int, 8) => DType::I64,
        (TypeChar::Uint, 1) => DType::U8,
        (TypeChar::Uint, 2) => DType::U16,
        (TypeChar::Uint, 4) => DType::U32,
        (TypeChar::Uint, 8) => DType::U64,
        (TypeChar::Float, 2) => DType::F16,
        (TypeChar::Float, 4) => DType::F32,
        (TypeChar::Float, 8) => DType::F64,
        (TypeChar::RawData, 2) => DType::BF16,
        _ => return None,
    })
}

/// Reorders column-major element bytes into row-major order.
fn fortran_to_c(data: &[u8], shape: &[usize], elem: usize) -> Vec<u8> {
    let n: usize = shape.iter().product();
    let mut out = vec![0u8; data.len()];
    let mut index = vec![0usize; shape.len()];
    for c_pos in 0..n {
        // Column-major position of the current row-major index.
        let mut f_pos = 0;
        let mut stride = 1;
        for (i, &extent) in index.iter().zip(shape) {
            f_pos += i * stride;
            stride *= extent;
        }
        out[c_pos * elem..(c_pos + 1) * elem]
            .copy_from_slice(&data[f_pos * elem..(f_pos + 1) * elem]);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}
