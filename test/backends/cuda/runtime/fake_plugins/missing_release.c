/* A fake backend plugin that exports create but not release: not a plugin. */
#include "plugin_abi/ortc_backend_plugin.h"

OrtcPluginStatus ortc_backend_create(uint32_t v, const OrtcHostApi* host, OrtcBackend** out) {
  (void)v;
  (void)host;
  (void)out;
  return ORTC_PLUGIN_EP_FAIL;
}
