//! Compilation, execution and serialization.

use std::fmt;
use std::sync::atomic::Ordering;

use prost::Message;

use super::buffer::Buffer;
use super::client::{raw_list, Client, Device, NamedValue};
use super::event::Event;
use super::plugin::read_named_values;
use super::sys::{self, Args as _};
use crate::error::{Error, ErrorCode, Result};
use pw_core::DType;

/// The serialized form PJRT compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramFormat {
    /// An MLIR module (StableHLO, with Shardy shardings), as text or bytecode.
    Mlir,
    /// A serialized `HloModuleProto`.
    Hlo,
}

impl ProgramFormat {
    fn name(self) -> &'static str {
        match self {
            ProgramFormat::Mlir => "mlir",
            ProgramFormat::Hlo => "hlo",
        }
    }
}

/// A program to compile.
#[derive(Debug, Clone)]
pub struct Program {
    pub format: ProgramFormat,
    pub code: Vec<u8>,
}

impl Program {
    /// An MLIR module in text form.
    pub fn mlir_text(text: impl Into<String>) -> Program {
        Program {
            format: ProgramFormat::Mlir,
            code: text.into().into_bytes(),
        }
    }

    /// An MLIR module as text or bytecode (for instance a StableHLO
    /// portable artifact).
    pub fn mlir(bytes: impl Into<Vec<u8>>) -> Program {
        Program {
            format: ProgramFormat::Mlir,
            code: bytes.into(),
        }
    }
}

/// Which device runs each (replica, partition) of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceAssignment {
    replicas: usize,
    partitions: usize,
    /// Device ids, row-major over `[replica][partition]`.
    ids: Vec<i32>,
}

impl DeviceAssignment {
    /// `ids[r][p]` is the device id of replica `r`, partition `p`.
    pub fn new(ids: Vec<Vec<i32>>) -> Result<DeviceAssignment> {
        let replicas = ids.len();
        let partitions = ids.first().map_or(0, Vec::len);
        if replicas == 0 || partitions == 0 || ids.iter().any(|row| row.len() != partitions) {
            return Err(Error::invalid(
                "a device assignment needs a non-empty, rectangular [replica][partition] grid",
            ));
        }
        Ok(DeviceAssignment {
            replicas,
            partitions,
            ids: ids.into_iter().flatten().collect(),
        })
    }

    /// One replica whose partition `p` runs on `devices[p]`.
    pub fn partitions(devices: &[Device]) -> Result<DeviceAssignment> {
        DeviceAssignment::new(vec![devices.iter().map(Device::id).collect()])
    }

    pub fn num_replicas(&self) -> usize {
        self.replicas
    }

    pub fn num_partitions(&self) -> usize {
        self.partitions
    }

    /// The device id of (replica, partition).
    pub fn device_id(&self, replica: usize, partition: usize) -> Option<i32> {
        (replica < self.replicas && partition < self.partitions)
            .then(|| self.ids[replica * self.partitions + partition])
    }

    fn to_proto(&self) -> proto::DeviceAssignmentProto {
        // The proto is partition-major: one entry per computation (partition),
        // listing its device for every replica.
        let computation_devices = (0..self.partitions)
            .map(|p| proto::ComputationDevice {
                replica_device_ids: (0..self.replicas)
                    .map(|r| i64::from(self.ids[r * self.partitions + p]))
                    .collect(),
            })
            .collect();
        proto::DeviceAssignmentProto {
            replica_count: self.replicas as i32,
            computation_count: self.partitions as i32,
            computation_devices,
        }
    }
}

/// What [`Client::compile`] builds the `CompileOptionsProto` from.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileOptions {
    pub num_replicas: usize,
    pub num_partitions: usize,
    /// Partition the program SPMD (one program, one shard per partition).
    pub use_spmd_partitioning: bool,
    /// Use Shardy (the `sdy` dialect JAX emits) rather than GSPMD.
    pub use_shardy_partitioner: bool,
    /// An explicit device assignment; `None` lets the plugin choose.
    pub device_assignment: Option<DeviceAssignment>,
    /// Compiler options by name (`env_option_overrides`: what JAX's
    /// `compiler_options` become), checked and applied by the plugin.
    pub overrides: Vec<(String, OptionOverride)>,
}

/// What an executable's output is (see [`Executable::output_types`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputType {
    /// An array of this element type.
    Array(DType),
    /// A token: it orders side effects and carries no data.
    Token,
}

/// The value of one compiler option.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionOverride {
    String(String),
    Bool(bool),
    Int(i64),
    Double(f64),
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            num_replicas: 1,
            num_partitions: 1,
            use_spmd_partitioning: false,
            use_shardy_partitioner: false,
            device_assignment: None,
            overrides: Vec::new(),
        }
    }
}

impl CompileOptions {
    /// One replica, one partition, on `device`.
    pub fn single_device(device: &Device) -> Result<CompileOptions> {
        Ok(CompileOptions {
            device_assignment: Some(DeviceAssignment::partitions(std::slice::from_ref(device))?),
            ..CompileOptions::default()
        })
    }

    /// SPMD over `devices` (partition `p` on `devices[p]`), with Shardy: what
    /// JAX uses for a `jit` over a mesh.
    pub fn spmd(devices: &[Device]) -> Result<CompileOptions> {
        Ok(CompileOptions {
            num_replicas: 1,
            num_partitions: devices.len(),
            use_spmd_partitioning: true,
            use_shardy_partitioner: true,
            device_assignment: Some(DeviceAssignment::partitions(devices)?),
            overrides: Vec::new(),
        })
    }

    /// For the devices with PJRT ids `ids`: SPMD over them (partition `p`
    /// on `ids[p]`) when `spmd`, else one device (`ids` has one id).
    pub fn for_device_ids(ids: &[i32], spmd: bool) -> Result<CompileOptions> {
        let assignment = DeviceAssignment::new(vec![ids.to_vec()])?;
        if spmd {
            Ok(CompileOptions {
                num_replicas: 1,
                num_partitions: ids.len(),
                use_spmd_partitioning: true,
                use_shardy_partitioner: true,
                device_assignment: Some(assignment),
                overrides: Vec::new(),
            })
        } else if ids.len() == 1 {
            Ok(CompileOptions {
                device_assignment: Some(assignment),
                ..CompileOptions::default()
            })
        } else {
            Err(Error::invalid(format!(
                "a single-device program cannot run on {} devices",
                ids.len()
            )))
        }
    }

    /// The serialized `xla.CompileOptionsProto`.
    pub fn to_proto_bytes(&self) -> Result<Vec<u8>> {
        if let Some(da) = &self.device_assignment {
            if da.replicas != self.num_replicas || da.partitions != self.num_partitions {
                return Err(Error::invalid(format!(
                    "device assignment is {}x{} (replicas x partitions) but the options ask for {}x{}",
                    da.replicas, da.partitions, self.num_replicas, self.num_partitions
                )));
            }
        }
        let build = proto::ExecutableBuildOptionsProto {
            // -1: not set (a device assignment, if any, decides).
            device_ordinal: -1,
            num_replicas: self.num_replicas as i64,
            num_partitions: self.num_partitions as i64,
            use_spmd_partitioning: self.use_spmd_partitioning,
            device_assignment: self
                .device_assignment
                .as_ref()
                .map(DeviceAssignment::to_proto),
            use_shardy_partitioner: self.use_shardy_partitioner,
        };
        let env_option_overrides = self
            .overrides
            .iter()
            .map(|(name, v)| {
                use proto::option_override::Value;
                let value = match v {
                    OptionOverride::String(s) => Value::String(s.clone()),
                    OptionOverride::Bool(b) => Value::Bool(*b),
                    OptionOverride::Int(n) => Value::Int(*n),
                    OptionOverride::Double(x) => Value::Double(*x),
                };
                (name.clone(), proto::OptionOverride { value: Some(value) })
            })
            .collect();
        let options = proto::CompileOptionsProto {
            executable_build_options: Some(build),
            env_option_overrides,
        };
        Ok(options.encode_to_vec())
    }
}

/// Hand-written prost messages for the fields of XLA's protos we set
/// (`xla/pjrt/proto/compile_options.proto`, `xla/xla_data.proto`); unset
/// fields keep their proto3 defaults.
mod proto {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct CompileOptionsProto {
        #[prost(message, optional, tag = "3")]
        pub executable_build_options: Option<ExecutableBuildOptionsProto>,
        #[prost(btree_map = "string, message", tag = "7")]
        pub env_option_overrides: std::collections::BTreeMap<String, OptionOverride>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct OptionOverride {
        #[prost(oneof = "option_override::Value", tags = "1, 2, 3, 4")]
        pub value: Option<option_override::Value>,
    }

    pub mod option_override {
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Value {
            #[prost(string, tag = "1")]
            String(String),
            #[prost(bool, tag = "2")]
            Bool(bool),
            #[prost(int64, tag = "3")]
            Int(i64),
            #[prost(double, tag = "4")]
            Double(f64),
        }
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ExecutableBuildOptionsProto {
        #[prost(int64, tag = "1")]
        pub device_ordinal: i64,
        #[prost(int64, tag = "4")]
        pub num_replicas: i64,
        #[prost(int64, tag = "5")]
        pub num_partitions: i64,
        #[prost(bool, tag = "6")]
        pub use_spmd_partitioning: bool,
        #[prost(message, optional, tag = "9")]
        pub device_assignment: Option<DeviceAssignmentProto>,
        #[prost(bool, tag = "19")]
        pub use_shardy_partitioner: bool,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct DeviceAssignmentProto {
        #[prost(int32, tag = "1")]
        pub replica_count: i32,
        #[prost(int32, tag = "2")]
        pub computation_count: i32,
        #[prost(message, repeated, tag = "3")]
        pub computation_devices: Vec<ComputationDevice>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ComputationDevice {
        #[prost(int64, repeated, tag = "1")]
        pub replica_device_ids: Vec<i64>,
    }
}

/// Options of one execution.
#[derive(Debug, Clone, Default)]
pub struct ExecuteOptions {
    /// Argument positions the executable may donate (consume) when it aliases
    /// them to outputs. Every other argument is passed as non-donatable, so by
    /// default no input buffer is ever invalidated by an execution.
    pub donatable_arguments: Vec<usize>,
    /// Identifies a multi-device launch (0: none).
    pub launch_id: i32,
}

/// What an execution returns at once, before the computation finishes.
#[derive(Debug)]
pub struct Execution {
    /// `outputs[d][i]`: output `i` of the executable's device `d`.
    pub outputs: Vec<Vec<Buffer>>,
    /// One event per device, completing when its part of the execution does.
    pub done: Vec<Event>,
}

impl Execution {
    /// Waits for every device; the first error met.
    pub fn wait(&self) -> Result<()> {
        Event::wait_all(&self.done)
    }
}

impl Client {
    /// Compiles `program` (`PJRT_Client_Compile`) for this client's devices.
    pub fn compile(&self, program: &Program, options: &CompileOptions) -> Result<LoadedExecutable> {
        self.check_assignment(options)?;
        let options_bytes = options.to_proto_bytes()?;
        let format = program.format.name();
        let mut prog = sys::PJRT_Program::new();
        prog.code = program.code.as_ptr() as *mut _;
        prog.code_size = program.code.len();
        prog.format = format.as_ptr().cast();
        prog.format_size = format.len();
        let mut args = sys::PJRT_Client_Compile_Args::new();
        args.client = self.inner.raw;
        args.program = &prog;
        args.compile_options = options_bytes.as_ptr().cast();
        args.compile_options_size = options_bytes.len();
        // SAFETY: valid args; the program, its format and the options outlive
        // the call (the plugin only reads `code`).
        unsafe { call!(self.api(), PJRT_Client_Compile, &mut args)? };
        LoadedExecutable::from_raw(self, args.executable, "PJRT_Client_Compile")
    }

    /// Loads an executable made by [`LoadedExecutable::serialize`] on a
    /// plugin of the same version (`PJRT_Executable_DeserializeAndLoad`),
    /// optionally overriding its compile options.
    pub fn deserialize_executable(
        &self,
        bytes: &[u8],
        options: Option<&CompileOptions>,
    ) -> Result<LoadedExecutable> {
        let options_bytes = match options {
            Some(o) => {
                self.check_assignment(o)?;
                Some(o.to_proto_bytes()?)
            }
            None => None,
        };
        let mut args = sys::PJRT_Executable_DeserializeAndLoad_Args::new();
        args.client = self.inner.raw;
        args.serialized_executable = bytes.as_ptr().cast();
        args.serialized_executable_size = bytes.len();
        if let Some(o) = &options_bytes {
            args.overridden_serialized_compile_options = o.as_ptr().cast();
            args.overridden_serialized_compile_options_size = o.len();
        }
        // SAFETY: valid args; `bytes` and the options outlive the call.
        unsafe { call!(self.api(), PJRT_Executable_DeserializeAndLoad, &mut args)? };
        LoadedExecutable::from_raw(
            self,
            args.loaded_executable,
            "PJRT_Executable_DeserializeAndLoad",
        )
    }

    /// Checks an explicit assignment against this client's devices, so that
    /// asking for more devices than exist is reported as such.
    fn check_assignment(&self, options: &CompileOptions) -> Result<()> {
        let needed = options.num_replicas * options.num_partitions;
        let available = self.addressable_devices().len();
        if needed > available {
            return Err(Error::NotEnoughDevices {
                what: format!(
                    "a program with {} replicas x {} partitions",
                    options.num_replicas, options.num_partitions
                ),
                needed,
                available,
            });
        }
        if let Some(da) = &options.device_assignment {
            for id in &da.ids {
                self.device_by_id(*id)?;
            }
        }
        Ok(())
    }
}

/// A compiled program loaded on its devices (`PJRT_LoadedExecutable`).
/// `Send + Sync`.
pub struct LoadedExecutable {
    client: Client,
    raw: *mut sys::PJRT_LoadedExecutable,
    devices: Vec<Device>,
    num_outputs: usize,
}

// SAFETY: PJRT executables may be executed and destroyed from any thread.
unsafe impl Send for LoadedExecutable {}
// SAFETY: as above.
unsafe impl Sync for LoadedExecutable {}

impl LoadedExecutable {
    fn from_raw(
        client: &Client,
        raw: *mut sys::PJRT_LoadedExecutable,
        function: &'static str,
    ) -> Result<Self> {
        if raw.is_null() {
            return Err(Error::Pjrt {
                function,
                code: ErrorCode::Internal,
                message: "returned no executable".into(),
            });
        }
        client.inner.live.executables.fetch_add(1, Ordering::SeqCst);
        let mut this = LoadedExecutable {
            client: client.clone(),
            raw,
            devices: Vec::new(),
            num_outputs: 0,
        };
        let mut args = sys::PJRT_LoadedExecutable_AddressableDevices_Args::new();
        args.executable = raw;
        // SAFETY: valid args; the list lives as long as the executable.
        let raw_devices = unsafe {
            call!(
                client.api(),
                PJRT_LoadedExecutable_AddressableDevices,
                &mut args
            )?;
            raw_list(args.addressable_devices, args.num_addressable_devices)
        };
        this.devices = raw_devices
            .into_iter()
            .map(|d| client.device_from_raw(d))
            .collect::<Result<_>>()?;
        let num_outputs = this.executable()?.num_outputs()?;
        this.num_outputs = num_outputs;
        Ok(this)
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The devices the executable runs on, in argument-list order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// Outputs per device.
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// The executable's compile-time view (`PJRT_LoadedExecutable_GetExecutable`).
    /// The view borrows `self`: the plugin's view points into it.
    pub fn executable(&self) -> Result<Executable<'_>> {
        let mut args = sys::PJRT_LoadedExecutable_GetExecutable_Args::new();
        args.loaded_executable = self.raw;
        // SAFETY: valid args on a live executable.
        unsafe {
            call!(
                self.client.api(),
                PJRT_LoadedExecutable_GetExecutable,
                &mut args
            )?
        };
        if args.executable.is_null() {
            return Err(Error::Pjrt {
                function: "PJRT_LoadedExecutable_GetExecutable",
                code: ErrorCode::Internal,
                message: "returned no executable".into(),
            });
        }
        self.client
            .inner
            .live
            .executables
            .fetch_add(1, Ordering::SeqCst);
        Ok(Executable {
            client: self.client.clone(),
            raw: args.executable,
            _loaded: std::marker::PhantomData,
        })
    }

    /// Runs the program: `arguments[d]` is the argument list of
    /// `self.devices()[d]`. Returns the output buffers at once; they become
    /// ready when the computation finishes (see [`Execution::done`]).
    pub fn execute<'b, L: AsRef<[&'b Buffer]>>(&self, arguments: &[L]) -> Result<Execution> {
        let lists: Vec<&[&Buffer]> = arguments.iter().map(|l| l.as_ref()).collect();
        self.execute_with(&lists, &ExecuteOptions::default())
    }

    /// [`LoadedExecutable::execute`] with options.
    pub fn execute_with(
        &self,
        arguments: &[&[&Buffer]],
        options: &ExecuteOptions,
    ) -> Result<Execution> {
        let num_devices = self.devices.len();
        if arguments.len() != num_devices {
            return Err(Error::invalid(format!(
                "the executable runs on {num_devices} devices, so it needs {num_devices} argument lists, got {}",
                arguments.len()
            )));
        }
        let num_args = arguments.first().map_or(0, |l| l.len());
        for (d, list) in arguments.iter().enumerate() {
            if list.len() != num_args {
                return Err(Error::invalid(format!(
                    "argument lists differ in length: device 0 has {num_args}, device {d} has {}",
                    list.len()
                )));
            }
            for (i, buffer) in list.iter().enumerate() {
                if !buffer.client().same_as(&self.client) {
                    return Err(Error::invalid(format!(
                        "argument {i} of device {d} belongs to another client"
                    )));
                }
                let on = buffer.device()?;
                if on != self.devices[d] {
                    return Err(Error::invalid(format!(
                        "argument {i} of device list {d} is on {on:?}, but that list runs on {:?}",
                        self.devices[d]
                    )));
                }
            }
        }
        let raw_lists: Vec<Vec<*mut sys::PJRT_Buffer>> = arguments
            .iter()
            .map(|l| l.iter().map(|b| b.raw()).collect())
            .collect();
        let list_ptrs: Vec<*const *mut sys::PJRT_Buffer> =
            raw_lists.iter().map(|l| l.as_ptr()).collect();
        let mut outputs: Vec<Vec<*mut sys::PJRT_Buffer>> = (0..num_devices)
            .map(|_| vec![std::ptr::null_mut(); self.num_outputs])
            .collect();
        let output_ptrs: Vec<*mut *mut sys::PJRT_Buffer> =
            outputs.iter_mut().map(|l| l.as_mut_ptr()).collect();
        let mut events: Vec<*mut sys::PJRT_Event> = vec![std::ptr::null_mut(); num_devices];
        let non_donatable: Vec<i64> = (0..num_args)
            .filter(|i| !options.donatable_arguments.contains(i))
            .map(|i| i as i64)
            .collect();

        let mut opts = sys::PJRT_ExecuteOptions::new();
        opts.launch_id = options.launch_id;
        opts.non_donatable_input_indices = non_donatable.as_ptr();
        opts.num_non_donatable_input_indices = non_donatable.len();
        let mut args = sys::PJRT_LoadedExecutable_Execute_Args::new();
        args.executable = self.raw;
        args.options = &mut opts;
        args.argument_lists = list_ptrs.as_ptr();
        args.num_devices = num_devices;
        args.num_args = num_args;
        args.output_lists = output_ptrs.as_ptr();
        args.device_complete_events = events.as_mut_ptr();
        // SAFETY: valid args; every list has the length announced and outlives the call.
        unsafe { call!(self.client.api(), PJRT_LoadedExecutable_Execute, &mut args)? };
        drop(output_ptrs);
        // Take ownership of everything first, so nothing leaks if one is null.
        let outputs: Vec<Vec<Result<Buffer>>> = outputs
            .into_iter()
            .map(|l| {
                l.into_iter()
                    .map(|b| Buffer::from_raw(&self.client, b, "PJRT_LoadedExecutable_Execute"))
                    .collect()
            })
            .collect();
        let done: Vec<Result<Event>> = events
            .into_iter()
            .filter(|e| !e.is_null())
            .map(|e| Event::from_raw(&self.client, e, "PJRT_LoadedExecutable_Execute"))
            .collect();
        Ok(Execution {
            outputs: outputs
                .into_iter()
                .map(|l| l.into_iter().collect())
                .collect::<Result<_>>()?,
            done: done.into_iter().collect::<Result<_>>()?,
        })
    }

    /// The platform-specific serialization (`PJRT_Executable_Serialize`).
    pub fn serialize(&self) -> Result<Vec<u8>> {
        self.executable()?.serialize()
    }
}

impl Drop for LoadedExecutable {
    fn drop(&mut self) {
        let mut args = sys::PJRT_LoadedExecutable_Destroy_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args; not used again.
        if let Err(e) =
            unsafe { call!(self.client.api(), PJRT_LoadedExecutable_Destroy, &mut args) }
        {
            super::plugin::record_unreported_error(e);
        }
        self.client
            .inner
            .live
            .executables
            .fetch_sub(1, Ordering::SeqCst);
    }
}

impl fmt::Debug for LoadedExecutable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedExecutable")
            .field("devices", &self.devices)
            .field("outputs", &self.num_outputs)
            .finish()
    }
}

/// The compile-time view of an executable (`PJRT_Executable`): its
/// metadata and serialization, no longer than the loaded executable it
/// came from lives. `Send + Sync`.
/// What running a program takes of memory, as its compiler planned it
/// (PJRT's `CompiledMemoryStats`), in bytes: on the device's default
/// memory, and on the host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryStats {
    pub generated_code: i64,
    pub arguments: i64,
    pub outputs: i64,
    /// Of the arguments, what the outputs reuse.
    pub aliased: i64,
    pub temporaries: i64,
    pub host_generated_code: i64,
    pub host_arguments: i64,
    pub host_outputs: i64,
    pub host_aliased: i64,
    pub host_temporaries: i64,
    /// The most live at once (0 where the plugin does not say).
    pub peak: i64,
}

pub struct Executable<'a> {
    client: Client,
    raw: *mut sys::PJRT_Executable,
    _loaded: std::marker::PhantomData<&'a LoadedExecutable>,
}

// SAFETY: read-only queries through the thread-safe C API.
unsafe impl Send for Executable<'_> {}
// SAFETY: as above.
unsafe impl Sync for Executable<'_> {}

impl Executable<'_> {
    pub fn name(&self) -> Result<String> {
        let mut args = sys::PJRT_Executable_Name_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args; the name lives as long as the executable.
        unsafe {
            call!(self.client.api(), PJRT_Executable_Name, &mut args)?;
            Ok(super::plugin::lossy(
                args.executable_name,
                args.executable_name_size,
            ))
        }
    }

    pub fn num_replicas(&self) -> Result<usize> {
        let mut args = sys::PJRT_Executable_NumReplicas_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args.
        unsafe { call!(self.client.api(), PJRT_Executable_NumReplicas, &mut args)? };
        Ok(args.num_replicas)
    }

    pub fn num_partitions(&self) -> Result<usize> {
        let mut args = sys::PJRT_Executable_NumPartitions_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args.
        unsafe { call!(self.client.api(), PJRT_Executable_NumPartitions, &mut args)? };
        Ok(args.num_partitions)
    }

    pub fn num_outputs(&self) -> Result<usize> {
        let mut args = sys::PJRT_Executable_NumOutputs_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args.
        unsafe { call!(self.client.api(), PJRT_Executable_NumOutputs, &mut args)? };
        Ok(args.num_outputs)
    }

    /// The type of each output: an array's element type, or a token.
    pub fn output_types(&self) -> Result<Vec<OutputType>> {
        let mut args = sys::PJRT_Executable_OutputElementTypes_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args; the list lives as long as the executable.
        let types = unsafe {
            call!(
                self.client.api(),
                PJRT_Executable_OutputElementTypes,
                &mut args
            )?;
            raw_list(args.output_types, args.num_output_types)
        };
        types
            .into_iter()
            .map(|t| match t {
                sys::PJRT_Buffer_Type_TOKEN => Ok(OutputType::Token),
                t => super::dtype_of(t)
                    .map(OutputType::Array)
                    .ok_or_else(|| Error::UnsupportedDType(format!("PJRT buffer type {t}"))),
            })
            .collect()
    }

    /// The (per-device) dimensions of each output.
    pub fn output_dims(&self) -> Result<Vec<Vec<usize>>> {
        let mut args = sys::PJRT_Executable_OutputDimensions_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args; the lists live as long as the executable.
        let (sizes, dims) = unsafe {
            call!(
                self.client.api(),
                PJRT_Executable_OutputDimensions,
                &mut args
            )?;
            let sizes = raw_list(args.dim_sizes, args.num_outputs);
            let total = sizes.iter().sum();
            (sizes, raw_list(args.dims, total))
        };
        let mut out = Vec::with_capacity(sizes.len());
        let mut at = 0;
        for n in sizes {
            out.push(
                dims[at..at + n]
                    .iter()
                    .map(|&d| d.max(0) as usize)
                    .collect(),
            );
            at += n;
        }
        Ok(out)
    }

    /// The program as compiled, after SPMD partitioning (its parameter
    /// and output shardings, aliasing and shapes), when the plugin provides
    /// it: the format (`hlo`: an `xla.HloModuleProto`; `hlo_with_config`:
    /// an `xla.HloModuleProtoWithConfig`) and the bytes.
    pub fn optimized_program(&self) -> Result<(String, Vec<u8>)> {
        let mut program = sys::PJRT_Program::new();
        let mut args = sys::PJRT_Executable_OptimizedProgram_Args::new();
        args.executable = self.raw;
        args.program = &mut program;
        // SAFETY: valid args; with no code buffer the plugin only sets its
        // size (and format).
        unsafe {
            call!(
                self.client.api(),
                PJRT_Executable_OptimizedProgram,
                &mut args
            )?
        };
        let mut code = vec![0u8; program.code_size];
        program.code = code.as_mut_ptr().cast();
        args.program = &mut program;
        // SAFETY: `code` holds `code_size` bytes for the plugin to fill.
        unsafe {
            call!(
                self.client.api(),
                PJRT_Executable_OptimizedProgram,
                &mut args
            )?
        };
        code.truncate(program.code_size);
        // SAFETY: the plugin's format string lives as long as the program.
        let format = unsafe {
            String::from_utf8_lossy(&raw_list(program.format.cast::<u8>(), program.format_size))
                .into_owned()
        };
        Ok((format, code))
    }

    /// The compiler's cost estimates (`flops`, `bytes accessed`, ...), as
    /// the plugin names them.
    pub fn cost_analysis(&self) -> Result<Vec<(String, NamedValue)>> {
        let mut args = sys::PJRT_Executable_GetCostAnalysis_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args; the properties live as long as the executable.
        unsafe {
            call!(
                self.client.api(),
                PJRT_Executable_GetCostAnalysis,
                &mut args
            )?;
            Ok(read_named_values(args.properties, args.num_properties))
        }
    }

    /// What running the program takes of device and host memory, as the
    /// compiler planned it.
    pub fn compiled_memory_stats(&self) -> Result<MemoryStats> {
        let mut a = sys::PJRT_Executable_GetCompiledMemoryStats_Args::new();
        a.executable = self.raw;
        // SAFETY: valid args; the plugin fills the numbers.
        unsafe {
            call!(
                self.client.api(),
                PJRT_Executable_GetCompiledMemoryStats,
                &mut a
            )?
        };
        Ok(MemoryStats {
            generated_code: a.generated_code_size_in_bytes,
            arguments: a.argument_size_in_bytes,
            outputs: a.output_size_in_bytes,
            aliased: a.alias_size_in_bytes,
            temporaries: a.temp_size_in_bytes,
            host_generated_code: a.host_generated_code_size_in_bytes,
            host_arguments: a.host_argument_size_in_bytes,
            host_outputs: a.host_output_size_in_bytes,
            host_aliased: a.host_alias_size_in_bytes,
            host_temporaries: a.host_temp_size_in_bytes,
            peak: a.peak_memory_in_bytes,
        })
    }

    /// A fingerprint of the compiled program, when the plugin provides one.
    pub fn fingerprint(&self) -> Result<String> {
        let mut args = sys::PJRT_Executable_Fingerprint_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args; the string lives as long as the executable.
        unsafe {
            call!(self.client.api(), PJRT_Executable_Fingerprint, &mut args)?;
            Ok(super::plugin::lossy(
                args.executable_fingerprint,
                args.executable_fingerprint_size,
            ))
        }
    }

    /// The platform-specific serialization (`PJRT_Executable_Serialize`).
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let mut args = sys::PJRT_Executable_Serialize_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args; the bytes live until the deleter runs below.
        unsafe {
            call!(self.client.api(), PJRT_Executable_Serialize, &mut args)?;
            let bytes = raw_list(
                args.serialized_bytes.cast::<u8>(),
                args.serialized_bytes_size,
            );
            if let Some(deleter) = args.serialized_executable_deleter {
                deleter(args.serialized_executable);
            }
            Ok(bytes)
        }
    }
}

impl Drop for Executable<'_> {
    fn drop(&mut self) {
        let mut args = sys::PJRT_Executable_Destroy_Args::new();
        args.executable = self.raw;
        // SAFETY: valid args; not used again.
        if let Err(e) = unsafe { call!(self.client.api(), PJRT_Executable_Destroy, &mut args) } {
            super::plugin::record_unreported_error(e);
        }
        self.client
            .inner
            .live
            .executables
            .fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our encoding agrees with the `CompileOptionsProto` jaxlib serializes
    /// for the same settings (unknown fields are skipped when decoding).
    #[test]
    fn compile_options_match_jaxlib() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/runtime/compile_options_spmd2.pb"
        );
        let jax =
            proto::CompileOptionsProto::decode(std::fs::read(path).unwrap().as_slice()).unwrap();
        let ours = CompileOptions {
            num_replicas: 1,
            num_partitions: 2,
            use_spmd_partitioning: true,
            use_shardy_partitioner: true,
            device_assignment: Some(DeviceAssignment::new(vec![vec![0, 1]]).unwrap()),
            overrides: Vec::new(),
        };
        let ours =
            proto::CompileOptionsProto::decode(ours.to_proto_bytes().unwrap().as_slice()).unwrap();
        assert_eq!(ours, jax);
    }

    #[test]
    fn device_assignment_is_partition_major() {
        let da = DeviceAssignment::new(vec![vec![4, 5, 6], vec![7, 8, 9]]).unwrap();
        assert_eq!(da.device_id(1, 2), Some(9));
        let p = da.to_proto();
        assert_eq!((p.replica_count, p.computation_count), (2, 3));
        assert_eq!(p.computation_devices[2].replica_device_ids, vec![6, 9]);
        assert!(DeviceAssignment::new(vec![vec![1], vec![2, 3]]).is_err());
    }
}
