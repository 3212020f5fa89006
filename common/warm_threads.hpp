// Threads kept for the next job once their job is done. Starting a thread is host work (a clone, a
// new stack, and the CUDA runtime's state for the thread at its first call) that a job which must
// start at once would otherwise wait for: a tiered dispatch starts a new op's compile right beside the
// op's first launch, whose kernel may be shorter than that work. Language runtimes keep their
// compiler threads alive for the same reason.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cdl {

class warm_threads {
 public:
  warm_threads() = default;
  warm_threads(const warm_threads&) = delete;
  warm_threads& operator=(const warm_threads&) = delete;

  // Runs `job` on an idle thread, or on a new one when none is idle: a job never waits for another.
  // `job` must not throw (an exception leaving a thread ends the program): report through a promise.
  void run(std::function<void()> job) {
    const std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
    if (jobs_.size() > idle_)
      threads_.emplace_back([this] { serve(); });
    else
      wake_.notify_one();
  }

  // The threads made so far, and those waiting for a job.
  std::size_t started() const {
    const std::lock_guard lock(mutex_);
    return threads_.size();
  }
  std::size_t idle() const {
    const std::lock_guard lock(mutex_);
    return idle_;
  }

  // Runs the jobs still queued, then ends the threads.
  ~warm_threads() {
    {
      const std::lock_guard lock(mutex_);
      closing_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::size_t idle_ = 0;  // threads waiting for a job
  bool closing_ = false;
  std::vector<std::thread> threads_;

  void serve() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      wake_.wait(lock, [this] { return closing_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // closing, and nothing left to run
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }
};

}  // namespace cdl
