#include "worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace bitparity::detail {

namespace {

// How long a thread that ran out of work polls before it sleeps: a sleeping worker took 10-15 us to
// wake on the CI machine, as long as quantizing 2^15 elements, and launches often come back to back
// (a step over many tensors).
constexpr auto kPollBeforeSleeping = std::chrono::microseconds(50);

void pause_briefly() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Polls `done` until it holds or kPollBeforeSleeping has passed; returns whether it holds.
template <class Done>
bool poll_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kPollBeforeSleeping;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      pause_briefly();
    }
    if (std::chrono::steady_clock::now() > until) return done();
  }
}

// Threads of their own for one call: the fallback, and what every call did before the pool.
void run_on_new_threads(int count, int threads, const std::function<void(int)>& task) {
  std::exception_ptr first_error;
  std::mutex error_mutex;
  std::atomic<int> next{0};
  const auto claim_tasks = [&] {
    for (int t = next++; t < count; t = next++) {
      try {
        task(t);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<std::size_t>(threads - 1));
  for (int h = 1; h < threads; ++h) {
    try {
      helpers.emplace_back(claim_tasks);
    } catch (...) {  // no more threads to be had (system_error, bad_alloc): the others run the rest
      break;
    }
  }
  claim_tasks();
  for (auto& helper : helpers) helper.join();
  if (first_error) std::rethrow_exception(first_error);
}

class WorkerPool {
 public:
  // false where the pool cannot take the call (busy, in a forked child, or the floating-point
  // environment unreadable): nothing was run.
  bool run(int count, int threads, const std::function<void(int)>& task) {
    if (::getpid() != owner_) return false;  // a forked child: the workers stayed in the parent
    std::fenv_t environment;
    if (std::fegetenv(&environment) != 0) return false;
    std::unique_lock<std::mutex> lock(mutex_);
    if (busy_) return false;
    grow_to(threads - 1);
    busy_ = true;
    task_ = &task;
    count_ = count;
    next_ = 0;
    helpers_wanted_ = threads - 1;
    unfinished_ = count;
    first_error_ = nullptr;
    environment_ = environment;
    ++job_;
    lock.unlock();
    // Only as many sleepers as the call can use: on a machine of many cores the pool may hold more
    // (an earlier call asked for more threads), and each one woken would poll for nothing. Workers
    // polling already see the job without a wake.
    for (int h = 0; h < threads - 1; ++h) wake_.notify_one();
    lock.lock();
    work_on_job(lock, false);
    if (unfinished_ != 0) {
      lock.unlock();
      poll_until([&] { return unfinished_.load() == 0; });
      lock.lock();
      finished_.wait(lock, [&] { return unfinished_ == 0; });
    }
    const std::exception_ptr error = std::exchange(first_error_, nullptr);
    task_ = nullptr;
    busy_ = false;
    lock.unlock();
    if (error) std::rethrow_exception(error);
    return true;
  }

 private:
  // Claims the job's tasks one at a time under the lock, so that a task is never taken from a job
  // that has ended: its caller waits for every claimed task before it posts another. A worker takes
  // on the caller's floating-point environment first (rounding, flush-to-zero), as a thread made for
  // the call would have inherited it.
  // Returns whether the thread took part.
  bool work_on_job(std::unique_lock<std::mutex>& lock, bool take_environment) {
    if (take_environment) {  // a worker: only as many as the call asked for take part
      if (task_ == nullptr || next_ >= count_ || helpers_wanted_ == 0) return false;
      --helpers_wanted_;
    }
    while (task_ != nullptr && next_ < count_) {
      const int t = next_++;
      const std::function<void(int)>* const task = task_;
      const std::fenv_t environment = environment_;
      lock.unlock();
      std::exception_ptr error;
      try {
        if (take_environment && std::fesetenv(&environment) != 0) {
          throw std::runtime_error("a worker thread could not take the caller's floating-point environment");
        }
        (*task)(t);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error && !first_error_) first_error_ = error;
      if (--unfinished_ == 0) finished_.notify_all();
    }
    return true;
  }

  // A worker helps with the job under way when it starts, then with each job posted after it. Out of
  // work, it polls for the next job a while before it sleeps, if it took part in the last one (one
  // that found no part left is not wanted as often).
  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      const std::uint64_t seen = job_;
      if (work_on_job(lock, true)) {
        lock.unlock();
        poll_until([&] { return job_.load() != seen; });
        lock.lock();
      }
      wake_.wait(lock, [&] { return job_ != seen; });
    }
  }

  // Where no more threads are to be had, the pool keeps what it has: the caller claims every task
  // the workers do not.
  void grow_to(int workers) {
    while (workers_ < workers) {
      try {
        std::thread(&WorkerPool::serve, this).detach();
      } catch (...) {
        return;
      }
      ++workers_;
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  const pid_t owner_ = ::getpid();
  int workers_ = 0;
  bool busy_ = false;
  // Written under the mutex; atomic for the threads that poll them without it.
  std::atomic<std::uint64_t> job_{0};
  std::atomic<int> unfinished_{0};
  const std::function<void(int)>* task_ = nullptr;
  int count_ = 0, next_ = 0, helpers_wanted_ = 0;
  std::exception_ptr first_error_;
  std::fenv_t environment_{};
};

// Never destroyed: its workers wait on it until the process ends.
WorkerPool& pool() {
  static WorkerPool* const instance = new WorkerPool();
  return *instance;
}

}  // namespace

void run_tasks(int count, int threads, const std::function<void(int)>& task) {
  if (count <= 0) return;
  threads = std::min(threads, count);
  if (threads <= 1) {
    std::exception_ptr first_error;
    for (int t = 0; t < count; ++t) {
      try {
        task(t);
      } catch (...) {
        if (!first_error) first_error = std::current_exception();
      }
    }
    if (first_error) std::rethrow_exception(first_error);
    return;
  }
  if (!pool().run(count, threads, task)) run_on_new_threads(count, threads, task);
}

}  // namespace bitparity::detail
