"""Runs the walk-through of doc/python.md: its python code blocks, in order,
in the folder DIR (made if missing), which receives python_walkthrough.png.
The picture of doc/python.md and the README:

  PYTHONPATH=build/python /usr/bin/python3 doc/tools/python_walkthrough.py doc
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def blocks(markdown):
    """The python code blocks of the walk-through section."""
    section = markdown.split("## Walk-through", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def main():
    out = os.path.abspath(sys.argv[1])
    os.environ.setdefault("JZ_SHARED_DIR", os.path.join(ROOT, "..", "shared"))
    with open(os.path.join(ROOT, "doc", "python.md")) as f:
        code = blocks(f.read())
    os.makedirs(out, exist_ok=True)
    os.chdir(out)
    scope = {"__name__": "__walkthrough__"}
    for block in code:
        exec(compile(block, "doc/python.md", "exec"), scope)


if __name__ == "__main__":
    main()
