// The harness's own rules (TestHarness.h): a skipped case is counted apart
// and never as passed, a case that failed before it skipped is a failure,
// and the exit code is 1 on a failure, kSkipCode when every selected case
// skipped, 0 otherwise; a filter that selects nothing is an error. Runs
// runAll on each filter below and checks its exit code; the failures that
// the inner runs print are on purpose.
#include <cstdio>
#include <vector>

#include "TestHarness.h"

JZ_TEST(RulesPassA)
{
  JZ_CHECK(1 + 1 == 2);
}

JZ_TEST(RulesSkipB)
{
  JZ_SKIP("skipped on purpose");
}

// A skip is no std::exception: JZ_CHECK_THROWS lets it through.
JZ_TEST(RulesSkipC)
{
  JZ_CHECK_THROWS(jztest::skip("skipped inside JZ_CHECK_THROWS"));
  JZ_CHECK_MSG(false, "not reached");
}

JZ_TEST(RulesSkipOnOtherBackendD)
{
  jztest::skipOnCpu("a GPU case");
  jztest::skipOnGpu("a CPU case");
}

JZ_TEST(RulesFailThenSkipE)
{
  JZ_CHECK_MSG(false, "fails on purpose");
  JZ_SKIP("too late: the case failed");
}

namespace
{
int exitCode(std::vector<const char*> args)
{
  args.insert(args.begin(), "TestHarnessRules");
  std::printf("--- runAll");
  for (std::size_t i = 1; i < args.size(); ++i)
    std::printf(" %s", args[i]);
  std::printf("\n");
  const int code = jztest::runAll(int(args.size()), const_cast<char**>(args.data()));
  jztest::backendSlot() = jz::Backend::CPU;
  return code;
}
} // namespace

int main()
{
  struct Expect
  {
    std::vector<const char*> args;
    int code;
  };
  const bool gpu = jz::cudaUsable();
  const std::vector<Expect> expected = {
    { { "RulesPassA" }, 0 },
    { { "RulesSkipB" }, jztest::kSkipCode },
    { { "RulesSkip" }, jztest::kSkipCode }, // B, C and D: all skip
    { { "RulesSkipC" }, jztest::kSkipCode },
    { { "RulesSkipOnOtherBackendD" }, jztest::kSkipCode },
    { { "--backend=cuda", "RulesSkipOnOtherBackendD" }, jztest::kSkipCode },
    { { "--backend=cuda", "RulesPassA" }, gpu ? 0 : jztest::kSkipCode },
    { { "RulesPassA" }, 0 }, // back on the CPU
    { { "Rules" }, 1 },      // E fails
    { { "RulesFailThenSkipE" }, 1 },
    { { "NoCaseHasThisName" }, 1 },
  };
  int wrong = 0;
  for (const Expect& e : expected)
  {
    const int code = exitCode(e.args);
    if (code != e.code)
    {
      ++wrong;
      std::printf("WRONG: exit code %d, expected %d\n", code, e.code);
    }
  }
  std::printf("%s: %d of %zu exit codes wrong\n", wrong ? "FAILED" : "harness rules hold", wrong,
    expected.size());
  return wrong ? 1 : 0;
}
