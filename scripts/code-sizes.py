#!/usr/bin/env python3
"""Sizes the codebase issue asks about: the answer path's files, production functions over
120 lines, and the test suite's lines. Usage: scripts/code-sizes.py [ROOT]"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
src = os.path.join(root, "src")


def blank(code):
    """Strings, chars and comments blanked, so braces count."""
    out, i, n = [], 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "r" and re.match(r'r#*"', code[i:]) and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            m = re.match(r'r(#*)"', code[i:])
            close = '"' + m.group(1)
            j = code.find(close, i + len(m.group(0)))
            seg = code[i:(n if j < 0 else j + len(close))]
            out.append("\n" * seg.count("\n"))
            i = n if j < 0 else j + len(close)
        elif c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            out.append("\n" * code[i:j].count("\n"))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", code[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", code[i:]).group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def closing(code, brace):
    """The index of the brace that closes the one at `brace`."""
    depth, j = 0, brace
    while j < len(code):
        depth += {"{": 1, "}": -1}.get(code[j], 0)
        if depth == 0:
            return j
        j += 1
    return j


def production(path, text):
    """The file without its `#[cfg(test)] mod … { … }` blocks."""
    code = blank(text)
    while True:
        at = code.find("#[cfg(test)]")
        if at < 0:
            return code
        brace = code.find("{", at)
        semi = code.find(";", at)
        if brace < 0 or (0 <= semi < brace):
            code = code[:at] + code[at + 12:]
            continue
        j = closing(code, brace)
        code = code[:at] + "\n" * code[at:j + 1].count("\n") + code[j + 1:]


def test_lines(text):
    """Lines inside `#[cfg(test)] mod … { … }` blocks."""
    code, lines = blank(text), 0
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        brace, semi = code.find("{", m.end()), code.find(";", m.end())
        if brace < 0 or (0 <= semi < brace):
            continue
        j = closing(code, brace)
        lines += code[m.start():j + 1].count("\n") + 1
    return lines


def outside_markup(body):
    """The non-blank lines of a function body outside its `view!` macros."""
    out, k = "", 0
    while True:
        m = body.find("view!", k)
        if m < 0:
            out += body[k:]
            break
        out += body[k:m]
        brace = body.find("{", m)
        if brace < 0:
            break
        k = closing(body, brace) + 1
    return sum(1 for line in out.splitlines() if line.strip())


def functions(code):
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", code):
        brace = code.find("{", m.end())
        semi = code.find(";", m.end())
        if brace < 0 or (0 <= semi < brace):
            continue
        j = closing(code, brace)
        start = code[:m.start()].count("\n") + 1
        yield m.group(1), start, code[m.start():j].count("\n") + 1, outside_markup(code[brace:j])


files = []
for d, _, names in os.walk(src):
    for name in names:
        if name.endswith(".rs"):
            files.append(os.path.join(d, name))
files.sort()
print("== the answer path (production lines, test modules left out)")
for path in files:
    rel = os.path.relpath(path, root)
    if rel.startswith(("src/ssr/pipeline", "src/ssr/llm/reply", "src/ssr/answer")):
        text = open(path, encoding="utf-8").read()
        print(f"{len(text.splitlines()) - test_lines(text):6}  {rel}")
print("== production functions over 120 lines (lines; non-blank lines outside view! markup)")
long = []
for path in files:
    rel = os.path.relpath(path, root)
    if "/tests/" in rel or rel.endswith("/tests.rs"):
        continue
    code = production(path, open(path, encoding="utf-8").read())
    for name, line, length, logic in functions(code):
        if length > 120:
            long.append((length, logic, f"{rel}:{line} {name}"))
for length, logic, where in sorted(long, reverse=True):
    print(f"{length:6}  {logic:6}  {where}")
print(f"{len(long)} functions; {sum(1 for _, logic, _ in long if logic > 120)} over 120 lines outside view! markup")
print("== test lines")
tests = 0
for path in files:
    rel = os.path.relpath(path, root)
    text = open(path, encoding="utf-8").read()
    if "/tests/" in rel or rel.endswith("/tests.rs"):
        tests += len(text.splitlines())
    else:
        tests += test_lines(text)
for d in ["tests", "end2end/tests"]:
    for dd, _, names in os.walk(os.path.join(root, d)):
        for name in names:
            if name.endswith((".rs", ".ts")):
                tests += len(open(os.path.join(dd, name), encoding="utf-8").read().splitlines())
print(f"{tests} lines of tests (src/tests, test modules, tests/, end2end/tests)")
