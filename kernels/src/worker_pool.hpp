#pragma once
// Worker threads kept for the process, so that a launch on a few blocks does not pay for creating
// threads: on the 2-core CI machine creating one cost 40-80 us, more than quantizing 2^16 elements.
#include <functional>

namespace bitparity::detail {

// Runs task(t) once for every t in [0, count), on the calling thread and kept workers (which task
// runs where varies from call to call), each under the caller's floating-point environment, and
// returns once all have finished; rethrows the first exception a task threw. Where the workers are
// busy (a concurrent or nested call) or were lost (a fork), the call makes threads of its own.
void run_tasks(int count, const std::function<void(int)>& task);

}  // namespace bitparity::detail
