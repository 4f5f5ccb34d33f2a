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

  ortc_session_release(session);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
