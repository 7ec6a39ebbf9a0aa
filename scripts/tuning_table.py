#!/usr/bin/env python3
"""Prints a reader's tuning table (src/analysis/<reader>_tuning.hpp) as the
Markdown table docs/inference.md holds: one row per threshold, its name,
value, unit, what it separates and what set it. The unit test
TuningTables.DocsListEveryThresholdWithItsValue checks the docs' rows
against the code.

Usage: scripts/tuning_table.py src/analysis/staircase_tuning.hpp
"""
import re
import sys

ROW = re.compile(r'inline constexpr Threshold (k\w+)\{(.*?)\};', re.S)
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def rows(text):
    for name, body in ROW.findall(text):
        # Fields: "name", value, "unit", "separates", "evidence"; adjacent
        # string literals are one string.
        rest = body
        first = STRING.search(rest)
        rest = rest[first.end():]
        value = re.match(r'\s*,\s*([-0-9.e]+)\s*,', rest)
        rest = rest[value.end():]
        fields, current = [], ""
        for piece in re.split(r'("(?:[^"\\]|\\.)*")', rest):
            if piece.startswith('"'):
                current += piece[1:-1]
            elif "," in piece:
                fields.append(current)
                current = ""
        fields.append(current)
        unit, separates, evidence = (f.strip() for f in fields[:3])
        yield name, float(value.group(1)), unit, separates, evidence


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    text = open(sys.argv[1]).read()
    print("| threshold | value | unit | separates | evidence |")
    print("|---|---|---|---|---|")
    for name, value, unit, separates, evidence in rows(text):
        print(f"| `{name}` | {value:g} | {unit} | {separates} | {evidence} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
