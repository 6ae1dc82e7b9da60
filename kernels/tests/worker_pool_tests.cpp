// The CPU launchers' worker pool (worker_pool.hpp) and the partition over it (parallel_for.hpp):
// every task and every index runs exactly once, whoever calls, however often, concurrently or from
// inside a task, after a task threw, and in a forked child, where the pool's workers are not; the
// workers take part, are kept between calls, and run under the caller's floating-point environment.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "parallel_for.hpp"
#include "worker_pool.hpp"

namespace bitparity::detail {
namespace {

// "" when task t of `count` ran exactly once for every t, else the first that did not.
std::string each_once(const std::vector<std::atomic<int>>& runs) {
  for (std::size_t t = 0; t < runs.size(); ++t) {
    if (runs[t].load() != 1) return "task " + std::to_string(t) + " ran " + std::to_string(runs[t].load()) + " times";
  }
  return "";
}

// A number for each thread, never reused (thread ids may be, once a thread has ended).
int thread_number() {
  static std::atomic<int> threads{0};
  thread_local const int number = threads++;
  return number;
}

// Task bodies that wait (up to 20 s) until all `count` tasks of the call have started: each call then
// needs `count` threads at once, so the pool's workers must take part. false if they never came.
class Meeting {
 public:
  explicit Meeting(int count) : count_(count) {}
  bool meet() {
    arrived_++;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived_.load() < count_) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::yield();
    }
    return true;
  }

 private:
  const int count_;
  std::atomic<int> arrived_{0};
};

TEST(WorkerPool, EveryTaskRunsOnceOverManyCalls) {
  for (int count : {1, 2, 3, 8}) {
    for (int call = 0; call < 500; ++call) {
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(count));
      run_tasks(count, [&](int t) { runs[static_cast<std::size_t>(t)]++; });
      ASSERT_EQ(each_once(runs), "") << count << " tasks, call " << call;
    }
  }
}

TEST(WorkerPool, ConcurrentAndNestedCallsRunEveryTask) {
  constexpr int kCallers = 4, kCalls = 200;
  std::atomic<std::int64_t> inner_runs{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&] {
      for (int call = 0; call < kCalls; ++call) run_tasks(3, [&](int) { run_tasks(5, 2, [&](int) { inner_runs++; }); });
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(inner_runs.load(), std::int64_t{kCallers} * kCalls * 3 * 5);
}

TEST(WorkerPool, NoMoreThreadsTakePartThanTheCallAsks) {
  for (int call = 0; call < 50; ++call) {
    {
      Meeting meeting(5);
      run_tasks(5, [&](int) { meeting.meet(); });  // four workers, all now polling for the next call
    }
    std::mutex mutex;
    std::set<int> threads;
    run_tasks(64, 2, [&](int) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
      const std::lock_guard<std::mutex> lock(mutex);
      threads.insert(thread_number());
    });
    ASSERT_LE(threads.size(), 2u) << "call " << call << ": asked for 2 threads, " << threads.size() << " took part";
  }
}

TEST(WorkerPool, ThreadsClaimTasksAsTheyFinish) {
  // Task 0 waits (up to 20 s) for the other seven: the thread that does not run it must run them all,
  // where a fixed share of tasks per thread would leave some waiting behind task 0.
  for (int call = 0; call < 20; ++call) {
    std::atomic<int> others{0};
    bool waited = false;
    run_tasks(8, 2, [&](int t) {
      if (t != 0) {
        others++;
        return;
      }
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (others.load() < 7 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      waited = others.load() == 7;
    });
    ASSERT_TRUE(waited) << "call " << call << ": tasks 1-7 did not run while task 0 waited";
  }
}

TEST(WorkerPool, KeptWorkersTakePartAndAreReused) {
  constexpr int kCalls = 20;
  std::set<int> helpers;
  for (int call = 0; call < kCalls; ++call) {
    Meeting meeting(2);
    std::atomic<int> helper{-1};
    const int caller = thread_number();
    bool met[2] = {false, false};
    run_tasks(2, [&](int t) {
      met[t] = meeting.meet();
      if (thread_number() != caller) helper = thread_number();
    });
    ASSERT_TRUE(met[0] && met[1]) << "call " << call << ": the two tasks never ran at once";
    helpers.insert(helper.load());
  }
  // Threads made for each call would be kCalls different ones; the pool has no more workers than the
  // widest call of this process asked for (here at most 5 threads, or one per core).
  const std::size_t most_workers = std::max<std::size_t>(8, std::thread::hardware_concurrency());
  EXPECT_LE(helpers.size(), most_workers) << "the calls' second tasks ran on " << helpers.size() << " different threads";
}

TEST(WorkerPool, WorkersRunUnderTheCallersFloatingPointEnvironment) {
  run_tasks(2, [](int) {});  // workers made under the default environment
  ASSERT_EQ(std::fesetround(FE_DOWNWARD), 0);
  Meeting meeting(2);
  int modes[2] = {-1, -1};
  bool met[2] = {false, false};
  run_tasks(2, [&](int t) {
    met[t] = meeting.meet();
    modes[t] = std::fegetround();
  });
  std::fesetround(FE_TONEAREST);
  ASSERT_TRUE(met[0] && met[1]) << "the two tasks never ran at once";
  EXPECT_EQ(modes[0], FE_DOWNWARD);
  EXPECT_EQ(modes[1], FE_DOWNWARD);
}

TEST(WorkerPool, ATaskExceptionReachesTheCallerAndThePoolGoesOn) {
  for (int call = 0; call < 100; ++call) {
    const int thrower = call % 3;
    std::vector<std::atomic<int>> runs(3);
    EXPECT_THROW(run_tasks(3, 1 + call % 3,
                           [&](int t) {
                             runs[static_cast<std::size_t>(t)]++;
                             if (t == thrower) throw std::runtime_error("task " + std::to_string(t));
                           }),
                 std::runtime_error)
        << "call " << call;
    EXPECT_EQ(each_once(runs), "") << "the other tasks still run, once";
  }
  std::vector<std::atomic<int>> runs(4);
  run_tasks(4, [&](int t) { runs[static_cast<std::size_t>(t)]++; });
  EXPECT_EQ(each_once(runs), "");
}

TEST(WorkerPool, AForkedChildRunsItsTasks) {
  run_tasks(4, [](int) {});  // the pool has its workers in this process
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Tasks that must run at once: with the parent's workers counted but absent, they never would.
    Meeting meeting(4);
    std::vector<std::atomic<int>> runs(4), met(4);
    run_tasks(4, [&](int t) {
      runs[static_cast<std::size_t>(t)]++;
      met[static_cast<std::size_t>(t)] = meeting.meet() ? 1 : 0;
    });
    for (auto& m : met) {
      if (m.load() != 1) std::_Exit(4);
    }
    std::_Exit(each_once(runs).empty() ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit (a hang would time out here)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "in the child, a task ran other than once (3) or the tasks never ran at once (4)";
}

TEST(ParallelFor, EachIndexRunsOnceWhateverTheThreadsAndCounts) {
  for (int threads : {0, 1, 2, 3, 5}) {
    for (std::int64_t count : {0, 1, 2, 7, 64, 1001}) {
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(count));
      parallel_for(10, 10 + count, threads, 1, [&](std::int64_t i) { runs[static_cast<std::size_t>(i - 10)]++; });
      ASSERT_EQ(each_once(runs), "") << threads << " threads, " << count << " indices";
    }
  }
}

TEST(ParallelFor, PartsCoverTheRangeInOrderWithoutOverflow) {
  constexpr std::int64_t kHuge = std::int64_t{1} << 62;
  for (const std::int64_t count : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1000}, kHuge, kHuge + 12345}) {
    for (const std::int64_t parts : {std::int64_t{1}, std::int64_t{3}, std::int64_t{16}, std::int64_t{32768}}) {
      if (parts > count) continue;
      std::int64_t previous = part_begin(count, parts, 0);
      ASSERT_EQ(previous, 0);
      for (std::int64_t t = 1; t <= parts; ++t) {
        const std::int64_t next = part_begin(count, parts, t);
        const std::int64_t size = next - previous;
        ASSERT_TRUE(size == count / parts || size == count / parts + 1) << count << " in " << parts << ", part " << t - 1;
        previous = next;
      }
      ASSERT_EQ(previous, count) << count << " in " << parts;
    }
  }
}

TEST(ParallelFor, ABodysExceptionReachesTheCaller) {
  EXPECT_THROW(parallel_for(0, 1000, 2, 1,
                            [](std::int64_t i) {
                              if (i == 777) throw std::runtime_error("index 777");
                            }),
               std::runtime_error);
}

}  // namespace
}  // namespace bitparity::detail
