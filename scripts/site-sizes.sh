#!/usr/bin/env bash
# What a first visit transfers: the sealed site's wasm, JS and CSS as stored, gzipped and
# brotli'd (what the server sends a browser that accepts br), and their totals.
#
#   scripts/site-sizes.sh [SITE_ROOT]     (default target/site; `make site-release` first)
set -euo pipefail
pkg=${1:-target/site}/pkg
name=$(cat "$pkg/NAME")
size() { stat -c %s "$1"; }
printf '%-6s %12s %12s %12s\n' asset raw gzip brotli
raw_total=0 gz_total=0 br_total=0
for ext in wasm js css; do
    raw=$(size "$pkg/$name.$ext")
    gz=$(size "$pkg/$name.$ext.gz")
    br=$(size "$pkg/$name.$ext.br")
    printf '%-6s %12d %12d %12d\n' "$ext" "$raw" "$gz" "$br"
    raw_total=$((raw_total + raw)) gz_total=$((gz_total + gz)) br_total=$((br_total + br))
done
printf '%-6s %12d %12d %12d\n' total "$raw_total" "$gz_total" "$br_total"
