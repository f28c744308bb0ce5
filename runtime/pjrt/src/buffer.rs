//! Device buffers and transfers.

use std::ffi::c_void;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::client::{Client, Device, Memory};
use super::event::Event;
use super::sys::{self, Args as _};
use crate::error::{Error, ErrorCode, Result};
use pw_core::DType;

/// One array's worth of memory on one device (a `PJRT_Buffer`).
///
/// Owns the C buffer and destroys it on drop. Buffers are immutable once
/// defined; transfers return new buffers. `Send + Sync`.
pub struct Buffer {
    client: Client,
    raw: *mut sys::PJRT_Buffer,
}

// SAFETY: PJRT buffers may be used and destroyed from any thread.
unsafe impl Send for Buffer {}
// SAFETY: as above; `&Buffer` methods only call thread-safe C API functions.
unsafe impl Sync for Buffer {}

/// The dense major-to-minor layout this crate always uses on the host.
struct RowMajor {
    minor_to_major: Vec<i64>,
    layout: sys::PJRT_Buffer_MemoryLayout,
}

impl RowMajor {
    fn new(rank: usize) -> Box<RowMajor> {
        let mut this = Box::new(RowMajor {
            minor_to_major: (0..rank as i64).rev().collect(),
            layout: sys::PJRT_Buffer_MemoryLayout::new(),
        });
        let tiled = sys::PJRT_Buffer_MemoryLayout_Tiled {
            struct_size: std::mem::size_of::<sys::PJRT_Buffer_MemoryLayout_Tiled>(),
            extension_start: std::ptr::null_mut(),
            minor_to_major: this.minor_to_major.as_ptr(),
            minor_to_major_size: this.minor_to_major.len(),
            tile_dims: std::ptr::null(),
            tile_dim_sizes: std::ptr::null(),
            num_tiles: 0,
        };
        this.layout.value.tiled = tiled;
        this.layout.type_ = sys::PJRT_Buffer_MemoryLayout_Type_Tiled;
        this
    }
}

pub(crate) fn dims_i64(dims: &[usize]) -> Result<Vec<i64>> {
    dims.iter()
        .map(|&d| {
            i64::try_from(d)
                .map_err(|_| Error::invalid(format!("dimension {d} does not fit int64")))
        })
        .collect()
}

impl Client {
    /// Copies host data to `device` (`PJRT_Client_BufferFromHostBuffer`).
    ///
    /// `data` holds the elements dense, row-major, in native byte order. The
    /// plugin copies it before returning, so `data` may be reused at once.
    pub fn buffer_from_host(
        &self,
        data: &[u8],
        dtype: DType,
        dims: &[usize],
        device: &Device,
    ) -> Result<Buffer> {
        self.check_device(device, "buffer_from_host")?;
        let elements: usize = dims.iter().product();
        let expected = elements * dtype.size_in_bytes();
        if data.len() != expected {
            return Err(Error::invalid(format!(
                "host data for a {dtype}{dims:?} buffer must be {expected} bytes, got {}",
                data.len()
            )));
        }
        let dims64 = dims_i64(dims)?;
        let mut args = sys::PJRT_Client_BufferFromHostBuffer_Args::new();
        args.client = self.inner.raw;
        args.data = data.as_ptr().cast();
        args.type_ = super::pjrt_type(dtype);
        args.dims = dims64.as_ptr();
        args.num_dims = dims64.len();
        args.host_buffer_semantics = sys::PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
        args.device = device.raw();
        // SAFETY: valid args; `data` and `dims64` outlive the call, during which
        // the plugin copies `data` (kImmutableOnlyDuringCall).
        unsafe { call!(self.api(), PJRT_Client_BufferFromHostBuffer, &mut args)? };
        // The event only says when `data` may be freed: already true.
        let done = Event::from_raw(
            self,
            args.done_with_host_buffer,
            "PJRT_Client_BufferFromHostBuffer",
        );
        let buffer = Buffer::from_raw(self, args.buffer, "PJRT_Client_BufferFromHostBuffer")?;
        drop(done);
        Ok(buffer)
    }

    pub(crate) fn check_device(&self, device: &Device, what: &str) -> Result<()> {
        if !device.client.same_as(self) {
            return Err(Error::invalid(format!(
                "{what}: {device:?} belongs to another client"
            )));
        }
        if !device.is_addressable() {
            return Err(Error::invalid(format!(
                "{what}: {device:?} is not addressable from this process"
            )));
        }
        Ok(())
    }
}

/// Releases the source of a view made by [`Buffer::view_as`] once PJRT frees the view.
unsafe extern "C" fn release_view_source(_device_ptr: *mut c_void, user_arg: *mut c_void) {
    // SAFETY: `user_arg` is the `Box<Arc<Buffer>>` leaked by `view_as`, handed back once.
    let source = unsafe { Box::from_raw(user_arg.cast::<Arc<Buffer>>()) };
    let mut args = sys::PJRT_Buffer_DecreaseExternalReferenceCount_Args::new();
    args.buffer = source.raw;
    // SAFETY: valid args; `view_as` increased the count once.
    if let Err(e) = unsafe {
        call!(
            source.client.api(),
            PJRT_Buffer_DecreaseExternalReferenceCount,
            &mut args
        )
    } {
        super::plugin::record_unreported_error(e);
    }
    drop(source);
}

impl Buffer {
    pub(crate) fn from_raw(
        client: &Client,
        raw: *mut sys::PJRT_Buffer,
        function: &'static str,
    ) -> Result<Buffer> {
        if raw.is_null() {
            return Err(Error::Pjrt {
                function,
                code: ErrorCode::Internal,
                message: "returned no buffer".into(),
            });
        }
        client.inner.live.buffers.fetch_add(1, Ordering::SeqCst);
        Ok(Buffer {
            client: client.clone(),
            raw,
        })
    }

    pub(crate) fn raw(&self) -> *mut sys::PJRT_Buffer {
        self.raw
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The element type (`PJRT_Buffer_ElementType`).
    pub fn dtype(&self) -> Result<DType> {
        let mut args = sys::PJRT_Buffer_ElementType_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer.
        unsafe { call!(self.client.api(), PJRT_Buffer_ElementType, &mut args)? };
        match args.type_ {
            sys::PJRT_Buffer_Type_TOKEN => Err(Error::Token),
            t => super::dtype_of(t)
                .ok_or_else(|| Error::UnsupportedDType(format!("PJRT buffer type {t}"))),
        }
    }

    /// The dimensions (`PJRT_Buffer_Dimensions`).
    pub fn dims(&self) -> Result<Vec<usize>> {
        let mut args = sys::PJRT_Buffer_Dimensions_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer; `dims` lives as long as the buffer.
        let dims = unsafe {
            call!(self.client.api(), PJRT_Buffer_Dimensions, &mut args)?;
            super::client::raw_list(args.dims, args.num_dims)
        };
        Ok(dims.into_iter().map(|d| d.max(0) as usize).collect())
    }

    /// Bytes the buffer occupies on its device.
    pub fn on_device_size(&self) -> Result<usize> {
        let mut args = sys::PJRT_Buffer_OnDeviceSizeInBytes_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer.
        unsafe {
            call!(
                self.client.api(),
                PJRT_Buffer_OnDeviceSizeInBytes,
                &mut args
            )?
        };
        Ok(args.on_device_size_in_bytes)
    }

    pub fn device(&self) -> Result<Device> {
        let mut args = sys::PJRT_Buffer_Device_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer.
        unsafe { call!(self.client.api(), PJRT_Buffer_Device, &mut args)? };
        self.client.device_from_raw(args.device)
    }

    pub fn memory(&self) -> Result<Memory> {
        let mut args = sys::PJRT_Buffer_Memory_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer.
        unsafe { call!(self.client.api(), PJRT_Buffer_Memory, &mut args)? };
        self.client.memory_from_raw(args.memory)
    }

    /// An event that completes when the buffer's data is defined.
    pub fn ready_event(&self) -> Result<Event> {
        let mut args = sys::PJRT_Buffer_ReadyEvent_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer.
        unsafe { call!(self.client.api(), PJRT_Buffer_ReadyEvent, &mut args)? };
        Event::from_raw(&self.client, args.event, "PJRT_Buffer_ReadyEvent")
    }

    /// Blocks until the data is defined; the producer's error, if any.
    pub fn wait_ready(&self) -> Result<()> {
        self.ready_event()?.wait()
    }

    /// Copies the data to the host, dense row-major, waiting for it. A
    /// buffer in host memory is copied from where it lies
    /// ([`Buffer::read_in_place`]); others through `PJRT_Buffer_ToHostBuffer`.
    pub fn to_host(&self) -> Result<Vec<u8>> {
        if let Some(bytes) = self.read_in_place(<[u8]>::to_vec)? {
            return Ok(bytes);
        }
        self.to_host_copy()
    }

    /// [`Buffer::to_host`] through `PJRT_Buffer_ToHostBuffer`, always.
    pub fn to_host_copy(&self) -> Result<Vec<u8>> {
        let dims = self.dims()?;
        let mut layout = RowMajor::new(dims.len());
        let mut args = sys::PJRT_Buffer_ToHostBuffer_Args::new();
        args.src = self.raw;
        args.host_layout = &mut layout.layout;
        // Dense row-major bytes of a whole-byte type: the size is known, and
        // a second call into the plugin is saved.
        match self.dtype() {
            Ok(dtype) => args.dst_size = dims.iter().product::<usize>() * dtype.size_in_bytes(),
            Err(_) => {
                // A null `dst`: the plugin reports the size it needs.
                // SAFETY: valid args on a live buffer; `layout` outlives the call.
                unsafe { call!(self.client.api(), PJRT_Buffer_ToHostBuffer, &mut args)? };
                if !args.event.is_null() {
                    // Not expected for a size query, but owned by us if returned.
                    drop(Event::from_raw(
                        &self.client,
                        args.event,
                        "PJRT_Buffer_ToHostBuffer",
                    ));
                    args.event = std::ptr::null_mut();
                }
            }
        }
        let mut data = vec![0u8; args.dst_size];
        args.dst = data.as_mut_ptr().cast();
        // SAFETY: `dst` has `dst_size` bytes and stays alive until the event completes below.
        unsafe { call!(self.client.api(), PJRT_Buffer_ToHostBuffer, &mut args)? };
        let event = Event::from_raw(&self.client, args.event, "PJRT_Buffer_ToHostBuffer")?;
        event.wait()?;
        Ok(data)
    }

    /// Whether the buffer's bytes lie in host memory (`PJRT_Buffer_IsOnCpu`;
    /// false where the plugin cannot tell). Reading one then needs no
    /// device-to-host copy, which a GPU plugin must not be asked for from
    /// its own completion callbacks.
    pub fn is_on_cpu(&self) -> bool {
        let mut args = sys::PJRT_Buffer_IsOnCpu_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer. A plugin without the entry
        // point simply has no fast path.
        unsafe { call!(self.client.api(), PJRT_Buffer_IsOnCpu, &mut args) }.is_ok()
            && args.is_on_cpu
    }

    /// Calls `f` with the buffer's bytes where they lie, without copying
    /// them: only for a buffer in host memory (`PJRT_Buffer_IsOnCpu`) with a
    /// dense major-to-minor layout of whole bytes; `None` otherwise (use
    /// [`Buffer::to_host`]). Waits for the data to be defined; the buffer is
    /// pinned (`PJRT_Buffer_IncreaseExternalReferenceCount`) while `f` runs.
    pub fn read_in_place<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        if !self.is_on_cpu() {
            return Ok(None);
        }
        let api = self.client.api();
        let dims = self.dims()?;
        let mut args = sys::PJRT_Buffer_GetMemoryLayout_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer; the layout's arrays live as
        // long as the buffer.
        if unsafe { call!(api, PJRT_Buffer_GetMemoryLayout, &mut args) }.is_err()
            || args.layout.type_ != sys::PJRT_Buffer_MemoryLayout_Type_Tiled
        {
            return Ok(None);
        }
        // SAFETY: the plugin filled the tiled variant (checked above).
        let tiled = unsafe { args.layout.value.tiled };
        let rank = dims.len();
        let row_major = tiled.num_tiles == 0
            && tiled.minor_to_major_size == rank
            && (rank == 0
                || !tiled.minor_to_major.is_null()
                    // SAFETY: `minor_to_major_size` elements, owned by the buffer.
                    && unsafe { std::slice::from_raw_parts(tiled.minor_to_major, rank) }
                        .iter()
                        .copied()
                        .eq((0..rank as i64).rev()));
        let dtype = self.dtype()?;
        let dense = dims.iter().product::<usize>() * dtype.size_in_bytes();
        // Sub-byte elements are packed on the device: its bytes are not the host's.
        if !row_major || dtype.is_sub_byte() || self.on_device_size()? != dense {
            return Ok(None);
        }
        self.wait_ready()?;
        let mut pin = sys::PJRT_Buffer_IncreaseExternalReferenceCount_Args::new();
        pin.buffer = self.raw;
        // SAFETY: valid args on a live, defined buffer.
        unsafe { call!(api, PJRT_Buffer_IncreaseExternalReferenceCount, &mut pin)? };
        let mut ptr = sys::PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args::new();
        ptr.buffer = self.raw;
        // SAFETY: valid args on a live, pinned buffer.
        let located = unsafe { call!(api, PJRT_Buffer_OpaqueDeviceMemoryDataPointer, &mut ptr) };
        let outcome =
            located.map(|()| {
                if dense == 0 || ptr.device_memory_ptr.is_null() {
                    f(&[])
                } else {
                    // SAFETY: on a CPU buffer the device memory is this process's
                    // memory: `dense` bytes, defined (waited for) and pinned until
                    // the count is decreased below.
                    f(unsafe {
                        std::slice::from_raw_parts(ptr.device_memory_ptr.cast::<u8>(), dense)
                    })
                }
            });
        let mut unpin = sys::PJRT_Buffer_DecreaseExternalReferenceCount_Args::new();
        unpin.buffer = self.raw;
        // SAFETY: valid args; balanced with the increase above.
        unsafe { call!(api, PJRT_Buffer_DecreaseExternalReferenceCount, &mut unpin)? };
        outcome.map(Some)
    }

    /// Copies the buffer to another device of the same client
    /// (`PJRT_Buffer_CopyToDevice`). Returns without waiting for the copy.
    pub fn copy_to_device(&self, device: &Device) -> Result<Buffer> {
        self.client.check_device(device, "copy_to_device")?;
        let mut args = sys::PJRT_Buffer_CopyToDevice_Args::new();
        args.buffer = self.raw;
        args.dst_device = device.raw();
        // SAFETY: valid args on a live buffer and device of the same client.
        unsafe { call!(self.client.api(), PJRT_Buffer_CopyToDevice, &mut args)? };
        Buffer::from_raw(&self.client, args.dst_buffer, "PJRT_Buffer_CopyToDevice")
    }

    /// Copies the buffer into another memory space (`PJRT_Buffer_CopyToMemory`).
    pub fn copy_to_memory(&self, memory: &Memory) -> Result<Buffer> {
        if !memory.client.same_as(&self.client) {
            return Err(Error::invalid(format!(
                "copy_to_memory: {memory:?} belongs to another client"
            )));
        }
        let mut args = sys::PJRT_Buffer_CopyToMemory_Args::new();
        args.buffer = self.raw;
        args.dst_memory = memory.raw();
        // SAFETY: valid args on a live buffer and memory of the same client.
        unsafe { call!(self.client.api(), PJRT_Buffer_CopyToMemory, &mut args)? };
        Buffer::from_raw(&self.client, args.dst_buffer, "PJRT_Buffer_CopyToMemory")
    }

    /// A copy on the same device. The C API allows a plugin to reject
    /// `CopyToDevice` onto the source's own device (the CPU plugins accept
    /// it); then the copy goes through host memory.
    pub fn duplicate(&self) -> Result<Buffer> {
        let device = self.device()?;
        if let Ok(copy) = self.copy_to_device(&device) {
            return Ok(copy);
        }
        let data = self.to_host()?;
        self.client
            .buffer_from_host(&data, self.dtype()?, &self.dims()?, &device)
    }

    /// A new buffer over the same device memory as `source`, with another
    /// element type and dimensions of the same byte size: no data moves. The
    /// view keeps `source` alive until the view itself is freed.
    ///
    /// Built from `PJRT_Buffer_OpaqueDeviceMemoryDataPointer`, pinned with
    /// `PJRT_Buffer_IncreaseExternalReferenceCount`, and
    /// `PJRT_Client_CreateViewOfDeviceBuffer`. Waits for the data to be defined.
    pub fn view_as(source: &Arc<Buffer>, dtype: DType, dims: &[usize]) -> Result<Buffer> {
        let this = &**source;
        if dtype.is_sub_byte() || this.dtype()?.is_sub_byte() {
            // The device packs them: its bytes are not the host's.
            return Err(Error::invalid(format!(
                "a view as {dtype}{dims:?} of a {}{:?} buffer: views of sub-byte types are not \
                 supported",
                this.dtype()?,
                this.dims()?
            )));
        }
        let old_bytes = this.dims()?.iter().product::<usize>() * this.dtype()?.size_in_bytes();
        let new_bytes = dims.iter().product::<usize>() * dtype.size_in_bytes();
        if old_bytes != new_bytes {
            return Err(Error::invalid(format!(
                "a view as {dtype}{dims:?} needs {new_bytes} bytes, the buffer has {old_bytes}"
            )));
        }
        let dims64 = dims_i64(dims)?;
        let device = this.device()?;
        this.wait_ready()?;
        let api = this.client.api();
        let mut ptr = sys::PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args::new();
        ptr.buffer = this.raw;
        // SAFETY: valid args on a live, defined buffer.
        unsafe { call!(api, PJRT_Buffer_OpaqueDeviceMemoryDataPointer, &mut ptr)? };
        let mut pin = sys::PJRT_Buffer_IncreaseExternalReferenceCount_Args::new();
        pin.buffer = this.raw;
        // SAFETY: as above. Pinned, the pointer stays valid while the source lives.
        unsafe { call!(api, PJRT_Buffer_IncreaseExternalReferenceCount, &mut pin)? };
        let client = this.client.clone();
        let source = Box::into_raw(Box::new(Arc::clone(source)));
        let mut args = sys::PJRT_Client_CreateViewOfDeviceBuffer_Args::new();
        args.client = client.inner.raw;
        args.device_buffer_ptr = ptr.device_memory_ptr;
        args.dims = dims64.as_ptr();
        args.num_dims = dims64.len();
        args.element_type = super::pjrt_type(dtype);
        args.device = device.raw();
        args.memory = device
            .default_memory()
            .map_or(std::ptr::null_mut(), |m| m.raw());
        args.on_delete_callback = Some(release_view_source);
        args.on_delete_callback_arg = source.cast();
        // SAFETY: valid args; `device_memory_ptr` is pinned by the source, which
        // the callback releases when the view is freed.
        let result = unsafe {
            call!(
                client.api(),
                PJRT_Client_CreateViewOfDeviceBuffer,
                &mut args
            )
        };
        if let Err(e) = result {
            // No view, so no callback: undo the pin and release the source here.
            // SAFETY: `source` was leaked above and not handed to the plugin.
            unsafe { release_view_source(std::ptr::null_mut(), source.cast()) };
            return Err(e);
        }
        Buffer::from_raw(&client, args.buffer, "PJRT_Client_CreateViewOfDeviceBuffer")
    }

    /// Frees the device memory now (`PJRT_Buffer_Delete`); the handle stays
    /// valid for [`Buffer::is_deleted`] and is destroyed on drop.
    pub fn delete(&self) -> Result<()> {
        let mut args = sys::PJRT_Buffer_Delete_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer.
        unsafe { call!(self.client.api(), PJRT_Buffer_Delete, &mut args) }
    }

    pub fn is_deleted(&self) -> Result<bool> {
        let mut args = sys::PJRT_Buffer_IsDeleted_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args on a live buffer.
        unsafe { call!(self.client.api(), PJRT_Buffer_IsDeleted, &mut args)? };
        Ok(args.is_deleted)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let mut args = sys::PJRT_Buffer_Destroy_Args::new();
        args.buffer = self.raw;
        // SAFETY: valid args; the buffer is not used again.
        if let Err(e) = unsafe { call!(self.client.api(), PJRT_Buffer_Destroy, &mut args) } {
            super::plugin::record_unreported_error(e);
        }
        self.client
            .inner
            .live
            .buffers
            .fetch_sub(1, Ordering::SeqCst);
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.dtype(), self.dims(), self.device()) {
            (Ok(dtype), Ok(dims), Ok(device)) => write!(f, "Buffer({dtype}{dims:?} on {device:?})"),
            _ => f.write_str("Buffer(<unavailable>)"),
        }
    }
}
