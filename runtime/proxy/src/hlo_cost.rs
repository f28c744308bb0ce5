//! A cost estimate of a compiled program (`compile().cost_analysis()`)
//! for a plugin that gives none: pw counts it from the `xla.HloModuleProto`
//! the controller's plugin compiled, with the names XLA's cost analysis
//! uses — `flops`, `transcendentals` and `bytes accessed`.
//!
//! What is counted, per instruction of the entry computation and of the
//! computations it calls (fused ones for arithmetic only):
//! - one flop per output element of an elementwise operation, one
//!   transcendental per output element of `exp`, `log`, `tanh` and kin;
//! - `2 × output elements × contracted size` flops for a `dot`, and
//!   `2 × output elements × kernel elements per output feature` for a
//!   `convolution`;
//! - one flop per input element of a `reduce` or `reduce-window`;
//! - the bytes of the operands and result of every instruction outside a
//!   fusion that reads or writes memory (a fusion counts as one
//!   instruction), not of parameters, constants, tuples and bitcasts;
//! - a `while` body and condition once (the trip count is unknown).

use crate::protocol::xla::{HloComputationProto, HloInstructionProto, PrimitiveType, ShapeProto};
use std::collections::HashMap;

/// The estimate, in XLA's names, of a program given as `format` (`hlo` or
/// `hlo_with_config`) and its bytes.
pub fn estimate(format: &str, bytes: &[u8]) -> Result<Vec<(String, f64)>, String> {
    let module = crate::hlo_text::module(format, bytes)?;
    let computations: HashMap<i64, &HloComputationProto> =
        module.computations.iter().map(|c| (c.id, c)).collect();
    let entry = computations
        .get(&module.entry_computation_id)
        .ok_or("the compiled program has no entry computation")?;
    let mut cost = Cost::default();
    cost.computation(entry, &computations, false, 0);
    Ok(vec![
        ("flops".into(), cost.flops),
        ("transcendentals".into(), cost.transcendentals),
        ("bytes accessed".into(), cost.bytes),
    ])
}

#[derive(Default)]
struct Cost {
    flops: f64,
    transcendentals: f64,
    bytes: f64,
}

/// Calls nested deeper than this are not followed (a malformed module may
/// call itself).
const MAX_DEPTH: usize = 64;

const ELEMENTWISE: &[&str] = &[
    "add",
    "subtract",
    "multiply",
    "divide",
    "remainder",
    "maximum",
    "minimum",
    "negate",
    "abs",
    "sign",
    "compare",
    "select",
    "and",
    "or",
    "xor",
    "not",
    "clamp",
    "floor",
    "ceil",
    "round-nearest-afz",
    "round-nearest-even",
    "shift-left",
    "shift-right-logical",
    "shift-right-arithmetic",
    "popcnt",
    "count-leading-zeros",
    "is-finite",
    "real",
    "imag",
];

const TRANSCENDENTAL: &[&str] = &[
    "exponential",
    "exponential-minus-one",
    "log",
    "log-plus-one",
    "tanh",
    "logistic",
    "sqrt",
    "rsqrt",
    "cbrt",
    "sine",
    "cosine",
    "tan",
    "power",
    "atan2",
    "erf",
];

/// Instructions that move no bytes of their own.
const FREE: &[&str] = &[
    "parameter",
    "constant",
    "tuple",
    "get-tuple-element",
    "bitcast",
    "after-all",
    "partition-id",
    "replica-id",
];

impl Cost {
    fn computation(
        &mut self,
        c: &HloComputationProto,
        all: &HashMap<i64, &HloComputationProto>,
        fused: bool,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let by_id: HashMap<i64, &HloInstructionProto> =
            c.instructions.iter().map(|i| (i.id, i)).collect();
        let operand = |i: &HloInstructionProto, k: usize| {
            i.operand_ids
                .get(k)
                .and_then(|id| by_id.get(id))
                .and_then(|o| o.shape.as_ref())
        };
        for i in &c.instructions {
            let out = elements(i.shape.as_ref());
            let op = i.opcode.as_str();
            match op {
                _ if ELEMENTWISE.contains(&op) => self.flops += out,
                _ if TRANSCENDENTAL.contains(&op) => self.transcendentals += out,
                "dot" => {
                    let contracted: f64 = match (&i.dot_dimension_numbers, operand(i, 0)) {
                        (Some(d), Some(lhs)) => d
                            .lhs_contracting_dimensions
                            .iter()
                            .filter_map(|&k| lhs.dimensions.get(k as usize))
                            .map(|&n| n as f64)
                            .product(),
                        _ => 1.0,
                    };
                    self.flops += 2.0 * out * contracted;
                }
                "convolution" => {
                    let features = i
                        .convolution_dimension_numbers
                        .as_ref()
                        .zip(operand(i, 1))
                        .and_then(|(d, k)| {
                            k.dimensions
                                .get(d.kernel_output_feature_dimension as usize)
                                .copied()
                        })
                        .filter(|&n| n > 0)
                        .unwrap_or(1) as f64;
                    self.flops += 2.0 * out * elements(operand(i, 1)) / features;
                }
                "reduce" | "reduce-window" => self.flops += elements(operand(i, 0)),
                _ => {}
            }
            let follows = matches!(op, "fusion" | "call" | "while" | "conditional");
            if follows {
                for id in &i.called_computation_ids {
                    if let Some(callee) = all.get(id) {
                        self.computation(callee, all, fused || op == "fusion", depth + 1);
                    }
                }
            }
            // A fusion reads its operands and writes its result; a call,
            // loop or branch moves only what its body does.
            let calls_body = follows && op != "fusion";
            if !(fused || calls_body || FREE.contains(&op)) {
                let operands: f64 = (0..i.operand_ids.len()).map(|k| bytes(operand(i, k))).sum();
                self.bytes += operands + bytes(i.shape.as_ref());
            }
        }
    }
}

fn elements(shape: Option<&ShapeProto>) -> f64 {
    match shape {
        Some(s) if s.element_type == PrimitiveType::Tuple as i32 => {
            s.tuple_shapes.iter().map(|t| elements(Some(t))).sum()
        }
        Some(s) => s.dimensions.iter().map(|&d| d.max(0) as f64).product(),
        None => 0.0,
    }
}

fn bytes(shape: Option<&ShapeProto>) -> f64 {
    let Some(s) = shape else { return 0.0 };
    if s.element_type == PrimitiveType::Tuple as i32 {
        return s.tuple_shapes.iter().map(|t| bytes(Some(t))).sum();
    }
    use PrimitiveType as T;
    let size = match T::try_from(s.element_type) {
        Ok(T::Pred | T::S8 | T::U8 | T::S4 | T::U4 | T::S2 | T::U2) => 1.0,
        Ok(T::S16 | T::U16 | T::F16 | T::Bf16) => 2.0,
        Ok(T::S32 | T::U32 | T::F32) => 4.0,
        Ok(T::S64 | T::U64 | T::F64 | T::C64) => 8.0,
        Ok(T::C128) => 16.0,
        Ok(T::Token | T::Tuple | T::OpaqueType) | Err(_) => 0.0,
        // The 8-bit floats and whatever else is a byte wide.
        Ok(_) => 1.0,
    };
    elements(Some(s)) * size
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::xla::{DotDimensionNumbers, HloModuleProto};
    use prost::Message;

    fn array(dims: &[i64]) -> ShapeProto {
        ShapeProto {
            element_type: PrimitiveType::F32 as i32,
            dimensions: dims.to_vec(),
            ..Default::default()
        }
    }

    fn instruction(
        id: i64,
        opcode: &str,
        shape: ShapeProto,
        operands: &[i64],
    ) -> HloInstructionProto {
        HloInstructionProto {
            id,
            opcode: opcode.into(),
            shape: Some(shape),
            operand_ids: operands.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn a_matmul_then_tanh_is_counted() {
        // tanh(x[4,8] @ y[8,2]) + 1: 2·8·8 dot flops, 8 adds, 8 tanh.
        let mut dot = instruction(3, "dot", array(&[4, 2]), &[1, 2]);
        dot.dot_dimension_numbers = Some(DotDimensionNumbers {
            lhs_contracting_dimensions: vec![1],
            rhs_contracting_dimensions: vec![0],
            ..Default::default()
        });
        let entry = HloComputationProto {
            id: 1,
            instructions: vec![
                instruction(1, "parameter", array(&[4, 8]), &[]),
                instruction(2, "parameter", array(&[8, 2]), &[]),
                dot,
                instruction(4, "tanh", array(&[4, 2]), &[3]),
                instruction(5, "constant", array(&[4, 2]), &[]),
                instruction(6, "add", array(&[4, 2]), &[4, 5]),
            ],
            root_id: 6,
            ..Default::default()
        };
        let module = HloModuleProto {
            computations: vec![entry],
            entry_computation_id: 1,
            ..Default::default()
        };
        let cost: HashMap<String, f64> = estimate("hlo", &module.encode_to_vec())
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(cost["flops"], 2.0 * 8.0 * 8.0 + 8.0);
        assert_eq!(cost["transcendentals"], 8.0);
        // dot: 32 + 16 in, 8 out; tanh: 8 + 8; add: 16 + 8 (floats).
        assert_eq!(
            cost["bytes accessed"],
            4.0 * (32.0 + 16.0 + 8.0 + 16.0 + 24.0)
        );
        assert!(estimate("hlo", b"\xff").is_err());
        assert!(estimate("hlo", &HloModuleProto::default().encode_to_vec()).is_err());
    }
}
