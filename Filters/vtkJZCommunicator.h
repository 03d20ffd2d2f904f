/**
 * @file   vtkJZCommunicator.h
 * @brief  jz::Communicator over ParaView's global vtkMultiProcessController.
 *
 * The distributed kernels (jz/Distributed.h) talk to the other ranks through
 * the abstract jz::Communicator. Under pvbatch/pvserver with MPI the global
 * controller is a vtkMPIController: the collectives then run on a private
 * duplicate of its MPI communicator (so they never match VTK's own messages),
 * with 64-bit sizes and messages cut into chunks below 2 GiB. Any other
 * multi-process controller is served through vtkCommunicator's generic
 * collectives. Without a controller, or with one process, the result is a
 * jz::SerialCommunicator. Not wrapped; include it only from .cxx files.
 *
 * Every rank must create (and destroy) the communicator at the same point of
 * its execution: with MPI both are collective.
 */
#ifndef vtkJZCommunicator_h
#define vtkJZCommunicator_h

#include "jz/Communicator.h"

#include <memory>

class vtkMultiProcessController;

namespace vtkJZKernelAdapter
{
/// A communicator over `controller` (the global controller when null).
/// Setting the environment variable JZ_COMMUNICATOR=vtk forces the generic
/// vtkCommunicator implementation even under MPI (for tests).
std::unique_ptr<jz::Communicator> MakeCommunicator(vtkMultiProcessController* controller = nullptr);
}

#endif
// VTK-HeaderTest-Exclude: vtkJZCommunicator.h
