//! Host cost of dispatching work through the binding (not a timed test).
//!
//! Measures, on the plugin `Plugin::discover` finds (`PW_PJRT_PLUGIN` or the
//! venv's CPU plugin), the median wall time of:
//!
//! * `execute`: one `LoadedExecutable::execute` of `x * 2 + 1` on `f32[4]`,
//!   returning the output buffer without waiting (`dispatch`), and the same
//!   followed by waiting for the result (`round trip`);
//! * `copy`: one `Buffer::copy_to_device` of `f32[4]` to another device,
//!   without and with waiting for the copy (null where the plugin has one
//!   device, as a one-GPU machine's has).
//!
//! * the pieces of a hop between hosts: a ready `f32[4]` read to the host
//!   (`Buffer::to_host`), put on the device (`Client::buffer_from_host` +
//!   wait), and written into a buffer made for an async transfer.
//!
//! `$PW_PJRT_CLIENT_OPTIONS` is passed to the plugin (a GPU plugin:
//! `preallocate=false`).
//!
//! Prints one JSON object; `benches/runtime_core.sh` puts it next to JAX's
//! numbers. Arguments: `--iters N` (default 2000), `--warmup N` (default 200).

// A benchmark prints its table, and fails loudly.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::time::Instant;

use pw_core::DType;
use pw_pjrt::{Client, ClientOptions, CompileOptions, Plugin, Program};

const AFFINE: &str = r#"
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.multiply %x, %two : tensor<4xf32>
  %1 = stablehlo.add %0, %one : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"#;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Median and 90th percentile, in microseconds, of `iters` timed calls of
/// `f` after `warmup` untimed ones. `f` returns what it made, dropped
/// outside the timed region (as a Python result is, on the next iteration).
fn measure<T>(warmup: usize, iters: usize, mut f: impl FnMut() -> Res<T>) -> Res<(f64, f64)> {
    for _ in 0..warmup {
        drop(f()?);
    }
    let mut samples = Vec::with_capacity(iters);
    for _ in 0..iters {
        let start = Instant::now();
        let made = f()?;
        samples.push(start.elapsed().as_secs_f64() * 1e6);
        drop(made);
    }
    samples.sort_by(f64::total_cmp);
    Ok((samples[iters / 2], samples[iters * 9 / 10]))
}

/// As [`measure`], timing only `f`, on what an untimed `setup` made.
fn measure_after<S, T>(
    warmup: usize,
    iters: usize,
    mut setup: impl FnMut() -> Res<S>,
    mut f: impl FnMut(S) -> Res<T>,
) -> Res<(f64, f64)> {
    let mut samples = Vec::with_capacity(iters);
    for i in 0..warmup + iters {
        let input = setup()?;
        let start = Instant::now();
        let made = f(input)?;
        let took = start.elapsed().as_secs_f64() * 1e6;
        drop(made);
        if i >= warmup {
            samples.push(took);
        }
    }
    samples.sort_by(f64::total_cmp);
    Ok((samples[iters / 2], samples[iters * 9 / 10]))
}

fn arg(name: &str, default: usize) -> Res<usize> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == name) {
        Some(i) => Ok(args
            .get(i + 1)
            .ok_or(format!("{name} needs a value"))?
            .parse()?),
        None => Ok(default),
    }
}

fn main() -> Res<()> {
    let iters = arg("--iters", 2000)?.max(10);
    let warmup = arg("--warmup", 200)?;
    let plugin = Plugin::discover()?;
    let options = ClientOptions::from_env()?;
    // Two devices for the copy: a CPU plugin makes them; a GPU plugin
    // copies only where it has two.
    let client = Client::open(&plugin, &options, None)?;
    let client = if client.platform_name() == "cpu" {
        Client::open(&plugin, &options, Some(2))?
    } else {
        client
    };
    let devices = client.devices();
    let exe = client.compile(
        &Program::mlir_text(AFFINE),
        &CompileOptions::single_device(&devices[0])?,
    )?;
    let bytes: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let x = client.buffer_from_host(&bytes, DType::F32, &[4], &devices[0])?;
    x.wait_ready()?;

    let execute_dispatch = measure(warmup, iters, || Ok(exe.execute(&[vec![&x]])?))?;
    let execute_round_trip = measure(warmup, iters, || {
        let run = exe.execute(&[vec![&x]])?;
        run.wait()?;
        Ok(run)
    })?;
    let (copy_dispatch, copy_round_trip) = match devices.get(1) {
        Some(other) => (
            Some(measure(warmup, iters, || Ok(x.copy_to_device(other)?))?),
            Some(measure(warmup, iters, || {
                let copy = x.copy_to_device(other)?;
                copy.wait_ready()?;
                Ok(copy)
            })?),
        ),
        None => (None, None),
    };

    // The pieces of a hop between hosts: the result read to the host, and
    // bytes put on a device (whole, and through an async transfer).
    let to_host = measure_after(
        warmup,
        iters,
        || {
            let run = exe.execute(&[vec![&x]])?;
            run.wait()?;
            Ok(run)
        },
        |run| Ok(run.outputs[0][0].to_host()?),
    )?;
    let from_host = measure(warmup, iters, || {
        let b = client.buffer_from_host(&bytes, DType::F32, &[4], &devices[0])?;
        b.wait_ready()?;
        Ok(b)
    })?;
    let async_write = measure_after(
        warmup,
        iters,
        || Ok(client.buffer_for_async_transfer(&devices[0], DType::F32, &[4])?),
        |(mut transfer, buffer)| {
            transfer.write(bytes.clone(), true)?;
            buffer.wait_ready()?;
            Ok(buffer)
        },
    )?;

    let row = |name: &str, measured: Option<(f64, f64)>| match measured {
        Some((median, p90)) => format!("\"{name}\": [{median:.3}, {p90:.3}]"),
        None => format!("\"{name}\": null"),
    };
    println!(
        "{{\"plugin\": \"{}\", \"api\": \"{}\", \"platform\": \"{}\", \"kind\": \"{}\", \"iters\": {iters}, {}, {}, {}, {}, {}, {}, {}}}",
        plugin.path().display(),
        plugin.version(),
        client.platform_name(),
        devices[0].kind(),
        row("execute_dispatch", Some(execute_dispatch)),
        row("execute_round_trip", Some(execute_round_trip)),
        row("copy_dispatch", copy_dispatch),
        row("copy_round_trip", copy_round_trip),
        row("to_host", Some(to_host)),
        row("from_host", Some(from_host)),
        row("async_write", Some(async_write)),
    );
    Ok(())
}
