#include "cli/compile_flags.h"

#include <filesystem>
#include <sstream>

#include "cli/provider_options.h"
#include "graph/input_shapes.h"
#include "graph/input_values.h"

namespace ortc::cli {

void AddCompileFlags(CLI::App* cmd, CompileFlags* f, bool shape_alias) {
  cmd->add_option("--ep", f->eps,
                  "Backends to compile for, in priority order (comma-separated); nodes none of "
                  "them takes stay ONNX nodes run by the CPU. A backend built outside ortc "
                  "(libortc_backend_<name>.so) is found through --backend-path DIR or "
                  "ORTC_BACKEND_PATH")
      ->default_val("cpu");
  cmd->add_option("--provider-option", f->provider_options,
                  "Backend option, as backend:key=value (repeatable). cpu:conv_algorithm=direct "
                  "keeps the CPU's 3x3 convolutions off Winograd, which the runtime otherwise "
                  "uses where it is faster (results differ in the last bits); =winograd uses it "
                  "wherever it can. CUDA: cuda:attention=gemm|fused, "
                  "cuda:grouped_conv=auto|library|generated, cuda:merge_launches=on|off (off: one "
                  "launch per kernel, for per-kernel profiles), cuda:workspace_mb=N");
  cmd->add_option(
      shape_alias ? "--input-shape,--shape" : "--input-shape", f->input_shapes,
      std::string("Fix a graph input's shape, as name=1x3x224x224 (repeatable, or "
                  "comma-separated: ids=1x128,mask=1x128): CUDA kernels are "
                  "specialized to static shapes") +
          (shape_alias ? "; random inputs take it too. --shape is the same option" : ""));
  cmd->add_option("--input-value", f->input_values,
                  "Fix a scalar graph input's value, as name=16000 (repeatable): computations on "
                  "it fold and an If choosing a branch from it is resolved at compile time, so "
                  "accelerators can take the branch. The ctx model keeps the input; running with "
                  "another value is refused");
  cmd->add_option("--precision", f->precision,
                  "Precision: fp32 (default; IEEE fp32 math, no TF32), tf32 (CUDA: fp32 storage, "
                  "convolutions and GEMMs on TF32 tensor cores), fp16 or bf16 (CUDA: weights and "
                  "activations stored in that type); inputs and outputs keep the model's types "
                  "and accumulation stays fp32. bf16 also makes the CPU backend's float "
                  "convolutions compute on bf16 (the binary then needs a CPU with AVX512-BF16; "
                  "others keep fp32 there)")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd->add_option("--target-isa", f->target_isa,
                  "CPU instruction set to pack convolution weights for: portable (default; plain "
                  "weights, laid out at the first run), native (this machine's), avx2, "
                  "avx512_core, avx512_core_bf16 or avx512_core_amx (the compiling machine must "
                  "have it). Packed weights skip the first run's reordering; a CPU without the "
                  "ISA still runs the binary (it repacks them once; the version check says to "
                  "prefer recompilation)")
      ->check(CLI::IsMember(
          {"portable", "native", "avx2", "avx512_core", "avx512_core_bf16", "avx512_core_amx"}));
  cmd->add_option("--target-arch", f->target_arch,
                  "CUDA architectures to build cubins for, comma-separated (default "
                  "sm_80,sm_86,sm_89,sm_90); PTX of the newest is added for newer GPUs");
  cmd->add_option("--tuning-cache", f->tuning_cache,
                  "A tuning cache made by `ortc tune` on the target GPU: its measured choices "
                  "(generated kernel or cuDNN per grouped convolution) replace the static rules "
                  "for the steps it measured. A cache from another architecture than "
                  "--target-arch or another cuDNN major version is reported and ignored");
  cmd->add_option("--max-partitions", f->max_partitions,
                  "Fail when a backend would get more than N groups (0: no limit)")
      ->check(CLI::NonNegativeNumber);
}

Status ApplyCompileFlags(const CompileFlags& f, compile::CompileOptions* o) {
  std::stringstream ss(f.eps);
  o->backends.clear();
  for (std::string name; std::getline(ss, name, ',');)
    if (!name.empty()) o->backends.push_back(name);
  if (o->backends.empty()) return InvalidArgument("--ep names no backend");
  ORTC_RETURN_IF_ERROR(ParseProviderOptions(f.provider_options, &o->provider_options));
  // --precision and --target-arch are shorthands for provider options: CUDA takes every
  // precision, the CPU backend bf16 (it keeps fp32 for the others).
  if (!f.precision.empty()) o->provider_options["cuda"]["precision"] = f.precision;
  if (f.precision == "bf16") o->provider_options["cpu"]["precision"] = "bf16";
  if (!f.target_arch.empty()) o->provider_options["cuda"]["target_arch"] = f.target_arch;
  if (!f.target_isa.empty()) o->provider_options["cpu"]["target_isa"] = f.target_isa;
  if (!f.tuning_cache.empty()) {
    std::error_code ec;
    const auto path = std::filesystem::absolute(f.tuning_cache, ec);
    o->provider_options["cuda"]["tuning_cache"] = ec ? f.tuning_cache : path.string();
  }
  for (const auto& text : f.input_shapes)
    ORTC_RETURN_IF_ERROR(graph::ParseInputShape(text, &o->input_shapes));
  for (const auto& text : f.input_values)
    ORTC_RETURN_IF_ERROR(graph::ParseInputValue(text, &o->input_values));
  o->max_partitions = f.max_partitions;
  return Status::Ok();
}

}  // namespace ortc::cli
