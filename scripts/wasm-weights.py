#!/usr/bin/env python3
"""Where a wasm file's bytes go: code per crate (from its `name` section), data, the rest.

    scripts/wasm-weights.py FILE.wasm [TOP]

The release site strips the `name` section, so analyse a build that keeps it:
`make wasm-weights` builds the release wasm and runs wasm-bindgen without stripping.
Each function's body size counts for the crate its name starts with (for `<A as B>::f`,
the crate of A); the brotli column compresses each crate's bodies together, which is
close to (not exactly) what the crate adds to the compressed file.
"""
import collections
import subprocess
import sys


def leb(data, pos):
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, pos


def name_bytes(data, pos):
    length, pos = leb(data, pos)
    return data[pos:pos + length], pos + length


def sections(data):
    if data[:4] != b"\0asm":
        sys.exit("not a wasm file")
    pos = 8
    while pos < len(data):
        sid = data[pos]
        size, start = leb(data, pos + 1)
        yield sid, start, start + size
        pos = start + size


def crate_of(name):
    name = name.lstrip("<&*").removeprefix("mut ").removeprefix("dyn ")
    for sep in ("::", " ", "<", ">", "("):
        name = name.split(sep)[0]
    return name or "?"


def brotli_size(blob):
    try:
        out = subprocess.run(["brotli", "-c", "-q", "11"], input=blob, capture_output=True, check=True)
        return len(out.stdout)
    except (OSError, subprocess.CalledProcessError):
        return 0


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    data = open(path, "rb").read()
    imported = 0
    bodies = []
    names = {}
    totals = collections.Counter()
    for sid, start, end in sections(data):
        if sid == 2:  # imports: function imports take the first indices
            count, pos = leb(data, start)
            for _ in range(count):
                _, pos = name_bytes(data, pos)
                _, pos = name_bytes(data, pos)
                kind = data[pos]
                pos += 1
                if kind == 0:
                    _, pos = leb(data, pos)
                    imported += 1
                elif kind == 1:
                    pos += 1
                    flags, pos = leb(data, pos + 0)
                    _, pos = leb(data, pos)
                    if flags & 1:
                        _, pos = leb(data, pos)
                elif kind == 2:
                    flags, pos = leb(data, pos)
                    _, pos = leb(data, pos)
                    if flags & 1:
                        _, pos = leb(data, pos)
                elif kind == 3:
                    pos += 2
                else:
                    pos += 1
                    _, pos = leb(data, pos)
        if sid == 10:
            count, pos = leb(data, start)
            for _ in range(count):
                size, body = leb(data, pos)
                bodies.append((body, body + size))
                pos = body + size
        if sid == 0:
            label, pos = name_bytes(data, start)
            totals[f"custom section {label.decode(errors='replace')}"] += end - start
            if label == b"name":
                while pos < end:
                    sub = data[pos]
                    size, sub_start = leb(data, pos + 1)
                    if sub == 1:
                        count, p = leb(data, sub_start)
                        for _ in range(count):
                            idx, p = leb(data, p)
                            raw, p = name_bytes(data, p)
                            names[idx] = raw.decode(errors="replace")
                    pos = sub_start + size
            continue
        totals[{10: "code", 11: "data"}.get(sid, "other sections")] += end - start
    by_crate = collections.defaultdict(list)
    for i, (start, end) in enumerate(bodies):
        by_crate[crate_of(names.get(imported + i, "?"))].append(data[start:end])
    print(f"{path}: {len(data)} bytes")
    for label, size in totals.most_common():
        print(f"  {label:<28} {size:>9}")
    if not names:
        print("no name section: build with names to see crates")
        return
    rows = sorted(by_crate.items(), key=lambda item: -sum(map(len, item[1])))
    print(f"\n  {'crate':<28} {'functions':>9} {'bytes':>9} {'brotli':>9}")
    for crate, blobs in rows[:top]:
        print(f"  {crate:<28} {len(blobs):>9} {sum(map(len, blobs)):>9} {brotli_size(b''.join(blobs)):>9}")


if __name__ == "__main__":
    main()
