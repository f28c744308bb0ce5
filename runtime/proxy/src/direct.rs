//! A large array's bytes between the proxy's host buffers and the data
//! ports of its workers (`pw_wire::bulk`, with the tickets the controller
//! granted), never through the workers' gRPC services, each piece passed
//! on as it arrives: a fetch streams into a host buffer that the client may
//! look up at once ([`into_host_buffer`]), and an upload forwards the
//! client's pieces while it is still storing them ([`give`]). The
//! workers' side and the client's side of a transfer overlap instead of
//! following each other.

use crate::{
    error::{Error, Result},
    host_buffers::{HostBuffers, Source},
};
use bytes::Bytes;
use pw_core::{geometry::Region, DType};
use pw_wire::proto::DirectShard;

/// Fills host buffer `handle` of IFRT session `session` with the `size`
/// bytes of array `array`, all of which `shard` holds; returns as soon as
/// the buffer may be looked up (a failure part-way ends the lookup).
pub fn into_host_buffer(
    buffers: &HostBuffers,
    (session, handle): (u64, u64),
    array: u64,
    size: u64,
    shard: DirectShard,
) -> Result<()> {
    let filling = buffers
        .arriving(session, handle, size)
        .map_err(|s| Error::Invalid(format!("array {array}: {}", s.message())))?;
    tokio::spawn(async move {
        let outcome =
            pw_wire::bulk::take(&shard.address, &shard.ticket, size, |p| filling.push(p)).await;
        filling.finish(outcome.map_err(|why| format!("array {array}: {why}")));
    });
    Ok(())
}

/// Gives each of `shards` (those of a direct put) its region of the
/// dense `dtype` array of `dims` that `source` holds, all at once: a shard
/// that is the whole array as its pieces arrive (no copy), any other a
/// copy of its region once all the bytes are here.
pub async fn give(
    source: &Source,
    dtype: DType,
    dims: &[usize],
    shards: &[DirectShard],
) -> std::result::Result<(), String> {
    let shape: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
    let is_whole = |s: &DirectShard| s.start.iter().all(|&x| x == 0) && s.dims == shape;
    let parts = if shards.iter().all(is_whole) {
        vec![None; shards.len()]
    } else {
        let host = source.clone().into_host(dtype, dims).await?;
        shards
            .iter()
            .map(|s| {
                if is_whole(s) {
                    return Ok(None);
                }
                let part = host.slice(&region(s)).map_err(|e| e.to_string())?;
                Ok(Some(Source::from(Bytes::from(part.into_bytes()))))
            })
            .collect::<std::result::Result<Vec<_>, String>>()?
    };
    let gives = shards.iter().zip(parts).map(|(s, part)| {
        let from = part.unwrap_or_else(|| source.clone());
        let mut i = 0;
        async move {
            let length = from.len();
            pw_wire::bulk::give(&s.address, &s.ticket, length, || {
                i += 1;
                let from = from.clone();
                async move { from.piece(i - 1).await }
            })
            .await
        }
    });
    futures::future::try_join_all(gives).await.map(|_| ())
}

/// A shard's region of its array.
fn region(s: &DirectShard) -> Region {
    Region {
        offsets: s.start.iter().map(|&x| x as i64).collect(),
        sizes: s.dims.iter().map(|&x| x as i64).collect(),
    }
}
