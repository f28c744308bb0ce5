//! The controller's links to a worker ([`pw_wire::link`]): two TCP
//! connections to its data port, opened as it registers. On the command
//! link the controller sends its commands (parts, releases, reads), in
//! order, each written by whoever sends it ([`WorkerLink::send`]: no
//! thread in between, so a command costs one write); on the report link
//! the worker sends its reports (a part done, a read's bytes), which a
//! thread here hands to the runs and the reads as they come. A link that
//! breaks is the worker lost ([`registry::lost`]).

use crate::{registry, Controller};
use pw_wire::{link, proto, MAX_MESSAGE_BYTES};
use std::{
    net::{Shutdown, TcpStream},
    sync::{Arc, Mutex},
    time::Duration,
};

/// How long opening a link may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The controller's end of one worker's links.
pub struct WorkerLink {
    commands: Arc<Mutex<Commands>>,
    /// The TCP connections, to close them when the worker goes.
    sockets: Arc<Mutex<Vec<TcpStream>>>,
}

/// The command link, as the controller writes it.
enum Commands {
    /// Still connecting: what was sent meanwhile, in order.
    Opening(Vec<proto::controller_event::Event>),
    Open(Box<dyn link::Duplex>),
    Broken,
}

impl WorkerLink {
    /// Opens the links to worker `worker`'s data port `address` (in a
    /// thread: commands sent meanwhile wait for them).
    pub fn open(c: &Controller, worker: u32, address: String) -> WorkerLink {
        let commands = Arc::new(Mutex::new(Commands::Opening(Vec::new())));
        let sockets = Arc::new(Mutex::new(Vec::new()));
        let (c, held, opening) = (c.clone(), sockets.clone(), commands.clone());
        let started = std::thread::Builder::new()
            .name(format!("pw-link-w{worker}"))
            .spawn(move || {
                if let Err(why) = serve(&c, worker, &address, &opening, &held) {
                    *lock(&opening) = Commands::Broken;
                    registry::lost(&c, worker, &why);
                }
            });
        if let Err(e) = started {
            tracing::warn!(
                worker,
                "cannot start the thread of worker {worker}'s links: {e}"
            );
        }
        WorkerLink { commands, sockets }
    }

    /// Sends `event` to the worker, after everything sent before: written
    /// at once (a message the socket has room for does not wait), or
    /// queued while the link opens. False once the link is broken.
    #[must_use]
    pub fn send(&self, event: proto::controller_event::Event) -> bool {
        let mut commands = lock(&self.commands);
        match &mut *commands {
            Commands::Opening(queued) => {
                queued.push(event);
                true
            }
            Commands::Open(stream) => {
                let message = proto::ControllerEvent { event: Some(event) };
                if link::write_message(stream, &message).is_ok() {
                    return true;
                }
                *commands = Commands::Broken;
                drop(commands);
                self.close();
                false
            }
            Commands::Broken => false,
        }
    }

    /// Closes both connections (the report reader then ends).
    fn close(&self) {
        for s in lock(&self.sockets).iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for WorkerLink {
    fn drop(&mut self) {
        self.close();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opens both links, starts the reader of reports, then writes what was
/// queued meanwhile; an error says why the links could not be had.
fn serve(
    c: &Controller,
    worker: u32,
    address: &str,
    commands: &Mutex<Commands>,
    sockets: &Mutex<Vec<TcpStream>>,
) -> Result<(), String> {
    let open = |reports: bool| -> Result<Box<dyn link::Duplex>, String> {
        let (mut stream, tcp) = link::connect(link::CONTROLLER, address, CONNECT_TIMEOUT)
            .map_err(|e| format!("the controller cannot open its link to the data port: {e}"))?;
        let hello = proto::ControllerEvent {
            event: Some(proto::controller_event::Event::Link(proto::LinkOpen {
                worker,
                reports,
            })),
        };
        link::write_message(&mut stream, &hello)
            .map_err(|e| format!("its link broke as it opened: {e}"))?;
        lock(sockets).push(tcp);
        Ok(stream)
    };
    let mut stream = open(false)?;
    let mut reports = open(true)?;
    let reader = c.clone();
    std::thread::Builder::new()
        .name(format!("pw-reports-w{worker}"))
        .spawn(move || {
            let why = loop {
                match link::read_message::<proto::WorkerEvent>(&mut reports, MAX_MESSAGE_BYTES) {
                    Ok(Some(proto::WorkerEvent { event: Some(e) })) => route(&reader, worker, e),
                    Ok(Some(_)) => {}
                    Ok(None) => break "its report link closed".to_owned(),
                    Err(e) => break format!("its report link failed: {e}"),
                }
            };
            registry::lost(&reader, worker, &why);
        })
        .map_err(|e| format!("cannot start the reader of its reports: {e}"))?;
    let mut state = lock(commands);
    if let Commands::Opening(queued) = &mut *state {
        for event in std::mem::take(queued) {
            let message = proto::ControllerEvent { event: Some(event) };
            link::write_message(&mut stream, &message)
                .map_err(|e| format!("its command link failed: {e}"))?;
        }
        *state = Commands::Open(stream);
    }
    Ok(())
}

/// A report from `worker`, to whom it concerns.
pub(crate) fn route(c: &Controller, worker: u32, event: proto::worker_event::Event) {
    use proto::worker_event::Event;
    match event {
        Event::PartDone(d) => c.inner.runs.part_done(worker, d),
        Event::Read(r) => c.inner.reads.read(r),
        Event::Stored(s) => c.inner.stores.answer(
            s.id,
            if s.error.is_empty() {
                Ok(())
            } else {
                Err(s.error)
            },
        ),
        Event::Heartbeat(h) => registry::heartbeat(c, worker, h),
        Event::Register(_) => {}
    }
}
