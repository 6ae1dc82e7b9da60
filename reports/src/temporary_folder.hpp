#pragma once
// A folder under the system's temporary folder that is removed when this process ends, however it
// ends. A rank that MPI_Abort, mpirun's SIGTERM or a SIGKILL ends runs no destructor, so a shell
// started beside it, in a session of its own (mpirun signals the rank's process group), waits for
// the end of a pipe only this process holds and then removes the folder. Where the reaper dies too
// (a runner that kills a whole control group), the folder stays; its file .owner names the process
// (pid, start time, boot, host), and the next temporary folder made on that host removes the ones
// whose owner is gone.
#include <sys/types.h>

#include <string>

namespace bitparity::reports {

class TemporaryFolder {
 public:
  // Makes <temporary folder>/<prefix>.XXXXXX; throws WriteError when it cannot.
  explicit TemporaryFolder(const std::string& prefix);
  ~TemporaryFolder();  // removes the folder now; the reaper then finds nothing and ends
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int reaper_pipe_ = -1;  // the write end: its close (ours, or the kernel's at our end) wakes the reaper
  pid_t reaper_ = -1;
};

}  // namespace bitparity::reports
