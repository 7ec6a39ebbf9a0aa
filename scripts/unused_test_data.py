#!/usr/bin/env python3
"""Lists the files under tests/data that no test reads and no document cites.

A file is read by a test when the code of a test source (tests/ outside
tests/data, the CMake files, fuzz/; its comments left out) names it:
  - by its path below tests/data ("h200/texture_first.json"), or
  - by its file name as a string ("latency_mesa25_index.json" or
    "/vulkan_run_times_all_built_ahead.json") in a source that also names
    its folder ("lavapipe_xeon/" or "h200"), for paths built in a loop, or
  - through a folder above it that the source takes whole, joined as a
    filesystem path (kSysfsTrees / "amdgpu_navi21") or globbed
    ("sysfs/*"): every file below that folder counts.
A file is cited when docs/ (any depth), README.md, bench/ or a comment in
src/ or tests/ (the evidence a rule or an assertion quotes) names it by its
path below tests/data (in Markdown, brace lists written out:
"{h100,h200}/x.json" names both), or by its file name as a word in a text
that also names its folder. tests/data/README.md gives each file's command.

Walks over all of tests/data (the finding catalogue's test, the fuzz
corpus's seeds) read whatever is there and pass with any subset, so they
make no file used. tests/data/README.md, the folder's index, is not listed.

Usage: scripts/unused_test_data.py [--why] [--size] [--check]
  --why    also lists each used file with the source that reads or cites it
  --size   ends with the count and size of used and unused files (stderr)
  --check  exits 1 when any file is unused (the test TestData.EveryFileIsUsed)
Otherwise exits 0; the list is the output.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
SOURCE_EXT = (".cpp", ".hpp", ".h", ".cmake", ".txt", ".sh", ".py")


def texts(paths):
    out = {}
    for top in paths:
        full = os.path.join(ROOT, top)
        if os.path.isfile(full):
            out[top] = open(full, encoding="utf-8", errors="replace").read()
            continue
        for dirpath, _, names in os.walk(full):
            if os.path.commonpath([dirpath, DATA]) == DATA:
                continue
            for n in names:
                p = os.path.join(dirpath, n)
                rel = os.path.relpath(p, ROOT)
                if top == "bench" or rel.endswith(SOURCE_EXT) or rel.endswith(".md") and top == "docs":
                    out[rel] = open(p, encoding="utf-8", errors="replace").read()
    return out


# C and C++ comments and the literals they may hide in: a raw string, a
# string, a character (a quote after a word character is a digit separator).
C_TOKENS = re.compile(r"""//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|(?<!\w)'(?:\\.|[^'\\\n])*'""",
                      re.S)


def strip_comments(path, text):
    """`text` without its comments: a test that names a file in a comment
    cites it as evidence but does not read it. C and C++ comments outside
    string literals; '#' comments in the others."""
    if not path.endswith((".cpp", ".hpp", ".h")):
        return "\n".join(re.sub(r"(^|\s)#.*", "", line) for line in text.splitlines())
    return C_TOKENS.sub(lambda m: "" if m.group(0).startswith("/") else m.group(0), text)


def expand_braces(text):
    """`text` with each brace list in a path ("{h100,h200}/x.json") also
    written out in every alternative, so that a citation of several files
    names each."""
    extra = []
    for token in re.findall(r"[\w./-]*\{[\w.,-]+\}[\w./{},-]*", text):
        words = [""]
        for literal, options in re.findall(r"([^{}]*)(?:\{([^{}]*)\})?", token):
            words = [w + literal + o for w in words for o in (options.split(",") if options else [""])]
        extra += words
    return text + "\n" + "\n".join(extra)


def names_folder(text, folder):
    """The source mentions `folder` (a path below tests/data) as a folder."""
    return (folder + "/") in text or f'"{folder}"' in text


def names_file(text, rel, prose=False):
    """`text` names tests/data/`rel`: by its path, or by its file name (in
    code a string literal of its own, in prose a word) beside its folder."""
    if rel in text:
        return True
    folder, name = os.path.split(rel)
    if prose:
        pattern = r"(?<![\w./-])" + re.escape(name) + r"(?![\w-])"
    else:
        pattern = r'"/?' + re.escape(name) + '"'
    return bool(re.search(pattern, text)) and names_folder(text, folder)


def takes_folder_whole(text, folder):
    last = re.escape(folder.split("/")[-1])
    return bool(re.search(r'/\s*"' + last + '"', text) or re.search(re.escape(folder) + r"/\*", text))


def token_index(texts_by_source):
    """Each word of the sources ([\\w.-]+) to the sources holding it, in
    their order: a file name is looked for only in the sources that hold it
    as a word."""
    index = {}
    for src, text in texts_by_source.items():
        for token in set(re.findall(r"[\w.-]+", text)):
            index.setdefault(token, []).append(src)
    return index


def main():
    why = "--why" in sys.argv
    size = "--size" in sys.argv
    tests = {src: strip_comments(src, text) for src, text in texts(["tests", "CMakeLists.txt", "fuzz"]).items()}
    docs = {src: expand_braces(text) if src.endswith(".md") else text
            for src, text in texts(["docs", "README.md", "bench", "src", "tests"]).items()}
    test_words = token_index(tests)
    order = {src: i for i, src in enumerate(tests)}
    files = []
    for dirpath, _, names in os.walk(DATA):
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), DATA)
            if rel != "README.md":
                files.append(rel)
    taken_whole = {}  # folder -> the first test source that takes it whole, or None
    used, unused = [], []
    for rel in sorted(files):
        parts = rel.split("/")
        name = parts[-1]
        folders = ["/".join(parts[:i]) for i in range(1, len(parts))]
        for f in folders:
            if f not in taken_whole:
                taken_whole[f] = next((src for src, text in tests.items() if takes_folder_whole(text, f)), None)
        reading = [src for src in test_words.get(name, []) if names_file(tests[src], rel)]
        reading += [taken_whole[f] for f in folders if taken_whole[f]]
        reason = None
        if reading:
            src = min(reading, key=order.get)
            reason = f"read by {src}" + ("" if src in test_words.get(name, []) and
                                         names_file(tests[src], rel) else " (its folder whole)")
        else:
            src = next((src for src, text in docs.items() if name in text and names_file(text, rel, prose=True)), None)
            if src:
                reason = f"cited by {src}"
        (used if reason else unused).append((rel, reason))
    for rel, reason in used if why else []:
        print(f"used    tests/data/{rel}: {reason}")
    for rel, _ in unused:
        print(f"tests/data/{rel}")
    if size:
        mb = lambda fs: sum(os.path.getsize(os.path.join(DATA, r)) for r, _ in fs) / 1e6
        print(f"used: {len(used)} files, {mb(used):.1f} MB; unused: {len(unused)} files, {mb(unused):.1f} MB",
              file=sys.stderr)
    if "--check" in sys.argv and unused:
        print(f"{len(unused)} files under tests/data are read by no test and cited by no document: "
              "use them, cite them with the command that made them, or remove them", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
