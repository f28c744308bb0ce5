//===- PwDialect.td - the pw dialect: ops, types, attributes --------------===//
//
// The declarative half of the dialect. Everything here is structure and
// syntax; whole-program meaning (signatures, meshes, divisibility, transfer
// plans) is checked by the Rust verifier in dialect/src/verify/.
//
// See docs/dialect.md for the reference of every op, type and attribute.
//
//===----------------------------------------------------------------------===//

#ifndef PW_DIALECT_TD
#define PW_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def PW_Dialect : Dialect {
  let name = "pw";
  let cppNamespace = "::pw";
  let summary = "Single-controller dataflow programs of compiled computations";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def PW_ArrayType : TypeDef<PW_Dialect, "Array"> {
  let mnemonic = "array";
  let summary = "a logical (possibly sharded) array";
  let parameters = (ins
    "::mlir::RankedTensorType":$tensor,
    OptionalParameter<"::mlir::FlatSymbolRefAttr">:$mesh,
    OptionalParameter<"::mlir::ArrayAttr">:$sharding
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def PW_PieceAttr : AttrDef<PW_Dialect, "Piece"> {
  let mnemonic = "piece";
  let summary = "one box of bytes moved from a source shard to a destination shard";
  let parameters = (ins
    "int64_t":$src_device,
    ArrayRefParameter<"int64_t">:$src_offsets,
    "int64_t":$dst_device,
    ArrayRefParameter<"int64_t">:$dst_offsets,
    ArrayRefParameter<"int64_t">:$sizes,
    StringRefParameter<>:$link
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

class PW_Op<string mnemonic, list<Trait> traits = []>
    : Op<PW_Dialect, mnemonic, traits>;

def PW_Array : Type<CPred<"::llvm::isa<::pw::ArrayType>($_self)">,
                     "pw array", "::pw::ArrayType">;

def PW_PiecesAttr : TypedArrayAttrBase<PW_PieceAttr, "array of pieces">;

def PW_MeshOp : PW_Op<"mesh", [Symbol]> {
  let summary = "declares a virtual mesh of devices";
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    StrArrayAttr:$axis_names,
    DenseI64ArrayAttr:$axis_sizes,
    OptionalAttr<StrAttr>:$kind,
    OptionalAttr<FlatSymbolRefAttr>:$same_island_as,
    OptionalAttr<DenseI64ArrayAttr>:$devices
  );
  let assemblyFormat = [{
    $sym_name custom<MeshAxes>($axis_names, $axis_sizes) attr-dict
  }];
}

def PW_CallOp : PW_Op<"call", [Pure]> {
  let summary = "runs one compiled computation";
  let arguments = (ins
    FlatSymbolRefAttr:$callee,
    Variadic<PW_Array>:$args,
    OptionalAttr<FlatSymbolRefAttr>:$mesh,
    OptionalAttr<ArrayAttr>:$in_shardings
  );
  let results = (outs Variadic<PW_Array>:$results);
  let assemblyFormat = [{
    $callee `(` $args `)` (`on` $mesh^)? attr-dict `:` functional-type($args, $results)
  }];
}

class PW_UnaryArrayOp<string mnemonic> : PW_Op<mnemonic, [Pure]> {
  let arguments = (ins PW_Array:$input);
  let results = (outs PW_Array:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
}

def PW_TransferOp : PW_UnaryArrayOp<"transfer"> {
  let summary = "moves a logical array to another mesh";
}

def PW_ReshardOp : PW_UnaryArrayOp<"reshard"> {
  let summary = "changes the sharding of a logical array within its mesh";
}

class PW_PieceOp<string mnemonic> : PW_Op<mnemonic, [Pure]> {
  let arguments = (ins PW_Array:$input, PW_PiecesAttr:$pieces);
  let results = (outs PW_Array:$result);
  let assemblyFormat = [{
    $input $pieces attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
}

def PW_CopyOp : PW_PieceOp<"copy"> {
  let summary = "one piece of a source shard becomes one whole destination shard";
}

def PW_ScatterOp : PW_PieceOp<"scatter"> {
  let summary = "pieces of one source shard become several whole destination shards";
}

def PW_GatherOp : PW_PieceOp<"gather"> {
  let summary = "pieces of several source shards become one whole destination shard";
}

def PW_AssembleOp : PW_Op<"assemble", [Pure]> {
  let summary = "joins the destination shards written by copies into one array";
  let arguments = (ins Variadic<PW_Array>:$parts);
  let results = (outs PW_Array:$result);
  let assemblyFormat = [{
    $parts attr-dict `:` qualified(type($parts)) `->` qualified(type($result))
  }];
}

#endif // PW_DIALECT_TD
