// The intra-op thread pool every kernel parallelises on.
//
// One pool is shared by all kernels (and by all VMs that do not bring their own); its
// size is set by the embedder. ParallelFor splits a range into chunks that the pool's
// workers and the calling thread take in turn, and returns when all are done. If the
// pool is already running another ParallelFor (another VM's kernel, or a nested call
// from inside a task), the work runs on the calling thread instead of waiting: kernels
// never block on each other. Idle workers spin for about 2 ms before they sleep, so that
// kernels running back to back find them awake (waking a sleeping thread took up to
// 0.6 ms on a KVM guest).
//
//   ThreadPool& pool = ThreadPool::Default();
//   pool.ParallelFor(rows, /*grain=*/16, [&](int64_t begin, int64_t end) {
//     for (int64_t r = begin; r < end; ++r) ...;
//   });
#ifndef DYNVM_KERNELS_THREAD_POOL_H_
#define DYNVM_KERNELS_THREAD_POOL_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace dynvm::kernels {

class ThreadPool {
 public:
  // A pool of `num_threads` threads in all, counting the caller of ParallelFor (so 1
  // means no worker threads). Values below 1 are taken as 1; if the system refuses a
  // thread, the pool has the ones it got (num_threads() says how many).
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint chunks covering [0, n), each at least `grain`
  // long (but the last), from up to num_threads() threads. Returns when all calls
  // have returned. The threads running them have the caller's kernel deadline
  // (kernels/deadline.h).
  void ParallelFor(int64_t n, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> fn);

  // The process-wide pool, created on first use with `DefaultThreads()` threads.
  static ThreadPool& Default();
  // The size Default() is created with: set by SetDefaultThreads, else the number of
  // hardware threads.
  static int DefaultThreads();
  // Sets the size of the default pool. Takes effect only before Default() is first
  // called; returns false afterwards.
  static bool SetDefaultThreads(int num_threads);

 private:
  struct Job;
  void WorkerLoop();
  // Spins until the job generation differs from `seen` or a spin budget (~2 ms) runs
  // out; returns the generation last read (== seen when the budget ran out).
  uint64_t SpinForJob(uint64_t seen) const;
  void RunChunks(Job& job);

  std::vector<std::thread> workers_;
  // Held by the thread whose job the pool runs. std::mutex: ThreadSanitizer sees it
  // (Debian's Abseil is not built for ThreadSanitizer).
  std::mutex submit_mu_;
  std::atomic<uint64_t> generation_{0};  // bumped for every job; workers wait on it
  std::atomic<Job*> job_{nullptr};
  std::atomic<int> active_{0};        // workers between announcing and finishing a look
  std::atomic<bool> stop_{false};
};

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_THREAD_POOL_H_
