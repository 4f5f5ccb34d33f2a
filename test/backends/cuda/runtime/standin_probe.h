// Reads the stand-in CUDA libraries' record (test/backends/cuda/standin/standin_api.h) from a
// test process whose LD_LIBRARY_PATH puts the stand-ins first, so the real CUDA plugin loaded by
// a Session talks to them.
#pragma once

#include <string>
#include <vector>

namespace ortc::test {

class StandinProbe {
 public:
  // Opens the stand-in libcuda.so.1 (the one the plugin will get); ok() false with error()
  // when the process would load another library under that name.
  StandinProbe();
  bool ok() const { return reset_ != nullptr; }
  const std::string& error() const { return error_; }

  void Reset() const { reset_(); }
  size_t Count(const std::string& call) const { return count_(call.c_str()); }
  std::vector<std::string> Trace() const;  // calls since the last Reset, in order
  long Live(const std::string& kind) const { return live_(kind.c_str()); }
  size_t LiveDeviceBytes() const { return device_bytes_(); }
  // Device memory from the stand-in driver (host memory underneath, so a test can read it).
  void* DeviceAlloc(size_t bytes) const;
  void DeviceFree(void* p) const;

 private:
  std::string error_;
  void (*reset_)() = nullptr;
  size_t (*count_)(const char*) = nullptr;
  const char* (*trace_)() = nullptr;
  long (*live_)(const char*) = nullptr;
  size_t (*device_bytes_)() = nullptr;
  int (*alloc_)(unsigned long long*, size_t) = nullptr;
  int (*free_)(unsigned long long) = nullptr;
};

}  // namespace ortc::test
