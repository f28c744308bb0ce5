//! Conversions between the IFRT proxy protocol's messages ([`crate::protocol`])
//! and pw's types: element types, where the shards of an array lie, the
//! layout text the client asks for, and the payloads of
//! `xla.ifrt.Serialized`. Pure functions: no I/O, no state.
//!
//! # Serialized payloads
//!
//! IFRT sends shardings, layouts, programs and compile options as
//! `xla.ifrt.Serialized {type_name, data}`, where `data` is the message
//! `type_name` names (`proto/ifrt/README.md` has the table):
//! `"xla::ifrt::HloSharding"` is an [`HloShardingProto`],
//! `"xla::ifrt::SingleDeviceSharding"` a [`SingleDeviceShardingProto`],
//! `"xla::ifrt::XlaCompileOptions"` an [`XlaCompileOptionsProto`];
//! `"xla::ifrt::XlaProgram"` is no message but the program's StableHLO
//! portable artifact.
//!
//! # Shardings
//!
//! jaxlib 0.10.2's client writes every array's sharding as an
//! `"xla::ifrt::HloSharding"`, a single device's too: a device list (IFRT
//! device ids), the memory kind (`"device"`), and an `xla.OpSharding` whose
//! tile assignment holds *indices into that device list*, most often in
//! iota form (`{devices=[2,1]<=[2]}`: `iota_reshape_dims` and
//! `iota_transpose_perm`). [`placement`] turns one into the device and the
//! box of every shard position; [`hlo_sharding`] and [`single_device`]
//! make the protos the responses carry (the client takes either, with or
//! without a memory kind, in an execute's outputs: jax's own sharding of
//! an output comes from the compiled program, not from these).
//!
//! Position order: the sharding's device list (IFRT's shard order), so
//! that position `i` is the array's shard `i` (what `Disassemble`,
//! `Assemble`, `RemapArrays` and the shards of `MakeArraysFromHostBuffer
//! Shards` number).

use crate::protocol::xla::ifrt::{
    d_type_proto::Kind, ConcreteEvenShardingProto, DTypeProto, DeviceListProto, HloShardingProto,
    Serialized, ShardingProto, SingleDeviceShardingProto, XlaCompileOptionsProto,
};
use crate::protocol::xla::{op_sharding, CompileOptionsProto, OpSharding};
use prost::Message;
use pw_core::geometry::{Layout, LayoutError, MeshShape, Sharding, MAX_MESH_DEVICES};
use pw_core::DType;

/// The `type_name` of a `Serialized` [`HloShardingProto`].
pub const HLO_SHARDING: &str = "xla::ifrt::HloSharding";
/// The `type_name` of a `Serialized` [`SingleDeviceShardingProto`].
pub const SINGLE_DEVICE_SHARDING: &str = "xla::ifrt::SingleDeviceSharding";
/// The `type_name` of a `Serialized` [`ConcreteEvenShardingProto`].
pub const CONCRETE_EVEN_SHARDING: &str = "xla::ifrt::ConcreteEvenSharding";
/// The `type_name` of a `Serialized` [`XlaCompileOptionsProto`].
pub const XLA_COMPILE_OPTIONS: &str = "xla::ifrt::XlaCompileOptions";
/// The `type_name` of a `Serialized` program: its data is the StableHLO
/// portable artifact (MLIR bytecode), not a message.
pub const XLA_PROGRAM: &str = "xla::ifrt::XlaProgram";

/// The most dimensions an array may have here (XLA has no limit; this
/// bounds what [`placement`] materializes: a rank times at most
/// [`MAX_MESH_DEVICES`] positions).
pub const MAX_RANK: usize = 64;

/// The pw dtype of an IFRT dtype; an error names the kinds pw lacks.
pub fn dtype_of(proto: &DTypeProto) -> Result<DType, String> {
    let kind = Kind::try_from(proto.kind)
        .map_err(|_| format!("unknown IFRT dtype kind {}", proto.kind))?;
    Ok(match kind {
        Kind::Pred => DType::Bool,
        Kind::S8 => DType::I8,
        Kind::S16 => DType::I16,
        Kind::S32 => DType::I32,
        Kind::S64 => DType::I64,
        Kind::U8 => DType::U8,
        Kind::U16 => DType::U16,
        Kind::U32 => DType::U32,
        Kind::U64 => DType::U64,
        Kind::F16 => DType::F16,
        Kind::Bf16 => DType::BF16,
        Kind::F32 => DType::F32,
        Kind::F64 => DType::F64,
        Kind::C64 => DType::C64,
        Kind::C128 => DType::C128,
        Kind::F8e5m2 => DType::F8E5M2,
        Kind::F8e4m3fn => DType::F8E4M3FN,
        Kind::F8e4m3b11fnuz => DType::F8E4M3B11FNUZ,
        Kind::F8e5m2fnuz => DType::F8E5M2FNUZ,
        Kind::F8e4m3fnuz => DType::F8E4M3FNUZ,
        Kind::F8e4m3 => DType::F8E4M3,
        Kind::F8e3m4 => DType::F8E3M4,
        Kind::F8e8m0fnu => DType::F8E8M0FNU,
        Kind::S2 => DType::I2,
        Kind::S4 => DType::I4,
        Kind::U2 => DType::U2,
        Kind::U4 => DType::U4,
        Kind::F4e2m1fn => DType::F4E2M1FN,
        other => {
            return Err(format!(
                "dtype {} is not supported by pw (nor are the 1-bit types, tokens, opaque \
                 and string arrays)",
                other.as_str_name(),
            ))
        }
    })
}

/// The IFRT dtype of a pw dtype.
pub fn dtype_proto(d: DType) -> DTypeProto {
    let kind = match d {
        DType::Bool => Kind::Pred,
        DType::I8 => Kind::S8,
        DType::I16 => Kind::S16,
        DType::I32 => Kind::S32,
        DType::I64 => Kind::S64,
        DType::U8 => Kind::U8,
        DType::U16 => Kind::U16,
        DType::U32 => Kind::U32,
        DType::U64 => Kind::U64,
        DType::F16 => Kind::F16,
        DType::BF16 => Kind::Bf16,
        DType::F32 => Kind::F32,
        DType::F64 => Kind::F64,
        DType::C64 => Kind::C64,
        DType::C128 => Kind::C128,
        DType::F8E5M2 => Kind::F8e5m2,
        DType::F8E4M3FN => Kind::F8e4m3fn,
        DType::F8E4M3B11FNUZ => Kind::F8e4m3b11fnuz,
        DType::F8E5M2FNUZ => Kind::F8e5m2fnuz,
        DType::F8E4M3FNUZ => Kind::F8e4m3fnuz,
        DType::F8E4M3 => Kind::F8e4m3,
        DType::F8E3M4 => Kind::F8e3m4,
        DType::F8E8M0FNU => Kind::F8e8m0fnu,
        DType::I2 => Kind::S2,
        DType::I4 => Kind::S4,
        DType::U2 => Kind::U2,
        DType::U4 => Kind::U4,
        DType::F4E2M1FN => Kind::F4e2m1fn,
    };
    DTypeProto {
        version_number: 0,
        kind: kind as i32,
    }
}

/// The compiler options the client set (JAX's `compiler_options`), for the
/// controller's compile, which checks them as JAX's own would.
pub fn option_overrides(
    proto: &CompileOptionsProto,
) -> Vec<(String, pw_controller::compile::OptionOverride)> {
    use crate::protocol::xla::option_override_proto::Value;
    use pw_controller::compile::OptionOverride as O;
    let mut out: Vec<_> = proto
        .env_option_overrides
        .iter()
        .filter_map(|(name, v)| {
            let v = match v.value.as_ref()? {
                Value::StringField(s) => O::String(s.clone()),
                Value::BoolField(b) => O::Bool(*b),
                Value::IntField(n) => O::Int(*n),
                Value::DoubleField(x) => O::Double(*x),
            };
            Some((name.clone(), v))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// An executable's cost estimates as IFRT's attribute map.
pub fn cost_attributes(
    cost: &[(String, pw_controller::compile::NamedValue)],
) -> crate::protocol::xla::ifrt::AttributeMapProto {
    use crate::protocol::xla::ifrt::attribute_map_proto::{value, Value};
    use pw_controller::compile::NamedValue as N;
    let attributes = cost
        .iter()
        .map(|(name, v)| {
            let v = match v {
                N::String(s) => value::Value::StringValue(s.clone().into_bytes()),
                N::Int64(n) => value::Value::Int64Value(*n),
                N::Int64List(l) => value::Value::Int64ListValue(value::Int64List {
                    elements: l.clone(),
                }),
                N::Float(x) => value::Value::FloatValue(*x),
                N::Bool(b) => value::Value::BoolValue(*b),
            };
            (name.clone(), Value { value: Some(v) })
        })
        .collect();
    crate::protocol::xla::ifrt::AttributeMapProto {
        version_number: 0,
        attributes,
    }
}

/// An executable's planned memory as XLA's `CompiledMemoryStatsProto`.
pub fn memory_stats_proto(
    m: &pw_controller::compile::MemoryStats,
) -> crate::protocol::xla::CompiledMemoryStatsProto {
    crate::protocol::xla::CompiledMemoryStatsProto {
        generated_code_size_in_bytes: m.generated_code,
        argument_size_in_bytes: m.arguments,
        output_size_in_bytes: m.outputs,
        alias_size_in_bytes: m.aliased,
        temp_size_in_bytes: m.temporaries,
        host_generated_code_size_in_bytes: m.host_generated_code,
        host_argument_size_in_bytes: m.host_arguments,
        host_output_size_in_bytes: m.host_outputs,
        host_alias_size_in_bytes: m.host_aliased,
        host_temp_size_in_bytes: m.host_temporaries,
        peak_memory_in_bytes: m.peak,
        ..Default::default()
    }
}

/// Where the shards of an array lie: for each shard position, the IFRT
/// device that holds it and its box.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The IFRT device id holding each shard position.
    pub devices: Vec<i32>,
    /// The shard shape, and each position's offset in the array (replicas
    /// have equal offsets).
    pub layout: Layout,
    /// The sharding, human-readable, for messages.
    pub sharding: String,
    /// The memory kind the sharding names (`"device"`, `"pinned_host"`...),
    /// if it names one.
    pub memory_kind: Option<String>,
    /// Whether positions with equal offsets hold partial values whose sum
    /// is the array (an unreduced sharding) rather than equal copies.
    pub unreduced: bool,
}

/// Where the shards of an array of `shape` lie under `sharding` (an
/// `xla::ifrt::HloSharding`, `SingleDeviceSharding`, or a fully replicated
/// or single-device `ConcreteEvenSharding`). pw needs even shards: a
/// dimension that does not divide by its tile count is an error, as are
/// manual, tuple and unreduced shardings.
pub fn placement(sharding: &ShardingProto, shape: &[i64]) -> Result<Placement, String> {
    check_shape(shape)?;
    let serialized = sharding
        .serialized_sharding
        .as_ref()
        .ok_or("the sharding is empty (no serialized_sharding)")?;
    match serialized.type_name.as_str() {
        HLO_SHARDING => {
            let proto: HloShardingProto = decode(serialized)?;
            check_version(proto.version_number, HLO_SHARDING)?;
            let devices = device_ids(proto.devices.as_ref())?;
            let op = proto.xla_op_sharding.unwrap_or_default();
            let mut placed = hlo_placement(&devices, &op, shape)?;
            placed.memory_kind = proto.memory_kind;
            Ok(placed)
        }
        SINGLE_DEVICE_SHARDING => {
            let proto: SingleDeviceShardingProto = decode(serialized)?;
            check_version(proto.version_number, SINGLE_DEVICE_SHARDING)?;
            Ok(Placement {
                devices: vec![proto.device_id],
                layout: whole(shape, 1),
                sharding: format!("single device {}", proto.device_id),
                memory_kind: proto.memory_kind,
                unreduced: false,
            })
        }
        CONCRETE_EVEN_SHARDING => {
            let proto: ConcreteEvenShardingProto = decode(serialized)?;
            check_version(proto.version_number, CONCRETE_EVEN_SHARDING)?;
            concrete_even_placement(proto, shape)
        }
        other => Err(format!(
            "sharding type {other:?} is not supported by pw (it takes {HLO_SHARDING}, \
             {SINGLE_DEVICE_SHARDING} and replicated {CONCRETE_EVEN_SHARDING})"
        )),
    }
}

/// Where the shards of an array of `shape` lie when `op` shards it over
/// `devices` (IFRT device ids; `op`'s tile assignment holds indices into
/// them), as an `xla::ifrt::HloSharding` or an executable's parameter and
/// output shardings say.
pub fn hlo_placement(devices: &[i32], op: &OpSharding, shape: &[i64]) -> Result<Placement, String> {
    check_shape(shape)?;
    check_devices(devices)?;
    if let Some(named) = &op.named_sharding {
        let tiles = crate::named_sharding::to_tiles(named, shape.len()).map_err(|e| {
            format!("named sharding over devices {devices:?} of an array {shape:?}: {e}")
        })?;
        return hlo_placement(devices, &tiles, shape);
    }
    let text = format!("{} over devices {devices:?}", op_sharding_text(op));
    let kind = op_sharding::Type::try_from(op.r#type)
        .map_err(|_| format!("sharding {text}: unknown OpSharding type {}", op.r#type))?;
    let (positions, layout, unreduced) = match kind {
        op_sharding::Type::Replicated => (devices.to_vec(), whole(shape, devices.len()), false),
        op_sharding::Type::Unreduced => (devices.to_vec(), whole(shape, devices.len()), true),
        op_sharding::Type::Maximal => {
            let assigned =
                tile_assignment(op, &[1], 1).map_err(|e| format!("sharding {text}: {e}"))?;
            let device =
                device_at(devices, assigned[0]).map_err(|e| format!("sharding {text}: {e}"))?;
            (vec![device], whole(shape, 1), false)
        }
        op_sharding::Type::Other => {
            tiled(devices, op, shape).map_err(|e| format!("sharding {text}: {e}"))?
        }
        other => {
            return Err(format!(
                "sharding {text}: {} shardings are not supported by pw",
                other.as_str_name().to_lowercase()
            ))
        }
    };
    // IFRT numbers shards in the order of the sharding's device list: so
    // do positions.
    let mut order: Vec<usize> = (0..positions.len()).collect();
    order.sort_by_key(|&p| devices.iter().position(|d| *d == positions[p]));
    let layout = Layout {
        shard_shape: layout.shard_shape,
        offsets: order.iter().map(|&p| layout.offsets[p].clone()).collect(),
    };
    Ok(Placement {
        devices: order.iter().map(|&p| positions[p]).collect(),
        layout,
        sharding: text,
        memory_kind: None,
        unreduced: unreduced && positions.len() > 1,
    })
}

/// Whether `op` leaves some devices' values partial: an unreduced
/// sharding, or a tiled one with an unreduced subgroup of more than one
/// device.
pub fn is_unreduced(op: &OpSharding) -> bool {
    if let Some(named) = &op.named_sharding {
        return !named.unreduced_axes.is_empty();
    }
    match op_sharding::Type::try_from(op.r#type) {
        Ok(op_sharding::Type::Unreduced) => true,
        Ok(op_sharding::Type::Other) => {
            let dims = &op.tile_assignment_dimensions;
            let subgroups = &op.last_tile_dims;
            subgroups
                .iter()
                .zip(&dims[dims.len().saturating_sub(subgroups.len())..])
                .any(|(&t, &n)| t == op_sharding::Type::Unreduced as i32 && n > 1)
        }
        _ => false,
    }
}

/// The devices and shard shape of a `ConcreteEvenSharding` (None for
/// other shardings): IFRT does not say where its shards lie, which the
/// caller knows otherwise (a remap's shards come from its inputs).
pub fn concrete_even(sharding: &ShardingProto) -> Option<(Vec<i32>, Vec<i64>)> {
    let serialized = sharding.serialized_sharding.as_ref()?;
    let proto: ConcreteEvenShardingProto =
        decode_serialized(serialized, CONCRETE_EVEN_SHARDING).ok()?;
    let devices = device_ids(proto.devices.as_ref()).ok()?;
    Some((
        devices,
        proto.shard_shape.map(|s| s.dims).unwrap_or_default(),
    ))
}

/// A `ShardingProto` of an `xla::ifrt::HloSharding`: `op` over `devices`
/// (IFRT device ids, which `op`'s tile assignment indexes), in
/// `memory_kind` (the client writes `"device"`; `None` leaves it to the
/// device's default).
pub fn hlo_sharding(devices: &[i32], op: OpSharding, memory_kind: Option<&str>) -> ShardingProto {
    let proto = HloShardingProto {
        version_number: 0,
        devices: Some(DeviceListProto {
            version_number: 0,
            device_ids: devices.to_vec(),
        }),
        memory_kind: memory_kind.map(str::to_owned),
        xla_op_sharding: Some(op),
    };
    serialized_sharding(HLO_SHARDING, proto.encode_to_vec())
}

/// A `ShardingProto` of an `xla::ifrt::SingleDeviceSharding`: the whole
/// array on `device`. (The client itself writes a single device as an
/// [`hlo_sharding`] of one device, replicated; both deserialize.)
pub fn single_device(device: i32, memory_kind: Option<&str>) -> ShardingProto {
    let proto = SingleDeviceShardingProto {
        version_number: 0,
        device_id: device,
        memory_kind: memory_kind.map(str::to_owned),
    };
    serialized_sharding(SINGLE_DEVICE_SHARDING, proto.encode_to_vec())
}

/// The text of the `xla::Layout` of a dense row-major array of `rank`
/// dimensions (minor to major): `{}`, `{0}`, `{1,0}`, `{2,1,0}`... What
/// `GetDefaultLayoutResponse.serialized_pjrt_layout` holds.
pub fn default_layout_text(rank: usize) -> String {
    let dims: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
    format!("{{{}}}", dims.join(","))
}

/// The message a `Serialized` holds, checking its `type_name`.
pub fn decode_serialized<M: Message + Default>(
    serialized: &Serialized,
    type_name: &str,
) -> Result<M, String> {
    if serialized.type_name != type_name {
        return Err(format!(
            "expected a serialized {type_name}, got {:?}",
            serialized.type_name
        ));
    }
    decode(serialized)
}

/// What a `CompileRequest.compile_options` says (an
/// `xla::ifrt::XlaCompileOptions`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompileOptions {
    /// The IFRT devices the program runs on, in the order of its logical
    /// devices (replica-major, then partition: the order of PJRT's
    /// addressable devices); empty when the options assign none.
    pub devices: Vec<i32>,
    /// The PJRT compile options themselves.
    pub proto: CompileOptionsProto,
}

/// The compile options a `CompileRequest.compile_options` holds (an
/// `xla::ifrt::XlaCompileOptions`), with the devices of its device
/// assignment.
pub fn compile_options(serialized: &Serialized) -> Result<CompileOptions, String> {
    let proto: XlaCompileOptionsProto = decode_serialized(serialized, XLA_COMPILE_OPTIONS)?;
    let proto = proto.compile_options.unwrap_or_default();
    let mut devices = Vec::new();
    if let Some(assignment) = proto
        .executable_build_options
        .as_ref()
        .and_then(|b| b.device_assignment.as_ref())
    {
        // A count below 1 is refused (as `usize::MAX`, too many): with no
        // computations, the loop below would run once per replica.
        let count = |n: i32| {
            usize::try_from(n)
                .ok()
                .filter(|&n| n >= 1)
                .unwrap_or(usize::MAX)
        };
        let replicas = count(assignment.replica_count);
        let computations = count(assignment.computation_count);
        let fits = replicas
            .checked_mul(computations)
            .is_some_and(|n| n as i64 <= MAX_MESH_DEVICES)
            && assignment.computation_devices.len() == computations
            && assignment
                .computation_devices
                .iter()
                .all(|c| c.replica_device_ids.len() == replicas);
        if !fits {
            return Err(format!(
                "the compile options' device assignment of {} replicas and {} computations lists \
                 {} computations' devices (at most {MAX_MESH_DEVICES} devices in all)",
                assignment.replica_count,
                assignment.computation_count,
                assignment.computation_devices.len()
            ));
        }
        for replica in 0..replicas {
            for computation in &assignment.computation_devices {
                let id = computation.replica_device_ids[replica];
                devices.push(
                    i32::try_from(id)
                        .map_err(|_| format!("the device assignment names device {id}"))?,
                );
            }
        }
        check_devices(&devices)
            .map_err(|e| format!("the compile options' device assignment: {e}"))?;
    }
    Ok(CompileOptions { devices, proto })
}

/// The module of a `CompileRequest.program` (an `xla::ifrt::XlaProgram`,
/// whose data is a StableHLO portable artifact: MLIR bytecode), checked
/// to be MLIR bytecode.
pub fn program_module(data: &[u8]) -> Result<Vec<u8>, String> {
    if data.starts_with(MLIR_BYTECODE_MAGIC) {
        Ok(data.to_vec())
    } else {
        let head = &data[..data.len().min(8)];
        Err(format!(
            "the program is not MLIR bytecode (a StableHLO portable artifact starts with \
             {MLIR_BYTECODE_MAGIC:?}; it starts with {head:?})"
        ))
    }
}

/// The first bytes of MLIR bytecode.
const MLIR_BYTECODE_MAGIC: &[u8] = b"ML\xefR";

/// `sharding` with its devices replaced by `devices`, one for one (what
/// `CopyArrays` to other devices makes): an array's sharding on other
/// devices.
pub fn with_devices(sharding: &ShardingProto, devices: &[i32]) -> Result<ShardingProto, String> {
    let serialized = sharding
        .serialized_sharding
        .as_ref()
        .ok_or("the sharding is empty (no serialized_sharding)")?;
    let mismatch = |had: usize| {
        format!(
            "a sharding over {had} devices cannot move to the {} devices {devices:?}",
            devices.len()
        )
    };
    match serialized.type_name.as_str() {
        HLO_SHARDING => {
            let mut proto: HloShardingProto = decode(serialized)?;
            let had = proto.devices.as_ref().map_or(0, |d| d.device_ids.len());
            if had != devices.len() {
                return Err(mismatch(had));
            }
            proto.devices = Some(DeviceListProto {
                version_number: 0,
                device_ids: devices.to_vec(),
            });
            Ok(serialized_sharding(HLO_SHARDING, proto.encode_to_vec()))
        }
        SINGLE_DEVICE_SHARDING => {
            let mut proto: SingleDeviceShardingProto = decode(serialized)?;
            match devices {
                [device] => proto.device_id = *device,
                _ => return Err(mismatch(1)),
            }
            Ok(serialized_sharding(
                SINGLE_DEVICE_SHARDING,
                proto.encode_to_vec(),
            ))
        }
        CONCRETE_EVEN_SHARDING => {
            let mut proto: ConcreteEvenShardingProto = decode(serialized)?;
            let had = proto.devices.as_ref().map_or(0, |d| d.device_ids.len());
            if had != devices.len() {
                return Err(mismatch(had));
            }
            proto.devices = Some(DeviceListProto {
                version_number: 0,
                device_ids: devices.to_vec(),
            });
            Ok(serialized_sharding(
                CONCRETE_EVEN_SHARDING,
                proto.encode_to_vec(),
            ))
        }
        other => Err(format!("sharding type {other:?} is not supported by pw")),
    }
}

/// The memory kind of device memory, as the client names it.
pub const DEVICE_MEMORY: &str = "device";

/// An `OpSharding` as XLA prints it (`{replicated}`, `{maximal device=1}`,
/// `{devices=[2,1]<=[2]}`, `{devices=[2,2]<=[2,2]T(1,0)}`,
/// `{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}`...).
pub fn op_sharding_text(op: &OpSharding) -> String {
    let join = |v: &[i64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match op_sharding::Type::try_from(op.r#type) {
        Ok(op_sharding::Type::Replicated) => "{replicated}".into(),
        Ok(op_sharding::Type::Maximal) => match op.tile_assignment_devices.first() {
            Some(d) => format!("{{maximal device={d}}}"),
            None => "{maximal}".into(),
        },
        Ok(op_sharding::Type::Other) => {
            let mut text = format!("{{devices=[{}]", join(&op.tile_assignment_dimensions));
            if op.iota_reshape_dims.is_empty() {
                text.push_str(&join(&op.tile_assignment_devices));
            } else {
                text.push_str(&format!("<=[{}]", join(&op.iota_reshape_dims)));
                let identity = op
                    .iota_transpose_perm
                    .iter()
                    .enumerate()
                    .all(|(i, &p)| usize::try_from(p) == Ok(i));
                if !identity {
                    let perm: Vec<i64> = op.iota_transpose_perm.iter().map(|&p| p.into()).collect();
                    text.push_str(&format!("T({})", join(&perm)));
                }
            }
            if op.replicate_on_last_tile_dim {
                text.push_str(" last_tile_dim_replicate");
            }
            if !op.last_tile_dims.is_empty() {
                let names: Vec<String> = op.last_tile_dims.iter().map(|&t| type_name(t)).collect();
                text.push_str(&format!(" last_tile_dims={{{}}}", names.join(", ")));
            }
            text.push('}');
            text
        }
        Ok(other) => format!("{{{}}}", other.as_str_name().to_lowercase()),
        Err(_) => format!("{{type {}}}", op.r#type),
    }
}

fn type_name(t: i32) -> String {
    op_sharding::Type::try_from(t)
        .map(|t| t.as_str_name().to_lowercase())
        .unwrap_or_else(|_| format!("type {t}"))
}

fn serialized_sharding(type_name: &str, data: Vec<u8>) -> ShardingProto {
    ShardingProto {
        serialized_sharding: Some(Serialized {
            type_name: type_name.to_owned(),
            data: data.into(),
        }),
    }
}

fn decode<M: Message + Default>(serialized: &Serialized) -> Result<M, String> {
    M::decode(serialized.data.as_ref())
        .map_err(|e| format!("a serialized {} does not decode: {e}", serialized.type_name))
}

/// The SerDes version of every payload pw reads is 0 (as jaxlib 0.10.2
/// writes them).
fn check_version(version: i32, type_name: &str) -> Result<(), String> {
    if version == 0 {
        Ok(())
    } else {
        Err(format!(
            "{type_name} of serialization version {version} is not supported by pw (it reads version 0)"
        ))
    }
}

fn check_shape(shape: &[i64]) -> Result<(), String> {
    if shape.len() > MAX_RANK {
        return Err(format!(
            "an array of rank {} has more than {MAX_RANK} dimensions",
            shape.len()
        ));
    }
    if let Some((dim, size)) = shape.iter().enumerate().find(|(_, &s)| s < 0) {
        return Err(format!(
            "dimension {dim} of the array has negative size {size}"
        ));
    }
    Ok(())
}

fn device_ids(list: Option<&DeviceListProto>) -> Result<Vec<i32>, String> {
    let list = list.ok_or("the sharding has no device list")?;
    check_version(list.version_number, "DeviceList")?;
    Ok(list.device_ids.clone())
}

fn check_devices(devices: &[i32]) -> Result<(), String> {
    if devices.is_empty() {
        return Err("the sharding's device list is empty".into());
    }
    if devices.len() as i64 > MAX_MESH_DEVICES {
        return Err(format!(
            "the sharding lists {} devices, more than {MAX_MESH_DEVICES}",
            devices.len()
        ));
    }
    let mut sorted = devices.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "the sharding lists device {} more than once ({devices:?})",
            w[0]
        ));
    }
    Ok(())
}

fn device_at(devices: &[i32], index: i64) -> Result<i32, String> {
    usize::try_from(index)
        .ok()
        .and_then(|i| devices.get(i).copied())
        .ok_or_else(|| {
            format!(
                "the tile assignment names device index {index}, outside the {} devices listed",
                devices.len()
            )
        })
}

/// The whole array on each of `copies` positions.
fn whole(shape: &[i64], copies: usize) -> Layout {
    Layout {
        shard_shape: shape.to_vec(),
        offsets: vec![vec![0; shape.len()]; copies],
    }
}

/// The positions and boxes of an `OTHER` (tiled) sharding.
/// The positions and layout of a tiled sharding, and whether a subgroup
/// of it is unreduced.
fn tiled(
    devices: &[i32],
    op: &OpSharding,
    shape: &[i64],
) -> Result<(Vec<i32>, Layout, bool), String> {
    let dims = &op.tile_assignment_dimensions;
    // The tile dimensions past the array's: subgroups whose positions hold
    // the same box (equal copies, or partial values of an unreduced array).
    let subgroups: Vec<i32> = if op.replicate_on_last_tile_dim {
        if !op.last_tile_dims.is_empty() {
            return Err("both replicate_on_last_tile_dim and last_tile_dims are set".into());
        }
        vec![op_sharding::Type::Replicated as i32]
    } else {
        op.last_tile_dims.clone()
    };
    let (replicated, unreduced) = (
        op_sharding::Type::Replicated as i32,
        op_sharding::Type::Unreduced as i32,
    );
    if let Some(&t) = subgroups
        .iter()
        .find(|&&t| t != replicated && t != unreduced)
    {
        return Err(format!(
            "a {} subgroup (last_tile_dims) is not supported by pw; only replicated and \
             unreduced ones are",
            type_name(t)
        ));
    }
    let unreduced = is_unreduced(op);
    let rank = shape.len();
    if dims.len() != rank + subgroups.len() {
        return Err(format!(
            "the tile assignment has {} dimensions, but the array has rank {rank} and the sharding \
             {} replication dimensions",
            dims.len(),
            subgroups.len()
        ));
    }
    let mut total = 1i64;
    for (i, &d) in dims.iter().enumerate() {
        if d < 1 {
            return Err(format!("tile assignment dimension {i} has size {d}"));
        }
        total = total
            .checked_mul(d)
            .filter(|&t| t <= MAX_MESH_DEVICES)
            .ok_or_else(|| format!("the tile assignment has more than {MAX_MESH_DEVICES} tiles"))?;
    }
    if total != devices.len() as i64 {
        return Err(format!(
            "the tile assignment has {total} tiles but the sharding lists {} devices",
            devices.len()
        ));
    }
    let assigned = tile_assignment(op, dims, total)?;
    let mut seen = vec![false; devices.len()];
    let mut positions = Vec::with_capacity(assigned.len());
    for &index in &assigned {
        let device = device_at(devices, index)?;
        match usize::try_from(index).ok().and_then(|i| seen.get_mut(i)) {
            Some(slot) if !*slot => *slot = true,
            _ => {
                return Err(format!(
                    "the tile assignment names device index {index} more than once"
                ))
            }
        }
        positions.push(device);
    }
    // The tile assignment as a mesh, one axis per tile dimension, the
    // array's dimension `d` split over axis `d` (the replication axes past
    // the array's split nothing): core's shard geometry gives each tile's
    // box.
    let axis = |d: usize| format!("tile{d}");
    let mesh = MeshShape::new(
        dims.iter()
            .enumerate()
            .map(|(d, &n)| (axis(d), n))
            .collect(),
    );
    let sharding = Sharding {
        dims: (0..rank).map(|d| vec![axis(d)]).collect(),
    };
    let layout = Layout::new(shape, &sharding, &mesh).map_err(|e| match e {
        LayoutError::NotDivisible {
            dim, size, parts, ..
        } => format!(
            "dimension {dim} of size {size} splits unevenly over {parts} devices; pw needs even shards"
        ),
        other => other.to_string(),
    })?;
    Ok((positions, layout, unreduced))
}

/// The coordinates of row-major index `i` in an array of `dims` (nonzero
/// sizes).
fn unravel(mut i: i64, dims: &[i64]) -> Vec<i64> {
    let mut coords = vec![0; dims.len()];
    for (c, &d) in coords.iter_mut().zip(dims).rev() {
        *c = i % d;
        i /= d;
    }
    coords
}

/// The device indices of a tile assignment of `dims` (`total` tiles, at
/// most [`MAX_MESH_DEVICES`]), flattened row-major: the explicit list, or
/// the iota form expanded (an iota over `iota_reshape_dims`, transposed by
/// `iota_transpose_perm`, read in row-major order).
fn tile_assignment(op: &OpSharding, dims: &[i64], total: i64) -> Result<Vec<i64>, String> {
    if op.iota_reshape_dims.is_empty() {
        if op.tile_assignment_devices.len() as i64 != total {
            return Err(format!(
                "the tile assignment lists {} devices for {total} tiles ({dims:?})",
                op.tile_assignment_devices.len()
            ));
        }
        return Ok(op.tile_assignment_devices.clone());
    }
    if !op.tile_assignment_devices.is_empty() {
        return Err("the tile assignment is both a device list and an iota".into());
    }
    let reshape = &op.iota_reshape_dims;
    let mut product = 1i64;
    for &d in reshape {
        if d < 1 {
            return Err(format!("iota reshape dimension of size {d}"));
        }
        product = product
            .checked_mul(d)
            .filter(|&p| p <= total)
            .ok_or_else(|| {
                format!("iota reshape dimensions {reshape:?} hold more than {total} tiles")
            })?;
    }
    if product != total {
        return Err(format!(
            "iota reshape dimensions {reshape:?} hold {product} devices, not the {total} tiles"
        ));
    }
    let perm: Vec<usize> = if op.iota_transpose_perm.is_empty() {
        (0..reshape.len()).collect()
    } else {
        op.iota_transpose_perm
            .iter()
            .map(|&p| usize::try_from(p).unwrap_or(usize::MAX))
            .collect()
    };
    let not_a_permutation = || {
        format!(
            "iota transpose {:?} is not a permutation of {} dimensions",
            op.iota_transpose_perm,
            reshape.len()
        )
    };
    if perm.len() != reshape.len() {
        return Err(not_a_permutation());
    }
    let mut is_perm = vec![false; reshape.len()];
    for &p in &perm {
        match is_perm.get_mut(p) {
            Some(slot) if !*slot => *slot = true,
            _ => return Err(not_a_permutation()),
        }
    }
    // Row-major strides of the iota before the transpose.
    let mut strides = vec![1i64; reshape.len()];
    for k in (0..reshape.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * reshape[k + 1];
    }
    // The transposed array has dimension `reshape[perm[k]]` at `k`; its
    // element at coordinates `c` is the iota's at `c[k]` along `perm[k]`.
    let transposed: Vec<i64> = perm.iter().map(|&p| reshape[p]).collect();
    Ok((0..total)
        .map(|i| {
            unravel(i, &transposed)
                .iter()
                .zip(&perm)
                .map(|(c, &p)| c * strides[p])
                .sum()
        })
        .collect())
}

/// A `ConcreteEvenSharding` pw can place: fully replicated, or on one
/// device. (IFRT gives the others no index domains: nothing says where
/// each shard lies; jax 0.10 sends HloShardings, pmap's too.)
fn concrete_even_placement(
    proto: ConcreteEvenShardingProto,
    shape: &[i64],
) -> Result<Placement, String> {
    let devices = device_ids(proto.devices.as_ref())?;
    check_devices(&devices)?;
    let declared = proto.shape.map(|s| s.dims).unwrap_or_default();
    let shard = proto.shard_shape.map(|s| s.dims).unwrap_or_default();
    let text = format!(
        "ConcreteEvenSharding of shape {declared:?}, shards {shard:?}{} over devices {devices:?}",
        if proto.is_fully_replicated {
            " (fully replicated)"
        } else {
            ""
        }
    );
    if declared != shape {
        return Err(format!(
            "sharding {text} is for another shape than the array's {shape:?}"
        ));
    }
    if !(proto.is_fully_replicated || devices.len() == 1) || shard != shape {
        return Err(format!(
            "sharding {text}: pw places a ConcreteEvenSharding only when every device holds the \
             whole array"
        ));
    }
    Ok(Placement {
        layout: whole(shape, devices.len()),
        devices,
        sharding: text,
        memory_kind: proto.memory_kind,
        unreduced: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// A `ShardingProto` as the client wrote it: `data` is the
    /// `HloShardingProto` bytes captured from jaxlib 0.10.2's proxy client
    /// (`jax.device_put` of an (8, 4) float32 array).
    fn captured(data_hex: &str) -> ShardingProto {
        ShardingProto {
            serialized_sharding: Some(Serialized {
                type_name: HLO_SHARDING.into(),
                data: hex(data_hex).into(),
            }),
        }
    }

    fn place(data_hex: &str, shape: &[i64]) -> Placement {
        placement(&captured(data_hex), shape).unwrap()
    }

    fn op(tiles: &[i64], iota: &[i64], perm: &[i32], replicate_last: bool) -> OpSharding {
        OpSharding {
            r#type: op_sharding::Type::Other as i32,
            tile_assignment_dimensions: tiles.to_vec(),
            iota_reshape_dims: iota.to_vec(),
            iota_transpose_perm: perm.to_vec(),
            replicate_on_last_tile_dim: replicate_last,
            ..Default::default()
        }
    }

    #[test]
    fn dtypes_round_trip() {
        for d in DType::ALL {
            assert_eq!(dtype_of(&dtype_proto(d)), Ok(d));
        }
        // IFRT's numbers, not xla.PrimitiveType's.
        assert_eq!(dtype_proto(DType::BF16).kind, 16);
        assert_eq!(dtype_proto(DType::F32).kind, 11);
        assert_eq!(dtype_proto(DType::Bool).kind, 1);
        assert_eq!(dtype_proto(DType::I4).kind, 21);
        assert_eq!(dtype_proto(DType::F4E2M1FN).kind, 30);
    }

    #[test]
    fn unsupported_dtypes_are_named() {
        let int1 = DTypeProto {
            kind: Kind::S1 as i32,
            ..Default::default()
        };
        let e = dtype_of(&int1).unwrap_err();
        assert!(e.contains("KIND_S1"), "{e}");
        let e = dtype_of(&DTypeProto::default()).unwrap_err();
        assert!(e.contains("KIND_UNSPECIFIED"), "{e}");
        let e = dtype_of(&DTypeProto {
            kind: 1234,
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.contains("1234"), "{e}");
    }

    #[test]
    fn a_single_device_as_the_client_writes_it() {
        // SingleDeviceSharding(devices[1]): devices [1], {replicated}.
        let p = place("0a030a010112001a06646576696365", &[8, 4]);
        assert_eq!(p.devices, vec![1]);
        assert_eq!(p.layout.shard_shape, vec![8, 4]);
        assert_eq!(p.layout.offsets, vec![vec![0, 0]]);
        assert_eq!(p.memory_kind.as_deref(), Some("device"));
        assert_eq!(p.sharding, "{replicated} over devices [1]");
    }

    #[test]
    fn split_rows_over_two_devices() {
        // P('x') on a mesh of 2: {devices=[2,1]<=[2]}.
        let p = place(
            "0a040a020001120c08031a0202014a01025201001a06646576696365",
            &[8, 4],
        );
        assert_eq!(p.devices, vec![0, 1]);
        assert_eq!(p.layout.shard_shape, vec![4, 4]);
        assert_eq!(p.layout.offsets, vec![vec![0, 0], vec![4, 0]]);
        assert_eq!(p.sharding, "{devices=[2,1]<=[2]} over devices [0, 1]");
    }

    #[test]
    fn split_columns_over_two_devices() {
        // P(None, 'x'): {devices=[1,2]<=[2]}.
        let p = place(
            "0a040a020001120c08031a0201024a01025201001a06646576696365",
            &[8, 4],
        );
        assert_eq!(p.devices, vec![0, 1]);
        assert_eq!(p.layout.shard_shape, vec![8, 2]);
        assert_eq!(p.layout.offsets, vec![vec![0, 0], vec![0, 2]]);
    }

    #[test]
    fn replicated_over_two_devices() {
        // P() on a mesh of 2: devices [0, 1], {replicated}.
        let p = place("0a040a02000112001a06646576696365", &[8, 4]);
        assert_eq!(p.devices, vec![0, 1]);
        assert_eq!(p.layout.shard_shape, vec![8, 4]);
        assert_eq!(p.layout.offsets, vec![vec![0, 0], vec![0, 0]]);
    }

    #[test]
    fn split_both_dimensions_on_a_2x2_mesh() {
        // P('x', 'y'): {devices=[2,2]<=[4]}.
        let p = place(
            "0a060a0400010203120c08031a0202024a01045201001a06646576696365",
            &[8, 4],
        );
        assert_eq!(p.devices, vec![0, 1, 2, 3]);
        assert_eq!(p.layout.shard_shape, vec![4, 2]);
        assert_eq!(
            p.layout.offsets,
            vec![vec![0, 0], vec![0, 2], vec![4, 0], vec![4, 2]]
        );
    }

    #[test]
    fn a_transposed_iota() {
        // P('y', 'x') on the 2x2 mesh ('x', 'y'): {devices=[2,2]<=[2,2]T(1,0)}:
        // tile (i, j) is on device 2j + i.
        let p = place(
            "0a060a0400010203120e08031a0202024a020202520201001a06646576696365",
            &[8, 4],
        );
        // Positions follow the device list.
        assert_eq!(p.devices, vec![0, 1, 2, 3]);
        assert_eq!(p.layout.shard_shape, vec![4, 2]);
        assert_eq!(
            p.layout.offsets,
            vec![vec![0, 0], vec![4, 0], vec![0, 2], vec![4, 2]]
        );
        assert_eq!(
            p.sharding,
            "{devices=[2,2]<=[2,2]T(1,0)} over devices [0, 1, 2, 3]"
        );
    }

    #[test]
    fn replication_on_the_last_tile_dimension() {
        // P('x') on the 2x2 mesh: {devices=[2,1,2]<=[4] last_tile_dim_replicate}:
        // devices 0 and 1 hold rows 0-3, 2 and 3 rows 4-7.
        let p = place(
            "0a060a0400010203120f08031a0302010230014a01045201001a06646576696365",
            &[8, 4],
        );
        assert_eq!(p.devices, vec![0, 1, 2, 3]);
        assert_eq!(p.layout.shard_shape, vec![4, 4]);
        assert_eq!(
            p.layout.offsets,
            vec![vec![0, 0], vec![0, 0], vec![4, 0], vec![4, 0]]
        );
        assert_eq!(
            p.sharding,
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate} over devices [0, 1, 2, 3]"
        );
    }

    #[test]
    fn replication_on_the_last_tile_dimension_transposed() {
        // P('y') on the 2x2 mesh: {devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}:
        // devices 0 and 2 hold rows 0-3, 1 and 3 rows 4-7.
        let p = place(
            "0a060a0400010203121108031a0302010230014a020202520201001a06646576696365",
            &[8, 4],
        );
        assert_eq!(p.devices, vec![0, 1, 2, 3]);
        assert_eq!(p.layout.shard_shape, vec![4, 4]);
        assert_eq!(
            p.layout.offsets,
            vec![vec![0, 0], vec![4, 0], vec![0, 0], vec![4, 0]]
        );
    }

    #[test]
    fn a_device_list_out_of_order() {
        // P('x') on Mesh([3, 1, 0, 2]): the device list carries the order.
        let p = place(
            "0a060a0403010002120c08031a0204014a01045201001a06646576696365",
            &[8, 4],
        );
        assert_eq!(p.devices, vec![3, 1, 0, 2]);
        assert_eq!(p.layout.shard_shape, vec![2, 4]);
        assert_eq!(
            p.layout.offsets,
            vec![vec![0, 0], vec![2, 0], vec![4, 0], vec![6, 0]]
        );
    }

    #[test]
    fn jax_op_shardings() {
        // `_to_xla_hlo_sharding(2).to_proto()` of NamedShardings, from jax 0.10.2.
        let decode = |h: &str| OpSharding::decode(hex(h).as_slice()).unwrap();
        let x = decode("08031a0202014a0102520100");
        assert_eq!(x, op(&[2, 1], &[2], &[0], false));
        // P(('y', 'x')) on the 2x2 mesh: {devices=[4,1]<=[2,2]T(1,0)}.
        let yx = decode("08031a0204014a02020252020100");
        let p = hlo_placement(&[0, 1, 2, 3], &yx, &[8, 4]).unwrap();
        assert_eq!(p.devices, vec![0, 1, 2, 3]);
        assert_eq!(
            p.layout.offsets,
            vec![vec![0, 0], vec![4, 0], vec![2, 0], vec![6, 0]]
        );
        // P() is the empty message.
        let replicated = decode("");
        assert_eq!(op_sharding_text(&replicated), "{replicated}");
    }

    #[test]
    fn explicit_devices_and_replicated_subgroups() {
        let mut o = op(&[2, 1, 2], &[], &[], false);
        o.tile_assignment_devices = vec![3, 2, 1, 0];
        o.last_tile_dims = vec![op_sharding::Type::Replicated as i32];
        let p = hlo_placement(&[10, 11, 12, 13], &o, &[6, 3]).unwrap();
        assert_eq!(p.devices, vec![10, 11, 12, 13]);
        assert_eq!(p.layout.shard_shape, vec![3, 3]);
        assert_eq!(
            p.layout.offsets,
            vec![vec![3, 0], vec![3, 0], vec![0, 0], vec![0, 0]]
        );
        assert_eq!(
            op_sharding_text(&o),
            "{devices=[2,1,2]3,2,1,0 last_tile_dims={replicated}}"
        );
    }

    #[test]
    fn maximal_puts_the_array_on_one_device() {
        let o = OpSharding {
            r#type: op_sharding::Type::Maximal as i32,
            tile_assignment_dimensions: vec![1],
            tile_assignment_devices: vec![1],
            ..Default::default()
        };
        let p = hlo_placement(&[4, 5], &o, &[3]).unwrap();
        assert_eq!(p.devices, vec![5]);
        assert_eq!(p.layout.offsets, vec![vec![0]]);
        assert_eq!(p.sharding, "{maximal device=1} over devices [4, 5]");
    }

    #[test]
    fn scalars_and_empty_arrays() {
        let p = hlo_placement(&[0, 1], &OpSharding::default(), &[]).unwrap();
        assert_eq!(p.layout.shard_shape, Vec::<i64>::new());
        assert_eq!(p.layout.offsets, vec![Vec::<i64>::new(), vec![]]);
        let p = hlo_placement(&[0, 1], &op(&[2, 1], &[2], &[0], false), &[0, 4]).unwrap();
        assert_eq!(p.layout.shard_shape, vec![0, 4]);
        assert_eq!(p.layout.offsets, vec![vec![0, 0], vec![0, 0]]);
    }

    #[test]
    fn uneven_shards_are_refused() {
        let e = hlo_placement(&[0, 1], &op(&[2, 1], &[2], &[0], false), &[5, 4]).unwrap_err();
        assert!(
            e.contains(
                "dimension 0 of size 5 splits unevenly over 2 devices; pw needs even shards"
            ),
            "{e}"
        );
    }

    #[test]
    fn what_pw_cannot_place_is_an_error() {
        let shape = [8, 4];
        let manual = OpSharding {
            r#type: op_sharding::Type::Manual as i32,
            ..Default::default()
        };
        let e = hlo_placement(&[0], &manual, &shape).unwrap_err();
        assert!(e.contains("manual shardings are not supported"), "{e}");
        let mut sub = op(&[2, 1, 2], &[4], &[0], false);
        sub.last_tile_dims = vec![op_sharding::Type::Manual as i32];
        let e = hlo_placement(&[0, 1, 2, 3], &sub, &shape).unwrap_err();
        assert!(e.contains("manual subgroup"), "{e}");
        let tuple = OpSharding {
            r#type: op_sharding::Type::Tuple as i32,
            ..Default::default()
        };
        assert!(hlo_placement(&[0], &tuple, &shape).is_err());
        let unknown = OpSharding {
            r#type: 99,
            ..Default::default()
        };
        assert!(hlo_placement(&[0], &unknown, &shape)
            .unwrap_err()
            .contains("unknown OpSharding type 99"));
    }

    #[test]
    fn malformed_shardings_are_errors_not_panics() {
        let shape = [8, 4];
        let cases: Vec<(Vec<i32>, OpSharding, &str)> = vec![
            (
                vec![0, 1],
                op(&[2], &[2], &[0], false),
                "tile assignment has 1 dimensions",
            ),
            (vec![0, 1], op(&[2, 0], &[2], &[0], false), "has size 0"),
            (
                vec![0, 1, 2],
                op(&[2, 1], &[2], &[0], false),
                "lists 3 devices",
            ),
            (vec![0, 1], op(&[2, 1], &[3], &[0], false), "iota reshape"),
            (
                vec![0, 1],
                op(&[2, 1], &[2, 1], &[0, 0], false),
                "not a permutation",
            ),
            (
                vec![0, 1],
                op(&[2, 1], &[2, 1], &[0, 7], false),
                "not a permutation",
            ),
            (
                vec![0, 1],
                op(&[2, 1], &[2, 1], &[-1, 0], false),
                "not a permutation",
            ),
            (
                vec![0, 1],
                op(&[2, 1], &[2, 1], &[0], false),
                "not a permutation",
            ),
            (
                vec![0, 1],
                op(&[1 << 40, 1 << 40], &[2], &[0], false),
                "more than 65536 tiles",
            ),
            (vec![0, 0], op(&[2, 1], &[2], &[0], false), "more than once"),
            (vec![], OpSharding::default(), "device list is empty"),
        ];
        for (devices, o, want) in cases {
            let e = hlo_placement(&devices, &o, &shape).unwrap_err();
            assert!(e.contains(want), "{o:?}: {e}");
        }
        let mut explicit = op(&[2, 1], &[], &[], false);
        explicit.tile_assignment_devices = vec![0, 5];
        assert!(hlo_placement(&[0, 1], &explicit, &shape)
            .unwrap_err()
            .contains("device index 5"));
        explicit.tile_assignment_devices = vec![1, 1];
        assert!(hlo_placement(&[0, 1], &explicit, &shape)
            .unwrap_err()
            .contains("more than once"));
        explicit.tile_assignment_devices = vec![0];
        assert!(hlo_placement(&[0, 1], &explicit, &shape)
            .unwrap_err()
            .contains("lists 1 devices for 2 tiles"));
        let e = hlo_placement(&[0], &OpSharding::default(), &[-1]).unwrap_err();
        assert!(e.contains("negative size"), "{e}");
        let e = hlo_placement(&[0], &OpSharding::default(), &[1; MAX_RANK + 1]).unwrap_err();
        assert!(e.contains("more than 64 dimensions"), "{e}");
        // Payloads that are not what they claim.
        let bad = ShardingProto {
            serialized_sharding: Some(Serialized {
                type_name: HLO_SHARDING.into(),
                data: vec![0xff, 0xff].into(),
            }),
        };
        assert!(placement(&bad, &shape)
            .unwrap_err()
            .contains("does not decode"));
        assert!(placement(&ShardingProto::default(), &shape).is_err());
        let other = ShardingProto {
            serialized_sharding: Some(Serialized {
                type_name: "xla::ifrt::OpaqueSharding".into(),
                data: Default::default(),
            }),
        };
        assert!(placement(&other, &shape)
            .unwrap_err()
            .contains("\"xla::ifrt::OpaqueSharding\" is not supported"));
    }

    #[test]
    fn responses_decode_back() {
        let x = op(&[2, 1], &[2], &[0], false);
        let s = hlo_sharding(&[0, 1], x, Some("device"));
        // What the client wrote for the same sharding (the same message:
        // prost writes the fields in the order of the .proto, C++ by number).
        let ours = s.serialized_sharding.as_ref().unwrap();
        let theirs = captured("0a040a020001120c08031a0202014a01025201001a06646576696365");
        let theirs = theirs.serialized_sharding.unwrap();
        assert_eq!(ours.type_name, theirs.type_name);
        assert_eq!(
            HloShardingProto::decode(ours.data.as_ref()).unwrap(),
            HloShardingProto::decode(theirs.data.as_ref()).unwrap()
        );
        let p = placement(&s, &[8, 4]).unwrap();
        assert_eq!(p.devices, vec![0, 1]);
        assert_eq!(p.layout.offsets, vec![vec![0, 0], vec![4, 0]]);

        let s = single_device(3, Some("device"));
        let serialized = s.serialized_sharding.as_ref().unwrap();
        assert_eq!(serialized.type_name, "xla::ifrt::SingleDeviceSharding");
        let p = placement(&s, &[2, 3]).unwrap();
        assert_eq!(p.devices, vec![3]);
        assert_eq!(p.layout.shard_shape, vec![2, 3]);
        assert_eq!(p.memory_kind.as_deref(), Some("device"));
        let p = placement(&single_device(0, None), &[]).unwrap();
        assert_eq!(p.memory_kind, None);
    }

    #[test]
    fn concrete_even_shardings_that_replicate() {
        let make = |replicated: bool, devices: Vec<i32>, shard: Vec<i64>| {
            let proto = ConcreteEvenShardingProto {
                devices: Some(DeviceListProto {
                    version_number: 0,
                    device_ids: devices,
                }),
                shape: Some(crate::protocol::xla::ifrt::ShapeProto {
                    version_number: 0,
                    dims: vec![4, 2],
                }),
                shard_shape: Some(crate::protocol::xla::ifrt::ShapeProto {
                    version_number: 0,
                    dims: shard,
                }),
                is_fully_replicated: replicated,
                ..Default::default()
            };
            serialized_sharding(CONCRETE_EVEN_SHARDING, proto.encode_to_vec())
        };
        let p = placement(&make(true, vec![2, 0], vec![4, 2]), &[4, 2]).unwrap();
        assert_eq!(p.devices, vec![2, 0]);
        assert_eq!(p.layout.offsets, vec![vec![0, 0], vec![0, 0]]);
        let e = placement(&make(false, vec![0, 1], vec![2, 2]), &[4, 2]).unwrap_err();
        assert!(
            e.contains("only when every device holds the whole array"),
            "{e}"
        );
        assert!(placement(&make(true, vec![0], vec![4, 2]), &[4, 3]).is_err());
    }

    #[test]
    fn payloads_are_checked_by_name() {
        let s = Serialized {
            type_name: XLA_PROGRAM.into(),
            data: Default::default(),
        };
        let e = compile_options(&s).unwrap_err();
        assert!(
            e.contains("expected a serialized xla::ifrt::XlaCompileOptions"),
            "{e}"
        );
        let versioned = HloShardingProto {
            version_number: 1,
            ..Default::default()
        };
        let s = serialized_sharding(HLO_SHARDING, versioned.encode_to_vec());
        assert!(placement(&s, &[1])
            .unwrap_err()
            .contains("serialization version 1"));
    }

    #[test]
    fn the_clients_compile_options_decode() {
        // CompileRequest.compile_options of `jax.jit(lambda a: a * 2)` over
        // P('x') on 2 devices, captured from jaxlib 0.10.2's proxy client.
        let s = Serialized {
            type_name: XLA_COMPILE_OPTIONS.into(),
            data: include_bytes!("../proto/ifrt/testdata/xla_compile_options.binpb")
                .as_slice()
                .into(),
        };
        let options = compile_options(&s).unwrap();
        assert_eq!(options.devices, vec![0, 1]);
        let build = options.proto.executable_build_options.unwrap();
        assert_eq!(build.num_replicas, 1);
        assert_eq!(build.num_partitions, 2);
        assert!(build.use_spmd_partitioning);
        assert!(build.use_shardy_partitioner);
        let assignment = build.device_assignment.unwrap();
        assert_eq!(assignment.computation_count, 2);
        let ids: Vec<Vec<i64>> = assignment
            .computation_devices
            .iter()
            .map(|c| c.replica_device_ids.clone())
            .collect();
        assert_eq!(ids, vec![vec![0], vec![1]]);
    }

    #[test]
    fn device_assignments_are_checked() {
        use crate::protocol::xla::{
            device_assignment_proto::ComputationDevice, DeviceAssignmentProto,
            ExecutableBuildOptionsProto,
        };
        let options = |replicas: i32, ids: Vec<Vec<i64>>| {
            let proto = XlaCompileOptionsProto {
                compile_options: Some(CompileOptionsProto {
                    executable_build_options: Some(ExecutableBuildOptionsProto {
                        device_assignment: Some(DeviceAssignmentProto {
                            replica_count: replicas,
                            computation_count: ids.len() as i32,
                            computation_devices: ids
                                .into_iter()
                                .map(|replica_device_ids| ComputationDevice { replica_device_ids })
                                .collect(),
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
            };
            compile_options(&Serialized {
                type_name: XLA_COMPILE_OPTIONS.into(),
                data: proto.encode_to_vec().into(),
            })
        };
        // Two replicas of two partitions: replica-major.
        let o = options(2, vec![vec![4, 6], vec![5, 7]]).unwrap();
        assert_eq!(o.devices, vec![4, 5, 6, 7]);
        assert!(options(2, vec![vec![4], vec![5]]).is_err());
        assert!(options(-1, vec![]).is_err());
        assert!(options(0, vec![]).is_err());
        assert!(options(1, vec![]).is_err());
        assert!(options(1, vec![vec![1 << 40]]).is_err());
        assert!(options(1, vec![vec![3], vec![3]])
            .unwrap_err()
            .contains("more than once"));
        // No device assignment: no devices.
        let none = Serialized {
            type_name: XLA_COMPILE_OPTIONS.into(),
            data: Default::default(),
        };
        assert_eq!(compile_options(&none).unwrap(), CompileOptions::default());
    }

    #[test]
    fn programs_are_mlir_bytecode() {
        let artifact = b"ML\xefR\rStableHLO_v1.13.7\x00";
        assert_eq!(program_module(artifact).unwrap(), artifact.to_vec());
        let e = program_module(b"module {}").unwrap_err();
        assert!(e.contains("not MLIR bytecode"), "{e}");
        assert!(program_module(b"").is_err());
    }

    #[test]
    fn shardings_move_to_other_devices() {
        let x = hlo_sharding(&[0, 1], op(&[2, 1], &[2], &[0], false), Some("device"));
        let moved = with_devices(&x, &[2, 3]).unwrap();
        let p = placement(&moved, &[8, 4]).unwrap();
        assert_eq!(p.devices, vec![2, 3]);
        assert_eq!(p.layout.offsets, vec![vec![0, 0], vec![4, 0]]);
        assert_eq!(p.memory_kind.as_deref(), Some("device"));
        assert!(with_devices(&x, &[2])
            .unwrap_err()
            .contains("over 2 devices"));
        let one = with_devices(&single_device(0, None), &[5]).unwrap();
        assert_eq!(placement(&one, &[2]).unwrap().devices, vec![5]);
        assert!(with_devices(&single_device(0, None), &[5, 6]).is_err());
        assert!(with_devices(&ShardingProto::default(), &[0]).is_err());
    }

    #[test]
    fn default_layouts() {
        assert_eq!(default_layout_text(0), "{}");
        assert_eq!(default_layout_text(1), "{0}");
        assert_eq!(default_layout_text(2), "{1,0}");
        assert_eq!(default_layout_text(3), "{2,1,0}");
    }
}
