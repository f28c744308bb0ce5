//! Printing ops to text.
//!
//! MLIR verifies an op again before printing it unless told the op is
//! verified; pw verifies every program it prints (after parsing and after
//! each pass), so [`print`] says so, and collects the text in one buffer.

use crate::ffi;
use melior::ir::operation::{OperationLike, OperationRef};
use mlir_sys::{
    mlirOperationClone, mlirOperationDestroy, mlirOperationRemoveAttributeByName, MlirStringRef,
};
use std::ffi::c_void;

/// How to print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrintOptions {
    /// Every op in MLIR's generic form.
    pub generic: bool,
    /// The op passed MLIR's verifier (skips the verification MLIR would
    /// otherwise run first).
    pub verified: bool,
}

/// The text of `op`.
pub fn print<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, options: PrintOptions) -> String {
    let mut out: Vec<u8> = Vec::new();
    // SAFETY: the op is live; the callback gets `out` as its user data and
    // only appends to it.
    unsafe {
        ffi::pwOperationPrint(
            op.to_raw(),
            options.generic,
            options.verified,
            Some(append),
            &mut out as *mut Vec<u8> as *mut c_void,
        );
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Appends a C API string to the `Vec<u8>` that `data` points at.
pub(crate) unsafe extern "C" fn append(text: MlirStringRef, data: *mut c_void) {
    // SAFETY: `data` is the Vec<u8> of `print`; a non-null string points at
    // `length` bytes.
    unsafe {
        let out = &mut *(data as *mut Vec<u8>);
        if !text.data.is_null() && text.length > 0 {
            out.extend_from_slice(std::slice::from_raw_parts(
                text.data as *const u8,
                text.length,
            ));
        }
    }
}

/// The generic-form text of `op` without the attributes `without`; the op
/// itself is not changed (a copy is printed).
pub fn print_without(op: OperationRef, without: &[&str]) -> String {
    // SAFETY: the clone is a new, detached op owned here; it is destroyed
    // after printing.
    unsafe {
        let copy = mlirOperationClone(op.to_raw());
        for name in without {
            mlirOperationRemoveAttributeByName(copy, melior::StringRef::new(name).to_raw());
        }
        let text = print(
            &OperationRef::from_raw(copy),
            PrintOptions {
                generic: true,
                verified: true,
            },
        );
        mlirOperationDestroy(copy);
        text
    }
}
