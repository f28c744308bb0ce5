//! A session's own stream: once granted, the client's calls, fetches,
//! waits and deletes come on it, in order, with no round trip each (the
//! stream is the session's, so they present no key).
//!
//! * A **call** is done as it is read: its arguments settled, its host
//!   arguments taken (inline in the message when small, else as the
//!   `input`s that follow it), its parts sent; then the next message is
//!   read. It is never answered: its outputs become the arrays the client
//!   named, and a failure is kept on them ([`Session::refuse`] for a call
//!   refused before its outputs existed) and raised where they are used.
//!   While the session has [`crate::Limits::calls_in_flight`] calls
//!   running, the next call waits, and with it the stream: the client is
//!   held back by the transport (back-pressure), never buffered without
//!   bound.
//! * A **fetch** or a **wait** runs beside the stream (it sees the arrays
//!   of every call read before it) and is answered with a `SessionReply`
//!   of its id: an error, or the array's type and bytes in chunks, or (a
//!   direct fetch of large shards) where to take them from the workers
//!   ([`super::direct`]).
//! * A **put** makes an array for a large host argument and is answered at
//!   once with where its shards go ([`super::direct`]).
//! * A **save** or a **load** runs beside the stream and is answered when
//!   its shards are written or on their devices ([`super::checkpoints`]).
//!   A load's array is the session's only once it is answered: the client
//!   passes it to calls after that.
//! * A **pause** or a **resize** refuses every later request but deletes
//!   (and `resume`) at once, then runs beside the stream; a **resume**
//!   too, since it may wait in line for devices ([`super::pause`],
//!   [`super::resize`]).
//! * A **delete** frees arrays at once, in order with the calls.

use super::{trace::CallTimes, Session, Sessions};
use crate::service::Messages;
use crate::{error::Error, sessions::arrays::Fetched};
use pw_exec::HostArray;
use pw_wire::proto;
use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};
use std::time::Instant;
use tokio::sync::mpsc;
use tonic::Status;

/// The client's end of a session stream.
pub(crate) type Sender = mpsc::UnboundedSender<std::result::Result<proto::SessionEvent, Status>>;

/// A session link's way to its client: the stream, and how many of the
/// link's calls the journal holds (`SessionReply.calls_logged`, on every
/// reply; [`crate::journal::calls::CallLog::mark`]).
#[derive(Clone)]
pub(crate) struct Out {
    tx: Sender,
    pub(crate) logged: Arc<AtomicU64>,
}

impl Out {
    /// Without a journal, every call is as logged as it will ever be.
    pub(crate) fn new(tx: Sender, journaled: bool) -> Out {
        let logged = if journaled { 0 } else { u64::MAX };
        Out {
            tx,
            logged: Arc::new(AtomicU64::new(logged)),
        }
    }

    /// Sends `event` to the client; one gone is noticed where its stream
    /// is read.
    pub(crate) fn send(&self, event: std::result::Result<proto::SessionEvent, Status>) {
        let _ = self.tx.send(event);
    }
}

/// The most bytes of host arguments one call carries inline.
pub const MAX_INLINE_ARGUMENTS: u64 = 1 << 20;

/// The first id a client may give an array (the server's stay below).
pub const CLIENT_ARRAYS: u64 = 1 << 62;

/// What reading the stream does after a request.
pub(crate) enum Next {
    Go,
    /// A call was refused before its host arguments were read: the
    /// `input`s that follow it are dropped.
    SkipInputs,
}

impl Sessions<'_> {
    /// Does request `r` of session `id`'s stream (see the module doc); an
    /// error ends the session (the client broke the protocol).
    pub(crate) async fn on_request(
        &self,
        id: u64,
        r: proto::session_request::Request,
        incoming: &mut impl Messages<proto::SessionRequest>,
        out: &Out,
    ) -> std::result::Result<Next, Status> {
        use proto::session_request::Request as R;
        // A request counts as use (a heartbeat does not: see
        // `Limits::idle`).
        if !matches!(r, R::Heartbeat(_)) {
            self.touch(id);
        }
        match r {
            R::Open(_) => Err(Status::invalid_argument("a session opens once")),
            R::Heartbeat(_) | R::Input(_) => Ok(Next::Go),
            R::Call(call) => self.stream_call(id, call, incoming).await,
            R::Fetch(f) => {
                let c = self.c.clone();
                let out = out.clone();
                tokio::spawn(async move { c.sessions().reply_fetch(id, f, &out).await });
                Ok(Next::Go)
            }
            R::Wait(a) => {
                let c = self.c.clone();
                let out = out.clone();
                tokio::spawn(async move {
                    let refs = proto::ArrayRefs {
                        session: id,
                        arrays: a.arrays,
                    };
                    let waited = c.sessions().wait(&refs).await;
                    reply(&out, failed(a.id, waited.err()));
                });
                Ok(Next::Go)
            }
            R::Put(p) => {
                let answer = match self.direct_put(id, &p).await {
                    Ok(direct) => proto::SessionReply {
                        id: p.id,
                        direct,
                        ..Default::default()
                    },
                    Err(e) => failed(p.id, Some(e)),
                };
                reply(out, answer);
                Ok(Next::Go)
            }
            R::Save(save) => {
                // Beside the stream, as a wait: it sees the arrays of every
                // call read before it.
                let c = self.c.clone();
                let out = out.clone();
                tokio::spawn(async move {
                    let saved = c.sessions().save(id, &save).await;
                    reply(&out, failed(save.id, saved.err()));
                });
                Ok(Next::Go)
            }
            R::Load(load) => {
                let c = self.c.clone();
                let out = out.clone();
                tokio::spawn(async move {
                    let loaded = c.sessions().load(id, &load).await;
                    reply(&out, failed(load.id, loaded.err()));
                });
                Ok(Next::Go)
            }
            R::Pause(p) => {
                // Refusing what follows from now on, in stream order.
                match self.begin_pause(id) {
                    Ok(dir) => {
                        let c = self.c.clone();
                        let out = out.clone();
                        tokio::spawn(async move {
                            let paused = c.sessions().pause(id, dir).await;
                            reply(&out, failed(p.id, paused.err()));
                        });
                    }
                    Err(e) => reply(out, failed(p.id, Some(e))),
                }
                Ok(Next::Go)
            }
            R::Resume(r) => {
                // Beside the stream: it may wait in line, while heartbeats
                // keep the session.
                let c = self.c.clone();
                let out = out.clone();
                tokio::spawn(async move {
                    let resumed = c.sessions().resume(id, &r).await;
                    reply(&out, placed(r.id, resumed));
                });
                Ok(Next::Go)
            }
            R::Resize(r) => {
                // Refusing what follows from now on, as a pause.
                match self.begin_resize(id, r.devices as usize) {
                    Ok(begun) => {
                        let c = self.c.clone();
                        let out = out.clone();
                        tokio::spawn(async move {
                            let resized = c.sessions().resize(id, &r, begun).await;
                            reply(&out, placed(r.id, resized));
                        });
                    }
                    Err(e) => reply(out, failed(r.id, Some(e))),
                }
                Ok(Next::Go)
            }
            R::Delete(d) => {
                let refs = proto::ArrayRefs {
                    session: id,
                    arrays: d.arrays,
                };
                self.update(id, |s| s.forget_refused(&refs.arrays));
                self.delete(&refs).map_err(Status::from)?;
                Ok(Next::Go)
            }
        }
    }

    /// `call`, sent again after session `id` was taken back
    /// (`super::reattach`; the client lists in its `release` the outputs it
    /// no longer holds). None when it had run: every output it still holds
    /// is an array of the session; then what it gave up (the arrays it
    /// donated or released) goes, should the restore have kept or made
    /// them again. Otherwise the outputs that survived go, and it runs
    /// again whole: the outputs to drop once it has.
    fn again(&self, id: u64, call: &proto::SessionCall) -> Option<Vec<u64>> {
        let (ran, gone) = {
            let mut s = self.lock();
            let session = s.get(id).ok()?;
            let present = |o: &u64| session.arrays.contains_key(o) || call.release.contains(o);
            if call.outputs.is_empty() || !call.outputs.iter().all(present) {
                let survived = call.outputs.iter().copied();
                (
                    false,
                    survived
                        .filter(|o| session.arrays.contains_key(o))
                        .collect(),
                )
            } else {
                let donated = session
                    .executables
                    .get(&call.executable)
                    .map(|e| super::call::donated(&e.donate, &call.arguments))
                    .unwrap_or_default();
                (
                    true,
                    donated
                        .into_iter()
                        .chain(call.release.iter().copied())
                        .collect(),
                )
            }
        };
        let _ = self.delete(&proto::ArrayRefs {
            session: id,
            arrays: gone,
        });
        let dropped = call.outputs.iter().filter(|o| call.release.contains(o));
        (!ran).then(|| dropped.copied().collect())
    }

    /// A call read from the stream (see the module doc).
    async fn stream_call(
        &self,
        id: u64,
        call: proto::SessionCall,
        incoming: &mut impl Messages<proto::SessionRequest>,
    ) -> std::result::Result<Next, Status> {
        let received = Instant::now();
        let dropped = match call.again {
            true => match self.again(id, &call) {
                Some(dropped) => dropped,
                None => return Ok(Next::SkipInputs),
            },
            false => Vec::new(),
        };
        let outputs = call.outputs.clone();
        let client = (call.client_start_unix_ns, call.client_enqueue_ns);
        let begin = proto::CallBegin {
            session: id,
            executable: call.executable,
            arguments: call.arguments,
            release: call.release,
            outputs: call.outputs,
        };
        let hosts = match self.host_arguments(id, &begin, call.inline, incoming).await {
            Ok(hosts) => hosts,
            Err(Refusal::Call(e)) => {
                self.update(id, |s| s.refuse(&outputs, &e));
                return Ok(Next::SkipInputs);
            }
            Err(Refusal::Stream(status)) => return Err(status),
        };
        let read = Instant::now();
        let held_back = self.room_for_a_call(id).await;
        let room = Instant::now();
        let executable = begin.executable;
        if let Err(e) = self.call(begin, hosts).await {
            self.update(id, |s| s.refuse(&outputs, &e));
        }
        if !dropped.is_empty() {
            let _ = self.delete(&proto::ArrayRefs {
                session: id,
                arrays: dropped,
            });
        }
        let dispatched = Instant::now();
        let mut n = 0;
        self.update(id, |s| {
            s.counters.dispatch_ns += (dispatched - received).as_nanos() as u64;
            n = s.counters.calls;
        });
        if self.traced() {
            let name = self.executable_name(id, executable);
            let times = CallTimes {
                client,
                received,
                read,
                held_back,
                room,
                dispatched,
            };
            self.trace_taken(id, n, &name, &times);
        }
        Ok(Next::Go)
    }

    /// The host arguments of a call: inline, or read from the stream as
    /// they arrive, each checked against what it declares and the limits
    /// first.
    async fn host_arguments(
        &self,
        id: u64,
        begin: &proto::CallBegin,
        inline: Vec<bytes::Bytes>,
        incoming: &mut impl Messages<proto::SessionRequest>,
    ) -> std::result::Result<Vec<HostArray>, Refusal> {
        let limit = self.c.inner.config.limits.request_bytes;
        let types: Vec<&proto::ArrayType> = begin
            .arguments
            .iter()
            .filter_map(|a| match &a.argument {
                Some(proto::call_argument::Argument::Host(t)) => Some(t),
                _ => None,
            })
            .collect();
        let mut declared = 0u64;
        for t in &types {
            let (_, _, bytes) = t.read(limit).map_err(|e| {
                Refusal::Call(Error::OverLimit {
                    what: format!("an argument of a call ({e})"),
                    asked: limit.saturating_add(1),
                    limit,
                    flag: "--max-request-mb",
                })
            })?;
            declared = declared.saturating_add(bytes);
        }
        if types.is_empty() {
            return Ok(Vec::new());
        }
        // Whether the session may take what the call says it sends, before
        // a byte of it is read.
        let _transfer = self.start_transfer(id, declared).map_err(Refusal::Call)?;
        let hosts = if inline.is_empty() {
            crate::service::read_inputs(incoming, types.len(), declared, |m| match m.request {
                Some(proto::session_request::Request::Input(i)) => Some(i),
                _ => None,
            })
            .await
            .map_err(Refusal::Stream)?
            .0
        } else {
            if inline.len() != types.len() || declared > MAX_INLINE_ARGUMENTS {
                return Err(Refusal::Stream(Status::invalid_argument(format!(
                    "a call with {} host arguments ({declared} bytes) carries {} inline (all of them, together at most {MAX_INLINE_ARGUMENTS} bytes, or none)",
                    types.len(),
                    inline.len()
                ))));
            }
            let mut hosts = Vec::with_capacity(types.len());
            for (i, (t, data)) in types.iter().zip(inline).enumerate() {
                let (dtype, dims, bytes) = t.read(limit).map_err(|e| {
                    Refusal::Stream(Status::invalid_argument(format!("host argument #{i}: {e}")))
                })?;
                if data.len() as u64 != bytes {
                    return Err(Refusal::Stream(Status::invalid_argument(format!(
                        "host argument #{i}: {} bytes inline for {dtype}{dims:?} ({bytes} bytes)",
                        data.len()
                    ))));
                }
                hosts.push(
                    HostArray::new(dtype, &dims, data.to_vec())
                        .map_err(|e| Refusal::Stream(Status::invalid_argument(e.to_string())))?,
                );
            }
            hosts
        };
        let received: u64 = hosts.iter().map(|h| h.bytes().len() as u64).sum();
        self.c.status().count_client_bytes(received, 0);
        self.count_bytes(id, received);
        Ok(hosts)
    }

    /// Waits while session `id` has as many calls running as it may;
    /// whether it had to.
    async fn room_for_a_call(&self, id: u64) -> bool {
        let most = self.c.inner.config.limits.calls_in_flight;
        self.calls_below(id, most, None).await
    }

    /// Waits until session `id` (if it is still open) has fewer than `n`
    /// calls running, or `deadline` passes; whether it had to wait.
    pub(crate) async fn calls_below(
        &self,
        id: u64,
        n: u64,
        deadline: Option<tokio::time::Instant>,
    ) -> bool {
        let running = |s: &Self| s.lock().get(id).map_or(0, |x| x.calls_running);
        let mut waited = false;
        loop {
            let ended = match self.lock().get(id) {
                Ok(session) if session.calls_running >= n => session.call_ended.clone(),
                _ => return waited,
            };
            let notified = ended.notified();
            // Checked again once registered: a call may have ended between.
            if running(self) < n {
                return waited;
            }
            waited = true;
            match deadline {
                Some(at) => {
                    if tokio::time::timeout_at(at, notified).await.is_err() {
                        return waited;
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Answers a fetch of session `id`: the array's type, then its bytes in
    /// chunks, each a reply of the fetch's id; or its error.
    async fn reply_fetch(&self, id: u64, f: proto::SessionFetch, out: &Out) {
        let asked = Instant::now();
        let (array, fetched) = (f.array, self.send_fetch(id, f, out).await);
        if let (true, Some(bytes)) = (self.traced(), fetched) {
            self.trace_fetch(id, array, bytes, asked);
        }
    }

    /// Sends the replies of a fetch; the bytes sent, unless it failed.
    async fn send_fetch(&self, id: u64, f: proto::SessionFetch, out: &Out) -> Option<u64> {
        let r = proto::ArrayRef {
            session: id,
            array: f.array,
        };
        if f.direct {
            match self.direct_fetch(&r).await {
                Ok(Some((t, direct, bytes))) => {
                    let answer = proto::SessionReply {
                        id: f.id,
                        r#type: Some(t),
                        direct: Some(direct),
                        ..Default::default()
                    };
                    reply(out, answer);
                    return Some(bytes);
                }
                Ok(None) => {}
                Err(e) => {
                    reply(out, failed(f.id, Some(e)));
                    return None;
                }
            }
        }
        let host = match self.fetch(&r).await {
            Ok(Fetched::Assembled(host)) => host,
            Ok(Fetched::Forwarded(mut stream, bytes)) => {
                self.c.status().count_client_bytes(0, bytes);
                loop {
                    match stream.message().await {
                        Ok(Some(m)) => {
                            let chunk = m.chunk.map(|mut c| {
                                if !f.checksum {
                                    c.crc32 = None;
                                }
                                c
                            });
                            let last = chunk
                                .as_ref()
                                .is_none_or(|c| c.offset + c.data.len() as u64 >= c.total);
                            reply(
                                out,
                                proto::SessionReply {
                                    id: f.id,
                                    r#type: m.r#type,
                                    chunk,
                                    ..Default::default()
                                },
                            );
                            if last {
                                return Some(bytes);
                            }
                        }
                        Ok(None) => return None,
                        Err(s) => {
                            let e = Error::Fetch {
                                what: format!("array {}", f.array),
                                worker: 0,
                                message: s.message().to_owned(),
                            };
                            reply(out, failed(f.id, Some(e)));
                            return None;
                        }
                    }
                }
            }
            Err(e) => {
                reply(out, failed(f.id, Some(e)));
                return None;
            }
        };
        let bytes = host.bytes().len() as u64;
        self.c.status().count_client_bytes(0, bytes);
        let t = proto::ArrayType::of(host.dtype(), host.shape());
        let data = bytes::Bytes::from(host.into_bytes());
        let chunks = if f.checksum {
            pw_wire::chunks(data)
        } else {
            pw_wire::chunk_ranges(data.len())
                .map(|r| proto::Chunk {
                    offset: r.start as u64,
                    total: data.len() as u64,
                    data: data.slice(r),
                    crc32: None,
                })
                .collect()
        };
        for (i, chunk) in chunks.into_iter().enumerate() {
            reply(
                out,
                proto::SessionReply {
                    id: f.id,
                    r#type: (i == 0).then(|| t.clone()),
                    chunk: Some(chunk),
                    ..Default::default()
                },
            );
        }
        Some(bytes)
    }
}

/// Why a call's host arguments were not taken.
enum Refusal {
    /// The call is refused (its outputs say why); the session goes on.
    Call(Error),
    /// The client broke the protocol: the session ends.
    Stream(Status),
}

impl Session {
    /// A call naming `outputs` was refused with `e` before it made them:
    /// each output the call did not make says so where it is used (at
    /// most [`MAX_REFUSED`] are remembered, the oldest forgotten first).
    pub(crate) fn refuse(&mut self, outputs: &[u64], e: &Error) {
        for &array in outputs {
            if self.arrays.contains_key(&array) {
                continue;
            }
            self.refused.insert(array, (e.kind(), e.to_string()));
            self.refused_order.push_back(array);
        }
        while self.refused_order.len() > MAX_REFUSED {
            if let Some(old) = self.refused_order.pop_front() {
                self.refused.remove(&old);
            }
        }
    }

    /// Forgets refused outputs the client deleted.
    fn forget_refused(&mut self, arrays: &[u64]) {
        for a in arrays {
            self.refused.remove(a);
        }
        self.refused_order.retain(|a| self.refused.contains_key(a));
    }

    /// Why array `array` does not exist, when a refused call named it.
    pub(crate) fn refusal(&self, array: u64) -> Option<Error> {
        self.refused
            .get(&array)
            .map(|(kind, why)| Error::CallRefused {
                array,
                why: why.clone(),
                kind: *kind,
            })
    }
}

/// The most outputs of refused calls a session remembers.
pub const MAX_REFUSED: usize = 1 << 16;

/// A reply to request `id`: done, or failed with `e`.
fn failed(id: u64, e: Option<Error>) -> proto::SessionReply {
    let mut reply = proto::SessionReply {
        id,
        ..Default::default()
    };
    if let Some(e) = e {
        reply.error_kind = e.kind().name().to_owned();
        reply.error = e.render();
    }
    reply
}

/// The answer to a resume or a resize: where things are now.
fn placed(id: u64, placed: crate::error::Result<proto::SessionResumed>) -> proto::SessionReply {
    match placed {
        Ok(resumed) => proto::SessionReply {
            id,
            resumed: Some(resumed),
            ..Default::default()
        },
        Err(e) => failed(id, Some(e)),
    }
}

fn reply(out: &Out, mut reply: proto::SessionReply) {
    reply.calls_logged = out.logged.load(Ordering::Relaxed);
    out.send(Ok(proto::SessionEvent {
        event: Some(proto::session_event::Event::Reply(reply)),
    }));
}
