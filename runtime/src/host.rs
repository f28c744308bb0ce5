//! Arrays in host memory.

use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::sharding::IndexDomain;

/// A dense, row-major array in host memory, in native byte order: what goes
/// into and comes out of an [`Array`](crate::Array) and a `.npy` file.
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
            return Err(Error::invalid(format!(
                "a {dtype}{shape:?} array has {expected} bytes, got {}",
                data.len()
            )));
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
            return Err(Error::invalid(format!(
                "shape {shape:?} has {n} elements, got {} values",
                values.len()
            )));
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
                context: "HostArray::to_vec".into(),
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

    /// The same bytes seen as another dtype and shape of equal byte size.
    pub fn reinterpret(self, dtype: DType, shape: &[usize]) -> Result<HostArray> {
        HostArray::new(dtype, shape, self.data)
    }

    /// A copy of the box `domain`.
    pub fn slice(&self, domain: &IndexDomain) -> Result<HostArray> {
        self.check_domain(domain)?;
        let mut out = HostArray::zeros(self.dtype, &domain.shape);
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
    pub fn write_slice(&mut self, domain: &IndexDomain, part: &HostArray) -> Result<()> {
        self.check_domain(domain)?;
        if part.dtype != self.dtype {
            return Err(Error::DTypeMismatch {
                context: "HostArray::write_slice".into(),
                expected: self.dtype,
                actual: part.dtype,
            });
        }
        if part.shape != domain.shape {
            return Err(Error::ShapeMismatch {
                context: "HostArray::write_slice".into(),
                expected: domain.shape.clone(),
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

    fn check_domain(&self, domain: &IndexDomain) -> Result<()> {
        if domain.fits(&self.shape) {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "domain {domain:?} does not fit shape {:?}",
                self.shape
            )))
        }
    }
}

/// Calls `f(offset in the whole array, offset in the box, length)` (bytes)
/// for every contiguous row of the box `domain` of an array of `shape`.
fn for_each_row(
    shape: &[usize],
    domain: &IndexDomain,
    elem: usize,
    mut f: impl FnMut(usize, usize, usize),
) {
    let rank = shape.len();
    if domain.shape.contains(&0) {
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
    let row = domain.shape[rank - 1];
    let mut index = vec![0usize; rank - 1];
    let mut local = 0;
    loop {
        let whole: usize = (0..rank)
            .map(|d| (domain.origin[d] + index.get(d).copied().unwrap_or(0)) * strides[d])
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
            if index[d] < domain.shape[d] {
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
        let dom = IndexDomain {
            origin: vec![1, 1, 2],
            shape: vec![1, 2, 2],
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
