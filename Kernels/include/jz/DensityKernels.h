// Density estimators of the KNNDensity filter (doc/filters/KNNDensity.md), host and device.
#pragma once

#include "Config.h"

namespace jz
{
constexpr double kPi = 3.14159265358979323846;

// M4 cubic spline with compact support h:
// W(r, h) = 8 / (pi h^3) * { 1 - 6q^2 + 6q^3 (q <= 1/2); 2 (1 - q)^3 (q <= 1); 0 }.
// The shape in q = r / h is branch-free, so that loops over many r vectorise.
JZ_HD double cubicSplineShape(double q)
{
  const double u = q < 1.0 ? 1.0 - q : 0.0;
  const double inner = 1.0 - 6.0 * q * q + 6.0 * q * q * q;
  return q <= 0.5 ? inner : 2.0 * u * u * u;
}
JZ_HD double cubicSplineNorm(double h)
{
  return 8.0 / (kPi * h * h * h);
}
JZ_HD double cubicSplineW(double r, double h)
{
  return cubicSplineNorm(h) * cubicSplineShape(r / h);
}

// dW/dr of cubicSplineW, the radial derivative that SPH gradients use
// (grad_i W(|x_i - x_j|, h) = dW/dr (x_i - x_j) / r):
// 8 / (pi h^4) * { -12q + 18q^2 (q <= 1/2); -6 (1 - q)^2 (q <= 1); 0 }; 0 at r = 0.
JZ_HD double cubicSplineDWdr(double r, double h)
{
  const double q = r / h;
  const double norm = 8.0 / (kPi * h * h * h * h);
  if (q <= 0.5)
    return norm * (-12.0 * q + 18.0 * q * q);
  if (q <= 1.0)
  {
    const double u = 1.0 - q;
    return norm * -6.0 * u * u;
  }
  return 0.0;
}

JZ_HD double topHatDensity(double totalMass, double h)
{
  return totalMass / (4.0 / 3.0 * kPi * h * h * h);
}

// ---- The SPH maps' kernels (SphMaps.h): both with compact support h. ----
enum class SphKernel
{
  CubicSpline, // cubicSplineW, KNNDensity's "SPH Cubic Spline"
  WendlandC2   // wendlandC2W
};

// Wendland C2: W(r, h) = 21 / (2 pi h^3) (1 - q)^4 (1 + 4q) for q = r/h <= 1.
JZ_HD double wendlandC2Shape(double q)
{
  const double u = q < 1.0 ? 1.0 - q : 0.0;
  return u * u * u * u * (1.0 + 4.0 * q);
}
JZ_HD double wendlandC2Norm(double h)
{
  return 21.0 / (2.0 * kPi * h * h * h);
}
JZ_HD double wendlandC2W(double r, double h)
{
  return wendlandC2Norm(h) * wendlandC2Shape(r / h);
}

JZ_HD double sphKernelW(SphKernel kernel, double r, double h)
{
  return kernel == SphKernel::WendlandC2 ? wendlandC2W(r, h) : cubicSplineW(r, h);
}

// The unit-support kernel's (h = 1, norm included) radial derivatives as the
// 3-D Laplacian needs them: W'(q) / q (finite at q = 0) and W''(q).
JZ_HD double sphKernelSlopeOverQ(SphKernel kernel, double q)
{
  const double u = q < 1.0 ? 1.0 - q : 0.0;
  if (kernel == SphKernel::WendlandC2)
    return wendlandC2Norm(1.0) * -20.0 * u * u * u;
  return cubicSplineNorm(1.0) * (q <= 0.5 ? -12.0 + 18.0 * q : -6.0 * u * u / q);
}
JZ_HD double sphKernelCurvature(SphKernel kernel, double q)
{
  const double u = q < 1.0 ? 1.0 - q : 0.0;
  if (kernel == SphKernel::WendlandC2)
    return wendlandC2Norm(1.0) * 20.0 * u * u * (4.0 * q - 1.0);
  return cubicSplineNorm(1.0) * (q <= 0.5 ? -12.0 + 36.0 * q : 12.0 * u);
}
} // namespace jz
