//! The dialect layer's errors: everything wrong with a program's text,
//! structure, declarations, values and ops, or with the stage it is at.
//!
//! Each is reported at a place in the program ([`crate::diag::Located`]);
//! the tools render them in one place (`pw-tools`' `diagnostics`).

use crate::array_type::TypeError;
use pw_core::geometry::{LayoutError, MeshShape, Sharding, MAX_MESH_DEVICES};

/// What is wrong (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    // Text, checked before MLIR parses it.
    #[error("nesting is deeper than {limit} levels of brackets")]
    NestingTooDeep { limit: usize },
    #[error("{construct} is not supported (MLIR cannot parse it safely)")]
    UnparsableConstruct { construct: &'static str },
    #[error("the input is {bytes} bytes; at most {limit} are accepted")]
    InputTooLarge { bytes: usize, limit: usize },
    #[error("the input is neither UTF-8 text nor MLIR bytecode")]
    NotText,
    #[error(transparent)]
    Bytecode(crate::bytecode::Refused),
    #[error("MLIR could not read the program (and said not why)")]
    Unreadable,

    // The program's structure.
    #[error(
        "'{op}' cannot appear at the top level of a pw program \
         (expected pw.mesh, a computation module or func.func @main)"
    )]
    ForeignTopLevel { op: String },
    #[error("not a pw program: no func.func @main")]
    NoEntry,
    #[error("a pw program has exactly one function, func.func @main")]
    SeveralFunctions,
    #[error("func.func @main has {blocks} blocks; a pw program's body is one block")]
    EntryBlocks { blocks: usize },
    #[error("a computation module needs a name (module @name)")]
    UnnamedComputation,
    #[error("computation @{name} has no body")]
    ComputationWithoutBody { name: String },
    #[error("computation @{name} has no entry function @main")]
    ComputationWithoutMain { name: String },
    #[error("entry function has no function_type")]
    NoFunctionType,
    #[error("{what} #{index} of computation @{name} is {ty}, not a ranked tensor")]
    NotRankedTensor {
        what: &'static str,
        index: usize,
        name: String,
        ty: String,
    },
    #[error("cannot read sdy.mesh: {reason}")]
    BadSdyMesh { reason: String },
    #[error("cannot read the sharding of {what} #{index}: {reason}")]
    BadSdySharding {
        what: &'static str,
        index: usize,
        reason: String,
    },
    #[error("computation @{name} refers to an undeclared sdy mesh @{mesh}")]
    UndeclaredSdyMesh { name: String, mesh: String },
    #[error("computation @{name} uses several sdy meshes; pw needs one per computation")]
    SeveralSdyMeshes { name: String },
    #[error(
        "computation @{name}: the sharding {sharding} of {what} #{index} ({ty}) does not fit \
         its mesh {mesh}: {error}"
    )]
    SignatureShardingMisfit {
        name: String,
        sharding: Sharding,
        what: &'static str,
        index: usize,
        ty: String,
        mesh: Box<MeshShape>,
        error: Box<LayoutError>,
    },
    #[error(
        "computation @{name} has mhlo.num_partitions = {value}; it must be between 1 and \
         {MAX_MESH_DEVICES}"
    )]
    BadPartitions { name: String, value: i64 },
    #[error("computation @{name}: its `pw.sidecar` attribute is not a Python function: {why}")]
    BadSidecarFunction { name: String, why: String },
    #[error(
        "computation @{name} is compiled for {partitions} partition(s) but its mesh {mesh} has \
         {devices} device(s): no mesh fits it"
    )]
    PartitionsOfMesh {
        name: String,
        partitions: i64,
        mesh: Box<MeshShape>,
        devices: i64,
    },

    // Meshes.
    #[error("mesh @{mesh} has {names} axis names but {sizes} sizes")]
    MeshAxisCount {
        mesh: String,
        names: usize,
        sizes: usize,
    },
    #[error("mesh @{mesh} repeats or has an empty axis name \"{axis}\"")]
    MeshAxisName { mesh: String, axis: String },
    #[error("axis \"{axis}\" of mesh @{mesh} has size {size}; sizes must be >= 1")]
    MeshAxisSize {
        mesh: String,
        axis: String,
        size: i64,
    },
    #[error("mesh @{mesh} {shape} has more than {MAX_MESH_DEVICES} devices")]
    MeshTooLarge { mesh: String, shape: MeshShape },
    #[error("mesh @{mesh} has an empty device kind")]
    MeshEmptyKind { mesh: String },
    #[error("mesh @{mesh} cannot be on the same island as itself")]
    MeshSelfIsland { mesh: String },
    #[error("mesh @{mesh} must share an island with unknown mesh @{other}")]
    MeshUnknownIsland { mesh: String, other: String },
    #[error("mesh @{mesh} has {devices} devices but its axes need {needed}")]
    MeshDeviceCount {
        mesh: String,
        devices: usize,
        needed: i64,
    },
    #[error("mesh @{mesh} lists a device twice or a negative device id")]
    MeshDeviceIds { mesh: String },

    // Values.
    #[error("{what}: {error}")]
    Type { what: String, error: TypeError },
    #[error("{what} is placed on unknown mesh @{mesh}")]
    UnknownMesh { what: String, mesh: String },
    #[error("{what}: sharding {sharding} of {ty} does not fit mesh @{mesh}: {error}")]
    ShardingMisfit {
        what: String,
        sharding: Sharding,
        ty: String,
        mesh: String,
        error: Box<LayoutError>,
    },
    #[error("{what}: {ty} has more than 2^63 bytes")]
    ArrayTooLarge { what: String, ty: String },

    // Ops.
    #[error("'{op}' is not a pw op; a program's body holds only pw ops")]
    ForeignOp { op: String },
    #[error("call to unknown computation @{callee}")]
    UnknownComputation { callee: String },
    #[error("computation @{computation} takes {expected} {what}s but the call has {actual}")]
    Arity {
        computation: String,
        what: &'static str,
        expected: usize,
        actual: usize,
    },
    #[error("{what} #{index} is {actual} but computation @{computation} expects {expected}")]
    SignatureMismatch {
        what: &'static str,
        index: usize,
        actual: String,
        computation: String,
        expected: String,
    },
    #[error("result #{index} is {result} but the call is {call}")]
    ResultPlacement {
        index: usize,
        result: String,
        call: String,
    },
    #[error("an unplaced call cannot have in_shardings")]
    UnplacedInShardings,
    #[error("in_shardings must list, per operand, the axes of each dimension")]
    MalformedInShardings,
    #[error("call placed on unknown mesh @{mesh}")]
    CallOnUnknownMesh { mesh: String },
    #[error(
        "computation @{computation} is compiled for {partitions} partition(s) but mesh @{mesh} \
         has {devices} device(s)"
    )]
    Partitions {
        computation: String,
        partitions: i64,
        mesh: String,
        devices: i64,
    },
    #[error(
        "computation @{computation} was lowered for mesh {lowered_for} but runs on mesh @{mesh} \
         {shape}"
    )]
    Axes {
        computation: String,
        lowered_for: MeshShape,
        mesh: String,
        shape: MeshShape,
    },
    #[error("in_shardings has {entries} entries for {operands} operands")]
    InShardingsCount { entries: usize, operands: usize },
    #[error("in_shardings #{index} {sharding} does not fit mesh @{mesh}: {error}")]
    InShardingMisfit {
        index: usize,
        sharding: Sharding,
        mesh: String,
        error: Box<LayoutError>,
    },
    #[error(
        "in_shardings #{index} is {declared} but computation @{computation} takes argument \
         #{index} as {expected}"
    )]
    InShardingDisagrees {
        index: usize,
        declared: Sharding,
        computation: String,
        expected: Sharding,
    },
    #[error(
        "result #{index} is sharded {declared} but computation @{computation} produces \
         {produced}"
    )]
    ResultShardingDisagrees {
        index: usize,
        declared: Sharding,
        computation: String,
        produced: Sharding,
    },
    #[error("computation @{computation} shards over axis \"{axis}\", which mesh {mesh} lacks")]
    ComputationAxis {
        computation: String,
        axis: String,
        mesh: MeshShape,
    },
    #[error("{op} changes the array type from {from} to {to}")]
    ChangesType {
        op: &'static str,
        from: String,
        to: String,
    },
    #[error("{op} moves placed arrays; both sides need a mesh")]
    MoveUnplaced { op: &'static str },
    #[error("{op} moves sharded arrays; both sides need a sharding")]
    MoveUnsharded { op: &'static str },
    #[error("pw.transfer stays on mesh @{mesh}; use pw.reshard within a mesh")]
    TransferWithinMesh { mesh: String },
    #[error("pw.reshard cannot move @{from} to @{to}; use pw.transfer")]
    ReshardAcrossMeshes { from: String, to: String },

    // Physical copies.
    #[error("{op} moves no pieces")]
    NoPieces { op: &'static str },
    #[error("the {side} of a physical copy must be placed and sharded")]
    CopyUnplaced { side: &'static str },
    #[error("the {side} mesh @{mesh} has no devices; run lowering first")]
    CopyMeshUnbound { side: &'static str, mesh: String },
    #[error("piece #{index} has rank {rank} for an array of rank {array_rank}")]
    PieceRank {
        index: usize,
        rank: usize,
        array_rank: usize,
    },
    #[error("piece #{index} reads device {device}, which holds no shard of the source")]
    PieceSource { index: usize, device: i64 },
    #[error("piece #{index} writes device {device}, which holds no shard of the destination")]
    PieceDestination { index: usize, device: i64 },
    #[error("piece #{index} reaches outside its source or destination shard")]
    PieceOutside { index: usize },
    #[error("piece #{index} lands at a different position of the array than the one it reads")]
    PieceMisplaced { index: usize },
    #[error("piece #{index} is labelled {link} but goes from device {from} to {to}")]
    PieceLink {
        index: usize,
        link: pw_core::Link,
        from: i64,
        to: i64,
    },
    #[error("pw.copy moves exactly one piece, which fills a whole destination shard")]
    CopyShape,
    #[error("pw.scatter reads one source device")]
    ScatterSources,
    #[error("each piece of pw.scatter fills a whole, distinct destination shard")]
    ScatterShards,
    #[error("pw.gather writes one destination device")]
    GatherDestinations,
    #[error("the pieces of pw.gather must fill its destination shard exactly once")]
    GatherTiling,
    #[error("the result of {op} is partial; only pw.assemble may use it")]
    PartialEscapes { op: &'static str },
    #[error("part #{index} of pw.assemble is not a pw.copy, pw.scatter or pw.gather")]
    AssemblePart { index: usize },
    #[error("part #{index} of pw.assemble has another type than its result")]
    AssemblePartType { index: usize },
    #[error("pw.assemble leaves the shard on device {device} empty")]
    AssembleEmpty { device: i64 },
    #[error("pw.assemble writes the shard on device {device} {times} times")]
    AssembleTwice { device: i64, times: usize },

    // Stages (see `crate::legality`).
    #[error("{what} is not placed and sharded yet ({remedy})")]
    NotPlaced { what: String, remedy: &'static str },
    #[error("operand #{index} is {actual} but the call takes {expected} ({remedy})")]
    OperandNotAsExpected {
        index: usize,
        actual: String,
        expected: String,
        remedy: &'static str,
    },
    #[error("mesh @{mesh} is not bound to devices yet ({remedy})")]
    MeshNotBound { mesh: String, remedy: &'static str },
    #[error("{op} is left ({remedy})")]
    MoveLeft {
        op: &'static str,
        remedy: &'static str,
    },
    #[error("the program is not scheduled ({remedy})")]
    NotScheduled { remedy: &'static str },

    #[error("too many errors; stopping after {limit}")]
    TooManyErrors { limit: usize },
}
