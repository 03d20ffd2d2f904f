// jz_catalyst_particles: a small particle "simulation" with a legacy Catalyst
// (ParaView 5.11 vtkCPProcessor) adaptor, for in-situ JZ-Tree pipelines.
//
// N particles in the periodic unit box; a fixed fraction belongs to one of a
// few clumps and falls towards its centre over the steps (x(t) = c + (x0 - c)
// exp(-t / tau), plus the clump's drift), the rest stays a uniform background.
// Everything depends only on the particle's global id, so any number of MPI
// ranks produces the same particles (rank r owns the ids g with g % size == r).
// Each step hands a vtkPolyData (points, Velocity, Mass, GlobalIds; no cells)
// to Catalyst on the channel "input".
//
// Usage: [mpirun -np R] jz_catalyst_particles SCRIPT.py [--particles N] [--steps S]
#include "vtkCPDataDescription.h"
#include "vtkCPInputDataDescription.h"
#include "vtkCPProcessor.h"
#include "vtkCPPythonScriptV2Pipeline.h"
#include "vtkDoubleArray.h"
#include "vtkFloatArray.h"
#include "vtkIdTypeArray.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace
{
// splitmix64: a reproducible uniform number in [0, 1) for (id, stream).
double Uniform(std::uint64_t id, std::uint64_t stream)
{
  std::uint64_t z =
    id * 0x9E3779B97F4A7C15ull + stream * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

constexpr int NumberOfClumps = 6;
const double ClumpCentres[NumberOfClumps][3] = { { 0.25, 0.25, 0.3 }, { 0.7, 0.3, 0.6 },
  { 0.4, 0.75, 0.5 }, { 0.8, 0.8, 0.2 }, { 0.15, 0.6, 0.8 }, { 0.6, 0.5, 0.15 } };
constexpr double ClumpFraction = 0.7; // of the particles
constexpr double ClumpRadius = 0.12;  // initial extent of a clump
constexpr double Tau = 4.0;           // collapse time in steps
constexpr double Floor = 0.04;        // final size relative to the initial one

void Particle(std::uint64_t g, double t, double x[3], double v[3])
{
  const bool inClump = Uniform(g, 0) < ClumpFraction;
  if (!inClump)
  {
    for (int d = 0; d < 3; ++d)
    {
      x[d] = Uniform(g, 1 + d);
      v[d] = 0;
    }
    return;
  }
  const int c = static_cast<int>(Uniform(g, 4) * NumberOfClumps) % NumberOfClumps;
  const double shrink = Floor + (1 - Floor) * std::exp(-t / Tau);
  const double dshrink = -(1 - Floor) * std::exp(-t / Tau) / Tau;
  for (int d = 0; d < 3; ++d)
  {
    const double offset = ClumpRadius * (2 * Uniform(g, 5 + d) - 1);
    x[d] = ClumpCentres[c][d] + offset * shrink;
    v[d] = offset * dshrink;
  }
}
}

int main(int argc, char* argv[])
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2)
  {
    if (rank == 0)
    {
      std::fprintf(stderr, "usage: %s SCRIPT.py [--particles N] [--steps S]\n", argv[0]);
    }
    MPI_Finalize();
    return 2;
  }
  std::string script = argv[1];
  long long n = 20000;
  int steps = 10;
  for (int i = 2; i + 1 < argc; i += 2)
  {
    const std::string key = argv[i];
    if (key == "--particles")
    {
      n = std::atoll(argv[i + 1]);
    }
    else if (key == "--steps")
    {
      steps = std::atoi(argv[i + 1]);
    }
  }

  int status = 0;
  { // Catalyst objects go before MPI_Finalize
    vtkNew<vtkCPProcessor> processor;
    processor->Initialize();
    vtkNew<vtkCPPythonScriptV2Pipeline> pipeline;
    if (!pipeline->Initialize(script.c_str()))
    {
      std::fprintf(
        stderr, "jz_catalyst_particles: cannot load the Catalyst script %s\n", script.c_str());
      processor->Finalize();
      status = 1;
    }
    else
    {
      processor->AddPipeline(pipeline);

      const double dt = 1.0;
      for (int step = 0; step < steps; ++step)
      {
        const double t = step * dt;
        vtkNew<vtkCPDataDescription> description;
        description->AddInput("input");
        description->SetTimeData(t, step);
        if (step == steps - 1)
        {
          description->ForceOutputOn();
        }
        if (processor->RequestDataDescription(description) == 0)
        {
          continue;
        }
        // This rank's particles: global ids g = rank, rank + size, ...
        const vtkIdType local = static_cast<vtkIdType>((n - rank + size - 1) / size);
        vtkNew<vtkPoints> points;
        points->SetDataTypeToDouble();
        points->SetNumberOfPoints(local);
        vtkNew<vtkFloatArray> velocity;
        velocity->SetName("Velocity");
        velocity->SetNumberOfComponents(3);
        velocity->SetNumberOfTuples(local);
        vtkNew<vtkFloatArray> mass;
        mass->SetName("Mass");
        mass->SetNumberOfTuples(local);
        vtkNew<vtkIdTypeArray> ids;
        ids->SetName("GlobalIds");
        ids->SetNumberOfTuples(local);
        for (vtkIdType i = 0; i < local; ++i)
        {
          const std::uint64_t g =
            static_cast<std::uint64_t>(rank) + static_cast<std::uint64_t>(i) * size;
          double x[3], v[3];
          Particle(g, t, x, v);
          points->SetPoint(i, x);
          velocity->SetTuple(i, v);
          mass->SetValue(i, static_cast<float>(1.0 / static_cast<double>(n)));
          ids->SetValue(i, static_cast<vtkIdType>(g));
        }
        vtkNew<vtkPolyData> particles;
        particles->SetPoints(points);
        particles->GetPointData()->AddArray(velocity);
        particles->GetPointData()->AddArray(mass);
        particles->GetPointData()->SetGlobalIds(ids);
        description->GetInputDescriptionByName("input")->SetGrid(particles);
        processor->CoProcess(description);
        if (rank == 0)
        {
          std::printf("step %d (t = %g): %lld particles on %d rank(s)\n", step, t, n, size);
          std::fflush(stdout);
        }
      }
      processor->Finalize();
    }
  }
  MPI_Finalize();
  return status;
}
