#!/usr/bin/env python3
"""How well `cited extract` reads PDFs: real PDFs printed by Chromium from the project's own
docs (English and Chinese, with Debian's Noto CJK fonts), each compared with the text pandoc
reads from the same Markdown.

    scripts/pdf-quality.py CITED_BIN [CORPUS_DIR]

Builds the corpus once (pandoc: Markdown -> HTML; chromium --headless --print-to-pdf), then
for each PDF prints the recall of the truth's tokens (Latin words lowercased, Han characters)
in the extracted text, the precision of the extracted tokens, and the order kept (the
longest common subsequence of tokens over the truth's), then the totals over all files.
"""

import collections
import json
import os
import re
import subprocess
import sys

BIN = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "target", "pdf-corpus")
DOCS = ["README.md", "docs/faq.zh-CN.md", "docs/faq.md", "docs/cli.md", "docs/api.md",
        "docs/deploy.md", "docs/local-models.md", "docs/development.md", "docs/eval.md",
        "docs/mcp.md"]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def tokens(text):
    return [t.lower() for t in re.findall(r"[A-Za-z0-9]+|[\u4e00-\u9fff]", text)]


def lcs(a, b):
    """Length of the longest common subsequence (token lists), in O(len(a) * len(b)) bits."""
    # Bit-parallel LCS (Allison-Dix / Hyyro).
    positions = collections.defaultdict(int)
    for i, t in enumerate(a):
        positions[t] |= 1 << i
    row = 0
    for t in b:
        match = positions.get(t, 0)
        x = match | row
        y = (row << 1) | 1
        row = x & ~(x - y)
    return bin(row).count("1")


os.makedirs(CORPUS, exist_ok=True)
totals = collections.Counter()
for doc in DOCS:
    source = os.path.join(ROOT, doc)
    if not os.path.exists(source):
        continue
    base = os.path.join(CORPUS, doc.replace("/", "_").replace(".md", ""))
    pdf, html = base + ".pdf", base + ".html"
    if not os.path.exists(pdf):
        subprocess.run(["pandoc", source, "-s", "--metadata", "title=" + doc, "-o", html], check=True)
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                        f"--print-to-pdf={pdf}", html], check=True, capture_output=True)
    truth = subprocess.run(["pandoc", source, "-t", "plain", "--wrap=none"], check=True,
                           capture_output=True, text=True).stdout
    with open(pdf, "rb") as f:
        out = subprocess.run([BIN, "extract", "--name", "x.pdf"], stdin=f, capture_output=True)
    text = ""
    for line in out.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("{"):
            reply = json.loads(line)
            if "Ok" in reply:
                text = "\n".join(p["text"] for p in reply["Ok"])
            else:
                text = ""
                print(f"{doc}: {reply}")
    t, e = tokens(truth), tokens(text)
    common = sum((collections.Counter(t) & collections.Counter(e)).values())
    ordered = lcs(t, e)
    totals.update(truth=len(t), extracted=len(e), common=common, ordered=ordered)
    print(f"{doc:28} tokens {len(t):6}  recall {common / max(len(t), 1):6.1%}  "
          f"precision {common / max(len(e), 1):6.1%}  order {ordered / max(len(t), 1):6.1%}")
print(f"{'all':28} tokens {totals['truth']:6}  recall {totals['common'] / totals['truth']:6.1%}  "
      f"precision {totals['common'] / max(totals['extracted'], 1):6.1%}  "
      f"order {totals['ordered'] / totals['truth']:6.1%}")
