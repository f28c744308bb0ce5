//! The fuzz targets of pw, as functions the target binaries call (see
//! `scripts/fuzz.sh`). Each takes any bytes and must neither crash, hang
//! nor panic; where pw makes a promise about valid input, the target
//! checks it and panics (a finding) when it is broken:
//! - [`ir`]: text through the parser, the verifier, the printer and the
//!   full `pw-lower` pipeline; no pass may produce an invalid program (an
//!   "internal error"), and the lowered program must print, parse and
//!   verify again and read into a plan;
//! - [`plan`]: a physical program read into a plan, which must pass its own
//!   check, survive a JSON round trip (plans cross the network) and split
//!   into a valid local part;
//! - [`npy`]: `.npy` bytes, from a stream and from a file, which, when
//!   read, must write back to what reads the same;
//! - [`topology`]: a TOML or JSON topology that, when valid, allocates a
//!   few meshes without breaking its own rules.

#![allow(clippy::panic)]

use pw_compiler::{LowerOptions, Pipeline, RunOptions, Timings};
use pw_core::{plan::Plan, Topology};
use pw_dialect::{
    legality::{self, Stage},
    print::{self, PrintOptions},
};
use std::{cell::RefCell, ffi::CString, os::raw::c_char, os::unix::ffi::OsStrExt, rc::Rc};

extern "C" {
    /// libFuzzer's driver (FuzzerDriver.cpp), given the test function.
    fn LLVMFuzzerRunDriver(
        argc: *mut i32,
        argv: *mut *mut *mut c_char,
        test: extern "C" fn(*const u8, usize) -> i32,
    ) -> i32;
    /// Defined by `libfuzzer_sys::fuzz_target!`, which calls the target.
    fn LLVMFuzzerTestOneInput(data: *const u8, size: usize) -> i32;
}

extern "C" fn test_one(data: *const u8, size: usize) -> i32 {
    // SAFETY: libFuzzer passes `size` readable bytes at `data`.
    unsafe { LLVMFuzzerTestOneInput(data, size) }
}

/// The targets' `main`: runs libFuzzer on the command line.
///
/// The targets have their own `main` (not libFuzzer's) because the static
/// MLIR libraries they link also define one, which the linker could pick.
pub fn driver() -> ! {
    let args: Vec<CString> = std::env::args_os()
        .filter_map(|a| CString::new(a.as_bytes()).ok())
        .collect();
    let mut pointers: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr() as *mut c_char).collect();
    pointers.push(std::ptr::null_mut());
    let mut argc = args.len() as i32;
    let mut argv = pointers.as_mut_ptr();
    // SAFETY: argv holds argc NUL-terminated strings and a final null, all
    // alive until the driver returns; libFuzzer reads them (and may only
    // permute the array).
    let code = unsafe { LLVMFuzzerRunDriver(&mut argc, &mut argv, test_one) };
    std::process::exit(code)
}

/// A context whose diagnostics are kept (not printed), for the oracle.
struct Quiet {
    context: melior::Context,
    messages: Rc<RefCell<Vec<String>>>,
}

impl Quiet {
    fn new() -> Self {
        let context = pw_dialect::new_context();
        let messages = Rc::new(RefCell::new(Vec::new()));
        let sink = messages.clone();
        context.attach_diagnostic_handler(move |d| {
            sink.borrow_mut().push(d.to_string());
            true
        });
        Self { context, messages }
    }

    /// Panics if pw reported a bug of its own.
    fn no_internal_error(&self, input: &str) {
        if let Some(m) = self
            .messages
            .borrow()
            .iter()
            .find(|m| m.contains("internal error"))
        {
            panic!("{m}\n--- input ---\n{input}");
        }
    }
}

/// The local island the targets lower onto.
fn topology() -> Topology {
    Topology::local(8, "cpu").unwrap_or_else(|e| panic!("{e}"))
}

/// Parses, verifies and prints `text`, lowers it, and checks the lowered
/// program (see the crate doc).
pub fn ir(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let quiet = Quiet::new();
    let context = &quiet.context;
    let Some(module) = pw_dialect::parse_source(context, text, "fuzz") else {
        return;
    };
    let Ok(analysis) = pw_dialect::verify::verify(&module) else {
        return;
    };
    drop(analysis);
    let _ = print::print(
        &module.as_operation(),
        PrintOptions {
            generic: false,
            verified: true,
        },
    );
    let pipeline = Pipeline::lower(&LowerOptions {
        topology: topology(),
        ..Default::default()
    });
    let lowered = pw_compiler::run(
        context,
        &module,
        &pipeline,
        &mut RunOptions::default(),
        &mut Timings::default(),
    );
    quiet.no_internal_error(text);
    let Ok(analysis) = lowered else {
        return;
    };
    if let Err(e) = pw_compiler::export::to_plan(&analysis) {
        let message = format!("{e:?}");
        if !message.contains("PlanTooLarge") {
            panic!("a lowered program does not read into a plan: {message}\n--- input ---\n{text}");
        }
    }
    drop(analysis);
    let printed = print::print(
        &module.as_operation(),
        PrintOptions {
            generic: false,
            verified: true,
        },
    );
    let again = Quiet::new();
    let reparsed = pw_dialect::parse_source(&again.context, &printed, "lowered")
        .unwrap_or_else(|| panic!("the lowered program does not parse:\n{printed}"));
    if let Err(e) = pw_dialect::verify::verify(&reparsed) {
        panic!("the lowered program does not verify: {e:?}\n{printed}");
    }
}

/// Reads a physical program into a plan and checks it (see the crate doc).
pub fn plan(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let quiet = Quiet::new();
    let Some(module) = pw_dialect::parse_source(&quiet.context, text, "fuzz") else {
        return;
    };
    let Ok(analysis) = pw_dialect::verify::verify(&module) else {
        return;
    };
    let physical = legality::check(&analysis, Stage::Physical).is_empty();
    let plan = match pw_compiler::export::to_plan(&analysis) {
        Ok(plan) => plan,
        Err(errors) if physical => {
            // Only a plan too large may refuse a physical program.
            let message = format!("{errors:?}");
            if !message.contains("PlanTooLarge") {
                panic!("a physical program does not read into a plan: {message}\n{text}");
            }
            return;
        }
        Err(_) => return,
    };
    assert!(
        physical,
        "a plan was read from a program that is not physical:\n{text}"
    );
    let json = serde_json::to_string(&plan).unwrap_or_else(|e| panic!("{e}"));
    let back: Plan = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, plan, "the plan changed through JSON");
    back.check()
        .unwrap_or_else(|e| panic!("a read plan fails its check: {e}"));
    if let Ok(part) = back.local_part() {
        part.check()
            .unwrap_or_else(|e| panic!("the local part of a valid plan fails its check: {e}"));
    }
}

/// Reads `.npy` bytes both ways, and round-trips what reads.
pub fn npy(data: &[u8]) {
    let streamed = pw_exec::npy::read_from(data, "fuzz");
    let path = std::env::temp_dir().join(format!("pw-fuzz-{}.npy", std::process::id()));
    if std::fs::write(&path, data).is_ok() {
        let from_file = pw_exec::npy::read(&path);
        assert_eq!(
            from_file.as_ref().ok(),
            streamed.as_ref().ok(),
            "a file and a stream of the same bytes read differently"
        );
    }
    let Ok(host) = streamed else {
        return;
    };
    let mut written = Vec::new();
    pw_exec::npy::write_to(&mut written, &host, "fuzz")
        .unwrap_or_else(|e| panic!("a read array does not write: {e}"));
    let back = pw_exec::npy::read_from(&written[..], "fuzz")
        .unwrap_or_else(|e| panic!("a written array does not read back: {e}"));
    assert_eq!(back, host, "the array changed through a write and a read");
}

/// Parses a topology (JSON when the input starts with `{`, else TOML) and
/// allocates a few meshes on it when it is valid.
pub fn topology_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let json = text.trim_start().starts_with('{');
    let Ok(topology) = Topology::parse(text, json, "fuzz") else {
        return;
    };
    let links = topology.links();
    let devices: Vec<i64> = topology
        .islands
        .iter()
        .flat_map(|i| i.devices.clone())
        .collect();
    for pair in devices.windows(2).take(64) {
        let _ = links.link(pair[0], pair[1]);
    }
    let request = |name: &str, size: i64, kind: Option<&str>, with: Option<&str>| {
        pw_compiler::lower::allocate::Request {
            name: name.into(),
            size,
            kind: kind.map(Into::into),
            same_island_as: with.map(Into::into),
            fixed: None,
        }
    };
    let requests = [
        request("a", 1, None, None),
        request("b", 2, Some("cpu"), Some("a")),
        request("c", 4, None, None),
        request("d", 3, Some("gpu"), Some("c")),
    ];
    if let Ok(bound) = pw_compiler::lower::allocate::allocate(&requests, &topology) {
        for r in &requests {
            let got = &bound[&r.name];
            assert_eq!(got.len() as i64, r.size, "@{} got {got:?}", r.name);
            assert!(
                got.iter().all(|d| devices.contains(d)),
                "@{} got devices the topology lacks: {got:?}",
                r.name
            );
        }
    }
}
