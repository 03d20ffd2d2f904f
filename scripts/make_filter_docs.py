#!/usr/bin/python3
"""Writes the filter reference pages doc/filters/<Name>.md from the plugin's
server-manager XML (Plugin/*.xml), the one source of the property text.

One page per SourceProxy (filters and the reader; proxies whose name ends in
"Alias" only add a scripting name to the proxy they derive from): the title
with the label and the pvpython names, the proxy's documentation (short_help,
long_help, then the element text), the inputs, the output ports, then one
entry per property in the order of its PropertyGroups (the rest after them,
in XML order): type, number of elements, default, range or enumeration, where
the panel shows it, and its documentation.

Text in the XML is wrapped and indented: whitespace is normalised within a
paragraph; blank lines separate paragraphs, and lines that start with "- "
start list items.

Usage (Debian's /usr/bin/python3, standard library only):
  python3 scripts/make_filter_docs.py           writes the pages
  python3 scripts/make_filter_docs.py --check   exits 1, naming the stale pages,
                                                when a page differs (0 otherwise)
"""
import glob
import os
import re
import string
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGIN = os.path.join(ROOT, "Plugin")
OUT = os.path.join(ROOT, "doc", "filters")

PROPERTY_TAGS = ("IntVectorProperty", "DoubleVectorProperty", "StringVectorProperty",
                 "IdTypeVectorProperty", "ProxyProperty")
RANGE_TAGS = ("IntRangeDomain", "DoubleRangeDomain")


def python_name(label):
    """The name pvpython gives a proxy: its label without the characters that
    are not valid in a Python name (paraview.servermanager._make_name_valid)."""
    valid = "_" + string.ascii_letters + string.digits
    name = "".join(c for c in label if c in valid)
    return name if name[:1] in string.ascii_letters else "a" + name


def escape(text):
    """Markdown escapes for text taken from the XML: angle brackets (else read
    as HTML) and asterisks (else read as emphasis)."""
    return text.replace("\\", "\\\\").replace("<", "\\<").replace(">", "\\>").replace("*", "\\*")


def blocks(text):
    """Markdown lines for wrapped text: paragraphs split at blank lines, each
    joined into one line; lines starting with "- " start list items."""
    out = []
    for para in re.split(r"\n\s*\n", text or ""):
        lines = [line.strip() for line in para.strip().splitlines() if line.strip()]
        if not lines:
            continue
        lead, items = [], []
        for line in lines:
            if line.startswith("- "):
                items.append(line[2:])
            elif items:
                items[-1] += " " + line
            else:
                lead.append(line)
        if lead:
            out += [escape(" ".join(" ".join(lead).split())), ""]
        if items:
            out += ["- " + escape(" ".join(item.split())) for item in items] + [""]
    return out


def documentation(element):
    doc = element.find("Documentation")
    return doc if doc is not None else None


def property_type(prop):
    tag = prop.tag
    if prop.find("BooleanDomain") is not None:
        return "boolean (0 or 1)"
    if prop.find("EnumerationDomain") is not None:
        return "enumeration (an integer; pvpython takes the text)"
    if prop.find("ArrayListDomain") is not None:
        return "point-array selection (in Python [association, name], e.g. ['POINTS', 'Mass'])"
    if prop.find("ArraySelectionDomain") is not None:
        return "selection list (name, on/off pairs)"
    if prop.find("FileListDomain") is not None:
        return "file name(s)"
    return {"IntVectorProperty": "integer", "DoubleVectorProperty": "double",
            "StringVectorProperty": "string", "IdTypeVectorProperty": "id",
            "ProxyProperty": "proxy"}[tag]


def elements(prop):
    n = prop.get("number_of_elements")
    if prop.find("ArrayListDomain") is not None:
        return None  # the 5-element SetInputArrayToProcess vector is an implementation detail
    if prop.get("repeat_command") == "1" or prop.get("repeatable") == "1":
        return "any number" if n in (None, "0", "1") else f"any number of {n}-element"
    if prop.get("number_of_elements_per_command"):
        return "any number"
    return n


def default(prop):
    values = prop.get("default_values")
    array_list = prop.find("ArrayListDomain")
    if array_list is not None:
        none = array_list.get("none_string")
        if none is not None and values == none:
            return f"`{none}`"
        kind = (array_list.get("attribute_type") or "").lower()
        if none is not None and kind:
            return f"the Input's active {kind} array when it has one, else `{none}`"
        return "picked by ParaView from the Input's point arrays when the filter is created"
    if prop.find("ArraySelectionDomain") is not None:
        return "every entry on"
    if values is None:
        return None
    enum = prop.find("EnumerationDomain")
    if enum is not None:
        texts = {e.get("value"): e.get("text") for e in enum.findall("Entry")}
        return " ".join(f"`{texts.get(v, v)}` ({v})" for v in values.split())
    if prop.find("BooleanDomain") is not None:
        return " ".join(f"`{v}` ({'on' if v == '1' else 'off'})" for v in values.split())
    return "`" + " ".join(values.split()) + "`"


def domain_lines(prop):
    lines = []
    for dom in prop:
        if dom.tag in RANGE_TAGS:
            lo, hi = dom.get("min"), dom.get("max")
            parts = []
            if lo is not None:
                parts.append(f"min {lo}")
            if hi is not None:
                parts.append(f"max {hi}")
            if parts:
                lines.append("Range: " + ", ".join(parts))
        elif dom.tag == "EnumerationDomain":
            entries = ", ".join(f"`{e.get('text')} = {e.get('value')}`" for e in dom.findall("Entry"))
            lines.append("Values: " + entries)
    return lines


def panel_line(prop):
    parts = []
    visibility = prop.get("panel_visibility")
    if visibility == "advanced":
        parts.append("advanced (shown with the gear icon)")
    elif visibility == "never":
        parts.append("not shown in the properties panel")
    hints = prop.find("Hints")
    if hints is not None:
        for dec in hints.findall("PropertyWidgetDecorator"):
            if dec.get("type") == "GenericDecorator" and dec.get("mode") == "visibility":
                parts.append(f"shown when `{dec.get('property')}` = {dec.get('value')}")
    return "Panel: " + "; ".join(parts) if parts else None


def ordered_properties(proxy):
    props = [p for p in proxy if p.tag in PROPERTY_TAGS]
    by_name = {p.get("name"): p for p in props}
    groups, placed = [], set()
    for group in proxy.findall("PropertyGroup"):
        names = [p.get("name") for p in group.findall("Property") if p.get("name") in by_name]
        groups.append((group.get("label"), [by_name[n] for n in names]))
        placed.update(names)
    rest = [p for p in props if p.get("name") not in placed and
            (p.get("information_only") != "1" or documentation(p) is not None)]
    if rest:
        groups.append((None, rest))
    return groups


def property_entry(prop, group):
    name = prop.get("name")
    out = [f"### `{name}`", ""]
    n = elements(prop)
    count = {None: "", "1": ", 1 element", "any number": ", any number of elements"}.get(
        n, f", {n} elements")
    facts = ["Type: " + property_type(prop) + count]
    if prop.get("information_only") == "1":
        facts.append("Information only (set by the reader, read-only)")
    d = default(prop)
    if d:
        facts.append("Default: " + d)
    facts += domain_lines(prop)
    panel = panel_line(prop)
    if group:
        panel = (panel + "; " if panel else "Panel: ") + f"group *{escape(group)}*"
    if panel:
        facts.append(panel)
    out += ["- " + f for f in facts] + [""]
    doc = documentation(prop)
    out += blocks(doc.text if doc is not None else "")
    return out


def aliases(root_proxies, name):
    return [p.get("label") for p in root_proxies
            if p.get("base_proxyname") == name and p.get("name", "").endswith("Alias")]


def page(proxy, group_name, source, all_proxies):
    name, label = proxy.get("name"), proxy.get("label") or proxy.get("name")
    names = []
    for n in aliases(all_proxies, name) + [python_name(label)]:
        if n not in names:
            names.append(n)
    out = [f"# {escape(label)} (`{names[0]}`)", ""]
    facts = ["pvpython: " + ", ".join(f"`{n}(...)`" for n in names),
             f"Proxy `{group_name}/{name}`, VTK class `{proxy.get('class')}`"]
    hints = proxy.find("Hints")
    if hints is not None:
        menu = hints.find("ShowInMenu")
        if menu is not None:
            facts.append(f"Menu: *Filters → {menu.get('category')}* (and *Filters → Alphabetical*)")
        reader = hints.find("ReaderFactory")
        if reader is not None:
            exts = ", ".join("." + e for e in reader.get("extensions", "").split())
            facts.append(f"*File → Open* of {exts} files (recognised by their content)")
    facts.append(f"Generated from `{source}` by `scripts/make_filter_docs.py`; edit the XML, not this page")
    out += ["- " + f for f in facts] + [""]
    doc = documentation(proxy)
    if doc is not None:
        if doc.get("short_help"):
            out += ["*" + escape(" ".join(doc.get("short_help").split())) + "*", ""]
        if doc.get("long_help"):
            out += blocks(doc.get("long_help"))
        out += blocks(doc.text)

    inputs = proxy.findall("InputProperty")
    if inputs:
        out += ["## Inputs", ""]
        for inp in inputs:
            types = [t.get("value") for d in inp.findall("DataTypeDomain") for t in d.findall("DataType")]
            optional = inp.find("Hints") is not None and inp.find("Hints").find("Optional") is not None
            head = f"### `{inp.get('name')}`" + (" (optional)" if optional else "")
            out += [head, ""]
            out += [f"- Port {inp.get('port_index', '0')}; accepts: " +
                    ", ".join(f"`{t}`" for t in types), ""]
            d = documentation(inp)
            out += blocks(d.text if d is not None else "")
    ports = proxy.findall("OutputPort")
    if ports:
        out += ["## Output ports", ""]
        out += [f"- {p.get('index')}: {escape(p.get('name'))}" for p in ports] + [""]

    out += ["## Properties", ""]
    for group, props in ordered_properties(proxy):
        for prop in props:
            out += property_entry(prop, group)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def pages():
    proxies = []
    for path in sorted(glob.glob(os.path.join(PLUGIN, "*.xml"))):
        root = ET.parse(path).getroot()
        source = os.path.relpath(path, ROOT)
        for group in root.iter("ProxyGroup"):
            for proxy in group:
                if proxy.tag in ("SourceProxy", "Proxy"):
                    proxies.append((proxy, group.get("name"), source))
    every = [p for p, _, _ in proxies]
    result = {}
    for proxy, group_name, source in proxies:
        name = proxy.get("name", "")
        if name.endswith("Alias"):
            continue
        result[name + ".md"] = page(proxy, group_name, source, every)
    return result


def main(argv):
    check = "--check" in argv[1:]
    wanted = pages()
    if check:
        stale = []
        for name, text in sorted(wanted.items()):
            path = os.path.join(OUT, name)
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() == text:
                        continue
            except FileNotFoundError:
                pass
            stale.append(os.path.relpath(path, ROOT))
        extra = sorted(set(os.listdir(OUT)) - set(wanted)) if os.path.isdir(OUT) else []
        stale += [os.path.join("doc", "filters", e) + " (no proxy)" for e in extra if e.endswith(".md")]
        if stale:
            print("stale filter pages (run python3 scripts/make_filter_docs.py):", *stale, sep="\n  ")
            return 1
        print(f"{len(wanted)} filter pages up to date")
        return 0
    os.makedirs(OUT, exist_ok=True)
    for name, text in sorted(wanted.items()):
        with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
            f.write(text)
    print(f"wrote {len(wanted)} pages to {os.path.relpath(OUT, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
