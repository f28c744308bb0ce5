//! Compiling each executable once, for every worker that needs it.
//!
//! An executable is wanted by key (`pw_exec::cache::Key`: text, compile
//! options, plugin identity). The controller looks in memory, then in the
//! disk cache; otherwise it compiles: itself, when its own PJRT client has
//! the workers' plugin identity, or else on one worker of that plugin (the
//! one that needs it), which streams the serialized executable back. Either
//! way the bytes are kept (memory and disk) and shipped to every worker that
//! needs them, so each executable is compiled once across the cluster and
//! across restarts.

use crate::{
    error::{Error, Result},
    summary::{ExecutableLine, RunSummary},
    Controller,
};
use bytes::Bytes;
use pw_core::plan::Part;
use pw_exec::{
    cache::{compile_options, key_of, plugin_identity, DiskCache, Key},
    Need, Work,
};
use pw_pjrt::{Client, ClientOptions, Plugin, Program};
// What an inspected program says of itself, in the plugin's own terms.
pub use pw_pjrt::{MemoryStats, NamedValue, OptionOverride};
use pw_wire::{self as wire, proto, Collect};
use std::{
    collections::{BTreeMap, HashMap},
    path::PathBuf,
    sync::atomic::Ordering,
    time::Instant,
};

/// Where an executable came from, for the run summary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Source {
    /// Compiled by the controller's own client.
    Controller,
    /// Compiled on this worker.
    Worker(u32),
    /// Read from the disk cache.
    DiskCache,
    /// Already in the controller's memory (compiled for an earlier run).
    Memory,
    /// A colocated Python function: nothing to compile, shipped as it is.
    Python,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Controller => f.write_str("compiled on the controller"),
            Source::Worker(w) => write!(f, "compiled on worker {w}"),
            Source::DiskCache => f.write_str("from the disk cache"),
            Source::Memory => f.write_str("compiled earlier"),
            Source::Python => f.write_str("a Python function, shipped as it is"),
        }
    }
}

/// The controller's own PJRT client, for compiling.
struct Local {
    client: Client,
    identity: String,
}

/// See the module doc.
pub struct Compiler {
    disk: Option<DiskCache>,
    memory: HashMap<Key, Bytes>,
    /// The plugin the controller compiles with (None: never here).
    plugin: Option<PathBuf>,
    local: Option<Local>,
    pub compiled_here: u64,
    pub compiled_on_workers: u64,
    pub from_disk: u64,
    pub seconds: f64,
}

impl Compiler {
    pub fn new(plugin: Option<PathBuf>, disk: Option<DiskCache>) -> Compiler {
        Compiler {
            disk,
            memory: HashMap::new(),
            plugin,
            local: None,
            compiled_here: 0,
            compiled_on_workers: 0,
            from_disk: 0,
            seconds: 0.0,
        }
    }

    pub fn disk(&self) -> Option<&DiskCache> {
        self.disk.as_ref()
    }

    /// The controller's client, able to compile programs for devices
    /// `0..devices`, made (or remade with more CPU devices) on first use;
    /// None when it has no plugin or the plugin will not load.
    fn local(&mut self, devices: usize) -> Option<&Local> {
        let path = self.plugin.clone()?;
        let make = |devices: Option<usize>| {
            Plugin::load(&path)
                .and_then(|plugin| {
                    let options = ClientOptions::from_env()?;
                    Client::open(&plugin, &options, devices)
                })
                .map(|client| Local {
                    identity: plugin_identity(&client),
                    client,
                })
        };
        let count = |l: &Local| l.client.addressable_devices().len();
        let is_cpu = |l: &Local| l.client.platform_name().eq_ignore_ascii_case("cpu");
        let mut made = match self.local.take() {
            Some(l) => Ok(l),
            None => make(None),
        };
        if let Ok(l) = &made {
            if count(l) < devices && is_cpu(l) {
                made = make(Some(devices));
            }
        }
        match made {
            Ok(local) => self.local = Some(local),
            Err(e) => {
                tracing::warn!(plugin = %path.display(), error = %e, "the controller cannot compile with its plugin; workers will");
                self.plugin = None;
                return None;
            }
        }
        self.local.as_ref().filter(|l| count(l) >= devices)
    }

    /// The serialized executable of `need` for a worker of plugin identity
    /// `plugin`, and where it came from. `worker` can compile it when the
    /// controller cannot.
    pub async fn get(
        &mut self,
        need: &Need,
        key: Key,
        plugin: &str,
        worker: (u32, &mut pw_wire::net::WorkerClient),
    ) -> Result<(Bytes, Source)> {
        let failed = |message: String| Error::Compile {
            what: need.what.clone(),
            devices: need.devices.clone(),
            message,
        };
        if let Some(bytes) = self.memory.get(&key) {
            return Ok((bytes.clone(), Source::Memory));
        }
        if pw_core::python::Function::is_encoded(&need.module) {
            return Ok((Bytes::copy_from_slice(&need.module), Source::Python));
        }
        let options = compile_options(need).map_err(|e| failed(e.to_string()))?;
        let options_bytes = options
            .to_proto_bytes()
            .map_err(|e| failed(e.to_string()))?;
        if let Some(bytes) = self
            .disk
            .as_ref()
            .and_then(|d| d.load(&key, &need.module, &options_bytes, plugin))
        {
            self.from_disk += 1;
            let bytes = Bytes::from(bytes);
            self.memory.insert(key, bytes.clone());
            return Ok((bytes, Source::DiskCache));
        }
        let start = Instant::now();
        let devices = need
            .local_devices
            .iter()
            .map(|&d| d as usize + 1)
            .max()
            .unwrap_or(1);
        let local = self
            .local(devices)
            .filter(|l| l.identity == plugin)
            .map(|l| l.client.clone());
        let (bytes, source) = match local {
            Some(client) => {
                let module = need.module.to_vec();
                let bytes = tokio::task::spawn_blocking(move || {
                    client
                        .compile(&Program::mlir(module), &options)
                        .and_then(|e| e.serialize())
                        .map_err(|e| e.to_string())
                })
                .await
                .map_err(|e| failed(e.to_string()))?
                .map_err(failed)?;
                self.compiled_here += 1;
                (bytes, Source::Controller)
            }
            None => {
                let (id, client) = worker;
                let mut stream = client
                    .compile(proto::CompileRequest {
                        module: need.module.to_vec(),
                        local_devices: need.local_devices.clone(),
                        spmd: need.spmd,
                        key: key.hex(),
                    })
                    .await
                    .map_err(|s| {
                        failed(format!("worker {id} could not compile it: {}", s.message()))
                    })?
                    .into_inner();
                let from_worker = |why: String| failed(format!("worker {id}: {why}"));
                let first = stream
                    .message()
                    .await
                    .map_err(|s| from_worker(s.message().to_owned()))?
                    .ok_or_else(|| from_worker("it sent no executable".into()))?;
                let mut collect = Collect::new(&first, 4 << 30, None, "a compiled executable")
                    .map_err(|e| from_worker(e.to_string()))?;
                let mut done = collect
                    .push(&first)
                    .map_err(|e| from_worker(e.to_string()))?;
                while done.is_none() {
                    let chunk = stream
                        .message()
                        .await
                        .map_err(|s| from_worker(s.message().to_owned()))?
                        .ok_or_else(|| from_worker(collect.truncated().to_string()))?;
                    done = collect
                        .push(&chunk)
                        .map_err(|e| from_worker(e.to_string()))?;
                }
                self.compiled_on_workers += 1;
                (done.unwrap_or_default(), Source::Worker(id))
            }
        };
        self.seconds += start.elapsed().as_secs_f64();
        if let Some(disk) = &self.disk {
            if let Err(e) = disk.store(&key, &need.module, &options_bytes, plugin, &bytes) {
                tracing::warn!(dir = %disk.dir().display(), error = %e, "cannot store in the compile cache");
            }
        }
        let bytes = Bytes::from(bytes);
        self.memory.insert(key, bytes.clone());
        Ok((bytes, source))
    }
}

/// What compiling a module shows of it (see [`Compiler::inspect`]).
#[derive(Debug, Clone)]
pub struct Inspected {
    /// The type and per-device dimensions of each output.
    pub outputs: Vec<(pw_core::DType, Vec<usize>)>,
    /// The program as compiled (its format and bytes: see
    /// [`pw_pjrt::Executable::optimized_program`]), when the plugin
    /// gives it.
    pub optimized: Option<(String, Vec<u8>)>,
    /// The compiler's cost estimates, or why the plugin gave none.
    pub cost: std::result::Result<Vec<(String, NamedValue)>, String>,
    /// The memory it planned, when the plugin gives it.
    pub memory: Option<MemoryStats>,
}

impl Compiler {
    /// Compiles `module` here for `devices` devices (SPMD when more than
    /// one) to see what it makes: a front end given a program without its
    /// types (the IFRT proxy) needs them before it can plan a call.
    pub async fn inspect(
        &mut self,
        module: &[u8],
        devices: usize,
        overrides: Vec<(String, pw_pjrt::OptionOverride)>,
    ) -> Result<Inspected> {
        let failed = |message: String| Error::Inspect { message };
        let client = self
            .local(devices)
            .map(|l| l.client.clone())
            .ok_or_else(|| {
                failed("the controller has no PJRT plugin to compile with (--plugin)".into())
            })?;
        let ids: Vec<i32> = (0..devices as i32).collect();
        let mut options = pw_pjrt::CompileOptions::for_device_ids(&ids, devices > 1)
            .map_err(|e| failed(e.to_string()))?;
        options.overrides = overrides;
        let program = Program::mlir(module.to_vec());
        let inspected = tokio::task::spawn_blocking(move || {
            let loaded = client.compile(&program, &options)?;
            let executable = loaded.executable()?;
            let types = executable.output_types()?;
            let dims = executable.output_dims()?;
            // A token carries no data: pw holds it as an empty bool array,
            // as JAX itself makes tokens outside programs.
            let outputs = types
                .into_iter()
                .zip(dims)
                .map(|(t, dims)| match t {
                    pw_pjrt::OutputType::Array(dtype) => (dtype, dims),
                    pw_pjrt::OutputType::Token => (pw_core::DType::Bool, vec![0]),
                })
                .collect();
            Ok::<_, pw_pjrt::Error>(Inspected {
                outputs,
                optimized: executable.optimized_program().ok(),
                cost: executable.cost_analysis().map_err(|e| e.to_string()),
                memory: executable.compiled_memory_stats().ok(),
            })
        })
        .await
        .map_err(|e| failed(e.to_string()))?;
        inspected.map_err(|e| failed(e.to_string()))
    }
}

/// Ships serialized `bytes` under `key` to a worker.
async fn ship(
    client: &mut pw_wire::net::WorkerClient,
    key: Key,
    bytes: &Bytes,
) -> std::result::Result<(), tonic::Status> {
    let hex = key.hex();
    let messages: Vec<proto::LoadRequest> = wire::chunks(bytes.clone())
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| proto::LoadRequest {
            key: if i == 0 { hex.clone() } else { String::new() },
            chunk: Some(chunk),
        })
        .collect();
    client.load(tokio_stream::iter(messages)).await.map(|_| ())
}

/// Every executable each part needs: compiled once, shipped where missing.
/// Each is listed in `summary.executables` with where it came from (None:
/// the worker had it). Returns each worker's keys, in its part's order.
pub(crate) async fn executables(
    c: &Controller,
    parts: &BTreeMap<u32, (Part, Work)>,
    summary: &mut RunSummary,
    progress: &(dyn Fn(String) + Send + Sync),
) -> Result<BTreeMap<u32, Vec<Key>>> {
    let mut keys: BTreeMap<u32, Vec<Key>> = BTreeMap::new();
    for (&w, (_, work)) in parts {
        let mut handle = c.inner.workers.handle(w)?;
        let mut worker_keys = Vec::with_capacity(work.needs.len());
        for need in &work.needs {
            let key = key_of(need, &handle.plugin)?;
            worker_keys.push(key);
            let line = |source| ExecutableLine {
                what: need.what.clone(),
                devices: need.devices.clone(),
                worker: w,
                key: key.hex(),
                source,
            };
            let shipped_already = summary
                .executables
                .iter()
                .any(|e| e.worker == w && e.key == key.hex());
            if handle.loaded.contains(&key) || shipped_already {
                summary.executables.push(line(None));
                continue;
            }
            let source = provide(c, need, key, w, &mut handle, progress).await?;
            summary.executables.push(line(Some(source)));
        }
        keys.insert(w, worker_keys);
    }
    Ok(keys)
}

/// Gets `need` (compiled, from a cache, or compiled by worker `w`) and
/// loads it on `w`; says where it came from.
async fn provide(
    c: &Controller,
    need: &Need,
    key: Key,
    w: u32,
    handle: &mut crate::registry::Handle,
    progress: &(dyn Fn(String) + Send + Sync),
) -> Result<Source> {
    let (bytes, source) = {
        let mut compiler = c.inner.compiler.lock().await;
        compiler
            .get(need, key, &handle.plugin, (w, &mut handle.client))
            .await?
    };
    if matches!(source, Source::Controller | Source::Worker(_)) {
        progress(format!(
            "compiled {} for devices {:?} ({source})",
            need.what, need.devices
        ));
    }
    if source != Source::Worker(w) {
        ship(&mut handle.client, key, &bytes)
            .await
            .map_err(|s| Error::Ship {
                worker: w,
                what: need.what.clone(),
                message: s.message().to_owned(),
            })?;
        let counters = &c.inner.counters;
        counters.executables_shipped.fetch_add(1, Ordering::Relaxed);
        counters
            .bytes_shipped
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
    }
    c.inner.workers.loaded(w, key);
    Ok(source)
}
