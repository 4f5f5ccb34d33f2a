/* A fake backend plugin that knows no host ABI version (as a plugin from a future ortc would
 * refuse this runtime). */
#include "plugin_abi/ortc_backend_plugin.h"

OrtcPluginStatus ortc_backend_create(uint32_t v, const OrtcHostApi* host, OrtcBackend** out) {
  (void)v;
  (void)host;
  (void)out;
  return ORTC_PLUGIN_ABI_MISMATCH;
}

void ortc_backend_release(OrtcBackend* b) {
  (void)b;
}
