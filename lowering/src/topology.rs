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
//! Device ids are the runtime's (PJRT) ids; each appears once. Without a
//! file, the topology is one island, `local`, of the runtime's devices.

use serde::Deserialize;
use std::path::Path;

/// One island: devices of one kind on a shared interconnect.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Island {
    pub name: String,
    pub kind: String,
    pub devices: Vec<i64>,
}

/// Every island a program may use.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
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
    /// One island, `local`, of `count` devices of `kind`, ids from 0.
    pub fn local(count: i64, kind: &str) -> Self {
        Self {
            islands: vec![Island {
                name: "local".into(),
                kind: kind.into(),
                devices: (0..count).collect(),
            }],
        }
    }

    /// Reads a topology file (JSON if it ends in `.json`, else TOML).
    pub fn load(path: &Path) -> Result<Self, TopologyError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TopologyError::Io {
            path: shown.clone(),
            source,
        })?;
        let topology: Topology = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(&text).map_err(|e| TopologyError::Syntax {
                path: shown.clone(),
                message: e.to_string(),
            })?
        } else {
            toml::from_str(&text).map_err(|e| TopologyError::Syntax {
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
        }
        Ok(())
    }

    /// The island holding `device`.
    pub fn island_of(&self, device: i64) -> Option<&Island> {
        self.islands.iter().find(|i| i.devices.contains(&device))
    }

    /// The link between two devices.
    pub fn link(&self, from: i64, to: i64) -> pw_dialect::Link {
        if from == to {
            pw_dialect::Link::SameDevice
        } else if self.island_of(from).map(|i| &i.name) == self.island_of(to).map(|i| &i.name) {
            pw_dialect::Link::IntraIsland
        } else {
            pw_dialect::Link::CrossIsland
        }
    }
}
