#!/usr/bin/env python3
"""CC-CEDICT (cedict_ts.u8) as the compact table cited's citation checker reads: one line
per simplified headword, a tab, then the content words of its glosses (lowercased, without
parentheses, classifiers, "variant of" and "see" cross-references, and short function
words), at most 8, in the dictionary's order. A last line, headed `*names`, lists the gloss
words the dictionary only ever writes capitalised (Singapore, Eurostar, Nikon): names, not
English words. Gzipped. Usage: cedict-table.py IN OUT.gz"""
import gzip
import re
import sys

STOP = set("""a an the of to and or in on at for with as by from be is are was were one one's
sb sth etc also used esp lit fig abbr kind type sort very something someone some
sth's sb's form bound it its that this these those into onto out up off per who what
which when where how than then so such only just""".split())
SKIP = ("cl:", "variant of", "old variant of", "see ", "see also", "japanese variant",
        "surname ", "used in ", "archaic variant", "erhua variant", "korean variant",
        "taiwan pr.", "also pr.", "pr. ")
HAN = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{1,8}$")
LINE = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")


def words_of(gloss):
    gloss = re.sub(r"\([^)]*\)", " ", gloss.lower())
    if gloss.strip().startswith(SKIP):
        return []
    return [w for w in re.split(r"[^a-z0-9]+", gloss) if len(w) >= 3 and w not in STOP]


def main(src, dst):
    table = {}
    capitalised, lowercase = set(), set()
    with open(src, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = LINE.match(line)
            if not m:
                continue
            simp, glosses = m.group(2), m.group(3).split("/")
            if not HAN.match(simp):
                continue
            words = table.setdefault(simp, [])
            for gloss in glosses:
                for w in re.split(r"[^A-Za-z0-9]+", re.sub(r"\([^)]*\)", " ", gloss)):
                    if w[:1].isupper():
                        capitalised.add(w.lower())
                    elif w[:1].islower():
                        lowercase.add(w)
                for w in words_of(gloss):
                    if len(words) < 8 and w not in words:
                        words.append(w)
    rows = [f"{k}\t{' '.join(v)}\n" for k, v in table.items() if v]
    names = sorted(w for w in capitalised - lowercase if len(w) >= 3)
    rows.append(f"*names\t{' '.join(names)}\n")
    with gzip.open(dst, "wt", encoding="utf-8", compresslevel=9) as out:
        out.writelines(rows)
    print(f"{len(rows) - 1} headwords, {len(names)} names", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
