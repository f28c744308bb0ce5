//! One IFRT proxy connection: a pw session, and the IFRT handles of its
//! arrays, executables and futures.
//!
//! Every IFRT array is a pw session array laid out as the IFRT sharding
//! says (see [`crate::convert`]); every operation that makes arrays runs a
//! small plan ([`crate::plans`]) in the session, so bytes move host to
//! worker and worker to worker through pw's own paths, and computations run
//! where the arrays are. IFRT device `i` is device `devices[i]` of the
//! session's slice.
//!
//! A request that fails answers with its error, and an error stored under
//! the array handles the client chose for its results, so that a later
//! request naming them fails with the same message (never "unknown
//! handle"). Handles the server mints start at 2^62, clear of the
//! client's.

use crate::{
    convert, direct,
    error::{Error, Failure, Result},
    hlo,
    host_buffers::Source,
    protocol::{
        self, ifrt_request::Request as Rq, ifrt_response::Response as Rs, xla::ifrt,
        xla::LayoutProto,
    },
    HostBuffers,
};
use pw_controller::{
    sessions::{arrays::Fetched, Transfer},
    Controller,
};
use pw_core::{
    plan::{Module, ValueInfo},
    plans, DType,
};
use pw_exec::HostArray;
use pw_wire::{proto, Collect};
use std::{
    collections::{BTreeSet, HashMap},
    sync::{Arc, Mutex},
    time::Duration,
};

mod colocated;

/// The first handle the server mints.
const SERVER_HANDLES: u64 = 1 << 62;

/// How long a request waits for a host buffer the client has yet to store.
const HOST_BUFFER_WAIT: Duration = Duration::from_secs(60);

fn invalid(message: impl Into<String>) -> Error {
    Error::Invalid(message.into())
}

fn unimplemented(message: impl Into<String>) -> Error {
    Error::Unimplemented(message.into())
}

/// One IFRT array.
#[derive(Clone)]
struct Array {
    /// The pw session array.
    pw: u64,
    info: ValueInfo,
    /// The IFRT devices of its positions.
    devices: Vec<i32>,
    /// As the client described it (echoed back).
    sharding: ifrt::ShardingProto,
    /// Its positions hold partial values that sum to it (an unreduced
    /// sharding; see [`convert::Placement::unreduced`]).
    unreduced: bool,
    /// How its shards lie in device memory when not in XLA's default
    /// layout: the layout the program that made it gave them. Every array
    /// pw makes itself (uploads, copies, reshards, shards and assemblies)
    /// is in the default layout.
    layout: Option<LayoutProto>,
    /// A string array (IFRT's `KIND_STRING`, of one element): its pw value
    /// holds the string's length and bytes (see
    /// [`colocated::STRING_BYTES`]).
    string: bool,
}

/// Where an array of a given type lies: its pw value, the IFRT devices of
/// its positions, and whether they hold partial values.
struct Placed {
    info: ValueInfo,
    devices: Vec<i32>,
    unreduced: bool,
}

#[derive(Clone)]
enum Slot {
    Array(Arc<Array>),
    /// What made it failed (or it was deleted): why.
    Failed(String),
}

/// One compiled program.
struct Executable {
    name: String,
    module: Module,
    /// Its IFRT devices, in partition order.
    devices: Vec<i32>,
    /// The type and per-device dimensions of each output.
    outputs: Vec<(DType, Vec<usize>)>,
    /// Its parameters' and outputs' shardings, and what it donates.
    compiled: hlo::Compiled,
    /// The compiler's cost estimates and planned memory, as the
    /// controller's plugin gave them.
    cost: std::result::Result<Vec<(String, pw_controller::compile::NamedValue)>, String>,
    /// The program as compiled (its format and bytes), for its text.
    optimized: Option<(String, Vec<u8>)>,
    memory: Option<pw_controller::compile::MemoryStats>,
    /// The pw executable for each signature of arguments.
    built: HashMap<String, u64>,
}

/// A future the client may ask about.
#[derive(Clone)]
enum Future {
    Done,
    /// Ready when these pw arrays are.
    Arrays(Vec<u64>),
}

struct State {
    arrays: HashMap<u64, Slot>,
    executables: HashMap<u64, Arc<Mutex<Executable>>>,
    /// Colocated Python programs, by executable handle.
    colocated: HashMap<u64, Arc<colocated::Colocated>>,
    futures: HashMap<u64, Future>,
    /// The pw executable built for each plan key (puts and transforms).
    puts: HashMap<String, u64>,
    /// Arrays made with `REUSE_INPUT` semantics, and the arrays whose
    /// buffers they took over: in IFRT they share buffers, so deleting or
    /// donating the one deletes the others. (pw copied the bytes; it
    /// deletes the others to the same effect.)
    shares: HashMap<u64, Vec<u64>>,
    next: u64,
    /// The next pw array id for a direct upload: ids from
    /// `CLIENT_ARRAYS` up are the session's to choose.
    next_direct: u64,
}

impl State {
    fn next_direct(&mut self) -> u64 {
        self.next_direct += 1;
        self.next_direct - 1
    }
}

/// See the module doc.
pub struct Session {
    pub controller: Controller,
    /// The pw session.
    pub id: u64,
    /// The session's id for the IFRT client: random, and shown nowhere
    /// else (host buffers are stored under it).
    pub ifrt_id: u64,
    /// The pw device of each IFRT device.
    pub devices: Vec<i64>,
    buffers: Arc<HostBuffers>,
    state: Mutex<State>,
}

impl Session {
    pub fn new(
        controller: Controller,
        (id, ifrt_id): (u64, u64),
        devices: Vec<i64>,
        buffers: Arc<HostBuffers>,
    ) -> Session {
        Session {
            controller,
            id,
            ifrt_id,
            devices,
            buffers,
            state: Mutex::new(State {
                arrays: HashMap::new(),
                executables: HashMap::new(),
                colocated: HashMap::new(),
                futures: HashMap::new(),
                puts: HashMap::new(),
                shares: HashMap::new(),
                next: SERVER_HANDLES,
                next_direct: pw_controller::sessions::stream::CLIENT_ARRAYS,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn mint(&self) -> u64 {
        let mut s = self.state();
        s.next += 1;
        s.next - 1
    }

    /// Answers `request` (see the module doc); a failure is stored under
    /// the request's result handles, so that later requests see it.
    pub async fn handle(&self, request: Rq) -> std::result::Result<Rs, Failure> {
        self.controller.sessions().touch(self.id);
        let results = result_handles(&request);
        let name = request_name(&request);
        let answer = self.answer(request).await.map_err(Failure::from);
        self.controller
            .metrics()
            .proxy_request(&name, answer.is_ok());
        if let Err(e) = &answer {
            let mut s = self.state();
            for h in results {
                s.arrays.insert(h, Slot::Failed(e.message.clone()));
            }
        }
        answer
    }

    async fn answer(&self, request: Rq) -> Result<Rs> {
        Ok(match request {
            Rq::InitRequest(_) => Rs::InitResponse(self.init()?),
            Rq::MakeArrayFromHostBufferRequest(r) => {
                Rs::MakeArrayFromHostBufferResponse(self.make_array(r).await?)
            }
            Rq::MakeArraysFromHostBufferShardsRequest(r) => {
                Rs::MakeArraysFromHostBufferShardsResponse(self.make_arrays(r).await?)
            }
            Rq::CopyToHostBufferRequest(r) => {
                self.copy_to_host(
                    r.array_handle,
                    r.host_buffer_handle,
                    r.byte_strides.as_ref(),
                )
                .await?;
                Rs::CopyToHostBufferResponse(protocol::CopyToHostBufferResponse::default())
            }
            Rq::FullyReplicatedShardRequest(r) => {
                let handle = self
                    .replicated_shard(r.array_handle, r.result_handle)
                    .await?;
                Rs::FullyReplicatedShardResponse(protocol::FullyReplicatedShardResponse {
                    array_handle: handle,
                })
            }
            Rq::DisassembleIntoSingleDeviceArraysRequest(r) => {
                let handles = self.disassemble(r.array_handle, &r.result_handles).await?;
                Rs::DisassembleIntoSingleDeviceArraysResponse(
                    protocol::DisassembleIntoSingleDeviceArraysResponse {
                        array_handles: handles,
                    },
                )
            }
            Rq::AssembleArrayFromSingleDeviceArraysRequest(r) => {
                let handle = self.assemble(r).await?;
                Rs::AssembleArrayFromSingleDeviceArraysResponse(
                    protocol::AssembleArrayFromSingleDeviceArraysResponse {
                        array_handle: handle,
                    },
                )
            }
            Rq::CopyArraysRequest(r) => {
                let handles = self.copy_arrays(r).await?;
                Rs::CopyArraysResponse(protocol::CopyArraysResponse {
                    array_handles: handles,
                })
            }
            Rq::RemapArraysRequest(r) => {
                let handles = self.remap(r).await?;
                Rs::RemapArraysResponse(protocol::RemapArraysResponse {
                    array_handles: handles,
                })
            }
            Rq::ReshardArraysRequest(r) => {
                let handles = self.reshard(r).await?;
                Rs::ReshardArraysResponse(protocol::ReshardArraysResponse {
                    array_handles: handles,
                })
            }
            Rq::CheckValueReadyRequest(r) => {
                self.ready(&r.value_handles).await?;
                Rs::CheckValueReadyResponse(protocol::CheckValueReadyResponse::default())
            }
            Rq::CheckFutureRequest(r) => {
                self.future(r.future_handle).await?;
                Rs::CheckFutureResponse(protocol::CheckFutureResponse::default())
            }
            Rq::DeleteArrayRequest(r) => {
                self.delete(&r.array_handle, false).await;
                let future = self.mint();
                self.state().futures.insert(future, Future::Done);
                Rs::DeleteArrayResponse(protocol::DeleteArrayResponse {
                    deletion_future_handle: future,
                })
            }
            Rq::DestructArrayRequest(r) => {
                self.delete(&r.array_handle, true).await;
                Rs::DestructArrayResponse(protocol::DestructArrayResponse::default())
            }
            Rq::IsArrayDeletedRequest(r) => {
                let deleted = !matches!(
                    self.state().arrays.get(&r.array_handle),
                    Some(Slot::Array(_))
                );
                Rs::IsArrayDeletedResponse(protocol::IsArrayDeletedResponse { deleted })
            }
            Rq::GetDefaultLayoutRequest(r) => {
                Rs::GetDefaultLayoutResponse(protocol::GetDefaultLayoutResponse {
                    serialized_pjrt_layout: convert::default_layout_text(r.dims.len()).into_bytes(),
                })
            }
            Rq::CompileRequest(r) => Rs::CompileResponse(self.compile(r).await?),
            Rq::LoadedExecutableMetadataRequest(r) => {
                Rs::LoadedExecutableMetadataResponse(self.metadata(r.loaded_executable_handle)?)
            }
            Rq::LoadedExecutableHumanReadableProgramTextRequest(r) => {
                Rs::LoadedExecutableHumanReadableProgramTextResponse(
                    self.program_text(r.loaded_executable_handle)?,
                )
            }
            Rq::LoadedExecutableCostAnalysisRequest(r) => {
                Rs::LoadedExecutableCostAnalysisResponse(self.cost(r.loaded_executable_handle)?)
            }
            Rq::LoadedExecutableExecuteRequest(r) => {
                Rs::LoadedExecutableExecuteResponse(self.execute(r).await?)
            }
            Rq::LoadedExecutableDestructRequest(r) => {
                let mut s = self.state();
                s.executables.remove(&r.loaded_executable_handle);
                let colocated = s.colocated.remove(&r.loaded_executable_handle);
                drop(s);
                // A colocated function leaves the sidecars (and with it
                // what it held, as JAX's backend drops it).
                if let Some(built) = colocated.and_then(|c| c.built()) {
                    self.controller.sessions().forget(self.id, built)?;
                }
                Rs::LoadedExecutableDestructResponse(
                    protocol::LoadedExecutableDestructResponse::default(),
                )
            }
            other => {
                return Err(unimplemented(format!(
                    "pw's IFRT proxy does not support {} yet",
                    request_name(&other)
                )))
            }
        })
    }

    fn init(&self) -> Result<protocol::InitResponse> {
        let described = self.controller.sessions().devices(self.id)?;
        let mut all_devices = Vec::new();
        let mut memories = Vec::new();
        let mut platform = String::from("cpu");
        for (i, (_, _, plat, kind)) in described.iter().enumerate() {
            let i = i as i32;
            platform = plat.to_lowercase();
            all_devices.push(protocol::init_response::Device {
                id: i,
                local_device_id: i,
                local_hardware_id: i,
                platform_name: platform.clone(),
                device_kind: kind.clone(),
                default_memory_id: Some(i),
                memory_ids: vec![i],
                // str() and repr() of a jax.Device.
                debug_string: format!("{platform}:{i}"),
                to_string: format!("{}Device(id={i})", capitalized(&platform)),
                attributes: None,
            });
            memories.push(protocol::init_response::Memory {
                id: i,
                memory_space_kind: "device".into(),
                kind_id: 0,
                device_ids: vec![i],
                debug_string: format!("device memory of device {i}"),
                to_string: format!("MEMORY_SPACE_{i}"),
            });
        }
        let ids: Vec<i32> = (0..all_devices.len() as i32).collect();
        Ok(protocol::InitResponse {
            session_id: self.ifrt_id,
            platform_name: platform.clone(),
            platform_version: format!("pw {}", env!("CARGO_PKG_VERSION")),
            platform_id: 0,
            process_index: 0,
            runtime_type: "pw".into(),
            all_devices,
            primary_device_ids: ids.clone(),
            addressable_device_ids: ids,
            memories,
            client_attributes: None,
        })
    }

    /// The pw device of IFRT device `d`.
    fn device(&self, d: i32) -> Result<i64> {
        usize::try_from(d)
            .ok()
            .and_then(|i| self.devices.get(i).copied())
            .ok_or_else(|| {
                invalid(format!(
                    "there is no device {d} (the session has {})",
                    self.devices.len()
                ))
            })
    }

    /// The array of `dtype`, `shape` laid out as `sharding` says.
    fn layout(
        &self,
        dtype: Option<&ifrt::DTypeProto>,
        shape: Option<&ifrt::ShapeProto>,
        sharding: Option<&ifrt::ShardingProto>,
    ) -> Result<Placed> {
        let dtype = convert::dtype_of(dtype.ok_or_else(|| invalid("the array has no dtype"))?)
            .map_err(invalid)?;
        let shape = shape.map(|s| s.dims.clone()).unwrap_or_default();
        let sharding = sharding.ok_or_else(|| invalid("the array has no sharding"))?;
        let placed = convert::placement(sharding, &shape).map_err(invalid)?;
        let devices = placed
            .devices
            .iter()
            .map(|&d| self.device(d))
            .collect::<Result<Vec<_>>>()?;
        let mut info = plans::value(dtype, &shape, devices, placed.layout);
        info.sharding = placed.sharding;
        Ok(Placed {
            info,
            devices: placed.devices,
            unreduced: placed.unreduced,
        })
    }

    /// Refuses to make an unreduced array from host data: IFRT would copy
    /// the data to every position, making the array their sum; JAX makes
    /// such arrays in programs (`device_put` to an unreduced sharding is a
    /// jitted reshard) or from single-device arrays.
    fn reduced(placed: Placed, what: &str) -> Result<Placed> {
        if placed.unreduced {
            return Err(unimplemented(format!(
                "{what} with the unreduced sharding {}: pw makes unreduced arrays only in \
                 programs or from single-device arrays",
                placed.info.sharding
            )));
        }
        Ok(placed)
    }

    fn array(&self, handle: u64) -> Result<Arc<Array>> {
        match self.state().arrays.get(&handle) {
            Some(Slot::Array(a)) => Ok(a.clone()),
            Some(Slot::Failed(why)) => Err(Error::Unusable(why.clone())),
            None => Err(Error::Unknown {
                what: "array",
                handle,
            }),
        }
    }

    fn keep(&self, handle: u64, array: impl Into<Arc<Array>>) {
        self.state()
            .arrays
            .insert(handle, Slot::Array(array.into()));
    }

    /// A pw executable of this session built from `plan` once per `key`.
    async fn built(&self, key: String, name: &str, plan: pw_core::plan::Plan) -> Result<u64> {
        if let Some(&e) = self.state().puts.get(&key) {
            return Ok(e);
        }
        let e = self
            .controller
            .sessions()
            .compile_plan(self.id, name.into(), plan, BTreeSet::new())
            .await?;
        self.state().puts.insert(key, e);
        Ok(e)
    }

    /// Runs pw executable `exe` on `arguments`; the pw arrays it made.
    async fn run(
        &self,
        exe: u64,
        arguments: Vec<proto::call_argument::Argument>,
        hosts: Vec<HostArray>,
    ) -> Result<Vec<u64>> {
        let begin = proto::CallBegin {
            session: self.id,
            executable: exe,
            arguments: arguments
                .into_iter()
                .map(|a| proto::CallArgument { argument: Some(a) })
                .collect(),
            ..Default::default()
        };
        Ok(self.controller.sessions().call(begin, hosts).await?.outputs)
    }

    fn argument(&self, pw: u64) -> proto::call_argument::Argument {
        proto::call_argument::Argument::Array(proto::ArrayRef {
            session: self.id,
            array: pw,
        })
    }

    /// Uploads `source` (dense row-major bytes) laid out as `info`: the pw
    /// array. A large one goes straight to the workers' data ports when
    /// they take direct transfers, as its bytes arrive (the array is then
    /// the put's argument, laid out as it already is); a small one, or
    /// where they do not, as a run of the put (its bytes in the call).
    async fn upload(&self, info: &ValueInfo, source: Source) -> Result<u64> {
        let key = format!("put {info:?}");
        let exe = self
            .built(key, "device_put", plans::put(info.clone()))
            .await?;
        let dims = dims_of(&info.shape)?;
        if source.len() > pw_wire::MAX_READ_BYTES {
            let put = proto::SessionPut {
                id: 0,
                executable: exe,
                input: 0,
                array: self.state().next_direct(),
            };
            let sessions = self.controller.sessions();
            if let Some(direct) = sessions.direct_put(self.id, &put).await? {
                return match direct::give(&source, info.dtype, &dims, &direct.shards).await {
                    Ok(()) => Ok(put.array),
                    Err(why) => {
                        let _ = sessions.delete(&proto::ArrayRefs {
                            session: self.id,
                            arrays: vec![put.array],
                        });
                        Err(invalid(format!("uploading an array: {why}")))
                    }
                };
            }
        }
        let host = source.into_host(info.dtype, &dims).await.map_err(invalid)?;
        let outputs = self
            .run(
                exe,
                vec![proto::call_argument::Argument::Host(proto::ArrayType::of(
                    host.dtype(),
                    &dims,
                ))],
                vec![host],
            )
            .await?;
        outputs
            .first()
            .copied()
            .ok_or_else(|| invalid("the upload made no array"))
    }

    /// Takes `bytes` of the session's transfer budget (bytes through the
    /// server) while the returned guard lives; over the request limit or
    /// the budget, a refusal that names the limit.
    fn budget(&self, bytes: u64) -> Result<Transfer> {
        Ok(self.controller.sessions().start_transfer(self.id, bytes)?)
    }

    /// The bytes of host buffer `handle`, dense row-major (its bytes taken
    /// from the session's budget, with the guard): as they arrive when the
    /// client wrote them so, else whole and made dense here.
    async fn host_buffer(
        &self,
        handle: u64,
        dtype: DType,
        shape: &[i64],
        strides: Option<&ifrt::proto::ByteStrides>,
    ) -> Result<(Source, Transfer)> {
        let dims = dims_of(shape)?;
        // What the dense array will take, before anything is made.
        let size = byte_size(dtype, &dims)?;
        let budget = self.budget(size)?;
        let source = self
            .buffers
            .take(self.ifrt_id, handle, HOST_BUFFER_WAIT)
            .await
            .map_err(invalid)?;
        let what = |e: String| invalid(format!("host buffer {handle}: {e}"));
        let source = match strides {
            Some(s) if s.strides != dense_strides(dtype, shape) => {
                let bytes = source.whole().await.map_err(what)?;
                let data = dense(&bytes, dtype.size_in_bytes(), &dims, &s.strides)
                    .map_err(|e| what(e.to_string()))?;
                Source::from(bytes::Bytes::from(data))
            }
            _ => source,
        };
        if source.len() != size {
            return Err(what(format!(
                "{} bytes for a dense {dtype}{dims:?} of {size}",
                source.len()
            )));
        }
        Ok((source, budget))
    }

    /// The bytes of host buffer `handle` as a dense row-major array (see
    /// [`Session::host_buffer`]).
    async fn host_array(
        &self,
        handle: u64,
        dtype: DType,
        shape: &[i64],
        strides: Option<&ifrt::proto::ByteStrides>,
    ) -> Result<(HostArray, Transfer)> {
        let (source, budget) = self.host_buffer(handle, dtype, shape, strides).await?;
        let host = source
            .into_host(dtype, &dims_of(shape)?)
            .await
            .map_err(|e| invalid(format!("host buffer {handle}: {e}")))?;
        Ok((host, budget))
    }

    async fn make_array(
        &self,
        r: protocol::MakeArrayFromHostBufferRequest,
    ) -> Result<protocol::MakeArrayFromHostBufferResponse> {
        let Placed { info, devices, .. } = Self::reduced(
            self.layout(r.dtype.as_ref(), r.shape.as_ref(), r.sharding.as_ref())?,
            "an array from a host buffer",
        )?;
        let (source, _budget) = self
            .host_buffer(
                r.host_buffer_handle,
                info.dtype,
                &info.shape,
                r.byte_strides.as_ref(),
            )
            .await?;
        let pw = self.upload(&info, source).await?;
        let handle = match r.array_handle {
            Some(h) => h,
            None => self.mint(),
        };
        self.keep(
            handle,
            Array {
                pw,
                info,
                devices,
                sharding: r.sharding.unwrap_or_default(),
                unreduced: false,
                layout: None,
                string: false,
            },
        );
        Ok(protocol::MakeArrayFromHostBufferResponse {
            array_handle: handle,
        })
    }

    async fn make_arrays(
        &self,
        r: protocol::MakeArraysFromHostBufferShardsRequest,
    ) -> Result<protocol::MakeArraysFromHostBufferShardsResponse> {
        let mut handles = Vec::with_capacity(r.specs.len());
        for (k, spec) in r.specs.into_iter().enumerate() {
            let array_spec = spec
                .array_spec
                .ok_or_else(|| invalid(format!("spec #{k} has no array spec")))?;
            let Placed { info, devices, .. } = Self::reduced(
                self.layout(
                    array_spec.dtype.as_ref(),
                    array_spec.shape.as_ref(),
                    array_spec.sharding.as_ref(),
                )?,
                "an array from host buffers",
            )?;
            // The whole array, from the shards the buffers hold: one buffer
            // per list of shards, and every shard written.
            if spec.addressable_shard_indices.len() != spec.host_buffers.len() {
                return Err(invalid(format!(
                    "spec #{k}: {} lists of shard indices for {} host buffers",
                    spec.addressable_shard_indices.len(),
                    spec.host_buffers.len()
                )));
            }
            let mut written = vec![false; info.devices.len()];
            let dims = dims_of(&info.shape)?;
            let _budget = self.budget(byte_size(info.dtype, &dims)?)?;
            let mut whole = HostArray::zeros(info.dtype, &dims);
            for (indices, buffer) in spec
                .addressable_shard_indices
                .iter()
                .zip(&spec.host_buffers)
            {
                let shape = buffer
                    .shape
                    .as_ref()
                    .map(|s| s.dims.clone())
                    .unwrap_or_default();
                let (host, _shard_budget) = self
                    .host_array(
                        buffer.host_buffer_handle,
                        info.dtype,
                        &shape,
                        buffer.byte_strides.as_ref(),
                    )
                    .await?;
                for &i in &indices.indices {
                    let p = usize::try_from(i)
                        .ok()
                        .filter(|&p| p < info.devices.len())
                        .ok_or_else(|| invalid(format!("spec #{k}: there is no shard {i}")))?;
                    whole
                        .write_slice(&info.region(p), &host)
                        .map_err(|e| invalid(format!("spec #{k}, shard {i}: {e}")))?;
                    written[p] = true;
                }
            }
            if let Some(p) = written.iter().position(|w| !w) {
                return Err(invalid(format!(
                    "spec #{k}: no host buffer holds shard {p} of the array's {}",
                    written.len()
                )));
            }
            let pw = self
                .upload(&info, Source::from(bytes::Bytes::from(whole.into_bytes())))
                .await?;
            let handle = r
                .array_handles
                .get(k)
                .copied()
                .unwrap_or_else(|| self.mint());
            self.keep(
                handle,
                Array {
                    pw,
                    info,
                    devices,
                    sharding: array_spec.sharding.unwrap_or_default(),
                    unreduced: false,
                    layout: None,
                    string: false,
                },
            );
            handles.push(handle);
        }
        Ok(protocol::MakeArraysFromHostBufferShardsResponse {
            array_handles: handles,
        })
    }

    async fn copy_to_host(
        &self,
        array: u64,
        host_buffer: u64,
        strides: Option<&ifrt::proto::ByteStrides>,
    ) -> Result<()> {
        let a = self.array(array)?;
        if a.string {
            return self.copy_string_to_host(&a, array, host_buffer).await;
        }
        if a.unreduced {
            return Err(invalid(format!(
                "array {array} is unreduced ({}): its value is the sum of its shards; copy its \
                 shards, or reduce it in a program first",
                a.info.sharding
            )));
        }
        if let Some(s) = strides {
            if s.strides != dense_strides(a.info.dtype, &a.info.shape) {
                return Err(unimplemented(format!(
                    "byte strides {:?}: pw copies to dense row-major buffers only",
                    s.strides
                )));
            }
        }
        let r = proto::ArrayRef {
            session: self.id,
            array: a.pw,
        };
        // An array every shard of which is all of it (one device, or
        // replicated) streams from its worker's data port.
        let whole = pw_core::geometry::Region::full(&a.info.shape);
        if (0..a.info.devices.len()).all(|p| a.info.region(p) == whole) {
            if let Some((_, direct, size)) = self.controller.sessions().direct_fetch(&r).await? {
                if let Some(shard) = direct.shards.into_iter().next() {
                    let at = (self.ifrt_id, host_buffer);
                    return direct::into_host_buffer(&self.buffers, at, array, size, shard);
                }
            }
        }
        let bytes = self.fetch_bytes(&r, array).await?;
        self.buffers
            .put(self.ifrt_id, host_buffer, bytes)
            .map_err(|status| invalid(status.message()))?;
        Ok(())
    }

    /// The bytes of pw array `r` (IFRT array `array`), dense row-major,
    /// through the controller.
    async fn fetch_bytes(&self, r: &proto::ArrayRef, array: u64) -> Result<bytes::Bytes> {
        Ok(match self.controller.sessions().fetch(r).await? {
            Fetched::Assembled(host) => bytes::Bytes::from(host.into_bytes()),
            Fetched::Forwarded(mut stream, size) => {
                let what = format!("array {array}");
                let first = stream
                    .message()
                    .await
                    .map_err(|s| invalid(s.message().to_owned()))?
                    .and_then(|m| m.chunk)
                    .ok_or_else(|| invalid(format!("{what}: its worker sent nothing")))?;
                let mut collect =
                    Collect::new(&first, size, Some(size), what.clone()).map_err(Error::Wire)?;
                let mut done = collect.push(&first).map_err(Error::Wire)?;
                while done.is_none() {
                    let chunk = stream
                        .message()
                        .await
                        .map_err(|s| invalid(s.message().to_owned()))?
                        .and_then(|m| m.chunk)
                        .ok_or_else(|| Error::Wire(collect.truncated()))?;
                    done = collect.push(&chunk).map_err(Error::Wire)?;
                }
                bytes::Bytes::from(done.unwrap_or_default())
            }
        })
    }

    /// Runs `plan` (built once per `key`) on `inputs`; the new arrays.
    async fn transform(
        &self,
        key: String,
        name: &str,
        plan: pw_core::plan::Plan,
        inputs: &[u64],
    ) -> Result<Vec<u64>> {
        let exe = self.built(key, name, plan).await?;
        let arguments = inputs.iter().map(|&pw| self.argument(pw)).collect();
        self.run(exe, arguments, Vec::new()).await
    }

    async fn replicated_shard(&self, array: u64, result: u64) -> Result<u64> {
        let a = self.array(array)?;
        let whole = pw_core::geometry::Region::full(&a.info.shape);
        if a.unreduced || !(0..a.info.devices.len()).all(|p| a.info.region(p) == whole) {
            return Err(invalid(format!("array {array} is not fully replicated")));
        }
        let handle = if result == 0 { self.mint() } else { result };
        if a.info.devices.len() == 1 {
            self.keep(handle, a);
            return Ok(handle);
        }
        let info = &a.info;
        let made = self
            .transform(
                format!("split {info:?}"),
                "shards",
                plans::split(info.clone()),
                &[a.pw],
            )
            .await?;
        let one = plans::on_device(info.dtype, &info.shape, info.devices[0]);
        self.keep(
            handle,
            Array {
                pw: made[0],
                info: one,
                devices: vec![a.devices[0]],
                sharding: convert::single_device(a.devices[0], None),
                unreduced: false,
                layout: None,
                string: false,
            },
        );
        self.drop_pw(&made[1..]).await;
        Ok(handle)
    }

    async fn disassemble(&self, array: u64, results: &[u64]) -> Result<Vec<u64>> {
        let a = self.array(array)?;
        let n = a.info.devices.len();
        let handles: Vec<u64> = (0..n)
            .map(|p| results.get(p).copied().unwrap_or_else(|| self.mint()))
            .collect();
        if n == 1 {
            self.keep(handles[0], a);
            return Ok(handles);
        }
        let info = &a.info;
        let made = self
            .transform(
                format!("split {info:?}"),
                "shards",
                plans::split(info.clone()),
                &[a.pw],
            )
            .await?;
        for (p, (&h, &pw)) in handles.iter().zip(&made).enumerate() {
            self.keep(
                h,
                Array {
                    pw,
                    info: plans::on_device(info.dtype, &info.layout.shard_shape, info.devices[p]),
                    devices: vec![a.devices[p]],
                    sharding: convert::single_device(a.devices[p], None),
                    unreduced: false,
                    layout: None,
                    string: a.string,
                },
            );
        }
        Ok(handles)
    }

    async fn assemble(
        &self,
        r: protocol::AssembleArrayFromSingleDeviceArraysRequest,
    ) -> Result<u64> {
        let parts = r
            .single_device_array_handles
            .iter()
            .map(|&h| self.array(h))
            .collect::<Result<Vec<_>>>()?;
        let dtype = match &r.dtype {
            Some(d) => Some(*d),
            None => parts.first().map(|p| convert::dtype_proto(p.info.dtype)),
        };
        let Placed {
            info,
            devices,
            unreduced,
        } = self.layout(dtype.as_ref(), r.shape.as_ref(), r.sharding.as_ref())?;
        let handle = if r.result_handle == 0 {
            self.mint()
        } else {
            r.result_handle
        };
        let infos: Vec<ValueInfo> = parts.iter().map(|p| p.info.clone()).collect();
        let plan = plans::join(infos, info.clone()).map_err(|e| invalid(e.to_string()))?;
        let pws: Vec<u64> = parts.iter().map(|p| p.pw).collect();
        let made = self
            .transform(
                format!("join {:?} {info:?}", plan.values),
                "assemble",
                plan,
                &pws,
            )
            .await?;
        self.keep(
            handle,
            Array {
                pw: made[0],
                info,
                devices,
                sharding: r.sharding.unwrap_or_default(),
                unreduced,
                layout: None,
                string: false,
            },
        );
        match ifrt::proto::ArrayCopySemantics::try_from(r.copy_semantics) {
            Ok(ifrt::proto::ArrayCopySemantics::DonateInput) => {
                self.delete(&r.single_device_array_handles, false).await
            }
            Ok(ifrt::proto::ArrayCopySemantics::ReuseInput) => {
                self.state()
                    .shares
                    .insert(handle, r.single_device_array_handles.clone());
            }
            _ => {}
        }
        Ok(handle)
    }

    async fn copy_arrays(&self, r: protocol::CopyArraysRequest) -> Result<Vec<u64>> {
        let targets = r
            .device_ids
            .iter()
            .map(|&d| self.device(d))
            .collect::<Result<Vec<_>>>()?;
        let mut handles = Vec::with_capacity(r.array_handles.len());
        for (k, &h) in r.array_handles.iter().enumerate() {
            let a = self.array(h)?;
            let handle = r
                .result_handles
                .get(k)
                .copied()
                .unwrap_or_else(|| self.mint());
            if targets.len() != a.info.devices.len() {
                return Err(invalid(format!(
                    "array {h} has {} shards; it cannot be copied onto {} devices",
                    a.info.devices.len(),
                    targets.len()
                )));
            }
            let to = plans::value(
                a.info.dtype,
                &a.info.shape,
                targets.clone(),
                a.info.layout.clone(),
            );
            let plan = moved(&a, to.clone())?;
            let made = self
                .transform(
                    format!("copy {:?} {targets:?} {}", a.info, a.unreduced),
                    "copy",
                    plan,
                    &[a.pw],
                )
                .await?;
            let sharding = convert::with_devices(&a.sharding, &r.device_ids).map_err(invalid)?;
            self.keep(
                handle,
                Array {
                    pw: made[0],
                    info: to,
                    devices: r.device_ids.clone(),
                    sharding,
                    unreduced: a.unreduced,
                    layout: None,
                    string: a.string,
                },
            );
            if r.copy_semantics == ifrt::proto::ArrayCopySemantics::DonateInput as i32 {
                self.delete(&[h], false).await;
            }
            handles.push(handle);
        }
        Ok(handles)
    }

    /// Arrays laid out anew: shard for shard onto other devices (worker to
    /// worker) when only the devices change, else through the controller.
    async fn reshard(&self, r: protocol::ReshardArraysRequest) -> Result<Vec<u64>> {
        let mut handles = Vec::with_capacity(r.array_handles.len());
        for (k, &h) in r.array_handles.iter().enumerate() {
            let a = self.array(h)?;
            let spec = r
                .array_specs
                .get(k)
                .ok_or_else(|| invalid(format!("array {h} has no spec to reshard to")))?;
            let Placed {
                info,
                devices,
                unreduced,
            } = self.layout(
                spec.dtype.as_ref(),
                spec.shape.as_ref(),
                spec.sharding.as_ref(),
            )?;
            if info.dtype != a.info.dtype || info.shape != a.info.shape {
                return Err(invalid(format!(
                    "array {h} is {}; it cannot be resharded as {}",
                    a.info.describe(),
                    info.describe()
                )));
            }
            if unreduced != a.unreduced
                || (unreduced && (info.layout != a.info.layout || devices.len() != a.devices.len()))
            {
                return Err(unimplemented(format!(
                    "array {h} ({}) cannot be resharded as {}: pw moves the shards of an \
                     unreduced array only as they are (JAX reduces them in a program)",
                    a.info.sharding, info.sharding
                )));
            }
            let plan = moved(&a, info.clone())?;
            let made = self
                .transform(
                    format!("relayout {:?} {info:?} {unreduced}", a.info),
                    "reshard",
                    plan,
                    &[a.pw],
                )
                .await?;
            let handle = r
                .result_handles
                .get(k)
                .copied()
                .unwrap_or_else(|| self.mint());
            self.keep(
                handle,
                Array {
                    pw: made[0],
                    info,
                    devices,
                    sharding: spec.sharding.clone().unwrap_or_default(),
                    unreduced,
                    layout: None,
                    string: false,
                },
            );
            if r.copy_semantics == ifrt::proto::ArrayCopySemantics::DonateInput as i32 {
                self.delete(&[h], false).await;
            }
            handles.push(handle);
        }
        Ok(handles)
    }

    /// Shards of arrays as the shards of new arrays (`RemapArrays`: JAX
    /// builds an array of other devices' shards so).
    async fn remap(&self, r: protocol::RemapArraysRequest) -> Result<Vec<u64>> {
        let plan = r.plan.ok_or_else(|| invalid("RemapArrays has no plan"))?;
        let inputs = r
            .array_handles
            .iter()
            .map(|&h| self.array(h))
            .collect::<Result<Vec<_>>>()?;
        let mut moves = Vec::new();
        for m in &plan.mappings {
            let expand = |starts: &[i64], ends: &[i64], steps: &[i64]| -> Result<Vec<usize>> {
                let mut out = Vec::new();
                for ((&a, &b), &step) in starts.iter().zip(ends).zip(steps) {
                    if step <= 0 || a < 0 || b < a || b - a > 1 << 16 {
                        return Err(invalid(format!("a remap interval [{a}, {b}) step {step}")));
                    }
                    out.extend((a..b).step_by(step as usize).map(|i| i as usize));
                }
                Ok(out)
            };
            let from = expand(&m.from_start, &m.from_end, &m.from_step)?;
            let to = expand(&m.to_start, &m.to_end, &m.to_step)?;
            if from.len() != to.len() {
                return Err(invalid("a remap mapping moves unlike numbers of shards"));
            }
            let (Ok(i), Ok(o)) = (usize::try_from(m.in_array), usize::try_from(m.out_array)) else {
                return Err(invalid("a remap mapping names a negative array"));
            };
            moves.extend(from.into_iter().zip(to).map(|(p, q)| plans::Move {
                from: (i, p),
                to: (o, q),
            }));
        }
        let mut outputs = Vec::with_capacity(plan.output_specs.len());
        for (o, spec) in plan.output_specs.iter().enumerate() {
            let sharding = spec.sharding.clone().unwrap_or_default();
            let placed =
                match self.layout(spec.dtype.as_ref(), spec.shape.as_ref(), Some(&sharding)) {
                    Ok(placed) => placed,
                    Err(e) => match convert::concrete_even(&sharding) {
                        // Each shard lies where the input shard moved into it
                        // lay.
                        Some((devices, shard)) => {
                            let mut offsets = Vec::with_capacity(devices.len());
                            for q in 0..devices.len() {
                                let m = moves.iter().find(|m| m.to == (o, q)).ok_or_else(|| {
                                    invalid(format!("nothing moves into shard {q} of output {o}"))
                                })?;
                                let (i, p) = m.from;
                                let from = &inputs
                                    .get(i)
                                    .ok_or_else(|| invalid(format!("there is no input {i}")))?
                                    .info;
                                offsets.push(from.layout.offsets.get(p).cloned().ok_or_else(
                                    || invalid(format!("input {i} has no shard {p}")),
                                )?);
                            }
                            let on = devices
                                .iter()
                                .map(|&d| self.device(d))
                                .collect::<Result<Vec<_>>>()?;
                            let dtype = convert::dtype_of(
                                spec.dtype.as_ref().ok_or_else(|| invalid("no dtype"))?,
                            )
                            .map_err(invalid)?;
                            let shape = spec
                                .shape
                                .as_ref()
                                .map(|s| s.dims.clone())
                                .unwrap_or_default();
                            let layout = pw_core::geometry::Layout {
                                shard_shape: shard,
                                offsets,
                            };
                            Placed {
                                info: plans::value(dtype, &shape, on, layout),
                                devices,
                                unreduced: false,
                            }
                        }
                        None => return Err(e),
                    },
                };
            outputs.push((placed, sharding));
        }
        let infos: Vec<ValueInfo> = inputs.iter().map(|a| a.info.clone()).collect();
        let outs: Vec<ValueInfo> = outputs.iter().map(|(p, _)| p.info.clone()).collect();
        let key = format!("remap {infos:?} {outs:?} {moves:?}");
        let plan = plans::remap(infos, outs, &moves).map_err(|e| invalid(e.to_string()))?;
        let pws: Vec<u64> = inputs.iter().map(|a| a.pw).collect();
        let made = self.transform(key, "remap", plan, &pws).await?;
        let mut handles = Vec::with_capacity(made.len());
        for (k, (pw, (placed, sharding))) in made.into_iter().zip(outputs).enumerate() {
            let handle = r
                .result_handles
                .get(k)
                .copied()
                .unwrap_or_else(|| self.mint());
            self.keep(
                handle,
                Array {
                    pw,
                    info: placed.info,
                    devices: placed.devices,
                    sharding,
                    unreduced: placed.unreduced,
                    layout: None,
                    string: false,
                },
            );
            handles.push(handle);
        }
        if r.copy_semantics == ifrt::proto::ArrayCopySemantics::DonateInput as i32 {
            self.delete(&r.array_handles, false).await;
        } else if r.copy_semantics == ifrt::proto::ArrayCopySemantics::ReuseInput as i32 {
            // Each output shares the buffers of the inputs it takes shards
            // from: donating it deletes them too, as IFRT's would.
            let mut s = self.state();
            for (k, &handle) in handles.iter().enumerate() {
                let mut from: Vec<u64> = moves
                    .iter()
                    .filter(|m| m.to.0 == k)
                    .filter_map(|m| r.array_handles.get(m.from.0).copied())
                    .collect();
                from.sort_unstable();
                from.dedup();
                s.shares.insert(handle, from);
            }
        }
        Ok(handles)
    }

    async fn ready(&self, handles: &[u64]) -> Result<()> {
        let pws = handles
            .iter()
            .map(|&h| self.array(h).map(|a| a.pw))
            .collect::<Result<Vec<_>>>()?;
        self.await_pw(pws).await
    }

    async fn await_pw(&self, arrays: Vec<u64>) -> Result<()> {
        self.controller
            .sessions()
            .wait(&proto::ArrayRefs {
                session: self.id,
                arrays,
            })
            .await?;
        Ok(())
    }

    async fn future(&self, handle: u64) -> Result<()> {
        let f = self.state().futures.remove(&handle).ok_or(Error::Unknown {
            what: "future",
            handle,
        })?;
        match f {
            Future::Done => Ok(()),
            Future::Arrays(a) => self.await_pw(a).await,
        }
    }

    /// Frees pw arrays.
    async fn drop_pw(&self, arrays: &[u64]) {
        let _ = self.controller.sessions().delete(&proto::ArrayRefs {
            session: self.id,
            arrays: arrays.to_vec(),
        });
    }

    /// Deletes arrays (`forget`: the handles too; else a later use says it
    /// was deleted).
    async fn delete(&self, handles: &[u64], forget: bool) {
        let mut gone = Vec::new();
        let mut shared = Vec::new();
        {
            let mut s = self.state();
            for &h in handles {
                // Destroying a handle leaves the buffers it shares; deleting
                // the array deletes them.
                if let Some(others) = s.shares.remove(&h).filter(|_| !forget) {
                    shared.extend(others);
                }
                let old = if forget {
                    s.arrays.remove(&h)
                } else {
                    s.arrays
                        .insert(h, Slot::Failed(format!("array {h} has been deleted")))
                };
                if let Some(Slot::Array(a)) = old {
                    gone.push(a.pw);
                }
            }
            // A pw array may back several handles (a disassembled array of
            // one shard): free it only when none is left.
            let used: BTreeSet<u64> = s
                .arrays
                .values()
                .filter_map(|x| match x {
                    Slot::Array(a) => Some(a.pw),
                    Slot::Failed(_) => None,
                })
                .collect();
            gone.retain(|pw| !used.contains(pw));
        }
        if !gone.is_empty() {
            self.drop_pw(&gone).await;
        }
        if !shared.is_empty() {
            Box::pin(self.delete(&shared, false)).await;
        }
    }

    async fn compile(&self, r: protocol::CompileRequest) -> Result<protocol::CompileResponse> {
        let program = r.program.ok_or_else(|| invalid("Compile has no program"))?;
        if program.type_name == colocated::CUSTOM_CALL_PROGRAM {
            return self.compile_colocated(&program.data);
        }
        if program.type_name != "xla::ifrt::XlaProgram" {
            return Err(unimplemented(format!(
                "pw compiles XLA programs (StableHLO), not {}",
                program.type_name
            )));
        }
        let options = r
            .compile_options
            .map(|o| convert::compile_options(&o))
            .transpose()
            .map_err(invalid)?
            .unwrap_or_default();
        let devices: Vec<i32> = if options.devices.is_empty() {
            vec![0]
        } else {
            options.devices.clone()
        };
        for &d in &devices {
            self.device(d)?;
        }
        let module = convert::program_module(&program.data).map_err(invalid)?;
        let inspected = self
            .controller
            .sessions()
            .inspect(
                &module,
                devices.len(),
                convert::option_overrides(&options.proto),
            )
            .await?;
        let compiled =
            match &inspected.optimized {
                Some((format, bytes)) => {
                    hlo::read(format, bytes, inspected.outputs.len()).map_err(invalid)?
                }
                None if devices.len() == 1 => hlo::Compiled {
                    parameters: Vec::new(),
                    outputs: vec![Default::default(); inspected.outputs.len()],
                    ..Default::default()
                },
                None => return Err(unimplemented(
                    "the controller's PJRT plugin does not show compiled programs, so pw cannot \
                     tell the shardings of a program on several devices",
                )),
            };
        let handle = self.mint();
        let name = format!("jit {handle}");
        self.state().executables.insert(
            handle,
            Arc::new(Mutex::new(Executable {
                name: name.clone(),
                module: Module::Bytecode(module),
                devices: devices.clone(),
                outputs: inspected.outputs,
                compiled,
                cost: inspected.cost,
                optimized: inspected.optimized,
                memory: inspected.memory,
                built: HashMap::new(),
            })),
        );
        let ready = self.mint();
        self.state().futures.insert(ready, Future::Done);
        Ok(protocol::CompileResponse {
            loaded_executable_handle: handle,
            name,
            num_devices: devices.len() as i32,
            device_ids: devices.clone(),
            addressable_device_ids: devices,
            ready_future_handle: Some(ready),
            ..Default::default()
        })
    }

    fn executable(&self, handle: u64) -> Result<Arc<Mutex<Executable>>> {
        self.state()
            .executables
            .get(&handle)
            .cloned()
            .ok_or(Error::Unknown {
                what: "executable",
                handle,
            })
    }

    fn program_text(
        &self,
        handle: u64,
    ) -> Result<protocol::LoadedExecutableHumanReadableProgramTextResponse> {
        use protocol::loaded_executable_human_readable_program_text_response::Result as R;
        let exe = self.executable(handle)?;
        let exe = exe.lock().unwrap_or_else(|e| e.into_inner());
        let (format, bytes) = exe.optimized.as_ref().ok_or_else(|| {
            unimplemented("the controller's PJRT plugin does not show this compiled program")
        })?;
        let text = crate::hlo_text::render(format, bytes)
            .map_err(|e| invalid(format!("the compiled program cannot be read: {e}")))?;
        Ok(protocol::LoadedExecutableHumanReadableProgramTextResponse {
            result: Some(R::HumanReadableProgramText(text)),
        })
    }

    fn cost(&self, handle: u64) -> Result<protocol::LoadedExecutableCostAnalysisResponse> {
        use protocol::loaded_executable_cost_analysis_response::Result as R;
        let exe = self.executable(handle)?;
        let exe = exe.lock().unwrap_or_else(|e| e.into_inner());
        // The plugin's own figures, or pw's count over the program it
        // compiled (read only when asked).
        let estimated;
        let cost = match &exe.cost {
            Ok(cost) => cost,
            Err(why) => {
                estimated = estimated_cost(exe.optimized.as_ref()).map_err(|e| {
                    unimplemented(format!(
                        "the controller's PJRT plugin gives no cost analysis of this program \
                         ({why}), and pw cannot count it: {e}"
                    ))
                })?;
                &estimated
            }
        };
        Ok(protocol::LoadedExecutableCostAnalysisResponse {
            result: Some(R::Attributes(convert::cost_attributes(cost))),
        })
    }

    fn metadata(&self, handle: u64) -> Result<protocol::LoadedExecutableMetadataResponse> {
        use protocol::loaded_executable_metadata_response::{
            CompiledMemoryStatsOneof, DonatedInputIndices, DonatedInputIndicesOneof, LayoutList,
            MemoryKindList, OutputLayouts, OutputMemoryKind, ParameterLayouts, ShardingList,
        };
        if let Some(c) = self.colocated(handle) {
            return Ok(c.metadata());
        }
        let exe = self.executable(handle)?;
        let exe = exe.lock().unwrap_or_else(|e| e.into_inner());
        let c = &exe.compiled;
        let unknown = || protocol::tensorflow::StatusProto {
            code: 12, // UNIMPLEMENTED
            message: "the controller's PJRT plugin does not show the layouts of this program"
                .into(),
            ..Default::default()
        };
        let (parameter_layouts, output_layouts) = match &c.layouts {
            Some(l) => (
                ParameterLayouts::ParameterLayoutsList(LayoutList {
                    layouts: l.parameters.clone(),
                }),
                OutputLayouts::OutputLayoutsList(LayoutList {
                    layouts: l.outputs.clone(),
                }),
            ),
            None => (
                ParameterLayouts::ParameterLayoutsError(unknown()),
                OutputLayouts::OutputLayoutsError(unknown()),
            ),
        };
        Ok(protocol::LoadedExecutableMetadataResponse {
            parameter_layouts: Some(parameter_layouts),
            output_layouts: Some(output_layouts),
            parameter_shardings: (!c.parameters.is_empty()).then(|| ShardingList {
                shardings: c.parameters.clone(),
            }),
            output_shardings: Some(ShardingList {
                shardings: c.outputs.clone(),
            }),
            output_memory_kinds: Some(OutputMemoryKind {
                status: None,
                memory_kind_lists: vec![MemoryKindList {
                    memory_kinds: vec![convert::DEVICE_MEMORY.to_owned(); c.outputs.len()],
                }],
            }),
            donated_input_indices_oneof: Some(DonatedInputIndicesOneof::DonatedInputIndices(
                DonatedInputIndices {
                    donated_input_indices: c.donated.clone(),
                },
            )),
            compiled_memory_stats_oneof: exe.memory.as_ref().map(|m| {
                CompiledMemoryStatsOneof::CompiledMemoryStats(convert::memory_stats_proto(m))
            }),
            ..Default::default()
        })
    }

    /// `shape` laid out as `op` says over an executable's `devices` (IFRT,
    /// partition order), on the pw devices `on`, position `p` on `on[p]`.
    fn laid_out(
        dtype: DType,
        shape: &[i64],
        op: &protocol::xla::OpSharding,
        devices: &[i32],
        on: &[i64],
    ) -> Result<Placed> {
        if on.len() == 1 {
            return Ok(Placed {
                info: plans::on_device(dtype, shape, on[0]),
                devices: devices.to_vec(),
                unreduced: false,
            });
        }
        let placed = convert::hlo_placement(devices, op, shape).map_err(invalid)?;
        let mut offsets = Vec::with_capacity(devices.len());
        for d in devices {
            let p = placed.devices.iter().position(|x| x == d).ok_or_else(|| {
                invalid(format!("{} holds nothing on device {d}", placed.sharding))
            })?;
            offsets.push(placed.layout.offsets[p].clone());
        }
        let layout = pw_core::geometry::Layout {
            shard_shape: placed.layout.shard_shape,
            offsets,
        };
        let mut info = plans::value(dtype, shape, on.to_vec(), layout);
        info.sharding = placed.sharding;
        Ok(Placed {
            info,
            devices: devices.to_vec(),
            unreduced: placed.unreduced,
        })
    }

    async fn execute(
        &self,
        r: protocol::LoadedExecutableExecuteRequest,
    ) -> Result<protocol::LoadedExecutableExecuteResponse> {
        if let Some(c) = self.colocated(r.loaded_executable_handle) {
            return self.execute_colocated(&c, r).await;
        }
        let exe = self.executable(r.loaded_executable_handle)?;
        let args = r
            .args_handles
            .iter()
            .map(|&h| self.array(h))
            .collect::<Result<Vec<_>>>()?;
        let key = signature(&args);
        let (name, module, devices, outputs, compiled, known) = {
            let e = exe.lock().unwrap_or_else(|e| e.into_inner());
            (
                e.name.clone(),
                e.module.clone(),
                e.devices.clone(),
                e.outputs.clone(),
                e.compiled.clone(),
                e.built.get(&key).copied(),
            )
        };
        let on = devices
            .iter()
            .map(|&d| self.device(d))
            .collect::<Result<Vec<_>>>()?;
        let replicated = protocol::xla::OpSharding::default();
        let mut results = Vec::with_capacity(outputs.len());
        for (k, (dtype, dims)) in outputs.iter().enumerate() {
            let op = compiled.outputs.get(k).unwrap_or(&replicated);
            let shape = hlo::global_shape(dims, op).map_err(invalid)?;
            results.push((
                Self::laid_out(*dtype, &shape, op, &devices, &on)?,
                op.clone(),
            ));
        }
        let pw_exe = match known {
            Some(e) => e,
            None => {
                if args.len() != compiled.parameters.len() && !compiled.parameters.is_empty() {
                    return Err(invalid(format!(
                        "{name} takes {} arguments, {} given",
                        compiled.parameters.len(),
                        args.len()
                    )));
                }
                let params = args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        let op = compiled.parameters.get(i).unwrap_or(&replicated);
                        Self::laid_out(a.info.dtype, &a.info.shape, op, &devices, &on)
                            .map(|p| p.info)
                    })
                    .collect::<Result<Vec<_>>>()?;
                let values = results.iter().map(|(v, _)| v.info.clone()).collect();
                let plan = plans::call(&name, module, on.clone(), params, values);
                let donate = compiled.donated.iter().map(|&d| d as usize).collect();
                let e = self
                    .controller
                    .sessions()
                    .compile_plan(self.id, name.clone(), plan, donate)
                    .await?;
                exe.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .built
                    .insert(key, e);
                e
            }
        };
        Self::check_arguments(&name, &args, &compiled, &devices, &on)?;
        let arguments = args.iter().map(|a| self.argument(a.pw)).collect();
        let made = self
            .run(pw_exe, arguments, Vec::new())
            .await
            .map_err(|e| Error::In {
                name: name.clone(),
                source: Box::new(e),
            })?;
        // Donated arguments are gone, with the arrays whose buffers they
        // shared.
        let mut shared = Vec::new();
        {
            let mut s = self.state();
            for &d in &compiled.donated {
                if let Some(&h) = r.args_handles.get(d as usize) {
                    s.arrays
                        .insert(h, Slot::Failed(format!("array {h} was donated to {name}")));
                    shared.extend(s.shares.remove(&h).unwrap_or_default());
                }
            }
        }
        if !shared.is_empty() {
            self.delete(&shared, false).await;
        }
        // The status future is the client's to name (or it wants none);
        // the response never names one.
        if r.result_status_handle != 0 {
            self.state()
                .futures
                .insert(r.result_status_handle, Future::Arrays(made.clone()));
        }
        let mut answered = Vec::with_capacity(made.len());
        let output_layouts = compiled.layouts.as_ref().map(|l| &l.outputs[..]);
        for (k, (&pw, (placed, op))) in made.iter().zip(results).enumerate() {
            let layout = output_layouts
                .and_then(|l| l.get(k))
                .and_then(hlo::custom)
                .cloned();
            let info = placed.info;
            let handle = r
                .result_array_handle
                .get(k)
                .copied()
                .unwrap_or_else(|| self.mint());
            let sharding = if devices.len() == 1 {
                convert::single_device(devices[0], None)
            } else {
                convert::hlo_sharding(&devices, op, Some(convert::DEVICE_MEMORY))
            };
            answered.push(protocol::loaded_executable_execute_response::Output {
                dtype: Some(convert::dtype_proto(info.dtype)),
                shape: Some(ifrt::ShapeProto {
                    dims: info.shape.clone(),
                    ..Default::default()
                }),
                sharding: Some(sharding.clone()),
                array_handle: handle,
            });
            self.keep(
                handle,
                Array {
                    pw,
                    info,
                    devices: devices.clone(),
                    sharding,
                    unreduced: placed.unreduced,
                    layout,
                    string: false,
                },
            );
        }
        Ok(protocol::LoadedExecutableExecuteResponse {
            status_handle: 0,
            outputs: answered,
        })
    }

    /// Refuses a call whose argument would not be what its parameter
    /// expects where the program runs. The controller lays an argument out
    /// as its parameter anew when they differ, which partial values
    /// (unreduced arrays) cannot be: they must already be where the program
    /// wants them. And a program compiled for a custom layout in device
    /// memory reads the bytes of a default one (and the reverse) as other
    /// values: arrays keep a custom layout only as the program that made
    /// them left them (pw's own copies are in the default layout), and an
    /// argument laid out anew is in the default one.
    fn check_arguments(
        name: &str,
        args: &[Arc<Array>],
        compiled: &hlo::Compiled,
        devices: &[i32],
        on: &[i64],
    ) -> Result<()> {
        let replicated = protocol::xla::OpSharding::default();
        let parameter_layouts = compiled.layouts.as_ref().map(|l| &l.parameters[..]);
        for (i, a) in args.iter().enumerate() {
            let op = compiled.parameters.get(i).unwrap_or(&replicated);
            let takes_unreduced = on.len() > 1 && convert::is_unreduced(op);
            let wants = parameter_layouts
                .and_then(|l| l.get(i))
                .and_then(hlo::custom);
            if !a.unreduced && !takes_unreduced && wants.is_none() && a.layout.is_none() {
                continue;
            }
            let want = Self::laid_out(a.info.dtype, &a.info.shape, op, devices, on)?;
            let moved = want.info.layout != a.info.layout || want.info.devices != a.info.devices;
            if (a.unreduced || takes_unreduced) && (moved || want.unreduced != a.unreduced) {
                let kind = |unreduced| if unreduced { "unreduced" } else { "reduced" };
                return Err(invalid(format!(
                    "{name}: argument {i} is {} ({}); the program takes it as {} ({})",
                    a.info.sharding,
                    kind(a.unreduced),
                    want.info.sharding,
                    kind(want.unreduced),
                )));
            }
            let has = if moved { None } else { a.layout.as_ref() };
            if has.map(|l| (&l.minor_to_major, &l.tiles))
                != wants.map(|l| (&l.minor_to_major, &l.tiles))
            {
                let text = |l: Option<&LayoutProto>| match l {
                    Some(l) => format!("layout {{{}}}", crate::hlo_text::layout_text(l)),
                    None => "the default layout".to_owned(),
                };
                return Err(invalid(format!(
                    "{name}: argument {i} is in {} on its devices, the program takes {}; pw \
                     keeps a custom layout only on the array a program made, not on copies or \
                     reshards of it (lay it out again in a program: jax.device_put(x, \
                     Format(layout, sharding)))",
                    text(has),
                    text(wants)
                )));
            }
        }
        Ok(())
    }

    /// Ends the session: every array and executable goes.
    pub async fn close(&self, why: &str) {
        self.controller.sessions().end(self.id, why).await;
        self.buffers.close(self.ifrt_id);
    }
}

/// pw's estimate of a program's cost (`crate::hlo_cost`), for a plugin
/// that gives none, from the program it compiled.
fn estimated_cost(
    optimized: Option<&(String, Vec<u8>)>,
) -> std::result::Result<Vec<(String, pw_controller::compile::NamedValue)>, String> {
    let (format, bytes) = optimized.ok_or("the plugin does not show the compiled program")?;
    let estimate = crate::hlo_cost::estimate(format, bytes)?;
    Ok(estimate
        .into_iter()
        .map(|(name, v)| (name, pw_controller::compile::NamedValue::Float(v as f32)))
        .collect())
}

/// The plan that copies `a` as `to` (same type and shape): by the
/// relayout planner, or, for an unreduced array, position by position (its
/// positions with equal boxes hold different values).
fn moved(a: &Array, to: ValueInfo) -> Result<pw_core::plan::Plan> {
    let planned = if a.unreduced {
        let moves: Vec<plans::Move> = (0..a.info.devices.len())
            .map(|p| plans::Move {
                from: (0, p),
                to: (0, p),
            })
            .collect();
        plans::remap(vec![a.info.clone()], vec![to], &moves)
    } else {
        plans::relayout(a.info.clone(), to, plans::link)
    };
    planned.map_err(|e| invalid(e.to_string()))
}

/// What an executable was built for: each argument's layout.
fn signature(args: &[Arc<Array>]) -> String {
    args.iter()
        .map(|a| format!("{}{:?}", a.info.dtype, a.info.shape))
        .collect::<Vec<_>>()
        .join(",")
}

/// The array handles the client chose for a request's results.
fn result_handles(request: &Rq) -> Vec<u64> {
    match request {
        Rq::MakeArrayFromHostBufferRequest(r) => r.array_handle.into_iter().collect(),
        Rq::MakeArraysFromHostBufferShardsRequest(r) => r.array_handles.clone(),
        Rq::FullyReplicatedShardRequest(r) => vec![r.result_handle],
        Rq::DisassembleIntoSingleDeviceArraysRequest(r) => r.result_handles.clone(),
        Rq::AssembleArrayFromSingleDeviceArraysRequest(r) => vec![r.result_handle],
        Rq::CopyArraysRequest(r) => r.result_handles.clone(),
        Rq::ReshardArraysRequest(r) => r.result_handles.clone(),
        Rq::RemapArraysRequest(r) => r.result_handles.clone(),
        Rq::LoadedExecutableExecuteRequest(r) => r.result_array_handle.clone(),
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|&h| h != 0)
    .collect()
}

/// The request's name, for messages.
pub fn request_name(request: &Rq) -> String {
    /// Keeps the variant's name of a `Debug` rendering and stops there (a
    /// request may carry megabytes).
    struct Name(String);
    impl std::fmt::Write for Name {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            match s.find(|c: char| !c.is_alphanumeric()) {
                Some(end) => {
                    self.0.push_str(&s[..end]);
                    Err(std::fmt::Error)
                }
                None => {
                    self.0.push_str(s);
                    Ok(())
                }
            }
        }
    }
    let mut name = Name(String::new());
    let _ = std::fmt::write(&mut name, format_args!("{request:?}"));
    name.0
}

/// The bytes of a dense `dtype` array of `dims`, or an error when that
/// overflows.
fn byte_size(dtype: DType, dims: &[usize]) -> Result<u64> {
    dims.iter()
        .try_fold(dtype.size_in_bytes() as u64, |n, &d| {
            n.checked_mul(d as u64)
        })
        .ok_or_else(|| invalid(format!("{dtype}{dims:?}: the array's size overflows")))
}

fn dims_of(shape: &[i64]) -> Result<Vec<usize>> {
    shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| invalid(format!("dimension {d} is negative"))))
        .collect()
}

/// The elements of `bytes`, laid out with byte `strides` over `dims`
/// (each element `size` bytes), gathered into a dense row-major array.
fn dense(
    bytes: &[u8],
    size: usize,
    dims: &[usize],
    strides: &[i64],
) -> std::result::Result<Vec<u8>, String> {
    if strides.len() != dims.len() {
        return Err(format!(
            "{} byte strides for {} dimensions",
            strides.len(),
            dims.len()
        ));
    }
    let strides: Vec<usize> = strides
        .iter()
        .map(|&s| {
            usize::try_from(s).map_err(|_| format!("byte stride {s}: pw takes no negative strides"))
        })
        .collect::<std::result::Result<_, _>>()?;
    let elements = dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or("the array's size overflows")?;
    if elements == 0 {
        return Ok(Vec::new());
    }
    // The last element's offset, plus its size, must lie inside the buffer.
    let last = dims
        .iter()
        .zip(&strides)
        .try_fold(0usize, |at, (&d, &s)| {
            at.checked_add((d - 1).checked_mul(s)?)
        })
        .and_then(|at| at.checked_add(size))
        .ok_or("the strides overflow")?;
    if last > bytes.len() {
        return Err(format!(
            "the strides {strides:?} reach byte {last}, but the buffer has {}",
            bytes.len()
        ));
    }
    let mut out = Vec::with_capacity(elements * size);
    let mut index = vec![0usize; dims.len()];
    for _ in 0..elements {
        let at: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
        out.extend_from_slice(&bytes[at..at + size]);
        for k in (0..dims.len()).rev() {
            index[k] += 1;
            if index[k] < dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
    Ok(out)
}

/// The byte strides of a dense row-major array.
fn dense_strides(dtype: DType, shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![0i64; shape.len()];
    let mut step = dtype.size_in_bytes() as i64;
    for i in (0..shape.len()).rev() {
        strides[i] = step;
        step = step.saturating_mul(shape[i].max(1));
    }
    strides
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_named_by_its_variant() {
        let r = Rq::CheckFutureRequest(protocol::CheckFutureRequest { future_handle: 7 });
        assert_eq!(request_name(&r), "CheckFutureRequest");
    }

    #[test]
    fn strided_host_buffers_are_gathered() {
        // Columns 1..3 of a 3x4 array of u8: strides [4, 1].
        let bytes: Vec<u8> = (0..12).collect();
        assert_eq!(
            dense(&bytes[1..], 1, &[3, 2], &[4, 1]).unwrap(),
            vec![1, 2, 5, 6, 9, 10]
        );
        // The transpose of a 2x3 array.
        let bytes: Vec<u8> = (0..6).collect();
        assert_eq!(
            dense(&bytes, 1, &[3, 2], &[1, 3]).unwrap(),
            vec![0, 3, 1, 4, 2, 5]
        );
        assert!(dense(&bytes, 1, &[3, 2], &[4, 1]).is_err());
        assert!(dense(&bytes, 1, &[3, 2], &[-1, 1]).is_err());
        assert!(dense(&bytes, 1, &[3, 2], &[i64::MAX, 1]).is_err());
        assert_eq!(
            dense(&bytes, 4, &[0, 5], &[20, 4]).unwrap(),
            Vec::<u8>::new()
        );
        assert_eq!(dense_strides(DType::F32, &[8, 2]), vec![8, 4]);
    }
}
