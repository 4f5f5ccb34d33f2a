// ortc::Status and the plugin ABI's status codes, both ways, and the thread-local error text a
// C function table hands out through last_error(). The compile side maps every code the
// compiler uses one to one, so an error keeps its exit code across the boundary.
#pragma once

#include <string>

#include "ortc/status.h"
#include "plugin_abi/ortc_backend_plugin.h"

namespace ortc::backends::abi {

OrtcPluginStatus ToPluginStatus(StatusCode code);
// The Status a call's result means, with `message` as its text ("" -> a generic reason).
Status FromPluginStatus(OrtcPluginStatus s, std::string message);

// Records `status` as the calling thread's last error and returns its code.
OrtcPluginStatus Fail(const Status& status);
// The calling thread's last error text ("" when none); valid until the thread's next failure.
const char* LastErrorText();

}  // namespace ortc::backends::abi
