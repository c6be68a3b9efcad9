#!/usr/bin/env bash
# Seals the built site's pkg/ for serving: the wasm, its JS glue and the stylesheet get a
# content hash in their names (cited.<hash>.{js,wasm,css}, so browsers may cache them for a
# year), the base name goes into pkg/NAME for the server, and each file gets precompressed
# .br and .gz siblings that the server sends by Accept-Encoding.
#
#   scripts/seal-site.sh PKG_DIR [BROTLI_QUALITY]   (11 for release; lower is faster)
set -euo pipefail
pkg=$1
quality=${2:-11}
hash=$(cat "$pkg/cited.js" "$pkg/cited.wasm" "$pkg/cited.css" | sha256sum | cut -c1-16)
name="cited.$hash"
for ext in js wasm css; do
    mv -f "$pkg/cited.$ext" "$pkg/$name.$ext"
    gzip -9 -k -f "$pkg/$name.$ext"
    brotli -q "$quality" -k -f "$pkg/$name.$ext"
done
printf '%s\n' "$name" >"$pkg/NAME"
