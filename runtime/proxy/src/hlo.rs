//! What the proxy reads of a compiled program (`xla.HloModuleProto`, as
//! `PJRT_Executable_OptimizedProgram` gives it): the shardings of its
//! parameters and outputs after SPMD partitioning, their layouts (the
//! entry computation's, per shard), the parameters it donates, and its
//! parameter count. Only these fields are declared (their
//! numbers are `xla/service/hlo.proto`'s); prost skips the rest.

use crate::protocol::xla::{
    op_sharding, LayoutProto, OpSharding, PrimitiveType, ProgramShapeProto, ShapeProto,
};
use prost::Message;

/// `xla.HloModuleProtoWithConfig`: the module and its configuration.
#[derive(Clone, PartialEq, Message)]
struct WithConfig {
    #[prost(message, optional, tag = "1")]
    hlo_module: Option<HloModule>,
}

#[derive(Clone, PartialEq, Message)]
struct HloModule {
    #[prost(message, optional, tag = "4")]
    host_program_shape: Option<ProgramShapeProto>,
    #[prost(message, optional, tag = "8")]
    input_output_alias: Option<Aliases>,
    #[prost(message, optional, tag = "12")]
    spmd_output_sharding: Option<OpSharding>,
    #[prost(message, repeated, tag = "14")]
    spmd_parameters_shardings: Vec<OpSharding>,
}

#[derive(Clone, PartialEq, Message)]
struct Aliases {
    #[prost(message, repeated, tag = "1")]
    entries: Vec<Alias>,
}

#[derive(Clone, PartialEq, Message)]
struct Alias {
    #[prost(int64, tag = "2")]
    parameter_number: i64,
}

/// See the module doc.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Compiled {
    /// One sharding per parameter (replicated when the program is on one
    /// device).
    pub parameters: Vec<OpSharding>,
    /// One sharding per output.
    pub outputs: Vec<OpSharding>,
    /// The parameters whose buffers the program takes over, ascending:
    /// those it aliases to an output. A parameter marked only as a buffer
    /// donor (`jax.buffer_donor`, what JAX asks when no output matches a
    /// donated argument) stays its caller's, as PJRT's own executables
    /// keep it.
    pub donated: Vec<u32>,
    /// The layout of each parameter's and each output's shard, as the
    /// compiler chose or was told (`None` when the compiled program does
    /// not say).
    pub layouts: Option<Layouts>,
}

/// See [`Compiled::layouts`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layouts {
    pub parameters: Vec<LayoutProto>,
    pub outputs: Vec<LayoutProto>,
}

/// The layout XLA gives an array of `rank` dimensions by default: dense,
/// major to minor (`{rank-1,...,0}`).
fn default_layout(rank: usize) -> LayoutProto {
    LayoutProto {
        minor_to_major: (0..rank as i64).rev().collect(),
        ..Default::default()
    }
}

/// `layout` when it is not XLA's default arrangement of the elements
/// (dimension order or tiling; the memory space does not count).
pub fn custom(layout: &LayoutProto) -> Option<&LayoutProto> {
    let rank = layout.minor_to_major.len();
    let default =
        layout.tiles.is_empty() && layout.minor_to_major == default_layout(rank).minor_to_major;
    (!default).then_some(layout)
}

/// The arrays of a parameter or result shape, in order (a tuple's leaves).
fn leaves(shape: &ShapeProto) -> Vec<&ShapeProto> {
    if shape.element_type == PrimitiveType::Tuple as i32 {
        shape.tuple_shapes.iter().flat_map(leaves).collect()
    } else {
        vec![shape]
    }
}

/// The layouts of the entry computation's `shape` (the default where a
/// leaf has none), or `None` when `count` arrays are not what it holds.
fn layouts_of<'a>(
    shapes: impl IntoIterator<Item = &'a ShapeProto>,
    count: usize,
) -> Option<Vec<LayoutProto>> {
    let layouts: Vec<LayoutProto> = shapes
        .into_iter()
        .flat_map(leaves)
        .map(|s| match &s.layout {
            Some(l) => (**l).clone(),
            None => default_layout(s.dimensions.len()),
        })
        .collect();
    (layouts.len() == count).then_some(layouts)
}

fn replicated() -> OpSharding {
    OpSharding {
        r#type: op_sharding::Type::Replicated as i32,
        ..Default::default()
    }
}

/// Reads `bytes` (in `format`: `hlo` or `hlo_with_config`) of a program
/// with `outputs` outputs.
pub fn read(format: &str, bytes: &[u8], outputs: usize) -> Result<Compiled, String> {
    let bad =
        |e: prost::DecodeError| format!("the compiled program ({format}) does not decode: {e}");
    let m = match format {
        "hlo" => HloModule::decode(bytes).map_err(bad)?,
        "hlo_with_config" => WithConfig::decode(bytes)
            .map_err(bad)?
            .hlo_module
            .unwrap_or_default(),
        other => {
            return Err(format!(
                "the compiled program comes as {other:?}, which pw cannot read"
            ))
        }
    };
    let params = m
        .host_program_shape
        .as_ref()
        .map_or(m.spmd_parameters_shardings.len(), |s| s.parameters.len());
    let parameters = if m.spmd_parameters_shardings.is_empty() {
        vec![replicated(); params]
    } else {
        m.spmd_parameters_shardings
    };
    let outputs = match m.spmd_output_sharding {
        // None for a program without outputs, whatever XLA wrote of its
        // empty result (a replicated sharding, or a tuple of one).
        _ if outputs == 0 => Vec::new(),
        None => vec![replicated(); outputs],
        Some(s) if s.r#type == op_sharding::Type::Tuple as i32 => s.tuple_shardings,
        // One sharding for every output.
        Some(s) => vec![s; outputs],
    };
    let mut donated: Vec<u32> = m
        .input_output_alias
        .iter()
        .flat_map(|a| a.entries.iter().map(|e| e.parameter_number))
        .filter_map(|p| u32::try_from(p).ok())
        .collect();
    donated.sort_unstable();
    donated.dedup();
    let layouts = m.host_program_shape.as_ref().and_then(|p| {
        Some(Layouts {
            parameters: layouts_of(&p.parameters, parameters.len())?,
            outputs: layouts_of(p.result.as_ref(), outputs.len())?,
        })
    });
    Ok(Compiled {
        parameters,
        outputs,
        donated,
        layouts,
    })
}

/// The global shape of an output whose shards have `dims` under `op`.
pub fn global_shape(dims: &[usize], op: &OpSharding) -> Result<Vec<i64>, String> {
    let tiled = op.r#type == op_sharding::Type::Other as i32;
    dims.iter()
        .enumerate()
        .map(|(i, &d)| {
            let tiles = if tiled {
                op.tile_assignment_dimensions.get(i).copied().unwrap_or(1)
            } else {
                1
            };
            i64::try_from(d)
                .ok()
                .and_then(|d| d.checked_mul(tiles))
                .ok_or_else(|| format!("an output dimension of {d} x {tiles} overflows"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_layouts_are_read() {
        let array = |dims: &[i64], minor_to_major: Option<Vec<i64>>| ShapeProto {
            element_type: PrimitiveType::F32 as i32,
            dimensions: dims.to_vec(),
            layout: minor_to_major.map(|m| {
                Box::new(LayoutProto {
                    minor_to_major: m,
                    ..Default::default()
                })
            }),
            ..Default::default()
        };
        let m = HloModule {
            host_program_shape: Some(ProgramShapeProto {
                parameters: vec![array(&[2, 3], Some(vec![0, 1])), array(&[4], None)],
                result: Some(ShapeProto {
                    element_type: PrimitiveType::Tuple as i32,
                    tuple_shapes: vec![array(&[3, 2], Some(vec![1, 0])), array(&[], Some(vec![]))],
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let l = read("hlo", &m.encode_to_vec(), 2).unwrap().layouts.unwrap();
        let orders = |v: &[LayoutProto]| -> Vec<Vec<i64>> {
            v.iter().map(|l| l.minor_to_major.clone()).collect()
        };
        assert_eq!(orders(&l.parameters), vec![vec![0, 1], vec![0]]);
        assert_eq!(orders(&l.outputs), vec![vec![1, 0], vec![]]);
        // Column-major is custom; the default and a scalar's are not, nor
        // is a memory space alone.
        assert!(custom(&l.parameters[0]).is_some());
        assert!(custom(&l.outputs[0]).is_none() && custom(&l.outputs[1]).is_none());
        let host = LayoutProto {
            memory_space: 5,
            ..default_layout(2)
        };
        assert!(custom(&host).is_none());
        // Layouts that do not match the outputs are not guessed.
        assert_eq!(read("hlo", &m.encode_to_vec(), 3).unwrap().layouts, None);
    }

    #[test]
    fn shardings_and_donations_are_read() {
        let tiled = OpSharding {
            r#type: op_sharding::Type::Other as i32,
            tile_assignment_dimensions: vec![2, 1],
            iota_reshape_dims: vec![2],
            ..Default::default()
        };
        let m = HloModule {
            host_program_shape: Some(ProgramShapeProto {
                parameters: vec![Default::default(); 2],
                ..Default::default()
            }),
            input_output_alias: Some(Aliases {
                entries: vec![Alias {
                    parameter_number: 1,
                }],
            }),
            spmd_output_sharding: Some(OpSharding {
                r#type: op_sharding::Type::Tuple as i32,
                tuple_shardings: vec![tiled.clone(), replicated()],
                ..Default::default()
            }),
            spmd_parameters_shardings: vec![tiled.clone(), replicated()],
        };
        // `buffer_donor` (field 18): parameters 0 and 1 may be donated.
        #[derive(Clone, PartialEq, Message)]
        struct Donor {
            #[prost(int64, tag = "1")]
            parameter_number: i64,
        }
        #[derive(Clone, PartialEq, Message)]
        struct Donors {
            #[prost(message, repeated, tag = "1")]
            entries: Vec<Donor>,
        }
        let donors = Donors {
            entries: (0..2)
                .map(|p| Donor {
                    parameter_number: p,
                })
                .collect(),
        };
        let mut bytes = m.encode_to_vec();
        prost::encoding::message::encode(18, &donors, &mut bytes);
        let c = read("hlo", &bytes, 2).unwrap();
        let wrapped = WithConfig {
            hlo_module: Some(m.clone()),
        };
        assert_eq!(
            read("hlo_with_config", &wrapped.encode_to_vec(), 2).unwrap(),
            c
        );
        assert_eq!(c.parameters.len(), 2);
        assert_eq!(c.outputs, vec![tiled.clone(), replicated()]);
        // Only the aliased parameter is taken over.
        assert_eq!(c.donated, vec![1]);
        assert_eq!(global_shape(&[4, 4], &tiled).unwrap(), vec![8, 4]);
        assert_eq!(global_shape(&[4, 4], &replicated()).unwrap(), vec![4, 4]);
        // One device: replicated, from the parameter count.
        let one = HloModule {
            host_program_shape: Some(ProgramShapeProto {
                parameters: vec![Default::default(); 3],
                ..Default::default()
            }),
            ..Default::default()
        };
        let c = read("hlo", &one.encode_to_vec(), 1).unwrap();
        assert_eq!((c.parameters.len(), c.outputs.len()), (3, 1));
        // A program without outputs, whose output sharding is a replicated
        // one or a tuple of one.
        for sharding in [
            replicated(),
            OpSharding {
                r#type: op_sharding::Type::Tuple as i32,
                tuple_shardings: vec![replicated()],
                ..Default::default()
            },
        ] {
            let none = HloModule {
                spmd_output_sharding: Some(sharding),
                ..Default::default()
            };
            let c = read("hlo", &none.encode_to_vec(), 0).unwrap();
            assert!(c.outputs.is_empty());
        }
        assert!(read("hlo", b"\xff\xff", 1).is_err());
        assert!(read("mlir", b"", 1).is_err());
    }
}
