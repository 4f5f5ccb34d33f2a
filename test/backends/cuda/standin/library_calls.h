// What the cuDNN and cuBLASLt stand-ins do in every entry point: record the call (failing it when
// ORTC_STANDIN_FAIL names it) and count the objects they create and destroy by kind.
#pragma once

#include <string>

#include "standin_api.h"

namespace ortc::standin {

// `Status` is the library's status type: `ok` on success, `failed` when the call is injected to
// fail. Allocation-free for plain-text names (the calls a run makes).
template <typename Status>
Status RecordCall(const char* name, Status ok, Status failed) {
  ortc_standin_record(name);
  return ortc_standin_fail(name) ? failed : ok;
}

// new T for a create call, counted under `kind` in the live objects.
template <typename Status, typename T>
Status CreateObject(Status recorded, Status ok, const char* kind, T** out) {
  if (recorded != ok) return recorded;
  *out = new T();
  ortc_standin_object(kind, 1);
  return recorded;
}

template <typename T>
void DestroyObject(const char* kind, T* p) {
  delete p;
  ortc_standin_object(kind, -1);
}

}  // namespace ortc::standin
