// The thread-safety analysis must catch what it is there for (thread_safety_test.sh): this
// file compiles cleanly as it is, and each PLANT_* macro plants one broken rule of
// pkg/sync/mutex.h that the analysis must report.
#include "pkg/sync/mutex.h"

namespace rdmadp::sync {

class Counter {
 public:
  void Add() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(mu_);
    AddLocked();
  }
  int Read() const ABSL_LOCKS_EXCLUDED(mu_) {
#ifdef PLANT_UNGUARDED_READ
    return n_;  // read without the mutex
#else
    MutexLock lock(mu_);
    return n_;
#endif
  }
  void AddTwice() ABSL_LOCKS_EXCLUDED(mu_) {
#ifdef PLANT_CALL_WITHOUT_LOCK
    AddLocked();  // a function that requires the mutex, called without it
#else
    MutexLock lock(mu_);
    AddLocked();
#endif
  }
  void AddAfterUnlock() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(mu_);
    lock.Unlock();
#ifdef PLANT_WRITE_AFTER_UNLOCK
    ++n_;  // written after the scoped lock let go
#endif
    lock.Lock();
    ++n_;
  }

 private:
  void AddLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { ++n_; }

  mutable Mutex mu_;
  int n_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rdmadp::sync

int main() {
  rdmadp::sync::Counter c;
  c.Add();
  c.AddTwice();
  c.AddAfterUnlock();
  return c.Read() == 4 ? 0 : 1;
}
