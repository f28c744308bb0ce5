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
    /// Host bytes the buffer holds, and those written so far.
    size: usize,
    written: usize,
    /// For a sub-byte type, what packs host bytes into the device's.
    packer: Option<Packer>,
    finished: bool,
}

/// Packs sub-byte elements, one per host byte (the value in its low bits),
/// as the device holds them: several to a byte, the first in the lowest
/// bits. Chunks may end inside a device byte; the elements left over wait
/// for the next chunk.
struct Packer {
    bits: usize,
    carry: Vec<u8>,
    /// Device bytes written so far.
    written: usize,
}

impl Packer {
    fn new(dtype: DType) -> Option<Packer> {
        dtype.is_sub_byte().then(|| Packer {
            bits: dtype.bits(),
            carry: Vec::new(),
            written: 0,
        })
    }

    fn per_byte(&self) -> usize {
        8 / self.bits
    }

    /// The device bytes `data` completes (all of them when `last`), the
    /// elements of an unfinished byte kept for the next chunk.
    fn pack(&mut self, data: &[u8], last: bool) -> Vec<u8> {
        let per_byte = self.per_byte();
        let mask = (1u8 << self.bits) - 1;
        let mut elements = std::mem::take(&mut self.carry);
        elements.extend_from_slice(data);
        let whole = if last {
            elements.len()
        } else {
            elements.len() - elements.len() % per_byte
        };
        self.carry = elements.split_off(whole);
        let packed: Vec<u8> = elements
            .chunks(per_byte)
            .map(|group| {
                group
                    .iter()
                    .enumerate()
                    .fold(0u8, |byte, (i, e)| byte | ((e & mask) << (i * self.bits)))
            })
            .collect();
        self.written += packed.len();
        packed
    }
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
            packer: Packer::new(dtype),
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
    /// Offsets and sizes are the host's (one byte per element also for the
    /// sub-byte types, which are packed here on their way).
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
        match &mut self.packer {
            Some(packer) => {
                let offset = packer.written;
                let packed = packer.pack(data.as_ref(), last);
                if !packed.is_empty() || last {
                    self.transfer(packed, offset, last)?;
                }
            }
            None => self.transfer(data, self.written, last)?,
        }
        self.written = end;
        Ok(())
    }

    /// Hands `data` to the plugin at device offset `offset`.
    fn transfer(
        &mut self,
        data: impl AsRef<[u8]> + Send + 'static,
        offset: usize,
        last: bool,
    ) -> Result<()> {
        let mut args = sys::PJRT_AsyncHostToDeviceTransferManager_TransferData_Args::new();
        args.transfer_manager = self.raw;
        args.buffer_index = 0;
        args.data = data.as_ref().as_ptr().cast::<c_void>();
        args.offset = offset as i64;
        args.transfer_size = data.as_ref().len() as i64;
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
