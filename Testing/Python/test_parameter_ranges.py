"""The ranges the GUI offers are the ranges the code accepts.

Every numeric property's range lives in Kernels/include/jz/ParameterRanges.h;
jz_parameter_ranges prints that table. Each entry must appear, with the same
bounds, as the IntRangeDomain / DoubleRangeDomain (min, and max where there
is one) or EnumerationDomain (values 0..max) of the property in the XML of
every filter that has it; and every range or enumeration domain in the XML
must come from the table.

Run with Debian's python3:  test_parameter_ranges.py PATH/TO/jz_parameter_ranges PLUGIN_DIR
"""
import glob
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

from checks import Checker


def table(program):
    rows = {}
    out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, filters, lo, hi, exclusive, integer = line.split("\t")
        for f in filters.split():
            rows[(f, name)] = (float(lo), float(hi), exclusive == "1", integer == "1")
    return rows


def domains(plugin_dir):
    """(proxy, property) -> ('range', min, max) or ('enum', [values]) from the XML."""
    found = {}
    for path in sorted(glob.glob(os.path.join(plugin_dir, "*.xml"))):
        for proxy in ET.parse(path).getroot().iter():
            if proxy.tag not in ("SourceProxy", "Proxy") or proxy.get("name", "").endswith("Alias"):
                continue
            for prop in proxy:
                if prop.tag not in ("IntVectorProperty", "DoubleVectorProperty"):
                    continue
                for dom in prop:
                    key = (proxy.get("name"), prop.get("name"))
                    if dom.tag in ("IntRangeDomain", "DoubleRangeDomain"):
                        hi = dom.get("max")
                        found[key] = ("range", float(dom.get("min", "-inf")),
                                      float(hi) if hi is not None else math.inf)
                    elif dom.tag == "EnumerationDomain":
                        found[key] = ("enum", sorted(int(e.get("value")) for e in dom))
    return found


def main():
    program, plugin_dir = sys.argv[1], sys.argv[2]
    c = Checker()
    rows = table(program)
    doms = domains(plugin_dir)
    c.check(len(rows) >= 20, f"the table has {len(rows)} (filter, property) entries")
    for key, (lo, hi, exclusive, integer) in sorted(rows.items()):
        dom = doms.get(key)
        what = f"{key[0]}.{key[1]}"
        if dom is None:
            c.check(False, f"{what}: the XML has a range or enumeration domain")
        elif dom[0] == "enum":
            c.check(integer and dom[1] == list(range(int(lo), int(hi) + 1)),
                    f"{what}: enumeration values {dom[1]} = {int(lo)}..{int(hi)} of the table")
        else:
            c.check(dom[1] == lo and dom[2] == hi,
                    f"{what}: XML range [{dom[1]}, {dom[2]}] = the table's "
                    f"{'(' if exclusive else '['}{lo}, {hi}]")
    for key in sorted(set(doms) - set(rows)):
        c.check(False, f"{key[0]}.{key[1]}: its XML domain comes from the table")
    c.finish()


if __name__ == "__main__":
    main()
