// Which decode input each present output feeds, in the exporters' two spellings.
#include <catch2/catch.hpp>

#include "ortc/generate.h"

TEST_CASE("generation feeds each present output to the past input of the same name",
          "[runtime][generate]") {
  // Hugging Face exports through torch.onnx (present_key_0 -> past_key_0).
  CHECK(ortc::PastInputFor("present_key_0") == "past_key_0");
  CHECK(ortc::PastInputFor("present_value_11") == "past_value_11");
  // Optimum's names (present.0.key -> past_key_values.0.key).
  CHECK(ortc::PastInputFor("present.0.key") == "past_key_values.0.key");
  CHECK(ortc::PastInputFor("present.3.value") == "past_key_values.3.value");
  // Everything else feeds nothing back.
  CHECK(ortc::PastInputFor("logits").empty());
  CHECK(ortc::PastInputFor("presentation").empty());
  CHECK(ortc::PastInputFor("").empty());
}
