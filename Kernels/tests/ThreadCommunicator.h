// Simulated MPI ranks as threads in one process, for testing the
// distributed algorithms without MPI.
#pragma once

#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "jz/Communicator.h"
#include "jz/HugePages.h"

namespace jztest
{
class ThreadWorld
{
public:
  explicit ThreadWorld(int size)
    : mailbox_(size, nullptr)
    , gathered_(size)
    , sums_(size)
    , doubles_(size)
    , size_(size)
  {
  }

  int size() const { return size_; }

  void barrier()
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const long generation = generation_;
    if (++arrived_ == size_)
    {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    }
    else
    {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
  }

  // Runs body(comm) on `size` threads, one per rank.
  void run(const std::function<void(jz::Communicator&)>& body);

  std::vector<const std::vector<std::vector<char>>*> mailbox_; // [from][to]
  std::vector<std::vector<char>> gathered_;
  std::vector<std::vector<std::int64_t>> sums_;
  std::vector<std::vector<double>> doubles_;

private:
  int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  long generation_ = 0;
};

class ThreadCommunicator : public jz::Communicator
{
public:
  ThreadCommunicator(ThreadWorld& world, int rank)
    : world_(world)
    , rank_(rank)
  {
  }
  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }

  std::vector<std::vector<char>> allToAll(const std::vector<std::vector<char>>& send) override
  {
    // One copy, as MPI's receive makes: the senders' blocks stay in place
    // until every rank has taken its own.
    world_.mailbox_[rank_] = &send;
    world_.barrier();
    std::vector<std::vector<char>> got(size());
    for (int r = 0; r < size(); ++r)
    {
      const std::vector<std::vector<char>>& from = *world_.mailbox_[r];
      if (rank_ < int(from.size()) && !from[rank_].empty())
      {
        jz::resizeHugePages(got[r], from[rank_].size());
        std::memcpy(got[r].data(), from[rank_].data(), from[rank_].size());
      }
    }
    world_.barrier();
    return got;
  }
  std::vector<std::vector<char>> allGather(const std::vector<char>& send) override
  {
    world_.gathered_[rank_] = send;
    world_.barrier();
    std::vector<std::vector<char>> got = world_.gathered_;
    world_.barrier();
    return got;
  }
  void allReduceSum(std::int64_t* v, int n) override
  {
    world_.sums_[rank_].assign(v, v + n);
    world_.barrier();
    for (int i = 0; i < n; ++i)
    {
      v[i] = 0;
      for (int r = 0; r < size(); ++r)
        v[i] += world_.sums_[r][i];
    }
    world_.barrier();
  }
  void allReduceMin(double* v, int n) override { reduce(v, n, true); }
  void allReduceMax(double* v, int n) override { reduce(v, n, false); }

private:
  void reduce(double* v, int n, bool min)
  {
    world_.doubles_[rank_].assign(v, v + n);
    world_.barrier();
    for (int i = 0; i < n; ++i)
    {
      for (int r = 0; r < size(); ++r)
      {
        const double x = world_.doubles_[r][i];
        v[i] = min ? (x < v[i] ? x : v[i]) : (x > v[i] ? x : v[i]);
      }
    }
    world_.barrier();
  }

  ThreadWorld& world_;
  int rank_;
};

inline void ThreadWorld::run(const std::function<void(jz::Communicator&)>& body)
{
  std::vector<std::thread> threads;
  for (int r = 0; r < size_; ++r)
  {
    threads.emplace_back(
      [this, r, &body]
      {
        ThreadCommunicator comm(*this, r);
        body(comm);
      });
  }
  for (auto& t : threads)
    t.join();
}
} // namespace jztest
