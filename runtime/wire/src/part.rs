//! A worker's part of a plan on the wire (`ExecuteRequest.part`): postcard
//! of [`Part`], checked ([`Part::check`]) as it is read, so a part that
//! does not decode or does not hold together is an error before anything
//! indexes it.

use crate::{Error, Result};
use pw_core::plan::Part;

/// `part`, as the request carries it.
pub fn encode(part: &Part) -> Result<Vec<u8>> {
    postcard::to_allocvec(part).map_err(|e| Error::Part(format!("it does not serialize: {e}")))
}

/// The part `bytes` hold, checked.
pub fn decode(bytes: &[u8]) -> Result<Part> {
    let part: Part =
        postcard::from_bytes(bytes).map_err(|e| Error::Part(format!("it does not decode: {e}")))?;
    part.check().map_err(|e| Error::Part(e.to_string()))?;
    Ok(part)
}
