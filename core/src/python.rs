//! A Python function as a computation carries it
//! ([`crate::plan::Module::Python`]): the bytes a worker's sidecar loads.
//!
//! Two kinds of function arrive, told apart by their [`Convention`]:
//! JAX's `colocated_python` (through the proxy), whose pickle is JAX's own,
//! and a step of a pw program (`pw.sidecar` in the front end), whose pickle
//! is cloudpickle's of the user's function.
//!
//! The encoding: [`MAGIC`], the length of a JSON header (`u32`,
//! little-endian), the header (name, convention, devices), the pickle.

use serde::{Deserialize, Serialize};

/// The first bytes of an encoded [`Function`].
pub const MAGIC: &[u8; 8] = b"PWPYFN01";

/// How the sidecar calls a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Convention {
    /// `jax.experimental.colocated_python`: JAX's pickle of the function
    /// and its specs; it takes JAX arrays laid out as the step's shards on
    /// the sidecar's CPU devices.
    #[default]
    Colocated,
    /// A step of a pw program: it takes each input whole, as a numpy array,
    /// once per worker of the step, and returns numpy arrays that the
    /// sidecar cuts into the output shards that worker holds.
    Whole,
}

/// A Python function for a sidecar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Its name (the Python function's).
    pub name: String,
    pub convention: Convention,
    /// For [`Convention::Colocated`], the devices it was made for as its
    /// client numbers them (the ids inside the pickle), in the order of
    /// the step's devices; empty otherwise.
    pub devices: Vec<i32>,
    /// The pickle.
    pub pickle: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct Header {
    name: String,
    #[serde(default)]
    convention: Convention,
    #[serde(default)]
    devices: Vec<i32>,
}

/// Why bytes are not an encoded [`Function`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a pw Python function: {why}")]
pub struct DecodeError {
    pub why: String,
}

impl Function {
    /// Whether `bytes` (a computation's module) say they encode a function.
    pub fn is_encoded(bytes: &[u8]) -> bool {
        bytes.starts_with(MAGIC)
    }

    pub fn encode(&self) -> Vec<u8> {
        let header = serde_json::to_vec(&Header {
            name: self.name.clone(),
            convention: self.convention,
            devices: self.devices.clone(),
        })
        .unwrap_or_default();
        let mut out = Vec::with_capacity(MAGIC.len() + 4 + header.len() + self.pickle.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&self.pickle);
        out
    }

    /// Reads an encoding, checked against what is there.
    pub fn decode(bytes: &[u8]) -> Result<Function, DecodeError> {
        let bad = |why: String| DecodeError { why };
        let rest = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or_else(|| bad("it does not start with the magic bytes".into()))?;
        let (len, rest) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| bad("it ends before its header's length".into()))?;
        let len = u32::from_le_bytes(*len) as usize;
        if len > rest.len() {
            return Err(bad(format!(
                "its header has {len} bytes, {} are left",
                rest.len()
            )));
        }
        let (header, pickle) = rest.split_at(len);
        let header: Header =
            serde_json::from_slice(header).map_err(|e| bad(format!("its header: {e}")))?;
        if pickle.is_empty() {
            return Err(bad("it has no pickle".into()));
        }
        Ok(Function {
            name: header.name,
            convention: header.convention,
            devices: header.devices,
            pickle: pickle.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_round_trip_and_bad_encodings_are_refused() {
        for convention in [Convention::Colocated, Convention::Whole] {
            let f = Function {
                name: "f".into(),
                convention,
                devices: vec![2, 3],
                pickle: b"\x80\x05pickle".to_vec(),
            };
            let bytes = f.encode();
            assert!(Function::is_encoded(&bytes));
            assert_eq!(Function::decode(&bytes).unwrap(), f);
        }
        let bytes = Function {
            name: "f".into(),
            convention: Convention::Whole,
            devices: vec![],
            pickle: b"p".to_vec(),
        }
        .encode();
        // A header longer than what is left.
        let mut long = bytes.clone();
        long[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Function::decode(&long)
            .unwrap_err()
            .to_string()
            .contains("header has"));
        assert!(Function::decode(&bytes[..10]).is_err());
        assert!(Function::decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(!Function::is_encoded(b"ML\xefR"));
        // A header without a convention is JAX's colocated Python (what
        // the first encoding wrote).
        let old = br#"{"name":"g","devices":[0]}"#;
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&(old.len() as u32).to_le_bytes());
        bytes.extend_from_slice(old);
        bytes.push(b'x');
        assert_eq!(
            Function::decode(&bytes).unwrap().convention,
            Convention::Colocated
        );
    }
}
