/* A fake backend plugin whose table claims another ABI version: the runtime must refuse it. */
#include "plugin_abi/ortc_backend_plugin.h"

static OrtcBackend table = {
    ORTC_BACKEND_ABI_VERSION + 1, sizeof(OrtcBackend), "fake", "0", 0, 0, 0, 0, 0};

OrtcPluginStatus ortc_backend_create(uint32_t v, const OrtcHostApi* host, OrtcBackend** out) {
  (void)v;
  (void)host;
  *out = &table;
  return ORTC_PLUGIN_OK;
}

void ortc_backend_release(OrtcBackend* b) {
  (void)b;
}
