//! Every pass by its command-line name, for pw-opt's pass flags and
//! `--pass-pipeline` text.
//!
//! The MLIR C API cannot register Rust passes by name, so pw keeps its own
//! table: pw passes are Rust functions over the module, upstream passes
//! (canonicalize, cse, symbol-dce, inline) run through an MLIR pass manager.
//! A pipeline mixes both, in order: `builtin.module(pw-assign-devices,cse)`;
//! `pw-lower` names the whole [`Pipeline::lower`], phases and all.

use crate::{
    check_options,
    lower::{self, lower_to_physical},
    pipeline::{LowerOptions, Phase, Pipeline, Step, StepPass},
    place, schedule, OptionList, Options, Pass,
};

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
    pub options: OptionList,
    pub make: Make,
}

/// A pass that takes no options.
pub(crate) fn plain<P: Pass + 'static>(
    options: &Options,
    name: &str,
    pass: P,
) -> Result<Box<dyn Pass>, String> {
    check_options(name, options, &[])?;
    Ok(Box::new(pass))
}

/// The upstream MLIR passes pipelines may name.
const UPSTREAM: &[PassInfo] = &[
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

/// Every pass pw-opt knows: the phases' in pipeline order, then the
/// upstream ones.
pub fn passes() -> impl Iterator<Item = &'static PassInfo> {
    [place::PASSES, lower::PASSES, schedule::PASSES, UPSTREAM]
        .into_iter()
        .flatten()
}

/// The name of the full pipeline.
pub const FULL_PIPELINE: &str = "pw-lower";

/// What `--pw-lower` says about itself.
pub const FULL_PIPELINE_SUMMARY: &str = "the full lowering pipeline: the place phase (assign, shardings, transfers, fold, dce), lower, schedule; takes pw-lower-to-physical's options and schedule=POLICY";

// FULL_PIPELINE_OPTIONS lists lower-to-physical's options one by one.
const _: () = assert!(lower_to_physical::OPTIONS.len() == 3);

/// The options `pw-lower` takes: pw-lower-to-physical's, and the schedule
/// policy.
pub const FULL_PIPELINE_OPTIONS: OptionList = &[
    lower_to_physical::OPTIONS[0],
    lower_to_physical::OPTIONS[1],
    lower_to_physical::OPTIONS[2],
    (
        "schedule",
        "pw-schedule's policy: critical-path (default), gpipe or 1f1b",
    ),
];

/// Looks a pass up by name.
pub fn find(name: &str) -> Option<&'static PassInfo> {
    passes().find(|p| p.argument == name)
}

/// The pipeline a name stands for: `pw-lower` is the full pipeline
/// (options: [`LowerOptions`]); anything else is one pass.
pub fn pipeline(name: &str, options: &Options) -> Result<Pipeline, String> {
    if name == FULL_PIPELINE {
        check_options(FULL_PIPELINE, options, FULL_PIPELINE_OPTIONS)?;
        return Ok(Pipeline::lower(&LowerOptions::from_options(options)?));
    }
    let info = find(name).ok_or_else(|| format!("unknown pass '{name}' (see --list-passes)"))?;
    let pass = match &info.make {
        Make::Pw(make) => StepPass::Pw(make(options)?),
        Make::Upstream => {
            check_options(info.argument, options, &[])?;
            StepPass::Upstream
        }
    };
    Ok(Pipeline {
        phases: vec![Phase::single(Step {
            name: info.argument,
            pass,
        })],
    })
}

/// Parses `opt=value opt2=value` (a pass flag's value) into options.
pub fn parse_options(text: &str) -> Result<Options, String> {
    let mut options = Options::new();
    for word in text.split_whitespace() {
        let (key, value) = word
            .split_once('=')
            .ok_or_else(|| format!("expected option=value, found '{word}'"))?;
        if options.insert(key.to_owned(), value.to_owned()).is_some() {
            return Err(format!("option '{key}' is given twice"));
        }
    }
    Ok(options)
}

/// Parses `builtin.module(a, b{opt=v opt2=w}, ...)` into a pipeline.
pub fn parse_pipeline(text: &str) -> Result<Pipeline, String> {
    let text = text.trim();
    let inner = text
        .strip_prefix("builtin.module(")
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("expected 'builtin.module(...)', found '{text}'"))?;
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
    let mut result = Pipeline::default();
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
        result.extend(pipeline(name, &options)?);
    }
    Ok(result)
}
