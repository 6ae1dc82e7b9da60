#pragma once
// Worker threads kept for the process, so that a launch on a few blocks does not pay for creating
// threads: on the 2-core CI machine creating one cost 40-80 us, more than quantizing 2^16 elements.
#include <functional>

namespace bitparity::detail {

// Runs task(t) once for every t in [0, count) on the calling thread and at most `threads` - 1 kept
// workers, each thread claiming the next task as it finishes one (which task runs where varies from
// call to call), each task under the caller's floating-point environment; returns once all have
// finished and rethrows the first exception a task threw. Where the workers are busy (a concurrent or
// nested call) or were lost (a fork), the call makes threads of its own.
void run_tasks(int count, int threads, const std::function<void(int)>& task);

// One thread for each task.
inline void run_tasks(int count, const std::function<void(int)>& task) { run_tasks(count, count, task); }

}  // namespace bitparity::detail
