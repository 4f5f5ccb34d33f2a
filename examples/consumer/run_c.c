/* Runs a compiled model from C: loads it, feeds every float input with 0.5 (dynamic dims as 1),
 * prints each output's name, shape and first value. Usage: run_c model_ctx.onnx */
#include <stdio.h>
#include <stdlib.h>

#include "ortc/ortc_c.h"

static int fail(OrtcStatus* st) {
  fprintf(stderr, "error %d: %s\n", (int)ortc_status_code(st), ortc_status_message(st));
  ortc_status_release(st);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s model_ctx.onnx\n", argv[0]);
    return 2;
  }
  if (ortc_api_version() != ORTC_C_API_VERSION) {
    fprintf(stderr, "libortc_runtime has C API %u, this program was built for %d\n",
            (unsigned)ortc_api_version(), ORTC_C_API_VERSION);
    return 1;
  }
  OrtcSessionOptions* options = NULL;
  OrtcStatus* st = ortc_session_options_create(&options);
  if (st) return fail(st);
  ortc_session_options_set_intra_op_threads(options, 1);
  OrtcSession* session = NULL;
  st = ortc_session_create_with_options(argv[1], options, &session);
  ortc_session_options_release(options);
  if (st) return fail(st);

  const size_t n_in = ortc_session_input_count(session);
  const char** names = calloc(n_in, sizeof *names);
  OrtcTensorView* views = calloc(n_in, sizeof *views);
  int64_t(*shapes)[8] = calloc(n_in, sizeof *shapes);
  float** data = calloc(n_in, sizeof *data);
  for (size_t i = 0; i < n_in; ++i) {
    const size_t rank = ortc_session_input_rank(session, i);
    if (ortc_session_input_dtype(session, i) != 1 || rank > 8) {
      fprintf(stderr, "input %s is not a float tensor of rank <= 8\n",
              ortc_session_input_name(session, i));
      return 1;
    }
    size_t count = 1;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t dim = ortc_session_input_shape(session, i)[d];
      shapes[i][d] = dim < 0 ? 1 : dim;
      count *= (size_t)shapes[i][d];
    }
    data[i] = malloc(count * sizeof(float));
    for (size_t k = 0; k < count; ++k) data[i][k] = 0.5f;
    names[i] = ortc_session_input_name(session, i);
    views[i].dtype = 1;
    views[i].shape = shapes[i];
    views[i].rank = rank;
    views[i].data = data[i];
  }
  const size_t n_out = ortc_session_output_count(session);
  OrtcTensor** outputs = calloc(n_out, sizeof *outputs);
  st = ortc_session_run(session, names, views, n_in, outputs);
  if (st) return fail(st);
  for (size_t i = 0; i < n_out; ++i) {
    printf("%s: [", ortc_session_output_name(session, i));
    for (size_t d = 0; d < ortc_tensor_rank(outputs[i]); ++d)
      printf("%s%lld", d ? "," : "", (long long)ortc_tensor_shape(outputs[i])[d]);
    printf("]");
    if (ortc_tensor_dtype(outputs[i]) == 1 && ortc_tensor_byte_size(outputs[i]) >= 4)
      printf(" first %g", *(const float*)ortc_tensor_data(outputs[i]));
    printf("\n");
    ortc_tensor_release(outputs[i]);
  }
  for (size_t i = 0; i < n_in; ++i) free(data[i]);
  free(outputs), free(data), free(shapes), free(views), free(names);
  ortc_session_release(session);
  return 0;
}
