//! The devices a program can be lowered onto, grouped in islands.
//!
//! Devices of one island share a fast interconnect; between islands data
//! crosses the data-center network. A topology file is TOML (or JSON, by
//! its `.json` extension):
//!
//! ```toml
//! [[island]]
//! name = "pod0"
//! kind = "cpu"          # the kind of every device of the island
//! devices = [0, 1, 2, 3]
//!
//! [[island]]
//! name = "pod1"
//! kind = "gpu"
//! devices = [4, 5, 6, 7]
//! ```
//!
//! Device ids are global ids: the devices of one process (pw-run's PJRT
//! client), or of every pw-worker registered with a pw-server, which
//! numbers them; each appears once. Without a file, the topology is one
//! island, `local`, of the runtime's devices.
//!
//! An island may list `hosts`: the groups of its devices that one process
//! drives (`hosts = [[0, 1], [2, 3]]`). One SPMD computation runs inside one
//! process, so a mesh is allocated within one host. Without `hosts`, the
//! island is one host.

use serde::{Deserialize, Serialize};
use std::{collections::HashMap, path::Path};

/// The most devices a topology may have, all islands together.
pub const MAX_DEVICES: usize = crate::geometry::MAX_MESH_DEVICES as usize;

/// The largest topology file read (a topology of [`MAX_DEVICES`] devices
/// takes well under this).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// One island: devices of one kind on a shared interconnect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Island {
    pub name: String,
    pub kind: String,
    pub devices: Vec<i64>,
    /// Groups of `devices`, one per process (see the module doc); empty:
    /// one process drives the whole island.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<Vec<i64>>,
}

impl Island {
    /// The island's hosts: `hosts`, or the whole island as one.
    pub fn hosts(&self) -> Vec<&[i64]> {
        if self.hosts.is_empty() {
            vec![self.devices.as_slice()]
        } else {
            self.hosts.iter().map(Vec::as_slice).collect()
        }
    }

    /// The most devices one host of the island has.
    pub fn largest_host(&self) -> usize {
        self.hosts().iter().map(|h| h.len()).max().unwrap_or(0)
    }
}

/// Every island a program may use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    #[serde(rename = "island")]
    pub islands: Vec<Island>,
}

/// Why a topology cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    #[error("cannot read topology {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Syntax { path: String, message: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl Topology {
    /// One island, `local`, of `count` devices of `kind`, ids from 0; at
    /// least one and at most [`MAX_DEVICES`].
    pub fn local(count: i64, kind: &str) -> Result<Self, String> {
        if count < 1 || count > MAX_DEVICES as i64 {
            return Err(format!(
                "a local island has 1 to {MAX_DEVICES} devices, not {count}"
            ));
        }
        Ok(Self {
            islands: vec![Island {
                name: "local".into(),
                kind: kind.into(),
                devices: (0..count).collect(),
                hosts: Vec::new(),
            }],
        })
    }

    /// Reads a topology file (JSON if it ends in `.json`, else TOML).
    pub fn load(path: &Path) -> Result<Self, TopologyError> {
        let shown = path.display().to_string();
        let io = |source| TopologyError::Io {
            path: shown.clone(),
            source,
        };
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size > MAX_FILE_BYTES {
            return Err(TopologyError::Invalid {
                path: shown,
                message: format!(
                    "the file has {size} bytes; a topology has at most {MAX_FILE_BYTES}"
                ),
            });
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        Self::parse(&text, path.extension().is_some_and(|e| e == "json"), &shown)
    }

    /// Parses a topology from text (JSON or TOML) and validates it; `shown`
    /// names the source in errors.
    pub fn parse(text: &str, json: bool, shown: &str) -> Result<Self, TopologyError> {
        let shown = shown.to_owned();
        let topology: Topology = if json {
            serde_json::from_str(text).map_err(|e| TopologyError::Syntax {
                path: shown.clone(),
                message: e.to_string(),
            })?
        } else {
            toml::from_str(text).map_err(|e| TopologyError::Syntax {
                path: shown.clone(),
                message: e.to_string(),
            })?
        };
        topology
            .validate()
            .map_err(|message| TopologyError::Invalid {
                path: shown,
                message,
            })?;
        Ok(topology)
    }

    /// Checks that islands are named, non-empty, and hold distinct devices.
    pub fn validate(&self) -> Result<(), String> {
        if self.islands.is_empty() {
            return Err("a topology needs at least one island".into());
        }
        let total = self.islands.iter().map(|i| i.devices.len()).sum::<usize>();
        if total > MAX_DEVICES {
            return Err(format!(
                "the topology has {total} devices; at most {MAX_DEVICES} are supported"
            ));
        }
        let mut seen = std::collections::HashSet::new();
        let mut names = std::collections::HashSet::new();
        for island in &self.islands {
            if !names.insert(&island.name) {
                return Err(format!("island \"{}\" is declared twice", island.name));
            }
            if island.devices.is_empty() {
                return Err(format!("island \"{}\" has no devices", island.name));
            }
            for &d in &island.devices {
                if d < 0 || !seen.insert(d) {
                    return Err(format!("device {d} is negative or listed twice"));
                }
            }
            if !island.hosts.is_empty() {
                let mut hosted: Vec<i64> = island.hosts.iter().flatten().copied().collect();
                hosted.sort_unstable();
                let mut devices = island.devices.clone();
                devices.sort_unstable();
                if hosted != devices {
                    return Err(format!(
                        "the hosts of island \"{}\" must list each of its devices once",
                        island.name
                    ));
                }
            }
        }
        Ok(())
    }

    /// Which island holds each device, for classifying many links.
    pub fn links(&self) -> Links {
        Links {
            island: self
                .islands
                .iter()
                .enumerate()
                .flat_map(|(i, island)| island.devices.iter().map(move |&d| (d, i)))
                .collect(),
        }
    }
}

/// Classifies links between the devices of a topology in constant time.
#[derive(Clone, Debug)]
pub struct Links {
    island: HashMap<i64, usize>,
}

impl Links {
    /// The link between two devices.
    pub fn link(&self, from: i64, to: i64) -> crate::Link {
        if from == to {
            crate::Link::SameDevice
        } else if self.island.get(&from) == self.island.get(&to) {
            crate::Link::IntraIsland
        } else {
            crate::Link::CrossIsland
        }
    }
}
