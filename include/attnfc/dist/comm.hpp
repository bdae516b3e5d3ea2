#pragma once
// The processes of one training run (data-parallel training, docs/SCALING.md).
//
// Started by an MPI launcher (mpirun, srun) with attnfc built against Open MPI, the run
// is MPI's world: rank r of n. Otherwise it is one process, rank 0 of 1, and every call
// below is a no-op or returns its input; no MPI call is made, so commands other than
// train, and train outside a launcher, never touch MPI.
//
// Only what the training step needs, in a fixed order that does not depend on timing:
// point-to-point sends along the rank chain 0 -> 1 -> ... -> n-1, broadcasts, and a
// logical OR. Buffers are the caller's: nothing here allocates per call.
#include <cstddef>
#include <cstdint>
#include <string>

namespace attnfc::dist {

class Comm {
 public:
  // The run's processes. start() must have been called (else: one process).
  static Comm& world();
  // Called once by main() for `attnfc train`: MPI_Init when a launcher started more than
  // one process and MPI is built in. InputError when a launcher started several
  // processes of a build without MPI (they would each train the same run folder).
  static void start(int* argc, char*** argv);
  // MPI_Finalize when start() initialised MPI; safe to call when it did not.
  static void stop();
  // After an error in a run of several processes: MPI_Abort, so that mpirun stops every
  // rank (one that returned instead would leave the others waiting for its messages).
  // Returns (does nothing) on one process.
  static void abort_run(int exit_code);

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  bool last() const { return rank_ == size_ - 1; }

  // The rank chain: rank r receives from r - 1 and sends to r + 1 (the tag keeps the float
  // and the double message of a step apart). Not to be called on rank 0 / the last rank.
  void receive_from_previous(float* data, size_t n) const;
  void receive_from_previous(double* data, size_t n) const;
  void send_to_next(const float* data, size_t n) const;
  void send_to_next(const double* data, size_t n) const;
  // `data` of rank `from` to every rank.
  void broadcast(float* data, size_t n, int from) const;
  void broadcast(double* data, size_t n, int from) const;
  void broadcast(int64_t* data, size_t n, int from) const;
  // Whether `flag` is set on any rank (every rank gets the same answer).
  bool any(bool flag) const;
  void barrier() const;

 private:
  int rank_ = 0, size_ = 1;
  bool mpi_ = false;  // MPI_Init was called by start()
};

// For `attnfc --version`: "Open MPI v4.1.4 (data-parallel training with mpirun/srun)",
// or that this build has no MPI.
std::string mpi_description();

}  // namespace attnfc::dist
