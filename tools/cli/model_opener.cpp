// The opener `run` and `generate` use (cli/model_opener.h).
#include "cli/model_opener.h"

namespace ortc::cli {
namespace {

ModelOpener& Opener() {
  static ModelOpener opener = [](const std::filesystem::path& model,
                                 const SessionOptions& options) {
    return Session::Create(model, options);
  };
  return opener;
}

}  // namespace

void SetModelOpener(ModelOpener opener) {
  Opener() = std::move(opener);
}

Result<std::unique_ptr<Session>> OpenModel(const std::filesystem::path& model,
                                           const SessionOptions& options) {
  return Opener()(model, options);
}

}  // namespace ortc::cli
