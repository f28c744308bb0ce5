//! Arrays in host memory.

use crate::element::Element;
use crate::error::{Error, Result};
use pw_core::{geometry::Region, DType};
use pw_pjrt::{Buffer, Client, Device};

/// Array dimensions as the shard geometry counts them.
pub fn dims(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

/// The shape of a box (checked boxes have no negative size).
pub fn sizes(region: &Region) -> Vec<usize> {
    region.sizes.iter().map(|&s| s.max(0) as usize).collect()
}

/// A dense, row-major array in host memory, in native byte order: what a
/// client uploads and fetches, what `.npy` files hold, and what the
/// executor puts on devices and takes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostArray {
    dtype: DType,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl HostArray {
    /// Wraps raw bytes; their length must match `dtype` and `shape`.
    pub fn new(dtype: DType, shape: &[usize], data: Vec<u8>) -> Result<HostArray> {
        let expected = shape.iter().product::<usize>() * dtype.size_in_bytes();
        if data.len() != expected {
            return Err(Error::HostBytes {
                dtype,
                shape: shape.to_vec(),
                needed: expected,
                given: data.len(),
            });
        }
        Ok(HostArray {
            dtype,
            shape: shape.to_vec(),
            data,
        })
    }

    /// All-zero bytes (`false`, `0`, `+0.0`).
    pub fn zeros(dtype: DType, shape: &[usize]) -> HostArray {
        let len = shape.iter().product::<usize>() * dtype.size_in_bytes();
        HostArray {
            dtype,
            shape: shape.to_vec(),
            data: vec![0; len],
        }
    }

    /// From typed values in row-major order.
    pub fn from_slice<T: Element>(shape: &[usize], values: &[T]) -> Result<HostArray> {
        let n: usize = shape.iter().product();
        if values.len() != n {
            return Err(Error::HostElements {
                shape: shape.to_vec(),
                needed: n,
                given: values.len(),
            });
        }
        let mut data = Vec::with_capacity(n * T::DTYPE.size_in_bytes());
        for v in values {
            v.write_bytes(&mut data);
        }
        Ok(HostArray {
            dtype: T::DTYPE,
            shape: shape.to_vec(),
            data,
        })
    }

    /// The values, typed; `T` must be the array's element type.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype {
            return Err(Error::DTypeMismatch {
                context: "HostArray::to_vec",
                expected: self.dtype,
                actual: T::DTYPE,
            });
        }
        Ok(self
            .data
            .chunks_exact(self.dtype.size_in_bytes())
            .map(T::read_bytes)
            .collect())
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn num_elements(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.data
    }

    /// A buffer on `device` holding a copy of this array.
    pub fn to_device(&self, client: &Client, device: &Device) -> Result<Buffer> {
        Ok(client.buffer_from_host(&self.data, self.dtype, &self.shape, device)?)
    }

    /// The same bytes seen as another dtype and shape of equal byte size.
    pub fn reinterpret(self, dtype: DType, shape: &[usize]) -> Result<HostArray> {
        HostArray::new(dtype, shape, self.data)
    }

    /// A copy of the box `domain`.
    pub fn slice(&self, domain: &Region) -> Result<HostArray> {
        self.check_domain(domain)?;
        let mut out = HostArray::zeros(self.dtype, &sizes(domain));
        for_each_row(
            &self.shape,
            domain,
            self.dtype.size_in_bytes(),
            |src, dst, len| {
                out.data[dst..dst + len].copy_from_slice(&self.data[src..src + len]);
            },
        );
        Ok(out)
    }

    /// Writes `part` into the box `domain` (whose shape must be `part`'s).
    pub fn write_slice(&mut self, domain: &Region, part: &HostArray) -> Result<()> {
        self.check_domain(domain)?;
        if part.dtype != self.dtype {
            return Err(Error::DTypeMismatch {
                context: "HostArray::write_slice",
                expected: self.dtype,
                actual: part.dtype,
            });
        }
        if part.shape != sizes(domain) {
            return Err(Error::ShapeMismatch {
                context: "HostArray::write_slice",
                expected: sizes(domain),
                actual: part.shape.clone(),
            });
        }
        let data = &mut self.data;
        for_each_row(
            &self.shape,
            domain,
            self.dtype.size_in_bytes(),
            |whole, local, len| {
                data[whole..whole + len].copy_from_slice(&part.data[local..local + len]);
            },
        );
        Ok(())
    }

    fn check_domain(&self, domain: &Region) -> Result<()> {
        if domain.fits(&dims(&self.shape)) {
            Ok(())
        } else {
            Err(Error::Outside {
                region: domain.clone(),
                shape: self.shape.clone(),
            })
        }
    }
}

/// The shard of each position of an array laid out as `regions` (one box
/// per position): one host slice per distinct box, shared by the positions
/// that hold it.
pub fn split(host: &HostArray, regions: &[Region]) -> Result<Vec<std::sync::Arc<HostArray>>> {
    let mut cut: Vec<(&Region, std::sync::Arc<HostArray>)> = Vec::new();
    let mut shards = Vec::with_capacity(regions.len());
    for region in regions {
        let shard = match cut.iter().find(|(r, _)| *r == region) {
            Some((_, shard)) => shard.clone(),
            None => {
                let shard = std::sync::Arc::new(host.slice(region)?);
                cut.push((region, shard.clone()));
                shard
            }
        };
        shards.push(shard);
    }
    Ok(shards)
}

/// Reassembles an array of `dtype` and `shape` laid out as `regions` (one
/// box per position) from one replica of each distinct box:
/// `bytes_of(position)` returns the shard's bytes, or `None` when that
/// position holds nothing (another replica is tried).
pub fn assemble(
    dtype: DType,
    shape: &[usize],
    regions: &[Region],
    mut bytes_of: impl FnMut(usize) -> Result<Option<Vec<u8>>>,
) -> Result<HostArray> {
    let mut out = HostArray::zeros(dtype, shape);
    let mut done: Vec<&Region> = Vec::new();
    for (position, region) in regions.iter().enumerate() {
        if done.contains(&region) {
            continue;
        }
        if let Some(bytes) = bytes_of(position)? {
            out.write_slice(region, &HostArray::new(dtype, &sizes(region), bytes)?)?;
            done.push(region);
        }
    }
    if let Some(missing) = regions.iter().find(|r| !done.contains(r)) {
        return Err(Error::Missing {
            offsets: missing.offsets.clone(),
            dtype,
            shape: shape.to_vec(),
        });
    }
    Ok(out)
}

/// Calls `f(offset in the whole array, offset in the box, length)` (bytes)
/// for every contiguous row of the box `domain` (which fits) of an array of
/// `shape`.
fn for_each_row(
    shape: &[usize],
    domain: &Region,
    elem: usize,
    mut f: impl FnMut(usize, usize, usize),
) {
    let rank = shape.len();
    let origin: Vec<usize> = domain.offsets.iter().map(|&o| o.max(0) as usize).collect();
    let extent = sizes(domain);
    if extent.contains(&0) {
        return;
    }
    if rank == 0 {
        f(0, 0, elem);
        return;
    }
    // Row-major strides of the whole array, in elements.
    let mut strides = vec![1; rank];
    for d in (0..rank - 1).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let row = extent[rank - 1];
    let mut index = vec![0usize; rank - 1];
    let mut local = 0;
    loop {
        let whole: usize = (0..rank)
            .map(|d| (origin[d] + index.get(d).copied().unwrap_or(0)) * strides[d])
            .sum();
        f(whole * elem, local * elem, row * elem);
        local += row;
        // Odometer over the outer dimensions.
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < extent[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_and_write_back() {
        let values: Vec<i32> = (0..24).collect();
        let a = HostArray::from_slice(&[2, 3, 4], &values).unwrap();
        let dom = Region {
            offsets: vec![1, 1, 2],
            sizes: vec![1, 2, 2],
        };
        let s = a.slice(&dom).unwrap();
        assert_eq!(s.to_vec::<i32>().unwrap(), vec![18, 19, 22, 23]);
        let mut b = HostArray::zeros(DType::I32, &[2, 3, 4]);
        b.write_slice(&dom, &s).unwrap();
        assert_eq!(b.to_vec::<i32>().unwrap()[18], 18);
        assert_eq!(b.to_vec::<i32>().unwrap()[23], 23);
        assert_eq!(b.to_vec::<i32>().unwrap()[17], 0);
    }
}
