//! Completion events.

use std::ffi::c_void;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::client::Client;
use super::sys::{self, Args as _};
use crate::error::{Error, ErrorCode, Result};

/// A PJRT event: completes once, with success or an error.
///
/// Returned by transfers ([`Buffer::ready_event`](super::Buffer::ready_event))
/// and executions. It can be awaited ([`Event::wait`]), polled, given a
/// callback ([`Event::on_ready`]), and joined with others into one event that
/// later work can depend on ([`Event::after_all`]). `Send + Sync`.
pub struct Event {
    owner: Arc<Owner>,
}

/// Owns the C event; shared with a pending [`Event::after_all`] join so the
/// event outlives the callback that sets it.
struct Owner {
    client: Client,
    raw: *mut sys::PJRT_Event,
}

// SAFETY: PJRT events are thread-safe futures.
unsafe impl Send for Owner {}
// SAFETY: as above; every use goes through the thread-safe C API.
unsafe impl Sync for Owner {}

type Callback = Box<dyn FnOnce(Result<()>) + Send + 'static>;

struct OnReady {
    client: Client,
    callback: Callback,
}

/// Runs a user callback when the plugin reports the event done.
unsafe extern "C" fn on_ready_trampoline(error: *mut sys::PJRT_Error, user_arg: *mut c_void) {
    // SAFETY: `user_arg` is the `Box<OnReady>` leaked by `on_ready`, handed back once.
    let ctx = unsafe { Box::from_raw(user_arg.cast::<OnReady>()) };
    // SAFETY: the callback owns `error` (null or live).
    let status = unsafe { ctx.client.api().check("PJRT_Event_OnReady", error) };
    let OnReady { client, callback } = *ctx;
    // A panic must not unwind into the plugin.
    if std::panic::catch_unwind(AssertUnwindSafe(move || callback(status))).is_err() {
        super::plugin::record_unreported_error(Error::invalid(
            "an Event::on_ready callback panicked",
        ));
    }
    drop(client);
}

impl Event {
    /// Takes ownership of an event the plugin returned (null is an error).
    pub(crate) fn from_raw(
        client: &Client,
        raw: *mut sys::PJRT_Event,
        function: &'static str,
    ) -> Result<Event> {
        if raw.is_null() {
            return Err(Error::Pjrt {
                function,
                code: ErrorCode::Internal,
                message: "returned no event".into(),
            });
        }
        client.inner.live.events.fetch_add(1, Ordering::SeqCst);
        Ok(Event {
            owner: Arc::new(Owner {
                client: client.clone(),
                raw,
            }),
        })
    }

    fn api(&self) -> &super::plugin::Api {
        self.owner.client.api()
    }

    /// Blocks until the event completes; its error, if any.
    pub fn wait(&self) -> Result<()> {
        let mut args = sys::PJRT_Event_Await_Args::new();
        args.event = self.owner.raw;
        // SAFETY: valid args on a live event.
        unsafe { call!(self.api(), PJRT_Event_Await, &mut args) }
    }

    /// Whether the event has completed (successfully or not).
    pub fn is_ready(&self) -> Result<bool> {
        let mut args = sys::PJRT_Event_IsReady_Args::new();
        args.event = self.owner.raw;
        // SAFETY: valid args on a live event.
        unsafe { call!(self.api(), PJRT_Event_IsReady, &mut args)? };
        Ok(args.is_ready)
    }

    /// Calls `callback` with the event's status once it completes, on a
    /// plugin thread (or right away, on this one, if it already has).
    ///
    /// The callback must be quick and must not block on other events of the
    /// same client; it must not hold the last reference to the client either
    /// (dropping it there would destroy the client from one of its own threads).
    pub fn on_ready(&self, callback: impl FnOnce(Result<()>) + Send + 'static) -> Result<()> {
        let ctx = Box::new(OnReady {
            client: self.owner.client.clone(),
            callback: Box::new(callback),
        });
        let user_arg = Box::into_raw(ctx);
        let mut args = sys::PJRT_Event_OnReady_Args::new();
        args.event = self.owner.raw;
        args.callback = Some(on_ready_trampoline);
        args.user_arg = user_arg.cast();
        // SAFETY: valid args on a live event; the trampoline takes `user_arg` back.
        let result = unsafe { call!(self.api(), PJRT_Event_OnReady, &mut args) };
        if result.is_err() {
            // The plugin refused the callback, so it will never run: reclaim it.
            // SAFETY: `user_arg` came from `Box::into_raw` above and was not consumed.
            drop(unsafe { Box::from_raw(user_arg) });
        }
        result
    }

    /// Waits for every event; the first error met.
    pub fn wait_all<'a>(events: impl IntoIterator<Item = &'a Event>) -> Result<()> {
        let mut first = Ok(());
        for event in events {
            let status = event.wait();
            if first.is_ok() {
                first = status;
            }
        }
        first
    }

    /// An event of the plugin that completes when all `events` have: with
    /// the first error among them, or successfully. Needs
    /// `PJRT_Event_Create`/`PJRT_Event_Set` (C API 0.89 and later).
    pub fn after_all(client: &Client, events: &[&Event]) -> Result<Event> {
        let api = client.api();
        let mut create = sys::PJRT_Event_Create_Args::new();
        // SAFETY: valid args.
        unsafe { call!(api, PJRT_Event_Create, &mut create)? };
        let joined = Event::from_raw(client, create.event, "PJRT_Event_Create")?;
        // Check `PJRT_Event_Set` exists before any callback may need it.
        if !client.plugin().provides("PJRT_Event_Set") {
            return Err(api.unsupported("PJRT_Event_Set"));
        }
        let state = Arc::new(JoinState {
            remaining: AtomicUsize::new(events.len() + 1),
            first_error: Mutex::new(None),
            target: Arc::clone(&joined.owner),
        });
        for event in events {
            let state = Arc::clone(&state);
            event.on_ready(move |status| state.arrive(status))?;
        }
        // The extra count keeps the join open until every callback is registered.
        state.arrive(Ok(()));
        Ok(joined)
    }
}

struct JoinState {
    remaining: AtomicUsize,
    first_error: Mutex<Option<Error>>,
    /// The joined event, kept alive until it is set even if the caller drops it.
    target: Arc<Owner>,
}

impl JoinState {
    fn arrive(&self, status: Result<()>) {
        if let Err(e) = status {
            let mut first = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert(e);
        }
        if self.remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let error = self
            .first_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let (code, message) = match &error {
            None => (sys::PJRT_Error_Code_OK, String::new()),
            Some(e) => (
                e.code().unwrap_or(ErrorCode::Unknown).to_raw(),
                e.to_string(),
            ),
        };
        let mut args = sys::PJRT_Event_Set_Args::new();
        args.event = self.target.raw;
        args.error_code = code;
        args.error_message = message.as_ptr().cast();
        args.error_message_size = message.len();
        // SAFETY: valid args; the message is copied by the plugin during the call.
        if let Err(e) = unsafe { call!(self.target.client.api(), PJRT_Event_Set, &mut args) } {
            super::plugin::record_unreported_error(e);
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let mut args = sys::PJRT_Event_Destroy_Args::new();
        args.event = self.raw;
        // SAFETY: valid args; the event is not used again.
        if let Err(e) = unsafe { call!(self.client.api(), PJRT_Event_Destroy, &mut args) } {
            super::plugin::record_unreported_error(e);
        }
        self.client.inner.live.events.fetch_sub(1, Ordering::SeqCst);
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("ready", &self.is_ready().ok())
            .finish()
    }
}
