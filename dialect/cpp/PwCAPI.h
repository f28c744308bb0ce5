/*===- PwCAPI.h - C API of the pw dialect ------------------------*- C -*-===*\
|*                                                                            *|
|* What the Rust side needs that the generic MLIR C API cannot reach: the    *|
|* dialect handle, and construction/inspection of pw types and attributes.   *|
|* Null attributes stand for absent optional parameters.                     *|
\*===----------------------------------------------------------------------===*/

#ifndef PW_CAPI_H
#define PW_CAPI_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Pw, pw);

/// Parses `source` as a module (top-level ops are wrapped in an implicit
/// module, as mlir-opt does); locations name `sourceName`. Null on failure,
/// after the errors went to the context's diagnostic handlers.
MLIR_CAPI_EXPORTED MlirModule pwParseSourceString(MlirContext ctx,
                                                  MlirStringRef source,
                                                  MlirStringRef sourceName);

/// Stops MLIR from attaching "see current operation" notes to diagnostics:
/// pw's diagnostics are located at the op already.
MLIR_CAPI_EXPORTED void pwContextQuietDiagnostics(MlirContext ctx);

/// Prints `op` into one buffer, then hands the whole text to `callback`
/// once (MLIR's own print calls back per token). `assumeVerified` skips the
/// verification MLIR otherwise runs before printing.
/// Writes `op` as MLIR bytecode (the current version) naming `producer` in
/// its header, and hands the bytes to `callback` once. Returns false if it
/// could not.
MLIR_CAPI_EXPORTED bool pwOperationWriteBytecode(MlirOperation op,
                                                 MlirStringRef producer,
                                                 MlirStringCallback callback,
                                                 void *userData);

MLIR_CAPI_EXPORTED void pwOperationPrint(MlirOperation op, bool generic,
                                         bool assumeVerified,
                                         MlirStringCallback callback,
                                         void *userData);

/// Severity codes of pwEmitDiagnostic.
enum PwSeverity { PwError = 0, PwWarning = 1, PwRemark = 2 };

/// Emits a diagnostic through the context's handlers, with an optional note
/// (pass a null location to omit it).
MLIR_CAPI_EXPORTED void pwEmitDiagnostic(MlirLocation loc, int severity,
                                         MlirStringRef message,
                                         MlirLocation noteLoc,
                                         MlirStringRef note);

MLIR_CAPI_EXPORTED bool pwTypeIsAArray(MlirType type);
MLIR_CAPI_EXPORTED MlirType pwArrayTypeGet(MlirType tensor, MlirAttribute mesh,
                                           MlirAttribute sharding);
MLIR_CAPI_EXPORTED MlirType pwArrayTypeGetTensor(MlirType type);
MLIR_CAPI_EXPORTED MlirAttribute pwArrayTypeGetMesh(MlirType type);
MLIR_CAPI_EXPORTED MlirAttribute pwArrayTypeGetSharding(MlirType type);

MLIR_CAPI_EXPORTED bool pwAttributeIsAPiece(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute
pwPieceAttrGet(MlirContext ctx, int64_t srcDevice, const int64_t *srcOffsets,
               int64_t dstDevice, const int64_t *dstOffsets,
               const int64_t *sizes, intptr_t rank, MlirStringRef link);
MLIR_CAPI_EXPORTED intptr_t pwPieceAttrGetRank(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t pwPieceAttrGetSrcDevice(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t pwPieceAttrGetDstDevice(MlirAttribute attr);
MLIR_CAPI_EXPORTED const int64_t *pwPieceAttrGetSrcOffsets(MlirAttribute attr);
MLIR_CAPI_EXPORTED const int64_t *pwPieceAttrGetDstOffsets(MlirAttribute attr);
MLIR_CAPI_EXPORTED const int64_t *pwPieceAttrGetSizes(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirStringRef pwPieceAttrGetLink(MlirAttribute attr);

#ifdef __cplusplus
}
#endif

#endif // PW_CAPI_H
