//! What reading a program learns, kept for the verifier and the passes.
//!
//! An [`Analysis`] is a [`Program`] (meshes, computations, entry) plus
//! tables of what its ops refer to, each read once: MLIR uniques types and
//! attributes, so every distinct `!pw.array` type is read, size-checked and
//! laid out on its mesh once ([`ArrayInfo`]), and every distinct
//! `in_shardings` or `pieces` attribute is decoded once, however many ops
//! use it. The verifier builds one ([`crate::verify::verify`]); the passes
//! get it from the pipeline and read the program through it.
//!
//! The tables fill lazily, so an analysis stays valid while a pass adds
//! types (a new type is read when first asked for); it describes the meshes
//! and computations as they were read, so a pass that declares a mesh
//! reads the program again before relying on it.

use crate::{
    array_type::{ArrayType, TypeError},
    diag::Diag,
    error::Error,
    ops,
    piece::read_pieces,
    program::Program,
};
use melior::ir::{
    operation::{OperationLike, OperationRef},
    Attribute, AttributeLike, Module, Type, TypeLike, Value, ValueLike,
};
use pw_core::{
    geometry::{LayoutError, Sharding, Tiling},
    Piece,
};
use std::{
    cell::{OnceCell, RefCell},
    collections::HashMap,
    hash::{BuildHasherDefault, Hasher},
    rc::Rc,
};

/// A `!pw.array` type, read and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayInfo {
    pub ty: ArrayType,
    /// Bytes of the logical array (at most `i64::MAX`).
    pub bytes: u64,
    /// How the array is cut on its mesh, once placed and sharded on a
    /// mesh the program declares.
    pub tiling: Option<Tiling>,
    /// Whether the program declares its mesh (true when unplaced).
    pub mesh_declared: bool,
}

impl ArrayInfo {
    /// Bytes of one shard (0 unless placed and sharded).
    pub fn shard_bytes(&self) -> u64 {
        self.tiling
            .as_ref()
            .and_then(Tiling::shard_elements)
            .map_or(0, |e| e as u64 * self.ty.dtype.size_in_bytes() as u64)
    }
}

/// Why a type is not a usable array (the caller says whose type it is).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrayProblem {
    Type(TypeError),
    Misfit {
        sharding: Sharding,
        mesh: String,
        error: LayoutError,
    },
    TooLarge,
}

impl ArrayProblem {
    /// The error, for the value described by `what`.
    pub fn at(&self, what: &str, ty: &str) -> Error {
        let what = what.to_owned();
        match self {
            ArrayProblem::Type(error) => Error::Type {
                what,
                error: error.clone(),
            },
            ArrayProblem::Misfit {
                sharding,
                mesh,
                error,
            } => Error::ShardingMisfit {
                what,
                sharding: sharding.clone(),
                ty: ty.to_owned(),
                mesh: mesh.clone(),
                error: Box::new(error.clone()),
            },
            ArrayProblem::TooLarge => Error::ArrayTooLarge {
                what,
                ty: ty.to_owned(),
            },
        }
    }
}

/// Hashes the pointer keys of MLIR's objects (and short strings) faster
/// than the default hasher; pw never hashes untrusted keys it does not
/// also bound.
#[derive(Default)]
pub struct PointerHasher(u64);

impl Hasher for PointerHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_usize(&mut self, n: usize) {
        // Fibonacci hashing: pointers differ in their middle bits.
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map hashed with [`PointerHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<PointerHasher>>;

/// A map keyed by the address of an MLIR object (a value, type, attribute
/// or op).
pub type PointerMap<V> = FastMap<usize, V>;

type Table<V> = RefCell<PointerMap<V>>;

/// See the module documentation.
pub struct Analysis<'c, 'a> {
    pub program: Program<'c, 'a>,
    ops: OnceCell<Vec<OperationRef<'c, 'a>>>,
    arrays: Table<Result<Rc<ArrayInfo>, ArrayProblem>>,
    in_shardings: Table<Option<Rc<Vec<Sharding>>>>,
    pieces: Table<Option<Rc<Vec<Piece>>>>,
}

impl<'c, 'a> Analysis<'c, 'a> {
    /// Reads the program's structure (see [`Program::read`]); the tables
    /// start empty.
    pub fn read(module: &'a Module<'c>) -> Result<Self, Vec<Diag<'c>>> {
        Ok(Self {
            program: Program::read(module)?,
            ops: OnceCell::new(),
            arrays: Table::default(),
            in_shardings: Table::default(),
            pieces: Table::default(),
        })
    }

    /// The ops of the body, in order (the terminator included), as they
    /// were when first asked for: a pass that erases or moves ops and then
    /// walks the body again uses [`Program::ops`].
    pub fn ops(&self) -> &[OperationRef<'c, 'a>] {
        self.ops.get_or_init(|| self.program.ops())
    }

    /// The array type `t`, read once.
    pub fn array(&self, t: Type<'c>) -> Result<Rc<ArrayInfo>, ArrayProblem> {
        let key = t.to_raw().ptr as usize;
        if let Some(known) = self.arrays.borrow().get(&key) {
            return known.clone();
        }
        let info = self.read_array(t).map(Rc::new);
        self.arrays.borrow_mut().insert(key, info.clone());
        info
    }

    /// The array type of `value`.
    pub fn value(&self, value: Value<'c, '_>) -> Result<Rc<ArrayInfo>, ArrayProblem> {
        self.array(value.r#type())
    }

    fn read_array(&self, t: Type<'c>) -> Result<ArrayInfo, ArrayProblem> {
        let ty = ArrayType::read(t).map_err(ArrayProblem::Type)?;
        let bytes = ty.bytes().ok_or(ArrayProblem::TooLarge)?;
        let mesh = ty.mesh.as_deref().and_then(|name| self.program.mesh(name));
        let tiling = match (mesh, &ty.sharding) {
            (Some(mesh), Some(sharding)) => Some(
                Tiling::new(&ty.shape, sharding, &mesh.shape).map_err(|error| {
                    ArrayProblem::Misfit {
                        sharding: sharding.clone(),
                        mesh: mesh.name.clone(),
                        error,
                    }
                })?,
            ),
            _ => None,
        };
        Ok(ArrayInfo {
            mesh_declared: ty.mesh.is_none() || mesh.is_some(),
            ty,
            bytes,
            tiling,
        })
    }

    /// The `in_shardings` of a call, decoded once per distinct attribute:
    /// `None` when absent, `Some(None)` when malformed.
    pub fn in_shardings<'o>(
        &self,
        op: &impl OperationLike<'c, 'o>,
    ) -> Option<Option<Rc<Vec<Sharding>>>>
    where
        'c: 'o,
    {
        let attr = op.attribute(ops::ATTR_IN_SHARDINGS).ok()?;
        Some(cached(&self.in_shardings, attr, ops::read_in_shardings))
    }

    /// The `pieces` of a piece op, decoded once per distinct attribute;
    /// `None` when absent or malformed.
    pub fn pieces<'o>(&self, op: &impl OperationLike<'c, 'o>) -> Option<Rc<Vec<Piece>>>
    where
        'c: 'o,
    {
        let attr = op.attribute(ops::ATTR_PIECES).ok()?;
        cached(&self.pieces, attr, read_pieces)
    }
}

/// Looks `attr` up in `table`, decoding it on the first look.
fn cached<'c, T>(
    table: &Table<Option<Rc<T>>>,
    attr: Attribute<'c>,
    decode: impl FnOnce(Attribute<'c>) -> Option<T>,
) -> Option<Rc<T>> {
    let key = attr.to_raw().ptr as usize;
    if let Some(known) = table.borrow().get(&key) {
        return known.clone();
    }
    let value = decode(attr).map(Rc::new);
    table.borrow_mut().insert(key, value.clone());
    value
}
