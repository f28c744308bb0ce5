//! A read-only view of a pw program: its meshes, its computations and its
//! entry function, built by one walk over the module's top level.
//!
//! A program module holds, at its top level and in any order:
//! - `pw.mesh` ops, the virtual meshes;
//! - nested `builtin.module`s with a `sym_name`, the computations, each the
//!   module `jax.jit(f).lower(...)` produced, entry point `@main`;
//! - exactly one `func.func @main`, the dataflow program itself.

use crate::analysis::FastMap;
use crate::{
    array_type::Tensor,
    diag::Diag,
    error::Error,
    ops::{self, op_name},
    sdy,
};
use melior::ir::{
    attribute::{DictionaryAttribute, TypeAttribute},
    block::BlockLike,
    operation::{OperationLike, OperationRef},
    r#type::FunctionType,
    BlockRef, Location, Module, RegionLike, Type, Value,
};
use pw_core::{
    geometry::{MeshShape, Sharding, Tiling, MAX_MESH_DEVICES},
    DType,
};
use std::collections::HashMap;

/// A `pw.mesh` declaration.
#[derive(Clone, Debug)]
pub struct Mesh<'c, 'a> {
    pub name: String,
    pub shape: MeshShape,
    /// Devices the axes need; 0 when the axes are invalid (the verifier
    /// reports them, so a verified program's meshes have their size).
    pub size: i64,
    pub kind: Option<String>,
    pub same_island_as: Option<String>,
    /// Physical device ids, row-major over the axes, once lowered.
    pub devices: Option<Vec<i64>>,
    pub op: OperationRef<'c, 'a>,
}

/// One tensor of a computation's entry signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSig {
    pub shape: Vec<i64>,
    /// `None` for element types pw does not support.
    pub dtype: Option<DType>,
    /// The printed type, for diagnostics.
    pub text: String,
    /// The sharding the computation declares (Shardy), on its own mesh axes.
    pub sharding: Option<Sharding>,
}

/// An embedded computation (a nested module from JAX).
#[derive(Clone, Debug)]
pub struct Computation<'c, 'a> {
    pub name: String,
    pub op: OperationRef<'c, 'a>,
    pub num_partitions: i64,
    /// The Shardy mesh its shardings refer to, if it declares one.
    pub mesh: Option<MeshShape>,
    pub inputs: Vec<TensorSig>,
    pub outputs: Vec<TensorSig>,
    /// For a Python step (a `pw.sidecar` attribute), the function's
    /// encoding (`pw_core::python::Function`): what the workers run
    /// instead of the body.
    pub python: Option<Vec<u8>>,
}

/// Why a computation cannot run on a mesh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Misfit {
    /// The mesh has another device count than the computation partitions.
    Partitions { partitions: i64, devices: i64 },
    /// The computation was lowered for a mesh with other axes.
    Axes { lowered_for: MeshShape },
}

impl Computation<'_, '_> {
    /// Whether the computation can run on a mesh of this shape: as many
    /// devices as it has partitions, and, if it was lowered for a Shardy
    /// mesh, the same axes (size-1 axes aside) in the same order.
    pub fn fits(&self, mesh: &MeshShape) -> Result<(), Misfit> {
        let devices = mesh.size().unwrap_or(0);
        if devices != self.num_partitions {
            return Err(Misfit::Partitions {
                partitions: self.num_partitions,
                devices,
            });
        }
        if let Some(own) = &self.mesh {
            let significant = |axes: &[(String, i64)]| -> Vec<(String, i64)> {
                axes.iter().filter(|(_, s)| *s > 1).cloned().collect()
            };
            if significant(&own.axes) != significant(&mesh.axes) {
                return Err(Misfit::Axes {
                    lowered_for: own.clone(),
                });
            }
        }
        Ok(())
    }

    /// The sharding `sig` (one of the computation's inputs or outputs)
    /// declares, on a pw mesh of `mesh`'s shape the computation fits: axes
    /// map by name, size-1 axes split nothing and are dropped; nothing
    /// declared is replicated.
    pub fn sharding_on(&self, sig: &TensorSig, mesh: &MeshShape) -> Result<Sharding, Error> {
        let Some(declared) = &sig.sharding else {
            return Ok(Sharding::replicated(sig.shape.len()));
        };
        if let Some(axis) = declared
            .dims
            .iter()
            .flatten()
            .find(|a| mesh.axis_size(a).is_none())
        {
            return Err(Error::ComputationAxis {
                computation: self.name.clone(),
                axis: axis.clone(),
                mesh: mesh.clone(),
            });
        }
        Ok(significant(declared, mesh))
    }
}

/// `sharding` without the axes of size 1 on `mesh` (they split nothing):
/// two shardings lay an array out alike exactly when these agree.
pub fn significant(sharding: &Sharding, mesh: &MeshShape) -> Sharding {
    Sharding {
        dims: sharding
            .dims
            .iter()
            .map(|axes| {
                axes.iter()
                    .filter(|a| mesh.axis_size(a) != Some(1))
                    .cloned()
                    .collect()
            })
            .collect(),
    }
}

/// The whole program.
pub struct Program<'c, 'a> {
    pub meshes: Vec<Mesh<'c, 'a>>,
    pub computations: Vec<Computation<'c, 'a>>,
    /// The `func.func @main` holding the dataflow graph.
    pub entry: OperationRef<'c, 'a>,
    mesh_index: FastMap<String, usize>,
    computation_index: FastMap<String, usize>,
}

impl<'c, 'a> Program<'c, 'a> {
    /// Reads the program's structure; reports every structural problem.
    pub fn read(module: &'a Module<'c>) -> Result<Self, Vec<Diag<'c>>> {
        let mut errors = Vec::new();
        let mut meshes = Vec::new();
        let mut computations = Vec::new();
        let mut entries = Vec::new();
        let module_op = module.as_operation();
        let mut next = module.body().first_operation();
        while let Some(op) = next {
            next = op.next_in_block();
            match op_name(&op).as_str() {
                ops::MESH => meshes.push(read_mesh(op)),
                ops::MODULE => match read_computation(op) {
                    Ok(c) => computations.push(c),
                    Err(e) => errors.push(e),
                },
                ops::FUNC => entries.push(op),
                other => errors.push(Diag::new(
                    op.location(),
                    Error::ForeignTopLevel {
                        op: other.to_owned(),
                    },
                )),
            }
        }
        let entry = match entries.as_slice() {
            [entry] if ops::string_attr(entry, ops::ATTR_SYM_NAME).as_deref() == Some("main") => {
                Some(*entry)
            }
            [] => {
                errors.push(Diag::new(module_op.location(), Error::NoEntry));
                None
            }
            [first, ..] => {
                let location = entries
                    .iter()
                    .find(|e| ops::string_attr(*e, ops::ATTR_SYM_NAME).as_deref() != Some("main"))
                    .or(entries.get(1))
                    .map_or(first.location(), |e| e.location());
                errors.push(Diag::new(location, Error::SeveralFunctions));
                None
            }
        };
        if let Some(entry) = entry {
            let blocks = entry.region(0).ok().map_or(0, |r| {
                std::iter::successors(r.first_block(), |b| b.next_in_region()).count()
            });
            if blocks != 1 {
                errors.push(Diag::new(entry.location(), Error::EntryBlocks { blocks }));
            }
        }
        match entry {
            Some(entry) if errors.is_empty() => {
                let mesh_index = meshes
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (m.name.clone(), i))
                    .collect();
                let computation_index = computations
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.name.clone(), i))
                    .collect();
                Ok(Self {
                    meshes,
                    computations,
                    entry,
                    mesh_index,
                    computation_index,
                })
            }
            _ => Err(errors),
        }
    }

    pub fn mesh(&self, name: &str) -> Option<&Mesh<'c, 'a>> {
        self.mesh_index.get(name).map(|&i| &self.meshes[i])
    }

    pub fn computation(&self, name: &str) -> Option<&Computation<'c, 'a>> {
        self.computation_index
            .get(name)
            .map(|&i| &self.computations[i])
    }

    /// The entry's single block, holding the program's ops.
    pub fn body(&self) -> Option<BlockRef<'c, 'a>> {
        self.entry.region(0).ok()?.first_block()
    }

    /// The program's inputs: the arguments of `@main`'s block.
    pub fn inputs(&self) -> Vec<Value<'c, 'a>> {
        let Some(body) = self.body() else {
            return Vec::new();
        };
        (0..body.argument_count())
            .filter_map(|i| body.argument(i).ok())
            .map(Value::from)
            .collect()
    }

    /// The ops of the body, in order (the terminator included).
    pub fn ops(&self) -> Vec<OperationRef<'c, 'a>> {
        let mut ops = Vec::new();
        let mut next = self.body().and_then(|b| b.first_operation());
        while let Some(op) = next {
            next = op.next_in_block();
            ops.push(op);
        }
        ops
    }

    pub fn location(&self) -> Location<'c> {
        self.entry.location()
    }
}

fn read_mesh<'c, 'a>(op: OperationRef<'c, 'a>) -> Mesh<'c, 'a> {
    let shape = mesh_shape(op);
    Mesh {
        name: ops::string_attr(&op, ops::ATTR_SYM_NAME).unwrap_or_default(),
        size: shape.checked_size().unwrap_or(0),
        shape,
        kind: ops::string_attr(&op, ops::ATTR_KIND),
        same_island_as: ops::symbol_attr(&op, ops::ATTR_SAME_ISLAND_AS),
        devices: ops::i64_array_attr(&op, ops::ATTR_DEVICES),
        op,
    }
}

fn mesh_shape(op: OperationRef) -> MeshShape {
    let names: Vec<String> = op
        .attribute(ops::ATTR_AXIS_NAMES)
        .ok()
        .and_then(ops::array_elements)
        .map(|a| a.into_iter().filter_map(ops::string_value).collect())
        .unwrap_or_default();
    let sizes = ops::i64_array_attr(&op, ops::ATTR_AXIS_SIZES).unwrap_or_default();
    MeshShape::new(names.into_iter().zip(sizes).collect())
}

fn read_computation<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Computation<'c, 'a>, Diag<'c>> {
    let location = op.location();
    let fail = |error: Error| Diag::new(location, error);
    let name = ops::string_attr(&op, ops::ATTR_SYM_NAME).ok_or(fail(Error::UnnamedComputation))?;
    let num_partitions = ops::integer_attr(&op, "mhlo.num_partitions").unwrap_or(1);
    if !(1..=MAX_MESH_DEVICES).contains(&num_partitions) {
        return Err(fail(Error::BadPartitions {
            name,
            value: num_partitions,
        }));
    }
    let body = op
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or_else(|| fail(Error::ComputationWithoutBody { name: name.clone() }))?;
    let (sdy_meshes, main) = scan_body(body)?;
    let main = main.ok_or_else(|| fail(Error::ComputationWithoutMain { name: name.clone() }))?;
    let (inputs, outputs, mut mesh_names) = signatures(main, &name)?;
    mesh_names.sort();
    mesh_names.dedup();
    let mesh = match mesh_names.as_slice() {
        [] => None,
        [one] => Some(sdy_meshes.get(one).cloned().ok_or_else(|| {
            fail(Error::UndeclaredSdyMesh {
                name: name.clone(),
                mesh: one.clone(),
            })
        })?),
        _ => return Err(fail(Error::SeveralSdyMeshes { name })),
    };
    let python = read_sidecar(&op, &name).map_err(fail)?;
    let computation = Computation {
        name,
        op,
        num_partitions,
        mesh,
        inputs,
        outputs,
        python,
    };
    check_mesh(&computation).map_err(fail)?;
    Ok(computation)
}

/// The Python function of a computation with a [`ops::ATTR_SIDECAR`]
/// attribute, checked.
fn read_sidecar(op: &OperationRef, name: &str) -> Result<Option<Vec<u8>>, Error> {
    use base64::Engine;
    let Some(text) = ops::string_attr(op, ops::ATTR_SIDECAR) else {
        return Ok(None);
    };
    let bad = |why: String| Error::BadSidecarFunction {
        name: name.to_owned(),
        why,
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|e| bad(format!("not base64: {e}")))?;
    pw_core::python::Function::decode(&bytes).map_err(|e| bad(e.to_string()))?;
    Ok(Some(bytes))
}

/// The `sdy.mesh` declarations of a computation's body, and its
/// `func.func @main`.
fn scan_body<'c, 'a>(
    body: BlockRef<'c, 'a>,
) -> Result<(HashMap<String, MeshShape>, Option<OperationRef<'c, 'a>>), Diag<'c>> {
    let mut sdy_meshes = HashMap::new();
    let mut main = None;
    let mut next = body.first_operation();
    while let Some(inner) = next {
        next = inner.next_in_block();
        match op_name(&inner).as_str() {
            "sdy.mesh" => {
                let mesh_name = ops::string_attr(&inner, ops::ATTR_SYM_NAME).unwrap_or_default();
                let text = inner
                    .attribute("mesh")
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                let shape = sdy::parse_mesh(&text)
                    .and_then(|shape| match shape.checked_size() {
                        Ok(_) => Ok(shape),
                        Err(e) => Err(e.to_string()),
                    })
                    .map_err(|reason| Diag::new(inner.location(), Error::BadSdyMesh { reason }))?;
                sdy_meshes.insert(mesh_name, shape);
            }
            ops::FUNC
                if ops::string_attr(&inner, ops::ATTR_SYM_NAME).as_deref() == Some("main") =>
            {
                main = Some(inner);
            }
            _ => {}
        }
    }
    Ok((sdy_meshes, main))
}

/// Arguments, results, and the Shardy meshes their shardings name.
type Signatures = (Vec<TensorSig>, Vec<TensorSig>, Vec<String>);

/// The argument and result signatures of computation `name`'s `@main`.
fn signatures<'c>(main: OperationRef<'c, '_>, name: &str) -> Result<Signatures, Diag<'c>> {
    let at_main = |error: Error| Diag::new(main.location(), error);
    let function = main
        .attribute(ops::ATTR_FUNCTION_TYPE)
        .ok()
        .and_then(|a| TypeAttribute::try_from(a).ok())
        .and_then(|t| FunctionType::try_from(t.value()).ok())
        .ok_or_else(|| at_main(Error::NoFunctionType))?;
    let mut mesh_names = Vec::new();
    let mut read_sigs = |types: Vec<Type<'c>>,
                         attrs: Option<melior::ir::Attribute<'c>>,
                         what: &'static str|
     -> Result<Vec<TensorSig>, Diag<'c>> {
        types
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let mut sig = tensor_sig(t).ok_or_else(|| {
                    at_main(Error::NotRankedTensor {
                        what,
                        index: i,
                        name: name.to_owned(),
                        ty: t.to_string(),
                    })
                })?;
                if let Some(text) = sharding_text(attrs, i) {
                    let parsed = sdy::parse_sharding(&text).map_err(|reason| {
                        at_main(Error::BadSdySharding {
                            what,
                            index: i,
                            reason,
                        })
                    })?;
                    mesh_names.push(parsed.mesh);
                    sig.sharding = Some(parsed.sharding);
                }
                Ok(sig)
            })
            .collect()
    };
    let inputs = read_sigs(
        (0..function.input_count())
            .filter_map(|i| function.input(i).ok())
            .collect(),
        main.attribute("arg_attrs").ok(),
        "argument",
    )?;
    let outputs = read_sigs(
        (0..function.result_count())
            .filter_map(|i| function.result(i).ok())
            .collect(),
        main.attribute("res_attrs").ok(),
        "result",
    )?;
    Ok((inputs, outputs, mesh_names))
}

/// A computation's Shardy mesh holds its partitions, and every sharding
/// of its signature fits its mesh.
fn check_mesh(c: &Computation) -> Result<(), Error> {
    let Some(shape) = &c.mesh else {
        return Ok(());
    };
    let devices = shape.size().unwrap_or(0);
    if devices != c.num_partitions {
        return Err(Error::PartitionsOfMesh {
            name: c.name.clone(),
            partitions: c.num_partitions,
            mesh: Box::new(shape.clone()),
            devices,
        });
    }
    for (what, sigs) in [("argument", &c.inputs), ("result", &c.outputs)] {
        for (i, sig) in sigs.iter().enumerate() {
            let Some(sharding) = &sig.sharding else {
                continue;
            };
            if let Err(error) = Tiling::new(&sig.shape, sharding, shape) {
                return Err(Error::SignatureShardingMisfit {
                    name: c.name.clone(),
                    sharding: sharding.clone(),
                    what,
                    index: i,
                    ty: sig.text.clone(),
                    mesh: Box::new(shape.clone()),
                    error: Box::new(error),
                });
            }
        }
    }
    Ok(())
}

fn tensor_sig(t: Type) -> Option<TensorSig> {
    let Tensor { shape, dtype } = Tensor::read(t)?;
    Some(TensorSig {
        shape,
        dtype,
        text: t.to_string(),
        sharding: None,
    })
}

/// The printed `sdy.sharding` of argument/result `index`, if any.
fn sharding_text(attrs: Option<melior::ir::Attribute>, index: usize) -> Option<String> {
    let array = ops::array_elements(attrs?)?;
    let dict = DictionaryAttribute::try_from(*array.get(index)?).ok()?;
    dict.element_by_name("sdy.sharding").map(|a| a.to_string())
}
