//! Declarations of the dialect's C API (`cpp/PwCAPI.h`), compiled by build.rs.

use mlir_sys::{
    MlirAttribute, MlirContext, MlirDialectHandle, MlirLocation, MlirModule, MlirOperation,
    MlirStringCallback, MlirStringRef, MlirType,
};

/// `PwError` of `PwSeverity` in PwCAPI.h.
pub const SEVERITY_ERROR: i32 = 0;

extern "C" {
    pub fn mlirGetDialectHandle__pw__() -> MlirDialectHandle;

    pub fn pwParseSourceString(
        ctx: MlirContext,
        source: MlirStringRef,
        source_name: MlirStringRef,
    ) -> MlirModule;
    pub fn pwContextQuietDiagnostics(ctx: MlirContext);
    pub fn pwOperationWriteBytecode(
        op: MlirOperation,
        producer: MlirStringRef,
        callback: MlirStringCallback,
        user_data: *mut std::ffi::c_void,
    ) -> bool;
    pub fn pwOperationPrint(
        op: MlirOperation,
        generic: bool,
        assume_verified: bool,
        callback: MlirStringCallback,
        user_data: *mut std::ffi::c_void,
    );
    pub fn pwEmitDiagnostic(
        loc: MlirLocation,
        severity: i32,
        message: MlirStringRef,
        note_loc: MlirLocation,
        note: MlirStringRef,
    );

    pub fn pwTypeIsAArray(t: MlirType) -> bool;
    pub fn pwArrayTypeGet(
        tensor: MlirType,
        mesh: MlirAttribute,
        sharding: MlirAttribute,
    ) -> MlirType;
    pub fn pwArrayTypeGetTensor(t: MlirType) -> MlirType;
    pub fn pwArrayTypeGetMesh(t: MlirType) -> MlirAttribute;
    pub fn pwArrayTypeGetSharding(t: MlirType) -> MlirAttribute;

    pub fn pwAttributeIsAPiece(a: MlirAttribute) -> bool;
    #[allow(clippy::too_many_arguments)]
    pub fn pwPieceAttrGet(
        ctx: MlirContext,
        src_device: i64,
        src_offsets: *const i64,
        dst_device: i64,
        dst_offsets: *const i64,
        sizes: *const i64,
        rank: isize,
        link: MlirStringRef,
    ) -> MlirAttribute;
    pub fn pwPieceAttrGetRank(a: MlirAttribute) -> isize;
    pub fn pwPieceAttrGetSrcDevice(a: MlirAttribute) -> i64;
    pub fn pwPieceAttrGetDstDevice(a: MlirAttribute) -> i64;
    pub fn pwPieceAttrGetSrcOffsets(a: MlirAttribute) -> *const i64;
    pub fn pwPieceAttrGetDstOffsets(a: MlirAttribute) -> *const i64;
    pub fn pwPieceAttrGetSizes(a: MlirAttribute) -> *const i64;
    pub fn pwPieceAttrGetLink(a: MlirAttribute) -> MlirStringRef;
}
