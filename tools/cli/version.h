// `ortc --version`: what this build is and what it can read and reach on this machine, so a CI
// log or a bug report says which compiler, formats and libraries were in play.
#pragma once

#include <string>

namespace ortc::cli {

// Several lines: version and commit; the context binary format and plugin ABI; the ONNX range;
// oneDNN and the ISA it generates code for here; NVRTC for CUDA compiles; the CUDA driver, cuDNN
// and cuBLAS as the CUDA backend library finds them (or why not).
std::string VersionText();

}  // namespace ortc::cli
