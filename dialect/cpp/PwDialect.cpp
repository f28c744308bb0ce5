//===- PwDialect.cpp - the pw dialect and its C API ------------------------===//
//
// Syntax and structure only; the Rust verifier owns program-level meaning.
//
//===----------------------------------------------------------------------===//

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include "PwCAPI.h"

namespace pw {} // namespace pw

#include "PwDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "PwTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "PwAttrs.h.inc"

#define GET_OP_CLASSES
#include "PwOps.h.inc"

using namespace mlir;

#include "PwDialect.cpp.inc"

namespace pw {

void PWDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "PwTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "PwAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "PwOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Sharding syntax: [{"x"}, {}, {"y", "z"}], one brace group per dimension.
//===----------------------------------------------------------------------===//

static ParseResult parseSharding(AsmParser &parser, ArrayAttr &sharding) {
  SmallVector<Attribute> dims;
  auto parseDim = [&]() -> ParseResult {
    SmallVector<Attribute> axes;
    if (parser.parseLBrace())
      return failure();
    if (succeeded(parser.parseOptionalRBrace())) {
      dims.push_back(parser.getBuilder().getArrayAttr(axes));
      return success();
    }
    auto parseAxis = [&]() -> ParseResult {
      std::string axis;
      if (parser.parseString(&axis))
        return failure();
      axes.push_back(parser.getBuilder().getStringAttr(axis));
      return success();
    };
    if (parser.parseCommaSeparatedList(parseAxis) || parser.parseRBrace())
      return failure();
    dims.push_back(parser.getBuilder().getArrayAttr(axes));
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
    return failure();
  sharding = parser.getBuilder().getArrayAttr(dims);
  return success();
}


//===----------------------------------------------------------------------===//
// !pw.array<8x16xf32[, @mesh[, [{"x"}, {}]]]>
//===----------------------------------------------------------------------===//

Type ArrayType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  FlatSymbolRefAttr mesh;
  ArrayAttr sharding;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    StringAttr name;
    if (parser.parseSymbolName(name))
      return {};
    mesh = FlatSymbolRefAttr::get(name);
    if (succeeded(parser.parseOptionalComma()) &&
        parseSharding(parser, sharding))
      return {};
  }
  if (parser.parseGreater())
    return {};
  if (!RankedTensorType::isValidElementType(elementType)) {
    parser.emitError(loc, "invalid array element type ") << elementType;
    return {};
  }
  return parser.getChecked<ArrayType>(
      loc, parser.getContext(), RankedTensorType::get(shape, elementType),
      mesh, sharding);
}

// Printing one program prints each of its (uniqued) types and pieces many
// times: while pwOperationPrint runs, their text is made once and reused.
namespace {
thread_local llvm::DenseMap<const void *, std::string> *printed = nullptr;

// MLIR's own rule for symbol names printed without quotes.
bool isBareIdentifier(StringRef name) {
  if (name.empty() || (!llvm::isAlpha(name[0]) && name[0] != '_'))
    return false;
  return llvm::all_of(name.drop_front(), [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
  });
}

void printQuoted(raw_ostream &os, StringRef text) {
  os << '"';
  llvm::printEscapedString(text, os);
  os << '"';
}

// Prints `text()` once per object while a print is running.
template <typename Render>
void printOnce(raw_ostream &os, const void *key, Render render) {
  if (!printed) {
    render(os);
    return;
  }
  auto [it, inserted] = printed->try_emplace(key);
  if (inserted) {
    llvm::raw_string_ostream text(it->second);
    render(text);
  }
  os << it->second;
}
} // namespace

void ArrayType::print(AsmPrinter &printer) const {
  printOnce(printer.getStream(), getAsOpaquePointer(), [&](raw_ostream &os) {
    os << '<';
    for (int64_t dim : getTensor().getShape())
      os << dim << 'x';
    getTensor().getElementType().print(os);
    if (getMesh()) {
      os << ", @";
      StringRef name = getMesh().getValue();
      if (isBareIdentifier(name))
        os << name;
      else
        printQuoted(os, name);
      if (getSharding()) {
        os << ", [";
        llvm::interleaveComma(getSharding(), os, [&](Attribute dim) {
          os << '{';
          if (auto axes = llvm::dyn_cast<ArrayAttr>(dim))
            llvm::interleaveComma(axes, os, [&](Attribute axis) {
              if (auto name = llvm::dyn_cast<StringAttr>(axis))
                printQuoted(os, name.getValue());
              else
                axis.print(os);
            });
          os << '}';
        });
        os << ']';
      }
    }
    os << '>';
  });
}

LogicalResult
ArrayType::verify(function_ref<InFlightDiagnostic()> emitError,
                  RankedTensorType tensor, FlatSymbolRefAttr mesh,
                  ArrayAttr sharding) {
  if (!tensor.hasStaticShape())
    return emitError() << "array shape must be static";
  if (sharding && !mesh)
    return emitError() << "a sharding needs a mesh";
  if (!sharding)
    return success();
  if (static_cast<int64_t>(sharding.size()) != tensor.getRank())
    return emitError() << "sharding has " << sharding.size()
                       << " dimensions but the array has rank "
                       << tensor.getRank();
  for (Attribute dim : sharding) {
    auto axes = llvm::dyn_cast<ArrayAttr>(dim);
    if (!axes || !llvm::all_of(axes, [](Attribute a) {
          return llvm::isa<StringAttr>(a);
        }))
      return emitError() << "each sharding dimension must list axis names";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// #pw.piece<SRC [offsets] -> DST [offsets] size [sizes] LINK>
//===----------------------------------------------------------------------===//

static ParseResult parseIndexList(AsmParser &parser,
                                  SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t value;
        if (parser.parseInteger(value))
          return failure();
        values.push_back(value);
        return success();
      });
}


static bool isLink(StringRef link) {
  return link == "same_device" || link == "intra_island" ||
         link == "cross_island";
}

Attribute PieceAttr::parse(AsmParser &parser, Type) {
  int64_t src = 0, dst = 0;
  SmallVector<int64_t> srcOffsets, dstOffsets, sizes;
  StringRef link;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseInteger(src) ||
      parseIndexList(parser, srcOffsets) || parser.parseArrow() ||
      parser.parseInteger(dst) || parseIndexList(parser, dstOffsets) ||
      parser.parseKeyword("size") || parseIndexList(parser, sizes) ||
      parser.parseKeyword(&link) || parser.parseGreater())
    return {};
  return parser.getChecked<PieceAttr>(loc, parser.getContext(), src,
                                      srcOffsets, dst, dstOffsets, sizes,
                                      link);
}

void PieceAttr::print(AsmPrinter &printer) const {
  printOnce(printer.getStream(), getAsOpaquePointer(), [&](raw_ostream &os) {
    auto list = [&](ArrayRef<int64_t> values) {
      os << '[';
      llvm::interleaveComma(values, os);
      os << ']';
    };
    os << '<' << getSrcDevice() << ' ';
    list(getSrcOffsets());
    os << " -> " << getDstDevice() << ' ';
    list(getDstOffsets());
    os << " size ";
    list(getSizes());
    os << ' ' << getLink() << '>';
  });
}

LogicalResult PieceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t src, ArrayRef<int64_t> srcOffsets,
                                int64_t dst, ArrayRef<int64_t> dstOffsets,
                                ArrayRef<int64_t> sizes, StringRef link) {
  if (src < 0 || dst < 0)
    return emitError() << "device ids must be non-negative";
  if (srcOffsets.size() != sizes.size() || dstOffsets.size() != sizes.size())
    return emitError() << "piece offsets and sizes must have the same rank";
  if (llvm::any_of(srcOffsets, [](int64_t v) { return v < 0; }) ||
      llvm::any_of(dstOffsets, [](int64_t v) { return v < 0; }) ||
      llvm::any_of(sizes, [](int64_t v) { return v < 0; }))
    return emitError() << "piece offsets and sizes must be >= 0";
  if (!isLink(link))
    return emitError() << "unknown link '" << link
                       << "' (expected same_device, intra_island or "
                          "cross_island)";
  return success();
}

} // namespace pw

//===----------------------------------------------------------------------===//
// Mesh axes syntax: ["x"=2, "y"=4]
//===----------------------------------------------------------------------===//

static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &names,
                                 DenseI64ArrayAttr &sizes) {
  SmallVector<Attribute> nameAttrs;
  SmallVector<int64_t> sizeValues;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            std::string name;
            int64_t size;
            if (parser.parseString(&name) || parser.parseEqual() ||
                parser.parseInteger(size))
              return failure();
            nameAttrs.push_back(parser.getBuilder().getStringAttr(name));
            sizeValues.push_back(size);
            return success();
          }))
    return failure();
  names = parser.getBuilder().getArrayAttr(nameAttrs);
  sizes = parser.getBuilder().getDenseI64ArrayAttr(sizeValues);
  return success();
}

static void printMeshAxes(OpAsmPrinter &printer, Operation *, ArrayAttr names,
                          DenseI64ArrayAttr sizes) {
  printer << '[';
  for (auto [i, name] : llvm::enumerate(names)) {
    if (i)
      printer << ", ";
    printer.printAttribute(name);
    printer << '=';
    if (i < static_cast<size_t>(sizes.size()))
      printer << sizes[i];
  }
  printer << ']';
}

#define GET_TYPEDEF_CLASSES
#include "PwTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "PwAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "PwOps.cpp.inc"

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Pw, pw, pw::PWDialect)

MlirModule pwParseSourceString(MlirContext ctx, MlirStringRef source,
                               MlirStringRef sourceName) {
  ParserConfig config(unwrap(ctx));
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(unwrap(source), config, unwrap(sourceName));
  return wrap(module.release());
}

void pwOperationPrint(MlirOperation op, bool generic, bool assumeVerified,
                      MlirStringCallback callback, void *userData) {
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  if (assumeVerified)
    flags.assumeVerified();
  llvm::DenseMap<const void *, std::string> cache;
  pw::printed = &cache;
  std::string text;
  llvm::raw_string_ostream os(text);
  unwrap(op)->print(os, flags);
  os.flush();
  pw::printed = nullptr;
  callback(mlirStringRefCreate(text.data(), text.size()), userData);
}

bool pwOperationWriteBytecode(MlirOperation op, MlirStringRef producer,
                              MlirStringCallback callback, void *userData) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  BytecodeWriterConfig config(unwrap(producer));
  if (failed(writeBytecodeToFile(unwrap(op), os, config)))
    return false;
  os.flush();
  callback(mlirStringRefCreate(bytes.data(), bytes.size()), userData);
  return true;
}

void pwContextQuietDiagnostics(MlirContext ctx) {
  unwrap(ctx)->printOpOnDiagnostic(false);
  unwrap(ctx)->printStackTraceOnDiagnostic(false);
}

void pwEmitDiagnostic(MlirLocation loc, int severity, MlirStringRef message,
                      MlirLocation noteLoc, MlirStringRef note) {
  Location location = unwrap(loc);
  InFlightDiagnostic diag = severity == PwWarning ? emitWarning(location)
                            : severity == PwRemark ? emitRemark(location)
                                                   : emitError(location);
  diag << unwrap(message);
  if (!mlirLocationIsNull(noteLoc))
    diag.attachNote(unwrap(noteLoc)) << unwrap(note);
}

bool pwTypeIsAArray(MlirType type) {
  return llvm::isa<pw::ArrayType>(unwrap(type));
}

MlirType pwArrayTypeGet(MlirType tensor, MlirAttribute mesh,
                        MlirAttribute sharding) {
  auto tensorType = llvm::cast<RankedTensorType>(unwrap(tensor));
  FlatSymbolRefAttr meshAttr =
      mlirAttributeIsNull(mesh)
          ? FlatSymbolRefAttr()
          : llvm::cast<FlatSymbolRefAttr>(unwrap(mesh));
  ArrayAttr shardingAttr = mlirAttributeIsNull(sharding)
                               ? ArrayAttr()
                               : llvm::cast<ArrayAttr>(unwrap(sharding));
  return wrap(pw::ArrayType::get(tensorType.getContext(), tensorType, meshAttr,
                                 shardingAttr));
}

MlirType pwArrayTypeGetTensor(MlirType type) {
  return wrap(llvm::cast<pw::ArrayType>(unwrap(type)).getTensor());
}

MlirAttribute pwArrayTypeGetMesh(MlirType type) {
  return wrap(llvm::cast<pw::ArrayType>(unwrap(type)).getMesh());
}

MlirAttribute pwArrayTypeGetSharding(MlirType type) {
  return wrap(llvm::cast<pw::ArrayType>(unwrap(type)).getSharding());
}

bool pwAttributeIsAPiece(MlirAttribute attr) {
  return llvm::isa<pw::PieceAttr>(unwrap(attr));
}

MlirAttribute pwPieceAttrGet(MlirContext ctx, int64_t srcDevice,
                             const int64_t *srcOffsets, int64_t dstDevice,
                             const int64_t *dstOffsets, const int64_t *sizes,
                             intptr_t rank, MlirStringRef link) {
  return wrap(pw::PieceAttr::get(
      unwrap(ctx), srcDevice, llvm::ArrayRef<int64_t>(srcOffsets, rank),
      dstDevice, llvm::ArrayRef<int64_t>(dstOffsets, rank),
      llvm::ArrayRef<int64_t>(sizes, rank), unwrap(link)));
}

static pw::PieceAttr piece(MlirAttribute attr) {
  return llvm::cast<pw::PieceAttr>(unwrap(attr));
}

intptr_t pwPieceAttrGetRank(MlirAttribute attr) {
  return piece(attr).getSizes().size();
}
int64_t pwPieceAttrGetSrcDevice(MlirAttribute attr) {
  return piece(attr).getSrcDevice();
}
int64_t pwPieceAttrGetDstDevice(MlirAttribute attr) {
  return piece(attr).getDstDevice();
}
const int64_t *pwPieceAttrGetSrcOffsets(MlirAttribute attr) {
  return piece(attr).getSrcOffsets().data();
}
const int64_t *pwPieceAttrGetDstOffsets(MlirAttribute attr) {
  return piece(attr).getDstOffsets().data();
}
const int64_t *pwPieceAttrGetSizes(MlirAttribute attr) {
  return piece(attr).getSizes().data();
}
MlirStringRef pwPieceAttrGetLink(MlirAttribute attr) {
  return wrap(piece(attr).getLink());
}
