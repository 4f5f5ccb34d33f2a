// The test functions, one declaration each; skeleton_test.cpp's main calls them in a fixed order
// (they share one random sequence, so the order fixes the data).
#pragma once

#include "test_support.h"

namespace npu_test {

// compile_test.cpp: the plugin's tables, options and identity, capability refusals.
void TestTables(const Plugin& p);
void TestOptions(const Plugin& p);
void TestRefusals(const Plugin& p);

// run_test.cpp: compile, load and run against the float reference.
void TestHandWorked(const Plugin& p);
void TestConv(const Plugin& p, bool external);
void TestMatMul(const Plugin& p);
void TestChain(const Plugin& p);

// robustness_test.cpp: ABI mismatch, runtime argument errors, corrupt programs.
void TestAbiMismatch();
void TestRuntimeErrors(const Plugin& p);

// device_test.cpp: describe_device and device memory, the binary version gate.
void TestDevice(const Plugin& p);
void TestVersionGate(const Plugin& p);

}  // namespace npu_test
