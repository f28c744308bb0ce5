//! A session's executables: programs lowered onto its slice, or plans
//! already on its devices (the IFRT proxy's, and relayouts), compiled once
//! and shipped to the slice's workers; lowered again when some of their
//! devices are gone.

use super::Sessions;
use crate::{
    compile::{self, Inspected, Source},
    error::{Error, Result},
    lowering::{self, Prepared, Program},
    runs::KeptParts,
    summary::RunSummary,
    transfer,
};
use pw_core::plan::{Module, Plan, ValueId};
use pw_exec::cache::Key;
use pw_wire::proto;
use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

/// A program compiled for a session's slice.
pub(crate) struct Executable {
    pub name: String,
    pub prepared: Prepared,
    pub keys: BTreeMap<u32, Vec<Key>>,
    /// The workers that keep its parts (sent once, then run by key).
    pub kept: KeptParts,
    /// Inputs whose arrays a call takes over.
    pub donate: BTreeSet<usize>,
    /// What it is built from, onto how many of the slice's devices (to
    /// lower it again when they are gone).
    pub build: Build,
    pub devices: usize,
}

/// How the client sees value `v` of `plan`: its type, devices, sharding.
pub(crate) fn array_info(plan: &Plan, v: ValueId) -> proto::ArrayInfo {
    let value = &plan.values[v];
    let dims: Vec<usize> = value.shape.iter().map(|&d| d as usize).collect();
    proto::ArrayInfo {
        r#type: Some(proto::ArrayType::of(value.dtype, &dims)),
        devices: value.devices.clone(),
        sharding: value.sharding.clone(),
    }
}

/// What a session's executable is built from.
#[derive(Clone)]
pub enum Build {
    /// A pw program, lowered onto the slice (with a schedule policy).
    Program {
        /// MLIR text or bytecode.
        source: bytes::Bytes,
        schedule: Option<String>,
    },
    /// A plan already on the slice's devices (the IFRT proxy builds them).
    Plan(Plan),
}

impl Sessions<'_> {
    /// Lowers a program onto session `request.session`'s slice and compiles
    /// it (see the module doc); `progress` hears each compile.
    pub async fn compile_program(
        &self,
        request: proto::CompileProgramRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<proto::CompiledProgram> {
        let id = request.session;
        let mut slice = self.lock().active(id, "a compile")?.devices.clone();
        let n = request.devices as usize;
        if n > slice.len() {
            return Err(Error::TooManyDevices {
                session: id,
                asked: n,
                held: slice.len(),
            });
        }
        if n > 0 {
            slice.truncate(n);
        }
        // What the journal keeps of it (the program's bytes are shared).
        let journaled = request.clone();
        let build = Build::Program {
            source: request.program,
            schedule: (!request.schedule.is_empty()).then_some(request.schedule),
        };
        let donate = request.donate.iter().map(|&d| d as usize).collect();
        let (exe, summary) = self
            .build(id, request.name, build, slice, donate, progress)
            .await?;
        let plan = &exe.prepared.plan;
        let (compiled, cached) = compiled_and_cached(&summary);
        let info = |v: ValueId| array_info(plan, v);
        let mut reply = proto::CompiledProgram {
            executable: 0,
            inputs: plan.inputs.iter().map(|&v| info(v)).collect(),
            outputs: plan.outputs.iter().map(|&v| info(v)).collect(),
            compiled,
            cached,
            lowered: summary.lowered.clone(),
        };
        reply.executable = self.keep(id, exe, (compiled, cached), true)?;
        let journal = self
            .c
            .journal(|j| j.executable(id, reply.executable, &journaled));
        if let Err(e) = journal {
            let _ = self.forget(id, reply.executable);
            return Err(e);
        }
        Ok(reply)
    }

    /// Builds an executable of session `id` from a plan on its devices
    /// (see [`Build::Plan`]); returns its handle.
    pub async fn compile_plan(
        &self,
        id: u64,
        name: String,
        plan: Plan,
        donate: BTreeSet<usize>,
    ) -> Result<u64> {
        let slice = self.lock().get(id)?.devices.clone();
        let (exe, summary) = self
            .build(id, name, Build::Plan(plan), slice, donate, &|_| {})
            .await?;
        self.keep(id, exe, compiled_and_cached(&summary), false)
    }

    /// Keeps `exe` in session `id` (a lowering when `lowered`); its handle.
    fn keep(
        &self,
        id: u64,
        exe: Executable,
        (compiled, cached): (u32, u32),
        lowered: bool,
    ) -> Result<u64> {
        let mut s = self.lock();
        let session = s.get(id)?;
        let handle = session.mint();
        session.executables.insert(handle, Arc::new(exe));
        let c = &mut session.counters;
        c.lowerings += u64::from(lowered);
        c.executables_compiled += u64::from(compiled);
        c.executables_from_cache += u64::from(cached);
        Ok(handle)
    }

    /// Drops executable `handle` of session `id` (its client destroyed
    /// it; unknown handles are ignored). Its Python functions leave the
    /// session's sidecars, in gang order after the calls sent before, so
    /// what they held (a `colocated_python_class` object) is destroyed
    /// there as in process.
    pub fn forget(&self, id: u64, handle: u64) -> Result<()> {
        let Some(exe) = self.lock().get(id)?.executables.remove(&handle) else {
            return Ok(());
        };
        if super::reattach::journaled(&exe) {
            self.c.journal(|j| j.executable_dropped(id, handle))?;
        }
        let python: Vec<String> = exe
            .prepared
            .plan
            .computations
            .iter()
            .filter_map(|c| match &c.module {
                Module::Python(bytes) => Some(pw_exec::sidecar::Program::id_of(bytes)),
                _ => None,
            })
            .collect();
        if !python.is_empty() {
            let why = "its executable was destroyed by its client";
            transfer::release_arrays(self.c, id, &exe.prepared.workers, why, &[], &python);
        }
        Ok(())
    }

    /// What `module` makes on `devices` devices (see
    /// [`crate::compile::Compiler::inspect`]).
    pub async fn inspect(
        &self,
        module: &[u8],
        devices: usize,
        overrides: Vec<(String, crate::compile::OptionOverride)>,
    ) -> Result<Inspected> {
        let mut compiler = self.c.inner.compiler.lock().await;
        compiler.inspect(module, devices, overrides).await
    }

    /// Lowers a program onto devices `slice` of session `id` (or cuts a
    /// plan already on them), compiles its computations and ships them to
    /// the slice's workers.
    pub(crate) async fn build(
        &self,
        id: u64,
        name: String,
        build: Build,
        slice: Vec<i64>,
        donate: BTreeSet<usize>,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<(Executable, RunSummary)> {
        let (topology, addrs) = self.c.inner.workers.topology(Some(&slice));
        if topology.islands.is_empty() {
            return Err(Error::NoDevicesLeft { session: id });
        }
        let mut summary = RunSummary::default();
        let prepared = match &build {
            Build::Program { source, schedule } => {
                let program = Program {
                    name: &name,
                    source,
                    schedule: schedule.as_deref(),
                };
                lowering::prepare(self.c, program, topology, &addrs, &mut summary).await?
            }
            Build::Plan(plan) => {
                if let Some(&device) = plan.devices().iter().find(|d| !slice.contains(d)) {
                    return Err(Error::NotHeld {
                        name,
                        device,
                        session: id,
                    });
                }
                plan.check().map_err(|source| Error::BadPlan {
                    name: name.clone(),
                    source,
                })?;
                lowering::cut(self.c, plan.clone(), &addrs, &mut summary)?
            }
        };
        let keys = compile::executables(self.c, &prepared.parts, &mut summary, progress).await?;
        let inputs = prepared.plan.inputs.len();
        if let Some(&index) = donate.iter().find(|&&d| d >= inputs) {
            return Err(Error::DonatedOutOfRange { index, inputs });
        }
        let exe = Executable {
            name,
            prepared,
            keys,
            kept: KeptParts::new(self.c.inner.runs.next_id()),
            donate,
            build,
            devices: slice.len(),
        };
        Ok((exe, summary))
    }

    /// Executable `handle` of session `id`, lowered again onto the slice as
    /// it is now when some of its devices are gone.
    pub(crate) async fn current(&self, id: u64, handle: u64) -> Result<Arc<Executable>> {
        let exe = self
            .lock()
            .get(id)?
            .executables
            .get(&handle)
            .cloned()
            .ok_or(Error::NoExecutable {
                session: id,
                handle,
            })?;
        let registered = self.c.inner.workers.addresses();
        let devices = exe.prepared.plan.devices();
        if devices.iter().all(|d| registered.contains_key(d)) {
            return Ok(exe);
        }
        if let Build::Plan(_) = exe.build {
            return Err(Error::Rebuild {
                name: exe.name.clone(),
            });
        }
        let slice = self.slice_of(id, exe.devices, &exe.name).await?;
        tracing::info!(
            "session {id}: {} lowered again onto devices {slice:?} (some of its devices are gone)",
            exe.name
        );
        let (fresh, _) = self
            .build(
                id,
                exe.name.clone(),
                exe.build.clone(),
                slice,
                exe.donate.clone(),
                &|_| {},
            )
            .await?;
        let fresh = Arc::new(fresh);
        let mut s = self.lock();
        let session = s.get(id)?;
        session.executables.insert(handle, fresh.clone());
        session.counters.lowerings += 1;
        Ok(fresh)
    }
}

/// How many of a build's executables were compiled, and how many came
/// from a cache.
fn compiled_and_cached(summary: &RunSummary) -> (u32, u32) {
    let count = |f: fn(&Source) -> bool| {
        summary
            .executables
            .iter()
            .filter(|e| e.source.as_ref().is_some_and(f))
            .count() as u32
    };
    (
        count(|s| matches!(s, Source::Controller | Source::Worker(_))),
        count(|s| matches!(s, Source::DiskCache | Source::Memory)),
    )
}
