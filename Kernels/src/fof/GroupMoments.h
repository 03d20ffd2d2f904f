// The halo catalogue's per-group sums (§IV-B): one mergeable accumulator,
// used by the single-process catalogue (per thread, merged in thread order)
// and by the distributed one (per rank, merged at the group's owner rank).
//
// Positions are summed as offsets from a reference point, nearest image when
// periodic, so sums stay small and a group across the box boundary stays
// whole; velocities as offsets from a reference velocity. Partial sums with
// different references merge exactly by shifting (parallel-axis theorem).
// around, add and merge are JZ_HD: the GPU catalogue (FofHalosCuda.cu)
// sums with this very code.
#pragma once

#include <algorithm>
#include <cmath>

#include "jz/Config.h"
#include "jz/Fof.h"
#include "jz/Geometry.h"

namespace jz
{
struct GroupMoments
{
  GlobalId label = 0;         // the group (for the distributed reduction)
  double count = 0, mass = 0; // members, sum m
  double ref[kDim] = {};      // reference position
  double first[kDim] = {};    // sum m dx, dx = x - ref (nearest image)
  double second = 0;          // sum m |dx|^2
  double vref[kDim] = {};     // reference velocity
  double vfirst[kDim] = {};   // sum m dv, dv = v - vref
  double vsecond = 0;         // sum m |dv|^2

  // Empty sums around reference point x and velocity v (nullable: zero).
  JZ_HD static GroupMoments around(GlobalId label, const double* x, const double* v)
  {
    GroupMoments g;
    g.label = label;
    for (int d = 0; d < kDim; ++d)
    {
      g.ref[d] = x[d];
      g.vref[d] = v ? v[d] : 0.0;
    }
    return g;
  }

  // One member's addends, computed apart from the summing so that the GPU
  // catalogue can compute them in parallel and still sum them in order.
  struct Terms
  {
    double m;         // m
    double mdx[kDim]; // m dx
    double mdv[kDim]; // m dv
    double ms;        // m |dx|^2
    double msv;       // m |dv|^2
  };

  // The addends of a member at x with mass m and velocity v (nullable: zero).
  JZ_HD Terms terms(const double* x, double m, const double* v, const double* period) const
  {
    Terms t;
    t.m = m;
    double s = 0, sv = 0;
    for (int d = 0; d < kDim; ++d)
    {
      const double dx = nearestImageOffset(x[d] - ref[d], period[d]);
      const double dv = (v ? v[d] : 0.0) - vref[d];
      t.mdx[d] = m * dx;
      t.mdv[d] = m * dv;
      s += dx * dx;
      sv += dv * dv;
    }
    t.ms = m * s;
    t.msv = m * sv;
    return t;
  }

  // Adds one member's addends (the order of the sums is the caller's).
  JZ_HD void addTerms(const Terms& t)
  {
    count += 1;
    mass += t.m;
    for (int d = 0; d < kDim; ++d)
    {
      first[d] += t.mdx[d];
      vfirst[d] += t.mdv[d];
    }
    second += t.ms;
    vsecond += t.msv;
  }

  // One member at x with mass m and velocity v (nullable: zero).
  JZ_HD void add(const double* x, double m, const double* v, const double* period)
  {
    addTerms(terms(x, m, v, period));
  }

  // Adds another partial sum of the same group, moved to this reference.
  JZ_HD void merge(const GroupMoments& o, const double* period)
  {
    double shift[kDim], vshift[kDim];
    for (int d = 0; d < kDim; ++d)
    {
      shift[d] = nearestImageOffset(o.ref[d] - ref[d], period[d]);
      vshift[d] = o.vref[d] - vref[d];
    }
    count += o.count;
    mass += o.mass;
    double sq = 0, vsq = 0, cross = 0, vcross = 0;
    for (int d = 0; d < kDim; ++d)
    {
      first[d] += o.first[d] + o.mass * shift[d];
      vfirst[d] += o.vfirst[d] + o.mass * vshift[d];
      sq += shift[d] * shift[d];
      vsq += vshift[d] * vshift[d];
      cross += shift[d] * o.first[d];
      vcross += vshift[d] * o.vfirst[d];
    }
    second += o.second + 2 * cross + o.mass * sq;
    vsecond += o.vsecond + 2 * vcross + o.mass * vsq;
  }

  // The group's catalogue row: the centre of mass wrapped into
  // [boxLo, boxLo + period) when periodic. JZ_HD: the GPU catalogue makes
  // its rows with it too.
  struct Row
  {
    GlobalId count;
    double mass;
    double centerOfMass[kDim];
    double inertiaRadius;
    double meanVelocity[kDim];
    double velocityDispersion;
  };
  JZ_HD Row row(const double* boxLo, const double* period) const
  {
    Row r;
    const double M = mass;
    r.count = GlobalId(count + 0.5);
    r.mass = M;
    double c2 = 0, v2 = 0;
    for (int d = 0; d < kDim; ++d)
    {
      const double off = M != 0 ? first[d] / M : 0.0;
      double c = ref[d] + off;
      if (period[d] > 0)
        c = wrapIntoBox(c, boxLo[d], period[d]);
      r.centerOfMass[d] = c;
      c2 += off * off;
      const double voff = M != 0 ? vfirst[d] / M : 0.0;
      r.meanVelocity[d] = vref[d] + voff;
      v2 += voff * voff;
    }
    // (0 < x ? x : 0) is std::max(0.0, x), NaN included.
    const double r2 = second / M - c2, s2 = (vsecond / M - v2) / 3;
    r.inertiaRadius = M > 0 ? sqrt(0.0 < r2 ? r2 : 0.0) : 0.0;
    r.velocityDispersion = M > 0 ? sqrt(0.0 < s2 ? s2 : 0.0) : 0.0;
    return r;
  }

  // Appends the group's row to the catalogue.
  void appendRow(
    const double* boxLo, const double* period, bool withVelocity, FofCatalogue& cat) const
  {
    const Row r = row(boxLo, period);
    cat.count.push_back(r.count);
    cat.mass.push_back(r.mass);
    for (int d = 0; d < kDim; ++d)
    {
      cat.centerOfMass.push_back(r.centerOfMass[d]);
      if (withVelocity)
        cat.meanVelocity.push_back(r.meanVelocity[d]);
    }
    cat.inertiaRadius.push_back(r.inertiaRadius);
    if (withVelocity)
      cat.velocityDispersion.push_back(r.velocityDispersion);
  }
};
} // namespace jz
