// Concurrency check of the runtime, built with ThreadSanitizer (and ASan + UBSan) by
// scripts/sanitize: many threads Run one session while others create, run and destroy sessions
// of a weight-sharing group.
//
//   session_concurrency [--threads N] [--runs N] [--group-threads N] [--cycles N]
//                       SESSION_CTX GROUP_CTX...
//
// One session: SESSION_CTX is opened once; --threads threads (8) each Run it --runs times (1000)
// and compare every output, byte for byte, with the reference for its input, computed first on
// one thread. There are half as many inputs as threads, so two threads also share each input
// tensor. At the same time, --group-threads threads (4) each take the GROUP_CTX models in turn
// (--cycles sessions each, 100): create a session, run it once, check the outputs against that
// model's reference, destroy it. The group's models share one context binary, so it is mapped,
// shared and unmapped again while other threads open and close it.
//
// Every session runs with intra_op_threads = 1 (and the script sets OMP_NUM_THREADS=1): the
// OpenMP runtimes and OpenBLAS are not instrumented, and their worker threads would be reported
// falsely; the threads here are the application's own. Inputs must be float32; dynamic
// dimensions are fed as 1. Exit 0 when every run gave its reference, 1 otherwise, 2 on bad use.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "loader/binary_cache.h"  // internal: how often a binary was mapped
#include "ortc/runtime.h"

namespace {

using Feeds = std::vector<std::pair<std::string, ortc::Tensor>>;

struct Options {
  int threads = 8, runs = 1000, group_threads = 4, cycles = 100;
  std::string session;
  std::vector<std::string> group;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: session_concurrency [--threads N] [--runs N] [--group-threads N] "
               "[--cycles N] SESSION_CTX GROUP_CTX...\n",
               why);
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    int* count = a == "--threads"         ? &o.threads
                 : a == "--runs"          ? &o.runs
                 : a == "--group-threads" ? &o.group_threads
                 : a == "--cycles"        ? &o.cycles
                                          : nullptr;
    if (count) {
      if (i + 1 == argc || (*count = std::atoi(argv[++i])) < 1) Usage(("bad " + a).c_str());
    } else if (a.rfind("--", 0) == 0) {
      Usage(("unknown option " + a).c_str());
    } else if (o.session.empty()) {
      o.session = a;
    } else {
      o.group.push_back(a);
    }
  }
  if (o.session.empty() || o.group.empty()) Usage("a session model and group models are needed");
  return o;
}

ortc::SessionOptions OneThreadPerRun() {
  ortc::SessionOptions o;
  o.intra_op_threads = 1;
  return o;
}

std::unique_ptr<ortc::Session> Open(const std::string& path) {
  auto s = ortc::Session::Create(path, OneThreadPerRun());
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), s.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(s).value();
}

// Float inputs of the session's shapes, filled from `seed` (a small LCG: the same on every run).
Feeds MakeFeeds(const ortc::Session& s, unsigned seed) {
  Feeds feeds;
  uint32_t state = seed * 2654435761u + 1;
  for (const auto& in : s.inputs()) {
    if (in.type != ortc::ValueType::kTensor || in.dtype != ortc::DataType::kFloat) {
      std::fprintf(stderr, "input '%s' is not a float32 tensor\n", in.name.c_str());
      std::exit(2);
    }
    std::vector<int64_t> shape;
    size_t n = 1;
    for (int64_t d : in.shape) {
      shape.push_back(d < 1 ? 1 : d);
      n *= static_cast<size_t>(shape.back());
    }
    std::vector<float> v(n);
    for (auto& x : v) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2 - 1;
    }
    feeds.emplace_back(in.name, ortc::Tensor::FromBytes(ortc::DataType::kFloat, shape, v.data(),
                                                        n * sizeof(float)));
  }
  return feeds;
}

std::vector<ortc::Tensor> RunOrDie(const ortc::Session& s, const Feeds& feeds) {
  auto r = s.Run(feeds);
  if (!r.ok()) {
    std::fprintf(stderr, "reference run: %s\n", r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

// Empty when `got` equals `want` exactly (dtype, shape, bytes); what differs otherwise.
std::string Compare(const ortc::Result<std::vector<ortc::Tensor>>& got,
                    const std::vector<ortc::Tensor>& want) {
  if (!got.ok()) return got.status().ToString();
  if (got->size() != want.size()) return "another number of outputs";
  for (size_t k = 0; k < want.size(); ++k) {
    const ortc::Tensor &g = got.value()[k], &w = want[k];
    if (g.dtype() != w.dtype() || g.shape() != w.shape() || g.byte_size() != w.byte_size() ||
        std::memcmp(g.raw(), w.raw(), w.byte_size()) != 0)
      return "output " + std::to_string(k) + " differs from the reference";
  }
  return {};
}

// Counts failures and keeps the first message.
struct Failures {
  std::atomic<int> count{0};
  std::mutex mu;
  std::string first;
  void Add(const std::string& what) {
    if (count++ == 0) {
      std::lock_guard<std::mutex> lock(mu);
      first = what;
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);

  // References, one thread, before anything runs concurrently. The group's sessions are
  // destroyed again, so its binary is unmapped when the concurrent part starts.
  auto session = Open(o.session);
  const int n_inputs = std::max(1, o.threads / 2);
  std::vector<Feeds> feeds;
  std::vector<std::vector<ortc::Tensor>> expected;
  for (int i = 0; i < n_inputs; ++i) {
    feeds.push_back(MakeFeeds(*session, 100 + i));
    expected.push_back(RunOrDie(*session, feeds.back()));
  }
  std::vector<Feeds> group_feeds;
  std::vector<std::vector<ortc::Tensor>> group_expected;
  for (size_t m = 0; m < o.group.size(); ++m) {
    auto s = Open(o.group[m]);
    group_feeds.push_back(MakeFeeds(*s, 200 + static_cast<unsigned>(m)));
    group_expected.push_back(RunOrDie(*s, group_feeds.back()));
  }

  const int opens_before = ortc::loader::BinaryOpenCount();
  Failures run_failures, group_failures;
  std::atomic<int> runs_done{0}, sessions_done{0};
  std::latch start(o.threads + o.group_threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    threads.emplace_back([&, t] {
      const int i = t % n_inputs;
      start.arrive_and_wait();
      for (int r = 0; r < o.runs; ++r) {
        const std::string diff = Compare(session->Run(feeds[i]), expected[i]);
        if (!diff.empty()) run_failures.Add("thread " + std::to_string(t) + ": " + diff);
        ++runs_done;
      }
    });
  }
  for (int t = 0; t < o.group_threads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int c = 0; c < o.cycles; ++c) {
        const size_t m = static_cast<size_t>(t + c) % o.group.size();
        auto s = ortc::Session::Create(o.group[m], OneThreadPerRun());
        const std::string diff =
            s.ok() ? Compare((*s)->Run(group_feeds[m]), group_expected[m]) : s.status().ToString();
        if (!diff.empty()) group_failures.Add(o.group[m] + ": " + diff);
        ++sessions_done;
      }
    });
  }
  for (auto& th : threads) th.join();

  std::printf("one session: %d threads x %d runs, %d differed\n", o.threads, o.runs,
              run_failures.count.load());
  std::printf(
      "group of %zu models: %d threads x %d sessions created, run once, destroyed, %d "
      "differed\n",
      o.group.size(), o.group_threads, o.cycles, group_failures.count.load());
  // More than once: the group's last session went meanwhile and the binary was mapped afresh.
  std::printf("the group's binary was mapped and verified %d times\n",
              ortc::loader::BinaryOpenCount() - opens_before);
  if (runs_done != o.threads * o.runs || sessions_done != o.group_threads * o.cycles) {
    std::fprintf(stderr, "not every run happened\n");
    return 1;
  }
  if (run_failures.count || group_failures.count) {
    if (run_failures.count) std::fprintf(stderr, "first: %s\n", run_failures.first.c_str());
    if (group_failures.count) std::fprintf(stderr, "first: %s\n", group_failures.first.c_str());
    return 1;
  }
  return 0;
}
