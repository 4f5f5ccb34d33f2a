// Compares a computed tensor with an ONNX test's expected one: dtype, shape, then every element
// within atol + rtol * |expected| (floats) or exactly (integers, bools, strings).
#pragma once

#include <string>

#include "ortc/tensor.h"

namespace ortc::test {

struct Tolerance {
  double rtol = 1e-3, atol = 1e-7;  // ONNX's backend tests
};

// "" when `got` matches `want`, else what differs (the first element beyond the bound). With
// `worst`, raises it to the largest |got - want| / (atol + rtol * |want|) seen (floats only): how
// much of the bound the closest-to-failing element used.
std::string CompareTensors(const Tensor& got, const Tensor& want, const Tolerance& tol,
                           double* worst = nullptr);

}  // namespace ortc::test
