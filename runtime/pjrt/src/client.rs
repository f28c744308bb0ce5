//! Clients, devices and memories.

use std::collections::HashMap;
use std::ffi::c_int;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::plugin::{lossy, Api, Plugin};
use super::sys::{self, Args as _};
use crate::error::{Error, Result};

/// A value of a PJRT named-value list (client options, plugin attributes).
#[derive(Debug, Clone, PartialEq)]
pub enum NamedValue {
    String(String),
    Int64(i64),
    Int64List(Vec<i64>),
    Float(f32),
    Bool(bool),
}

/// Options for [`Client::new`]: platform-specific named values.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    values: Vec<(String, NamedValue)>,
}

impl ClientOptions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets (or replaces) one option.
    pub fn with(mut self, name: impl Into<String>, value: NamedValue) -> Self {
        let name = name.into();
        self.values.retain(|(n, _)| *n != name);
        self.values.push((name, value));
        self
    }

    /// CPU plugins: the number of CPU devices (`cpu_device_count`, an int64).
    pub fn cpu_device_count(self, count: usize) -> Self {
        self.with("cpu_device_count", NamedValue::Int64(count as i64))
    }

    pub fn values(&self) -> &[(String, NamedValue)] {
        &self.values
    }

    /// The options `$PW_PJRT_CLIENT_OPTIONS` names (see [`ClientOptions::parse`]);
    /// none when it is unset. This is how a GPU plugin is told, say, not to
    /// take most of the device's memory at start
    /// (`PW_PJRT_CLIENT_OPTIONS='preallocate=false'`).
    pub fn from_env() -> Result<Self> {
        match std::env::var(CLIENT_OPTIONS_ENV) {
            Ok(text) => Self::parse(&text)
                .map_err(|e| Error::invalid(format!("${CLIENT_OPTIONS_ENV}: {e}"))),
            Err(std::env::VarError::NotPresent) => Ok(Self::new()),
            Err(e) => Err(Error::invalid(format!("${CLIENT_OPTIONS_ENV}: {e}"))),
        }
    }

    /// Options written `name=value;name=value`. A value is a bool (`true`,
    /// `false`), an int64 (`8`), a float (`0.5`), a list of int64s
    /// (`[0,1]`), or else a string; `name="8"` forces a string.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let mut options = Self::new();
        for item in text.split(';').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| format!("`{item}` is not name=value"))?;
            let (name, value) = (name.trim(), value.trim());
            if name.is_empty() {
                return Err(format!("`{item}` has no name"));
            }
            options = options.with(
                name,
                parse_value(value).map_err(|e| format!("{name}: {e}"))?,
            );
        }
        Ok(options)
    }

    /// Checks the types of the options whose type is known: a plugin may not
    /// survive a wrong one (the 0.81 CPU plugin aborts the process on a
    /// string `cpu_device_count`).
    fn check(&self) -> Result<()> {
        for (name, value) in &self.values {
            if name == "cpu_device_count" && !matches!(value, NamedValue::Int64(n) if *n > 0) {
                return Err(Error::invalid(format!(
                    "client option cpu_device_count must be a positive int64, got {value:?}"
                )));
            }
        }
        Ok(())
    }
}

/// The variable [`ClientOptions::from_env`] reads.
pub const CLIENT_OPTIONS_ENV: &str = "PW_PJRT_CLIENT_OPTIONS";

fn parse_value(value: &str) -> std::result::Result<NamedValue, String> {
    if let Some(quoted) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        return Ok(NamedValue::String(quoted.to_owned()));
    }
    if let Some(list) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
        return list
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| {
                x.parse::<i64>()
                    .map_err(|_| format!("`{x}` in {value} is not an int64"))
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(NamedValue::Int64List);
    }
    Ok(match value {
        "true" => NamedValue::Bool(true),
        "false" => NamedValue::Bool(false),
        _ => match (value.parse::<i64>(), value.parse::<f32>()) {
            (Ok(n), _) => NamedValue::Int64(n),
            (_, Ok(x)) if x.is_finite() => NamedValue::Float(x),
            _ => NamedValue::String(value.to_owned()),
        },
    })
}

/// Counts of live objects a client has handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LiveCounts {
    pub buffers: usize,
    pub events: usize,
    pub executables: usize,
    /// Unfinished or undropped [`AsyncTransfer`](super::AsyncTransfer)s.
    pub transfers: usize,
}

#[derive(Default)]
pub(crate) struct LiveCounters {
    pub(crate) buffers: AtomicUsize,
    pub(crate) events: AtomicUsize,
    pub(crate) executables: AtomicUsize,
    pub(crate) transfers: AtomicUsize,
}

pub(crate) struct DeviceInfo {
    pub(crate) raw: *mut sys::PJRT_Device,
    id: i32,
    process_index: i32,
    kind: String,
    description: String,
    addressable: bool,
    local_hardware_id: i32,
    memories: Vec<usize>,
    default_memory: Option<usize>,
}

pub(crate) struct MemoryInfo {
    pub(crate) raw: *mut sys::PJRT_Memory,
    id: i32,
    kind: String,
    devices: Vec<usize>,
}

pub(crate) struct ClientInner {
    pub(crate) plugin: Plugin,
    pub(crate) raw: *mut sys::PJRT_Client,
    platform_name: String,
    platform_version: String,
    pub(crate) devices: Vec<DeviceInfo>,
    device_index: HashMap<usize, usize>,
    /// Indices into `devices`, in `PJRT_Client_AddressableDevices` order.
    addressable: Vec<usize>,
    pub(crate) memories: Vec<MemoryInfo>,
    memory_index: HashMap<usize, usize>,
    pub(crate) live: LiveCounters,
}

// SAFETY: a PJRT client and its devices/memories may be used from any thread;
// the raw pointers are owned by the client and only read.
unsafe impl Send for ClientInner {}
// SAFETY: as above.
unsafe impl Sync for ClientInner {}

/// A PJRT client: one runtime instance of a plugin with its devices.
///
/// Cheap to clone (an `Arc`); destroyed when the last clone and the last
/// buffer, event and executable made from it are gone. `Send + Sync`.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<ClientInner>,
}

impl Client {
    /// Creates a client (`PJRT_Client_Create`) and reads its devices and memories.
    pub fn new(plugin: &Plugin, options: &ClientOptions) -> Result<Client> {
        options.check()?;
        let api = &*plugin.api;
        // The C strings and lists must outlive the call.
        let names: Vec<Vec<u8>> = options
            .values
            .iter()
            .map(|(n, _)| n.clone().into_bytes())
            .collect();
        let strings: Vec<Vec<u8>> = options
            .values
            .iter()
            .map(|(_, v)| match v {
                NamedValue::String(s) => s.clone().into_bytes(),
                _ => Vec::new(),
            })
            .collect();
        let mut raw_values = Vec::with_capacity(options.values.len());
        for (i, (_, value)) in options.values.iter().enumerate() {
            let mut nv = sys::PJRT_NamedValue::new();
            nv.name = names[i].as_ptr().cast();
            nv.name_size = names[i].len();
            match value {
                NamedValue::String(_) => {
                    nv.type_ = sys::PJRT_NamedValue_kString;
                    nv.value.string_value = strings[i].as_ptr().cast();
                    nv.value_size = strings[i].len();
                }
                NamedValue::Int64(v) => {
                    nv.type_ = sys::PJRT_NamedValue_kInt64;
                    nv.value.int64_value = *v;
                    nv.value_size = 1;
                }
                NamedValue::Int64List(v) => {
                    nv.type_ = sys::PJRT_NamedValue_kInt64List;
                    nv.value.int64_array_value = v.as_ptr();
                    nv.value_size = v.len();
                }
                NamedValue::Float(v) => {
                    nv.type_ = sys::PJRT_NamedValue_kFloat;
                    nv.value.float_value = *v;
                    nv.value_size = 1;
                }
                NamedValue::Bool(v) => {
                    nv.type_ = sys::PJRT_NamedValue_kBool;
                    nv.value.bool_value = *v;
                    nv.value_size = 1;
                }
            }
            raw_values.push(nv);
        }
        let mut args = sys::PJRT_Client_Create_Args::new();
        args.create_options = raw_values.as_ptr();
        args.num_options = raw_values.len();
        // SAFETY: valid args; every pointer lives until the call returns.
        unsafe { call!(api, PJRT_Client_Create, &mut args)? };
        let raw = args.client;
        if raw.is_null() {
            return Err(Error::Pjrt {
                function: "PJRT_Client_Create",
                code: crate::error::ErrorCode::Internal,
                message: "returned no client".into(),
            });
        }
        let mut inner = ClientInner {
            plugin: plugin.clone(),
            raw,
            platform_name: String::new(),
            platform_version: String::new(),
            devices: Vec::new(),
            device_index: HashMap::new(),
            addressable: Vec::new(),
            memories: Vec::new(),
            memory_index: HashMap::new(),
            live: LiveCounters::default(),
        };
        // From here on `inner`'s Drop destroys the client if a query fails.
        inner.describe()?;
        if inner.platform_name.eq_ignore_ascii_case("cpu") {
            api.register_custom_calls()?;
        }
        Ok(Client {
            inner: Arc::new(inner),
        })
    }

    /// A client with `devices` devices where that is asked: a CPU plugin
    /// makes as many (`cpu_device_count`); any other plugin must have
    /// exactly that many (a GPU plugin's devices are chosen with its
    /// `visible_devices` option or `CUDA_VISIBLE_DEVICES`). The plugin's
    /// platform is known only once a client exists, so a CPU client of
    /// another count is made twice.
    pub fn open(
        plugin: &Plugin,
        options: &ClientOptions,
        devices: Option<usize>,
    ) -> Result<Client> {
        let client = Client::new(plugin, options)?;
        let Some(wanted) = devices else {
            return Ok(client);
        };
        let have = client.addressable_devices().len();
        if client.platform_name().eq_ignore_ascii_case("cpu") {
            if have == wanted {
                return Ok(client);
            }
            drop(client);
            return Client::new(plugin, &options.clone().cpu_device_count(wanted));
        }
        if have != wanted {
            return Err(Error::invalid(format!(
                "{wanted} devices were asked for, but the {} plugin {} has {have}; choose them \
                 with ${CLIENT_OPTIONS_ENV} (visible_devices=[..]) or the platform's own variable",
                client.platform_name(),
                plugin.path().display()
            )));
        }
        Ok(client)
    }

    pub(crate) fn api(&self) -> &Api {
        &self.inner.plugin.api
    }

    pub fn plugin(&self) -> &Plugin {
        &self.inner.plugin
    }

    /// The platform name (`"cpu"`, `"cuda"`...).
    pub fn platform_name(&self) -> &str {
        &self.inner.platform_name
    }

    pub fn platform_version(&self) -> &str {
        &self.inner.platform_version
    }

    /// All devices the runtime sees, in the plugin's order.
    pub fn devices(&self) -> Vec<Device> {
        (0..self.inner.devices.len())
            .map(|index| Device {
                client: self.clone(),
                index,
            })
            .collect()
    }

    /// The devices this process can drive.
    pub fn addressable_devices(&self) -> Vec<Device> {
        self.inner
            .addressable
            .iter()
            .map(|&index| Device {
                client: self.clone(),
                index,
            })
            .collect()
    }

    /// The first `n` addressable devices, or [`Error::NotEnoughDevices`].
    pub fn first_devices(&self, n: usize, what: &str) -> Result<Vec<Device>> {
        let devices = self.addressable_devices();
        if devices.len() < n {
            return Err(Error::NotEnoughDevices {
                what: what.to_string(),
                needed: n,
                available: devices.len(),
            });
        }
        Ok(devices.into_iter().take(n).collect())
    }

    /// The device whose id (`PJRT_DeviceDescription_Id`) is `id`.
    pub fn device_by_id(&self, id: i32) -> Result<Device> {
        self.devices()
            .into_iter()
            .find(|d| d.id() == id)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "no device with id {id} (the client has {})",
                    self.inner.devices.len()
                ))
            })
    }

    /// Every memory the client can address.
    pub fn memories(&self) -> Vec<Memory> {
        (0..self.inner.memories.len())
            .map(|index| Memory {
                client: self.clone(),
                index,
            })
            .collect()
    }

    /// Live buffers, events and executables made by this client.
    pub fn live(&self) -> LiveCounts {
        let live = &self.inner.live;
        LiveCounts {
            buffers: live.buffers.load(Ordering::SeqCst),
            events: live.events.load(Ordering::SeqCst),
            executables: live.executables.load(Ordering::SeqCst),
            transfers: live.transfers.load(Ordering::SeqCst),
        }
    }

    /// The plugin's default device assignment, as `[replica][partition]` device ids.
    pub fn default_device_assignment(
        &self,
        replicas: usize,
        partitions: usize,
    ) -> Result<Vec<Vec<i32>>> {
        let n = replicas * partitions;
        let mut ids: Vec<c_int> = vec![0; n];
        let mut args = sys::PJRT_Client_DefaultDeviceAssignment_Args::new();
        args.client = self.inner.raw;
        args.num_replicas = to_c_int(replicas, "num_replicas")?;
        args.num_partitions = to_c_int(partitions, "num_partitions")?;
        args.default_assignment_size = n;
        args.default_assignment = ids.as_mut_ptr();
        // SAFETY: valid args; `ids` has `n` slots.
        unsafe { call!(self.api(), PJRT_Client_DefaultDeviceAssignment, &mut args)? };
        Ok(ids
            .chunks(partitions.max(1))
            .map(<[c_int]>::to_vec)
            .collect())
    }

    pub(crate) fn device_from_raw(&self, raw: *mut sys::PJRT_Device) -> Result<Device> {
        self.inner
            .device_index
            .get(&(raw as usize))
            .map(|&index| Device {
                client: self.clone(),
                index,
            })
            .ok_or_else(|| Error::invalid("the plugin returned a device this client does not know"))
    }

    pub(crate) fn memory_from_raw(&self, raw: *mut sys::PJRT_Memory) -> Result<Memory> {
        self.inner
            .memory_index
            .get(&(raw as usize))
            .map(|&index| Memory {
                client: self.clone(),
                index,
            })
            .ok_or_else(|| Error::invalid("the plugin returned a memory this client does not know"))
    }

    /// Whether `other` is this very client (not merely one of the same plugin).
    pub fn same_as(&self, other: &Client) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

pub(crate) fn to_c_int(n: usize, what: &str) -> Result<c_int> {
    c_int::try_from(n).map_err(|_| Error::invalid(format!("{what} = {n} does not fit a C int")))
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Client({}, {} devices)",
            self.inner.platform_name,
            self.inner.devices.len()
        )
    }
}

impl ClientInner {
    /// Reads the platform, devices and memories once; they never change.
    fn describe(&mut self) -> Result<()> {
        let api = &*self.plugin.api;
        let mut name = sys::PJRT_Client_PlatformName_Args::new();
        name.client = self.raw;
        // SAFETY: valid args; the returned string lives as long as the client.
        unsafe {
            call!(api, PJRT_Client_PlatformName, &mut name)?;
            self.platform_name = lossy(name.platform_name, name.platform_name_size);
        }
        let mut version = sys::PJRT_Client_PlatformVersion_Args::new();
        version.client = self.raw;
        // SAFETY: as above.
        unsafe {
            call!(api, PJRT_Client_PlatformVersion, &mut version)?;
            self.platform_version = lossy(version.platform_version, version.platform_version_size);
        }

        let mut mems = sys::PJRT_Client_AddressableMemories_Args::new();
        mems.client = self.raw;
        // SAFETY: valid args; the list lives as long as the client.
        let raw_memories = unsafe {
            call!(api, PJRT_Client_AddressableMemories, &mut mems)?;
            raw_list(mems.addressable_memories, mems.num_addressable_memories)
        };
        for (index, &raw) in raw_memories.iter().enumerate() {
            self.memory_index.insert(raw as usize, index);
            let mut id = sys::PJRT_Memory_Id_Args::new();
            id.memory = raw;
            let mut kind = sys::PJRT_Memory_Kind_Args::new();
            kind.memory = raw;
            // SAFETY: valid args on a live memory.
            let (id, kind) = unsafe {
                call!(api, PJRT_Memory_Id, &mut id)?;
                call!(api, PJRT_Memory_Kind, &mut kind)?;
                (id.id, lossy(kind.kind, kind.kind_size))
            };
            self.memories.push(MemoryInfo {
                raw,
                id,
                kind,
                devices: Vec::new(),
            });
        }

        let mut devs = sys::PJRT_Client_Devices_Args::new();
        devs.client = self.raw;
        // SAFETY: valid args; the list lives as long as the client.
        let raw_devices = unsafe {
            call!(api, PJRT_Client_Devices, &mut devs)?;
            raw_list(devs.devices, devs.num_devices)
        };
        for (index, &raw) in raw_devices.iter().enumerate() {
            self.device_index.insert(raw as usize, index);
        }
        for &raw in &raw_devices {
            let info = self.describe_device(raw)?;
            self.devices.push(info);
        }
        let mut addressable = sys::PJRT_Client_AddressableDevices_Args::new();
        addressable.client = self.raw;
        // SAFETY: valid args; the list lives as long as the client.
        let raw_addressable = unsafe {
            call!(api, PJRT_Client_AddressableDevices, &mut addressable)?;
            raw_list(
                addressable.addressable_devices,
                addressable.num_addressable_devices,
            )
        };
        self.addressable = raw_addressable
            .iter()
            .filter_map(|d| self.device_index.get(&(*d as usize)).copied())
            .collect();
        for (m, memory) in raw_memories.iter().enumerate() {
            let mut by = sys::PJRT_Memory_AddressableByDevices_Args::new();
            by.memory = *memory;
            // SAFETY: valid args; the list lives as long as the client.
            let devices = unsafe {
                call!(api, PJRT_Memory_AddressableByDevices, &mut by)?;
                raw_list(by.devices, by.num_devices)
            };
            self.memories[m].devices = devices
                .iter()
                .filter_map(|d| self.device_index.get(&(*d as usize)).copied())
                .collect();
        }
        Ok(())
    }

    fn describe_device(&self, raw: *mut sys::PJRT_Device) -> Result<DeviceInfo> {
        let api = &*self.plugin.api;
        let mut desc = sys::PJRT_Device_GetDescription_Args::new();
        desc.device = raw;
        // SAFETY: valid args on a live device.
        unsafe { call!(api, PJRT_Device_GetDescription, &mut desc)? };
        let d = desc.device_description;
        let mut id = sys::PJRT_DeviceDescription_Id_Args::new();
        id.device_description = d;
        let mut process = sys::PJRT_DeviceDescription_ProcessIndex_Args::new();
        process.device_description = d;
        let mut kind = sys::PJRT_DeviceDescription_Kind_Args::new();
        kind.device_description = d;
        let mut text = sys::PJRT_DeviceDescription_ToString_Args::new();
        text.device_description = d;
        let mut addressable = sys::PJRT_Device_IsAddressable_Args::new();
        addressable.device = raw;
        let mut hw = sys::PJRT_Device_LocalHardwareId_Args::new();
        hw.device = raw;
        let mut mems = sys::PJRT_Device_AddressableMemories_Args::new();
        mems.device = raw;
        // SAFETY: valid args on a live device; strings and lists live as long
        // as the client.
        let info = unsafe {
            call!(api, PJRT_DeviceDescription_Id, &mut id)?;
            call!(api, PJRT_DeviceDescription_ProcessIndex, &mut process)?;
            call!(api, PJRT_DeviceDescription_Kind, &mut kind)?;
            call!(api, PJRT_DeviceDescription_ToString, &mut text)?;
            call!(api, PJRT_Device_IsAddressable, &mut addressable)?;
            call!(api, PJRT_Device_LocalHardwareId, &mut hw)?;
            call!(api, PJRT_Device_AddressableMemories, &mut mems)?;
            DeviceInfo {
                raw,
                id: id.id,
                process_index: process.process_index,
                kind: lossy(kind.device_kind, kind.device_kind_size),
                description: lossy(text.to_string, text.to_string_size),
                addressable: addressable.is_addressable,
                local_hardware_id: hw.local_hardware_id,
                memories: raw_list(mems.memories, mems.num_memories)
                    .iter()
                    .filter_map(|m| self.memory_index.get(&(*m as usize)).copied())
                    .collect(),
                default_memory: None,
            }
        };
        let mut default = sys::PJRT_Device_DefaultMemory_Args::new();
        default.device = raw;
        // SAFETY: valid args on a live device.
        let default_memory = match unsafe { call!(api, PJRT_Device_DefaultMemory, &mut default) } {
            Ok(()) => self.memory_index.get(&(default.memory as usize)).copied(),
            // Optional in the C API: a plugin without memory spaces has none.
            Err(_) => None,
        };
        Ok(DeviceInfo {
            default_memory,
            ..info
        })
    }
}

/// Copies a (pointer, length) list the plugin returned.
///
/// # Safety
/// `ptr` is null or valid for `len` elements.
pub(crate) unsafe fn raw_list<T: Copy>(ptr: *const T, len: usize) -> Vec<T> {
    if ptr.is_null() || len == 0 {
        return Vec::new();
    }
    // SAFETY: forwarded contract.
    unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec()
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        let mut args = sys::PJRT_Client_Destroy_Args::new();
        args.client = self.raw;
        // SAFETY: valid args; every child handle holds this client, so none is left.
        if let Err(e) = unsafe { call!(&*self.plugin.api, PJRT_Client_Destroy, &mut args) } {
            super::plugin::record_unreported_error(e);
        }
    }
}

/// A device of a [`Client`]. Cheap to clone; compares by identity.
#[derive(Clone)]
pub struct Device {
    pub(crate) client: Client,
    index: usize,
}

impl Device {
    fn info(&self) -> &DeviceInfo {
        &self.client.inner.devices[self.index]
    }

    pub(crate) fn raw(&self) -> *mut sys::PJRT_Device {
        self.info().raw
    }

    /// An identity key (client, index): what `Eq` and `Hash` compare.
    pub(crate) fn key(&self) -> (usize, usize) {
        (Arc::as_ptr(&self.client.inner) as usize, self.index)
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The id PJRT gives the device (unique among devices of the platform).
    pub fn id(&self) -> i32 {
        self.info().id
    }

    pub fn process_index(&self) -> i32 {
        self.info().process_index
    }

    /// The device kind (`"cpu"`, a GPU model name...).
    pub fn kind(&self) -> &str {
        &self.info().kind
    }

    pub fn is_addressable(&self) -> bool {
        self.info().addressable
    }

    pub fn local_hardware_id(&self) -> i32 {
        self.info().local_hardware_id
    }

    /// The memories this device can address.
    pub fn memories(&self) -> Vec<Memory> {
        self.info()
            .memories
            .iter()
            .map(|&index| Memory {
                client: self.client.clone(),
                index,
            })
            .collect()
    }

    /// The memory data lives in by default, if the plugin reports one.
    pub fn default_memory(&self) -> Option<Memory> {
        self.info().default_memory.map(|index| Memory {
            client: self.client.clone(),
            index,
        })
    }

    /// The plugin's short description, e.g. `CpuDevice(id=0)`.
    pub fn description(&self) -> &str {
        &self.info().description
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.client.same_as(&other.client)
    }
}

impl Eq for Device {}

impl Hash for Device {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let info = self.info();
        if info.description.is_empty() {
            write!(f, "Device(id={}, kind={})", info.id, info.kind)
        } else {
            f.write_str(&info.description)
        }
    }
}

/// A memory space of a [`Client`] (device memory, pinned host...).
#[derive(Clone)]
pub struct Memory {
    pub(crate) client: Client,
    index: usize,
}

impl Memory {
    fn info(&self) -> &MemoryInfo {
        &self.client.inner.memories[self.index]
    }

    pub(crate) fn raw(&self) -> *mut sys::PJRT_Memory {
        self.info().raw
    }

    pub fn id(&self) -> i32 {
        self.info().id
    }

    /// The memory kind (`"device"`, `"pinned_host"`, `"unpinned_host"`...).
    pub fn kind(&self) -> &str {
        &self.info().kind
    }

    /// The devices that can address this memory.
    pub fn devices(&self) -> Vec<Device> {
        self.info()
            .devices
            .iter()
            .map(|&index| Device {
                client: self.client.clone(),
                index,
            })
            .collect()
    }
}

impl PartialEq for Memory {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.client.same_as(&other.client)
    }
}

impl Eq for Memory {}

impl fmt::Debug for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Memory(id={}, kind={})", self.id(), self.kind())
    }
}
