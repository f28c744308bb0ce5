//! `#pw.piece`: one box of bytes a physical copy moves, as an attribute.
//!
//! The plain [`Piece`] lives in `pw-core`; this module reads and builds its
//! MLIR form.

use crate::ffi;
use melior::{
    ir::{attribute::ArrayAttribute, Attribute, AttributeLike},
    Context, StringRef,
};
use pw_core::{Link, Piece};
use std::slice;

/// Reads a `#pw.piece` attribute.
pub fn read_piece(attr: Attribute) -> Option<Piece> {
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
        Some(Piece {
            src_device: ffi::pwPieceAttrGetSrcDevice(raw),
            src_offsets: array(ffi::pwPieceAttrGetSrcOffsets(raw)),
            dst_device: ffi::pwPieceAttrGetDstDevice(raw),
            dst_offsets: array(ffi::pwPieceAttrGetDstOffsets(raw)),
            sizes: array(ffi::pwPieceAttrGetSizes(raw)),
            link,
        })
    }
}

/// Builds the `#pw.piece` attribute of `piece`.
pub fn piece_attribute<'c>(context: &'c Context, piece: &Piece) -> Attribute<'c> {
    let link = StringRef::new(piece.link.name());
    // SAFETY: the three arrays have the same length, passed as the rank.
    unsafe {
        Attribute::from_raw(ffi::pwPieceAttrGet(
            context.to_raw(),
            piece.src_device,
            piece.src_offsets.as_ptr(),
            piece.dst_device,
            piece.dst_offsets.as_ptr(),
            piece.sizes.as_ptr(),
            piece.sizes.len() as isize,
            link.to_raw(),
        ))
    }
}

/// Reads an array of `#pw.piece`s; `None` if any element is not a piece.
pub fn read_pieces(attr: Attribute) -> Option<Vec<Piece>> {
    crate::ops::array_elements(attr)?
        .into_iter()
        .map(read_piece)
        .collect()
}

pub fn pieces_attribute<'c>(context: &'c Context, pieces: &[Piece]) -> Attribute<'c> {
    let elements: Vec<Attribute> = pieces.iter().map(|p| piece_attribute(context, p)).collect();
    ArrayAttribute::new(context, &elements).into()
}
