//! Direct transfers between a session's client and its workers
//! ([`pw_wire::bulk`]): the controller grants one-shot tickets on the
//! workers' command links and tells the client where to take or give each
//! shard; the bytes never pass through here.

use super::{
    arrays::{ArrayState, SessionArray},
    executables::Executable,
    Sessions,
};
use crate::error::{Error, Kind, Result};
use pw_core::geometry::Region;
use pw_core::plan::DeviceAddr;
use pw_wire::proto;
use std::sync::Arc;
use tokio::sync::watch;

/// Whether direct transfers are possible: the data plane speaks no TLS (a
/// ticket on a plain connection to a TLS port would prove nothing).
fn plain() -> bool {
    pw_wire::tls::data_plane().is_ok_and(|t| t.client.is_none())
}

/// Where a shard lies, for the client.
fn shard(address: String, ticket: Vec<u8>, region: &Region) -> proto::DirectShard {
    let unsigned = |v: &[i64]| v.iter().map(|&x| x as u64).collect();
    proto::DirectShard {
        address,
        ticket,
        start: unsigned(&region.offsets),
        dims: unsigned(&region.sizes),
    }
}

impl Sessions<'_> {
    /// The worker of `device` (in `exe`'s placement) and its data port.
    fn data_port(&self, exe: &Executable, device: i64) -> Result<(DeviceAddr, String)> {
        let addr = exe.prepared.addr(device)?;
        let data = self
            .c
            .inner
            .workers
            .peers([addr.worker].iter())
            .remove(&addr.worker)
            .ok_or(Error::WorkerGone {
                worker: addr.worker,
            })?
            .data;
        Ok((addr, data))
    }

    /// Where the client takes array `r`'s bytes itself, straight from the
    /// workers ([`pw_wire::bulk`]), once it is ready: each distinct shard's
    /// worker is given a ticket for it on its command link, and the client
    /// the same tickets (with the array's type and its bytes). None when the array is better fetched through here:
    /// its shards are small (one message each way), or the data plane
    /// speaks TLS (a ticket on a plain connection would prove nothing).
    pub async fn direct_fetch(
        &self,
        r: &proto::ArrayRef,
    ) -> Result<Option<(proto::ArrayType, proto::DirectShards, u64)>> {
        let now = self.lock().array(r.session, r.array)?;
        if !plain() || now.info().shard_bytes() <= pw_wire::MAX_READ_BYTES {
            return Ok(None);
        }
        let array = self.ready(r, Kind::Array).await?;
        let info = array.info();
        let regions: Vec<_> = (0..info.devices.len()).map(|p| info.region(p)).collect();
        let mut shards = Vec::new();
        for (position, region) in regions.iter().enumerate() {
            if regions[..position].contains(region) {
                continue;
            }
            let (addr, data) = self.data_port(&array.exe, info.devices[position])?;
            let ticket = pw_wire::bulk::ticket().to_vec();
            let grant = proto::ReadRequest {
                id: 0,
                owner: r.session,
                value: r.array,
                position: position as u32,
                ticket: ticket.clone(),
            };
            self.c
                .inner
                .workers
                .command(addr.worker, proto::controller_event::Event::Read(grant))?;
            shards.push(shard(data, ticket, region));
        }
        let bytes = info.shard_bytes() * shards.len() as u64;
        self.update(r.session, |s| s.counters.bytes_to_client += bytes);
        let shape: Vec<usize> = info.shape.iter().map(|&d| d as usize).collect();
        let t = proto::ArrayType::of(info.dtype, &shape);
        Ok(Some((t, proto::DirectShards { shards }, bytes)))
    }

    /// A direct put (see `SessionPut` in the protocol): array `p.array` of
    /// session `id`, laid out as input `p.input` of executable
    /// `p.executable`, with a write ticket for each of its shards granted
    /// on the workers; None when direct transfers are not possible.
    pub async fn direct_put(
        &self,
        id: u64,
        p: &proto::SessionPut,
    ) -> Result<Option<proto::DirectShards>> {
        self.active(id, "a put")?;
        if !plain() {
            return Ok(None);
        }
        let limits = &self.c.inner.config.limits;
        let exe = self.current(id, p.executable).await?;
        {
            let mut sessions = self.lock();
            let session = sessions.get(id)?;
            let plan = &exe.prepared.plan;
            let index = p.input as usize;
            let value = *plan.inputs.get(index).ok_or(Error::Argument {
                index,
                what: "the executable has no such input",
            })?;
            let bad = |why: String| Error::OutputHandles {
                name: exe.name.clone(),
                session: id,
                why,
            };
            if p.array < super::stream::CLIENT_ARRAYS || session.arrays.contains_key(&p.array) {
                return Err(bad(format!(
                    "array {} cannot be put (below 2^62, or in use)",
                    p.array
                )));
            }
            let what = format!("an argument of {}", exe.name);
            let new = std::iter::once(&plan.values[value]);
            super::call::room_for(id, session, (new, &what), &[], limits)?;
            session.arrays.insert(
                p.array,
                SessionArray {
                    exe: exe.clone(),
                    value,
                    state: Arc::new(watch::Sender::new(ArrayState::Ready)),
                    lineage: None,
                },
            );
        }
        let info = &exe.prepared.plan.values[exe.prepared.plan.inputs[p.input as usize]];
        let shape: Vec<usize> = info
            .layout
            .shard_shape
            .iter()
            .map(|&d| d as usize)
            .collect();
        let t = proto::ArrayType::of(info.dtype, &shape);
        let mut shards = Vec::with_capacity(info.devices.len());
        for (position, &device) in info.devices.iter().enumerate() {
            let (addr, data) = self.data_port(&exe, device)?;
            let ticket = pw_wire::bulk::ticket().to_vec();
            let grant = proto::WriteGrant {
                ticket: ticket.clone(),
                owner: id,
                value: p.array,
                position: position as u32,
                local_device: addr.local,
                r#type: Some(t.clone()),
            };
            self.c
                .inner
                .workers
                .command(addr.worker, proto::controller_event::Event::Write(grant))?;
            shards.push(shard(data, ticket, &info.region(position)));
        }
        self.update(id, |s| s.counters.bytes_from_client += info.device_bytes());
        Ok(Some(proto::DirectShards { shards }))
    }
}
