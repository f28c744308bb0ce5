//! `#pw.piece`: one box of bytes a physical copy moves.

use crate::ffi;
use melior::{
    ir::{attribute::ArrayAttribute, Attribute, AttributeLike},
    Context, StringRef,
};
use std::{fmt, slice};

/// The link a piece crosses, from cheapest to dearest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Link {
    /// Source and destination shard live on the same device: a local slice.
    SameDevice,
    /// Between two devices of one island (the fast interconnect).
    IntraIsland,
    /// Between islands (the data-center network).
    CrossIsland,
}

impl Link {
    pub const ALL: [Link; 3] = [Link::SameDevice, Link::IntraIsland, Link::CrossIsland];

    pub fn name(self) -> &'static str {
        match self {
            Link::SameDevice => "same_device",
            Link::IntraIsland => "intra_island",
            Link::CrossIsland => "cross_island",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The box `sizes` at `src_offsets` of the shard on `src_device` lands at
/// `dst_offsets` of the shard on `dst_device`. Offsets are shard-local.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub src_device: i64,
    pub src_offsets: Vec<i64>,
    pub dst_device: i64,
    pub dst_offsets: Vec<i64>,
    pub sizes: Vec<i64>,
    pub link: Link,
}

impl Piece {
    pub fn elements(&self) -> i64 {
        self.sizes.iter().product()
    }

    /// Reads a `#pw.piece` attribute.
    pub fn read(attr: Attribute) -> Option<Self> {
        let raw = attr.to_raw();
        // SAFETY: accessors are called only on a piece attribute; the arrays
        // they return have `rank` elements and live as long as the context.
        unsafe {
            if !ffi::pwAttributeIsAPiece(raw) {
                return None;
            }
            let rank = ffi::pwPieceAttrGetRank(raw) as usize;
            let array = |p: *const i64| {
                if rank == 0 || p.is_null() {
                    Vec::new()
                } else {
                    slice::from_raw_parts(p, rank).to_vec()
                }
            };
            let link = Link::from_name(&crate::ops::string_ref(ffi::pwPieceAttrGetLink(raw)))?;
            Some(Self {
                src_device: ffi::pwPieceAttrGetSrcDevice(raw),
                src_offsets: array(ffi::pwPieceAttrGetSrcOffsets(raw)),
                dst_device: ffi::pwPieceAttrGetDstDevice(raw),
                dst_offsets: array(ffi::pwPieceAttrGetDstOffsets(raw)),
                sizes: array(ffi::pwPieceAttrGetSizes(raw)),
                link,
            })
        }
    }

    /// Builds the `#pw.piece` attribute.
    pub fn to_mlir<'c>(&self, context: &'c Context) -> Attribute<'c> {
        let link = StringRef::new(self.link.name());
        // SAFETY: the three arrays have the same length, passed as the rank.
        unsafe {
            Attribute::from_raw(ffi::pwPieceAttrGet(
                context.to_raw(),
                self.src_device,
                self.src_offsets.as_ptr(),
                self.dst_device,
                self.dst_offsets.as_ptr(),
                self.sizes.as_ptr(),
                self.sizes.len() as isize,
                link.to_raw(),
            ))
        }
    }
}

/// Reads an array of `#pw.piece`s; `None` if any element is not a piece.
pub fn read_pieces(attr: Attribute) -> Option<Vec<Piece>> {
    crate::ops::array_elements(attr)?
        .into_iter()
        .map(Piece::read)
        .collect()
}

pub fn pieces_attribute<'c>(context: &'c Context, pieces: &[Piece]) -> Attribute<'c> {
    let elements: Vec<Attribute> = pieces.iter().map(|p| p.to_mlir(context)).collect();
    ArrayAttribute::new(context, &elements).into()
}
