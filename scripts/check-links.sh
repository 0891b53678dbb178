#!/usr/bin/env bash
# Documentation check: every relative Markdown link in README.md, CONTRIBUTING.md,
# ARCHITECTURE.md (when present) and docs/*.md resolves, and the README stays short.
#
# A link `[text](path)`, an image `![alt](path)` or a reference `[name]: path` whose target is
# not a URL must name a file or folder that exists (relative to the Markdown file), and a
# `#anchor` (`path.md#anchor`, or `#anchor` in the same file) must name a heading of that
# file, by GitHub's rule: the heading's text in lower case, every character that is not a
# letter, digit, space, hyphen or underscore dropped, spaces turned into hyphens, and `-1`,
# `-2`, ... after repeated headings. Links inside code (fenced blocks, `spans`) are skipped.
# Fails listing every broken link as FILE:LINE: target (why), and when README.md has more than
# 250 lines.
# Usage: scripts/check-links.sh   (python3, standard library only)
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_README_LINES=250

files=(README.md CONTRIBUTING.md)
[ -f ARCHITECTURE.md ] && files+=(ARCHITECTURE.md)
for f in docs/*.md; do [ -f "$f" ] && files+=("$f"); done

status=0
readme_lines=$(wc -l < README.md)
if [ "$readme_lines" -gt "$MAX_README_LINES" ]; then
  echo "README.md has $readme_lines lines, more than $MAX_README_LINES: move the detail to docs/"
  status=1
fi

python3 - "${files[@]}" <<'PY' || status=1
import os
import re
import sys
import unicodedata

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def text_lines(path):
    """The file's lines outside fenced code blocks, as (number, line)."""
    out = []
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if fence is None and m:
                fence = m.group(1)[0] * len(m.group(1))
                continue
            if fence is not None:
                if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                    fence = None
                continue
            out.append((n, line.rstrip("\n")))
    return out


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "-_ " or cat[0] in "LN" or cat == "Mn":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


anchors_cache = {}


def anchors(path):
    if path not in anchors_cache:
        seen = {}
        result = set()
        for _, line in text_lines(path):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            result.add(base if n == 0 else f"{base}-{n}")
        anchors_cache[path] = result
    return anchors_cache[path]


broken = []
checked = 0
for md in sys.argv[1:]:
    here = os.path.dirname(md)
    for n, line in text_lines(md):
        scan = CODE_SPAN.sub("", line)
        targets = [m.group(1) for m in INLINE_LINK.finditer(scan)]
        m = REFERENCE.match(scan)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if URL.match(target):
                continue
            checked += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, path)) if path else md
            if not os.path.exists(dest):
                broken.append(f"{md}:{n}: {target} (no file {dest})")
                continue
            if anchor and dest.endswith(".md") and os.path.isfile(dest):
                if anchor not in anchors(dest):
                    broken.append(f"{md}:{n}: {target} (no heading #{anchor} in {dest})")

if broken:
    print(f"{len(broken)} broken link(s) of {checked} checked:")
    print("\n".join(broken))
    sys.exit(1)
print(f"{checked} relative links in {len(sys.argv) - 1} files resolve")
PY

if [ "$status" = 0 ]; then
  echo "README.md: $readme_lines lines (at most $MAX_README_LINES)"
fi
exit "$status"
