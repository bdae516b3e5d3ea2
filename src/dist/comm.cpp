// Comm over MPI's world when built with MPI (ATTNFC_HAVE_MPI) and started by a launcher;
// one process otherwise (dist/comm.hpp).
#include "attnfc/dist/comm.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "attnfc/base/error.hpp"

#if ATTNFC_HAVE_MPI
#include <mpi.h>
#endif

namespace attnfc::dist {

namespace {

Comm g_world;

// The processes a launcher started, from the variables Open MPI's mpirun, PMIx/PMI (srun
// --mpi=...) and MPICH set: 0 when none is set (not started by a launcher).
long launched_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return std::strtol(v, nullptr, 10);
  }
  // srun --mpi=pmix sets PMIX_RANK but no size; Slurm's own count then tells it.
  const char* pmix = std::getenv("PMIX_RANK");
  const char* tasks = std::getenv("SLURM_NTASKS");
  if (pmix != nullptr && tasks != nullptr) return std::strtol(tasks, nullptr, 10);
  return 0;
}

}  // namespace

Comm& Comm::world() {
  return g_world;
}

#if ATTNFC_HAVE_MPI

void Comm::start(int* argc, char*** argv) {
  if (g_world.mpi_ || launched_size() < 1) return;
  int provided = 0;
  // OpenMP threads never call MPI: only the thread that called MPI_Init does.
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  g_world.mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &g_world.size_);
}

void Comm::stop() {
  if (!g_world.mpi_) return;
  MPI_Finalize();
  g_world.mpi_ = false;
}

void Comm::abort_run(int exit_code) {
  if (g_world.mpi_ && g_world.size_ > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
}

// Tag 1 for the gradient floats, 2 for the loss doubles: two messages of a step never
// match each other's receive.
void Comm::receive_from_previous(float* data, size_t n) const {
  MPI_Recv(data, static_cast<int>(n), MPI_FLOAT, rank_ - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
void Comm::receive_from_previous(double* data, size_t n) const {
  MPI_Recv(data, static_cast<int>(n), MPI_DOUBLE, rank_ - 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
void Comm::send_to_next(const float* data, size_t n) const {
  MPI_Send(data, static_cast<int>(n), MPI_FLOAT, rank_ + 1, 1, MPI_COMM_WORLD);
}
void Comm::send_to_next(const double* data, size_t n) const {
  MPI_Send(data, static_cast<int>(n), MPI_DOUBLE, rank_ + 1, 2, MPI_COMM_WORLD);
}
void Comm::broadcast(float* data, size_t n, int from) const {
  if (size_ > 1) MPI_Bcast(data, static_cast<int>(n), MPI_FLOAT, from, MPI_COMM_WORLD);
}
void Comm::broadcast(double* data, size_t n, int from) const {
  if (size_ > 1) MPI_Bcast(data, static_cast<int>(n), MPI_DOUBLE, from, MPI_COMM_WORLD);
}
void Comm::broadcast(int64_t* data, size_t n, int from) const {
  if (size_ > 1) MPI_Bcast(data, static_cast<int>(n), MPI_INT64_T, from, MPI_COMM_WORLD);
}
bool Comm::any(bool flag) const {
  if (size_ == 1) return flag;
  int in = flag ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return out != 0;
}
void Comm::barrier() const {
  if (size_ > 1) MPI_Barrier(MPI_COMM_WORLD);
}

std::string mpi_description() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string v(version, static_cast<size_t>(length));
  const size_t cut = v.find_first_of(",\n");  // "Open MPI v4.1.4, package: ..."
  if (cut != std::string::npos) v.resize(cut);
  return v + " (data-parallel training under mpirun or srun)";
}

#else  // one process: a build without MPI

namespace {
[[noreturn]] void no_mpi(const std::string& what) {
  throw std::logic_error("dist::Comm::" + what + " on one process (a build or run without MPI)");
}
}  // namespace

void Comm::start(int*, char***) {
  const long n = launched_size();
  if (n > 1)
    throw InputError("started as one of " + std::to_string(n) +
                     " processes by mpirun or srun, but this attnfc was built without MPI; "
                     "expected a build with Open MPI (Debian: libopenmpi-dev, then configure "
                     "again) or a run without mpirun");
}
void Comm::stop() {}
void Comm::abort_run(int) {}

void Comm::receive_from_previous(float*, size_t) const {
  no_mpi("receive_from_previous");
}
void Comm::receive_from_previous(double*, size_t) const {
  no_mpi("receive_from_previous");
}
void Comm::send_to_next(const float*, size_t) const {
  no_mpi("send_to_next");
}
void Comm::send_to_next(const double*, size_t) const {
  no_mpi("send_to_next");
}
void Comm::broadcast(float*, size_t, int) const {}
void Comm::broadcast(double*, size_t, int) const {}
void Comm::broadcast(int64_t*, size_t, int) const {}
bool Comm::any(bool flag) const {
  return flag;
}
void Comm::barrier() const {}

std::string mpi_description() {
  return "not built in (one process per run; install libopenmpi-dev and configure again for "
         "mpirun)";
}

#endif

}  // namespace attnfc::dist
