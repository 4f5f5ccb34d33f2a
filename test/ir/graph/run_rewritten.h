// Runs a model as the loader rewrote it (standard ops only) on the CPU kernels: the
// contrib-op and newer-op rewrite tests compute with it.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "graph/model.h"
#include "ortc/runtime.h"
#include "test_data.h"

namespace ortc::test {

inline std::vector<Tensor> RunRewritten(const graph::Model& m,
                                        const std::vector<std::pair<std::string, Tensor>>& feeds) {
  const std::string bytes = m.proto.SerializeAsString();
  auto s = Session::CreateFromBuffer(BytesOf(bytes));
  if (!s.ok()) FAIL(s.status().ToString());
  auto out = (*s)->Run(feeds);
  if (!out.ok()) FAIL(out.status().ToString());
  return std::move(out).value();
}

}  // namespace ortc::test
