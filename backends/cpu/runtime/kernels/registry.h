// Kernel registration: each kernel file adds its ops to the table.
#pragma once

#include <map>
#include <string>

#include "cpu_kernel/kernel_context.h"

namespace ortc::exec {

using KernelTable = std::map<std::string, KernelFn>;

void RegisterElementwiseKernels(KernelTable& t);
void RegisterTensorKernels(KernelTable& t);
void RegisterPaddingKernels(KernelTable& t);
void RegisterReductionKernels(KernelTable& t);
void RegisterMatMulKernels(KernelTable& t);
void RegisterInt4MatMulKernels(KernelTable& t);
void RegisterConvKernels(KernelTable& t);
void RegisterPoolKernels(KernelTable& t);
void RegisterNormalizationKernels(KernelTable& t);
void RegisterSoftmaxKernels(KernelTable& t);
void RegisterResizeKernels(KernelTable& t);
void RegisterLossKernels(KernelTable& t);
void RegisterIndexingKernels(KernelTable& t);
void RegisterQuantizationKernels(KernelTable& t);
void RegisterMiscKernels(KernelTable& t);
void RegisterDetectionKernels(KernelTable& t);
void RegisterEinsumKernels(KernelTable& t);
void RegisterSequenceKernels(KernelTable& t);
void RegisterControlFlowKernels(KernelTable& t);
void RegisterRecurrentKernels(KernelTable& t);
void RegisterSamplingKernels(KernelTable& t);
void RegisterSpectralKernels(KernelTable& t);
void RegisterQLinearConvKernels(KernelTable& t);
void RegisterTfIdfKernels(KernelTable& t);

}  // namespace ortc::exec
