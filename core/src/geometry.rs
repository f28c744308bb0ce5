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

/// The most devices one mesh may have. Meshes come from untrusted files:
/// a mesh's size bounds what is computed per mesh position, so it is
/// checked against this before anything is.
pub const MAX_MESH_DEVICES: i64 = 1 << 16;

/// Named mesh axes with their sizes, major to minor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct MeshShape {
    pub axes: Vec<(String, i64)>,
}

impl MeshShape {
    pub fn new(axes: Vec<(String, i64)>) -> Self {
        Self { axes }
    }

    /// Number of positions (devices) in the mesh; `None` if an axis size is
    /// below 1 or the product overflows.
    pub fn size(&self) -> Option<i64> {
        self.axes.iter().try_fold(1i64, |acc, (_, s)| {
            (*s >= 1).then(|| acc.checked_mul(*s))?
        })
    }

    /// The size, checked against [`MAX_MESH_DEVICES`].
    pub fn checked_size(&self) -> Result<i64, LayoutError> {
        self.size()
            .filter(|&n| n <= MAX_MESH_DEVICES)
            .ok_or_else(|| LayoutError::BadMesh { mesh: self.clone() })
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
            let size = (*size).max(1);
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
    #[error("mesh {mesh} has an axis below size 1 or more than {MAX_MESH_DEVICES} devices")]
    BadMesh { mesh: MeshShape },
    #[error("dimension {dim} has negative size {size}")]
    NegativeDimension { dim: usize, size: i64 },
}

/// How a sharding cuts an array on a mesh, without materializing the mesh
/// positions: the shard shape, and for each dimension the mesh axes (major
/// to minor) that split it. [`Tiling::offset`] gives any position's box.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tiling {
    /// Shape of every shard.
    pub shard_shape: Vec<i64>,
    /// The mesh's axis sizes.
    mesh_axes: Vec<i64>,
    /// Per array dimension, the indices of the mesh axes that split it.
    dim_axes: Vec<Vec<usize>>,
    /// The mesh's size (at most [`MAX_MESH_DEVICES`]).
    positions: i64,
}

impl Tiling {
    /// How `shape` is cut on `mesh` as `sharding` says.
    pub fn new(shape: &[i64], sharding: &Sharding, mesh: &MeshShape) -> Result<Self, LayoutError> {
        let positions = mesh.checked_size()?;
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
            if size < 0 {
                return Err(LayoutError::NegativeDimension { dim, size });
            }
            let mut indices = Vec::with_capacity(axes.len());
            // At most the mesh's size: no overflow.
            let mut parts = 1i64;
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
            if size % parts != 0 {
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
        Ok(Self {
            shard_shape,
            mesh_axes: mesh.axes.iter().map(|(_, s)| *s).collect(),
            dim_axes,
            positions,
        })
    }

    /// Number of mesh positions.
    pub fn positions(&self) -> i64 {
        self.positions
    }

    /// The offset in the global array of the shard mesh position
    /// `position` holds.
    pub fn offset(&self, position: i64) -> Vec<i64> {
        let mut rest = position;
        let mut coords = vec![0; self.mesh_axes.len()];
        for (i, size) in self.mesh_axes.iter().enumerate().rev() {
            coords[i] = rest % size;
            rest /= size;
        }
        self.dim_axes
            .iter()
            .zip(&self.shard_shape)
            .map(|(axes, extent)| {
                // tile < parts and extent = size / parts: no overflow.
                let tile = axes
                    .iter()
                    .fold(0, |acc, &a| acc * self.mesh_axes[a] + coords[a]);
                tile * extent
            })
            .collect()
    }

    /// The box mesh position `position` holds.
    pub fn region(&self, position: i64) -> Region {
        Region {
            offsets: self.offset(position),
            sizes: self.shard_shape.clone(),
        }
    }

    /// Elements in one shard (no larger than the array, whose element
    /// count the caller has checked).
    pub fn shard_elements(&self) -> Option<i64> {
        self.shard_shape
            .iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(d))
    }

    /// Every position's offset, materialized.
    pub fn layout(&self) -> Layout {
        Layout {
            shard_shape: self.shard_shape.clone(),
            offsets: (0..self.positions).map(|p| self.offset(p)).collect(),
        }
    }
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
    /// Lays `shape` out on `mesh` as `sharding` says (see [`Tiling`]).
    pub fn new(shape: &[i64], sharding: &Sharding, mesh: &MeshShape) -> Result<Self, LayoutError> {
        Tiling::new(shape, sharding, mesh).map(|t| t.layout())
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

    /// Elements in the box (callers bound the sizes; see
    /// [`Region::checked_elements`] for untrusted boxes).
    pub fn elements(&self) -> i64 {
        self.sizes.iter().product()
    }

    /// Elements in the box; `None` if a size is negative or the product
    /// overflows.
    pub fn checked_elements(&self) -> Option<i64> {
        self.sizes
            .iter()
            .try_fold(1i64, |acc, &d| (d >= 0).then(|| acc.checked_mul(d))?)
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

    /// The overlap of two boxes of the same rank, if they share an
    /// element.
    pub fn intersect(&self, other: &Region) -> Option<Region> {
        self.meet(other).filter(|r| r.sizes.iter().all(|&s| s > 0))
    }

    /// The overlap of two boxes of the same rank, where a dimension in
    /// which both are empty at the same offset counts as overlapping with
    /// size 0: boxes of a zero-size array meet where their non-empty
    /// dimensions overlap. `None` when they are apart (or of other ranks).
    pub fn meet(&self, other: &Region) -> Option<Region> {
        let rank = self.offsets.len();
        if [self.sizes.len(), other.offsets.len(), other.sizes.len()] != [rank; 3] {
            return None;
        }
        let mut offsets = Vec::with_capacity(rank);
        let mut sizes = Vec::with_capacity(rank);
        for d in 0..rank {
            let end = |o: i64, s: i64| o.checked_add(s);
            let lo = self.offsets[d].max(other.offsets[d]);
            let hi =
                end(self.offsets[d], self.sizes[d])?.min(end(other.offsets[d], other.sizes[d])?);
            let both_empty = self.sizes[d] == 0 && other.sizes[d] == 0;
            if hi < lo || (hi == lo && !both_empty) {
                return None;
            }
            offsets.push(lo);
            sizes.push(hi - lo);
        }
        Some(Region { offsets, sizes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh(axes: &[(&str, i64)]) -> MeshShape {
        MeshShape::new(axes.iter().map(|(n, s)| (n.to_string(), *s)).collect())
    }

    #[test]
    fn mesh_sizes_are_checked() {
        assert_eq!(mesh(&[("x", 2), ("y", 3)]).size(), Some(6));
        assert_eq!(mesh(&[]).size(), Some(1));
        // 7 * 7905747460161236407 * 2 wraps to 2 in 64 bits.
        assert_eq!(
            mesh(&[("x", 7), ("y", 7905747460161236407), ("z", 2)]).size(),
            None
        );
        assert_eq!(mesh(&[("x", 0)]).size(), None);
        assert!(mesh(&[("x", MAX_MESH_DEVICES + 1)]).checked_size().is_err());
    }

    #[test]
    fn tilings_match_layouts_without_materializing() {
        let m = mesh(&[("x", 2), ("y", 3)]);
        let sharding = Sharding {
            dims: vec![vec!["y".into()], vec!["x".into()]],
        };
        let tiling = Tiling::new(&[6, 4], &sharding, &m).unwrap();
        assert_eq!(tiling.shard_shape, [2, 2]);
        let layout = tiling.layout();
        assert_eq!(layout.offsets.len(), 6);
        for p in 0..6 {
            assert_eq!(tiling.offset(p), layout.offsets[p as usize]);
        }
        // A mesh of a billion devices is refused, not laid out.
        let huge = mesh(&[("x", 1_000_000_000)]);
        assert!(matches!(
            Tiling::new(&[4], &Sharding::replicated(1), &huge),
            Err(LayoutError::BadMesh { .. })
        ));
    }

    #[test]
    fn empty_boxes_meet_where_their_other_dimensions_overlap() {
        let a = Region {
            offsets: vec![0, 0],
            sizes: vec![0, 4],
        };
        let b = Region {
            offsets: vec![0, 2],
            sizes: vec![0, 4],
        };
        assert_eq!(a.intersect(&b), None);
        assert_eq!(
            a.meet(&b),
            Some(Region {
                offsets: vec![0, 2],
                sizes: vec![0, 2]
            })
        );
        let far = Region {
            offsets: vec![0, 9],
            sizes: vec![0, 1],
        };
        assert_eq!(a.meet(&far), None);
        // Offsets near i64::MAX do not overflow.
        let edge = Region {
            offsets: vec![i64::MAX, 0],
            sizes: vec![1, 1],
        };
        assert_eq!(edge.meet(&a), None);
    }
}
