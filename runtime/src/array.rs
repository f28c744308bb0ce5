//! IFRT-style arrays: one logical array over per-device buffers.
//!
//! An [`Array`] knows its [`DType`], shape, [`Sharding`] and [`MemoryLayout`], and
//! holds one [`Buffer`] per device of its sharding, in the sharding's device
//! order (shard `i` lives on `sharding.devices()[i]` and holds
//! `sharding.shard_domains(shape)[i]`). Cloning an `Array` makes another
//! reference to the same array, like IFRT's `ArrayRef`: donating or deleting
//! it through one reference is seen through all.
//!
//! # Operations
//!
//! | operation | moves data? |
//! | --- | --- |
//! | [`Array::from_host`]: split a host array by a sharding | host to devices |
//! | [`Array::from_buffers`]: wrap per-device buffers (e.g. execution outputs) | no |
//! | [`Array::assemble`]: glue single-device arrays into one | no (copies with `AlwaysCopy`) |
//! | [`Array::disassemble`]: the inverse | no (copies with `AlwaysCopy`) |
//! | [`Array::fully_replicated_shard`]: one replica as a single-device array | no (copies with `AlwaysCopy`) |
//! | [`Array::to_host`]: reassemble into one host array | devices to host |
//! | [`Array::reshard`]: change the sharding | device to device, or through the host |
//! | [`Array::remap`]: move shards between arrays | never |
//! | [`Array::bitcast`]: reinterpret element type / shape | never |
//!
//! # Copy semantics
//!
//! Every operation that takes arrays takes a [`CopySemantics`]:
//!
//! * `AlwaysCopy`: the result owns fresh buffers; the input is untouched.
//!   PJRT has no same-device copy, so a copy that stays on its device goes
//!   through host memory. Metadata-only operations ([`Array::remap`],
//!   [`Array::bitcast`]) reject it, as IFRT does.
//! * `ReuseInput`: the result may share the input's buffers; both stay usable
//!   (arrays are immutable, so sharing is safe).
//! * `DonateInput`: the result takes the input's buffers; every reference to
//!   the input then fails with [`Error::Donated`]. Inputs are checked before
//!   anything is donated, so a failed operation leaves them usable.
//!
//! Executing a program on arrays ([`execute`]) never donates its inputs.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::host::HostArray;
use crate::pjrt::{Buffer, Client, Device, LoadedExecutable};
use crate::sharding::{sizes, MemoryLayout, Sharding};
use pw_core::geometry::Region;

/// How an operation treats its input arrays' buffers. See the module doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopySemantics {
    AlwaysCopy,
    ReuseInput,
    DonateInput,
}

/// The type of an array: element type, global shape and sharding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub sharding: Sharding,
}

impl ArraySpec {
    pub fn new(dtype: DType, shape: &[usize], sharding: Sharding) -> ArraySpec {
        ArraySpec {
            dtype,
            shape: shape.to_vec(),
            sharding,
        }
    }
}

/// A logical array over per-device buffers. See the module doc.
#[derive(Clone)]
pub struct Array {
    inner: Arc<ArrayInner>,
}

struct ArrayInner {
    client: Client,
    spec: ArraySpec,
    layout: MemoryLayout,
    domains: Vec<Region>,
    state: Mutex<State>,
}

enum State {
    Live(Vec<Arc<Buffer>>),
    Donated,
    Deleted,
}

impl Array {
    // ------------------------------------------------------------ making ---

    /// Splits `host` by `sharding` and copies each shard to its device
    /// (IFRT `MakeArrayFromHostBuffer`).
    pub fn from_host(client: &Client, host: &HostArray, sharding: &Sharding) -> Result<Array> {
        let spec = ArraySpec::new(host.dtype(), host.shape(), sharding.clone());
        let domains = sharding.shard_domains(host.shape())?;
        let parts = crate::host::split(host, &domains)?;
        let buffers = sharding
            .devices()
            .iter()
            .zip(&parts)
            .map(|(device, part)| part.to_device(client, device).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        Array::new(client, spec, domains, buffers)
    }

    /// Wraps one buffer per device of `spec.sharding` (in its order), for
    /// instance the outputs of an execution; checks each buffer's device,
    /// dtype and shape against the spec.
    pub fn from_buffers(spec: ArraySpec, buffers: Vec<Buffer>) -> Result<Array> {
        let client = buffers
            .first()
            .map(|b| b.client().clone())
            .ok_or_else(|| Error::invalid("an array needs at least one buffer"))?;
        let domains = spec.sharding.shard_domains(&spec.shape)?;
        if buffers.len() != domains.len() {
            return Err(Error::invalid(format!(
                "the sharding has {} shards, got {} buffers",
                domains.len(),
                buffers.len()
            )));
        }
        for (i, ((buffer, device), domain)) in buffers
            .iter()
            .zip(spec.sharding.devices())
            .zip(&domains)
            .enumerate()
        {
            check_shard(&format!("buffer {i}"), buffer, device, spec.dtype, domain)?;
        }
        Array::new(
            &client,
            spec,
            domains,
            buffers.into_iter().map(Arc::new).collect(),
        )
    }

    fn new(
        client: &Client,
        spec: ArraySpec,
        domains: Vec<Region>,
        buffers: Vec<Arc<Buffer>>,
    ) -> Result<Array> {
        for device in spec.sharding.devices() {
            client.check_device(device, "array")?;
        }
        let layout = MemoryLayout::row_major(spec.shape.len());
        Ok(Array {
            inner: Arc::new(ArrayInner {
                client: client.clone(),
                spec,
                layout,
                domains,
                state: Mutex::new(State::Live(buffers)),
            }),
        })
    }

    /// Glues single-device arrays into one array of `spec` (IFRT
    /// `AssembleArrayFromSingleDeviceArrays`): `shards[i]` is the shard of
    /// `spec.sharding.devices()[i]`.
    pub fn assemble(spec: ArraySpec, shards: &[Array], semantics: CopySemantics) -> Result<Array> {
        let domains = spec.sharding.shard_domains(&spec.shape)?;
        if shards.len() != domains.len() {
            return Err(Error::invalid(format!(
                "the sharding has {} shards, got {} single-device arrays",
                domains.len(),
                shards.len()
            )));
        }
        let mut buffers = Vec::with_capacity(shards.len());
        for (i, ((shard, device), domain)) in shards
            .iter()
            .zip(spec.sharding.devices())
            .zip(&domains)
            .enumerate()
        {
            let what = format!("single-device array {i}");
            if shard.inner.spec.sharding.num_shards() != 1 {
                return Err(Error::invalid(format!(
                    "{what} has {} shards, not 1",
                    shard.num_shards()
                )));
            }
            let buffer = shard.live_buffers()?.swap_remove(0);
            check_shard(&what, &buffer, device, spec.dtype, domain)?;
            buffers.push(buffer);
        }
        let client = shards[0].inner.client.clone();
        let buffers = consume(shards, buffers, semantics)?;
        Array::new(&client, spec, domains, buffers)
    }

    // ---------------------------------------------------------- metadata ---

    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    pub fn dtype(&self) -> DType {
        self.inner.spec.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.inner.spec.shape
    }

    pub fn sharding(&self) -> &Sharding {
        &self.inner.spec.sharding
    }

    pub fn layout(&self) -> &MemoryLayout {
        &self.inner.layout
    }

    pub fn spec(&self) -> &ArraySpec {
        &self.inner.spec
    }

    pub fn num_shards(&self) -> usize {
        self.inner.domains.len()
    }

    /// Each shard's box of the global index space, in device order.
    pub fn shard_domains(&self) -> &[Region] {
        &self.inner.domains
    }

    /// The per-device buffers, in device order; an error once donated or deleted.
    pub fn buffers(&self) -> Result<Vec<Arc<Buffer>>> {
        self.live_buffers()
    }

    /// The buffer on `device`.
    pub fn buffer_on(&self, device: &Device) -> Result<Arc<Buffer>> {
        let index = self
            .sharding()
            .devices()
            .iter()
            .position(|d| d == device)
            .ok_or_else(|| Error::invalid(format!("{self:?} has no shard on {device:?}")))?;
        Ok(self.live_buffers()?.swap_remove(index))
    }

    pub fn is_donated(&self) -> bool {
        matches!(*self.lock(), State::Donated)
    }

    pub fn is_deleted(&self) -> bool {
        matches!(*self.lock(), State::Deleted)
    }

    /// Releases the buffers now (those not shared with another array).
    pub fn delete(&self) {
        let old = std::mem::replace(&mut *self.lock(), State::Deleted);
        drop(old);
    }

    /// Blocks until every shard's data is defined.
    pub fn wait_ready(&self) -> Result<()> {
        let events = self
            .live_buffers()?
            .iter()
            .map(|b| b.ready_event())
            .collect::<Result<Vec<_>>>()?;
        crate::pjrt::Event::wait_all(&events)
    }

    // -------------------------------------------------------- operations ---

    /// Copies the array to host memory, reassembled from its shards (one
    /// transfer per distinct shard domain).
    pub fn to_host(&self) -> Result<HostArray> {
        let buffers = self.live_buffers()?;
        crate::host::assemble(self.dtype(), self.shape(), &self.inner.domains, |i| {
            buffers[i].to_host().map(Some)
        })
    }

    /// One single-device array per shard, in device order (IFRT
    /// `DisassembleIntoSingleDeviceArrays`).
    pub fn disassemble(&self, semantics: CopySemantics) -> Result<Vec<Array>> {
        let buffers = self.live_buffers()?;
        let buffers = consume(std::slice::from_ref(self), buffers, semantics)?;
        buffers
            .into_iter()
            .zip(self.sharding().devices())
            .zip(&self.inner.domains)
            .map(|((buffer, device), domain)| {
                let shape = sizes(domain);
                let spec =
                    ArraySpec::new(self.dtype(), &shape, Sharding::SingleDevice(device.clone()));
                Array::new(
                    &self.inner.client,
                    spec,
                    vec![Region::full(&domain.sizes)],
                    vec![buffer],
                )
            })
            .collect()
    }

    /// The first device's replica as a single-device array, for a fully
    /// replicated array (IFRT `FullyReplicatedShard`).
    pub fn fully_replicated_shard(&self, semantics: CopySemantics) -> Result<Array> {
        if !self.sharding().is_fully_replicated(self.shape())? {
            return Err(Error::invalid(format!("{self:?} is not fully replicated")));
        }
        let first = self.live_buffers()?.swap_remove(0);
        let mut buffers = consume(std::slice::from_ref(self), vec![first], semantics)?;
        let device = self.sharding().devices()[0].clone();
        let spec = ArraySpec::new(self.dtype(), self.shape(), Sharding::SingleDevice(device));
        Array::new(
            &self.inner.client,
            spec,
            vec![Region::full(&crate::sharding::dims(self.shape()))],
            vec![buffers.swap_remove(0)],
        )
    }

    /// The same array under another sharding (IFRT `ReshardArrays`).
    ///
    /// A target shard whose domain equals a source shard's is taken from it:
    /// reused (or copied, with `AlwaysCopy`) on the same device, copied
    /// device to device otherwise. Any other target shard is cut from a host
    /// copy of the array.
    pub fn reshard(&self, sharding: &Sharding, semantics: CopySemantics) -> Result<Array> {
        let domains = sharding.shard_domains(self.shape())?;
        let sources = self.live_buffers()?;
        for device in sharding.devices() {
            self.inner.client.check_device(device, "reshard")?;
        }
        let host: std::cell::OnceCell<HostArray> = std::cell::OnceCell::new();
        let mut buffers = Vec::with_capacity(domains.len());
        for (device, domain) in sharding.devices().iter().zip(&domains) {
            let same_domain: Vec<usize> = (0..sources.len())
                .filter(|&s| self.inner.domains[s] == *domain)
                .collect();
            let local = same_domain
                .iter()
                .find(|&&s| self.sharding().devices()[s] == *device);
            let buffer = match (local, same_domain.first()) {
                (Some(&s), _) if semantics != CopySemantics::AlwaysCopy => Arc::clone(&sources[s]),
                (Some(&s), _) => Arc::new(sources[s].duplicate()?),
                (None, Some(&s)) => Arc::new(sources[s].copy_to_device(device)?),
                (None, None) => {
                    // One host copy serves every shard cut from it.
                    let whole = match host.get() {
                        Some(whole) => whole,
                        None => {
                            let fetched = self.to_host()?;
                            host.get_or_init(|| fetched)
                        }
                    };
                    let part = whole.slice(domain)?;
                    Arc::new(self.inner.client.buffer_from_host(
                        part.bytes(),
                        part.dtype(),
                        part.shape(),
                        device,
                    )?)
                }
            };
            buffers.push(buffer);
        }
        if semantics == CopySemantics::DonateInput {
            self.donate()?;
        }
        drop(sources);
        let spec = ArraySpec::new(self.dtype(), self.shape(), sharding.clone());
        Array::new(&self.inner.client, spec, domains, buffers)
    }

    /// Moves shards between arrays without touching their data (IFRT
    /// `RemapArrays`). See [`RemapPlan`]. `AlwaysCopy` is rejected.
    pub fn remap(
        inputs: &[Array],
        plan: &RemapPlan,
        semantics: CopySemantics,
    ) -> Result<Vec<Array>> {
        if semantics == CopySemantics::AlwaysCopy {
            return Err(Error::invalid(
                "remap is metadata-only: use ReuseInput or DonateInput, not AlwaysCopy",
            ));
        }
        let client = inputs
            .first()
            .map(|a| a.inner.client.clone())
            .ok_or_else(|| Error::invalid("remap needs inputs"))?;
        let out_domains = plan
            .outputs
            .iter()
            .map(|s| s.sharding.shard_domains(&s.shape))
            .collect::<Result<Vec<_>>>()?;
        let in_buffers = inputs
            .iter()
            .map(Array::live_buffers)
            .collect::<Result<Vec<_>>>()?;
        let mut slots: Vec<Vec<Option<Arc<Buffer>>>> =
            out_domains.iter().map(|d| vec![None; d.len()]).collect();
        for (m, mapping) in plan.mappings.iter().enumerate() {
            let input = inputs.get(mapping.in_array).ok_or_else(|| {
                Error::invalid(format!(
                    "mapping {m} reads input {} of {}",
                    mapping.in_array,
                    inputs.len()
                ))
            })?;
            let out_spec = plan.outputs.get(mapping.out_array).ok_or_else(|| {
                Error::invalid(format!(
                    "mapping {m} writes output {} of {}",
                    mapping.out_array,
                    plan.outputs.len()
                ))
            })?;
            if input.dtype() != out_spec.dtype {
                return Err(Error::DTypeMismatch {
                    context: format!("remap mapping {m}"),
                    expected: out_spec.dtype,
                    actual: input.dtype(),
                });
            }
            let (from, to) = (&mapping.from, &mapping.to);
            if from.len() != to.len() {
                return Err(Error::invalid(format!(
                    "mapping {m} moves {} shards into {} slots",
                    from.len(),
                    to.len()
                )));
            }
            for (&f, &t) in from.iter().zip(to) {
                let what = format!("remap mapping {m}, shard {f} -> {t}");
                let buffer = in_buffers[mapping.in_array].get(f).ok_or_else(|| {
                    Error::invalid(format!("{what}: input has {} shards", input.num_shards()))
                })?;
                let slot = slots[mapping.out_array]
                    .get_mut(t)
                    .ok_or_else(|| Error::invalid(format!("{what}: output has fewer shards")))?;
                if slot.is_some() {
                    return Err(Error::invalid(format!("{what}: output shard filled twice")));
                }
                let in_domain = &input.inner.domains[f];
                let out_domain = &out_domains[mapping.out_array][t];
                if in_domain.sizes != out_domain.sizes {
                    return Err(Error::ShapeMismatch {
                        context: what,
                        expected: sizes(out_domain),
                        actual: sizes(in_domain),
                    });
                }
                let (in_device, out_device) = (
                    &input.sharding().devices()[f],
                    &out_spec.sharding.devices()[t],
                );
                if in_device != out_device {
                    return Err(Error::invalid(format!(
                        "{what}: shard is on {in_device:?}, the slot on {out_device:?}"
                    )));
                }
                *slot = Some(Arc::clone(buffer));
            }
        }
        let mut outputs = Vec::with_capacity(plan.outputs.len());
        for (o, (spec, shard_slots)) in plan.outputs.iter().zip(slots).enumerate() {
            let buffers = shard_slots
                .into_iter()
                .enumerate()
                .map(|(t, b)| {
                    b.ok_or_else(|| {
                        Error::invalid(format!("remap leaves shard {t} of output {o} empty"))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            outputs.push((spec.clone(), buffers));
        }
        drop(in_buffers);
        if semantics == CopySemantics::DonateInput {
            for input in inputs {
                input.donate()?;
            }
        }
        outputs
            .into_iter()
            .zip(out_domains)
            .map(|((spec, buffers), domains)| Array::new(&client, spec, domains, buffers))
            .collect()
    }

    /// Reinterprets the array's bytes as `spec` (IFRT `BitcastArrays`): same
    /// devices in the same order, and every shard keeps its byte size. No data
    /// moves: each new shard is a PJRT view of the old device memory, which it
    /// keeps alive. `AlwaysCopy` is rejected.
    pub fn bitcast(&self, spec: ArraySpec, semantics: CopySemantics) -> Result<Array> {
        if semantics == CopySemantics::AlwaysCopy {
            return Err(Error::invalid(
                "bitcast is metadata-only: use ReuseInput or DonateInput, not AlwaysCopy",
            ));
        }
        if spec.sharding.devices() != self.sharding().devices() {
            return Err(Error::invalid(format!(
                "bitcast keeps devices: {:?} vs {:?}",
                spec.sharding.devices(),
                self.sharding().devices()
            )));
        }
        let domains = spec.sharding.shard_domains(&spec.shape)?;
        for (i, (old, new)) in self.inner.domains.iter().zip(&domains).enumerate() {
            let old_bytes = old.elements() as usize * self.dtype().size_in_bytes();
            let new_bytes = new.elements() as usize * spec.dtype.size_in_bytes();
            if old_bytes != new_bytes {
                return Err(Error::invalid(format!(
                    "bitcast shard {i}: {}{:?} is {old_bytes} bytes, {}{:?} is {new_bytes}",
                    self.dtype(),
                    old.sizes,
                    spec.dtype,
                    new.sizes
                )));
            }
        }
        let sources = self.live_buffers()?;
        let buffers = sources
            .iter()
            .zip(&domains)
            .map(|(source, domain)| {
                Buffer::view_as(source, spec.dtype, &sizes(domain)).map(Arc::new)
            })
            .collect::<Result<Vec<_>>>()?;
        drop(sources);
        if semantics == CopySemantics::DonateInput {
            self.donate()?;
        }
        Array::new(&self.inner.client, spec, domains, buffers)
    }

    // ----------------------------------------------------------- helpers ---

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn live_buffers(&self) -> Result<Vec<Arc<Buffer>>> {
        match &*self.lock() {
            State::Live(buffers) => Ok(buffers.clone()),
            State::Donated => Err(Error::Donated {
                what: format!("{self:?}"),
            }),
            State::Deleted => Err(Error::Deleted {
                what: format!("{self:?}"),
            }),
        }
    }

    /// Marks the array donated; its buffers now belong to whoever took them.
    fn donate(&self) -> Result<()> {
        let mut state = self.lock();
        match &*state {
            State::Live(_) => {
                *state = State::Donated;
                Ok(())
            }
            State::Donated => Err(Error::Donated {
                what: format!("{}", Describe(&self.inner.spec)),
            }),
            State::Deleted => Err(Error::Deleted {
                what: format!("{}", Describe(&self.inner.spec)),
            }),
        }
    }
}

/// Applies `semantics` to `buffers` taken from `inputs` (already validated).
fn consume(
    inputs: &[Array],
    buffers: Vec<Arc<Buffer>>,
    semantics: CopySemantics,
) -> Result<Vec<Arc<Buffer>>> {
    match semantics {
        CopySemantics::ReuseInput => Ok(buffers),
        CopySemantics::AlwaysCopy => buffers
            .iter()
            .map(|b| b.duplicate().map(Arc::new))
            .collect(),
        CopySemantics::DonateInput => {
            for input in inputs {
                input.donate()?;
            }
            Ok(buffers)
        }
    }
}

/// Checks that `buffer` can be the shard of `device` holding `domain`.
fn check_shard(
    what: &str,
    buffer: &Buffer,
    device: &Device,
    dtype: DType,
    domain: &Region,
) -> Result<()> {
    let on = buffer.device()?;
    if on != *device {
        return Err(Error::invalid(format!(
            "{what} is on {on:?}, but the sharding puts that shard on {device:?}"
        )));
    }
    let actual = buffer.dtype()?;
    if actual != dtype {
        return Err(Error::DTypeMismatch {
            context: what.to_string(),
            expected: dtype,
            actual,
        });
    }
    let dims = buffer.dims()?;
    let expected = sizes(domain);
    if dims != expected {
        return Err(Error::ShapeMismatch {
            context: what.to_string(),
            expected,
            actual: dims,
        });
    }
    Ok(())
}

struct Describe<'a>(&'a ArraySpec);

impl fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<i32> = self.0.sharding.devices().iter().map(Device::id).collect();
        write!(f, "{}{:?} on devices {ids:?}", self.0.dtype, self.0.shape)
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Array({})", Describe(&self.inner.spec))
    }
}

/// How [`Array::remap`] builds its outputs.
#[derive(Debug, Clone)]
pub struct RemapPlan {
    /// The outputs' specs.
    pub outputs: Vec<ArraySpec>,
    /// Which input shards fill which output shards; every output shard must
    /// be filled exactly once, by a shard of equal shape on the same device.
    pub mappings: Vec<RemapMapping>,
}

/// Shard `from[i]` of input `in_array` becomes shard `to[i]` of output
/// `out_array` (shard indices in sharding device order).
#[derive(Debug, Clone)]
pub struct RemapMapping {
    pub in_array: usize,
    pub out_array: usize,
    pub from: Vec<usize>,
    pub to: Vec<usize>,
}

/// Runs `executable` on arrays: every device of the executable gets the
/// shard each input holds on it, and output `k` of every device becomes a
/// shard of an array of `outputs[k]` (which must name the executable's
/// devices). Inputs are never donated. Returns without waiting.
pub fn execute(
    executable: &LoadedExecutable,
    inputs: &[&Array],
    outputs: &[ArraySpec],
) -> Result<Vec<Array>> {
    if outputs.len() != executable.num_outputs() {
        return Err(Error::invalid(format!(
            "the executable has {} outputs, {} output specs were given",
            executable.num_outputs(),
            outputs.len()
        )));
    }
    let devices = executable.devices();
    let mut lists = Vec::with_capacity(devices.len());
    for device in devices {
        lists.push(
            inputs
                .iter()
                .map(|a| a.buffer_on(device))
                .collect::<Result<Vec<_>>>()?,
        );
    }
    let refs: Vec<Vec<&Buffer>> = lists
        .iter()
        .map(|l| l.iter().map(|b| &**b).collect())
        .collect();
    let slices: Vec<&[&Buffer]> = refs.iter().map(Vec::as_slice).collect();
    let execution = executable.execute_with(&slices, &crate::pjrt::ExecuteOptions::default())?;
    // Per output, the buffers of every device, keyed by device.
    let mut per_output: Vec<HashMap<(usize, usize), Buffer>> =
        (0..outputs.len()).map(|_| HashMap::new()).collect();
    for (device, device_outputs) in devices.iter().zip(execution.outputs) {
        for (k, buffer) in device_outputs.into_iter().enumerate() {
            per_output[k].insert(device.key(), buffer);
        }
    }
    outputs
        .iter()
        .zip(per_output)
        .enumerate()
        .map(|(k, (spec, mut by_device))| {
            let buffers = spec
                .sharding
                .devices()
                .iter()
                .map(|d| {
                    by_device.remove(&d.key()).ok_or_else(|| {
                        Error::invalid(format!("output {k}: the executable does not run on {d:?}"))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Array::from_buffers(spec.clone(), buffers)
        })
        .collect()
}
