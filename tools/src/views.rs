//! Views of a program people would rather look at than read:
//! `--emit=dot` (a Graphviz graph) and `--emit=summary` (tables).

use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, OperationRef},
    Value, ValueLike,
};
use petgraph::{graph::NodeIndex, Graph};
use pretty::RcDoc;
use pw_core::Link;
use pw_dialect::{
    ops::{self, defining_op, OpKind},
    Analysis, ArrayInfo, Program,
};
use std::{
    collections::{BTreeMap, HashMap},
    fmt::Write,
};

/// A node of the dataflow graph: a program input, a call or an output.
struct Node {
    label: String,
    mesh: Option<String>,
    shape: &'static str,
}

/// What moving an array along one edge costs.
#[derive(Default)]
struct Moved {
    /// Bytes per link, for lowered copies.
    links: BTreeMap<Link, u64>,
    /// Bytes of moves not lowered yet.
    unlowered: u64,
}

impl Moved {
    fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .links
            .iter()
            .map(|(link, bytes)| format!("{} {link}", human(*bytes)))
            .collect();
        if self.unlowered > 0 {
            parts.push(format!("{} to move", human(self.unlowered)));
        }
        parts.join(", ")
    }
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// Bytes per link of the piece op `op` moving arrays of `t`.
fn piece_bytes<'c>(
    analysis: &Analysis<'c, '_>,
    op: &OperationRef<'c, '_>,
    t: &ArrayInfo,
    into: &mut Moved,
) {
    let element = t.ty.dtype.size_in_bytes() as u64;
    for p in analysis.pieces(op).iter().flat_map(|p| p.iter()) {
        let bytes = into.links.entry(p.link).or_default();
        *bytes = bytes.saturating_add((p.elements() as u64).saturating_mul(element));
    }
}

/// Follows `value` back through moves to the call or input producing it,
/// adding up what the moves cost.
fn origin<'c: 'a, 'a>(
    analysis: &Analysis<'c, '_>,
    value: Value<'c, 'a>,
    moved: &mut Moved,
) -> Value<'c, 'a> {
    let mut value = value;
    loop {
        let Some(op) = defining_op(value) else {
            return value;
        };
        let t = analysis.value(value).ok();
        match OpKind::of(&op) {
            Some(OpKind::Transfer | OpKind::Reshard) => {
                if let (Ok(input), Some(to)) = (op.operand(0), &t) {
                    if let Ok(from) = analysis.value(input) {
                        moved.unlowered = moved
                            .unlowered
                            .saturating_add(pw_compiler::analysis::cost::move_bytes(&from, to));
                    }
                    value = input;
                } else {
                    return value;
                }
            }
            Some(OpKind::Assemble) => {
                let mut source = None;
                for part in op.operands() {
                    if let (Some(piece_op), Some(t)) = (defining_op(part), &t) {
                        piece_bytes(analysis, &piece_op, t, moved);
                        source = piece_op.operand(0).ok();
                    }
                }
                match source {
                    Some(s) => value = s,
                    None => return value,
                }
            }
            _ => return value,
        }
    }
}

/// The program as a Graphviz graph: calls grouped by mesh, edges labelled
/// with the array and what moving it costs.
pub fn dot(analysis: &Analysis) -> Option<String> {
    let program = &analysis.program;
    let body = program.body()?;
    let mut graph: Graph<Node, String> = Graph::new();
    let mut producer: HashMap<*const std::ffi::c_void, NodeIndex> = HashMap::new();
    for i in 0..body.argument_count() {
        let arg: Value = body.argument(i).ok()?.into();
        let t = analysis.value(arg).ok()?;
        let node = graph.add_node(Node {
            label: format!("input #{i}\\n{}", t.ty.tensor_string()),
            mesh: t.ty.mesh.clone(),
            shape: "ellipse",
        });
        producer.insert(arg.to_raw().ptr, node);
    }
    for (order, op) in analysis.ops().iter().enumerate() {
        match OpKind::of(op) {
            Some(OpKind::Call) => {
                let node = graph.add_node(Node {
                    label: format!(
                        "#{order} @{}",
                        ops::symbol_attr(op, ops::ATTR_CALLEE).unwrap_or_default()
                    ),
                    mesh: ops::symbol_attr(op, ops::ATTR_MESH),
                    shape: "box",
                });
                for operand in op.operands() {
                    let mut moved = Moved::default();
                    let source = origin(analysis, operand, &mut moved);
                    if let Some(&from) = producer.get(&source.to_raw().ptr) {
                        let t = analysis
                            .value(operand)
                            .map(|t| t.ty.tensor_string())
                            .unwrap_or_default();
                        let cost = moved.describe();
                        let label = if cost.is_empty() {
                            t
                        } else {
                            format!("{t}\\n{cost}")
                        };
                        graph.add_edge(from, node, label);
                    }
                }
                for r in op.results() {
                    producer.insert(r.to_raw().ptr, node);
                }
            }
            Some(OpKind::Return) => {
                for (i, operand) in op.operands().enumerate() {
                    let node = graph.add_node(Node {
                        label: format!("output #{i}"),
                        mesh: None,
                        shape: "ellipse",
                    });
                    let mut moved = Moved::default();
                    let source = origin(analysis, operand, &mut moved);
                    if let Some(&from) = producer.get(&source.to_raw().ptr) {
                        graph.add_edge(from, node, String::new());
                    }
                }
            }
            _ => {}
        }
    }
    Some(render_dot(program, &graph))
}

fn render_dot(program: &Program, graph: &Graph<Node, String>) -> String {
    let mut out = String::from("digraph pw {\n  rankdir=LR;\n  node [fontname=\"monospace\"];\n");
    let mut by_mesh: BTreeMap<Option<&str>, Vec<NodeIndex>> = BTreeMap::new();
    for index in graph.node_indices() {
        by_mesh
            .entry(graph[index].mesh.as_deref())
            .or_default()
            .push(index);
    }
    for (mesh, nodes) in by_mesh {
        let indent = if mesh.is_some() { "    " } else { "  " };
        if let Some(mesh) = mesh {
            let devices = program
                .mesh(mesh)
                .and_then(|m| m.devices.clone())
                .map(|d| format!(" devices {d:?}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  subgraph \"cluster_{mesh}\" {{\n    label=\"@{mesh}{devices}\";"
            );
        }
        for index in nodes {
            let node = &graph[index];
            let _ = writeln!(
                out,
                "{indent}n{} [label=\"{}\", shape={}];",
                index.index(),
                node.label,
                node.shape
            );
        }
        if mesh.is_some() {
            out.push_str("  }\n");
        }
    }
    for edge in graph.edge_indices() {
        if let Some((a, b)) = graph.edge_endpoints(edge) {
            let _ = writeln!(
                out,
                "  n{} -> n{} [label=\"{}\"];",
                a.index(),
                b.index(),
                graph[edge]
            );
        }
    }
    out.push_str("}\n");
    out
}

/// Lays out rows as aligned columns.
fn table(header: &[&str], rows: Vec<Vec<String>>) -> RcDoc<'static, ()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: Vec<String>| {
        let text: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        RcDoc::text(text.join("  ").trim_end().to_owned())
    };
    let mut lines = vec![line(header.iter().map(|h| h.to_string()).collect())];
    lines.extend(rows.into_iter().map(line));
    RcDoc::intersperse(lines, RcDoc::hardline())
}

fn section(title: &str, body: RcDoc<'static, ()>) -> RcDoc<'static, ()> {
    RcDoc::text(title.to_owned()).append(RcDoc::hardline().append(body).nest(2))
}

/// How many schedule rows the summary shows at each end of a long program.
const SCHEDULE_ROWS: usize = 40;

/// Tables of placement, transfers (bytes per link) and schedule.
pub fn summary(analysis: &Analysis) -> Option<String> {
    let program = &analysis.program;
    let ops = analysis.ops();
    let mut calls: HashMap<String, usize> = HashMap::new();
    let mut moved = Moved::default();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for op in ops {
        let kind = OpKind::of(op);
        if kind == Some(OpKind::Call) {
            *calls
                .entry(ops::symbol_attr(op, ops::ATTR_MESH).unwrap_or_default())
                .or_default() += 1;
        }
        let t = op
            .result(0)
            .ok()
            .and_then(|r| analysis.value(r.into()).ok());
        match (kind, t) {
            (Some(k @ (OpKind::Copy | OpKind::Scatter | OpKind::Gather)), Some(t)) => {
                piece_bytes(analysis, op, &t, &mut moved);
                *counts.entry(k.name()).or_default() += 1;
            }
            (Some(k @ (OpKind::Transfer | OpKind::Reshard)), Some(to)) => {
                if let Some(from) = op.operand(0).ok().and_then(|v| analysis.value(v).ok()) {
                    moved.unlowered = moved
                        .unlowered
                        .saturating_add(pw_compiler::analysis::cost::move_bytes(&from, &to));
                }
                *counts.entry(k.name()).or_default() += 1;
            }
            _ => {}
        }
    }

    let placement = table(
        &["mesh", "axes", "kind", "devices", "calls"],
        program
            .meshes
            .iter()
            .map(|m| {
                vec![
                    format!("@{}", m.name),
                    m.shape.to_string(),
                    m.kind.clone().unwrap_or_else(|| "any".into()),
                    m.devices
                        .as_ref()
                        .map_or("unbound".into(), |d| format!("{d:?}")),
                    calls.get(&m.name).copied().unwrap_or(0).to_string(),
                ]
            })
            .collect(),
    );
    let mut transfer_rows: Vec<Vec<String>> = Link::ALL
        .iter()
        .map(|l| {
            vec![
                l.name().to_owned(),
                human(moved.links.get(l).copied().unwrap_or(0)),
            ]
        })
        .collect();
    if moved.unlowered > 0 {
        transfer_rows.push(vec!["not lowered".into(), human(moved.unlowered)]);
    }
    let op_counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let transfers = table(&["link", "bytes"], transfer_rows)
        .append(RcDoc::hardline())
        .append(RcDoc::text(if op_counts.is_empty() {
            "no moves".to_owned()
        } else {
            op_counts.join(", ")
        }));

    let listed: Vec<(usize, &OperationRef)> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(OpKind::of(*op), Some(OpKind::Return) | None))
        .collect();
    let shown: Vec<Vec<String>> = listed
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            listed.len() <= 2 * SCHEDULE_ROWS
                || *i < SCHEDULE_ROWS
                || *i >= listed.len() - SCHEDULE_ROWS
        })
        .map(|(_, (i, op))| schedule_row(analysis, *i, op))
        .collect();
    let mut schedule = table(&["#", "op", "on", "what"], shown);
    if listed.len() > 2 * SCHEDULE_ROWS {
        schedule = schedule
            .append(RcDoc::hardline())
            .append(RcDoc::text(format!(
                "({} ops in all; the middle ones are not shown)",
                listed.len()
            )));
    }
    let order = program
        .entry
        .attribute(ops::ATTR_SCHEDULE)
        .ok()
        .and_then(pw_dialect::ops::string_value)
        .map_or("program order (not scheduled)".to_owned(), |p| {
            format!("policy {p}")
        });

    let peak = pw_compiler::analysis::live_bytes::peak_live_bytes(analysis);
    let memory = if peak.is_empty() {
        RcDoc::text("devices not bound yet (lower the program first)")
    } else {
        table(
            &["device", "peak live bytes"],
            peak.iter()
                .map(|(d, b)| vec![d.to_string(), format!("{} ({b} B)", human(*b))])
                .collect(),
        )
    };
    let doc = RcDoc::intersperse(
        [
            section("Placement", placement),
            section("Transfers", transfers),
            section(&format!("Schedule ({order})"), schedule),
            section("Memory (per device, in this order)", memory),
        ],
        RcDoc::hardline().append(RcDoc::hardline()),
    );
    let mut out = String::new();
    doc.render_fmt(100, &mut out).ok()?;
    out.push('\n');
    Some(out)
}

fn schedule_row<'c>(
    analysis: &Analysis<'c, '_>,
    index: usize,
    op: &OperationRef<'c, '_>,
) -> Vec<String> {
    let kind = OpKind::of(op);
    let result = op
        .result(0)
        .ok()
        .and_then(|r| analysis.value(r.into()).ok());
    let on = match kind {
        Some(OpKind::Call) => ops::symbol_attr(op, ops::ATTR_MESH).map(|m| format!("@{m}")),
        _ => result
            .as_ref()
            .and_then(|t| t.ty.mesh.as_ref())
            .map(|m| format!("@{m}")),
    }
    .unwrap_or_default();
    let what = match kind {
        Some(OpKind::Call) => format!(
            "@{}",
            ops::symbol_attr(op, ops::ATTR_CALLEE).unwrap_or_default()
        ),
        Some(OpKind::Copy | OpKind::Scatter | OpKind::Gather) => {
            let flows: Vec<String> = analysis
                .pieces(op)
                .iter()
                .flat_map(|p| p.iter())
                .map(|p| format!("{}->{}", p.src_device, p.dst_device))
                .collect();
            flows.join(" ")
        }
        _ => result.map(|t| t.ty.tensor_string()).unwrap_or_default(),
    };
    vec![
        index.to_string(),
        kind.map_or("?", OpKind::name).to_owned(),
        on,
        what,
    ]
}
