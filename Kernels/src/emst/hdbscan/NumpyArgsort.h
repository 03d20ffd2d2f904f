// numpy 1.24's default argsort (introsort: median-of-3 quicksort, insertion
// sort below 16 elements, heapsort past the depth limit) for integer keys.
// It is not stable, and hdbscan's GLOSH scores depend on the order it gives
// equal keys, so matching the library needs this very permutation.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace jz
{
namespace numpysort
{
// Sifts the value `tmp` down from node i of the 1-based heap a[1..n].
template <class K>
void siftDown(const K* v, std::int64_t* a, std::int64_t i, std::int64_t n, std::int64_t tmp)
{
  for (std::int64_t j = i << 1; j <= n;)
  {
    if (j < n && v[a[j]] < v[a[j + 1]])
      j += 1;
    if (v[tmp] < v[a[j]])
    {
      a[i] = a[j];
      i = j;
      j += j;
    }
    else
      break;
  }
  a[i] = tmp;
}

template <class K>
void heapsort(const K* v, std::int64_t* tosort, std::int64_t n)
{
  std::int64_t* a = tosort - 1; // 1-based
  for (std::int64_t l = n >> 1; l > 0; --l)
    siftDown(v, a, l, n, a[l]);
  for (; n > 1;)
  {
    const std::int64_t tmp = a[n];
    a[n] = a[1];
    n -= 1;
    siftDown(v, a, 1, n, tmp);
  }
}
} // namespace numpysort

template <class K>
std::vector<std::int64_t> numpyArgsort(const std::vector<K>& keys)
{
  const std::int64_t num = std::int64_t(keys.size());
  std::vector<std::int64_t> order(keys.size());
  for (std::int64_t i = 0; i < num; ++i)
    order[i] = i;
  if (num < 2)
    return order;
  const K* v = keys.data();
  std::int64_t* pl = order.data();
  std::int64_t* pr = pl + num - 1;
  std::vector<std::int64_t*> stack;
  std::vector<int> depth;
  int cdepth = 0;
  for (std::uint64_t u = std::uint64_t(num); u >>= 1;)
    ++cdepth;
  cdepth *= 2;
  for (;;)
  {
    if (cdepth < 0)
    {
      numpysort::heapsort(v, pl, pr - pl + 1);
    }
    else
    {
      while ((pr - pl) > 15)
      {
        std::int64_t* pm = pl + ((pr - pl) >> 1);
        if (v[*pm] < v[*pl])
          std::swap(*pm, *pl);
        if (v[*pr] < v[*pm])
          std::swap(*pr, *pm);
        if (v[*pm] < v[*pl])
          std::swap(*pm, *pl);
        const K vp = v[*pm];
        std::int64_t* pi = pl;
        std::int64_t* pj = pr - 1;
        std::swap(*pm, *pj);
        for (;;)
        {
          do
            ++pi;
          while (v[*pi] < vp);
          do
            --pj;
          while (vp < v[*pj]);
          if (pi >= pj)
            break;
          std::swap(*pi, *pj);
        }
        std::int64_t* pk = pr - 1;
        std::swap(*pi, *pk);
        if (pi - pl < pr - pi)
        {
          stack.push_back(pi + 1);
          stack.push_back(pr);
          pr = pi - 1;
        }
        else
        {
          stack.push_back(pl);
          stack.push_back(pi - 1);
          pl = pi + 1;
        }
        depth.push_back(--cdepth);
      }
      for (std::int64_t* pi = pl + 1; pi <= pr; ++pi)
      {
        const std::int64_t vi = *pi;
        const K vv = v[vi];
        std::int64_t* pj = pi;
        std::int64_t* pk = pi - 1;
        while (pj > pl && vv < v[*pk])
          *pj-- = *pk--;
        *pj = vi;
      }
    }
    if (stack.empty())
      break;
    pr = stack.back();
    stack.pop_back();
    pl = stack.back();
    stack.pop_back();
    cdepth = depth.back();
    depth.pop_back();
  }
  return order;
}
} // namespace jz
