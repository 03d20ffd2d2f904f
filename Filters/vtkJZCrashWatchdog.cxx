#include "vtkJZCrashWatchdog.h"

#include <csignal>
#include <cstring>
#include <mutex>

#include <pthread.h>
#include <unistd.h>

namespace
{
// The fatal signals ParaView's logging catches (SIGINT stays Python's).
constexpr int kSignals[] = { SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM };

struct sigaction Previous[NSIG];
volatile sig_atomic_t CrashSignal = 0;

// Only async-signal-safe calls below: write, _exit, sigaction, alarm,
// pthread_sigmask, raise, signal.
void Say(const char* text)
{
  const ssize_t written = write(STDERR_FILENO, text, std::strlen(text));
  static_cast<void>(written);
}

void OnTimeout(int)
{
  Say("JZTree: the crash handler did not end the process in time; exiting.\n");
  _exit(128 + CrashSignal);
}

void StartTimer(int signal)
{
  CrashSignal = signal;
  struct sigaction timeout = {};
  timeout.sa_handler = OnTimeout;
  sigemptyset(&timeout.sa_mask);
  sigaction(SIGALRM, &timeout, nullptr);
  sigset_t alarmOnly;
  sigemptyset(&alarmOnly);
  sigaddset(&alarmOnly, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &alarmOnly, nullptr);
  alarm(vtkJZCrashWatchdog::kGraceSeconds);
}

void OnFatal(int signal, siginfo_t* info, void* context)
{
  if (CrashSignal == 0)
  {
    StartTimer(signal);
  }
  const struct sigaction& previous = Previous[signal];
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction)
  {
    previous.sa_sigaction(signal, info, context);
    return;
  }
  if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN)
  {
    return;
  }
  if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler != SIG_DFL)
  {
    previous.sa_handler(signal);
    return;
  }
  // The default action: end the process with this signal.
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

bool IsOurs(const struct sigaction& action)
{
  return (action.sa_flags & SA_SIGINFO) && action.sa_sigaction == OnFatal;
}
}

namespace vtkJZCrashWatchdog
{
void Arm()
{
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  for (int signal : kSignals)
  {
    struct sigaction current = {};
    if (sigaction(signal, nullptr, &current) != 0 || IsOurs(current))
    {
      continue;
    }
    Previous[signal] = current;
    struct sigaction ours = {};
    ours.sa_sigaction = OnFatal;
    ours.sa_flags = SA_SIGINFO | (current.sa_flags & SA_ONSTACK);
    sigemptyset(&ours.sa_mask);
    sigaction(signal, &ours, nullptr);
  }
}
}
