#include "bitparity/distributed/mpi_world.hpp"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
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

void watch(double stuck_seconds, int stuck_code) {
  std::int64_t seen = activity_serial.load();
  auto since = std::chrono::steady_clock::now();
  while (watchdog_running.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::int64_t now_serial = activity_serial.load();
    const auto now = std::chrono::steady_clock::now();
    if (now_serial != seen) {
      seen = now_serial;
      since = now;
    } else if (std::chrono::duration<double>(now - since).count() > stuck_seconds) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.0f", stuck_seconds);
      rank_failed(std::string("no progress for ") + seconds + " s (a peer rank failed or hangs)", stuck_code);
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
