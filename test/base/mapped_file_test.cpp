// Opening binaries: only regular files are mapped. A FIFO must be refused at once (opening it
// for reading used to wait for a writer forever) and a device must not be read as weights.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "base/mapped_file.h"
#include "format/context_binary_reader.h"
#include "model_builder.h"

using namespace ortc;

TEST_CASE("a FIFO or a device is refused as a binary, without waiting", "[mapped_file]") {
  test::TempDir dir;
  const auto fifo = dir.path() / "model_cpu.bin";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto opened = format::MappedFile::Open(fifo);
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.status().message().find("not a regular file") != std::string::npos);
  auto bin = format::ContextBinary::OpenFile(fifo);
  REQUIRE_FALSE(bin.ok());
  CHECK(bin.status().message().find("not a regular file") != std::string::npos);

  auto device = format::MappedFile::Open("/dev/zero");
  REQUIRE_FALSE(device.ok());
  CHECK(device.status().message().find("not a regular file") != std::string::npos);
}
