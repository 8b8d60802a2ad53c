// A std::mutex that clang's thread-safety analysis (-Wthread-safety) knows: members marked
// ABSL_GUARDED_BY(mu_) may be touched only with mu_ held, functions marked
// ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) only called with it held, and the compiler says where
// a rule is broken (scripts/lint.sh runs the analysis over pkg/ and cmd/; GCC ignores the
// annotations). libstdc++'s std::mutex carries no annotations, so the analysis cannot see
// it: a class whose locking rules matter uses this one.
//
// MutexLock holds the mutex for its scope. Condition-variable waits (kube::ThreadClock) take
// its std::unique_lock (unique()): a wait releases and retakes the mutex inside, which the
// analysis need not see, since the mutex is held before and after.
//
// A lambda run under the lock (a wait's predicate) says so itself:
//   [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; }
// and the wait templates that call it are not analysed (they cannot name the caller's mutex).
//
// Threads: as std::mutex.
#pragma once

#include <mutex>

#include "absl/base/thread_annotations.h"

namespace rdmadp::sync {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : lock_(mu.mu_) {}
  ~MutexLock() ABSL_UNLOCK_FUNCTION() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Lets go for a while (a call that must not hold it), then takes it again.
  void Unlock() ABSL_UNLOCK_FUNCTION() { lock_.unlock(); }
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { lock_.lock(); }
  // For condition-variable waits, which release and retake it inside.
  std::unique_lock<std::mutex>& unique() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace rdmadp::sync
