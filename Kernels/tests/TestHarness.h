// A minimal self-registering test harness: the GPU machine has no GoogleTest,
// so the kernel tests carry their own. Prints "N passed, N skipped, N failed"
// last.
//
// One test body serves both backends: the tests call the kernels with
// jztest::backend(), which is the CPU unless the program runs with
// --backend=cuda; without a usable GPU that run prints why and exits with
// kSkipCode, which CTest reports as skipped (SKIP_RETURN_CODE).
//
// A case that cannot run here says so: jztest::skip(reason) (or
// JZ_SKIP(reason), skipOnCpu, skipOnGpu) ends it, runAll prints
// "[ SKIP ] name: reason" and counts it apart. A case that failed a check
// before it skipped is a failure. Exit code: 1 when a case failed, else
// kSkipCode when every selected case skipped, else 0; a filter that selects
// no case is an error (a stale name in a script must not pass).
//
// --prepare-references=DIR runs the CPU backend at the GPU's sizes and keeps
// the digests of the references that support it (PreparedReferences.h) in
// DIR; --references=DIR reads them back, so that a GPU run spends its short
// lease on the GPU and not on recomputing the CPU's references.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "jz/Backend.h"

namespace jztest
{
constexpr int kSkipCode = 77;

inline jz::Backend& backendSlot()
{
  static jz::Backend b = jz::Backend::CPU;
  return b;
}

// The backend the tests run on (--backend=cpu|cuda; default cpu).
inline jz::Backend backend()
{
  return backendSlot();
}

inline bool onGpu()
{
  return backend() == jz::Backend::CUDA;
}

// The folder of prepared references ("" when none), and whether this run
// writes them (--prepare-references) rather than reads them (--references).
inline std::string& referencesDir()
{
  static std::string dir;
  return dir;
}

inline bool& preparingReferences()
{
  static bool preparing = false;
  return preparing;
}

// The name of a coordinate type in messages.
template <class T>
const char* typeName()
{
  return sizeof(T) == sizeof(float) ? "float" : "double";
}

// The message of the jz::Error that run() throws, or "" when it throws none.
template <class Run>
std::string errorOf(Run run)
{
  try
  {
    run();
  }
  catch (const jz::Error& e)
  {
    return e.what();
  }
  return std::string();
}

// A size for the backend under test: GPU runs, and runs that prepare or
// read prepared references, take the larger one.
inline std::size_t sized(std::size_t cpu, std::size_t gpu)
{
  return onGpu() || !referencesDir().empty() ? gpu : cpu;
}

// Thrown by skip(); not a std::exception, so JZ_CHECK_THROWS and the
// bodies' own handlers let it through to runAll.
struct Skipped
{
  std::string reason;
};

// Ends the running case as skipped, with the reason printed.
[[noreturn]] inline void skip(const std::string& reason)
{
  throw Skipped{ reason };
}

// Cases that only make sense on the GPU (leaf batches, the sanitizer's small
// cases, repeatability of the device's sums) skip on the CPU backend.
inline void skipOnCpu(const std::string& reason)
{
  if (!onGpu())
    skip(reason);
}

// Cases that exercise the CPU alone (a GPU run would only repeat them) skip
// on the GPU backend.
inline void skipOnGpu(const std::string& reason)
{
  if (onGpu())
    skip(reason);
}

struct Case
{
  const char* name;
  std::function<void()> body;
};

inline std::vector<Case>& registry()
{
  static std::vector<Case> cases;
  return cases;
}

inline int& failures()
{
  static int n = 0;
  return n;
}

struct Registrar
{
  Registrar(const char* name, std::function<void()> body) { registry().push_back({ name, body }); }
};

inline void fail(const char* file, int line, const std::string& what)
{
  ++failures();
  std::fprintf(stderr, "  FAILED %s:%d: %s\n", file, line, what.c_str());
}

// Runs the cases whose name contains the filter argument (all without one)
// on the backend of --backend=cpu|cuda.
inline int runAll(int argc, char** argv)
{
  const char* filter = "";
  for (int i = 1; i < argc; ++i)
  {
    if (std::strcmp(argv[i], "--backend=cuda") == 0)
      backendSlot() = jz::Backend::CUDA;
    else if (std::strcmp(argv[i], "--backend=cpu") == 0)
      backendSlot() = jz::Backend::CPU;
    else if (std::strncmp(argv[i], "--references=", 13) == 0)
      referencesDir() = argv[i] + 13;
    else if (std::strncmp(argv[i], "--prepare-references=", 21) == 0)
    {
      referencesDir() = argv[i] + 21;
      preparingReferences() = true;
    }
    else
      filter = argv[i];
  }
  if (preparingReferences() && onGpu())
  {
    std::printf("--prepare-references runs on the CPU backend\n");
    return 1;
  }
  std::string why;
  if (onGpu() && !jz::cudaUsable(&why))
  {
    std::printf("SKIPPED: %s\n", why.c_str());
    return kSkipCode;
  }
  std::printf("backend: %s\n", jz::backendName(backend()));
  int passed = 0, skipped = 0, failed = 0;
  for (const Case& c : registry())
  {
    if (!std::strstr(c.name, filter))
      continue;
    const int before = failures();
    std::printf("[ RUN  ] %s\n", c.name);
    std::fflush(stdout);
    std::string skipReason;
    bool wasSkipped = false;
    const auto start = std::chrono::steady_clock::now();
    try
    {
      c.body();
    }
    catch (const Skipped& s)
    {
      wasSkipped = true;
      skipReason = s.reason;
    }
    catch (const std::exception& e)
    {
      fail(c.name, 0, std::string("unexpected exception: ") + e.what());
    }
    // Each case's wall time, so that the slow ones are plain in any log.
    const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (failures() != before)
    {
      ++failed;
      std::printf("[ FAIL ] %s (%.2f s)\n", c.name, seconds);
    }
    else if (wasSkipped)
    {
      ++skipped;
      std::printf("[ SKIP ] %s: %s (%.2f s)\n", c.name, skipReason.c_str(), seconds);
    }
    else
    {
      ++passed;
      std::printf("[  OK  ] %s (%.2f s)\n", c.name, seconds);
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d skipped, %d failed\n", passed, skipped, failed);
  if (passed + skipped + failed == 0)
  {
    std::printf("no case matches \"%s\"\n", filter);
    return 1;
  }
  if (failed > 0)
    return 1;
  return passed == 0 ? kSkipCode : 0;
}
} // namespace jztest

#define JZ_TEST_CONCAT2(a, b) a##b
#define JZ_TEST_CONCAT(a, b) JZ_TEST_CONCAT2(a, b)
#define JZ_TEST(name)                                                                              \
  static void name();                                                                              \
  static jztest::Registrar JZ_TEST_CONCAT(registrar_, name)(#name, name);                          \
  static void name()

// Two cases, name##Float and name##Double: check<float>() and check<double>().
#define JZ_TEST_FLOAT_AND_DOUBLE(name, check)                                                      \
  JZ_TEST(name##Float)                                                                             \
  {                                                                                                \
    check<float>();                                                                                \
  }                                                                                                \
  JZ_TEST(name##Double)                                                                            \
  {                                                                                                \
    check<double>();                                                                               \
  }

// Ends the running case as skipped (jztest::skip).
#define JZ_SKIP(reason) jztest::skip(reason)

#define JZ_CHECK(cond)                                                                             \
  do                                                                                               \
  {                                                                                                \
    if (!(cond))                                                                                   \
      jztest::fail(__FILE__, __LINE__, #cond);                                                     \
  } while (0)

#define JZ_CHECK_MSG(cond, msg)                                                                    \
  do                                                                                               \
  {                                                                                                \
    if (!(cond))                                                                                   \
    {                                                                                              \
      std::ostringstream jz_os_;                                                                   \
      jz_os_ << #cond << " -- " << msg;                                                            \
      jztest::fail(__FILE__, __LINE__, jz_os_.str());                                              \
    }                                                                                              \
  } while (0)

#define JZ_CHECK_EQ(a, b) JZ_CHECK_MSG((a) == (b), (a) << " != " << (b))

#define JZ_CHECK_THROWS(expr)                                                                      \
  do                                                                                               \
  {                                                                                                \
    bool jz_threw_ = false;                                                                        \
    try                                                                                            \
    {                                                                                              \
      expr;                                                                                        \
    }                                                                                              \
    catch (const std::exception&)                                                                  \
    {                                                                                              \
      jz_threw_ = true;                                                                            \
    }                                                                                              \
    if (!jz_threw_)                                                                                \
      jztest::fail(__FILE__, __LINE__, "expected an exception: " #expr);                           \
  } while (0)

#define JZ_TEST_MAIN()                                                                             \
  int main(int argc, char** argv)                                                                  \
  {                                                                                                \
    return jztest::runAll(argc, argv);                                                             \
  }
