#!/usr/bin/env python3
"""The dependency check of `make test`: licences, wildcards and sources (deny.toml).

    scripts/check-deps.py [deny.toml]

Reads `cargo metadata` for both builds (the server and the browser half: features
ssr + hydrate, no default features) and fails, naming each offender, when
- a package's licence expression is not satisfied by the licences deny.toml allows
  (SPDX: `A OR B` needs one of them allowed, `A AND B` both, `A WITH E` is allowed as
  written; the old `A/B` reads as `A OR B`); a package with no `license` field fails
  unless deny.toml's `[licenses] clarify` names its licence;
- a manifest of this project asks for a dependency by wildcard (`*`);
- a package comes from anywhere but crates.io (or this checkout).

deny.toml stays cargo-deny's format, so `cargo deny check licenses bans sources` reads
the same rules where cargo-deny is installed. This script needs no network and builds
nothing: the same check, without the seven minutes cargo-deny's build cost a new machine.
"""

import json
import re
import subprocess
import sys
import tomllib

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"


def tokens(expression):
    return re.findall(r"\(|\)|[^\s()]+", expression.replace("/", " OR "))


def satisfied(expression, allowed):
    """Whether the SPDX expression is met by the allowed licences (AND binds tighter)."""
    words = tokens(expression)
    at = 0

    def primary():
        nonlocal at
        if at >= len(words):
            raise ValueError(f"unfinished licence expression: {expression!r}")
        word = words[at]
        at += 1
        if word == "(":
            value = disjunction()
            if at >= len(words) or words[at] != ")":
                raise ValueError(f"unbalanced licence expression: {expression!r}")
            at += 1
            return value
        if at < len(words) and words[at] == "WITH":
            if at + 1 >= len(words):
                raise ValueError(f"WITH without an exception: {expression!r}")
            word = f"{word} WITH {words[at + 1]}"
            at += 2
        return word.removesuffix("+") in allowed or word in allowed

    def conjunction():
        nonlocal at
        value = primary()
        while at < len(words) and words[at] == "AND":
            at += 1
            value = primary() and value
        return value

    def disjunction():
        nonlocal at
        value = conjunction()
        while at < len(words) and words[at] == "OR":
            at += 1
            value = conjunction() or value
        return value

    value = disjunction()
    if at != len(words):
        raise ValueError(f"unreadable licence expression: {expression!r}")
    return value


def check_the_reader():
    """The expression reader on known cases, at every run (a wrong reader passes all)."""
    allowed = {"MIT", "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "Unicode-3.0"}
    cases = {
        "MIT": True,
        "GPL-3.0": False,
        "MIT OR GPL-3.0": True,
        "GPL-3.0 OR MIT": True,
        "MIT/Apache-2.0": True,
        "GPL-2.0 AND MIT": False,
        "(MIT OR Apache-2.0) AND Unicode-3.0": True,
        "(MIT OR Apache-2.0) AND BSD-3-Clause": False,
        "Apache-2.0 WITH LLVM-exception OR GPL-3.0": True,
        "GPL-3.0 WITH LLVM-exception": False,
    }
    for expression, expected in cases.items():
        assert satisfied(expression, allowed) == expected, expression
    for unreadable in ["MIT OR", "(MIT", "MIT)"]:
        try:
            satisfied(unreadable, allowed)
        except ValueError:
            continue
        raise AssertionError(f"{unreadable!r} was read")


def main():
    check_the_reader()
    config_path = sys.argv[1] if len(sys.argv) > 1 else "deny.toml"
    with open(config_path, "rb") as file:
        config = tomllib.load(file)
    allowed = set(config["licenses"]["allow"])
    # cargo-deny's clarify entries: [{name, expression, license-files}].
    clarified = {c["name"]: c["expression"] for c in config["licenses"].get("clarify", [])}
    metadata = json.loads(
        subprocess.run(
            [
                "cargo",
                "metadata",
                "--locked",
                "--format-version",
                "1",
                "--no-default-features",
                "--features",
                "ssr,hydrate",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    # Only what the resolved graph of these features holds.
    resolved = {node["id"] for node in metadata["resolve"]["nodes"]}
    packages = [p for p in metadata["packages"] if p["id"] in resolved]
    members = set(metadata["workspace_members"])
    problems = []
    for package in packages:
        name = f"{package['name']} {package['version']}"
        licence = package.get("license") or clarified.get(package["name"])
        if not licence:
            problems.append(f"{name}: no licence field (clarify it in {config_path})")
        else:
            try:
                if not satisfied(licence, allowed):
                    problems.append(f"{name}: licence {licence!r} is not allowed")
            except ValueError as error:
                problems.append(f"{name}: {error}")
        source = package.get("source")
        if package["id"] in members:
            if source is not None:
                problems.append(f"{name}: a workspace member from {source}")
            for dependency in package["dependencies"]:
                if dependency["req"] == "*" and dependency.get("path") is None:
                    problems.append(f"{name}: depends on {dependency['name']} by wildcard")
        elif source != CRATES_IO:
            problems.append(f"{name}: from {source or 'a path'}, not crates.io")
    for problem in problems:
        print(f"deps: {problem}", file=sys.stderr)
    if problems:
        sys.exit(f"deps: {len(problems)} problems in {len(packages)} packages")
    print(f"deps: {len(packages)} packages: licences, wildcards and sources ok")


if __name__ == "__main__":
    main()
