//! A session's arrays: what each is (a value of one of its executables),
//! whether it is computed yet, and what a client does with it: wait for it,
//! fetch it, delete it.

use super::{executables::Executable, lineage::Lineage, Sessions};
use crate::{
    error::{Error, Kind, Result, DATA_LOSS},
    transfer,
};
use pw_core::plan::{ValueId, ValueInfo};
use pw_exec::HostArray;
use pw_wire::proto;
use std::{collections::BTreeMap, sync::Arc, time::Instant};
use tokio::sync::watch;

/// Whether an array is computed yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayState {
    Pending,
    Ready,
    Failed(String),
}

/// One array of a session: a value of one of its executables, laid out as
/// that value, and output `.1` of the call `lineage.0` when it has one.
#[derive(Clone)]
pub(crate) struct SessionArray {
    pub exe: Arc<Executable>,
    pub value: ValueId,
    pub state: Arc<watch::Sender<ArrayState>>,
    pub lineage: Option<(Arc<Lineage>, usize)>,
}

impl SessionArray {
    /// Lost with a worker (and computable again if it has lineage).
    pub fn lost(&self) -> bool {
        matches!(&*self.state.borrow(), ArrayState::Failed(e) if e.starts_with(DATA_LOSS))
    }

    /// Why it failed, if it did.
    pub fn failure(&self) -> Option<String> {
        match &*self.state.borrow() {
            ArrayState::Failed(e) => Some(e.clone()),
            _ => None,
        }
    }

    pub fn info(&self) -> &ValueInfo {
        &self.exe.prepared.plan.values[self.value]
    }

    /// The workers holding its shards.
    pub fn workers(&self) -> Vec<u32> {
        self.exe.prepared.workers_of(self.value)
    }

    /// Waits (until `deadline`) for its run; its failure is an error.
    pub async fn wait_ready(&self, deadline: Instant) -> Result<()> {
        let mut rx = self.state.subscribe();
        let waited =
            tokio::time::timeout_at(deadline.into(), rx.wait_for(|s| *s != ArrayState::Pending))
                .await;
        match waited {
            Err(_) => Err(Error::CallTimedOut),
            Ok(Err(_)) => Err(Error::CallAbandoned),
            Ok(Ok(state)) => match &*state {
                ArrayState::Failed(why) => Err(Error::CallFailed { why: why.clone() }),
                _ => Ok(()),
            },
        }
    }
}

/// An array on its way to a client.
pub enum Fetched {
    /// A worker's stream of the one shard that is all of it (its bytes).
    Forwarded(tonic::Streaming<proto::FetchReply>, u64),
    Assembled(HostArray),
}

impl Sessions<'_> {
    /// Array `r`, once it is ready, computed again (from its lineage) if it
    /// was lost before or while it was waited for; a failed wait is an
    /// error of `kind`.
    pub(crate) async fn ready(&self, r: &proto::ArrayRef, kind: Kind) -> Result<SessionArray> {
        self.active(r.session, "using an array")?;
        let deadline = Instant::now() + self.c.inner.config.run_timeout;
        let mut tries = self.c.inner.config.max_recoveries;
        loop {
            self.restore(r.session, r.array).await?;
            let array = self.lock().array(r.session, r.array)?;
            match array.wait_ready(deadline).await {
                Ok(()) => return Ok(array),
                Err(e) => {
                    let again = self
                        .lock()
                        .array(r.session, r.array)
                        .is_ok_and(|a| a.lost() && a.lineage.is_some());
                    if !again || tries == 0 {
                        return Err(Error::NotReady {
                            array: r.array,
                            source: Box::new(e),
                            kind,
                        });
                    }
                    tries -= 1;
                }
            }
        }
    }

    /// Array `r`, once it is ready: the stream of its worker when one
    /// large shard is all of it (forwarded chunk by chunk, its checksum
    /// checked by the client), else assembled here from its tiles (small
    /// ones read in one message each way).
    pub async fn fetch(&self, r: &proto::ArrayRef) -> Result<Fetched> {
        let array = self.early_read(r).await?;
        let info = array.0.info();
        let whole = pw_core::geometry::Region::full(&info.shape);
        if info.region(0) == whole && info.shard_bytes() > pw_wire::MAX_READ_BYTES {
            return self.forward(r, &array.0).await;
        }
        let fetched = match array.1 {
            Some(Ok(read)) => Ok(read),
            // Read before it was ready and placed as it is now: again.
            _ => {
                transfer::fetch_value(
                    self.c,
                    (r.session, r.array as usize),
                    info,
                    &array.0.exe.prepared.addrs,
                )
                .await
            }
        };
        let (host, bytes) = fetched.map_err(|e| Error::Output {
            what: format!("fetching array {}", r.array),
            source: Box::new(e),
        })?;
        self.update(r.session, |s| {
            s.counters.bytes_from_workers += bytes.values().sum::<u64>();
            s.counters.bytes_to_client += host.bytes().len() as u64;
        });
        Ok(Fetched::Assembled(host))
    }

    /// Array `r` once it is ready ([`Sessions::ready`]) and, when it is
    /// small, its bytes: asked of its workers at once, beside the wait
    /// (a worker answers once its shards are ready), so that a fetch of a
    /// small result costs no round trip after the call that makes it.
    async fn early_read(
        &self,
        r: &proto::ArrayRef,
    ) -> Result<(SessionArray, Option<Result<transfer::Fetched>>)> {
        self.active(r.session, "reading an array")?;
        let now = self.lock().array(r.session, r.array)?;
        let info = now.info().clone();
        if info.shard_bytes() > pw_wire::MAX_READ_BYTES || now.failure().is_some() {
            return Ok((self.ready(r, Kind::Array).await?, None));
        }
        let addrs = now.exe.prepared.addrs.clone();
        let reading = transfer::fetch_value(self.c, (r.session, r.array as usize), &info, &addrs);
        tokio::pin!(reading);
        let mut read = None;
        let ready = tokio::select! {
            biased;
            ready = self.ready(r, Kind::Array) => ready,
            got = &mut reading => {
                read = Some(got);
                self.ready(r, Kind::Array).await
            }
        };
        let array = ready?;
        // The bytes read are the array's only if it is still placed as it
        // was asked for (not computed again elsewhere).
        if !Arc::ptr_eq(&array.exe, &now.exe) {
            return Ok((array, None));
        }
        let read = match read {
            Some(got) => got,
            None => reading.await,
        };
        Ok((array, Some(read)))
    }

    /// The stream of the worker holding array `r`, whose first shard is
    /// all of it.
    async fn forward(&self, r: &proto::ArrayRef, array: &SessionArray) -> Result<Fetched> {
        let info = array.info();
        let addr = array.exe.prepared.addr(info.devices[0])?;
        let mut client = self.c.inner.workers.handle(addr.worker)?.client;
        let stream = client
            .fetch(proto::FetchRequest {
                run: r.session,
                value: r.array,
                position: 0,
            })
            .await
            .map_err(|s| Error::Fetch {
                what: format!("array {}", r.array),
                worker: addr.worker,
                message: s.message().to_owned(),
            })?
            .into_inner();
        let bytes = info.shard_bytes();
        self.update(r.session, |s| {
            s.counters.bytes_from_workers += bytes;
            s.counters.bytes_to_client += bytes;
        });
        Ok(Fetched::Forwarded(stream, bytes))
    }

    /// Waits until every array of `refs` is ready; the first failed one is
    /// an error.
    pub async fn wait(&self, refs: &proto::ArrayRefs) -> Result<()> {
        for &array in &refs.arrays {
            let r = proto::ArrayRef {
                session: refs.session,
                array,
            };
            self.ready(&r, Kind::Run).await?;
        }
        Ok(())
    }

    /// Frees arrays of a session (unknown ones are ignored: deleting twice
    /// is harmless).
    pub fn delete(&self, refs: &proto::ArrayRefs) -> Result<()> {
        let gone: Vec<(u64, Vec<u32>)> = {
            let mut s = self.lock();
            let session = s.get(refs.session)?;
            refs.arrays
                .iter()
                .filter_map(|a| session.arrays.remove(a).map(|x| (*a, x.workers())))
                .collect()
        };
        self.release(refs.session, gone);
        Ok(())
    }

    /// Drops `arrays` (with the workers holding them) of session `id` on
    /// their workers, in gang order.
    pub(crate) fn release(&self, id: u64, arrays: Vec<(u64, Vec<u32>)>) {
        let mut by_worker: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for (a, workers) in arrays {
            for w in workers {
                by_worker.entry(w).or_default().push(a);
            }
        }
        for (w, arrays) in by_worker {
            transfer::release_arrays(self.c, id, &[w], "deleted by its client", &arrays, &[]);
        }
    }
}
