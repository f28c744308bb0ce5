//! Colocated Python programs (`jax.experimental.colocated_python`).
//!
//! jaxlib's proxy client compiles one as an `xla::ifrt::CustomCallProgram`
//! of type [`PROGRAM_TYPE`]: the program text is JAX's cloudpickle of the
//! function with its input and output specs (`ShapeDtypeStruct`s with
//! shardings) and devices, and the program lists the devices and the
//! `ArraySpec` of each input and output. pw keeps it as a computation of
//! one call step whose module is the function ([`Module::Python`]): the
//! session's sidecar on the worker that holds the devices runs it
//! (`pw_exec::sidecar`). Its inputs must be laid out as the program's
//! input specs say (JAX makes them so); its outputs are laid out as its
//! output specs say, with the client's shardings echoed back.
//!
//! String arrays: a colocated function called without output specs first
//! runs a variant of itself that returns its output specs, pickled, as a
//! scalar string array (NumPy's `StringDType`), which JAX then reads back
//! (`DisassembleIntoSingleDeviceArrays`, `CopyToHostBuffer`). pw keeps such
//! an array (one element) as a `uint8[STRING_BYTES]` value on the same
//! devices: the string's length (`u64`, little-endian) and its bytes. The
//! sidecar writes and reads that form; a copy to the host answers with
//! what jaxlib expects of a string array (`StringArrayContents`).

use super::{invalid, unimplemented, Array, Future, Placed, Session};
use crate::{
    convert,
    error::Result,
    protocol::{self, xla::ifrt},
};
use pw_core::{
    plan::Module,
    plans,
    python::{Convention, Function},
};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// The IFRT program type of a serialized custom call program.
pub(super) const CUSTOM_CALL_PROGRAM: &str = "xla::ifrt::CustomCallProgram";
/// The custom call program type JAX gives colocated Python functions.
pub(super) const PROGRAM_TYPE: &str = "jax_colocated_python_v0.0.1";

/// The bytes pw holds a string array in: a length and at most
/// `STRING_BYTES - 8` bytes of the string.
pub(super) const STRING_BYTES: i64 = 1 << 20;

/// A string array's contents as jaxlib's proxy client reads them
/// (`xla.ifrt.proxy.StringArrayContents`).
#[derive(Clone, PartialEq, prost::Message)]
struct StringArrayContents {
    #[prost(bytes = "vec", repeated, tag = "1")]
    strings: Vec<Vec<u8>>,
}

/// One compiled colocated Python program.
pub(super) struct Colocated {
    name: String,
    module: Module,
    /// The pw devices of its IFRT devices, in order.
    on: Vec<i64>,
    inputs: Vec<Placed>,
    /// Where each output lies, and its spec as the client gave it.
    outputs: Vec<(Placed, ifrt::ArraySpecProto)>,
    /// The pw executable, once built.
    built: Mutex<Option<u64>>,
}

impl Colocated {
    /// The pw executable, if it was built.
    pub(super) fn built(&self) -> Option<u64> {
        *self.built.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the client may ask of it: no layouts (a Python function
    /// chooses none), no shardings beyond its specs, nothing donated.
    pub(super) fn metadata(&self) -> protocol::LoadedExecutableMetadataResponse {
        use protocol::loaded_executable_metadata_response::{
            DonatedInputIndices, DonatedInputIndicesOneof, MemoryKindList, OutputLayouts,
            OutputMemoryKind, ParameterLayouts,
        };
        let none = || protocol::tensorflow::StatusProto {
            code: 12, // UNIMPLEMENTED
            message: format!(
                "{} is a colocated Python function: it has no layouts",
                self.name
            ),
            ..Default::default()
        };
        protocol::LoadedExecutableMetadataResponse {
            parameter_layouts: Some(ParameterLayouts::ParameterLayoutsError(none())),
            output_layouts: Some(OutputLayouts::OutputLayoutsError(none())),
            output_memory_kinds: Some(OutputMemoryKind {
                status: None,
                memory_kind_lists: vec![MemoryKindList {
                    memory_kinds: vec![convert::DEVICE_MEMORY.to_owned(); self.outputs.len()],
                }],
            }),
            donated_input_indices_oneof: Some(DonatedInputIndicesOneof::DonatedInputIndices(
                DonatedInputIndices::default(),
            )),
            ..Default::default()
        }
    }
}

impl Session {
    /// Compiles a serialized `CustomCallProgram` (see the module doc).
    pub(super) fn compile_colocated(&self, data: &[u8]) -> Result<protocol::CompileResponse> {
        let program: ifrt::CustomCallProgramProto = prost::Message::decode(data)
            .map_err(|e| invalid(format!("the custom call program cannot be read: {e}")))?;
        if program.r#type != PROGRAM_TYPE {
            return Err(unimplemented(format!(
                "pw runs custom call programs of type {PROGRAM_TYPE} (colocated Python), not {:?}",
                program.r#type
            )));
        }
        let devices = program.devices.map(|d| d.device_ids).unwrap_or_default();
        if devices.is_empty() {
            return Err(invalid(format!(
                "colocated Python program {} names no devices",
                program.name
            )));
        }
        let on = devices
            .iter()
            .map(|&d| self.device(d))
            .collect::<Result<Vec<_>>>()?;
        let spec = |s: &ifrt::ArraySpecProto| {
            let placed = if is_string(s.dtype.as_ref()) {
                let shape = s
                    .shape
                    .as_ref()
                    .map(|s| s.dims.as_slice())
                    .unwrap_or_default();
                if !shape.is_empty() {
                    return Err(unimplemented(format!(
                        "a string array of shape {shape:?}: pw holds string arrays of one \
                         element (a colocated function's output specs)"
                    )));
                }
                let bytes = ifrt::ShapeProto {
                    dims: vec![STRING_BYTES],
                    ..Default::default()
                };
                let u8 = convert::dtype_proto(pw_core::DType::U8);
                self.layout(Some(&u8), Some(&bytes), s.sharding.as_ref())?
            } else {
                self.layout(s.dtype.as_ref(), s.shape.as_ref(), s.sharding.as_ref())?
            };
            Self::reduced(placed, "a colocated Python program's array")
        };
        let inputs = program
            .input_specs
            .iter()
            .map(spec)
            .collect::<Result<Vec<_>>>()?;
        let outputs = program
            .output_specs
            .iter()
            .map(|s| Ok((spec(s)?, s.clone())))
            .collect::<Result<Vec<_>>>()?;
        for placed in inputs.iter().chain(outputs.iter().map(|(p, _)| p)) {
            if let Some(d) = placed.devices.iter().find(|d| !devices.contains(d)) {
                return Err(invalid(format!(
                    "colocated Python program {}: an array spec names device {d}, which is not \
                     one of the program's devices {devices:?}",
                    program.name
                )));
            }
        }
        let module = Module::Python(
            Function {
                name: program.name.clone(),
                convention: Convention::Colocated,
                devices: devices.clone(),
                pickle: program.serialized_program_text,
            }
            .encode(),
        );
        let handle = self.mint();
        self.state().colocated.insert(
            handle,
            Arc::new(Colocated {
                name: program.name.clone(),
                module,
                on,
                inputs,
                outputs,
                built: Mutex::new(None),
            }),
        );
        let ready = self.mint();
        self.state().futures.insert(ready, Future::Done);
        Ok(protocol::CompileResponse {
            loaded_executable_handle: handle,
            name: program.name,
            num_devices: devices.len() as i32,
            device_ids: devices.clone(),
            addressable_device_ids: devices,
            ready_future_handle: Some(ready),
            ..Default::default()
        })
    }

    pub(super) fn colocated(&self, handle: u64) -> Option<Arc<Colocated>> {
        self.state().colocated.get(&handle).cloned()
    }

    /// Runs a colocated Python program on the arrays `r` names.
    pub(super) async fn execute_colocated(
        &self,
        c: &Colocated,
        r: protocol::LoadedExecutableExecuteRequest,
    ) -> Result<protocol::LoadedExecutableExecuteResponse> {
        let args = r
            .args_handles
            .iter()
            .map(|&h| self.array(h))
            .collect::<Result<Vec<_>>>()?;
        if args.len() != c.inputs.len() {
            return Err(invalid(format!(
                "{} takes {} arguments, {} given",
                c.name,
                c.inputs.len(),
                args.len()
            )));
        }
        for (i, (a, want)) in args.iter().zip(&c.inputs).enumerate() {
            let same = a.info.dtype == want.info.dtype
                && a.info.shape == want.info.shape
                && a.info.devices == want.info.devices
                && a.info.layout == want.info.layout
                && !a.unreduced;
            if !same {
                return Err(invalid(format!(
                    "{}: argument {i} is {} {}, the program takes {} {}",
                    c.name,
                    a.info.describe(),
                    a.info.sharding,
                    want.info.describe(),
                    want.info.sharding
                )));
            }
        }
        let exe = match c.built() {
            Some(e) => e,
            None => {
                let plan = plans::call(
                    &c.name,
                    c.module.clone(),
                    c.on.clone(),
                    c.inputs.iter().map(|p| p.info.clone()).collect(),
                    c.outputs.iter().map(|(p, _)| p.info.clone()).collect(),
                );
                let e = self
                    .controller
                    .sessions()
                    .compile_plan(self.id, c.name.clone(), plan, BTreeSet::new())
                    .await?;
                *c.built.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                e
            }
        };
        let arguments = args.iter().map(|a| self.argument(a.pw)).collect();
        let made =
            self.run(exe, arguments, Vec::new())
                .await
                .map_err(|e| crate::error::Error::In {
                    name: c.name.clone(),
                    source: Box::new(e),
                })?;
        if r.result_status_handle != 0 {
            self.state()
                .futures
                .insert(r.result_status_handle, Future::Arrays(made.clone()));
        }
        let mut answered = Vec::with_capacity(made.len());
        for (k, (&pw, (placed, spec))) in made.iter().zip(&c.outputs).enumerate() {
            let handle = r
                .result_array_handle
                .get(k)
                .copied()
                .unwrap_or_else(|| self.mint());
            let sharding = spec.sharding.clone().unwrap_or_default();
            answered.push(protocol::loaded_executable_execute_response::Output {
                dtype: spec.dtype,
                shape: spec.shape.clone(),
                sharding: Some(sharding.clone()),
                array_handle: handle,
            });
            self.keep(
                handle,
                Array {
                    pw,
                    info: placed.info.clone(),
                    devices: placed.devices.clone(),
                    sharding,
                    unreduced: false,
                    layout: None,
                    string: is_string(spec.dtype.as_ref()),
                },
            );
        }
        Ok(protocol::LoadedExecutableExecuteResponse {
            status_handle: 0,
            outputs: answered,
        })
    }

    /// Copies string array `a` (IFRT array `array`) to host buffer
    /// `host_buffer`, as jaxlib reads a string array.
    pub(super) async fn copy_string_to_host(
        &self,
        a: &Array,
        array: u64,
        host_buffer: u64,
    ) -> Result<()> {
        let r = pw_wire::proto::ArrayRef {
            session: self.id,
            array: a.pw,
        };
        let held = self.fetch_bytes(&r, array).await?;
        let contents = StringArrayContents {
            strings: vec![string_of(&held).map_err(invalid)?.to_vec()],
        };
        self.buffers
            .put(
                self.ifrt_id,
                host_buffer,
                bytes::Bytes::from(prost::Message::encode_to_vec(&contents)),
            )
            .map_err(|status| invalid(status.message()))
    }
}

/// Whether an IFRT dtype is the string kind.
fn is_string(dtype: Option<&ifrt::DTypeProto>) -> bool {
    dtype.is_some_and(|d| d.kind == ifrt::d_type_proto::Kind::String as i32)
}

/// The string a `uint8[STRING_BYTES]` value holds (see the module doc).
fn string_of(held: &[u8]) -> std::result::Result<&[u8], String> {
    let (len, rest) = held
        .split_first_chunk::<8>()
        .ok_or_else(|| format!("a string array's value has {} bytes", held.len()))?;
    let len = u64::from_le_bytes(*len);
    usize::try_from(len)
        .ok()
        .and_then(|n| rest.get(..n))
        .ok_or_else(|| {
            format!(
                "a string array says it holds {len} bytes, it has {}",
                rest.len()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_values_are_read_within_their_bytes() {
        let mut held = 3u64.to_le_bytes().to_vec();
        held.extend_from_slice(b"abcXX");
        assert_eq!(string_of(&held).unwrap(), b"abc");
        held[..8].copy_from_slice(&6u64.to_le_bytes());
        assert!(string_of(&held).unwrap_err().contains("holds 6 bytes"));
        assert!(string_of(b"abc").is_err());
    }
}
