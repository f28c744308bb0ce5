//! Our own binding to the PJRT C API.
//!
//! # Layers
//!
//! * `sys`: hand-written `#[repr(C)]` layouts of the C API subset we use,
//!   following **PJRT C API 0.115** (see that file for the compatibility
//!   argument). The only place with layout facts.
//! * `call!` and `Api::check` (the result layer): every C entry point
//!   is reached through one macro that looks the function up in the plugin's
//!   table ([`Error::Unsupported`] if the plugin's
//!   table is too short or the entry null), calls it, and turns a returned
//!   `PJRT_Error*` into [`Error::Pjrt`] carrying the plugin's message, its status code and the C
//!   function's name. The `PJRT_Error` is always destroyed.
//! * The safe API: [`Plugin`], [`Client`], [`Device`], [`Memory`],
//!   [`Buffer`], [`Event`], [`Executable`], [`LoadedExecutable`]. No `unsafe`
//!   exists outside this crate in the runtime.
//!
//! # Ownership and threads
//!
//! A handle keeps its parent alive: every [`Buffer`], [`Event`] and
//! executable holds a [`Client`] (an `Arc`), and a client holds its
//! [`Plugin`]. So a client is destroyed only after its last buffer, and a
//! plugin is never unloaded (XLA plugins keep process-wide state, thread pools
//! and flag registries, that does not survive `dlclose`). `Drop` never panics:
//! a failing `*_Destroy` is recorded (as are failures inside plugin
//! callbacks) and can be read with [`take_unreported_errors`].
//!
//! The PJRT C API is thread-safe, so [`Plugin`], [`Client`], [`Device`],
//! [`Memory`], [`Buffer`], [`Event`] and the executables are `Send + Sync`.
//!
//! # Leak accounting
//!
//! Each client counts the buffers, events and executables it has handed out
//! and that are still alive ([`Client::live`]); tests assert it returns to
//! zero.
//!
//! # Covered C API functions
//!
//! See [`COVERED_FUNCTIONS`].

// The binding is one of the two FFI crates (with pw-dialect): `unsafe`
// lives here, each block with its SAFETY comment.
#![allow(unsafe_code)]

macro_rules! call {
    ($api:expr, $name:ident, $args:expr) => {{
        let api: &$crate::plugin::Api = $api;
        let offset = ::std::mem::offset_of!($crate::sys::PJRT_Api, $name);
        match api.entry(offset).and_then(|table| table.$name) {
            None => Err(api.unsupported(stringify!($name))),
            Some(f) => {
                let err = f($args);
                api.check(stringify!($name), err)
            }
        }
    }};
}

mod buffer;
mod client;
mod error;
mod event;
mod executable;
mod lapack;
mod linalg;
pub mod os;
mod plugin;
pub(crate) mod sys;
mod transfer;
mod xla_ffi;

pub use buffer::Buffer;
pub use client::{
    Client, ClientOptions, Device, LiveCounts, Memory, NamedValue, CLIENT_OPTIONS_ENV,
};
pub use error::{ApiVersion, Error, ErrorCode, Result};
pub use event::Event;
pub use executable::{
    CompileOptions, DeviceAssignment, Executable, ExecuteOptions, Execution, LoadedExecutable,
    MemoryStats, OptionOverride, OutputType, Program, ProgramFormat,
};
pub use lapack::LAPACK_ENV;
pub use plugin::{recorded_plugin_file, take_unreported_errors, Plugin, PLUGIN_ENV};
pub use sys::MIN_MINOR;
pub use transfer::AsyncTransfer;

use pw_core::DType;

/// The PJRT buffer type of `dtype`.
pub(crate) fn pjrt_type(dtype: DType) -> sys::PJRT_Buffer_Type {
    match dtype {
        DType::Bool => sys::PJRT_Buffer_Type_PRED,
        DType::I8 => sys::PJRT_Buffer_Type_S8,
        DType::I16 => sys::PJRT_Buffer_Type_S16,
        DType::I32 => sys::PJRT_Buffer_Type_S32,
        DType::I64 => sys::PJRT_Buffer_Type_S64,
        DType::U8 => sys::PJRT_Buffer_Type_U8,
        DType::U16 => sys::PJRT_Buffer_Type_U16,
        DType::U32 => sys::PJRT_Buffer_Type_U32,
        DType::U64 => sys::PJRT_Buffer_Type_U64,
        DType::F16 => sys::PJRT_Buffer_Type_F16,
        DType::BF16 => sys::PJRT_Buffer_Type_BF16,
        DType::F32 => sys::PJRT_Buffer_Type_F32,
        DType::F64 => sys::PJRT_Buffer_Type_F64,
        DType::C64 => sys::PJRT_Buffer_Type_C64,
        DType::C128 => sys::PJRT_Buffer_Type_C128,
        DType::F8E5M2 => sys::PJRT_Buffer_Type_F8E5M2,
        DType::F8E4M3FN => sys::PJRT_Buffer_Type_F8E4M3FN,
        DType::F8E4M3B11FNUZ => sys::PJRT_Buffer_Type_F8E4M3B11FNUZ,
        DType::F8E5M2FNUZ => sys::PJRT_Buffer_Type_F8E5M2FNUZ,
        DType::F8E4M3FNUZ => sys::PJRT_Buffer_Type_F8E4M3FNUZ,
        DType::F8E4M3 => sys::PJRT_Buffer_Type_F8E4M3,
        DType::F8E3M4 => sys::PJRT_Buffer_Type_F8E3M4,
        DType::F8E8M0FNU => sys::PJRT_Buffer_Type_F8E8M0FNU,
        DType::I2 => sys::PJRT_Buffer_Type_S2,
        DType::I4 => sys::PJRT_Buffer_Type_S4,
        DType::U2 => sys::PJRT_Buffer_Type_U2,
        DType::U4 => sys::PJRT_Buffer_Type_U4,
        DType::F4E2M1FN => sys::PJRT_Buffer_Type_F4E2M1FN,
    }
}

/// The [`DType`] of a PJRT buffer type; `None` for types pw does not
/// handle (token, and those of newer plugins).
pub(crate) fn dtype_of(ty: sys::PJRT_Buffer_Type) -> Option<DType> {
    DType::ALL.into_iter().find(|d| pjrt_type(*d) == ty)
}

/// The PJRT C API functions this binding calls.
pub const COVERED_FUNCTIONS: &[&str] = &[
    "PJRT_Error_Destroy",
    "PJRT_Error_Message",
    "PJRT_Error_GetCode",
    "PJRT_Plugin_Initialize",
    "PJRT_Plugin_Attributes",
    "PJRT_Event_Destroy",
    "PJRT_Event_IsReady",
    "PJRT_Event_Await",
    "PJRT_Event_OnReady",
    "PJRT_Event_Create",
    "PJRT_Event_Set",
    "PJRT_Client_Create",
    "PJRT_Client_Destroy",
    "PJRT_Client_PlatformName",
    "PJRT_Client_PlatformVersion",
    "PJRT_Client_Devices",
    "PJRT_Client_AddressableDevices",
    "PJRT_Client_AddressableMemories",
    "PJRT_Client_Compile",
    "PJRT_Client_DefaultDeviceAssignment",
    "PJRT_Client_BufferFromHostBuffer",
    "PJRT_Client_CreateViewOfDeviceBuffer",
    "PJRT_DeviceDescription_Id",
    "PJRT_DeviceDescription_ProcessIndex",
    "PJRT_DeviceDescription_Kind",
    "PJRT_DeviceDescription_ToString",
    "PJRT_Device_GetDescription",
    "PJRT_Device_IsAddressable",
    "PJRT_Device_LocalHardwareId",
    "PJRT_Device_AddressableMemories",
    "PJRT_Device_DefaultMemory",
    "PJRT_Memory_Id",
    "PJRT_Memory_Kind",
    "PJRT_Memory_AddressableByDevices",
    "PJRT_Executable_Destroy",
    "PJRT_Executable_Name",
    "PJRT_Executable_NumReplicas",
    "PJRT_Executable_NumPartitions",
    "PJRT_Executable_NumOutputs",
    "PJRT_Executable_OutputElementTypes",
    "PJRT_Executable_OutputDimensions",
    "PJRT_Executable_Fingerprint",
    "PJRT_Executable_OptimizedProgram",
    "PJRT_Executable_GetCostAnalysis",
    "PJRT_Executable_GetCompiledMemoryStats",
    "PJRT_Executable_Serialize",
    "PJRT_Executable_DeserializeAndLoad",
    "PJRT_LoadedExecutable_Destroy",
    "PJRT_LoadedExecutable_GetExecutable",
    "PJRT_LoadedExecutable_AddressableDevices",
    "PJRT_LoadedExecutable_Execute",
    "PJRT_Buffer_Destroy",
    "PJRT_Buffer_ElementType",
    "PJRT_Buffer_Dimensions",
    "PJRT_Buffer_OnDeviceSizeInBytes",
    "PJRT_Buffer_Device",
    "PJRT_Buffer_Memory",
    "PJRT_Buffer_Delete",
    "PJRT_Buffer_IsDeleted",
    "PJRT_Buffer_CopyToDevice",
    "PJRT_Buffer_CopyToMemory",
    "PJRT_Buffer_ToHostBuffer",
    "PJRT_Buffer_ReadyEvent",
    "PJRT_Buffer_IncreaseExternalReferenceCount",
    "PJRT_Buffer_DecreaseExternalReferenceCount",
    "PJRT_Buffer_OpaqueDeviceMemoryDataPointer",
    "PJRT_Buffer_IsOnCpu",
    "PJRT_Buffer_GetMemoryLayout",
    "PJRT_Client_CreateBuffersForAsyncHostToDevice",
    "PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer",
    "PJRT_AsyncHostToDeviceTransferManager_TransferData",
    "PJRT_AsyncHostToDeviceTransferManager_SetBufferError",
    "PJRT_AsyncHostToDeviceTransferManager_Destroy",
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// `COVERED_FUNCTIONS` is exactly the set of functions reached by `call!`
    /// or called through the table directly (the error functions).
    #[test]
    fn covered_functions_match_the_calls() {
        let sources = [
            include_str!("buffer.rs"),
            include_str!("client.rs"),
            include_str!("event.rs"),
            include_str!("executable.rs"),
            include_str!("plugin.rs"),
            include_str!("transfer.rs"),
        ];
        let mut called = BTreeSet::new();
        for source in sources {
            let mut rest = source;
            while let Some(at) = rest.find("PJRT_") {
                let name: String = rest[at..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let before = rest[..at].trim_end();
                // `call!(api, PJRT_X, ...)` and `table.PJRT_X` are calls.
                if before.ends_with(',') && !name.ends_with("_Args") || before.ends_with('.') {
                    called.insert(name.clone());
                }
                rest = &rest[at + name.len()..];
            }
        }
        let covered: BTreeSet<String> = super::COVERED_FUNCTIONS
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(called, covered);
    }
}
