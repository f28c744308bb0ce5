//! Shardings: which part of an array each device holds.
//!
//! A [`Sharding`] maps an array's shape to one [`Region`] per device
//! (a box of the global index space), in a fixed device order that is the
//! order of the array's shards:
//!
//! * [`Sharding::SingleDevice`]: the whole array on one device.
//! * [`Sharding::Named`]: Shardy/JAX style. A [`Mesh`] arranges devices on
//!   named axes (row-major: the last axis varies fastest); array dimension
//!   `i` is split over the list of mesh axes `dims[i]`, major to minor, and
//!   replicated over every axis no dimension uses. Missing trailing entries of
//!   `dims` mean "not split". Split dimensions must divide evenly.
//!   `mesh ["x"=2, "y"=2]`, `dims [["x"], []]` on a `[8, 4]` array gives
//!   devices `(x, y) = (0, 0), (0, 1)` rows `0..4` and devices `(1, 0), (1, 1)`
//!   rows `4..8`.
//! * [`Sharding::Explicit`]: an explicit device list with each device's
//!   domain (uneven splits allowed). Distinct domains must not overlap and
//!   must cover the array; equal domains are replicas.
//!
//! The boxes themselves come from `pw-core`'s shard geometry
//! ([`pw_core::geometry`]), the one the compiler lowers with: a named
//! sharding here is a `pw_core` [`geometry::Sharding`] on a mesh of devices.
//!
//! [`MemoryLayout`] is the in-memory order of a shard's elements. Arrays are
//! dense and row-major (major-to-minor), the order PJRT uses when none is
//! given.

use std::collections::HashSet;
use std::fmt;

use pw_core::geometry::{self, MeshShape, Region};

use crate::error::{Error, Result};
use crate::pjrt::Device;

/// A dense element order, as a minor-to-major dimension permutation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MemoryLayout {
    minor_to_major: Vec<usize>,
}

impl MemoryLayout {
    /// Row-major (C order): the last dimension is the most minor.
    pub fn row_major(rank: usize) -> MemoryLayout {
        MemoryLayout {
            minor_to_major: (0..rank).rev().collect(),
        }
    }

    pub fn minor_to_major(&self) -> &[usize] {
        &self.minor_to_major
    }

    pub fn is_row_major(&self) -> bool {
        self.minor_to_major
            .iter()
            .rev()
            .copied()
            .eq(0..self.minor_to_major.len())
    }
}

/// Devices arranged on named axes, row-major over the axes.
#[derive(Clone, PartialEq, Eq)]
pub struct Mesh {
    axes: Vec<(String, usize)>,
    devices: Vec<Device>,
}

impl Mesh {
    /// `axes` as (name, size); `devices.len()` must be the product of the sizes.
    pub fn new(axes: &[(&str, usize)], devices: &[Device]) -> Result<Mesh> {
        let size: usize = axes.iter().map(|(_, n)| n).product();
        if size != devices.len() {
            return Err(Error::invalid(format!(
                "a mesh of shape {axes:?} has {size} positions, but {} devices were given",
                devices.len()
            )));
        }
        let mut names = HashSet::new();
        for (name, n) in axes {
            if *n == 0 || !names.insert(*name) {
                return Err(Error::invalid(format!(
                    "mesh axis {name:?} is empty or repeated"
                )));
            }
        }
        let unique: HashSet<(usize, usize)> = devices.iter().map(Device::key).collect();
        if unique.len() != devices.len() {
            return Err(Error::invalid("a mesh lists the same device twice"));
        }
        Ok(Mesh {
            axes: axes.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
            devices: devices.to_vec(),
        })
    }

    pub fn axes(&self) -> &[(String, usize)] {
        &self.axes
    }

    /// Devices in row-major mesh order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The mesh's shape, for the shard geometry.
    fn shape(&self) -> MeshShape {
        MeshShape::new(
            self.axes
                .iter()
                .map(|(n, s)| (n.clone(), *s as i64))
                .collect(),
        )
    }
}

impl fmt::Debug for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(n, s)| format!("{n:?}={s}"))
            .collect();
        let ids: Vec<i32> = self.devices.iter().map(Device::id).collect();
        write!(f, "Mesh[{}] devices {ids:?}", axes.join(", "))
    }
}

/// How an array is split over devices. See the module doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sharding {
    SingleDevice(Device),
    Named {
        mesh: Mesh,
        dims: Vec<Vec<String>>,
    },
    Explicit {
        devices: Vec<Device>,
        domains: Vec<Region>,
    },
}

impl Sharding {
    /// A named sharding; `dims[i]` lists the mesh axes dimension `i` is split over.
    pub fn named(mesh: &Mesh, dims: &[&[&str]]) -> Sharding {
        Sharding::Named {
            mesh: mesh.clone(),
            dims: dims
                .iter()
                .map(|axes| axes.iter().map(|a| a.to_string()).collect())
                .collect(),
        }
    }

    /// Every device holds the whole array.
    pub fn replicated(devices: &[Device]) -> Result<Sharding> {
        let mesh = Mesh::new(&[("replica", devices.len())], devices)?;
        Ok(Sharding::Named {
            mesh,
            dims: Vec::new(),
        })
    }

    /// An explicit device list and the domain each holds.
    pub fn explicit(devices: &[Device], domains: Vec<Region>) -> Sharding {
        Sharding::Explicit {
            devices: devices.to_vec(),
            domains,
        }
    }

    /// The devices holding shards, in shard order.
    pub fn devices(&self) -> &[Device] {
        match self {
            Sharding::SingleDevice(device) => std::slice::from_ref(device),
            Sharding::Named { mesh, .. } => mesh.devices(),
            Sharding::Explicit { devices, .. } => devices,
        }
    }

    pub fn num_shards(&self) -> usize {
        self.devices().len()
    }

    /// The domain of each shard of an array of `shape`, in device order;
    /// an error if the sharding does not fit the shape.
    pub fn shard_domains(&self, shape: &[usize]) -> Result<Vec<Region>> {
        let shape = dims(shape);
        match self {
            Sharding::SingleDevice(_) => Ok(vec![Region::full(&shape)]),
            Sharding::Named { mesh, dims } => named_domains(mesh, dims, &shape),
            Sharding::Explicit { devices, domains } => {
                explicit_check(devices, domains, &shape)?;
                Ok(domains.clone())
            }
        }
    }

    /// Whether every shard of an array of `shape` is the whole array.
    pub fn is_fully_replicated(&self, shape: &[usize]) -> Result<bool> {
        let full = Region::full(&dims(shape));
        Ok(self.shard_domains(shape)?.iter().all(|d| *d == full))
    }
}

/// Array dimensions as the geometry counts them.
pub(crate) fn dims(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

/// The shape of a box (checked boxes have no negative size).
pub(crate) fn sizes(region: &Region) -> Vec<usize> {
    region.sizes.iter().map(|&s| s.max(0) as usize).collect()
}

/// The boxes of a named sharding, from the shard geometry.
fn named_domains(mesh: &Mesh, dims: &[Vec<String>], shape: &[i64]) -> Result<Vec<Region>> {
    if dims.len() > shape.len() {
        return Err(Error::invalid(format!(
            "sharding names {} dimensions for an array of rank {} ({shape:?})",
            dims.len(),
            shape.len()
        )));
    }
    // Missing trailing entries mean "not split".
    let mut spec = geometry::Sharding::replicated(shape.len());
    for (d, axes) in dims.iter().enumerate() {
        spec.dims[d] = axes.clone();
    }
    let layout = geometry::Layout::new(shape, &spec, &mesh.shape())
        .map_err(|e| Error::invalid(format!("sharding {spec} on {mesh:?}: {e}")))?;
    Ok(layout
        .offsets
        .into_iter()
        .map(|offsets| Region {
            offsets,
            sizes: layout.shard_shape.clone(),
        })
        .collect())
}

fn explicit_check(devices: &[Device], domains: &[Region], shape: &[i64]) -> Result<()> {
    if devices.len() != domains.len() || devices.is_empty() {
        return Err(Error::invalid(format!(
            "an explicit sharding needs one domain per device, got {} devices and {} domains",
            devices.len(),
            domains.len()
        )));
    }
    let unique: HashSet<(usize, usize)> = devices.iter().map(Device::key).collect();
    if unique.len() != devices.len() {
        return Err(Error::invalid(
            "an explicit sharding lists the same device twice",
        ));
    }
    for domain in domains {
        if !domain.fits(shape) {
            return Err(Error::invalid(format!(
                "domain {domain:?} does not fit an array of shape {shape:?}"
            )));
        }
    }
    let mut distinct: Vec<&Region> = Vec::new();
    for domain in domains {
        if distinct.contains(&domain) {
            continue;
        }
        if let Some(other) = distinct.iter().find(|o| o.overlaps(domain)) {
            return Err(Error::invalid(format!(
                "domains {other:?} and {domain:?} overlap without being equal"
            )));
        }
        distinct.push(domain);
    }
    let covered: i64 = distinct.iter().map(|d| d.elements()).sum();
    let total: i64 = shape.iter().product();
    if covered != total {
        return Err(Error::invalid(format!(
            "the domains cover {covered} of the {total} elements of shape {shape:?}"
        )));
    }
    Ok(())
}
