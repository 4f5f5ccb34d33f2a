// The table of ONNX element types: see element_types.h.
#include "base/element_types.h"

#include <iterator>

namespace ortc {
namespace {

// Indexed by code. Codes 17 and up came with IR versions 9 and 10 (float8, 4-bit integers) and
// ONNX 1.18 (float4); the runtime holds none of them, but the compiler sizes their initializers.
constexpr ElementTypeInfo kElementTypes[] = {
    {0, "undefined", 0, false, false},      {1, "float", 32, true, true},
    {2, "uint8", 8, true, false},           {3, "int8", 8, true, false},
    {4, "uint16", 16, true, false},         {5, "int16", 16, true, false},
    {6, "int32", 32, true, false},          {7, "int64", 64, true, false},
    {8, "string", 0, true, false},          {9, "bool", 8, true, false},
    {10, "float16", 16, true, true},        {11, "double", 64, true, true},
    {12, "uint32", 32, true, false},        {13, "uint64", 64, true, false},
    {14, "complex64", 64, false, false},    {15, "complex128", 128, false, false},
    {16, "bfloat16", 16, true, true},       {17, "float8e4m3fn", 8, false, true},
    {18, "float8e4m3fnuz", 8, false, true}, {19, "float8e5m2", 8, false, true},
    {20, "float8e5m2fnuz", 8, false, true}, {21, "uint4", 4, false, false},
    {22, "int4", 4, false, false},          {23, "float4e2m1", 4, false, true},
};

// The table is indexed by code: a row out of place would give a type another's size.
constexpr bool RowsInOrder() {
  for (size_t i = 0; i < std::size(kElementTypes); ++i)
    if (kElementTypes[i].code != static_cast<int32_t>(i)) return false;
  return true;
}
static_assert(RowsInOrder(), "kElementTypes must be indexed by code");

}  // namespace

const ElementTypeInfo* FindElementType(int32_t code) {
  if (code < 0 || static_cast<size_t>(code) >= std::size(kElementTypes)) return nullptr;
  return &kElementTypes[code];
}

int64_t ElementBits(int32_t code) {
  const ElementTypeInfo* info = FindElementType(code);
  return info ? info->bits : 0;
}

size_t HeldElementBytes(int32_t code) {
  const ElementTypeInfo* info = FindElementType(code);
  if (!info || !info->held) return 0;
  return static_cast<size_t>(info->bits / 8);
}

bool IsFloatElementType(int32_t code) {
  const ElementTypeInfo* info = FindElementType(code);
  return info && info->floating;
}

std::string ElementTypeName(int32_t code) {
  const ElementTypeInfo* info = FindElementType(code);
  return info ? info->name : "dtype#" + std::to_string(code);
}

}  // namespace ortc
