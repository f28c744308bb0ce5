//! Opening and closing sessions: the line for devices (strictly first
//! come, first served), a client's session stream and its lease, and what a
//! closing session frees.
//!
//! A client in line holds a lease too: it must keep sending heartbeats, or
//! it leaves the line. Leaving is one step under the store's lock, whatever
//! the moment: a client that goes while the line grants it devices leaves
//! no session behind (`InLine`); at most `Limits::waiting` clients wait.

use super::{Sessions, Wait, Waiter};
use crate::{
    error::{Error, Result},
    resource_manager::{Ask, Want},
    transfer, Controller,
};
use pw_wire::proto;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tonic::Status;

/// How long closing a traced session waits for its calls in flight.
const TRACE_WAIT: Duration = Duration::from_secs(5);

use super::stream::{Next, Out, Sender};
use crate::service::Messages;

impl Sessions<'_> {
    /// Serves one client's session stream until it ends: the line, the
    /// grant, then heartbeats renewing the lease; `out` is the stream to
    /// the client.
    pub async fn serve(
        self,
        open: proto::SessionOpen,
        mut incoming: impl Messages<proto::SessionRequest>,
        out: Sender,
    ) {
        let out = Out::new(out, self.c.call_log().is_some());
        let send = |event: proto::session_event::Event| {
            out.send(Ok(proto::SessionEvent { event: Some(event) }));
        };
        let in_line = open.session != 0 && self.lock().waiting.contains_key(&open.session);
        let granted = if in_line {
            self.rejoin(&open, &mut incoming, &send).await
        } else if open.session != 0 {
            self.reattach(&open).await.map(Some)
        } else {
            self.grant_new(&open, &mut incoming, &send).await
        };
        let granted = match granted {
            Ok(Some(g)) => g,
            Ok(None) => return,
            Err(e) => {
                out.send(Err(Status::from(e)));
                return;
            }
        };
        let id = granted.session;
        send(proto::session_event::Event::Granted(granted));
        let why = self.keep_alive(id, &mut incoming, &out).await;
        self.close(id, &why).await;
    }

    /// Opens a new session for `open`: the line, the grant, the journal;
    /// what the client is told (None: it left the line).
    async fn grant_new(
        &self,
        open: &proto::SessionOpen,
        incoming: &mut impl Messages<proto::SessionRequest>,
        send: &(dyn Fn(proto::session_event::Event) + Send + Sync),
    ) -> Result<Option<proto::SessionGranted>> {
        let id = pw_wire::auth::random_id();
        let name = if open.name.is_empty() {
            format!("session {id}")
        } else {
            open.name.clone()
        };
        let timeout = (open.timeout_ms > 0).then(|| Duration::from_millis(open.timeout_ms));
        let want = want(open.devices as usize);
        let Some(devices) = self
            .queue(id, want, &name, timeout, send, Some(incoming))
            .await?
        else {
            return Ok(None);
        };
        self.granted(id, devices).await
    }

    /// What a client granted `devices` for session `id` is told, once the
    /// session is journaled (None: it is gone already).
    async fn granted(&self, id: u64, devices: Vec<i64>) -> Result<Option<proto::SessionGranted>> {
        let lease = self.client_lease();
        let Some(key) = self.lock().live.get(&id).map(|s| s.key.clone()) else {
            return Ok(None);
        };
        if let Err(e) = self.journal_session(id) {
            self.close(id, &format!("it could not be journaled: {e}"))
                .await;
            return Err(e);
        }
        Ok(Some(proto::SessionGranted {
            session: id,
            devices,
            heartbeat_ms: (lease.as_millis() / 4).max(1) as u32,
            lease_ms: lease.as_millis() as u32,
            key,
            journaled: self.c.inner.journal.is_some(),
            ..Default::default()
        }))
    }

    /// Renews session `id`'s lease with every message of its stream, and
    /// does its requests ([`super::stream`]); says why it ended.
    async fn keep_alive(
        &self,
        id: u64,
        incoming: &mut impl Messages<proto::SessionRequest>,
        out: &Out,
    ) -> String {
        let lease = self.client_lease();
        // After a call refused before its host arguments were read: their
        // `input`s are dropped.
        let mut skipping = false;
        // The calls read on this link (each queued for the journal, when it
        // logs it, before the next is read).
        let mut calls = 0;
        loop {
            let Some(deadline) = self.lock().live.get(&id).map(|s| s.lease.deadline()) else {
                return "it was closed".to_owned();
            };
            match tokio::time::timeout_at(deadline.into(), incoming.next_message()).await {
                Ok(Ok(Some(m))) => {
                    self.update(id, |s| s.lease.renew(Instant::now()));
                    let Some(request) = m.request else { continue };
                    let input = matches!(request, proto::session_request::Request::Input(_));
                    if skipping && input {
                        continue;
                    }
                    let call = matches!(request, proto::session_request::Request::Call(_));
                    let next = self.on_request(id, request, incoming, out).await;
                    if let (true, Some(log)) = (call, self.c.call_log()) {
                        calls += 1;
                        log.mark(&out.logged, calls);
                    }
                    match next {
                        Ok(Next::Go) => skipping = false,
                        Ok(Next::SkipInputs) => skipping = true,
                        Err(status) => {
                            let why =
                                format!("its client broke the protocol: {}", status.message());
                            out.send(Err(status));
                            return why;
                        }
                    }
                }
                Ok(Ok(None)) => return "its client closed it".to_owned(),
                Ok(Err(status)) => {
                    return format!("its client's connection failed: {}", status.message())
                }
                Err(_) => {
                    let why = format!("its client's lease lapsed (no heartbeat for {lease:?})");
                    let closed = Error::SessionClosed {
                        session: id,
                        why: why.clone(),
                    };
                    out.send(Err(Status::from(closed)));
                    return why;
                }
            }
        }
    }

    /// Opens a session for a front end that keeps it for as long as its
    /// own connection lasts (the IFRT proxy): `devices` of them (0: every
    /// device), waiting in line up to `timeout`. Returns its id and
    /// devices; [`Sessions::end`] closes it.
    pub async fn open(
        &self,
        name: String,
        devices: usize,
        timeout: Duration,
    ) -> Result<(u64, Vec<i64>)> {
        let id = pw_wire::auth::random_id();
        let granted = self
            .queue(
                id,
                want(devices),
                &name,
                Some(timeout),
                &|_| {},
                None::<&mut tonic::Streaming<proto::SessionRequest>>,
            )
            .await?;
        // Without a stream to watch, only a timeout ends the wait.
        let devices = granted.ok_or(Error::Busy {
            waited: timeout,
            wanted: "devices".into(),
            holders: self.holders(),
        })?;
        Ok((id, devices))
    }

    /// Closes a session [`Sessions::open`] opened.
    pub async fn end(&self, id: u64, why: &str) {
        self.close(id, why).await;
    }

    /// Session `id` (named `name`) waits its turn for `want`, telling its
    /// place in line to `send`, for up to `timeout`; None when its
    /// `client` stream ends first or goes silent for longer than a lease.
    /// Cancelled at any point, it leaves nothing behind.
    pub(super) async fn queue(
        &self,
        id: u64,
        want: Want,
        name: &str,
        timeout: Option<Duration>,
        send: &(dyn Fn(proto::session_event::Event) + Send + Sync),
        client: Option<&mut impl Messages<proto::SessionRequest>>,
    ) -> Result<Option<Vec<i64>>> {
        let (asked, rx) = self.ask(id, want, name)?;
        if matches!(asked, Ask::Queued(_)) {
            self.ticket(id, want, send)?;
        }
        let place = Place {
            id,
            want,
            name,
            timeout,
        };
        self.wait_in_line(place, send, client, asked, rx).await
    }

    /// A new client put in line by a server with a journal: its place is
    /// journaled, and it hears its ticket (the session it will be, and its
    /// key) to take its place back after a restart.
    fn ticket(
        &self,
        id: u64,
        want: Want,
        send: &(dyn Fn(proto::session_event::Event) + Send + Sync),
    ) -> Result<()> {
        if self.c.inner.journal.is_none() {
            return Ok(());
        }
        let waiter = {
            let s = self.lock();
            if s.live.contains_key(&id) {
                // A paused session waiting to resume: journaled already.
                return Ok(());
            }
            s.waiting.get(&id).map(|w| (w.name.clone(), w.key.clone()))
        };
        let Some((name, key)) = waiter else {
            return Ok(());
        };
        let record = proto::JournalWaiter {
            name,
            devices: match want {
                Want::All => 0,
                Want::Count(n) => n as u32,
            },
            key: key.clone(),
            since_unix_ns: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
        };
        if let Err(e) = self.c.journal(|j| j.waiting(id, &record)) {
            self.leave_line(id);
            return Err(e);
        }
        send(proto::session_event::Event::Ticket(proto::SessionTicket {
            session: id,
            key,
        }));
        Ok(())
    }

    /// Client `open.session`, in line when the server restarted, takes its
    /// place back (with its key) and waits on; what it is told once
    /// granted (None: it left the line).
    pub(super) async fn rejoin(
        &self,
        open: &proto::SessionOpen,
        incoming: &mut impl Messages<proto::SessionRequest>,
        send: &(dyn Fn(proto::session_event::Event) + Send + Sync),
    ) -> Result<Option<proto::SessionGranted>> {
        let id = open.session;
        let (tx, rx) = mpsc::unbounded_channel();
        let (name, position) = {
            let mut s = self.lock();
            let position = s.slices.position(id).unwrap_or(1);
            let w = s
                .waiting
                .get_mut(&id)
                .ok_or(Error::NoSession { session: id })?;
            if !pw_wire::auth::same(open.key.as_bytes(), w.key.as_bytes()) {
                return Err(Error::NotYours {
                    session: id,
                    key_header: pw_wire::net::SESSION_KEY,
                });
            }
            if !w.detached {
                return Err(Error::NotReattachable {
                    session: id,
                    why: "its client waits in line already".into(),
                });
            }
            w.detached = false;
            w.tx = tx;
            (w.name.clone(), position)
        };
        tracing::info!("client {id} ({name}) took its place in line back (place {position})");
        let asked = Ask::Queued(position);
        let timeout = (open.timeout_ms > 0).then(|| Duration::from_millis(open.timeout_ms));
        let place = Place {
            id,
            want: Want::All,
            name: &name,
            timeout,
        };
        let Some(devices) = self
            .wait_in_line(place, send, Some(incoming), asked, rx)
            .await?
        else {
            return Ok(None);
        };
        self.granted(id, devices).await
    }

    /// Waits in line (after [`Sessions::ask`] said `asked`), as
    /// [`Sessions::queue`] says.
    async fn wait_in_line(
        &self,
        place: Place<'_>,
        send: &(dyn Fn(proto::session_event::Event) + Send + Sync),
        mut client: Option<&mut impl Messages<proto::SessionRequest>>,
        asked: Ask,
        mut rx: mpsc::UnboundedReceiver<Wait>,
    ) -> Result<Option<Vec<i64>>> {
        let Place {
            id,
            want,
            name,
            timeout,
        } = place;
        let granted = match asked {
            Ask::Granted(d) => d,
            Ask::Refused(why) => return Err(Error::Refused { why }),
            Ask::Queued(position) => {
                let mut in_line = InLine {
                    sessions: *self,
                    id,
                    waiting: true,
                };
                send(proto::session_event::Event::Queued(position as u32));
                let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
                let lease = self.client_lease();
                // The lease runs from the client's last message.
                let mut heard = tokio::time::Instant::now();
                loop {
                    // Whether the client spoke: false when its stream ended,
                    // failed, or was silent a lease long.
                    let spoke = async {
                        match client.as_mut() {
                            Some(c) => matches!(
                                tokio::time::timeout_at(heard + lease, c.next_message()).await,
                                Ok(Ok(Some(_)))
                            ),
                            None => std::future::pending().await,
                        }
                    };
                    let expired = async {
                        match deadline {
                            Some(d) => tokio::time::sleep_until(d).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        w = rx.recv() => match w {
                            Some(Wait::Position(p)) => {
                                send(proto::session_event::Event::Queued(p as u32));
                            }
                            Some(Wait::Granted(d)) => {
                                in_line.waiting = false;
                                break d;
                            }
                            None => return Ok(None),
                        },
                        spoke = spoke => {
                            if !spoke {
                                return Ok(None);
                            }
                            heard = tokio::time::Instant::now();
                        }
                        () = expired => {
                            let holders = self.holders();
                            let wanted = match want {
                                Want::All => "every device".to_owned(),
                                Want::Count(n) => format!("{n} devices"),
                            };
                            return Err(Error::Busy {
                                waited: timeout.unwrap_or_default(),
                                wanted,
                                holders,
                            });
                        }
                    }
                }
            }
        };
        tracing::info!("session {id} ({name}) opened on devices {granted:?}");
        Ok(Some(granted))
    }

    /// Session `id` (named `name`) asks the book for `want`: opened when
    /// granted, else in line, hearing its place on the receiver.
    fn ask(&self, id: u64, want: Want, name: &str) -> Result<(Ask, mpsc::UnboundedReceiver<Wait>)> {
        let (tx, rx) = mpsc::unbounded_channel();
        let registered = self.registered();
        let lease = self.client_lease();
        let most = self.c.inner.config.limits.waiting;
        let mut s = self.lock();
        if s.waiting.len() >= most {
            return Err(Error::OverLimit {
                what: "clients waiting in line for devices".into(),
                asked: s.waiting.len() as u64 + 1,
                limit: most as u64,
                flag: "--max-waiting",
            });
        }
        let asked = s.slices.ask(id, want, &registered);
        let waiter = Waiter {
            name: name.to_owned(),
            since: Instant::now(),
            tx,
            key: pw_wire::auth::random_key(),
            detached: false,
        };
        match &asked {
            Ask::Granted(d) => s.seat(id, waiter, d.clone(), lease),
            Ask::Queued(_) => {
                s.waiting.insert(id, waiter);
            }
            Ask::Refused(_) => {}
        }
        Ok((asked, rx))
    }

    /// A client in line gave up (timeout, or it vanished, or its wait was
    /// cancelled): it leaves the line, or, if the line granted it devices
    /// meanwhile, the session it never took is closed (a paused one gives
    /// them back); in one step.
    pub(super) fn leave_line(&self, id: u64) {
        if let Err(e) = self.c.journal(|j| j.left_line(id)) {
            tracing::error!("client {id}: its leaving the line is not journaled: {e}");
        }
        let devices = self.registered();
        let lease = self.client_lease();
        let mut s = self.lock();
        if s.waiting.remove(&id).is_none() {
            match s.live.get_mut(&id) {
                // A paused session that gave up resuming stays paused.
                Some(x) if x.paused.is_some() => {
                    x.devices.clear();
                    x.size = 0;
                }
                Some(_) => drop(s.live.remove(&id)),
                None => return,
            }
        }
        let granted = s.slices.release(id, &devices);
        s.grant(granted, lease);
    }

    /// Closes session `id`: its slice goes to the line, and every worker
    /// of the slice drops what it held.
    pub(super) async fn close(&self, id: u64, why: &str) {
        // Runs finish in any order: a traced session's trace should hold
        // every call it made.
        if self.traced() {
            let most = Some(tokio::time::Instant::now() + TRACE_WAIT);
            self.calls_below(id, 1, most).await;
        }
        let devices = self.registered();
        let lease = self.client_lease();
        let closed = {
            let mut s = self.lock();
            let closed = s.live.remove(&id);
            // A paused session waiting to resume leaves the line too.
            s.waiting.remove(&id);
            s.closed.push_back((id, why.to_owned()));
            if s.closed.len() > super::CLOSED_KEPT {
                s.closed.pop_front();
            }
            let granted = s.slices.release(id, &devices);
            s.grant(granted, lease);
            closed
        };
        let Some(session) = closed else { return };
        if let Err(e) = self.c.journal(|j| j.session_closed(id)) {
            tracing::error!("session {id}: its close is not journaled: {e}");
        }
        if let Some(p) = &session.paused {
            p.forget();
        }
        self.c.metrics().session_closed(id, &session.name);
        self.trace_closed(id, &session);
        if let Some(dir) = &self.c.inner.config.trace_sessions {
            super::trace::write(dir, id, &session.trace);
        }
        tracing::info!("session {id} closed: {why}");
        let workers: Vec<u32> = devices
            .iter()
            .filter(|(_, ds)| ds.iter().any(|d| session.devices.contains(d)))
            .map(|(w, _)| *w)
            .collect();
        let why = format!("session {id} closed: {why}");
        transfer::release(self.c, id, &workers, &why);
    }

    /// The first `n` devices of session `id`'s slice, waiting (up to the
    /// capacity wait) for it to be topped up when it has fewer.
    pub(crate) async fn slice_of(&self, id: u64, n: usize, name: &str) -> Result<Vec<i64>> {
        let wait = self.c.inner.config.capacity_wait;
        let deadline = Instant::now() + wait;
        loop {
            let have = {
                let mut s = self.lock();
                let devices = &s.get(id)?.devices;
                if devices.len() >= n {
                    return Ok(devices[..n].to_vec());
                }
                devices.len()
            };
            if Instant::now() >= deadline {
                return Err(Error::ShortOfDevices {
                    name: name.to_owned(),
                    needed: n,
                    session: id,
                    have,
                    waited: wait,
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Closes, every second, the sessions that made no request for longer than
/// `Limits::idle` while clients wait in line (and run no call), so that an
/// idle client cannot hold devices others wait for; runs until the
/// controller is dropped. Does nothing without an idle limit.
pub async fn reclaim_idle(c: Controller) {
    let Some(idle) = c.inner.config.limits.idle else {
        return;
    };
    let mut tick = tokio::time::interval(Duration::from_secs(1).min(idle));
    loop {
        tick.tick().await;
        if c.is_last() {
            return;
        }
        let sessions = c.sessions();
        let (idle_ones, waiting) = {
            let s = sessions.lock();
            let ids: Vec<u64> = if s.waiting.is_empty() {
                Vec::new()
            } else {
                s.live
                    .iter()
                    .filter(|(_, x)| {
                        x.calls_running == 0 && x.paused.is_none() && x.used.elapsed() > idle
                    })
                    .map(|(id, _)| *id)
                    .collect()
            };
            (ids, s.waiting.len())
        };
        for id in idle_ones {
            let why = format!(
                "it made no request for {idle:?} while {waiting} client(s) waited for devices (pw-server --idle-timeout-s)"
            );
            sessions.close(id, &why).await;
        }
    }
}

/// Who waits in line, for what, and how long it may.
struct Place<'a> {
    id: u64,
    /// What it asked for (for messages: the book keeps the request).
    want: Want,
    name: &'a str,
    timeout: Option<Duration>,
}

/// A client's place in line, left when dropped while still `waiting`
/// (granted devices it did not take are given back too).
struct InLine<'a> {
    sessions: Sessions<'a>,
    id: u64,
    waiting: bool,
}

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        if self.waiting {
            self.sessions.leave_line(self.id);
        }
    }
}

/// What asking for `devices` devices means (0: every device).
fn want(devices: usize) -> Want {
    match devices {
        0 => Want::All,
        n => Want::Count(n),
    }
}
