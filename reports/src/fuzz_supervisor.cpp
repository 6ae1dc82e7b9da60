#include "fuzz_supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/progress.hpp"

extern char** environ;

namespace bitparity::reports {

namespace {

constexpr int kReportFd = 3;  // the workers' event pipe

struct Worker {
  int index = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string pending;  // bytes after the last complete line
  nlohmann::json last_start;
  // The lowest visit of this worker's share not yet done (visits index, index + jobs, ...): the one
  // it is in, or the next. The state resumes at the lowest over the workers, so a slower worker's
  // share is never skipped; a faster one's visits past it run again, giving the same cases.
  std::int64_t position = 0;
  bool exited = false;
};

void start_worker(Worker& worker, const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("cannot make a pipe for a fuzz worker: ") + std::strerror(errno));
  // Keep the write end above the child's target descriptor, so that dup2 really copies it.
  const int write_end = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end, kReportFd);
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(write_end);
  if (error != 0) {
    ::close(fds[0]);
    throw std::runtime_error(std::string("cannot start a fuzz worker: ") + std::strerror(error));
  }
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  worker.pid = pid;
  worker.fd = fds[0];
  worker.pending.clear();
  worker.last_start = nullptr;
  worker.exited = false;
}

std::int64_t lowest_position(const std::vector<Worker>& workers) {
  std::int64_t lowest = workers.front().position;
  for (const auto& worker : workers) lowest = std::min(lowest, worker.position);
  return lowest;
}

void add(FuzzTally& tally, const nlohmann::json& visit) {
  tally.visits += 1;
  tally.cases += visit.value("cases", std::int64_t{0});
  tally.elements += visit.value("elements", std::int64_t{0});
  tally.incomplete_visits += visit.value("incomplete", false) ? 1 : 0;
  tally.seconds += visit.value("seconds", 0.0);
  tally.reference_seconds += visit.value("reference_seconds", 0.0);
}

std::string describe_visit(const nlohmann::json& event) {
  if (!event.is_object()) return "";
  return event.value("property", "?") + " " + event.value("target", "?") + " on " + event.value("implementation", "?");
}

std::string progress_line(const FuzzTotals& totals, const FuzzOptions& options, double elapsed, const std::string& current) {
  char head[256];
  std::snprintf(head, sizeof head, "fuzz %s/%s  %lld cases (%.1f/s)  failures %zu  now %s  |", format_duration(elapsed).c_str(),
                format_duration(options.budget_seconds).c_str(), static_cast<long long>(totals.all.cases),
                elapsed > 0 ? totals.all.cases / elapsed : 0.0, totals.failures.size(), current.c_str());
  std::string line = head;
  for (const auto& [property, tally] : totals.by_property) line += " " + property + ":" + std::to_string(tally.cases);
  return line;
}

}  // namespace

FuzzTotals supervise_fuzz(const FuzzOptions& options, const WorkerArguments& worker_arguments, double log_every,
                          const std::function<void(const FuzzTotals&)>& save_state) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  FuzzTotals totals;
  totals.next_visit = options.first_visit;
  std::vector<Worker> workers(static_cast<std::size_t>(options.jobs));
  for (int k = 0; k < options.jobs; ++k) {
    workers[k].index = k;
    workers[k].position = options.first_visit + k;
    start_worker(workers[k], worker_arguments(k, options.first_visit, options.budget_seconds));
  }
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  double last_print = 0.0, last_save = 0.0;
  bool printed = false, stopping = false, killed = false;
  double stop_deadline = 0.0;
  // A worker finishes the case it is in: allow it that long past the budget, then kill it.
  const double grace = std::max(30.0, 0.1 * options.budget_seconds);
  constexpr double kInterruptedWorkerGrace = 5.0;
  double allowance = grace;  // how long the workers were given to stop
  std::string current = "starting";
  const auto stop_all = [&](int signal) {
    for (auto& worker : workers) {
      if (!worker.exited) ::kill(worker.pid, signal);
    }
  };
  const auto handle = [&](Worker& worker, const nlohmann::json& event) {
    const std::string kind = event.value("event", "");
    if (kind == "start") {
      worker.last_start = event;
      worker.position = event.value("visit", worker.position);
      current = describe_visit(event);
    } else if (kind == "visit") {
      // A visit cut short (a signal) is done again by the next run; a finished one is not.
      worker.position = event.value("visit", worker.position) + (event.value("incomplete", false) ? 0 : options.jobs);
      add(totals.all, event);
      add(totals.by_property[event.value("property", "?")], event);
      add(totals.by_suite[event.value("suite", "?")], event);
      if (!event.value("passed", true)) {
        totals.failures.push_back(event);
        totals.new_cases += event.value("added", false) ? 1 : 0;
        if (options.stop_on_failure && !stopping) {
          stopping = true;
          stop_deadline = elapsed() + grace;
          stop_all(SIGTERM);
        }
      }
    } else if (kind == "stopped") {
      // A worker that a signal stopped while this run was not stopping was signalled from outside
      // (its pid, not the run's): its share of the budget is not run, so the campaign is partial.
      if (event.value("reason", "") == "interrupted" && !stopping && !interrupted()) {
        const std::string why = "worker " + std::to_string(worker.index) + " was stopped by " + event.value("signal", "a signal") +
                                " from outside this fuzz";
        totals.cut_short = true;
        totals.stop_reasons.push_back(why);
        std::fprintf(stderr, "%snote: %s; its share of the budget is not run, so this campaign is partial (its visits are left "
                     "to the next run)\n", terminal ? "\r\033[K" : "", why.c_str());
      } else {
        totals.stop_reasons.push_back(event.value("reason", "?"));
      }
    }
  };
  while (std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return !w.exited; })) {
    std::vector<pollfd> polled;
    for (const auto& worker : workers) {
      if (!worker.exited) polled.push_back({worker.fd, POLLIN, 0});
    }
    ::poll(polled.data(), polled.size(), 500);
    for (auto& worker : workers) {
      if (worker.exited) continue;
      char buffer[65536];
      bool closed = false;
      while (true) {
        const ssize_t n = ::read(worker.fd, buffer, sizeof buffer);
        if (n > 0) {
          worker.pending.append(buffer, static_cast<std::size_t>(n));
          continue;
        }
        closed = n == 0 || (errno != EAGAIN && errno != EINTR);
        break;
      }
      for (std::size_t end; (end = worker.pending.find('\n')) != std::string::npos;) {
        const std::string line = worker.pending.substr(0, end);
        worker.pending.erase(0, end + 1);
        const nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
        if (!event.is_discarded()) handle(worker, event);
      }
      if (!closed) continue;
      ::close(worker.fd);
      int status = 0;
      while (::waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
      }
      worker.exited = true;
      const bool by_us = stopping || killed || interrupted();
      const bool crashed = WIFSIGNALED(status) && !by_us;
      // A worker we stopped may end with the interrupted status itself (a call waiting on a plugin
      // host ends the worker at once): that is the stop, not a failure.
      const bool stopped_itself = by_us && WIFEXITED(status) &&
                                  (WEXITSTATUS(status) == 128 + SIGTERM || WEXITSTATUS(status) == 128 + SIGINT);
      const bool failed = WIFEXITED(status) && WEXITSTATUS(status) != 0 && !stopped_itself;
      if (crashed || failed) {
        nlohmann::json crash = {{"event", crashed ? "crash" : "worker-error"}, {"worker", worker.index}, {"passed", false}};
        if (failed) crash["exit_code"] = WEXITSTATUS(status);
        crash["violation"] = crashed ? std::string("the worker was ended by ") + ::strsignal(WTERMSIG(status)) + " during " +
                                           (worker.last_start.is_object() ? describe_visit(worker.last_start) : "its start")
                                     : "the worker exited with code " + std::to_string(WEXITSTATUS(status)) + " (its message is above)";
        if (worker.last_start.is_object()) {
          for (const char* key : {"visit", "property", "target", "implementation"}) crash[key] = worker.last_start[key];
        }
        totals.failures.push_back(crash);
        // A crash ends one visit, not the campaign: the worker goes on after the visit that crashed.
        if (crashed && worker.last_start.is_object() && elapsed() < options.budget_seconds) {
          const std::int64_t next = worker.last_start.value("visit", std::int64_t{0}) + options.jobs;
          worker.position = next;  // the visit that crashed is a finding, not redone
          start_worker(worker, worker_arguments(worker.index, next - worker.index, options.budget_seconds - elapsed()));
        } else if (elapsed() < options.budget_seconds) {
          // Its share of the budget was not spent (a library loaded in-process crashed, which ends
          // the worker with exit 5): the campaign did not run whole.
          totals.cut_short = true;
          totals.stop_reasons.push_back("worker " + std::to_string(worker.index) + " ended early");
        }
      }
    }
    const double now = elapsed();
    if (interrupted() && !stopping) {
      stopping = true;
      // A person or a CI timeout asked: workers get 5 s, so the summary and the state are written
      // well within the process's own 10 s (interrupt.hpp), a hung worker reported as a hang.
      allowance = std::min(grace, kInterruptedWorkerGrace);
      stop_deadline = now + allowance;
      stop_all(SIGTERM);
    }
    if (!killed && ((stopping && now > stop_deadline) || now > options.budget_seconds + grace)) {
      killed = true;
      totals.stop_reasons.push_back("killed after the grace period");
      // A worker still busy a grace period after it was due to stop is stuck in its visit: a
      // hang in the implementation under test is a finding, like a crash.
      for (auto& worker : workers) {
        if (worker.exited) continue;
        nlohmann::json hang = {{"event", "hang"}, {"worker", worker.index}, {"passed", false}};
        hang["violation"] = "the worker did not finish " +
                            (worker.last_start.is_object() ? describe_visit(worker.last_start) : std::string("its start")) +
                            " within " + std::to_string(static_cast<int>(allowance)) + " s after it was due to stop; it was killed";
        if (worker.last_start.is_object()) {
          for (const char* key : {"visit", "property", "target", "implementation"}) hang[key] = worker.last_start[key];
          // Like a crash, the hang is the finding: the next run goes on after it rather than hang there again.
          worker.position = worker.last_start.value("visit", worker.position) + options.jobs;
        }
        totals.failures.push_back(hang);
      }
      stop_all(SIGKILL);
    }
    if (now - last_print >= (terminal ? 0.5 : log_every)) {
      last_print = now;
      const std::string line = progress_line(totals, options, now, current);
      if (terminal) {
        std::fprintf(stderr, "\r\033[K%s", fit_to_terminal(line).c_str());
      } else {
        std::fprintf(stderr, "%s\n", line.c_str());
      }
      std::fflush(stderr);
      printed = true;
    }
    if (now - last_save >= log_every) {
      last_save = now;
      totals.next_visit = lowest_position(workers);
      save_state(totals);  // a killed supervisor loses at most this much of the round-robin position
    }
  }
  if (terminal && printed) std::fprintf(stderr, "\r\033[K");
  totals.wall_seconds = elapsed();
  totals.next_visit = lowest_position(workers);
  save_state(totals);
  return totals;
}

}  // namespace bitparity::reports
