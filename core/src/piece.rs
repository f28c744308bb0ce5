//! Pieces: the boxes of bytes a physical copy moves, and the links they cross.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The link a piece crosses, from cheapest to dearest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Link {
    /// Source and destination shard live on the same device: a local slice.
    SameDevice,
    /// Between two devices of one island (the fast interconnect).
    IntraIsland,
    /// Between islands (the data-center network).
    CrossIsland,
}

impl Link {
    pub const ALL: [Link; 3] = [Link::SameDevice, Link::IntraIsland, Link::CrossIsland];

    pub fn name(self) -> &'static str {
        match self {
            Link::SameDevice => "same_device",
            Link::IntraIsland => "intra_island",
            Link::CrossIsland => "cross_island",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The box `sizes` at `src_offsets` of the shard on `src_device` lands at
/// `dst_offsets` of the shard on `dst_device`. Offsets are shard-local.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Piece {
    pub src_device: i64,
    pub src_offsets: Vec<i64>,
    pub dst_device: i64,
    pub dst_offsets: Vec<i64>,
    pub sizes: Vec<i64>,
    pub link: Link,
}

impl Piece {
    pub fn elements(&self) -> i64 {
        self.sizes.iter().product()
    }
}

/// The devices a copy of `pieces` occupies (sorted, once each), and its
/// flows as step labels show them (`0->2 1->3`).
pub fn span(pieces: &[Piece]) -> (Vec<i64>, String) {
    let mut devices: Vec<i64> = pieces
        .iter()
        .flat_map(|p| [p.src_device, p.dst_device])
        .collect();
    devices.sort_unstable();
    devices.dedup();
    let flows: Vec<String> = pieces
        .iter()
        .map(|p| format!("{}->{}", p.src_device, p.dst_device))
        .collect();
    (devices, flows.join(" "))
}
