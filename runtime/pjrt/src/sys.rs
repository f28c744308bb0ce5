//! Raw `#[repr(C)]` declarations of the PJRT C API subset this crate uses.
//!
//! This is the only file that states layout facts. The declarations are written
//! by hand for PJRT C API **0.115** (the API of `lammps-jax-pjrt-cpu==0.11.2`,
//! i.e. XLA as of jaxlib 0.11.2):
//!
//! * every argument struct lists its fields in header order up to its last
//!   field at 0.115, so `size_of` equals the plugin's `*_STRUCT_SIZE`: plugins
//!   reject a `struct_size` smaller than their own and accept a bigger one, so
//!   matching the newest plugin keeps older ones (0.81) working too. The test
//!   `struct_sizes_match_plugin` compares these sizes with the ones a live
//!   plugin demands (it reports them in its "Unexpected ... size" errors);
//! * [`PJRT_Api`] is the function table up to the last entry we call
//!   ([`PJRT_Api::PJRT_Event_Set`], added in 0.89). The table is append-only
//!   since 0.57, so an entry's offset is the same in every plugin from 0.57
//!   on; whether a plugin has it is decided by the plugin's own `struct_size`.
//!
//! C enums are plain `c_int` aliases: a value a newer plugin adds must not be
//! undefined behaviour here.
#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code
)]

use std::ffi::{c_char, c_int, c_void};

/// An opaque C object (never constructed in Rust).
macro_rules! opaque {
    ($($name:ident),* $(,)?) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
        }
    )*};
}

opaque!(
    PJRT_Error,
    PJRT_Event,
    PJRT_Client,
    PJRT_Device,
    PJRT_DeviceDescription,
    PJRT_Memory,
    PJRT_Executable,
    PJRT_LoadedExecutable,
    PJRT_Buffer,
    PJRT_Extension_Base,
    PJRT_SerializedExecutable,
    PJRT_ExecuteContext,
    PJRT_TopologyDescription,
    PJRT_SendCallbackInfo,
    PJRT_RecvCallbackInfo,
    PJRT_AsyncHostToDeviceTransferManager,
);

/// Argument structs start with `struct_size` and `extension_start`; this
/// trait builds one zeroed (a valid value for every field type used here:
/// pointers, integers, `bool`, `Option<fn>`) with `struct_size` filled in.
///
/// # Safety
/// Implementors must be `#[repr(C)]` structs whose first field is the
/// `size_t struct_size` and whose other fields are all valid when zeroed.
pub unsafe trait Args: Sized {
    fn new() -> Self {
        // SAFETY: guaranteed by the trait's contract.
        let mut args: Self = unsafe { std::mem::zeroed() };
        // SAFETY: `struct_size` is the first field (offset 0) of a repr(C) struct.
        unsafe { *(&mut args as *mut Self as *mut usize) = std::mem::size_of::<Self>() };
        args
    }
}

macro_rules! args_struct {
    ($( $name:ident { $($field:ident : $ty:ty),* $(,)? } )*) => {$(
        #[repr(C)]
        pub struct $name {
            pub struct_size: usize,
            pub extension_start: *mut PJRT_Extension_Base,
            $(pub $field: $ty,)*
        }
        // SAFETY: repr(C), `struct_size` first, every field valid when zeroed.
        unsafe impl Args for $name {}
    )*};
}

// ---------------------------------------------------------------- errors ---

pub type PJRT_Error_Code = c_int;
pub const PJRT_Error_Code_OK: PJRT_Error_Code = 0;
pub const PJRT_Error_Code_DATA_LOSS: PJRT_Error_Code = 15;

// --------------------------------------------------------- named values ---

pub type PJRT_NamedValue_Type = c_int;
pub const PJRT_NamedValue_kString: PJRT_NamedValue_Type = 0;
pub const PJRT_NamedValue_kInt64: PJRT_NamedValue_Type = 1;
pub const PJRT_NamedValue_kInt64List: PJRT_NamedValue_Type = 2;
pub const PJRT_NamedValue_kFloat: PJRT_NamedValue_Type = 3;
pub const PJRT_NamedValue_kBool: PJRT_NamedValue_Type = 4;

#[repr(C)]
#[derive(Clone, Copy)]
pub union PJRT_NamedValue_Value {
    pub string_value: *const c_char,
    pub int64_value: i64,
    pub int64_array_value: *const i64,
    pub float_value: f32,
    pub bool_value: bool,
}

#[repr(C)]
pub struct PJRT_NamedValue {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub name: *const c_char,
    pub name_size: usize,
    pub type_: PJRT_NamedValue_Type,
    pub value: PJRT_NamedValue_Value,
    /// Elements for lists and strings, 1 for scalars.
    pub value_size: usize,
}
// SAFETY: repr(C), `struct_size` first, every field valid when zeroed.
unsafe impl Args for PJRT_NamedValue {}

// ----------------------------------------------------------- buffer types ---

pub type PJRT_Buffer_Type = c_int;
pub const PJRT_Buffer_Type_INVALID: PJRT_Buffer_Type = 0;
pub const PJRT_Buffer_Type_PRED: PJRT_Buffer_Type = 1;
pub const PJRT_Buffer_Type_S8: PJRT_Buffer_Type = 2;
pub const PJRT_Buffer_Type_S16: PJRT_Buffer_Type = 3;
pub const PJRT_Buffer_Type_S32: PJRT_Buffer_Type = 4;
pub const PJRT_Buffer_Type_S64: PJRT_Buffer_Type = 5;
pub const PJRT_Buffer_Type_U8: PJRT_Buffer_Type = 6;
pub const PJRT_Buffer_Type_U16: PJRT_Buffer_Type = 7;
pub const PJRT_Buffer_Type_U32: PJRT_Buffer_Type = 8;
pub const PJRT_Buffer_Type_U64: PJRT_Buffer_Type = 9;
pub const PJRT_Buffer_Type_F16: PJRT_Buffer_Type = 10;
pub const PJRT_Buffer_Type_F32: PJRT_Buffer_Type = 11;
pub const PJRT_Buffer_Type_F64: PJRT_Buffer_Type = 12;
pub const PJRT_Buffer_Type_BF16: PJRT_Buffer_Type = 13;
pub const PJRT_Buffer_Type_C64: PJRT_Buffer_Type = 14;
pub const PJRT_Buffer_Type_C128: PJRT_Buffer_Type = 15;
pub const PJRT_Buffer_Type_F8E5M2: PJRT_Buffer_Type = 16;
pub const PJRT_Buffer_Type_F8E4M3FN: PJRT_Buffer_Type = 17;
pub const PJRT_Buffer_Type_F8E4M3B11FNUZ: PJRT_Buffer_Type = 18;
pub const PJRT_Buffer_Type_F8E5M2FNUZ: PJRT_Buffer_Type = 19;
pub const PJRT_Buffer_Type_F8E4M3FNUZ: PJRT_Buffer_Type = 20;
pub const PJRT_Buffer_Type_S4: PJRT_Buffer_Type = 21;
pub const PJRT_Buffer_Type_U4: PJRT_Buffer_Type = 22;
pub const PJRT_Buffer_Type_TOKEN: PJRT_Buffer_Type = 23;
pub const PJRT_Buffer_Type_S2: PJRT_Buffer_Type = 24;
pub const PJRT_Buffer_Type_U2: PJRT_Buffer_Type = 25;
pub const PJRT_Buffer_Type_F8E4M3: PJRT_Buffer_Type = 26;
pub const PJRT_Buffer_Type_F8E3M4: PJRT_Buffer_Type = 27;
pub const PJRT_Buffer_Type_F8E8M0FNU: PJRT_Buffer_Type = 28;
pub const PJRT_Buffer_Type_F4E2M1FN: PJRT_Buffer_Type = 29;

pub type PJRT_HostBufferSemantics = c_int;
/// The plugin copies `data` before `BufferFromHostBuffer` returns.
pub const PJRT_HostBufferSemantics_kImmutableOnlyDuringCall: PJRT_HostBufferSemantics = 0;

pub type PJRT_Buffer_MemoryLayout_Type = c_int;
pub const PJRT_Buffer_MemoryLayout_Type_Tiled: PJRT_Buffer_MemoryLayout_Type = 0;
pub const PJRT_Buffer_MemoryLayout_Type_Strides: PJRT_Buffer_MemoryLayout_Type = 1;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PJRT_Buffer_MemoryLayout_Tiled {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub minor_to_major: *const i64,
    pub minor_to_major_size: usize,
    pub tile_dims: *const i64,
    pub tile_dim_sizes: *const usize,
    pub num_tiles: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PJRT_Buffer_MemoryLayout_Strides {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub byte_strides: *const i64,
    pub num_byte_strides: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union PJRT_Buffer_MemoryLayout_Value {
    pub tiled: PJRT_Buffer_MemoryLayout_Tiled,
    pub strides: PJRT_Buffer_MemoryLayout_Strides,
}

#[repr(C)]
pub struct PJRT_Buffer_MemoryLayout {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub value: PJRT_Buffer_MemoryLayout_Value,
    pub type_: PJRT_Buffer_MemoryLayout_Type,
}
// SAFETY: repr(C), `struct_size` first, every field valid when zeroed.
unsafe impl Args for PJRT_Buffer_MemoryLayout {}

/// Called by the plugin when `PJRT_Event_OnReady`'s event completes; owns `error`.
pub type PJRT_Event_OnReadyCallback =
    Option<unsafe extern "C" fn(error: *mut PJRT_Error, user_arg: *mut c_void)>;

/// Frees what `PJRT_Executable_Serialize` returned.
pub type PJRT_SerializedExecutableDeleter =
    Option<unsafe extern "C" fn(exec: *mut PJRT_SerializedExecutable)>;

/// Called when a view buffer made by `PJRT_Client_CreateViewOfDeviceBuffer` is freed.
pub type PJRT_OnDeleteCallback =
    Option<unsafe extern "C" fn(device_buffer_ptr: *mut c_void, user_arg: *mut c_void)>;

#[repr(C)]
pub struct PJRT_Program {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub code: *mut c_char,
    pub code_size: usize,
    pub format: *const c_char,
    pub format_size: usize,
}
// SAFETY: repr(C), `struct_size` first, every field valid when zeroed.
unsafe impl Args for PJRT_Program {}

#[repr(C)]
pub struct PJRT_ExecuteOptions {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub send_callbacks: *mut *mut PJRT_SendCallbackInfo,
    pub recv_callbacks: *mut *mut PJRT_RecvCallbackInfo,
    pub num_send_ops: usize,
    pub num_recv_ops: usize,
    pub launch_id: c_int,
    pub non_donatable_input_indices: *const i64,
    pub num_non_donatable_input_indices: usize,
    pub context: *mut PJRT_ExecuteContext,
    pub call_location: *const c_char,
    pub num_tasks: usize,
    pub task_ids: *mut c_int,
    pub incarnation_ids: *mut i64,
}
// SAFETY: repr(C), `struct_size` first, every field valid when zeroed.
unsafe impl Args for PJRT_ExecuteOptions {}

args_struct! {
    PJRT_Api_Version { major_version: c_int, minor_version: c_int }

    PJRT_Error_Destroy_Args { error: *mut PJRT_Error }
    PJRT_Error_Message_Args { error: *const PJRT_Error, message: *const c_char, message_size: usize }
    PJRT_Error_GetCode_Args { error: *const PJRT_Error, code: PJRT_Error_Code }

    PJRT_Plugin_Initialize_Args {}
    PJRT_Plugin_Attributes_Args { attributes: *const PJRT_NamedValue, num_attributes: usize }

    PJRT_Event_Destroy_Args { event: *mut PJRT_Event }
    PJRT_Event_IsReady_Args { event: *mut PJRT_Event, is_ready: bool }
    PJRT_Event_Error_Args { event: *mut PJRT_Event }
    PJRT_Event_Await_Args { event: *mut PJRT_Event }
    PJRT_Event_OnReady_Args {
        event: *mut PJRT_Event,
        callback: PJRT_Event_OnReadyCallback,
        user_arg: *mut c_void,
    }
    PJRT_Event_Create_Args { event: *mut PJRT_Event }
    PJRT_Event_Set_Args {
        event: *mut PJRT_Event,
        error_code: PJRT_Error_Code,
        error_message: *const c_char,
        error_message_size: usize,
    }

    PJRT_Client_Create_Args {
        create_options: *const PJRT_NamedValue,
        num_options: usize,
        kv_get_callback: *mut c_void,
        kv_get_user_arg: *mut c_void,
        kv_put_callback: *mut c_void,
        kv_put_user_arg: *mut c_void,
        client: *mut PJRT_Client,
        kv_try_get_callback: *mut c_void,
        kv_try_get_user_arg: *mut c_void,
    }
    PJRT_Client_Destroy_Args { client: *mut PJRT_Client }
    PJRT_Client_PlatformName_Args {
        client: *mut PJRT_Client,
        platform_name: *const c_char,
        platform_name_size: usize,
    }
    PJRT_Client_PlatformVersion_Args {
        client: *mut PJRT_Client,
        platform_version: *const c_char,
        platform_version_size: usize,
    }
    PJRT_Client_Devices_Args {
        client: *mut PJRT_Client,
        devices: *const *mut PJRT_Device,
        num_devices: usize,
    }
    PJRT_Client_AddressableDevices_Args {
        client: *mut PJRT_Client,
        addressable_devices: *const *mut PJRT_Device,
        num_addressable_devices: usize,
    }
    PJRT_Client_AddressableMemories_Args {
        client: *mut PJRT_Client,
        addressable_memories: *const *mut PJRT_Memory,
        num_addressable_memories: usize,
    }
    PJRT_Client_Compile_Args {
        client: *mut PJRT_Client,
        program: *const PJRT_Program,
        compile_options: *const c_char,
        compile_options_size: usize,
        executable: *mut PJRT_LoadedExecutable,
    }
    PJRT_Client_DefaultDeviceAssignment_Args {
        client: *mut PJRT_Client,
        num_replicas: c_int,
        num_partitions: c_int,
        default_assignment_size: usize,
        default_assignment: *mut c_int,
    }
    PJRT_Client_BufferFromHostBuffer_Args {
        client: *mut PJRT_Client,
        data: *const c_void,
        type_: PJRT_Buffer_Type,
        dims: *const i64,
        num_dims: usize,
        byte_strides: *const i64,
        num_byte_strides: usize,
        host_buffer_semantics: PJRT_HostBufferSemantics,
        device: *mut PJRT_Device,
        memory: *mut PJRT_Memory,
        device_layout: *mut PJRT_Buffer_MemoryLayout,
        done_with_host_buffer: *mut PJRT_Event,
        buffer: *mut PJRT_Buffer,
    }
    PJRT_Client_CreateViewOfDeviceBuffer_Args {
        client: *mut PJRT_Client,
        device_buffer_ptr: *mut c_void,
        dims: *const i64,
        num_dims: usize,
        element_type: PJRT_Buffer_Type,
        layout: *mut PJRT_Buffer_MemoryLayout,
        device: *mut PJRT_Device,
        on_delete_callback: PJRT_OnDeleteCallback,
        on_delete_callback_arg: *mut c_void,
        stream: isize,
        buffer: *mut PJRT_Buffer,
        memory: *mut PJRT_Memory,
    }

    PJRT_ShapeSpec {
        dims: *const i64,
        num_dims: usize,
        element_type: PJRT_Buffer_Type,
    }
    PJRT_Client_CreateBuffersForAsyncHostToDevice_Args {
        client: *mut PJRT_Client,
        shape_specs: *mut PJRT_ShapeSpec,
        num_shape_specs: usize,
        device_layouts: *mut *mut PJRT_Buffer_MemoryLayout,
        num_device_layouts: usize,
        memory: *mut PJRT_Memory,
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
    }
    PJRT_AsyncHostToDeviceTransferManager_Destroy_Args {
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
    }
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args {
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
        buffer_index: c_int,
        data: *const c_void,
        offset: i64,
        transfer_size: i64,
        is_last_transfer: bool,
        done_with_h2d_transfer: *mut PJRT_Event,
    }
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args {
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
        buffer_index: c_int,
        buffer_out: *mut PJRT_Buffer,
    }
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args {
        transfer_manager: *mut PJRT_AsyncHostToDeviceTransferManager,
        buffer_index: c_int,
        error_code: PJRT_Error_Code,
        error_message: *const c_char,
        error_message_size: usize,
    }

    PJRT_DeviceDescription_Id_Args { device_description: *mut PJRT_DeviceDescription, id: c_int }
    PJRT_DeviceDescription_ProcessIndex_Args {
        device_description: *mut PJRT_DeviceDescription,
        process_index: c_int,
    }
    PJRT_DeviceDescription_Kind_Args {
        device_description: *mut PJRT_DeviceDescription,
        device_kind: *const c_char,
        device_kind_size: usize,
    }
    PJRT_DeviceDescription_ToString_Args {
        device_description: *mut PJRT_DeviceDescription,
        to_string: *const c_char,
        to_string_size: usize,
    }

    PJRT_Device_GetDescription_Args {
        device: *mut PJRT_Device,
        device_description: *mut PJRT_DeviceDescription,
    }
    PJRT_Device_IsAddressable_Args { device: *mut PJRT_Device, is_addressable: bool }
    PJRT_Device_LocalHardwareId_Args { device: *mut PJRT_Device, local_hardware_id: c_int }
    PJRT_Device_AddressableMemories_Args {
        device: *mut PJRT_Device,
        memories: *const *mut PJRT_Memory,
        num_memories: usize,
    }
    PJRT_Device_DefaultMemory_Args { device: *mut PJRT_Device, memory: *mut PJRT_Memory }

    PJRT_Memory_Id_Args { memory: *mut PJRT_Memory, id: c_int }
    PJRT_Memory_Kind_Args { memory: *mut PJRT_Memory, kind: *const c_char, kind_size: usize }
    PJRT_Memory_AddressableByDevices_Args {
        memory: *mut PJRT_Memory,
        devices: *const *mut PJRT_Device,
        num_devices: usize,
    }

    PJRT_Executable_Destroy_Args { executable: *mut PJRT_Executable }
    PJRT_Executable_Name_Args {
        executable: *mut PJRT_Executable,
        executable_name: *const c_char,
        executable_name_size: usize,
    }
    PJRT_Executable_NumReplicas_Args { executable: *mut PJRT_Executable, num_replicas: usize }
    PJRT_Executable_NumPartitions_Args { executable: *mut PJRT_Executable, num_partitions: usize }
    PJRT_Executable_NumOutputs_Args { executable: *mut PJRT_Executable, num_outputs: usize }
    PJRT_Executable_Serialize_Args {
        executable: *const PJRT_Executable,
        serialized_bytes: *const c_char,
        serialized_bytes_size: usize,
        serialized_executable: *mut PJRT_SerializedExecutable,
        serialized_executable_deleter: PJRT_SerializedExecutableDeleter,
    }
    PJRT_Executable_OptimizedProgram_Args {
        executable: *mut PJRT_Executable,
        program: *mut PJRT_Program,
    }
    PJRT_Executable_GetCostAnalysis_Args {
        executable: *mut PJRT_Executable,
        num_properties: usize,
        properties: *const PJRT_NamedValue,
    }
    PJRT_Executable_GetCompiledMemoryStats_Args {
        executable: *mut PJRT_Executable,
        generated_code_size_in_bytes: i64,
        argument_size_in_bytes: i64,
        output_size_in_bytes: i64,
        alias_size_in_bytes: i64,
        temp_size_in_bytes: i64,
        host_generated_code_size_in_bytes: i64,
        host_argument_size_in_bytes: i64,
        host_output_size_in_bytes: i64,
        host_alias_size_in_bytes: i64,
        host_temp_size_in_bytes: i64,
        // Appended in later minor versions: a plugin writes the fields it
        // knows, and some refuse a struct without them (0.115 wants
        // `peak_memory_in_bytes`).
        peak_memory_in_bytes: i64,
        total_size_in_bytes: i64,
    }
    PJRT_Executable_OutputElementTypes_Args {
        executable: *mut PJRT_Executable,
        output_types: *mut PJRT_Buffer_Type,
        num_output_types: usize,
    }
    PJRT_Executable_OutputDimensions_Args {
        executable: *mut PJRT_Executable,
        num_outputs: usize,
        dims: *const i64,
        dim_sizes: *const usize,
    }
    PJRT_Executable_Fingerprint_Args {
        executable: *mut PJRT_Executable,
        executable_fingerprint: *const c_char,
        executable_fingerprint_size: usize,
    }

    PJRT_LoadedExecutable_Destroy_Args { executable: *mut PJRT_LoadedExecutable }
    PJRT_LoadedExecutable_GetExecutable_Args {
        loaded_executable: *mut PJRT_LoadedExecutable,
        executable: *mut PJRT_Executable,
    }
    PJRT_LoadedExecutable_AddressableDevices_Args {
        executable: *mut PJRT_LoadedExecutable,
        addressable_devices: *const *mut PJRT_Device,
        num_addressable_devices: usize,
    }
    PJRT_LoadedExecutable_Execute_Args {
        executable: *mut PJRT_LoadedExecutable,
        options: *mut PJRT_ExecuteOptions,
        argument_lists: *const *const *mut PJRT_Buffer,
        num_devices: usize,
        num_args: usize,
        output_lists: *const *mut *mut PJRT_Buffer,
        device_complete_events: *mut *mut PJRT_Event,
        execute_device: *mut PJRT_Device,
    }
    PJRT_Executable_DeserializeAndLoad_Args {
        client: *mut PJRT_Client,
        serialized_executable: *const c_char,
        serialized_executable_size: usize,
        loaded_executable: *mut PJRT_LoadedExecutable,
        overridden_serialized_compile_options: *const c_char,
        overridden_serialized_compile_options_size: usize,
    }

    PJRT_Buffer_Destroy_Args { buffer: *mut PJRT_Buffer }
    PJRT_Buffer_ElementType_Args { buffer: *mut PJRT_Buffer, type_: PJRT_Buffer_Type }
    PJRT_Buffer_Dimensions_Args { buffer: *mut PJRT_Buffer, dims: *const i64, num_dims: usize }
    PJRT_Buffer_OnDeviceSizeInBytes_Args { buffer: *mut PJRT_Buffer, on_device_size_in_bytes: usize }
    PJRT_Buffer_Device_Args { buffer: *mut PJRT_Buffer, device: *mut PJRT_Device }
    PJRT_Buffer_Memory_Args { buffer: *mut PJRT_Buffer, memory: *mut PJRT_Memory }
    PJRT_Buffer_Delete_Args { buffer: *mut PJRT_Buffer }
    PJRT_Buffer_IsDeleted_Args { buffer: *mut PJRT_Buffer, is_deleted: bool }
    PJRT_Buffer_CopyToDevice_Args {
        buffer: *mut PJRT_Buffer,
        dst_device: *mut PJRT_Device,
        dst_buffer: *mut PJRT_Buffer,
    }
    PJRT_Buffer_CopyToMemory_Args {
        buffer: *mut PJRT_Buffer,
        dst_memory: *mut PJRT_Memory,
        dst_buffer: *mut PJRT_Buffer,
    }
    PJRT_Buffer_ToHostBuffer_Args {
        src: *mut PJRT_Buffer,
        host_layout: *mut PJRT_Buffer_MemoryLayout,
        dst: *mut c_void,
        dst_size: usize,
        event: *mut PJRT_Event,
    }
    PJRT_Buffer_ReadyEvent_Args { buffer: *mut PJRT_Buffer, event: *mut PJRT_Event }
    PJRT_Buffer_IncreaseExternalReferenceCount_Args { buffer: *mut PJRT_Buffer }
    PJRT_Buffer_DecreaseExternalReferenceCount_Args { buffer: *mut PJRT_Buffer }
    PJRT_Buffer_GetMemoryLayout_Args {
        buffer: *mut PJRT_Buffer,
        layout: PJRT_Buffer_MemoryLayout,
    }
    PJRT_Buffer_IsOnCpu_Args { buffer: *mut PJRT_Buffer, is_on_cpu: bool }
    PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args {
        buffer: *mut PJRT_Buffer,
        device_memory_ptr: *mut c_void,
    }
}

/// A `PJRT_Error* fn(Args*)` table entry.
pub type Fn<A> = Option<unsafe extern "C" fn(args: *mut A) -> *mut PJRT_Error>;
/// A table entry this crate never calls (kept for the offsets that follow).
pub type Unused = Option<unsafe extern "C" fn()>;

/// The function table `GetPjrtApi` returns, in header order.
#[repr(C)]
pub struct PJRT_Api {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub pjrt_api_version: PJRT_Api_Version,

    pub PJRT_Error_Destroy: Option<unsafe extern "C" fn(args: *mut PJRT_Error_Destroy_Args)>,
    pub PJRT_Error_Message: Option<unsafe extern "C" fn(args: *mut PJRT_Error_Message_Args)>,
    pub PJRT_Error_GetCode: Fn<PJRT_Error_GetCode_Args>,

    pub PJRT_Plugin_Initialize: Fn<PJRT_Plugin_Initialize_Args>,
    pub PJRT_Plugin_Attributes: Fn<PJRT_Plugin_Attributes_Args>,

    pub PJRT_Event_Destroy: Fn<PJRT_Event_Destroy_Args>,
    pub PJRT_Event_IsReady: Fn<PJRT_Event_IsReady_Args>,
    pub PJRT_Event_Error: Fn<PJRT_Event_Error_Args>,
    pub PJRT_Event_Await: Fn<PJRT_Event_Await_Args>,
    pub PJRT_Event_OnReady: Fn<PJRT_Event_OnReady_Args>,

    pub PJRT_Client_Create: Fn<PJRT_Client_Create_Args>,
    pub PJRT_Client_Destroy: Fn<PJRT_Client_Destroy_Args>,
    pub PJRT_Client_PlatformName: Fn<PJRT_Client_PlatformName_Args>,
    pub PJRT_Client_ProcessIndex: Unused,
    pub PJRT_Client_PlatformVersion: Fn<PJRT_Client_PlatformVersion_Args>,
    pub PJRT_Client_Devices: Fn<PJRT_Client_Devices_Args>,
    pub PJRT_Client_AddressableDevices: Fn<PJRT_Client_AddressableDevices_Args>,
    pub PJRT_Client_LookupDevice: Unused,
    pub PJRT_Client_LookupAddressableDevice: Unused,
    pub PJRT_Client_AddressableMemories: Fn<PJRT_Client_AddressableMemories_Args>,
    pub PJRT_Client_Compile: Fn<PJRT_Client_Compile_Args>,
    pub PJRT_Client_DefaultDeviceAssignment: Fn<PJRT_Client_DefaultDeviceAssignment_Args>,
    pub PJRT_Client_BufferFromHostBuffer: Fn<PJRT_Client_BufferFromHostBuffer_Args>,

    pub PJRT_DeviceDescription_Id: Fn<PJRT_DeviceDescription_Id_Args>,
    pub PJRT_DeviceDescription_ProcessIndex: Fn<PJRT_DeviceDescription_ProcessIndex_Args>,
    pub PJRT_DeviceDescription_Attributes: Unused,
    pub PJRT_DeviceDescription_Kind: Fn<PJRT_DeviceDescription_Kind_Args>,
    pub PJRT_DeviceDescription_DebugString: Unused,
    pub PJRT_DeviceDescription_ToString: Fn<PJRT_DeviceDescription_ToString_Args>,

    pub PJRT_Device_GetDescription: Fn<PJRT_Device_GetDescription_Args>,
    pub PJRT_Device_IsAddressable: Fn<PJRT_Device_IsAddressable_Args>,
    pub PJRT_Device_LocalHardwareId: Fn<PJRT_Device_LocalHardwareId_Args>,
    pub PJRT_Device_AddressableMemories: Fn<PJRT_Device_AddressableMemories_Args>,
    pub PJRT_Device_DefaultMemory: Fn<PJRT_Device_DefaultMemory_Args>,
    pub PJRT_Device_MemoryStats: Unused,

    pub PJRT_Memory_Id: Fn<PJRT_Memory_Id_Args>,
    pub PJRT_Memory_Kind: Fn<PJRT_Memory_Kind_Args>,
    pub PJRT_Memory_DebugString: Unused,
    pub PJRT_Memory_ToString: Unused,
    pub PJRT_Memory_AddressableByDevices: Fn<PJRT_Memory_AddressableByDevices_Args>,

    pub PJRT_Executable_Destroy: Fn<PJRT_Executable_Destroy_Args>,
    pub PJRT_Executable_Name: Fn<PJRT_Executable_Name_Args>,
    pub PJRT_Executable_NumReplicas: Fn<PJRT_Executable_NumReplicas_Args>,
    pub PJRT_Executable_NumPartitions: Fn<PJRT_Executable_NumPartitions_Args>,
    pub PJRT_Executable_NumOutputs: Fn<PJRT_Executable_NumOutputs_Args>,
    pub PJRT_Executable_SizeOfGeneratedCodeInBytes: Unused,
    pub PJRT_Executable_GetCostAnalysis: Fn<PJRT_Executable_GetCostAnalysis_Args>,
    pub PJRT_Executable_OutputMemoryKinds: Unused,
    pub PJRT_Executable_OptimizedProgram: Fn<PJRT_Executable_OptimizedProgram_Args>,
    pub PJRT_Executable_Serialize: Fn<PJRT_Executable_Serialize_Args>,

    pub PJRT_LoadedExecutable_Destroy: Fn<PJRT_LoadedExecutable_Destroy_Args>,
    pub PJRT_LoadedExecutable_GetExecutable: Fn<PJRT_LoadedExecutable_GetExecutable_Args>,
    pub PJRT_LoadedExecutable_AddressableDevices: Fn<PJRT_LoadedExecutable_AddressableDevices_Args>,
    pub PJRT_LoadedExecutable_Delete: Unused,
    pub PJRT_LoadedExecutable_IsDeleted: Unused,
    pub PJRT_LoadedExecutable_Execute: Fn<PJRT_LoadedExecutable_Execute_Args>,
    pub PJRT_Executable_DeserializeAndLoad: Fn<PJRT_Executable_DeserializeAndLoad_Args>,
    pub PJRT_LoadedExecutable_Fingerprint: Unused,

    pub PJRT_Buffer_Destroy: Fn<PJRT_Buffer_Destroy_Args>,
    pub PJRT_Buffer_ElementType: Fn<PJRT_Buffer_ElementType_Args>,
    pub PJRT_Buffer_Dimensions: Fn<PJRT_Buffer_Dimensions_Args>,
    pub PJRT_Buffer_UnpaddedDimensions: Unused,
    pub PJRT_Buffer_DynamicDimensionIndices: Unused,
    pub PJRT_Buffer_GetMemoryLayout: Fn<PJRT_Buffer_GetMemoryLayout_Args>,
    pub PJRT_Buffer_OnDeviceSizeInBytes: Fn<PJRT_Buffer_OnDeviceSizeInBytes_Args>,
    pub PJRT_Buffer_Device: Fn<PJRT_Buffer_Device_Args>,
    pub PJRT_Buffer_Memory: Fn<PJRT_Buffer_Memory_Args>,
    pub PJRT_Buffer_Delete: Fn<PJRT_Buffer_Delete_Args>,
    pub PJRT_Buffer_IsDeleted: Fn<PJRT_Buffer_IsDeleted_Args>,
    pub PJRT_Buffer_CopyToDevice: Fn<PJRT_Buffer_CopyToDevice_Args>,
    pub PJRT_Buffer_ToHostBuffer: Fn<PJRT_Buffer_ToHostBuffer_Args>,
    pub PJRT_Buffer_IsOnCpu: Fn<PJRT_Buffer_IsOnCpu_Args>,
    pub PJRT_Buffer_ReadyEvent: Fn<PJRT_Buffer_ReadyEvent_Args>,
    pub PJRT_Buffer_UnsafePointer: Unused,
    pub PJRT_Buffer_IncreaseExternalReferenceCount:
        Fn<PJRT_Buffer_IncreaseExternalReferenceCount_Args>,
    pub PJRT_Buffer_DecreaseExternalReferenceCount:
        Fn<PJRT_Buffer_DecreaseExternalReferenceCount_Args>,
    pub PJRT_Buffer_OpaqueDeviceMemoryDataPointer:
        Fn<PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>,

    pub PJRT_CopyToDeviceStream_Destroy: Unused,
    pub PJRT_CopyToDeviceStream_AddChunk: Unused,
    pub PJRT_CopyToDeviceStream_TotalBytes: Unused,
    pub PJRT_CopyToDeviceStream_GranuleSize: Unused,
    pub PJRT_CopyToDeviceStream_CurrentBytes: Unused,

    pub PJRT_TopologyDescription_Create: Unused,
    pub PJRT_TopologyDescription_Destroy: Unused,
    pub PJRT_TopologyDescription_PlatformName: Unused,
    pub PJRT_TopologyDescription_PlatformVersion: Unused,
    pub PJRT_TopologyDescription_GetDeviceDescriptions: Unused,
    pub PJRT_TopologyDescription_Serialize: Unused,
    pub PJRT_TopologyDescription_Attributes: Unused,

    pub PJRT_Compile: Unused,

    // Entries below were appended in minor versions (0.29 onwards).
    pub PJRT_Executable_OutputElementTypes: Fn<PJRT_Executable_OutputElementTypes_Args>,
    pub PJRT_Executable_OutputDimensions: Fn<PJRT_Executable_OutputDimensions_Args>,
    pub PJRT_Buffer_CopyToMemory: Fn<PJRT_Buffer_CopyToMemory_Args>,
    pub PJRT_Client_CreateViewOfDeviceBuffer: Fn<PJRT_Client_CreateViewOfDeviceBuffer_Args>,
    pub PJRT_Executable_Fingerprint: Fn<PJRT_Executable_Fingerprint_Args>,
    pub PJRT_Client_TopologyDescription: Unused,
    pub PJRT_Executable_GetCompiledMemoryStats: Fn<PJRT_Executable_GetCompiledMemoryStats_Args>,
    pub PJRT_Memory_Kind_Id: Unused,
    pub PJRT_ExecuteContext_Create: Unused,
    pub PJRT_ExecuteContext_Destroy: Unused,
    pub PJRT_Buffer_CopyRawToHost: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_Destroy:
        Fn<PJRT_AsyncHostToDeviceTransferManager_Destroy_Args>,
    pub PJRT_AsyncHostToDeviceTransferManager_TransferData:
        Fn<PJRT_AsyncHostToDeviceTransferManager_TransferData_Args>,
    pub PJRT_Client_CreateBuffersForAsyncHostToDevice:
        Fn<PJRT_Client_CreateBuffersForAsyncHostToDevice_Args>,
    pub PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer:
        Fn<PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args>,
    pub PJRT_AsyncHostToDeviceTransferManager_Device: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_BufferCount: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_BufferSize: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_SetBufferError:
        Fn<PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args>,
    pub PJRT_AsyncHostToDeviceTransferManager_AddMetadata: Unused,
    pub PJRT_Client_DmaMap: Unused,
    pub PJRT_Client_DmaUnmap: Unused,
    pub PJRT_Client_CreateUninitializedBuffer: Unused,
    pub PJRT_Client_UpdateGlobalProcessInfo: Unused,
    pub PJRT_TopologyDescription_Deserialize: Unused,
    pub PJRT_Client_CreateAliasBuffer: Unused,
    pub PJRT_Client_FulfillAliasBuffer: Unused,
    pub PJRT_LoadedExecutable_GetDeviceAssignment: Unused,
    pub PJRT_Client_CreateErrorBuffer: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: Unused,
    pub PJRT_Buffer_CopyRawToHostFuture: Unused,
    pub PJRT_Device_PoisonExecution: Unused,
    pub PJRT_Device_CreateAsyncTrackingEvent: Unused,
    pub PJRT_AsyncTrackingEvent_Destroy: Unused,
    pub PJRT_Executable_GetCompileOptions: Unused,
    pub PJRT_Buffer_DonateWithControlDependency: Unused,
    pub PJRT_Event_Create: Fn<PJRT_Event_Create_Args>,
    pub PJRT_Event_Set: Fn<PJRT_Event_Set_Args>,
}

/// Signature of the one symbol a plugin exports.
pub type GetPjrtApiFn = unsafe extern "C" fn() -> *const PJRT_Api;

/// The oldest minor version whose function table has this crate's offsets:
/// 0.57 rearranged `PJRT_Api`, and entries have only been appended since.
pub const MIN_MINOR: i32 = 57;
/// The version the declarations above follow.
pub const LAYOUT_VERSION: (i32, i32) = (0, 115);

// --------------------------------------------------- the FFI extension ---
//
// `PJRT_Api::extension_start` begins a chain of extensions, each starting
// with this header. The FFI extension (version 3 of its header, as in
// jaxlib 0.11.2's XLA) registers typed XLA FFI handlers with the plugin.

pub type PJRT_Extension_Type = c_int;
pub const PJRT_Extension_Type_FFI: PJRT_Extension_Type = 5;

#[repr(C)]
pub struct PJRT_Extension_Header {
    pub struct_size: usize,
    pub type_: PJRT_Extension_Type,
    pub next: *const PJRT_Extension_Header,
}

#[repr(C)]
pub struct PJRT_FFI_Register_Handler_Args {
    pub struct_size: usize,
    pub target_name: *const c_char,
    pub target_name_size: usize,
    /// An `XLA_FFI_Handler*`.
    pub handler: *mut c_void,
    pub platform_name: *const c_char,
    pub platform_name_size: usize,
    pub traits: u32,
}
// SAFETY: repr(C), `struct_size` first, every field valid when zeroed.
unsafe impl Args for PJRT_FFI_Register_Handler_Args {}

#[repr(C)]
pub struct PJRT_FFI_Extension {
    pub base: PJRT_Extension_Header,
    pub type_register: *const c_void,
    pub user_data_add: *const c_void,
    pub register_handler:
        Option<unsafe extern "C" fn(args: *mut PJRT_FFI_Register_Handler_Args) -> *mut PJRT_Error>,
}

// ------------------------------------------------------------- XLA FFI ---
//
// The C ABI of XLA's typed custom calls (`xla/ffi/api/c_api.h`, API 0.1):
// what a handler receives (a call frame of buffers and attributes) and the
// one API function pw's handlers call (`XLA_FFI_Error_Create`).

opaque!(XLA_FFI_Error);

pub type XLA_FFI_Extension_Type = c_int;
pub const XLA_FFI_Extension_Metadata: XLA_FFI_Extension_Type = 1;

#[repr(C)]
pub struct XLA_FFI_Extension_Base {
    pub struct_size: usize,
    pub type_: XLA_FFI_Extension_Type,
    pub next: *mut XLA_FFI_Extension_Base,
}

#[repr(C)]
pub struct XLA_FFI_Api_Version {
    pub struct_size: usize,
    pub extension_start: *mut XLA_FFI_Extension_Base,
    pub major_version: c_int,
    pub minor_version: c_int,
}

/// The FFI API version pw's handlers are written against.
pub const XLA_FFI_API_VERSION: (c_int, c_int) = (0, 1);

#[repr(C)]
pub struct XLA_FFI_Metadata {
    pub struct_size: usize,
    pub api_version: XLA_FFI_Api_Version,
    pub traits: u32,
}

#[repr(C)]
pub struct XLA_FFI_Metadata_Extension {
    pub extension_base: XLA_FFI_Extension_Base,
    pub metadata: *mut XLA_FFI_Metadata,
}

pub type XLA_FFI_Error_Code = c_int;
pub const XLA_FFI_Error_Code_INVALID_ARGUMENT: XLA_FFI_Error_Code = 3;
pub const XLA_FFI_Error_Code_FAILED_PRECONDITION: XLA_FFI_Error_Code = 9;
pub const XLA_FFI_Error_Code_UNIMPLEMENTED: XLA_FFI_Error_Code = 12;
pub const XLA_FFI_Error_Code_INTERNAL: XLA_FFI_Error_Code = 13;

#[repr(C)]
pub struct XLA_FFI_Error_Create_Args {
    pub struct_size: usize,
    pub extension_start: *mut XLA_FFI_Extension_Base,
    pub message: *const c_char,
    pub errc: XLA_FFI_Error_Code,
}

/// The head of `XLA_FFI_Api`, up to the one entry pw calls.
#[repr(C)]
pub struct XLA_FFI_Api {
    pub struct_size: usize,
    pub extension_start: *mut XLA_FFI_Extension_Base,
    pub api_version: XLA_FFI_Api_Version,
    pub internal_api: *mut c_void,
    pub XLA_FFI_Error_Create:
        Option<unsafe extern "C" fn(args: *mut XLA_FFI_Error_Create_Args) -> *mut XLA_FFI_Error>,
}

/// `XLA_FFI_DataType`: XLA's `PrimitiveType` numbers.
pub type XLA_FFI_DataType = c_int;
pub const XLA_FFI_DataType_PRED: XLA_FFI_DataType = 1;
pub const XLA_FFI_DataType_S32: XLA_FFI_DataType = 4;
pub const XLA_FFI_DataType_U8: XLA_FFI_DataType = 6;
pub const XLA_FFI_DataType_F32: XLA_FFI_DataType = 11;
pub const XLA_FFI_DataType_F64: XLA_FFI_DataType = 12;
pub const XLA_FFI_DataType_C64: XLA_FFI_DataType = 15;
pub const XLA_FFI_DataType_C128: XLA_FFI_DataType = 18;

#[repr(C)]
pub struct XLA_FFI_Buffer {
    pub struct_size: usize,
    pub extension_start: *mut XLA_FFI_Extension_Base,
    pub dtype: XLA_FFI_DataType,
    pub data: *mut c_void,
    pub rank: i64,
    pub dims: *const i64,
}

pub const XLA_FFI_ArgType_BUFFER: c_int = 1;
pub const XLA_FFI_RetType_BUFFER: c_int = 1;
pub const XLA_FFI_AttrType_SCALAR: c_int = 3;

/// `XLA_FFI_Args` and `XLA_FFI_Rets` share this layout.
#[repr(C)]
pub struct XLA_FFI_Operands {
    pub struct_size: usize,
    pub extension_start: *mut XLA_FFI_Extension_Base,
    pub size: i64,
    pub types: *const c_int,
    pub values: *const *mut c_void,
}

#[repr(C)]
pub struct XLA_FFI_ByteSpan {
    pub ptr: *const c_char,
    pub len: usize,
}

#[repr(C)]
pub struct XLA_FFI_Scalar {
    pub dtype: XLA_FFI_DataType,
    pub value: *const c_void,
}

/// Attributes, sorted by name.
#[repr(C)]
pub struct XLA_FFI_Attrs {
    pub struct_size: usize,
    pub extension_start: *mut XLA_FFI_Extension_Base,
    pub size: i64,
    pub types: *const c_int,
    pub names: *const *const XLA_FFI_ByteSpan,
    pub attrs: *const *const c_void,
}

pub type XLA_FFI_ExecutionStage = c_int;
pub const XLA_FFI_ExecutionStage_EXECUTE: XLA_FFI_ExecutionStage = 3;

#[repr(C)]
pub struct XLA_FFI_CallFrame {
    pub struct_size: usize,
    pub extension_start: *mut XLA_FFI_Extension_Base,
    pub api: *const XLA_FFI_Api,
    pub ctx: *mut c_void,
    pub stage: XLA_FFI_ExecutionStage,
    pub args: XLA_FFI_Operands,
    pub rets: XLA_FFI_Operands,
    pub attrs: XLA_FFI_Attrs,
    pub future: *mut c_void,
}

pub type XLA_FFI_Handler =
    unsafe extern "C" fn(call_frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// Sizes a 0.115 plugin demands (from its "Unexpected ... size" errors).
    #[test]
    fn struct_sizes_match_0_115() {
        assert_eq!(size_of::<PJRT_Client_Create_Args>(), 88);
        assert_eq!(size_of::<PJRT_Client_Compile_Args>(), 56);
        assert_eq!(size_of::<PJRT_Client_BufferFromHostBuffer_Args>(), 120);
        assert_eq!(size_of::<PJRT_LoadedExecutable_Execute_Args>(), 80);
        assert_eq!(size_of::<PJRT_Executable_DeserializeAndLoad_Args>(), 64);
        assert_eq!(size_of::<PJRT_Executable_Serialize_Args>(), 56);
        assert_eq!(size_of::<PJRT_Buffer_ToHostBuffer_Args>(), 56);
        assert_eq!(size_of::<PJRT_Event_OnReady_Args>(), 40);
        assert_eq!(size_of::<PJRT_Event_Set_Args>(), 48);
        assert_eq!(size_of::<PJRT_Buffer_MemoryLayout>(), 80);
        assert_eq!(size_of::<PJRT_NamedValue>(), 56);
        assert_eq!(size_of::<PJRT_ExecuteOptions>(), 112);
        assert_eq!(size_of::<PJRT_Client_CreateViewOfDeviceBuffer_Args>(), 112);
        assert_eq!(offset_of!(PJRT_Api, PJRT_Error_Destroy), 40);
        assert_eq!(offset_of!(PJRT_Api, PJRT_Event_Set), 40 + 8 * 127);
        assert_eq!(size_of::<PJRT_FFI_Register_Handler_Args>(), 56);
        assert_eq!(offset_of!(PJRT_FFI_Extension, register_handler), 40);
        // XLA FFI (c_api.h): the call frame up to `attrs`, the API's first entry.
        assert_eq!(offset_of!(XLA_FFI_CallFrame, future), 40 + 2 * 40 + 48);
        assert_eq!(offset_of!(XLA_FFI_Api, XLA_FFI_Error_Create), 48);
        assert_eq!(size_of::<XLA_FFI_Buffer>(), 48);
    }
}
