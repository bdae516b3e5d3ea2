#pragma once
// Threading hygiene for every OpenMP kernel.

namespace attnfc::kernels {

// Physical cores of this machine (hyper-threads do not help FMA-bound kernels).
int physical_cores();
// CPUs this process may run on (its affinity mask: taskset, a cpuset, Slurm); 0 if unknown.
int allowed_cpu_count();
// Threads the kernels use: OMP_NUM_THREADS when set, else physical_cores().
int default_threads();
void set_threads(int n);
// default_threads(), marked as attnfc's choice when the user made none (no --threads, no
// OMP_NUM_THREADS): a training loop may then move the count with the machine's load
// (ThreadGovernor). set_threads() clears the mark.
void set_threads_automatic();
bool threads_automatic();
int current_threads();
// Flush denormals to zero / treat denormal inputs as zero in the calling thread.
// Every kernel's parallel region calls this first (it is a single MXCSR write).
void enable_flush_to_zero();

}  // namespace attnfc::kernels
