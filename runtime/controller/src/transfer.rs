//! Bytes between the controller and the workers: input shards up
//! (`Worker.Put`), values down (`Worker.Fetch`, one replica of each tile),
//! and releases (`Worker.Release`: a run's buffers, or single arrays of a
//! session). Pieces between workers never come here: they go worker to
//! worker (`pw-dataplane`).

use crate::{
    error::{Error, Result},
    lowering::Prepared,
    Controller,
};
use pw_core::plan::{DeviceAddr, ValueInfo};
use pw_exec::HostArray;
use pw_wire::{self as wire, proto};
use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
    time::Duration,
};

use pw_wire::net::WorkerClient;

/// Uploads host arrays as values of owner `run`, each shard to the worker
/// of its device; returns the bytes sent to each worker.
pub(crate) async fn upload(
    c: &Controller,
    run: u64,
    prepared: &Prepared,
    inputs: &[(usize, &HostArray)],
) -> Result<BTreeMap<u32, u64>> {
    let mut put_bytes: BTreeMap<u32, u64> = BTreeMap::new();
    let mut puts = Vec::new();
    for &(id, host) in inputs {
        let value = &prepared.plan.values[id];
        let regions: Vec<_> = (0..value.devices.len()).map(|p| value.region(p)).collect();
        let shards = pw_exec::host::split(host, &regions)?;
        for (position, (device, shard)) in value.devices.iter().zip(shards).enumerate() {
            let addr = prepared.addrs.get(device).copied().ok_or(Error::Unplaced)?;
            *put_bytes.entry(addr.worker).or_default() += shard.bytes().len() as u64;
            let client = c.inner.workers.handle(addr.worker)?.client;
            puts.push(put(client, (run, id, position), addr, shard));
        }
    }
    for outcome in futures::future::join_all(puts).await {
        outcome?;
    }
    Ok(put_bytes)
}

/// Uploads one shard: of value `.1` of owner `.0`, at position `.2`.
async fn put(
    mut client: WorkerClient,
    (run, value, position): (u64, usize, usize),
    addr: DeviceAddr,
    shard: Arc<HostArray>,
) -> Result<()> {
    let t = proto::ArrayType::of(shard.dtype(), shard.shape());
    let data = bytes::Bytes::copy_from_slice(shard.bytes());
    let messages: Vec<proto::PutRequest> = wire::chunks(data)
        .into_iter()
        .map(|chunk| proto::PutRequest {
            run,
            value: value as u32,
            position: position as u32,
            local_device: addr.local,
            r#type: Some(t.clone()),
            chunk: Some(chunk),
        })
        .collect();
    client
        .put(tokio_stream::iter(messages))
        .await
        .map(|_| ())
        .map_err(|s| Error::Upload {
            worker: addr.worker,
            message: s.message().to_owned(),
        })
}

/// Fetches value `key` of owner `owner` (a run's value, a session's
/// array), laid out as `value`: one replica of each tile, from the worker
/// holding it. Returns it and the bytes each worker sent.
pub(crate) async fn fetch_value(
    c: &Controller,
    (owner, key): (u64, usize),
    value: &ValueInfo,
    addrs: &HashMap<i64, DeviceAddr>,
) -> Result<(HostArray, BTreeMap<u32, u64>)> {
    let regions: Vec<_> = (0..value.devices.len()).map(|p| value.region(p)).collect();
    let mut wanted = Vec::new();
    for (position, region) in regions.iter().enumerate() {
        if regions[..position].contains(region) {
            continue;
        }
        let addr = addrs
            .get(&value.devices[position])
            .copied()
            .ok_or(Error::Unplaced)?;
        let client = c.inner.workers.handle(addr.worker)?.client;
        wanted.push(fetch(client, (owner, key, position), addr.worker));
    }
    let mut bytes: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut fetched: BTreeMap<u32, u64> = BTreeMap::new();
    for got in futures::future::join_all(wanted).await {
        let (position, worker, data) = got?;
        *fetched.entry(worker).or_default() += data.len() as u64;
        bytes.insert(position, data);
    }
    let shape: Vec<usize> = value.shape.iter().map(|&d| d as usize).collect();
    let host = pw_exec::host::assemble(value.dtype, &shape, &regions, |p| Ok(bytes.remove(&p)))?;
    Ok((host, fetched))
}

/// Fetches one shard (position `.2` of value `.1` of owner `.0`):
/// (position, worker, bytes).
async fn fetch(
    mut client: WorkerClient,
    (run, value, position): (u64, usize, usize),
    worker: u32,
) -> Result<(usize, u32, Vec<u8>)> {
    let failed = |message: String| Error::Fetch {
        what: "an output shard".into(),
        worker,
        message,
    };
    let mut stream = client
        .fetch(proto::FetchRequest {
            run,
            value: value as u32,
            position: position as u32,
        })
        .await
        .map_err(|s| failed(s.message().to_owned()))?
        .into_inner();
    let first = stream
        .message()
        .await
        .map_err(|s| failed(s.message().to_owned()))?
        .ok_or_else(|| failed("no reply".into()))?;
    let limit = first
        .r#type
        .as_ref()
        .ok_or_else(|| failed("no type".into()))?
        .read(u64::MAX)
        .map_err(|e| failed(e.to_string()))?
        .2;
    let head = first
        .chunk
        .as_ref()
        .ok_or_else(|| failed("no chunk".into()))?;
    let mut collect = wire::Collect::new(head, limit, Some(limit), "an output shard")
        .map_err(|e| failed(e.to_string()))?;
    let mut done = collect.push(head).map_err(|e| failed(e.to_string()))?;
    while done.is_none() {
        let next = stream
            .message()
            .await
            .map_err(|s| failed(s.message().to_owned()))?
            .ok_or_else(|| failed(collect.truncated().to_string()))?;
        let chunk = next.chunk.ok_or_else(|| failed("no chunk".into()))?;
        done = collect.push(&chunk).map_err(|e| failed(e.to_string()))?;
    }
    Ok((position, worker, done.unwrap_or_default()))
}

/// Tells every worker of the run (or session) `owner` to drop it (bounded:
/// a worker that does not answer within 2 s is left to its own clean-up).
pub(crate) async fn release(c: &Controller, owner: u64, workers: &[u32], why: &str) {
    release_arrays(c, owner, workers, why, &[]).await
}

/// Tells `workers` to drop `arrays` of owner `owner`, or all of it when
/// `arrays` is empty. Single arrays are dropped in gang order (sent in
/// order with parts, done in each worker's turn order), so that parts sent
/// earlier still find them.
pub(crate) async fn release_arrays(
    c: &Controller,
    owner: u64,
    workers: &[u32],
    why: &str,
    arrays: &[u64],
) {
    let _order = if arrays.is_empty() {
        None
    } else {
        Some(c.inner.runs.in_order().await)
    };
    let mut calls = Vec::new();
    for &w in workers {
        if let Ok(handle) = c.inner.workers.handle(w) {
            let mut client = handle.client;
            let request = proto::ReleaseRequest {
                run: owner,
                reason: why.to_owned(),
                arrays: arrays.to_vec(),
            };
            calls.push(async move {
                let _ = tokio::time::timeout(Duration::from_secs(2), client.release(request)).await;
            });
        }
    }
    futures::future::join_all(calls).await;
}
