#!/usr/bin/env python3
"""How readable src/analysis is, in numbers (issue 47; docs/inference.md
cites what this prints):

- functions longer than 80 and 120 lines, each with its length (from the
  first line of its declaration to its closing brace);
- numeric literals in conditions: the operands of <, <=, >, >=, == and !=
  (those of if, while, for, ternaries and boolean expressions alike). A
  literal typed there is unnamed; a named threshold is an identifier that
  src/analysis declares constexpr with a numeric value, or a numeric field
  of HierarchyOptions (cache_hierarchy.hpp). 0 and 1 (indices, signs,
  "at least one") are counted apart;
- literals that set or cap a finding's confidence: those on the right of an
  assignment to a name containing "conf" (f.confidence, conf,
  capacity_confidence, ...), ending in "_cap" or named "factor", in what a
  function named for a confidence or a factor returns (points_factor,
  spread_confidence), or in the confidence argument of a file's own
  make(...) helper, outside any comparison, 0 and 1 apart; a cap is a
  std::min(...) there whose first argument names a confidence and whose
  other argument holds a literal. Literals that reach a confidence through
  another variable (a struct field, a local of another name) are not
  traced: a lower bound.

    scripts/analysis_counts.py [--root DIR] [--list functions|conditions|confidence|repeats]

--list prints every item behind a count (file:line and the literal or
function); `repeats` lists the literals that occur two or more times in
one file's conditions and confidences, the candidates for one threshold
typed more than once. Standard library only; reads the sources, builds
nothing.
"""
import argparse
import os
import re
import sys
from collections import defaultdict

LONG = 80
VERY_LONG = 120

NUMBER = re.compile(
    r"0[xX][0-9a-fA-F]+[uUlL]*"
    r"|(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?[fFlL]?"
    r"|\d+[eE][+-]?\d+[fFlL]?"
    r"|\d+[uUlLzZ]*"
)
TOKEN = re.compile(
    r"\s*(?:(?P<num>" + NUMBER.pattern + r")"
    r"|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op>::|->\*?|<<=|>>=|<=|>=|==|!=|&&|\|\||<<|>>|\+\+|--|\+=|-=|\*=|/=|%=|&=|\|=|\^=|\.\.\.|[^\s]))"
)
COMPARISONS = {"<", ">", "<=", ">=", "==", "!="}
ASSIGNMENTS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
LEFT_STOP = {",", ";", "{", "}", "&&", "||", "?", ":", "return"} | ASSIGNMENTS | COMPARISONS
RIGHT_STOP = {",", ";", "{", "}", "&&", "||", "?", ":"} | ASSIGNMENTS | COMPARISONS
TEMPLATE_OK = {"::", ",", "*", "&", "&&", "const", "unsigned", "long", "short", "signed"}
# Names that hold a confidence, a factor of one, or a cap on one.
CONF_NAME = re.compile(r"conf|_cap$|^factor$")
# A numeric literal inside an initializer (not the 32 of UINT32_MAX).
NUMERIC = re.compile(r"(?<![\w.])\d|(?<!\w)\.\d")
# Names of units, not of thresholds: `16 * kMiB` is an unnamed 16.
UNITS = {"kMiB"}


def strip(text):
    """The source with comments, string and character literals and
    preprocessor lines blanked, newlines kept (so lines still count)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Tok:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line


def tokenize(text):
    toks = []
    for lineno, line in enumerate(strip(text).split("\n"), 1):
        pos = 0
        while pos < len(line):
            m = TOKEN.match(line, pos)
            if not m or m.end() == pos:
                break
            pos = m.end()
            for kind in ("num", "id", "op"):
                if m.group(kind):
                    toks.append(Tok(kind, m.group(kind), lineno))
                    break
    return toks


def template_brackets(toks):
    """Indices of the < and > (or >>) tokens that are template brackets."""
    marked = set()
    for i, t in enumerate(toks):
        if t.text != "<" or i == 0 or toks[i - 1].kind != "id":
            continue
        depth, paren, j, seen = 1, 0, i + 1, [i]
        while j < len(toks):
            x = toks[j]
            if x.text == "<" and toks[j - 1].kind == "id":
                depth += 1
                seen.append(j)
            elif x.text == ">":
                depth -= 1
                seen.append(j)
            elif x.text == ">>":
                depth -= 2
                seen.append(j)
            elif x.text == "(":
                paren += 1
            elif x.text == ")":
                paren -= 1
                if paren < 0:
                    break
            elif not (x.kind in ("id", "num") or x.text in TEMPLATE_OK):
                break
            if depth <= 0:
                break
            j += 1
        if depth == 0 and paren == 0:
            marked.update(seen)
    return marked


def operand(toks, i, step):
    """Token indices of the operand of the comparison at i, to its left
    (step -1) or right (step +1)."""
    opening, closing = ("(", "[", "{"), (")", "]", "}")
    if step < 0:
        opening, closing = closing, opening
    depth, j, out = 0, i + step, []
    stop = LEFT_STOP if step < 0 else RIGHT_STOP
    while 0 <= j < len(toks):
        x = toks[j].text
        if x in opening:
            depth += 1
        elif x in closing:
            depth -= 1
            if depth < 0:
                break
        elif depth == 0 and x in stop:
            break
        out.append(j)
        j += step
    return out


def is_trivial(text):
    try:
        v = float(re.sub(r"[uUlLzZfF]+$", "", text)) if not text.lower().startswith("0x") else int(text, 16)
    except ValueError:
        return False
    return v in (0.0, 1.0)


def named_thresholds(sources):
    """Names src/analysis gives numbers: constexpr declarations with a
    numeric value, tuning tables' Thresholds, and HierarchyOptions' numeric
    fields."""
    names = set()
    decl = re.compile(r"constexpr\s+[\w:<>\s]*?\b(\w+)\s*=\s*([^;]+);")
    for text in sources.values():
        clean = strip(text)
        for m in decl.finditer(clean):
            if NUMERIC.search(m.group(2)) and '"' not in m.group(2) and m.group(1) not in UNITS:
                names.add(m.group(1))
        # A tuning table's rows (src/analysis/tuning.hpp's Threshold).
        for m in re.finditer(r"constexpr\s+Threshold\s+(k\w+)\s*\{", clean):
            names.add(m.group(1))
        for body in re.finditer(r"struct\s+HierarchyOptions\s*\{(.*?)\n\};", clean, re.S):
            for f in re.finditer(r"\b(?:double|int|size_t)\s+(\w+)\s*=\s*([^;]+);", body.group(1)):
                if (NUMERIC.search(f.group(2)) or "k_" in f.group(2)) and f.group(2).strip() != "0":
                    names.add(f.group(1))
    return names


def functions(toks):
    """(name, first line, last line, body's first and last token) of every
    function body at namespace or class scope."""
    found = []
    stack = []  # "ns" or "class"
    header = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text in ("public", "private", "protected") and i + 1 < len(toks) and toks[i + 1].text == ":":
            header = []
            i += 2
            continue
        if t.text == ";":
            header = []
        elif t.text == "}":
            if stack:
                stack.pop()
            header = []
        elif t.text == "{":
            kind = classify(header)
            if kind in ("ns", "class"):
                stack.append(kind)
                header = []
            else:
                end = matching_brace(toks, i)
                if kind == "function":
                    found.append((function_name(header), header[0].line if header else t.line, toks[end].line, i, end))
                header = []
                i = end
        else:
            header.append(t)
        i += 1
    return found


def classify(header):
    words = [t.text for t in header]
    if not words:
        return "block"
    if words[0] == "namespace" or (words[0] == "inline" and words[1:2] == ["namespace"]):
        return "ns"
    first = words
    if first[0] == "template":
        depth, k = 0, 1
        for k in range(1, len(first)):
            depth += {"<": 1, ">": -1, ">>": -2}.get(first[k], 0)
            if depth <= 0:
                break
        first = first[k + 1 :]
    if first and first[0] == "enum":
        return "block"
    depth = 0
    for w in words:
        if w in ("(", "["):
            if w == "(" and depth == 0:
                break
            depth += 1
        elif w in (")", "]"):
            depth -= 1
        elif w == "=" and depth == 0:
            return "block"
    if "(" not in words:
        return "class" if first and first[0] in ("struct", "class", "union") else "block"
    return "function"


def function_name(header):
    for k, t in enumerate(header):
        if t.text == "(" and k > 0 and header[k - 1].kind == "id":
            name, j = header[k - 1].text, k - 2
            while j >= 1 and header[j].text == "::" and header[j - 1].kind == "id":
                name = header[j - 1].text + "::" + name
                j -= 2
            return name
    return "?"


def matching_brace(toks, i):
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text == "{":
            depth += 1
        elif toks[j].text == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def make_confidence_index(toks):
    """The index of the `confidence` parameter of this file's make(...)
    helper, or None."""
    for i, t in enumerate(toks):
        if t.text == "make" and i > 0 and toks[i - 1].text == "Finding" and toks[i + 1].text == "(":
            depth, arg = 0, 0
            for j in range(i + 1, len(toks)):
                x = toks[j].text
                if x in ("(", "[", "{"):
                    depth += 1
                elif x in (")", "]", "}"):
                    depth -= 1
                    if depth == 0:
                        break
                elif x == "," and depth == 1:
                    arg += 1
                elif x == "confidence" and depth == 1:
                    return arg
    return None


def call_argument(toks, i, index):
    """Token indices of argument `index` of the call whose `(` is at i."""
    depth, arg, out = 0, 0, []
    for j in range(i, len(toks)):
        x = toks[j].text
        if x in ("(", "[", "{"):
            depth += 1
            if depth == 1:
                continue
        elif x in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                break
        elif x == "," and depth == 1:
            arg += 1
            continue
        if arg == index and depth >= 1:
            out.append(j)
    return out


def statement(toks, i):
    """Token indices from i to the end of its statement (the next ; or
    unmatched closing bracket)."""
    depth, out = 0, []
    for j in range(i, len(toks)):
        x = toks[j].text
        if x in ("(", "[", "{"):
            depth += 1
        elif x in (")", "]", "}"):
            depth -= 1
            if depth < 0:
                break
        elif x == ";" and depth == 0:
            break
        out.append(j)
    return out


def analyse(root):
    folder = os.path.join(root, "src", "analysis")
    files = sorted(f for f in os.listdir(folder) if f.endswith((".cpp", ".hpp")))
    sources = {}
    for f in files:
        with open(os.path.join(folder, f)) as fh:
            sources[f] = fh.read()
    names = named_thresholds(sources)
    result = {"functions": [], "literals": [], "named": [], "confidence": [], "caps": [], "names": names}
    for f in files:
        rel = f"src/analysis/{f}"
        toks = tokenize(sources[f])
        bodies = functions(toks)
        for name, first, last, _, _ in bodies:
            result["functions"].append((rel, name, first, last - first + 1))
        templates = template_brackets(toks)
        in_condition = set()
        for i, t in enumerate(toks):
            if t.text not in COMPARISONS or i in templates:
                continue
            for j in operand(toks, i, -1) + operand(toks, i, +1):
                in_condition.add(j)
        for j in sorted(in_condition):
            t = toks[j]
            if t.kind == "num":
                result["literals"].append((rel, t.line, t.text, is_trivial(t.text)))
            elif t.kind == "id" and t.text in names:
                result["named"].append((rel, t.line, t.text))
        # Confidence: right-hand sides of assignments to a conf-name, and
        # the confidence argument of the file's make(...).
        conf_tokens = set()
        for i, t in enumerate(toks):
            if t.text in ASSIGNMENTS and i > 0 and toks[i - 1].kind == "id" and CONF_NAME.search(toks[i - 1].text):
                rhs = statement(toks, i + 1)
                conf_tokens.update(rhs)
                caps_in(toks, rhs, rel, result)
        # What a function named for a confidence or a factor of one returns.
        for name, _, _, begin, end in bodies:
            if re.search(r"confidence|factor", name.split("::")[-1]):
                for i in range(begin, end):
                    if toks[i].text == "return":
                        conf_tokens.update(statement(toks, i + 1))
        index = make_confidence_index(toks)
        if index is not None:
            for i, t in enumerate(toks):
                if t.text == "make" and i + 1 < len(toks) and toks[i + 1].text == "(" and toks[i - 1].text != "Finding":
                    conf_tokens.update(call_argument(toks, i + 1, index))
        for j in sorted(conf_tokens - in_condition):
            t = toks[j]
            if t.kind == "num":
                result["confidence"].append((rel, t.line, t.text, is_trivial(t.text)))
    return result


def caps_in(toks, span, rel, result):
    for j in span:
        if toks[j].text == "min" and j + 1 < len(toks) and toks[j + 1].text == "(":
            first = call_argument(toks, j + 1, 0)
            other = [k for a in range(1, 4) for k in call_argument(toks, j + 1, a)]
            if any(CONF_NAME.search(toks[k].text) for k in first if toks[k].kind == "id"):
                lits = [toks[k].text for k in other if toks[k].kind == "num"]
                result["caps"].append((rel, toks[j].line, " ".join(lits)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="the repository (default: this script's)")
    ap.add_argument("--list", choices=["functions", "conditions", "confidence", "repeats"])
    args = ap.parse_args()
    r = analyse(args.root)

    if args.list == "functions":
        for rel, name, first, length in sorted(r["functions"], key=lambda x: -x[3]):
            print(f"{length:5d}  {rel}:{first}  {name}")
        return
    if args.list == "conditions":
        for rel, line, text, trivial in r["literals"]:
            print(f"{rel}:{line}  {text}{'  (0 or 1)' if trivial else ''}")
        for rel, line, text in r["named"]:
            print(f"{rel}:{line}  {text}  (named)")
        return
    if args.list == "confidence":
        for rel, line, text, trivial in r["confidence"]:
            print(f"{rel}:{line}  {text}{'  (0 or 1)' if trivial else ''}")
        for rel, line, text in r["caps"]:
            print(f"{rel}:{line}  cap {text or '(no literal)'}")
        return
    if args.list == "repeats":
        by_file = defaultdict(lambda: defaultdict(list))
        for rel, line, text, trivial in r["literals"] + r["confidence"]:
            if not trivial:
                by_file[rel][float(text.rstrip("uUlLzZfF")) if not text.lower().startswith("0x") else text].append(
                    line)
        for rel in sorted(by_file):
            for value, lines in sorted(by_file[rel].items(), key=lambda kv: str(kv[0])):
                if len(lines) >= 2:
                    print(f"{rel}  {value:g}  lines {', '.join(str(x) for x in sorted(lines))}")
        return

    fns = sorted(r["functions"], key=lambda x: -x[3])
    long_fns = [f for f in fns if f[3] > LONG]
    print(f"src/analysis: {len(fns)} functions; {len(long_fns)} over {LONG} lines, "
          f"{sum(1 for f in fns if f[3] > VERY_LONG)} over {VERY_LONG}")
    for rel, name, first, length in long_fns:
        print(f"  {length:4d}  {rel}:{first}  {name}")
    lits = r["literals"]
    plain = [x for x in lits if not x[3]]
    used = sorted({x[2] for x in r["named"]})
    print(f"numeric literals in conditions: {len(lits)} ({len(plain)} other than 0 and 1) "
          f"in {len({(x[0], x[1]) for x in plain})} lines")
    print(f"named thresholds in conditions: {len(r['named'])} uses of {len(used)} names "
          f"({len(r['names'])} numeric names declared in src/analysis)")
    conf = [x for x in r["confidence"] if not x[3]]
    conf_lines = len({(x[0], x[1]) for x in conf})
    by_literal = sum(1 for c in r["caps"] if c[2])
    print(f"confidence literals: {len(conf)} other than 0 and 1, in {conf_lines} lines; "
          f"caps std::min(confidence, ...): {len(r['caps'])}, {by_literal} of them by a literal")

if __name__ == "__main__":
    sys.exit(main())
