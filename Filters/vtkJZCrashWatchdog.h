/**
 * @file   vtkJZCrashWatchdog.h
 * @brief  A fatal signal ends the process, even when a crash handler hangs.
 *
 * ParaView's logging (loguru) catches SIGSEGV, SIGABRT and the other fatal
 * signals and prints a stack trace, which allocates. After heap corruption
 * (a double free detected inside malloc, with the allocator's lock held) that
 * allocation waits forever on the lock: pvpython and pvbatch hang instead of
 * exiting, and under MPI the other ranks wait with them.
 *
 * Arm() puts a small handler in front of whatever handles those signals:
 * it starts a timer (alarm(), async-signal-safe) and then calls the previous
 * handler exactly as before, so the stack trace still appears. When the
 * previous handler has not ended the process within the timer, the timer's
 * own handler ends it with exit status 128 + the signal. Nothing changes
 * for a process that does not crash. Not wrapped; include it only from
 * .cxx files.
 */
#ifndef vtkJZCrashWatchdog_h
#define vtkJZCrashWatchdog_h

namespace vtkJZCrashWatchdog
{
/// Seconds a crash handler may take before the process is ended.
constexpr unsigned int kGraceSeconds = 10;

/// Installs the watchdog in front of the current handlers of the fatal
/// signals (idempotent; cheap enough to call at every RequestData, so that a
/// handler installed after the plugin loaded is wrapped too).
void Arm();
}

#endif
// VTK-HeaderTest-Exclude: vtkJZCrashWatchdog.h
