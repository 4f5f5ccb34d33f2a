/* The C API, from C: create, query, run, errors, release. Usage: c_api_test TINY_CNN_CTX.onnx */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ortc/ortc_c.h"

static int passed = 0, failed = 0;
#define CHECK(cond)                                              \
  do {                                                           \
    if (cond) {                                                  \
      ++passed;                                                  \
    } else {                                                     \
      ++failed;                                                  \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    }                                                            \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  OrtcSession* session = NULL;
  OrtcStatus* st = ortc_session_create("/nonexistent/model_ctx.onnx", &session);
  CHECK(st != NULL && ortc_status_code(st) == ORTC_NO_SUCHFILE);
  CHECK(session == NULL);
  ortc_status_release(st);

  st = ortc_session_create(argv[1], &session);
  CHECK(st == NULL);
  if (st) {
    fprintf(stderr, "%s\n", ortc_status_message(st));
    return 1;
  }
  CHECK(ortc_session_input_count(session) == 1);
  CHECK(strcmp(ortc_session_input_name(session, 0), "image") == 0);
  CHECK(ortc_session_output_count(session) == 2);
  CHECK(ortc_session_input_name(session, 5) == NULL);

  static float image[2 * 3 * 32 * 32];
  for (size_t i = 0; i < sizeof image / sizeof image[0]; ++i) image[i] = (float)((i % 17) / 17.0 - 0.5);
  const int64_t shape[4] = {2, 3, 32, 32};
  const OrtcTensorView view = {1 /* float */, shape, 4, image};
  const char* names[1] = {"image"};
  OrtcTensor* outputs[2] = {NULL, NULL};
  st = ortc_session_run(session, names, &view, 1, outputs);
  CHECK(st == NULL);
  if (!st) {
    CHECK(ortc_tensor_dtype(outputs[0]) == 1 && ortc_tensor_rank(outputs[0]) == 2);
    CHECK(ortc_tensor_shape(outputs[0])[0] == 2 && ortc_tensor_shape(outputs[0])[1] == 10);
    const float* probs = (const float*)ortc_tensor_data(outputs[0]);
    double sum = 0;
    for (int i = 0; i < 10; ++i) sum += probs[i];
    CHECK(fabs(sum - 1.0) < 1e-5); /* a softmax row */
    CHECK(ortc_tensor_dtype(outputs[1]) == 7 /* int64 */);
    const int64_t* label = (const int64_t*)ortc_tensor_data(outputs[1]);
    CHECK(label[0] >= 0 && label[0] < 10);
    ortc_tensor_release(outputs[0]);
    ortc_tensor_release(outputs[1]);
  }
  ortc_status_release(st);

  const OrtcTensorView wrong = {7 /* int64 */, shape, 4, image};
  st = ortc_session_run(session, names, &wrong, 1, outputs);
  CHECK(st != NULL && ortc_status_code(st) == ORTC_INVALID_ARGUMENT);
  CHECK(st != NULL && strstr(ortc_status_message(st), "must be float") != NULL);
  ortc_status_release(st);
  st = ortc_session_run(session, NULL, NULL, 1, outputs);
  CHECK(st != NULL && ortc_status_code(st) == ORTC_INVALID_ARGUMENT);
  ortc_status_release(st);

  /* Input and output metadata: tiny CNN's image is float [batch, 3, 32, 32], batch dynamic. */
  CHECK(ortc_session_input_dtype(session, 0) == 1);
  CHECK(ortc_session_input_rank(session, 0) == 4);
  CHECK(ortc_session_input_shape(session, 0)[0] == -1 && ortc_session_input_shape(session, 0)[3] == 32);
  CHECK(ortc_session_output_dtype(session, 1) == 7 && ortc_session_output_rank(session, 1) == 1);
  CHECK(ortc_session_input_dtype(session, 9) == 0 && ortc_session_input_shape(session, 9) == NULL);

  /* Only the outputs asked for. */
  const char* label_only[1] = {"label"};
  OrtcTensor* label_out[1] = {NULL};
  st = ortc_session_run_outputs(session, names, &view, 1, label_only, 1, label_out);
  CHECK(st == NULL);
  if (!st) {
    CHECK(ortc_tensor_dtype(label_out[0]) == 7 && ortc_tensor_shape(label_out[0])[0] == 2);
    ortc_tensor_release(label_out[0]);
  }
  ortc_status_release(st);
  const char* unknown[1] = {"nope"};
  st = ortc_session_run_outputs(session, names, &view, 1, unknown, 1, label_out);
  CHECK(st != NULL && ortc_status_code(st) == ORTC_INVALID_ARGUMENT);
  ortc_status_release(st);
  ortc_session_release(session);

  /* Versions. */
  CHECK(ortc_api_version() == ORTC_C_API_VERSION);
  CHECK(strlen(ortc_version()) >= 5 && strcmp(ortc_format_version(), "1.0") == 0);

  /* Options: a bad device description and a negative thread count are refused at once. */
  OrtcSessionOptions* options = NULL;
  CHECK(ortc_session_options_create(&options) == NULL && options != NULL);
  st = ortc_session_options_set_device_json(options, "{not json");
  CHECK(st != NULL && ortc_status_code(st) == ORTC_INVALID_ARGUMENT);
  ortc_status_release(st);
  st = ortc_session_options_set_intra_op_threads(options, -1);
  CHECK(st != NULL && ortc_status_code(st) == ORTC_INVALID_ARGUMENT);
  ortc_status_release(st);
  /* A big-endian device (injected): the gate refuses the binary, as NOT_IMPLEMENTED. */
  CHECK(ortc_session_options_set_device_json(options, "{\"cpu\": {\"little_endian\": false}}") == NULL);
  st = ortc_session_create_with_options(argv[1], options, &session);
  CHECK(st != NULL && ortc_status_code(st) == ORTC_NOT_IMPLEMENTED && session == NULL);
  CHECK(st != NULL && strstr(ortc_status_message(st), "big-endian") != NULL);
  ortc_status_release(st);
  CHECK(ortc_session_options_set_device_json(options, NULL) == NULL);
  CHECK(ortc_session_options_set_intra_op_threads(options, 1) == NULL);
  CHECK(ortc_session_options_set_policy(options, ORTC_POLICY_REQUIRE_OPTIMAL) == NULL);
  CHECK(ortc_session_options_enable_profiling(options, 1) == NULL);
  st = ortc_session_options_set_provider_option(options, "tpu", "x", "1");
  CHECK(st == NULL); /* checked when a session is made */
  ortc_status_release(st);
  st = ortc_session_create_with_options(argv[1], options, &session);
  CHECK(st != NULL && ortc_status_code(st) == ORTC_INVALID_ARGUMENT); /* unknown backend tpu */
  ortc_status_release(st);
  ortc_session_options_release(options);

  /* From a buffer, the binary found beside the context file path; profiling on. */
  CHECK(ortc_session_options_create(&options) == NULL);
  CHECK(ortc_session_options_set_context_file_path(options, argv[1]) == NULL);
  CHECK(ortc_session_options_enable_profiling(options, 1) == NULL);
  FILE* f = fopen(argv[1], "rb");
  static char model[1 << 20];
  const size_t size = f ? fread(model, 1, sizeof model, f) : 0;
  if (f) fclose(f);
  CHECK(size > 0 && size < sizeof model);
  st = ortc_session_create_from_buffer(model, size, options, &session);
  ortc_session_options_release(options); /* the session keeps its own copy */
  CHECK(st == NULL);
  if (!st) {
    OrtcTensor* outs[2] = {NULL, NULL};
    OrtcStatus* r = ortc_session_run(session, names, &view, 1, outs);
    CHECK(r == NULL);
    if (!r) {
      ortc_tensor_release(outs[0]);
      ortc_tensor_release(outs[1]);
    }
    ortc_status_release(r);
    char trace[4096];
    snprintf(trace, sizeof trace, "%s.profile.json", argv[1]);
    CHECK(ortc_session_end_profiling(session, trace) == NULL);
    FILE* t = fopen(trace, "rb");
    char head[2] = {0, 0};
    CHECK(t != NULL && fread(head, 1, 1, t) == 1 && head[0] == '[');
    if (t) fclose(t);
    remove(trace);
    ortc_session_release(session);
  }
  ortc_status_release(st);
  st = ortc_session_create_from_buffer(NULL, 10, NULL, &session);
  CHECK(st != NULL && ortc_status_code(st) == ORTC_INVALID_ARGUMENT);
  ortc_status_release(st);

  /* Device memory and generation on a CPU-only model: refused with messages, nothing written. */
  st = ortc_session_create(argv[1], &session);
  CHECK(st == NULL);
  if (!st) {
    CHECK(strcmp(ortc_session_input_device(session, 0), "") == 0);
    CHECK(ortc_session_input_device(session, 9) == NULL);
    OrtcTensor* device = (OrtcTensor*)1;
    OrtcStatus* e = ortc_session_allocate_device(session, "image", &device);
    CHECK(e != NULL && ortc_status_code(e) == ORTC_INVALID_ARGUMENT && device == NULL);
    CHECK(e != NULL && strstr(ortc_status_message(e), "read or written on the CPU") != NULL);
    ortc_status_release(e);
    const int64_t prompt[2] = {1, 2};
    int64_t tokens[4] = {-7, -7, -7, -7};
    OrtcGenerationStats stats;
    e = ortc_generate_greedy(session, session, prompt, 2, NULL, 0, tokens, 4, &stats);
    CHECK(e != NULL && strstr(ortc_status_message(e), "input_ids") != NULL);
    CHECK(stats.n_tokens == 0 && tokens[0] == -7);
    ortc_status_release(e);
    e = ortc_generate_greedy(session, NULL, prompt, 2, NULL, 0, tokens, 4, NULL);
    CHECK(e != NULL && ortc_status_code(e) == ORTC_INVALID_ARGUMENT);
    ortc_status_release(e);
    ortc_session_release(session);
  }

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
