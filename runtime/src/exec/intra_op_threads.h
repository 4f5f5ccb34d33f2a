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

}  // namespace ortc::exec
