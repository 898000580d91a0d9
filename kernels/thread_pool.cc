// The intra-op thread pool (kernels/thread_pool.h): workers, chunked ParallelFor,
// and the process-wide default pool.
#include "kernels/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <system_error>

#include "kernels/deadline.h"

namespace dynvm::kernels {
namespace {

// How long an idle worker spins before it sleeps. Waking a sleeping thread takes a
// futex call and, on virtual machines, an interrupt to a halted vCPU: we measured up to
// 0.6 ms on a KVM guest, longer than many kernels. A model's kernels run back to back
// with gaps far below this, so workers stay awake for a whole inference; an idle
// process spins for this long once, then sleeps.
constexpr auto kSpinTime = std::chrono::milliseconds(2);

// Tells the CPU that this is a spin-wait loop (saves power, frees an SMT sibling).
void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

// A ParallelFor in progress. Chunks are claimed with `next`; `done` counts the chunks
// finished, and the caller returns when it reaches `chunks`.
struct ThreadPool::Job {
  absl::FunctionRef<void(int64_t, int64_t)> fn;
  int64_t n;
  int64_t chunk;
  int64_t chunks;
  int64_t deadline_ns;  // the submitting thread's kernel deadline (kernels/deadline.h)
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
};

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) {
    // A system that refuses another thread (a pid or memory limit) gets a smaller
    // pool, which num_threads() reports, rather than an exception half-way that would
    // leave joinable threads behind.
    try {
      workers_.emplace_back([this] { WorkerLoop(); });
    } catch (const std::system_error&) {
      break;
    }
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunChunks(Job& job) {
  const ScopedKernelDeadline deadline(job.deadline_ns);
  for (int64_t c; (c = job.next.fetch_add(1, std::memory_order_relaxed)) < job.chunks;) {
    const int64_t begin = c * job.chunk;
    job.fn(begin, std::min(job.n, begin + job.chunk));
    job.done.fetch_add(1, std::memory_order_release);
  }
}

uint64_t ThreadPool::SpinForJob(uint64_t seen) const {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    // Reading the clock costs more than a look at the generation: look 64 times first.
    for (int i = 0; i < 64; ++i) {
      const uint64_t gen = generation_.load(std::memory_order_acquire);
      if (gen != seen) return gen;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return seen;
  }
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  for (;;) {
    const uint64_t gen = SpinForJob(seen);
    if (gen == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      continue;
    }
    seen = gen;
    if (stop_.load()) return;
    // Announce first, then look: the submitter retires a job by clearing job_ and then
    // waiting for active_ to drain, so a job seen here outlives its use.
    active_.fetch_add(1);
    if (Job* job = job_.load()) RunChunks(*job);
    active_.fetch_sub(1);
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             absl::FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  // Some slack over the thread count balances uneven chunks.
  const int64_t chunks = std::min<int64_t>(max_chunks, 4 * num_threads());
  if (chunks <= 1 || workers_.empty() || !submit_mu_.try_lock()) {
    fn(0, n);
    return;
  }
  Job job{fn, n, (n + chunks - 1) / chunks, 0, CurrentKernelDeadline()};
  job.chunks = (n + job.chunk - 1) / job.chunk;
  job_.store(&job);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  RunChunks(job);
  while (job.done.load(std::memory_order_acquire) < job.chunks) CpuRelax();
  job_.store(nullptr);
  // A worker that picked up the pointer may still be looking at it: wait it out before
  // `job` leaves scope.
  while (active_.load() != 0) CpuRelax();
  submit_mu_.unlock();
}

namespace {
std::atomic<int> g_default_threads{0};
std::atomic<bool> g_default_created{false};
}  // namespace

int ThreadPool::DefaultThreads() {
  const int set = g_default_threads.load();
  if (set > 0) return set;
  return std::max(1u, std::thread::hardware_concurrency());
}

bool ThreadPool::SetDefaultThreads(int num_threads) {
  if (g_default_created.load()) return false;
  g_default_threads.store(std::max(1, num_threads));
  return true;
}

ThreadPool& ThreadPool::Default() {
  static ThreadPool* pool = [] {
    g_default_created.store(true);
    return new ThreadPool(DefaultThreads());
  }();
  return *pool;
}

}  // namespace dynvm::kernels
