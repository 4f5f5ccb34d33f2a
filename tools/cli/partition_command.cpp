// `ortc partition`: show how a model would be split across backends, without compiling.
#include <spdlog/spdlog.h>

#include <iostream>
#include <sstream>

#include "cli/compile_commands.h"
#include "cli/exit_codes.h"
#include "cli/report_error.h"
#include "cli/report_records.h"
#include "graph/model.h"
#include "partition/partition_report.h"
#include "partition/partitioner.h"
#include "registry.h"

namespace ortc::cli {
namespace {

struct PartitionArgs {
  std::string model;
  std::string eps = "cpu";
  bool json = false;
  int max_partitions = 0;
  std::vector<std::string> input_shapes;
  std::vector<std::string> input_values;
  bool last_token_logits = false;
};

std::string BackendHelp() {
  std::string s = "Backends:";
  for (const auto* b : backends::AllBackends()) {
    s += "\n  " + std::string(b->name()) + ": " + std::string(b->status_line());
  }
  return s;
}

Result<std::vector<const backends::Backend*>> ParseBackends(const std::string& list) {
  std::vector<const backends::Backend*> out;
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (name.empty()) continue;
    auto b = backends::ResolveBackend(name);
    if (!b.ok())
      return InvalidArgument("unknown backend '" + name + "' in --ep (known: " +
                             backends::KnownBackendNames() + "); " + b.status().message());
    out.push_back(*b);
  }
  if (out.empty()) return InvalidArgument("--ep names no backend");
  return out;
}

// Prints the error as text, or as JSON when --json was given (the partition when the model
// loaded, else its path), and returns the exit code.
int Fail(const PartitionArgs& args, const Status& s, const nlohmann::json* report = nullptr) {
  return ReportError(args.json, s,
                     report ? *report : nlohmann::json{{"model", tools::FileJson(args.model)}});
}

int Run(const PartitionArgs& args) {
  auto backends = ParseBackends(args.eps);
  if (!backends.ok()) return Fail(args, backends.status());
  graph::LoadOptions load;
  load.fold_shapes = true;
  if (args.last_token_logits) load.last_position_outputs = {"logits"};
  for (const auto& text : args.input_shapes) {
    Status s = graph::ParseInputShape(text, &load.input_shapes);
    if (!s.ok()) return Fail(args, s);
  }
  for (const auto& text : args.input_values) {
    Status s = graph::ParseInputValue(text, &load.input_values);
    if (!s.ok()) return Fail(args, s);
  }
  auto model = graph::LoadModelFromFile(args.model, load);
  if (!model.ok()) return Fail(args, model.status());
  const auto partition = partition::PartitionGraph((*model)->graph, *backends);
  const Status check = partition::CheckPartition((*model)->graph, partition, args.max_partitions);
  if (args.json) {
    auto j = partition::PartitionToJson(**model, partition);
    if (!check.ok()) return Fail(args, check, &j);
    j["ok"] = true;
    std::cout << ReportText(j) << "\n";
    return kExitOk;
  }
  std::cout << partition::PartitionToText(**model, partition);
  if (!check.ok()) return Fail(args, check);
  return kExitOk;
}

}  // namespace

void AddPartitionCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PartitionArgs>();
  auto* cmd = app.add_subcommand("partition", "Show how a model is split across backends");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--ep", args->eps,
                  "Backends in priority order, comma-separated; the CPU backend is always added "
                  "last and takes what the others refuse")
      ->default_val("cpu");
  cmd->add_flag("--json", args->json, "Print a machine-readable report on stdout");
  cmd->add_option("--max-partitions", args->max_partitions,
                  "Fail when any backend would get more than N groups (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--input-shape", args->input_shapes,
                  "Fix a graph input's shape, as name=1x3x224x224 (repeatable, or comma-separated: "
                  "ids=1x128,mask=1x128); CUDA takes only nodes with static shapes");
  cmd->add_option("--input-value", args->input_values,
                  "Fix a scalar graph input's value, as name=16000 (repeatable), as ortc compile "
                  "does: an If choosing its branch from it is resolved before partitioning");
  cmd->add_flag("--last-token-logits", args->last_token_logits,
                "As ortc compile: the output named logits keeps only its last position");
  cmd->footer(
      "\n" + BackendHelp() +
      "\n\nExamples:\n"
      "  ortc partition model.onnx --ep cuda,cpu\n"
      "  ortc partition model.onnx --ep cuda,cpu --input-shape x=1x3x224x224\n"
      "  ortc partition vad.onnx --ep cuda,cpu --input-value sr=16000   # If resolved\n"
      "  ortc partition model.onnx --ep cuda --json > partition.json\n"
      "  ortc partition model.onnx --ep cuda --max-partitions 1   # fail if CUDA is split\n\n" +
      kExitCodeHelp);
  cmd->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace ortc::cli
