# The runtime's unit tests (and base/'s, in test/base/) that need no compiler library (they build their models in memory and
# run them through the runtime alone): part of ortc_unit_tests, and built on their own under
# ASan + UBSan by test/sanitize (scripts/sanitize address).
set(ORTC_RUNTIME_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/loader/compatibility_info_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loader/fixed_inputs_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loader/plain_subgraph_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../schemas/format/cpu_program_validator_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../base/element_types_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../base/mapped_file_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../base/sha256_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../base/search_path_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../base/temp_registry_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensor_elements_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/onnx_tensor_api_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/generate/past_input_names_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exec/buffer_pool_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exec/run_cpu_op_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exec/intra_op_threads_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../base/shape_limit_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/spectral_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/depthwise_conv_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/reductions_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/winograd_conv_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/winograd_bf16_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/conv_plan_key_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/integer_results_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/slice_axis_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/data_movement_checks_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/hostile_operands_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/vector_math_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/strided_copy_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/elementwise_fast_paths_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/matmul_batches_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/pad_constant_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../backends/cpu/runtime/kernels/int4_matmul_test.cpp
)
