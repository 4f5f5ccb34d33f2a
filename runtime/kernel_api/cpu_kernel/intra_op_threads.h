// How many threads one run of a session uses inside its ops. All intra-op parallelism goes
// through one OpenMP pool (oneDNN's primitives and our own parallel loops); OpenBLAS, which
// keeps its own pthreads, is set to the same count. Ops run one after another, so the two never
// run at once and the machine is never oversubscribed by one session.
#pragma once

namespace ortc::exec {

// Physical cores of this machine (hyper-threads not counted), at least 1.
int PhysicalCoreCount();

// Resolves SessionOptions::intra_op_threads: 0 (or less) means PhysicalCoreCount(); more than
// the machine's logical CPUs means as many as it has.
int ResolveIntraOpThreads(int requested);

// Makes the calling thread's following runs use n threads (OpenMP and OpenBLAS).
void UseIntraOpThreads(int n);

// The thread count the calling thread's parallel work uses now.
int CurrentIntraOpThreads();

// The threads worth forking for an op of this many multiply-adds (fp32, or the equivalent time
// of other work): at most CurrentIntraOpThreads(), and one unless each thread gets about a
// mebi multiply-add (some 40 us on one core). A parallel region pays a fork and a join, and
// when other processes keep the cores busy, far more: the region waits until every worker has
// had a core, so a 0.1 ms model forked into regions took 56 ms a run. Below this size the
// fork saves microseconds at best.
int ThreadsForWork(double multiply_adds);

// Lowers the calling thread's OpenMP thread count to n for its lifetime (never raises it).
// oneDNN fixes a primitive's thread count when the primitive is created and forks that many at
// every execution, so a primitive must be both created and run under the same scope.
class ScopedIntraOpThreads {
 public:
  explicit ScopedIntraOpThreads(int n);
  ~ScopedIntraOpThreads();
  ScopedIntraOpThreads(const ScopedIntraOpThreads&) = delete;
  ScopedIntraOpThreads& operator=(const ScopedIntraOpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace ortc::exec
