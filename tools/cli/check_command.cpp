// `ortc check`: the runtime's version gate without running, for CI and before deployment.
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/regular_file.h"
#include "bundle_check/bundle_verify.h"
#include "bundle_check/provenance.h"
#include "cli/exit_codes.h"
#include "cli/report_error.h"
#include "cli/report_records.h"
#include "cli/runtime_commands.h"
#include "ortc/runtime.h"

namespace ortc::cli {
namespace {

struct CheckArgs {
  std::string model, device, source;
  bool json = false, require_optimal = false, print_device = false;
};

// --device: inline JSON when it starts with '{', else a file holding it.
Result<std::string> DeviceText(const std::string& arg) {
  const size_t first = arg.find_first_not_of(" \t\n\r");
  if (first != std::string::npos && arg[first] == '{') return arg;
  ORTC_RETURN_IF_ERROR(format::CheckRegularFile(arg));
  std::ifstream in(arg);
  if (!in) return NoSuchFile(arg + ": cannot open the device description");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The binary as the ctx model names it, relative to the model's folder as given, so that `path`
// reads like the path the user typed (`out/model_cpu.bin`); embedded binaries have none.
nlohmann::json BinaryJson(const std::string& model, const std::string& binary) {
  if (binary.empty() || binary.front() == '<') return tools::EmbeddedFileJson();
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(fs::path(model).parent_path()), ec);
  const fs::path relative =
      ec ? fs::path() : fs::weakly_canonical(binary, ec).lexically_relative(dir);
  if (ec || relative.empty() || *relative.begin() == "..") return tools::FileJson(binary);
  return tools::FileJson(fs::path(model).parent_path() / relative);
}

nlohmann::json BackendsJson(const std::string& model, const LoadReport& report) {
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& b : report.backends) {
    backends.push_back({{"backend", b.backend},
                        {"binary", BinaryJson(model, b.binary)},
                        {"verdict", std::string(VerdictName(b.verdict))},
                        {"reason", b.reason}});
  }
  return backends;
}

// --require-optimal, applied here rather than by the loader so that the report still lists
// every backend's verdict when it fails.
Status RequireOptimal(const LoadReport& report) {
  for (const auto& b : report.backends) {
    if (b.verdict != Verdict::kPreferRecompilation) continue;
    return Status(StatusCode::kModelRequiresCompilation,
                  "backend " + b.backend + " (" + b.binary + "): " + b.reason +
                      " (--require-optimal requires an optimal binary)");
  }
  return Status::Ok();
}

void PrintModel(const std::string& model, const LoadReport& report) {
  std::cout << model << ": " << report.ep_context_nodes << " EPContext node(s), "
            << report.onnx_nodes << " ONNX node(s)\n";
  for (const auto& b : report.backends) {
    std::cout << "  " << b.backend << " (" << b.binary << "): " << VerdictName(b.verdict)
              << (b.reason.empty() ? "" : ": " + b.reason) << "\n";
  }
}

int Run(const CheckArgs& a) {
  SessionOptions o;
  DeviceDescription device;
  // The report so far: a failure prints what was known before it (the bundle, the models and
  // backends checked, an empty backends[] when the gate did not get that far).
  nlohmann::json j{{"ok", true}, {"backends", nlohmann::json::array()}};
  if (!a.model.empty()) j["model"] = tools::FileJson(a.model);
  auto fail = [&](const Status& s) { return ReportError(a.json, s, j); };
  if (a.print_device) {
    // This machine as the version gate sees it, for checking bundles elsewhere with --device.
    if (!a.model.empty() || !a.device.empty() || a.require_optimal)
      return fail(InvalidArgument("--print-device takes no model, --device or --require-optimal"));
    std::cout << DeviceDescription::Detect().ToJson() << "\n";
    return kExitOk;
  }
  if (a.model.empty()) return fail(InvalidArgument("give a model_ctx.onnx to check"));
  std::vector<std::string> models = {a.model};
  std::error_code ec;
  const bool is_bundle = std::filesystem::is_directory(a.model, ec);
  if (is_bundle) {
    // A bundle: every listed file as recorded, then the gate on each ctx model.
    j.erase("backends");
    j["models"] = nlohmann::json::array();
    auto verified = tools::VerifyBundle(a.model);
    if (!verified.ok()) return fail(verified.status());
    models.clear();
    for (const auto& p : verified->ctx_models) models.push_back(p.string());
    j["bundle"] = tools::FileJson(a.model);
    j["bundle"].update({{"files_verified", verified->manifest["files"].size()},
                        {"compiler", verified->manifest.value("compiler", std::string())}});
    if (!a.source.empty())
      return fail(
          InvalidArgument("--source checks one ctx model; a bundle records its sources' "
                          "digests in manifest.json"));
  }
  if (!a.device.empty()) {
    auto text = DeviceText(a.device);
    if (!text.ok()) return fail(text.status());
    auto d = DeviceDescription::FromJson(*text);
    if (!d.ok()) return fail(d.status());
    device = *d;
    o.device = &device;
  }
  // Staleness first: it needs no device, so a CI machine without the target's GPU can tell.
  if (!a.source.empty()) {
    j["source"] = tools::FileJson(a.source);
    auto digest = tools::SourceDigest(a.source);
    if (!digest.ok()) return fail(digest.status());
    auto why = tools::StaleReason(a.model, a.source, *digest, "", "");
    if (!why.ok()) return fail(why.status());
    j["source"]["fresh"] = why->empty();
    if (!why->empty()) {
      j["source"]["reason"] = *why;
      return fail(Status(StatusCode::kModelRequiresCompilation,
                         "stale: " + *why + "; recompile it (ortc compile --if-changed)"));
    }
  }
  for (const auto& model : models) {
    auto report = CheckModel(model, o);
    if (!report.ok()) return fail(report.status());
    nlohmann::json m{{"ep_context_nodes", report->ep_context_nodes},
                     {"onnx_nodes", report->onnx_nodes},
                     {"backends", BackendsJson(model, *report)}};
    if (is_bundle) {
      m["model"] = tools::FileJson(model);
      j["models"].push_back(m);
    } else {
      j.update(m);
    }
    if (!a.json) PrintModel(model, *report);
    if (a.require_optimal)
      if (Status s = RequireOptimal(*report); !s.ok()) return fail(s);
  }
  if (a.json) {
    std::cout << ReportText(j) << "\n";
  } else {
    if (!a.source.empty()) std::cout << "  fresh: compiled from " << a.source << " as it is now\n";
    if (is_bundle)
      std::cout << "bundle " << a.model << ": " << j["bundle"]["files_verified"]
                << " file(s) match manifest.json (sizes and sha256)\n";
  }
  return kExitOk;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<CheckArgs>();
  auto* cmd = app.add_subcommand(
      "check", "Run the runtime's version gate on a compiled model, without running it");
  cmd->add_option("model", a->model,
                  "model_ctx.onnx, or a bundle folder written by ortc compile --bundle");
  cmd->add_option("--device", a->device,
                  "The target device instead of this machine: a JSON file, or the JSON itself, "
                  "e.g.\n'{\"cpu\": {\"arch\": \"x86_64\", \"isa\": [\"avx2\"]}, \"cuda\": "
                  "{\"driver_version\": 13000, \"archs\": [\"sm_80\"]}}'");
  cmd->add_option("--source", a->source,
                  "The source model: also check the bundle is not stale (the source's sha256 "
                  "recorded at compile time still matches, the binaries are the ones written "
                  "with the ctx model); stale exits 4");
  cmd->add_flag("--print-device", a->print_device,
                "Print this machine's description as --device reads it, and exit");
  cmd->add_flag("--require-optimal", a->require_optimal,
                "Fail when a backend's verdict is 'prefer recompilation'");
  cmd->add_flag("--json", a->json, "Print a machine-readable report");
  cmd->footer(std::string("\nVerdicts: optimal, prefer recompilation (runs, but a recompile would "
                          "do better), unsupported (error).\n"
                          "Examples:\n  ortc check model_ctx.onnx\n  ortc check model_ctx.onnx "
                          "--device jetson.json --json\n"
                          "  ortc check --print-device > device.json   # on the target machine\n"
                          "  ortc check model_ctx.onnx --source model.onnx   # stale? (exit 4)\n"
                          "  ortc check bundle/   # a --bundle folder: manifest, hashes, gate\n"
                          "  ortc check model_ctx.onnx --device '{\"cuda\": {\"driver_version\": "
                          "13000, \"archs\": [\"sm_90\"]}}'\n\n") +
              kExitCodeHelp);
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace ortc::cli
