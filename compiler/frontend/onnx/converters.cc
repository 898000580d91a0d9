// The table of ONNX operator converters (converters.h), filled by the families of
// compiler/frontend/onnx/ops/.
//
// Each converter follows the operator's ONNX specification for every opset from 1 to 17
// (where an attribute became an input, both forms are read). What the kernel library
// cannot do is Unimplemented, naming the attribute or input; nothing is silently
// approximated.
#include "compiler/frontend/onnx/converters.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "compiler/frontend/onnx/ops/common.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

const ops::ConverterTable& Table() {
  static const auto* table = [] {
    auto* t = new ops::ConverterTable;
    ops::AddElementwiseConverters(*t);
    ops::AddShapeConverters(*t);
    ops::AddDataMovementConverters(*t);
    ops::AddNnConverters(*t);
    ops::AddLossConverters(*t);
    ops::AddEinsumConverters(*t);
    ops::AddConvTransposeConverters(*t);
    ops::AddResizeConverters(*t);
    ops::AddControlFlowConverters(*t);
    ops::AddRecurrentConverters(*t);
    ops::AddSequenceConverters(*t);
    ops::AddOptionalConverters(*t);
    ops::AddQuantizeConverters(*t);
    ops::AddSignalConverters(*t);
    ops::AddIndexingConverters(*t);
    ops::AddTrainingConverters(*t);
    ops::AddDetectionConverters(*t);
    ops::AddTextConverters(*t);
    return t;
  }();
  return *table;
}

}  // namespace

const ConverterDef* FindConverter(std::string_view op_type) {
  auto it = Table().find(op_type);
  return it == Table().end() ? nullptr : &it->second;
}

std::vector<std::string_view> SupportedOperators() {
  std::vector<std::string_view> names;
  for (const auto& [name, def] : Table()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace dynvm::compiler::onnx_frontend
