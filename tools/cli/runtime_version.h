// The lines of `--version` that describe the runtime: what it reads and what it finds here.
// `ortc --version` adds the compiler's lines, `ortc-run --version` prints these alone.
#pragma once

#include <string>

namespace ortc::cli {

// The context binary format and plugin ABI; oneDNN and the ISA it generates code for here; the
// CUDA driver, device, cuDNN and cuBLAS as the CUDA backend library finds them (or why not).
// Each line ends with '\n' but the last.
std::string RuntimeVersionLines();

}  // namespace ortc::cli
