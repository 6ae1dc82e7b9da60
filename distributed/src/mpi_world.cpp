#include "bitparity/distributed/mpi_world.hpp"

#include <mpi.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

namespace {

std::mutex activity_mutex;
std::string activity = "starting";
std::atomic<std::int64_t> activity_serial{0};
int world_rank = 0, world_size = 1;

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw Error(ErrorCode::invalid_argument, std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
  }
}

int checked_count(std::size_t count, const char* what) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw Error(ErrorCode::invalid_argument, std::string(what) + ": more than 2^31-1 items in one collective");
  }
  return static_cast<int>(count);
}

void merge_float_sums(void* in, void* inout, int* count, MPI_Datatype*) {
  auto* from = static_cast<const ExactFloatSum*>(in);
  auto* into = static_cast<ExactFloatSum*>(inout);
  for (int i = 0; i < *count; ++i) into[i].merge(from[i]);
}

void merge_square_sums(void* in, void* inout, int* count, MPI_Datatype*) {
  auto* from = static_cast<const ExactSquareSum*>(in);
  auto* into = static_cast<ExactSquareSum*>(inout);
  for (int i = 0; i < *count; ++i) into[i].merge(from[i]);
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    check(MPI_Type_contiguous(sizeof(ExactFloatSum), MPI_BYTE, &float_sum_type_), "MPI_Type_contiguous");
    check(MPI_Type_commit(&float_sum_type_), "MPI_Type_commit");
    check(MPI_Type_contiguous(sizeof(ExactSquareSum), MPI_BYTE, &square_sum_type_), "MPI_Type_contiguous");
    check(MPI_Type_commit(&square_sum_type_), "MPI_Type_commit");
    // Commutative: the merges are exact, so MPI may combine in any order.
    check(MPI_Op_create(&merge_float_sums, 1, &merge_float_op_), "MPI_Op_create");
    check(MPI_Op_create(&merge_square_sums, 1, &merge_square_op_), "MPI_Op_create");
  }
  ~MpiCommunicator() override {
    MPI_Op_free(&merge_float_op_);
    MPI_Op_free(&merge_square_op_);
    MPI_Type_free(&float_sum_type_);
    MPI_Type_free(&square_sum_type_);
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_gather(const void* send, std::size_t bytes_per_rank, void* receive) override {
    const int count = checked_count(bytes_per_rank, "all_gather");
    check(MPI_Allgather(send, count, MPI_BYTE, receive, count, MPI_BYTE, comm_), "MPI_Allgather");
  }
  void reduce_scatter(const ExactFloatSum* send, ExactFloatSum* receive, std::size_t count) override {
    check(MPI_Reduce_scatter_block(send, receive, checked_count(count, "reduce_scatter"), float_sum_type_, merge_float_op_,
                                   comm_),
          "MPI_Reduce_scatter_block");
  }
  void all_reduce(ExactSquareSum* values, std::size_t count) override {
    check(MPI_Allreduce(MPI_IN_PLACE, values, checked_count(count, "all_reduce"), square_sum_type_, merge_square_op_,
                        comm_),
          "MPI_Allreduce");
  }
  std::int64_t all_reduce_sum(std::int64_t value) override {
    long long total = 0, mine = value;
    check(MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, comm_), "MPI_Allreduce");
    return total;
  }
  bool all_reduce_any(bool value) override {
    int any = 0, mine = value ? 1 : 0;
    check(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, comm_), "MPI_Allreduce");
    return any != 0;
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    check(MPI_Bcast(data, checked_count(bytes, "broadcast"), MPI_BYTE, root, comm_), "MPI_Bcast");
  }
  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }

 private:
  MPI_Datatype float_sum_type_ = MPI_DATATYPE_NULL, square_sum_type_ = MPI_DATATYPE_NULL;
  MPI_Op merge_float_op_ = MPI_OP_NULL, merge_square_op_ = MPI_OP_NULL;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

std::atomic<bool> watchdog_running{false};
std::thread watchdog;

// Every rank's watchdog keeps two times in a small file the ranks of one host share (opened by all,
// then unlinked, so nothing is left behind): when it last ran (its process is alive) and when its
// rank last made progress. A rank that notices it is stuck names the rank it waits on: one whose
// watchdog fell silent is stopped (SIGSTOP) or frozen whole; one alive without progress hangs in a call.
struct RankTimes {
  std::atomic<std::int64_t> alive_ns, progress_ns;
};
RankTimes* shared_times = nullptr;  // world_size entries, or null (ranks on several hosts)

std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void share_rank_times(Communicator& world) {
  char path[4096] = {};
  if (world_rank == 0) {
    const char* folder = std::getenv("TMPDIR");
    std::snprintf(path, sizeof path, "%s/bitparity-rank-times.XXXXXX", folder != nullptr && *folder != '\0' ? folder : "/tmp");
    const int fd = ::mkstemp(path);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(sizeof(RankTimes) * static_cast<std::size_t>(world_size))) != 0) path[0] = '\0';
    if (fd >= 0) ::close(fd);
  }
  world.broadcast(path, sizeof path, 0);
  void* mapped = MAP_FAILED;
  if (path[0] != '\0') {
    const int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
      mapped = ::mmap(nullptr, sizeof(RankTimes) * static_cast<std::size_t>(world_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      ::close(fd);
    }
  }
  const bool everywhere = !world.all_reduce_any(mapped == MAP_FAILED);  // also waits until every rank has it open
  if (world_rank == 0 && path[0] != '\0') ::unlink(path);
  if (!everywhere) {
    if (mapped != MAP_FAILED) ::munmap(mapped, sizeof(RankTimes) * static_cast<std::size_t>(world_size));
    return;
  }
  shared_times = static_cast<RankTimes*>(mapped);
  shared_times[world_rank].alive_ns = shared_times[world_rank].progress_ns = wall_ns();
}

// Why this rank cannot go on: the ranks whose watchdog is silent, else those without progress.
std::string stuck_reason(double stuck_seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "no progress for %.0f s", stuck_seconds);
  std::string reason = text;
  if (shared_times == nullptr) return reason + " (a peer rank failed or hangs)";
  const std::int64_t now = wall_ns();
  std::string silent, idle;
  for (int r = 0; r < world_size; ++r) {
    if (r == world_rank) continue;
    const double quiet = static_cast<double>(now - shared_times[r].alive_ns.load()) * 1e-9;
    const double still = static_cast<double>(now - shared_times[r].progress_ns.load()) * 1e-9;
    std::snprintf(text, sizeof text, "%d (%.0f s)", r, quiet > 2.0 ? quiet : still);
    if (quiet > 2.0) {
      silent += (silent.empty() ? "" : ", ") + std::string(text);
    } else if (still >= stuck_seconds * 0.5) {
      idle += (idle.empty() ? "" : ", ") + std::string(text);
    }
  }
  if (!silent.empty()) return reason + ": waiting on rank " + silent + ", whose process has stopped running (SIGSTOP, or frozen whole)";
  if (!idle.empty()) return reason + ": waiting on rank " + idle + ", alive but without progress (it hangs in a call)";
  return reason + " (a peer rank failed or hangs)";
}

void watch(double stuck_seconds, int stuck_code) {
  std::int64_t seen = activity_serial.load();
  auto since = std::chrono::steady_clock::now();
  while (watchdog_running.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::int64_t now_serial = activity_serial.load();
    const auto now = std::chrono::steady_clock::now();
    if (shared_times != nullptr) shared_times[world_rank].alive_ns = wall_ns();
    if (now_serial != seen) {
      seen = now_serial;
      since = now;
      if (shared_times != nullptr) shared_times[world_rank].progress_ns = wall_ns();
    } else if (std::chrono::duration<double>(now - since).count() > stuck_seconds) {
      rank_failed(stuck_reason(stuck_seconds), stuck_code);
    }
  }
}

}  // namespace

MpiWorld::MpiWorld(int& argc, char**& argv, double stuck_seconds, int stuck_code) {
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  // Errors come back as codes and become exceptions, which rank_failed() reports.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  communicator_ = std::make_unique<MpiCommunicator>();
  if (stuck_seconds > 0) {
    share_rank_times(*communicator_);
    watchdog_running = true;
    watchdog = std::thread(watch, stuck_seconds, stuck_code);
  }
}

MpiWorld::~MpiWorld() {
  watchdog_running = false;
  if (watchdog.joinable()) watchdog.join();
  chosen_.reset();
  communicator_.reset();
  MPI_Finalize();
}

int MpiWorld::rank() const { return world_rank; }

std::unique_ptr<Communicator> MpiWorld::first_ranks(int count) {
  MPI_Comm comm = MPI_COMM_NULL;
  check(MPI_Comm_split(MPI_COMM_WORLD, world_rank < count ? 0 : MPI_UNDEFINED, world_rank, &comm), "MPI_Comm_split");
  if (comm == MPI_COMM_NULL) return nullptr;
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return std::make_unique<MpiCommunicator>(comm);
}
int MpiWorld::size() const { return world_size; }

void set_activity(std::string now) {
  std::lock_guard<std::mutex> lock(activity_mutex);
  activity = std::move(now);
  ++activity_serial;
}

std::string current_activity() {
  std::lock_guard<std::mutex> lock(activity_mutex);
  return activity;
}

void rank_failed(const std::string& why, int code) {
  std::fprintf(stderr, "error: rank %d of %d failed while %s: %s\n", world_rank, world_size, current_activity().c_str(),
               why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace bitparity::distributed
