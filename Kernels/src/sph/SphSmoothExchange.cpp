// The fetch of SPHSmooth's ghost rows by global id (SphSmoothExchange.h), in
// three rounds: owners register their ids with the directory ranks, the
// directories forward each request to the owner, the owners answer the
// requesting ranks with the records.
#include "sph/SphSmoothExchange.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace jz
{
namespace
{
int directoryRank(GlobalId id, int ranks)
{
  const std::uint64_t h = std::uint64_t(id) * 0x9E3779B97F4A7C15ull;
  return int((h >> 33) % std::uint64_t(ranks));
}

// An id with the rank and the row that hold it (or that asked for it).
struct IdAt
{
  GlobalId id;
  std::int64_t rank;
  std::int64_t row;
};

// The ids of this rank's particles, each sent to its directory rank.
std::vector<IdAt> registerIds(const GlobalId* ids, std::size_t n, Communicator& comm)
{
  std::vector<std::vector<IdAt>> send(std::size_t(comm.size()));
  for (std::size_t i = 0; i < n; ++i)
    send[std::size_t(directoryRank(ids[i], comm.size()))].push_back(
      { ids[i], comm.rank(), std::int64_t(i) });
  std::vector<std::vector<IdAt>> got = allToAllTyped(comm, send);
  std::vector<IdAt> directory;
  for (auto& part : got)
    directory.insert(directory.end(), part.begin(), part.end());
  std::sort(
    directory.begin(), directory.end(), [](const IdAt& a, const IdAt& b) { return a.id < b.id; });
  return directory;
}

// For every owner rank, the (requesting rank, row) pairs it must answer;
// `missing` is the first requested id no rank holds.
std::vector<std::vector<IdAt>> routeRequests(const std::vector<IdAt>& directory,
  const std::vector<GlobalId>& wanted, Communicator& comm, std::string& missing)
{
  std::vector<std::vector<GlobalId>> ask(std::size_t(comm.size()));
  for (GlobalId id : wanted)
    ask[std::size_t(directoryRank(id, comm.size()))].push_back(id);
  const std::vector<std::vector<GlobalId>> asked = allToAllTyped(comm, ask);
  std::vector<std::vector<IdAt>> forward(std::size_t(comm.size()));
  for (std::size_t from = 0; from < asked.size(); ++from)
  {
    for (GlobalId id : asked[from])
    {
      auto it = std::lower_bound(
        directory.begin(), directory.end(), id, [](const IdAt& a, GlobalId v) { return a.id < v; });
      if (it == directory.end() || it->id != id)
      {
        if (missing.empty())
          missing = "neighbour id " + std::to_string(id) + " is held by no rank";
        continue;
      }
      forward[std::size_t(it->rank)].push_back({ id, std::int64_t(from), it->row });
    }
  }
  return allToAllTyped(comm, forward);
}
} // namespace

template <class T>
void fetchSphSmoothGhosts(SphSmoothParticles<T>& particles, const GlobalId* localIds,
  const std::vector<GlobalId>& wanted, Communicator& comm)
{
  const std::vector<IdAt> directory = registerIds(localIds, particles.numLocal, comm);
  std::string missing;
  const std::vector<std::vector<IdAt>> requests = routeRequests(directory, wanted, comm, missing);
  agreeOnErrors(comm, missing);

  // Each answer: the id's bits, then the record (SphSmoothParticles.h).
  const std::size_t stride = std::size_t(particles.ghostStride());
  const std::size_t answerSize = 1 + stride;
  std::vector<std::vector<double>> answers(std::size_t(comm.size()));
  for (const auto& fromOwner : requests)
  {
    for (const IdAt& r : fromOwner)
    {
      std::vector<double>& out = answers[std::size_t(r.rank)];
      const Index row = Index(r.row);
      double idBits;
      std::memcpy(&idBits, &r.id, sizeof idBits);
      out.push_back(idBits);
      double x[3];
      particles.position(row, x);
      out.insert(out.end(), x, x + 3);
      out.push_back(particles.mass(row));
      out.push_back(particles.rho(row));
      int offset = 0;
      for (std::size_t f = 0; f < particles.fields->size(); ++f)
      {
        const int c = (*particles.fields)[f].components;
        const double* v = particles.values(row, int(f), offset);
        out.insert(out.end(), v, v + c);
        offset += c;
      }
    }
  }
  const std::vector<std::vector<double>> got = allToAllTyped(comm, answers);
  particles.ghosts.assign(wanted.size() * stride, 0.0);
  std::size_t received = 0;
  for (const auto& part : got)
  {
    for (std::size_t a = 0; a + answerSize <= part.size(); a += answerSize)
    {
      GlobalId id;
      std::memcpy(&id, &part[a], sizeof id);
      const std::size_t g =
        std::size_t(std::lower_bound(wanted.begin(), wanted.end(), id) - wanted.begin());
      std::copy(part.begin() + std::ptrdiff_t(a + 1), part.begin() + std::ptrdiff_t(a + answerSize),
        particles.ghosts.begin() + std::ptrdiff_t(g * stride));
      ++received;
    }
  }
  agreeOnErrors(comm,
    received == wanted.size() ? std::string()
                              : "received " + std::to_string(received) + " of " +
        std::to_string(wanted.size()) + " neighbour records");
}

template void fetchSphSmoothGhosts(
  SphSmoothParticles<float>&, const GlobalId*, const std::vector<GlobalId>&, Communicator&);
template void fetchSphSmoothGhosts(
  SphSmoothParticles<double>&, const GlobalId*, const std::vector<GlobalId>&, Communicator&);
} // namespace jz
