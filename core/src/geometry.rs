//! Geometry of sharded arrays: which box of a logical array each device of a
//! mesh holds.
//!
//! A [`Sharding`] lists, per array dimension, the mesh axes that dimension is
//! split over (major to minor, as in Shardy); dimensions with no axes are
//! replicated. Mesh positions are numbered row-major over the mesh axes, and
//! a mesh position maps to a device id through the mesh's device list.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Per-dimension mesh axes (major to minor) an array is split over.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Sharding {
    pub dims: Vec<Vec<String>>,
}

impl Sharding {
    /// The sharding that splits nothing: every device holds the whole array.
    pub fn replicated(rank: usize) -> Self {
        Self {
            dims: vec![Vec::new(); rank],
        }
    }
}

impl fmt::Display for Sharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, axes) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str("{")?;
            for (j, axis) in axes.iter().enumerate() {
                if j > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{axis:?}")?;
            }
            f.write_str("}")?;
        }
        f.write_str("]")
    }
}

/// Named mesh axes with their sizes, major to minor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct MeshShape {
    pub axes: Vec<(String, i64)>,
}

impl MeshShape {
    pub fn new(axes: Vec<(String, i64)>) -> Self {
        Self { axes }
    }

    /// Number of positions (devices) in the mesh.
    pub fn size(&self) -> i64 {
        self.axes.iter().map(|(_, s)| *s).product()
    }

    pub fn axis_size(&self, name: &str) -> Option<i64> {
        self.axes.iter().find(|(n, _)| n == name).map(|(_, s)| *s)
    }

    fn axis_index(&self, name: &str) -> Option<usize> {
        self.axes.iter().position(|(n, _)| n == name)
    }

    /// The coordinate of `position` along each axis (row-major numbering).
    pub fn coords(&self, position: i64) -> Vec<i64> {
        let mut rest = position;
        let mut coords = vec![0; self.axes.len()];
        for (i, (_, size)) in self.axes.iter().enumerate().rev() {
            coords[i] = rest % size;
            rest /= size;
        }
        coords
    }
}

impl fmt::Display for MeshShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, (name, size)) in self.axes.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name:?}={size}")?;
        }
        f.write_str("]")
    }
}

/// Why a sharding does not fit an array on a mesh.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("sharding has {sharding} dimensions but the array has rank {rank}")]
    RankMismatch { sharding: usize, rank: usize },
    #[error("axis \"{axis}\" is not an axis of mesh {mesh}")]
    UnknownAxis { axis: String, mesh: MeshShape },
    #[error("axis \"{axis}\" shards more than one dimension")]
    AxisReused { axis: String },
    #[error("dimension {dim} of size {size} is not divisible by {parts} (axes {axes:?})")]
    NotDivisible {
        dim: usize,
        size: i64,
        parts: i64,
        axes: Vec<String>,
    },
}

/// The boxes of an array that the positions of a mesh hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Shape of every shard.
    pub shard_shape: Vec<i64>,
    /// For each mesh position, the offset of its shard in the global array.
    pub offsets: Vec<Vec<i64>>,
}

impl Layout {
    /// Lays `shape` out on `mesh` as `sharding` says.
    pub fn new(shape: &[i64], sharding: &Sharding, mesh: &MeshShape) -> Result<Self, LayoutError> {
        if sharding.dims.len() != shape.len() {
            return Err(LayoutError::RankMismatch {
                sharding: sharding.dims.len(),
                rank: shape.len(),
            });
        }
        let mut seen = Vec::new();
        let mut dim_axes = Vec::with_capacity(shape.len());
        let mut shard_shape = Vec::with_capacity(shape.len());
        for (dim, (axes, &size)) in sharding.dims.iter().zip(shape).enumerate() {
            let mut indices = Vec::with_capacity(axes.len());
            let mut parts = 1;
            for axis in axes {
                let index = mesh
                    .axis_index(axis)
                    .ok_or_else(|| LayoutError::UnknownAxis {
                        axis: axis.clone(),
                        mesh: mesh.clone(),
                    })?;
                if seen.contains(&index) {
                    return Err(LayoutError::AxisReused { axis: axis.clone() });
                }
                seen.push(index);
                parts *= mesh.axes[index].1;
                indices.push(index);
            }
            if parts == 0 || size % parts != 0 {
                return Err(LayoutError::NotDivisible {
                    dim,
                    size,
                    parts,
                    axes: axes.clone(),
                });
            }
            shard_shape.push(size / parts);
            dim_axes.push(indices);
        }
        let offsets = (0..mesh.size())
            .map(|position| {
                let coords = mesh.coords(position);
                dim_axes
                    .iter()
                    .zip(&shard_shape)
                    .map(|(axes, extent)| {
                        let tile = axes
                            .iter()
                            .fold(0, |acc, &a| acc * mesh.axes[a].1 + coords[a]);
                        tile * extent
                    })
                    .collect()
            })
            .collect();
        Ok(Self {
            shard_shape,
            offsets,
        })
    }

    /// Elements in one shard.
    pub fn shard_elements(&self) -> i64 {
        self.shard_shape.iter().product()
    }
}

/// An axis-aligned box of array indices.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Region {
    pub offsets: Vec<i64>,
    pub sizes: Vec<i64>,
}

impl Region {
    /// The whole of an array of `shape`.
    pub fn full(shape: &[i64]) -> Region {
        Region {
            offsets: vec![0; shape.len()],
            sizes: shape.to_vec(),
        }
    }

    pub fn elements(&self) -> i64 {
        self.sizes.iter().product()
    }

    /// Whether the box lies inside an array of `shape` (same rank, no
    /// negative offset or size).
    pub fn fits(&self, shape: &[i64]) -> bool {
        self.offsets.len() == shape.len()
            && self.sizes.len() == shape.len()
            && self
                .offsets
                .iter()
                .zip(&self.sizes)
                .zip(shape)
                .all(|((&o, &s), &d)| o >= 0 && s >= 0 && o.checked_add(s).is_some_and(|e| e <= d))
    }

    /// Whether the two boxes share an element.
    pub fn overlaps(&self, other: &Region) -> bool {
        self.intersect(other).is_some()
    }

    /// The overlap of two boxes, if any.
    pub fn intersect(&self, other: &Region) -> Option<Region> {
        let mut offsets = Vec::with_capacity(self.offsets.len());
        let mut sizes = Vec::with_capacity(self.offsets.len());
        for d in 0..self.offsets.len() {
            let lo = self.offsets[d].max(other.offsets[d]);
            let hi = (self.offsets[d] + self.sizes[d]).min(other.offsets[d] + other.sizes[d]);
            if hi <= lo {
                return None;
            }
            offsets.push(lo);
            sizes.push(hi - lo);
        }
        Some(Region { offsets, sizes })
    }
}
