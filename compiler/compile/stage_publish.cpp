// A compile's publish phase: the temporary files renamed to their final names, all of them
// while no other compile publishes into the folder and no termination signal cuts in, binaries
// first and ctx models last.
#include <algorithm>

#include "base/temp_registry.h"
#include "compile/compile_stages.h"
#include "compile/publish_lock.h"
#include "registry.h"

namespace ortc::compile {
namespace {

namespace fs = std::filesystem;

// A binary of another backend under this model's name is from an earlier compile (a CUDA
// bundle recompiled for the CPU alone): the new ctx models do not use it. Said, not removed: it
// may be what the user still ships.
void WarnOfOlderBinaries(CompileRun& run, const std::vector<fs::path>& published) {
  std::error_code ec;
  for (const auto* b : backends::AllBackends()) {
    const fs::path other = BinPath(run.first_ctx, std::string(b->name()));
    const bool written = std::any_of(published.begin(), published.end(),
                                     [&](const fs::path& p) { return p == other; });
    if (written || !fs::exists(other, ec)) continue;
    const std::string why = other.string() + " is left from an earlier compile: the new ctx model" +
                            (run.jobs.size() > 1 ? "s do" : " does") +
                            " not use it (remove it, or name " + std::string(b->name()) +
                            " in --ep to compile it anew)";
    run.Warn(why);
  }
}

}  // namespace

Status Publish(CompileRun& run) {
  const CompileOptions& o = run.o;
  CompileReport& report = run.report;
  // Binaries first, the ctx models last: a ctx model never points at a bin not yet in place,
  // and a ctx model beside a newer bin (killed between the two) fails its content-id check.
  // With --error-if-output-exists each rename refuses to replace, atomically: of concurrent
  // compiles into one place exactly one publishes, and a loser removes what it had published.
  const auto mode = o.error_if_output_exists ? bundle::TempFile::Mode::kNoReplace
                                             : bundle::TempFile::Mode::kReplace;
  std::vector<fs::path> published;
  // Every file of this compile lands while no other compile publishes into the folder.
  const PublishLock lock(run.first_ctx.parent_path());
  // Ctrl-C, SIGTERM or SIGHUP from here on waits for the last rename (the process then dies of
  // it): a signal between the renames would leave a binary without its ctx model, or beside an
  // older one.
  const format::TerminationSignalsHeld held;
  if (o.before_publish) ORTC_RETURN_IF_ERROR(o.before_publish());
  auto publish = [&](bundle::TempFile& f) -> Status {
    Status s = f.Commit(mode);
    if (s.ok()) {
      published.push_back(f.final_path());
    } else if (mode == bundle::TempFile::Mode::kNoReplace) {
      std::error_code ec;
      for (const auto& p : published) fs::remove(p, ec);  // they did not exist before
      s = InvalidArgument(s.message() + "; nothing written (--error-if-output-exists)");
    }
    return s;
  };
  for (auto& w : run.binaries) {
    ORTC_RETURN_IF_ERROR(publish(w->file()));
    report.files.push_back({w->final_path(), "context_binary", w->stats().file_bytes});
  }
  if (run.external) {
    ORTC_RETURN_IF_ERROR(publish(*run.external));
    report.files.push_back(
        {run.external->final_path(), "external_initializers", run.external_bytes});
  }
  for (size_t i = 0; i < run.jobs.size(); ++i) {
    ORTC_RETURN_IF_ERROR(publish(*run.ctx_files[i]));
    report.files.push_back({run.jobs[i].ctx_path, "ctx_model", run.ctx_sizes[i]});
    report.models.push_back(run.jobs[i].summary);
  }
  if (o.after_publish) ORTC_RETURN_IF_ERROR(o.after_publish(report));
  WarnOfOlderBinaries(run, published);
  run.clock.Lap("publish");
  return Status::Ok();
}

}  // namespace ortc::compile
