//! Buffers filled from the host after they exist
//! (`PJRT_AsyncHostToDeviceTransferManager`).
//!
//! [`Client::buffer_for_async_transfer`] creates a buffer on a device before
//! its bytes are known, with an [`AsyncTransfer`] that writes them later, in
//! chunks. The buffer can be passed to executions at once: they wait until
//! the last chunk has landed. A receiver of bytes from another host creates
//! the destination this way and enqueues its consumers before the bytes
//! arrive. If the bytes never come, [`AsyncTransfer::fail`] makes the buffer
//! an error, so its consumers fail instead of waiting forever.
//!
//! `Send + Sync`: every call goes through the thread-safe C API; chunks must
//! be written in order by one thread at a time (the caller's protocol).

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use super::client::{Client, Device};
use super::sys::{self, Args as _};
use super::{Buffer, Event};
use crate::error::{Error, ErrorCode, Result};
use pw_core::DType;

/// Writes the bytes of one buffer created before them. See the module doc.
pub struct AsyncTransfer {
    client: Client,
    raw: *mut sys::PJRT_AsyncHostToDeviceTransferManager,
    size: usize,
    written: usize,
    finished: bool,
}

// SAFETY: the transfer manager is used through the thread-safe C API only.
unsafe impl Send for AsyncTransfer {}
// SAFETY: as above; `&self` methods only read.
unsafe impl Sync for AsyncTransfer {}

impl Client {
    /// A `dtype[dims]` buffer on `device` whose bytes will be written through
    /// the returned [`AsyncTransfer`].
    pub fn buffer_for_async_transfer(
        &self,
        device: &Device,
        dtype: DType,
        dims: &[usize],
    ) -> Result<(AsyncTransfer, Buffer)> {
        self.check_device(device, "buffer_for_async_transfer")?;
        let memory = device.default_memory().ok_or_else(|| {
            Error::invalid(format!(
                "{device:?} reports no default memory to transfer into"
            ))
        })?;
        let size = dims
            .iter()
            .try_fold(dtype.size_in_bytes(), |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| Error::invalid(format!("a {dtype}{dims:?} buffer overflows")))?;
        let dims64: Vec<i64> = dims
            .iter()
            .map(|&d| i64::try_from(d).map_err(|_| Error::invalid("dimension too large")))
            .collect::<Result<_>>()?;
        let mut spec = sys::PJRT_ShapeSpec::new();
        spec.dims = dims64.as_ptr();
        spec.num_dims = dims64.len();
        spec.element_type = super::pjrt_type(dtype);
        let mut args = sys::PJRT_Client_CreateBuffersForAsyncHostToDevice_Args::new();
        args.client = self.inner.raw;
        args.shape_specs = &mut spec;
        args.num_shape_specs = 1;
        args.memory = memory.raw();
        // SAFETY: valid args; `spec` and `dims64` outlive the call.
        unsafe {
            call!(
                self.api(),
                PJRT_Client_CreateBuffersForAsyncHostToDevice,
                &mut args
            )?
        };
        if args.transfer_manager.is_null() {
            return Err(Error::Pjrt {
                function: "PJRT_Client_CreateBuffersForAsyncHostToDevice",
                code: ErrorCode::Internal,
                message: "returned no transfer manager".into(),
            });
        }
        let transfer = AsyncTransfer {
            client: self.clone(),
            raw: args.transfer_manager,
            size,
            written: 0,
            finished: false,
        };
        let mut retrieve = sys::PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args::new();
        retrieve.transfer_manager = transfer.raw;
        retrieve.buffer_index = 0;
        // SAFETY: valid args on a live manager holding one buffer.
        unsafe {
            call!(
                self.api(),
                PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer,
                &mut retrieve
            )?
        };
        let buffer = Buffer::from_raw(
            self,
            retrieve.buffer_out,
            "PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer",
        )?;
        self.inner.live.transfers.fetch_add(1, Ordering::SeqCst);
        Ok((transfer, buffer))
    }
}

impl AsyncTransfer {
    /// Bytes the buffer holds.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Bytes written so far.
    pub fn written(&self) -> usize {
        self.written
    }

    /// Whether the last chunk was written (or the transfer failed).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Writes the next chunk, `data`, at offset [`AsyncTransfer::written`];
    /// `last` must be set on the chunk that completes the buffer, exactly
    /// when it does. `data` is kept alive until the plugin is done with it.
    pub fn write(&mut self, data: impl AsRef<[u8]> + Send + 'static, last: bool) -> Result<()> {
        if self.finished {
            return Err(Error::invalid("the transfer is already finished"));
        }
        let len = data.as_ref().len();
        let end = self
            .written
            .checked_add(len)
            .filter(|&e| e <= self.size)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "a chunk of {len} bytes at offset {} overruns the {}-byte buffer",
                    self.written, self.size
                ))
            })?;
        if last != (end == self.size) {
            return Err(Error::invalid(format!(
                "the chunk ending at {end} of {} bytes {} the last",
                self.size,
                if last {
                    "is marked but is not"
                } else {
                    "is not marked but is"
                }
            )));
        }
        let mut args = sys::PJRT_AsyncHostToDeviceTransferManager_TransferData_Args::new();
        args.transfer_manager = self.raw;
        args.buffer_index = 0;
        args.data = data.as_ref().as_ptr().cast::<c_void>();
        args.offset = self.written as i64;
        args.transfer_size = len as i64;
        args.is_last_transfer = last;
        // SAFETY: valid args; `data` stays alive until `done_with_h2d_transfer`
        // fires (it moves into that event's callback below).
        unsafe {
            call!(
                self.client.api(),
                PJRT_AsyncHostToDeviceTransferManager_TransferData,
                &mut args
            )?
        };
        self.written = end;
        self.finished = last;
        if args.done_with_h2d_transfer.is_null() {
            // The plugin copied the chunk during the call.
            return Ok(());
        }
        let done = Event::from_raw(
            &self.client,
            args.done_with_h2d_transfer,
            "PJRT_AsyncHostToDeviceTransferManager_TransferData",
        )?;
        done.on_ready(move |_| drop(data))
    }

    /// Makes the buffer an error with `message` (the bytes will not come):
    /// every execution that reads it fails with it.
    pub fn fail(&mut self, message: &str) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        let mut args = sys::PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args::new();
        args.transfer_manager = self.raw;
        args.buffer_index = 0;
        args.error_code = sys::PJRT_Error_Code_DATA_LOSS;
        args.error_message = message.as_ptr().cast();
        args.error_message_size = message.len();
        // SAFETY: valid args; `message` outlives the call.
        unsafe {
            call!(
                self.client.api(),
                PJRT_AsyncHostToDeviceTransferManager_SetBufferError,
                &mut args
            )?
        };
        self.finished = true;
        Ok(())
    }
}

impl Drop for AsyncTransfer {
    /// A transfer dropped unfinished fails its buffer, so nothing waits for
    /// bytes that cannot come any more.
    fn drop(&mut self) {
        if !self.finished {
            if let Err(e) = self.fail("the transfer was abandoned before its last byte") {
                super::plugin::record_unreported_error(e);
            }
        }
        let mut args = sys::PJRT_AsyncHostToDeviceTransferManager_Destroy_Args::new();
        args.transfer_manager = self.raw;
        // SAFETY: valid args; the manager is destroyed once, here.
        if let Err(e) = unsafe {
            call!(
                self.client.api(),
                PJRT_AsyncHostToDeviceTransferManager_Destroy,
                &mut args
            )
        } {
            super::plugin::record_unreported_error(e);
        }
        self.client
            .inner
            .live
            .transfers
            .fetch_sub(1, Ordering::SeqCst);
    }
}
