//! Bytes between the controller and the workers: input shards up (small
//! ones inline in their part's request, the others with `Worker.Put`),
//! values down (`Worker.Fetch`, one replica of each tile; small shards
//! with a `ReadRequest` on the worker's session, [`Reads`]), and releases
//! (a run's buffers, or single arrays of a session: `ReleaseRequest`s on
//! the workers' sessions). Pieces between workers never come here: they go
//! worker to worker (`pw-dataplane`).

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
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
};
use tokio::sync::oneshot;

use pw_wire::net::WorkerClient;

/// What an upload sent: the bytes to each worker, and the shards small
/// enough to travel inline with each worker's part.
#[derive(Default)]
pub(crate) struct Uploaded {
    pub bytes: BTreeMap<u32, u64>,
    pub inline: BTreeMap<u32, Vec<proto::InlineShard>>,
}

/// Uploads host arrays as values of owner `run`, each shard to the worker
/// of its device: shards of at most [`wire::INLINE_SHARD_BYTES`] are
/// returned to go inline with the part (at most [`wire::MAX_INLINE_BYTES`]
/// a worker), the others are put before this returns.
pub(crate) async fn upload(
    c: &Controller,
    run: u64,
    prepared: &Prepared,
    inputs: &[(usize, Arc<HostArray>)],
) -> Result<Uploaded> {
    let mut sent = Uploaded::default();
    let mut inline_bytes: BTreeMap<u32, u64> = BTreeMap::new();
    let mut puts = Vec::new();
    for &(id, ref host) in inputs {
        let value = &prepared.plan.values[id];
        let regions: Vec<_> = (0..value.devices.len()).map(|p| value.region(p)).collect();
        // A shard that is the whole array is the array (no copy).
        let whole = pw_core::geometry::Region::full(&value.shape);
        let shards = if regions.iter().all(|r| *r == whole) {
            vec![host.clone(); regions.len()]
        } else {
            pw_exec::host::split(host, &regions)?
        };
        for (position, (device, shard)) in value.devices.iter().zip(shards).enumerate() {
            let addr = prepared.addr(*device)?;
            let size = shard.bytes().len() as u64;
            *sent.bytes.entry(addr.worker).or_default() += size;
            let inline = inline_bytes.entry(addr.worker).or_default();
            if size <= wire::INLINE_SHARD_BYTES && *inline + size <= wire::MAX_INLINE_BYTES {
                *inline += size;
                sent.inline
                    .entry(addr.worker)
                    .or_default()
                    .push(proto::InlineShard {
                        value: id as u32,
                        position: position as u32,
                        local_device: addr.local,
                        r#type: Some(proto::ArrayType::of(shard.dtype(), shard.shape())),
                        data: bytes::Bytes::copy_from_slice(shard.bytes()),
                    });
                continue;
            }
            let client = c.inner.workers.handle(addr.worker)?.client;
            puts.push(put(client, (run, id, position), addr, shard));
        }
    }
    // A worker that stops answering mid-put (hung, or cut off) holds its
    // put until its lease expires: the upload fails then, as a loss.
    let to: Vec<u32> = sent.bytes.keys().copied().collect();
    tokio::select! {
        outcomes = futures::future::join_all(puts) => {
            for outcome in outcomes {
                outcome?;
            }
        }
        worker = c.inner.workers.any_gone(&to) => return Err(Error::WorkerGone { worker }),
    }
    Ok(sent)
}

/// A shard's bytes, shared with the chunks that carry them (no copy).
struct ShardBytes(Arc<HostArray>);

impl AsRef<[u8]> for ShardBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.bytes()
    }
}

/// Uploads one shard: of value `.1` of owner `.0`, at position `.2`.
async fn put(
    mut client: WorkerClient,
    (run, value, position): (u64, usize, usize),
    addr: DeviceAddr,
    shard: Arc<HostArray>,
) -> Result<()> {
    let t = proto::ArrayType::of(shard.dtype(), shard.shape());
    let data = bytes::Bytes::from_owner(ShardBytes(shard));
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
/// holding it (a small tile with one message each way on the worker's
/// session, [`read`]; a larger one in chunks, `Worker.Fetch`). Returns it
/// and the bytes each worker sent.
pub(crate) async fn fetch_value(
    c: &Controller,
    (owner, key): (u64, usize),
    value: &ValueInfo,
    addrs: &HashMap<i64, DeviceAddr>,
) -> Result<(HostArray, BTreeMap<u32, u64>)> {
    let regions: Vec<_> = (0..value.devices.len()).map(|p| value.region(p)).collect();
    let small = value.shard_bytes() <= wire::MAX_READ_BYTES;
    let mut wanted = Vec::new();
    for (position, region) in regions.iter().enumerate() {
        if regions[..position].contains(region) {
            continue;
        }
        let addr = addrs
            .get(&value.devices[position])
            .copied()
            .ok_or(Error::Unplaced)?;
        if small {
            let worker = addr.worker;
            let at = (owner, key as u64, position as u32);
            wanted.push(futures::future::Either::Left(async move {
                let (_, data) = read(c, worker, at).await?;
                Ok((position, worker, data.to_vec()))
            }));
            continue;
        }
        let client = c.inner.workers.handle(addr.worker)?.client;
        wanted.push(futures::future::Either::Right(fetch(
            client,
            (owner, key, position),
            addr.worker,
        )));
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
            value: value as u64,
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

/// Tells every worker of the run (or session) `owner` to drop it, on
/// their sessions (a worker gone meanwhile has dropped it already).
pub(crate) fn release(c: &Controller, owner: u64, workers: &[u32], why: &str) {
    release_arrays(c, owner, workers, why, &[], &[])
}

/// Tells `workers` to drop `arrays` of owner `owner` and the Python
/// functions `python` (by id) of its sidecar, or all of it when both are
/// empty. Single arrays and functions are dropped in gang order (sent on
/// the command link, in order with parts), so that parts sent earlier still
/// find them; a whole owner at once (on the worker's session: a part
/// waiting for its devices does not hold it up).
pub(crate) fn release_arrays(
    c: &Controller,
    owner: u64,
    workers: &[u32],
    why: &str,
    arrays: &[u64],
    python: &[String],
) {
    let whole = arrays.is_empty() && python.is_empty();
    let _order = (!whole).then(|| c.inner.runs.in_order());
    for &w in workers {
        let request = proto::ReleaseRequest {
            run: owner,
            reason: why.to_owned(),
            arrays: arrays.to_vec(),
            python: python.to_vec(),
            lives_on: false,
        };
        let event = proto::controller_event::Event::Release(request);
        let _ = if whole {
            c.inner.workers.tell(w, event)
        } else {
            c.inner.workers.command(w, event)
        };
    }
}

/// Tells `workers` to drop everything of owner `owner`, which lives on
/// (a paused session: what it sends later is taken). In gang order, on the
/// command link: a resume's loads, sent later on that link, must come
/// after it (on the worker's session it could overtake them and drop what
/// they loaded); the session has no calls running to hold it up.
pub(crate) fn drop_held(c: &Controller, owner: u64, workers: &[u32], why: &str) {
    let _order = c.inner.runs.in_order();
    for &w in workers {
        let request = proto::ReleaseRequest {
            run: owner,
            reason: why.to_owned(),
            lives_on: true,
            ..Default::default()
        };
        let _ = c
            .inner
            .workers
            .command(w, proto::controller_event::Event::Release(request));
    }
}

/// A value fetched: it, and the bytes each worker sent.
pub(crate) type Fetched = (HostArray, BTreeMap<u32, u64>);

/// Commands waiting for their workers' replies (`T`: what a reply
/// carries), by id; a lost worker's fail.
pub(crate) struct Replies<T> {
    waiting: Mutex<Waiting<T>>,
    next: AtomicU64,
}

impl<T> Default for Replies<T> {
    fn default() -> Self {
        Replies {
            waiting: Mutex::default(),
            next: AtomicU64::new(0),
        }
    }
}

/// Each command's worker and where its reply goes.
type Waiting<T> = HashMap<u64, (u32, oneshot::Sender<std::result::Result<T, String>>)>;

impl<T> Replies<T> {
    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiting<T>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `worker` the command `event(id)` makes; its reply, or why
    /// there is none.
    pub async fn ask(
        &self,
        c: &Controller,
        worker: u32,
        event: impl FnOnce(u64) -> proto::controller_event::Event,
    ) -> Result<std::result::Result<T, String>> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiting().insert(id, (worker, tx));
        if let Err(e) = c.inner.workers.command(worker, event(id)) {
            self.waiting().remove(&id);
            return Err(e);
        }
        Ok(rx
            .await
            .unwrap_or_else(|_| Err("the command was dropped".into())))
    }

    /// A worker's reply to command `id`.
    pub fn answer(&self, id: u64, reply: std::result::Result<T, String>) {
        if let Some((_, tx)) = self.waiting().remove(&id) {
            let _ = tx.send(reply);
        }
    }

    /// `worker` was lost: its commands fail.
    pub fn lost(&self, worker: u32, why: &str) {
        let mut waiting = self.waiting();
        let gone: Vec<u64> = waiting
            .iter()
            .filter(|(_, (w, _))| *w == worker)
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            if let Some((_, tx)) = waiting.remove(&id) {
                let _ = tx.send(Err(why.to_owned()));
            }
        }
    }
}

impl Replies<(proto::ArrayType, bytes::Bytes)> {
    /// A worker's `ReadReply`.
    pub fn read(&self, reply: proto::ReadReply) {
        self.answer(
            reply.id,
            match reply.r#type {
                Some(t) if reply.error.is_empty() => Ok((t, reply.data)),
                _ => Err(reply.error),
            },
        );
    }
}

/// Reads shard `position` of value `value` of owner `owner` (a run or a
/// session) from `worker`, once it is ready: one message each way on the
/// worker's session. For shards of at most [`wire::MAX_READ_BYTES`].
pub(crate) async fn read(
    c: &Controller,
    worker: u32,
    (owner, value, position): (u64, u64, u32),
) -> Result<(proto::ArrayType, bytes::Bytes)> {
    let request = |id| {
        proto::controller_event::Event::Read(proto::ReadRequest {
            id,
            owner,
            value,
            position,
            ticket: Vec::new(),
        })
    };
    c.inner
        .reads
        .ask(c, worker, request)
        .await?
        .map_err(|message| Error::Fetch {
            what: format!("value {value}"),
            worker,
            message,
        })
}
