//! The text of a compiled program, `compile().as_text()`: XLA's HLO text
//! format, written from the `xla.HloModuleProto` that the controller's
//! plugin gives of the program it compiled (`PJRT_Executable_OptimizedProgram`).
//!
//! It writes what readers of that text look for: the module's entry
//! layout (with memory spaces) and aliasing, every computation with its
//! instructions' names, shapes with layouts, opcodes and operands, and the
//! attributes that say what an instruction does (dimensions, slices,
//! called computations, comparison directions, replica groups, channels,
//! custom-call targets, shardings). Metadata, backend configs and
//! frontend attributes are left out, and constants wider than a scalar are
//! written `{...}`.

use crate::convert::op_sharding_text;
use crate::protocol::xla::{
    HloComputationProto, HloInstructionProto, HloModuleProto, HloModuleProtoWithConfig,
    LayoutProto, LiteralProto, PrimitiveType, ShapeProto,
};
use prost::Message;
use std::collections::HashMap;
use std::fmt::Write;

/// The HLO text of a compiled program given as `format` (`hlo` or
/// `hlo_with_config`) and its bytes.
pub fn render(format: &str, bytes: &[u8]) -> Result<String, String> {
    let module = module(format, bytes)?;
    Ok(module_text(&module))
}

/// The whole module of a compiled program given as `format` (`hlo` or
/// `hlo_with_config`) and its bytes.
pub fn module(format: &str, bytes: &[u8]) -> Result<HloModuleProto, String> {
    match format {
        "hlo" => HloModuleProto::decode(bytes).map_err(|e| e.to_string()),
        "hlo_with_config" => HloModuleProtoWithConfig::decode(bytes)
            .map_err(|e| e.to_string())?
            .hlo_module
            .ok_or_else(|| "the compiled program has no module".to_owned()),
        other => Err(format!("a compiled program in the {other:?} format")),
    }
}

fn module_text(m: &HloModuleProto) -> String {
    let mut out = format!("HloModule {}", m.name);
    if let Some(p) = &m.host_program_shape {
        let params: Vec<String> = p.parameters.iter().map(shape).collect();
        let result = p.result.as_ref().map(shape).unwrap_or_default();
        let _ = write!(
            out,
            ", entry_computation_layout={{({})->{result}}}",
            params.join(", ")
        );
    }
    if let Some(aliases) = m
        .input_output_alias
        .as_ref()
        .filter(|a| !a.entries.is_empty())
    {
        let entries: Vec<String> = aliases
            .entries
            .iter()
            .map(|e| {
                format!(
                    "{{{}}}: ({}, {{{}}}, {})",
                    join(&e.output_shape_index),
                    e.parameter_number,
                    join(&e.parameter_shape_index),
                    if e.kind == 2 {
                        "must-alias"
                    } else {
                        "may-alias"
                    }
                )
            })
            .collect();
        let _ = write!(out, ", input_output_alias={{ {} }}", entries.join(", "));
    }
    out.push_str("\n\n");
    let names: HashMap<i64, &str> = m
        .computations
        .iter()
        .map(|c| (c.id, c.name.as_str()))
        .collect();
    // Callees first, as XLA writes them; the entry last.
    let is_entry = |c: &HloComputationProto| c.id == m.entry_computation_id;
    for c in m.computations.iter().filter(|c| !is_entry(c)) {
        computation_text(&mut out, c, false, &names);
        out.push('\n');
    }
    for c in m.computations.iter().filter(|c| is_entry(c)) {
        computation_text(&mut out, c, true, &names);
    }
    out
}

fn computation_text(
    out: &mut String,
    c: &HloComputationProto,
    entry: bool,
    computations: &HashMap<i64, &str>,
) {
    let by_id: HashMap<i64, &HloInstructionProto> =
        c.instructions.iter().map(|i| (i.id, i)).collect();
    let mut params: Vec<&HloInstructionProto> = c
        .instructions
        .iter()
        .filter(|i| i.opcode == "parameter")
        .collect();
    params.sort_by_key(|i| i.parameter_number);
    let signature: Vec<String> = params
        .iter()
        .map(|p| format!("{}: {}", p.name, short_shape(p.shape.as_ref())))
        .collect();
    let result = by_id
        .get(&c.root_id)
        .map(|r| short_shape(r.shape.as_ref()))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{}%{} ({}) -> {result} {{",
        if entry { "ENTRY " } else { "" },
        c.name,
        signature.join(", ")
    );
    for i in &c.instructions {
        let operands: Vec<String> = i
            .operand_ids
            .iter()
            .map(|id| {
                by_id
                    .get(id)
                    .map_or(format!("%<{id}>"), |o| format!("%{}", o.name))
            })
            .collect();
        let _ = writeln!(
            out,
            "  {}%{} = {} {}({}){}",
            if i.id == c.root_id { "ROOT " } else { "" },
            i.name,
            i.shape.as_ref().map(shape).unwrap_or_default(),
            i.opcode,
            operand_text(i, &operands),
            attributes(i, computations)
        );
    }
    out.push_str("}\n");
}

/// What goes between an instruction's parentheses: its operands, or a
/// parameter's number, or a constant's value.
fn operand_text(i: &HloInstructionProto, operands: &[String]) -> String {
    match i.opcode.as_str() {
        "parameter" => i.parameter_number.to_string(),
        "constant" => i
            .literal
            .as_ref()
            .and_then(scalar)
            .unwrap_or_else(|| "{...}".into()),
        _ => operands.join(", "),
    }
}

fn attributes(i: &HloInstructionProto, computations: &HashMap<i64, &str>) -> String {
    let mut a = Vec::new();
    let called: Vec<String> = i
        .called_computation_ids
        .iter()
        .map(|id| format!("%{}", computations.get(id).copied().unwrap_or("?")))
        .collect();
    match i.opcode.as_str() {
        "iota" => a.push(format!("iota_dimension={}", join(&i.dimensions))),
        "broadcast" | "transpose" | "reduce" | "reverse" | "concatenate" | "reduce-precision"
        | "all-gather" | "all-to-all" | "reduce-scatter" | "sort" | "map"
            if !i.dimensions.is_empty() || i.opcode == "broadcast" =>
        {
            a.push(format!("dimensions={{{}}}", join(&i.dimensions)))
        }
        "get-tuple-element" => a.push(format!("index={}", i.tuple_index)),
        "slice" => {
            let s: Vec<String> = i
                .slice_dimensions
                .iter()
                .map(|d| format!("[{}:{}:{}]", d.start, d.limit, d.stride))
                .collect();
            a.push(format!("slice={{{}}}", s.join(", ")));
        }
        "dynamic-slice" => a.push(format!(
            "dynamic_slice_sizes={{{}}}",
            join(&i.dynamic_slice_sizes)
        )),
        "compare" if !i.comparison_direction.is_empty() => {
            a.push(format!("direction={}", i.comparison_direction))
        }
        "fusion" if !i.fusion_kind.is_empty() => a.push(format!("kind={}", i.fusion_kind)),
        "custom-call" => a.push(format!("custom_call_target=\"{}\"", i.custom_call_target)),
        _ => {}
    }
    if let Some(d) = &i.dot_dimension_numbers {
        for (key, v) in [
            ("lhs_batch_dims", &d.lhs_batch_dimensions),
            ("lhs_contracting_dims", &d.lhs_contracting_dimensions),
            ("rhs_batch_dims", &d.rhs_batch_dimensions),
            ("rhs_contracting_dims", &d.rhs_contracting_dimensions),
        ] {
            if !v.is_empty() {
                a.push(format!("{key}={{{}}}", join(v)));
            }
        }
    }
    match (i.opcode.as_str(), called.as_slice()) {
        (_, []) => {}
        ("while", [condition, body]) => {
            a.push(format!("condition={condition}"));
            a.push(format!("body={body}"));
        }
        ("conditional", branches) => {
            a.push(format!("branch_computations={{{}}}", branches.join(", ")))
        }
        ("fusion" | "call" | "custom-call" | "async-start", [one]) => {
            a.push(format!("calls={one}"))
        }
        (_, [one]) => a.push(format!("to_apply={one}")),
        (_, many) => a.push(format!("calls={{{}}}", many.join(", "))),
    }
    if i.channel_id != 0 {
        a.push(format!("channel_id={}", i.channel_id));
    }
    if let Some(groups) = replica_groups(i) {
        a.push(format!("replica_groups={groups}"));
    }
    if i.use_global_device_ids {
        a.push("use_global_device_ids=true".into());
    }
    if !i.source_target_pairs.is_empty() {
        let pairs: Vec<String> = i
            .source_target_pairs
            .iter()
            .map(|p| format!("{{{},{}}}", p.source, p.target))
            .collect();
        a.push(format!("source_target_pairs={{{}}}", pairs.join(",")));
    }
    if !i.async_execution_thread.is_empty() && i.async_execution_thread != "main" {
        a.push(format!(
            "async_execution_thread=\"{}\"",
            i.async_execution_thread
        ));
    }
    if let Some(s) = &i.sharding {
        a.push(format!("sharding={}", op_sharding_text(s)));
    }
    a.iter().map(|x| format!(", {x}")).collect()
}

/// A collective's replica groups, as HLO writes them: listed
/// (`{{0,1},{2,3}}`) or as an iota (`[2,2]<=[4]`).
fn replica_groups(i: &HloInstructionProto) -> Option<String> {
    use crate::protocol::xla::hlo_instruction_proto::ReplicaGroupList as L;
    let listed = |groups: &[crate::protocol::xla::ReplicaGroup]| {
        let g: Vec<String> = groups
            .iter()
            .map(|g| format!("{{{}}}", join(&g.replica_ids)))
            .collect();
        format!("{{{}}}", g.join(","))
    };
    match &i.replica_group_list {
        Some(L::CollectiveDeviceList(l)) => Some(listed(&l.replica_groups)),
        Some(L::IotaCollectiveDeviceList(iota)) => {
            let mut text = format!(
                "[{},{}]<=[{}]",
                iota.num_replica_groups,
                iota.num_devices_per_group,
                join(&iota.iota_reshape_dims)
            );
            let perm: Vec<i64> = iota.iota_transpose_perm.iter().map(|&p| p.into()).collect();
            if perm.iter().enumerate().any(|(k, &p)| p != k as i64) {
                let _ = write!(text, "T({})", join(&perm));
            }
            Some(text)
        }
        Some(L::MeshAxesReplicaGroupList(_)) => None,
        // Older plugins write the groups in the field it replaced.
        #[allow(deprecated)]
        None => (!i.replica_groups.is_empty()).then(|| listed(&i.replica_groups)),
    }
}

/// A scalar constant's value, as HLO writes it.
fn scalar(l: &LiteralProto) -> Option<String> {
    let s = l.shape.as_ref()?;
    if !s.dimensions.is_empty() || !s.tuple_shapes.is_empty() {
        return None;
    }
    fn only<T: ToString>(values: &[T]) -> Option<String> {
        match values {
            [v] => Some(v.to_string()),
            _ => None,
        }
    }
    only(&l.preds)
        .or_else(|| only(&l.s32s))
        .or_else(|| only(&l.s64s))
        .or_else(|| only(&l.u32s))
        .or_else(|| only(&l.u64s))
        .or_else(|| only(&l.f32s))
        .or_else(|| only(&l.f64s))
}

/// A shape as HLO writes it: `f32[8,2]{1,0}`, with its layout's memory
/// space (`{1,0:S(5)}`); a tuple in parentheses.
fn shape(s: &ShapeProto) -> String {
    if element(s.element_type) == "tuple" {
        let parts: Vec<String> = s.tuple_shapes.iter().map(shape).collect();
        return format!("({})", parts.join(", "));
    }
    let mut text = short(s);
    // A scalar's layout is empty, and not written.
    if let Some(l) = s.layout.as_deref().filter(|_| !s.dimensions.is_empty()) {
        let _ = write!(text, "{{{}}}", layout_text(l));
    }
    text
}

/// A layout as XLA writes it between a shape's braces: minor to major,
/// then its tiles and memory space (`1,0:T(8,128)S(5)`).
pub fn layout_text(l: &LayoutProto) -> String {
    let mut layout = join(&l.minor_to_major);
    if !l.tiles.is_empty() {
        let tiles: Vec<String> = l
            .tiles
            .iter()
            .map(|t| format!("T({})", join(&t.dimensions)))
            .collect();
        let _ = write!(layout, ":{}", tiles.join(""));
    }
    if l.memory_space != 0 {
        let sep = if l.tiles.is_empty() { ":" } else { "" };
        let _ = write!(layout, "{sep}S({})", l.memory_space);
    }
    layout
}

/// A shape without its layout, as signatures write it.
fn short_shape(s: Option<&ShapeProto>) -> String {
    match s {
        Some(s) if element(s.element_type) == "tuple" => {
            let parts: Vec<String> = s
                .tuple_shapes
                .iter()
                .map(|t| short_shape(Some(t)))
                .collect();
            format!("({})", parts.join(", "))
        }
        Some(s) => short(s),
        None => String::new(),
    }
}

fn short(s: &ShapeProto) -> String {
    let dims: Vec<String> = s
        .dimensions
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let dynamic = s.is_dynamic_dimension.get(i).copied().unwrap_or(false);
            format!("{}{d}", if dynamic { "<=" } else { "" })
        })
        .collect();
    match element(s.element_type).as_str() {
        "token" => "token[]".into(),
        e => format!("{e}[{}]", dims.join(",")),
    }
}

/// An element type's HLO name (`f32`, `pred`, `f8e4m3fn`, `tuple`...).
fn element(t: i32) -> String {
    match PrimitiveType::try_from(t) {
        Ok(PrimitiveType::OpaqueType) => "opaque".into(),
        Ok(p) => p.as_str_name().to_lowercase(),
        Err(_) => format!("type{t}"),
    }
}

fn join(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::xla::{
        hlo_input_output_alias_proto::AliasEntryProto, HloInputOutputAliasProto, LayoutProto,
        ProgramShapeProto,
    };

    fn f32s(dims: &[i64]) -> ShapeProto {
        ShapeProto {
            element_type: PrimitiveType::F32 as i32,
            dimensions: dims.to_vec(),
            layout: Some(Box::new(LayoutProto {
                minor_to_major: (0..dims.len() as i64).rev().collect(),
                ..Default::default()
            })),
            ..Default::default()
        }
    }

    fn instruction(id: i64, name: &str, opcode: &str, shape: ShapeProto) -> HloInstructionProto {
        HloInstructionProto {
            id,
            name: name.into(),
            opcode: opcode.into(),
            shape: Some(shape),
            ..Default::default()
        }
    }

    #[test]
    fn a_module_reads_as_xla_writes_it() {
        let mut p = instruction(1, "p", "parameter", f32s(&[2, 4]));
        p.parameter_number = 0;
        let mut c = instruction(2, "c", "constant", f32s(&[]));
        c.literal = Some(LiteralProto {
            shape: Some(f32s(&[])),
            f32s: vec![2.0],
            ..Default::default()
        });
        let mut b = instruction(3, "b", "broadcast", f32s(&[2, 4]));
        b.operand_ids = vec![2];
        let mut m = instruction(4, "m", "multiply", f32s(&[2, 4]));
        m.operand_ids = vec![1, 3];
        let mut host = f32s(&[2, 4]);
        if let Some(l) = host.layout.as_mut() {
            l.memory_space = 5;
        }
        let module = HloModuleProto {
            name: "jit_f".into(),
            entry_computation_id: 7,
            computations: vec![HloComputationProto {
                name: "main".into(),
                id: 7,
                root_id: 4,
                instructions: vec![p, c, b, m],
                ..Default::default()
            }],
            host_program_shape: Some(ProgramShapeProto {
                parameters: vec![f32s(&[2, 4])],
                result: Some(host),
                ..Default::default()
            }),
            input_output_alias: Some(HloInputOutputAliasProto {
                entries: vec![AliasEntryProto {
                    parameter_number: 0,
                    kind: 1,
                    ..Default::default()
                }],
            }),
            ..Default::default()
        };
        let text = render("hlo", &module.encode_to_vec()).unwrap();
        let want =
            "HloModule jit_f, entry_computation_layout={(f32[2,4]{1,0})->f32[2,4]{1,0:S(5)}}, \
                    input_output_alias={ {}: (0, {}, may-alias) }\n\n\
                    ENTRY %main (p: f32[2,4]) -> f32[2,4] {\n  \
                    %p = f32[2,4]{1,0} parameter(0)\n  \
                    %c = f32[] constant(2)\n  \
                    %b = f32[2,4]{1,0} broadcast(%c), dimensions={}\n  \
                    ROOT %m = f32[2,4]{1,0} multiply(%p, %b)\n}\n";
        assert_eq!(text, want);
        assert!(render("hlo", b"\xff\xff").is_err());
        assert!(render("mlir", &[]).is_err());
    }
}
