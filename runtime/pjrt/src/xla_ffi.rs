//! XLA's typed custom calls (XLA FFI), from the handler's side: a call
//! frame read into checked views of its buffers and attributes, the
//! registration-time metadata query answered, and a kernel's failure handed
//! back to XLA as an `XLA_FFI_Error` (which XLA turns into the execution's
//! error). Kernels ([`crate::linalg`]) see only [`Call`] and [`KernelError`].

use std::cell::Cell;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::sys;

/// Why a kernel could not run; becomes the execution's error.
#[derive(Debug)]
pub(crate) struct KernelError {
    code: sys::XLA_FFI_Error_Code,
    message: String,
}

impl KernelError {
    /// The call's operands or attributes are not what the kernel takes.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        KernelError {
            code: sys::XLA_FFI_Error_Code_INVALID_ARGUMENT,
            message: message.into(),
        }
    }

    /// Something the kernel needs is missing on this host.
    pub(crate) fn unavailable(message: impl Into<String>) -> Self {
        KernelError {
            code: sys::XLA_FFI_Error_Code_FAILED_PRECONDITION,
            message: message.into(),
        }
    }

    pub(crate) fn unimplemented(message: impl Into<String>) -> Self {
        KernelError {
            code: sys::XLA_FFI_Error_Code_UNIMPLEMENTED,
            message: message.into(),
        }
    }
}

/// Element types a buffer may be viewed as: plain data whose every bit
/// pattern is a value.
pub(crate) trait Element: Copy + Default + 'static {
    const DTYPE: sys::XLA_FFI_DataType;
    const NAME: &'static str;
}

macro_rules! element {
    ($($ty:ty => $dtype:ident, $name:literal;)*) => {$(
        impl Element for $ty {
            const DTYPE: sys::XLA_FFI_DataType = sys::$dtype;
            const NAME: &'static str = $name;
        }
    )*};
}

/// A single-precision complex number as C and Fortran lay it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct C32 {
    pub re: f32,
    pub im: f32,
}

/// A double-precision complex number as C and Fortran lay it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct C64 {
    pub re: f64,
    pub im: f64,
}

element! {
    i32 => XLA_FFI_DataType_S32, "s32";
    u8 => XLA_FFI_DataType_U8, "u8";
    f32 => XLA_FFI_DataType_F32, "f32";
    f64 => XLA_FFI_DataType_F64, "f64";
    C32 => XLA_FFI_DataType_C64, "c64";
    C64 => XLA_FFI_DataType_C128, "c128";
}

/// One buffer of the call: its element type, shape and memory.
struct Operand {
    dtype: sys::XLA_FFI_DataType,
    dims: Vec<i64>,
    data: *mut c_void,
    elements: usize,
}

impl Operand {
    /// # Safety
    /// `raw` points to a live `XLA_FFI_Buffer` whose `dims` has `rank` entries.
    unsafe fn read(raw: *const c_void, what: &str) -> Result<Operand, KernelError> {
        if raw.is_null() {
            return Err(KernelError::invalid(format!("{what} is missing")));
        }
        // SAFETY: forwarded contract.
        let buffer = unsafe { &*(raw as *const sys::XLA_FFI_Buffer) };
        let rank = usize::try_from(buffer.rank)
            .map_err(|_| KernelError::invalid(format!("{what} has rank {}", buffer.rank)))?;
        let dims = if rank == 0 {
            Vec::new()
        } else {
            // SAFETY: forwarded contract: `rank` dimensions.
            unsafe { std::slice::from_raw_parts(buffer.dims, rank) }.to_vec()
        };
        let mut elements = 1usize;
        for &d in &dims {
            let d = usize::try_from(d)
                .map_err(|_| KernelError::invalid(format!("{what} has dimensions {dims:?}")))?;
            elements = elements
                .checked_mul(d)
                .ok_or_else(|| KernelError::invalid(format!("{what} is too large: {dims:?}")))?;
        }
        Ok(Operand {
            dtype: buffer.dtype,
            dims,
            data: buffer.data,
            elements,
        })
    }

    /// The memory it spans (an element type pw does not know counts as
    /// one byte per element: such operands are never read).
    fn span(&self) -> std::ops::Range<usize> {
        let width = match self.dtype {
            sys::XLA_FFI_DataType_C128 => 16,
            sys::XLA_FFI_DataType_F64 | sys::XLA_FFI_DataType_C64 => 8,
            sys::XLA_FFI_DataType_F32 | sys::XLA_FFI_DataType_S32 => 4,
            _ => 1,
        };
        let start = self.data as usize;
        start..start.saturating_add(self.elements.saturating_mul(width))
    }

    fn check<T: Element>(&self, what: &str) -> Result<(), KernelError> {
        if self.dtype != T::DTYPE {
            return Err(KernelError::invalid(format!(
                "{what} holds XLA element type {}, not {}",
                self.dtype,
                T::NAME
            )));
        }
        if self.data.is_null() && self.elements > 0 {
            return Err(KernelError::invalid(format!("{what} has no memory")));
        }
        Ok(())
    }
}

/// The operands, results and attributes of one custom call.
///
/// Results are distinct buffers (XLA allocates each); an operand may share
/// its memory with a result only through the call's operand–result
/// aliasing, and is then read only through [`Call::result_from`].
pub(crate) struct Call<'f> {
    args: Vec<Operand>,
    rets: Vec<Operand>,
    attrs: Vec<(&'f [u8], Attr)>,
    /// Results already handed out as `&mut` (one bit each).
    taken: Cell<u64>,
}

#[derive(Clone, Copy)]
enum Attr {
    U8(u8),
    I32(i32),
    Other,
}

impl<'f> Call<'f> {
    /// # Safety
    /// `frame` is an execution-stage call frame XLA passed to a handler.
    unsafe fn read(frame: &'f sys::XLA_FFI_CallFrame) -> Result<Call<'f>, KernelError> {
        // SAFETY: forwarded contract: XLA's operand lists are valid.
        let args = unsafe { read_operands(&frame.args, sys::XLA_FFI_ArgType_BUFFER, "operand")? };
        // SAFETY: as above.
        let rets = unsafe { read_operands(&frame.rets, sys::XLA_FFI_RetType_BUFFER, "result")? };
        if rets.len() > 64 {
            return Err(KernelError::invalid("more than 64 results"));
        }
        let attrs = &frame.attrs;
        let count = usize::try_from(attrs.size).unwrap_or(0);
        let mut read = Vec::with_capacity(count);
        for i in 0..count {
            // SAFETY: XLA passes `size` types, names and values.
            let (ty, name, value) = unsafe {
                (
                    *attrs.types.add(i),
                    &**attrs.names.add(i),
                    *attrs.attrs.add(i),
                )
            };
            // SAFETY: a byte span XLA keeps alive for the call.
            let name = unsafe { std::slice::from_raw_parts(name.ptr as *const u8, name.len) };
            let attr = if ty == sys::XLA_FFI_AttrType_SCALAR {
                // SAFETY: a scalar attribute is an `XLA_FFI_Scalar`.
                let scalar = unsafe { &*(value as *const sys::XLA_FFI_Scalar) };
                if matches!(
                    scalar.dtype,
                    sys::XLA_FFI_DataType_U8 | sys::XLA_FFI_DataType_PRED
                ) {
                    // SAFETY: a u8 scalar's value points to one byte.
                    Attr::U8(unsafe { *(scalar.value as *const u8) })
                } else if scalar.dtype == sys::XLA_FFI_DataType_S32 {
                    // SAFETY: an s32 scalar's value points to four bytes.
                    Attr::I32(unsafe { (scalar.value as *const i32).read_unaligned() })
                } else {
                    Attr::Other
                }
            } else {
                Attr::Other
            };
            read.push((name, attr));
        }
        let call = Call {
            args,
            rets,
            attrs: read,
            taken: Cell::new(0),
        };
        call.check_disjoint_results()?;
        Ok(call)
    }

    fn check_disjoint_results(&self) -> Result<(), KernelError> {
        for (i, a) in self.rets.iter().enumerate() {
            for b in &self.rets[i + 1..] {
                if overlap(&a.span(), &b.span()) {
                    return Err(KernelError::invalid("two results share memory"));
                }
            }
        }
        Ok(())
    }

    fn arg(&self, i: usize) -> Result<&Operand, KernelError> {
        self.args.get(i).ok_or_else(|| {
            KernelError::invalid(format!(
                "operand {i} is missing ({} given)",
                self.args.len()
            ))
        })
    }

    fn ret(&self, i: usize) -> Result<&Operand, KernelError> {
        self.rets.get(i).ok_or_else(|| {
            KernelError::invalid(format!("result {i} is missing ({} given)", self.rets.len()))
        })
    }

    /// The shape of operand `i`.
    pub(crate) fn arg_dims(&self, i: usize) -> Result<&[i64], KernelError> {
        Ok(&self.arg(i)?.dims)
    }

    /// The shape of result `i`.
    pub(crate) fn ret_dims(&self, i: usize) -> Result<&[i64], KernelError> {
        Ok(&self.ret(i)?.dims)
    }

    /// Operand `i`, read only. Refused if it overlaps a result (an aliased
    /// operand is read through [`Call::result_from`]).
    pub(crate) fn operand<T: Element>(&self, i: usize) -> Result<&'f [T], KernelError> {
        let what = format!("operand {i}");
        let arg = self.arg(i)?;
        arg.check::<T>(&what)?;
        if arg.elements == 0 {
            return Ok(&[]);
        }
        if self.rets.iter().any(|r| overlap(&r.span(), &arg.span())) {
            return Err(KernelError::invalid(format!(
                "{what} shares memory with a result"
            )));
        }
        // SAFETY: XLA keeps the buffer alive and unchanged for the call; no
        // result (the only memory written) overlaps it.
        Ok(unsafe { std::slice::from_raw_parts(arg.data as *const T, arg.elements) })
    }

    /// Result `i`, to be written. Each result is handed out once.
    pub(crate) fn result<T: Element>(&self, i: usize) -> Result<&'f mut [T], KernelError> {
        let what = format!("result {i}");
        let ret = self.ret(i)?;
        ret.check::<T>(&what)?;
        let bit = 1u64 << i;
        if self.taken.get() & bit != 0 {
            return Err(KernelError::invalid(format!("{what} was taken twice")));
        }
        self.taken.set(self.taken.get() | bit);
        if ret.elements == 0 {
            return Ok(&mut []);
        }
        // SAFETY: results are distinct live buffers (checked at read), each
        // handed out once; XLA reads them only after the call.
        Ok(unsafe { std::slice::from_raw_parts_mut(ret.data as *mut T, ret.elements) })
    }

    /// Result `ret` holding a copy of operand `arg` (of the same type and
    /// size): nothing to copy when XLA aliased the two.
    pub(crate) fn result_from<T: Element>(
        &self,
        ret: usize,
        arg: usize,
    ) -> Result<&'f mut [T], KernelError> {
        let source = self.arg(arg)?;
        source.check::<T>(&format!("operand {arg}"))?;
        let target = self.ret(ret)?;
        if source.elements != target.elements {
            return Err(KernelError::invalid(format!(
                "operand {arg} {:?} and result {ret} {:?} differ in size",
                source.dims, target.dims
            )));
        }
        let out = self.result::<T>(ret)?;
        if source.data as *const T != out.as_ptr() && !out.is_empty() {
            // SAFETY: the operand is live for the call and holds as many
            // elements as `out`; `copy` allows any overlap.
            unsafe {
                std::ptr::copy(source.data as *const T, out.as_mut_ptr(), out.len());
            }
        }
        Ok(out)
    }

    /// The 32-bit integer attribute `name`.
    pub(crate) fn attr_i32(&self, name: &str) -> Result<i32, KernelError> {
        match self.attrs.iter().find(|(n, _)| *n == name.as_bytes()) {
            Some((_, Attr::I32(v))) => Ok(*v),
            Some(_) => Err(KernelError::invalid(format!(
                "attribute `{name}` is not an s32"
            ))),
            None => Err(KernelError::invalid(format!(
                "attribute `{name}` is missing"
            ))),
        }
    }

    /// The boolean attribute `name`.
    pub(crate) fn attr_bool(&self, name: &str) -> Result<bool, KernelError> {
        self.attr_u8(name).map(|v| v != 0)
    }

    /// The one-byte attribute `name` (LAPACK's option characters).
    pub(crate) fn attr_u8(&self, name: &str) -> Result<u8, KernelError> {
        match self.attrs.iter().find(|(n, _)| *n == name.as_bytes()) {
            Some((_, Attr::U8(v))) => Ok(*v),
            Some(_) => Err(KernelError::invalid(format!(
                "attribute `{name}` is not a u8"
            ))),
            None => Err(KernelError::invalid(format!(
                "attribute `{name}` is missing"
            ))),
        }
    }
}

fn overlap(a: &std::ops::Range<usize>, b: &std::ops::Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// # Safety
/// `list` is an operand list of a live call frame.
unsafe fn read_operands(
    list: &sys::XLA_FFI_Operands,
    buffer_type: i32,
    what: &str,
) -> Result<Vec<Operand>, KernelError> {
    let count = usize::try_from(list.size).unwrap_or(0);
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: forwarded contract: `size` types and values.
        let (ty, value) = unsafe { (*list.types.add(i), *list.values.add(i)) };
        let name = format!("{what} {i}");
        if ty != buffer_type {
            return Err(KernelError::invalid(format!("{name} is not a buffer")));
        }
        // SAFETY: a buffer-typed entry is an `XLA_FFI_Buffer`.
        out.push(unsafe { Operand::read(value, &name)? });
    }
    Ok(out)
}

/// A kernel: reads its call, writes its results.
pub(crate) type Kernel = fn(&Call) -> Result<(), KernelError>;

/// The body of every `XLA_FFI_Handler` pw registers: answers XLA's metadata
/// query, runs `kernel` on an execution frame (other stages have nothing to
/// do), and turns a failure or a panic into an `XLA_FFI_Error`.
///
/// # Safety
/// `frame` is the call frame XLA passed to the handler.
pub(crate) unsafe fn handle(
    frame: *mut sys::XLA_FFI_CallFrame,
    name: &str,
    kernel: Kernel,
) -> *mut sys::XLA_FFI_Error {
    if frame.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: forwarded contract.
    let frame = unsafe { &mut *frame };
    // SAFETY: as above: the frame's extension chain is XLA's.
    if unsafe { answer_metadata(frame) } {
        return std::ptr::null_mut();
    }
    if frame.stage != sys::XLA_FFI_ExecutionStage_EXECUTE {
        return std::ptr::null_mut();
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: an execution-stage frame.
        let call = unsafe { Call::read(frame)? };
        kernel(&call)
    }));
    let error = match outcome {
        Ok(Ok(())) => return std::ptr::null_mut(),
        Ok(Err(e)) => e,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            KernelError {
                code: sys::XLA_FFI_Error_Code_INTERNAL,
                message: format!("panicked: {what}"),
            }
        }
    };
    // SAFETY: the frame's API table is XLA's.
    unsafe {
        create_error(
            frame,
            &format!("{name} (pw): {}", error.message),
            error.code,
        )
    }
}

/// Fills in the metadata XLA asks for when a handler is registered (a frame
/// carrying only a metadata extension). Returns whether it was that query.
///
/// # Safety
/// `frame.extension_start` is null or XLA's extension chain.
unsafe fn answer_metadata(frame: &sys::XLA_FFI_CallFrame) -> bool {
    let mut next = frame.extension_start;
    while !next.is_null() {
        // SAFETY: forwarded contract.
        let extension = unsafe { &*next };
        if extension.type_ == sys::XLA_FFI_Extension_Metadata {
            // SAFETY: a metadata extension has this layout.
            let metadata = unsafe { (*(next as *const sys::XLA_FFI_Metadata_Extension)).metadata };
            if !metadata.is_null() {
                // SAFETY: XLA hands writable metadata for the query.
                let metadata = unsafe { &mut *metadata };
                metadata.api_version.major_version = sys::XLA_FFI_API_VERSION.0;
                metadata.api_version.minor_version = sys::XLA_FFI_API_VERSION.1;
                metadata.traits = 0;
            }
            return true;
        }
        next = extension.next;
    }
    false
}

/// # Safety
/// `frame.api` is null or XLA's FFI API table.
unsafe fn create_error(
    frame: &sys::XLA_FFI_CallFrame,
    message: &str,
    code: sys::XLA_FFI_Error_Code,
) -> *mut sys::XLA_FFI_Error {
    let create = if frame.api.is_null() {
        None
    } else {
        // SAFETY: forwarded contract.
        unsafe { (*frame.api).XLA_FFI_Error_Create }
    };
    let Some(create) = create else {
        // No way to report it: a success would leave garbage behind, so stop.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "pw: {message} (and XLA gave no way to report it)"
        );
        std::process::abort();
    };
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let mut args = sys::XLA_FFI_Error_Create_Args {
        struct_size: std::mem::size_of::<sys::XLA_FFI_Error_Create_Args>(),
        extension_start: std::ptr::null_mut(),
        message: text.as_ptr(),
        errc: code,
    };
    // SAFETY: valid args; XLA copies the message.
    unsafe { create(&mut args) }
}
