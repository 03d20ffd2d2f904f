// Prints the parameter ranges of jz/ParameterRanges.h, one per line:
//   name<TAB>filters<TAB>min<TAB>max<TAB>minExclusive<TAB>integer
// (max "inf" for none), for the test that compares them with Plugin/*.xml.
#include <cmath>
#include <cstdio>

#include "jz/ParameterRanges.h"

int main()
{
  for (const jz::ParameterRange& r : jz::ranges::kAll)
  {
    std::printf("%s\t%s\t%.17g\t", r.name, r.filters, r.min);
    if (std::isinf(r.max) || r.max >= jz::ranges::kIntMax)
      std::printf("inf");
    else
      std::printf("%.17g", r.max);
    std::printf("\t%d\t%d\n", r.minExclusive ? 1 : 0, r.integer ? 1 : 0);
  }
  return 0;
}
