//! Shardings: which part of an array each device holds.
//!
//! A [`Sharding`] maps an array's shape to one [`IndexDomain`] per device
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
//! [`Layout`] is the in-memory order of a shard's elements. Arrays are dense
//! and row-major (major-to-minor), the order PJRT uses when none is given.

use std::collections::HashSet;
use std::fmt;

use crate::error::{Error, Result};
use crate::pjrt::Device;

/// A dense element order, as a minor-to-major dimension permutation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    minor_to_major: Vec<usize>,
}

impl Layout {
    /// Row-major (C order): the last dimension is the most minor.
    pub fn row_major(rank: usize) -> Layout {
        Layout {
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

/// A box of an array's index space: `origin[i] .. origin[i] + shape[i]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexDomain {
    pub origin: Vec<usize>,
    pub shape: Vec<usize>,
}

impl IndexDomain {
    /// The whole of an array of `shape`.
    pub fn full(shape: &[usize]) -> IndexDomain {
        IndexDomain {
            origin: vec![0; shape.len()],
            shape: shape.to_vec(),
        }
    }

    pub fn num_elements(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the box lies inside an array of `shape`.
    pub fn fits(&self, shape: &[usize]) -> bool {
        self.origin.len() == shape.len()
            && self.shape.len() == shape.len()
            && self
                .origin
                .iter()
                .zip(&self.shape)
                .zip(shape)
                .all(|((o, s), d)| o + s <= *d)
    }

    fn overlaps(&self, other: &IndexDomain) -> bool {
        self.origin
            .iter()
            .zip(&self.shape)
            .zip(other.origin.iter().zip(&other.shape))
            .all(|((a0, an), (b0, bn))| *a0 < b0 + bn && *b0 < a0 + an)
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

    fn axis(&self, name: &str) -> Option<usize> {
        self.axes.iter().position(|(n, _)| n == name)
    }

    /// Coordinates of the device at row-major position `flat`.
    fn coords(&self, mut flat: usize) -> Vec<usize> {
        let mut coords = vec![0; self.axes.len()];
        for (i, (_, size)) in self.axes.iter().enumerate().rev() {
            coords[i] = flat % size;
            flat /= size;
        }
        coords
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
        domains: Vec<IndexDomain>,
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
    pub fn explicit(devices: &[Device], domains: Vec<IndexDomain>) -> Sharding {
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
    pub fn shard_domains(&self, shape: &[usize]) -> Result<Vec<IndexDomain>> {
        match self {
            Sharding::SingleDevice(_) => Ok(vec![IndexDomain::full(shape)]),
            Sharding::Named { mesh, dims } => named_domains(mesh, dims, shape),
            Sharding::Explicit { devices, domains } => {
                explicit_check(devices, domains, shape)?;
                Ok(domains.clone())
            }
        }
    }

    /// Whether every shard of an array of `shape` is the whole array.
    pub fn is_fully_replicated(&self, shape: &[usize]) -> Result<bool> {
        let full = IndexDomain::full(shape);
        Ok(self.shard_domains(shape)?.iter().all(|d| *d == full))
    }
}

fn named_domains(mesh: &Mesh, dims: &[Vec<String>], shape: &[usize]) -> Result<Vec<IndexDomain>> {
    if dims.len() > shape.len() {
        return Err(Error::invalid(format!(
            "sharding names {} dimensions for an array of rank {} ({shape:?})",
            dims.len(),
            shape.len()
        )));
    }
    let mut used = HashSet::new();
    // Per dimension: the mesh axes (indices) it is split over, and the split count.
    let mut splits: Vec<(Vec<usize>, usize)> = Vec::with_capacity(shape.len());
    for (d, extent) in shape.iter().enumerate() {
        let names = dims.get(d).map(Vec::as_slice).unwrap_or(&[]);
        let mut axes = Vec::with_capacity(names.len());
        for name in names {
            let axis = mesh.axis(name).ok_or_else(|| {
                Error::invalid(format!("sharding uses axis {name:?}, which {mesh:?} lacks"))
            })?;
            if !used.insert(axis) {
                return Err(Error::invalid(format!(
                    "mesh axis {name:?} splits more than one dimension"
                )));
            }
            axes.push(axis);
        }
        let count: usize = axes.iter().map(|&a| mesh.axes[a].1).product();
        if extent % count != 0 {
            return Err(Error::invalid(format!(
                "dimension {d} of size {extent} cannot be split evenly into {count} shards ({names:?})"
            )));
        }
        splits.push((axes, count));
    }
    Ok((0..mesh.devices.len())
        .map(|flat| {
            let coords = mesh.coords(flat);
            let mut origin = Vec::with_capacity(shape.len());
            let mut sizes = Vec::with_capacity(shape.len());
            for (extent, (axes, count)) in shape.iter().zip(&splits) {
                // Mixed-radix index over the dimension's axes, major to minor.
                let index = axes
                    .iter()
                    .fold(0, |acc, &a| acc * mesh.axes[a].1 + coords[a]);
                let chunk = extent / count;
                origin.push(index * chunk);
                sizes.push(chunk);
            }
            IndexDomain {
                origin,
                shape: sizes,
            }
        })
        .collect())
}

fn explicit_check(devices: &[Device], domains: &[IndexDomain], shape: &[usize]) -> Result<()> {
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
    let mut distinct: Vec<&IndexDomain> = Vec::new();
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
    let covered: usize = distinct.iter().map(|d| d.num_elements()).sum();
    let total: usize = shape.iter().product();
    if covered != total {
        return Err(Error::invalid(format!(
            "the domains cover {covered} of the {total} elements of shape {shape:?}"
        )));
    }
    Ok(())
}
