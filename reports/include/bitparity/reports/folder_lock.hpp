#pragma once
// One run at a time writes into a folder of state (a fuzz corpus, a report's --out): an advisory
// lock (flock) on FOLDER/.bitparity.lock, held for the run. Two fuzz runs on one corpus kept only
// the last writer's state, and its next visit went back; now the second is refused before any work.
// The kernel drops the lock when the holder ends, however it ends (SIGKILL too): no stale lock.
#include <string>

namespace bitparity::reports {

inline constexpr const char* kLockFileName = ".bitparity.lock";

class FolderLock {
 public:
  // Takes the lock of `folder` (which exists), or throws UsageError naming `option`, the folder and
  // the run holding it (its pid and command line).
  FolderLock(const std::string& folder, const std::string& option);
  ~FolderLock();
  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&&) = delete;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace bitparity::reports
