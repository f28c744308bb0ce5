//! The pass registry and the pipeline runner of pw-opt and pw-run.
//!
//! The MLIR C API cannot register Rust passes by name, so pw keeps its own
//! table: pw passes are Rust functions over the module, upstream passes
//! (canonicalize, cse, symbol-dce, inline) run through an MLIR pass manager.
//! A pipeline mixes both, in order: `builtin.module(pw-assign-devices,cse)`.

use melior::{
    ir::{operation::OperationLike, Module},
    pass::PassManager,
    Context,
};
use pw_lowering::LowerToPhysical;
use pw_passes::{
    assign_devices::AssignDevices, check_options, dce::Dce, fold_transfers::FoldTransfers,
    insert_transfers::InsertTransfers, propagate_shardings::PropagateShardings, schedule::Schedule,
    Options, Pass, PassFailed,
};
use std::io::Write;

/// How a registered pass is made.
pub enum Make {
    /// A pw pass, built from its options.
    Pw(fn(&Options) -> Result<Box<dyn Pass>, String>),
    /// An upstream MLIR pass, by its pipeline name.
    Upstream,
}

/// One entry of the registry.
pub struct PassInfo {
    pub argument: &'static str,
    pub summary: &'static str,
    /// `name=value` options, as `--list-passes` shows them.
    pub options: &'static [(&'static str, &'static str)],
    pub make: Make,
}

fn no_options<P: Pass + 'static>(
    name: &'static str,
    pass: fn() -> P,
) -> impl Fn(&Options) -> Result<Box<dyn Pass>, String> {
    move |options| {
        check_options(name, options, &[])?;
        Ok(Box::new(pass()) as Box<dyn Pass>)
    }
}

/// Every pass pw-opt knows, pw's in pipeline order.
pub const REGISTRY: &[PassInfo] = &[
    PassInfo {
        argument: "pw-assign-devices",
        summary: "place every call and value on a virtual mesh",
        options: &[],
        make: Make::Pw(|o| no_options("pw-assign-devices", || AssignDevices)(o)),
    },
    PassInfo {
        argument: "pw-propagate-shardings",
        summary: "give every array its producer's sharding; record what each call expects",
        options: &[],
        make: Make::Pw(|o| no_options("pw-propagate-shardings", || PropagateShardings)(o)),
    },
    PassInfo {
        argument: "pw-insert-transfers",
        summary: "make every edge between placements a pw.transfer or pw.reshard",
        options: &[],
        make: Make::Pw(|o| no_options("pw-insert-transfers", || InsertTransfers)(o)),
    },
    PassInfo {
        argument: "pw-fold-transfers",
        summary: "drop identity moves, collapse chains, share duplicate moves",
        options: &[],
        make: Make::Pw(|o| no_options("pw-fold-transfers", || FoldTransfers)(o)),
    },
    PassInfo {
        argument: "pw-dce",
        summary: "remove ops and computations that no output needs",
        options: &[],
        make: Make::Pw(|o| no_options("pw-dce", || Dce)(o)),
    },
    PassInfo {
        argument: "pw-lower-to-physical",
        summary: "bind meshes to devices; turn moves into per-shard copies",
        options: &[
            ("topology", "TOML or JSON file of islands and devices"),
            ("devices", "devices of the default local island (default 8)"),
            (
                "kind",
                "device kind of the default local island (default cpu)",
            ),
        ],
        make: Make::Pw(|o| Ok(Box::new(LowerToPhysical::from_options(o)?) as Box<dyn Pass>)),
    },
    PassInfo {
        argument: "pw-schedule",
        summary: "order the program's ops in one total order, critical path first",
        options: &[],
        make: Make::Pw(|o| no_options("pw-schedule", || Schedule)(o)),
    },
    PassInfo {
        argument: "canonicalize",
        summary: "upstream MLIR canonicalizer",
        options: &[],
        make: Make::Upstream,
    },
    PassInfo {
        argument: "cse",
        summary: "upstream MLIR common subexpression elimination",
        options: &[],
        make: Make::Upstream,
    },
    PassInfo {
        argument: "symbol-dce",
        summary: "upstream MLIR dead symbol elimination",
        options: &[],
        make: Make::Upstream,
    },
    PassInfo {
        argument: "inline",
        summary: "upstream MLIR inliner",
        options: &[],
        make: Make::Upstream,
    },
];

/// The name of the full pipeline.
pub const FULL_PIPELINE: &str = "pw-lower";

/// The passes of `--pw-lower`, in order, with why each sits where it does.
pub const FULL_PIPELINE_PASSES: &[&str] = &[
    // Placement first: shardings and transfers depend on where calls run.
    "pw-assign-devices",
    // Shardings come from the computations, which are known once placed.
    "pw-propagate-shardings",
    // Every mismatch between producer and consumer is now known.
    "pw-insert-transfers",
    // Share and simplify moves before paying for them in lowering.
    "pw-fold-transfers",
    // Drop what no output needs before binding devices and planning copies.
    "pw-dce",
    // Devices, and per-shard copies for the moves that remain.
    "pw-lower-to-physical",
    // Last: the order covers the physical copies too.
    "pw-schedule",
];

/// One step of a pipeline: a pass, built with its options.
pub struct Step {
    pub name: &'static str,
    pub pass: StepPass,
}

/// How a step runs.
pub enum StepPass {
    Pw(Box<dyn Pass>),
    /// An upstream pass, run by MLIR's pass manager under this name.
    Upstream,
}

impl Step {
    /// A step running a pw pass built by the caller.
    pub fn pw(pass: Box<dyn Pass>) -> Self {
        Self {
            name: pass.argument(),
            pass: StepPass::Pw(pass),
        }
    }

    fn build(info: &'static PassInfo, options: &Options) -> Result<Self, String> {
        let pass = match &info.make {
            Make::Pw(make) => StepPass::Pw(make(options)?),
            Make::Upstream => {
                check_options(info.argument, options, &[])?;
                StepPass::Upstream
            }
        };
        Ok(Self {
            name: info.argument,
            pass,
        })
    }
}

/// Looks a pass up by name.
pub fn find(name: &str) -> Option<&'static PassInfo> {
    REGISTRY.iter().find(|p| p.argument == name)
}

/// Expands a name into steps: `pw-lower` is the full pipeline (its options
/// go to the passes that accept them); anything else is one pass.
pub fn steps(name: &str, options: Options) -> Result<Vec<Step>, String> {
    if name == FULL_PIPELINE {
        if let Some(unknown) = options.keys().find(|k| {
            !FULL_PIPELINE_PASSES
                .iter()
                .filter_map(|n| find(n))
                .any(|i| i.options.iter().any(|(o, _)| o == k))
        }) {
            return Err(format!("unknown option '{unknown}' of {FULL_PIPELINE}"));
        }
        return FULL_PIPELINE_PASSES
            .iter()
            .filter_map(|n| find(n))
            .map(|info| {
                let own: Options = options
                    .iter()
                    .filter(|(k, _)| info.options.iter().any(|(o, _)| o == k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                Step::build(info, &own)
            })
            .collect();
    }
    let info = find(name).ok_or_else(|| format!("unknown pass '{name}' (see --list-passes)"))?;
    Ok(vec![Step::build(info, &options)?])
}

/// The full pipeline with lowering onto a given topology (pw-run's).
pub fn lowering(topology: pw_core::Topology) -> Result<Vec<Step>, String> {
    FULL_PIPELINE_PASSES
        .iter()
        .map(|name| match *name {
            "pw-lower-to-physical" => Ok(Step::pw(Box::new(LowerToPhysical {
                topology: topology.clone(),
            }))),
            other => steps(other, Options::new()).map(|mut s| s.remove(0)),
        })
        .collect()
}

/// Parses `opt=value opt2=value` (a pass flag's value) into options.
pub fn parse_options(text: &str) -> Result<Options, String> {
    let mut options = Options::new();
    for word in text.split_whitespace() {
        let (key, value) = word
            .split_once('=')
            .ok_or_else(|| format!("expected option=value, found '{word}'"))?;
        options.insert(key.to_owned(), value.to_owned());
    }
    Ok(options)
}

/// Parses `builtin.module(a, b{opt=v opt2=w}, ...)` into steps.
pub fn parse_pipeline(text: &str) -> Result<Vec<Step>, String> {
    let text = text.trim();
    let inner = text
        .strip_prefix("builtin.module(")
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("expected 'builtin.module(...)', found '{text}'"))?;
    let mut result = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut items = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty()) {
        let (name, options) = match item.split_once('{') {
            Some((name, rest)) => {
                let body = rest
                    .strip_suffix('}')
                    .ok_or_else(|| format!("unbalanced braces in '{item}'"))?;
                (name.trim(), parse_options(body)?)
            }
            None => (item, Options::new()),
        };
        result.extend(steps(name, options)?);
    }
    Ok(result)
}

/// Wall time spent per phase, in the order phases first ran.
#[derive(Default, Debug)]
pub struct Timings {
    pub phases: Vec<(String, std::time::Duration)>,
}

impl Timings {
    /// Runs `f`, adding its wall time to phase `name`.
    pub fn time<T>(&mut self, name: &str, f: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let result = f();
        let elapsed = start.elapsed();
        match self.phases.iter_mut().find(|(n, _)| n == name) {
            Some((_, total)) => *total += elapsed,
            None => self.phases.push((name.to_owned(), elapsed)),
        }
        result
    }

    /// The report `--mlir-timing` prints.
    pub fn report(&self) -> String {
        let total: f64 = self.phases.iter().map(|(_, d)| d.as_secs_f64()).sum();
        let mut out = format!("pw-opt timing: {total:.4} s in all\n   wall (s)    share  phase\n");
        for (name, d) in &self.phases {
            let share = if total > 0.0 {
                100.0 * d.as_secs_f64() / total
            } else {
                0.0
            };
            out.push_str(&format!(
                "  {:>9.4}  {share:>6.1}%  {name}\n",
                d.as_secs_f64()
            ));
        }
        out
    }
}

/// Runs `steps` over `module`, verifying after each (unless `verify_each`
/// is false); with `ir_after`, prints the IR after each step there, as
/// `--print-ir-after-all` does.
pub fn run<'c>(
    context: &'c Context,
    module: &mut Module<'c>,
    steps: &[Step],
    mut ir_after: Option<&mut dyn Write>,
    verify_each: bool,
    timings: &mut Timings,
) -> Result<(), PassFailed> {
    for step in steps {
        match &step.pass {
            StepPass::Pw(pass) => timings.time(step.name, || pass.run(context, module))?,
            StepPass::Upstream => {
                timings.time(step.name, || run_upstream(context, module, step.name))?
            }
        }
        let valid = !verify_each
            || timings.time("verify after each pass", || {
                module.as_operation().verify()
                    && !pw_dialect::diag::emit_all(&pw_dialect::verify::verify(module))
            });
        if !valid {
            pw_dialect::diag::Diag::error(
                module.as_operation().location(),
                format!("internal error: {} produced an invalid program", step.name),
            )
            .emit();
            return Err(PassFailed);
        }
        if let Some(out) = ir_after.as_deref_mut() {
            let _ = writeln!(
                out,
                "// -----// IR Dump After {} //----- //\n{}",
                step.name,
                module.as_operation()
            );
        }
    }
    Ok(())
}

fn run_upstream<'c>(
    context: &'c Context,
    module: &mut Module<'c>,
    name: &str,
) -> Result<(), PassFailed> {
    melior::pass::transform::register_canonicalizer();
    melior::pass::transform::register_cse();
    melior::pass::transform::register_symbol_dce();
    melior::pass::transform::register_inliner();
    let manager = PassManager::new(context);
    melior::utility::parse_pass_pipeline(
        manager.as_operation_pass_manager(),
        &format!("builtin.module({name})"),
    )
    .map_err(|e| {
        pw_dialect::diag::Diag::error(module.as_operation().location(), e.to_string()).emit();
        PassFailed
    })?;
    manager.run(module).map_err(|_| PassFailed)
}
