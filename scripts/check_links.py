#!/usr/bin/env python3
"""Checks that the documentation's relative links lead somewhere: no network, stdlib only.

    python3 scripts/check_links.py              # the markdown and the rustdoc HTML
    python3 scripts/check_links.py --no-html    # the markdown only (no `cargo doc` needed)

1. Markdown: README.md, CONTRIBUTING.md, ARCHITECTURE.md, STYLE.md, each crate's README.md, the crate's front page and the guide's chapters
   (gpu-runtime/src/front_page.md, gpu-runtime/src/guide/*.md) and the doc comments of
   examples/*.rs and examples/*/*.rs. Every relative link (`[text](path#anchor)`, `[label]: path`) must name an
   existing file or directory, relative to the file it is in, and an `#anchor` must be a heading
   of the markdown file it points to (or of the same file), by GitHub's rules for heading ids.
   Links with a scheme (https:, mailto:) are not followed. In the files rustdoc renders (the
   front page, the chapters), a link whose target is a Rust path (`crate::guide::arrays`,
   `crate::Context#method.alloc`) is an intra-doc link, which `cargo doc` with
   `-D warnings` checks; it is left to rustdoc here.

2. HTML: the pages `cargo doc` wrote for the workspace's crates (target/doc/gpu_runtime/**
   and the other crates' folders beside it). Every relative `href` must name a file that exists,
   and its `#fragment` an `id` in that file. Links into the folder of a crate outside the
   workspace are not checked: `cargo doc --no-deps` does not write those pages (docs.rs does),
   so they are counted and reported, not failed.

Exit status 1 when a link is dead, with one line per dead link: the file, the line (markdown)
and the target.
"""

import argparse
import glob
import os
import re
import sys
from urllib.parse import unquote

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# The workspace's crates, as rustdoc names their folders under target/doc.
WORKSPACE_CRATES = ["gpu_runtime", "gpu_macros", "gpu_macros_core", "gpu_cuda_source"]

# Folders under target/doc that rustdoc writes for the crates it documents, beside theirs.
RUSTDOC_SHARED = {"static.files", "src", "search.index", "trait.impl", "type.impl", "help.html",
                  "settings.html", "search.desc", "crates.js", "search-index.js", "src-files.js"}

SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(?!:)")
RUST_PATH = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*)(?:::[A-Za-z_][A-Za-z0-9_]*)*(?:#[\w.-]*)?$")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def markdown_lines(text):
    """(line number, line) of the text outside fenced code blocks and HTML comments, with inline
    code spans blanked (a link inside backticks is code, not a link)."""
    out, fenced, fence_mark, in_comment = [], False, None, False
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m and (not fenced or m.group(1) == fence_mark):
            fenced, fence_mark = not fenced, m.group(1)
            continue
        if fenced:
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
                line = line.split("-->", 1)[1]
            else:
                continue
        line = re.sub(r"<!--.*?-->", "", line)
        if "<!--" in line:
            line, in_comment = line.split("<!--", 1)[0], True
        line = re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)
        out.append((number, line))
    return out


def github_slug(heading):
    """The id GitHub gives a heading: the text without its markdown, lower-cased, with every
    character that is not a letter, digit, space, hyphen or underscore removed and spaces made
    hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    out = []
    for c in text.lower():
        if c.isalnum() or c in "-_":
            out.append(c)
        elif c == " ":
            out.append("-")
    return "".join(out)


def anchors_of(text):
    """The ids of a markdown text's headings; a repeated one gets -1, -2, ... as on GitHub."""
    seen, ids = {}, set()
    fenced, fence_mark = False, None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if m and (not fenced or m.group(1) == fence_mark):
            fenced, fence_mark = not fenced, m.group(1)
            continue
        if fenced:
            continue
        h = HEADING.match(line)
        if not h:
            continue
        slug = github_slug(h.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


class Markdown:
    """The markdown sources, read once each (a link's anchor may point into another)."""

    def __init__(self):
        self.texts = {}

    def text(self, path):
        if path not in self.texts:
            with open(path, encoding="utf-8") as f:
                self.texts[path] = f.read()
        return self.texts[path]


def doc_comment_markdown(path):
    """The doc comments (`//!`, `///`) of a Rust file as markdown, the other lines left empty so
    that line numbers stay the file's."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            m = re.match(r"^\s*//[!/] ?(.*)$", line)
            lines.append(m.group(1) if m and not line.lstrip().startswith("////") else "")
    return "\n".join(lines)


def check_markdown(problems, stats):
    md = Markdown()
    rendered_by_rustdoc = [os.path.join(ROOT, "gpu-runtime", "src", "front_page.md")] + sorted(
        glob.glob(os.path.join(ROOT, "gpu-runtime", "src", "guide", "*.md")))
    sources = [(os.path.join(ROOT, name), False) for name in ("README.md", "CONTRIBUTING.md", "ARCHITECTURE.md", "STYLE.md")]
    sources += [(p, False) for p in sorted(glob.glob(os.path.join(ROOT, "*", "README.md")))]
    sources += [(p, True) for p in rendered_by_rustdoc]
    sources += [(p, False) for p in sorted(glob.glob(os.path.join(ROOT, "examples", "*.rs"))
                                           + glob.glob(os.path.join(ROOT, "examples", "*", "*.rs")))]
    for path, rustdoc in sources:
        if not os.path.exists(path):
            problems.append(f"{os.path.relpath(path, ROOT)}: missing (a source this check reads)")
            continue
        text = doc_comment_markdown(path) if path.endswith(".rs") else md.text(path)
        own_anchors = None
        for number, line in markdown_lines(text):
            targets = [m.group(1) for m in INLINE_LINK.finditer(line)]
            d = REF_DEF.match(line)
            if d:
                targets.append(d.group(1))
            for target in targets:
                where = f"{os.path.relpath(path, ROOT)}:{number}"
                if not target or SCHEME.match(target):
                    stats["external"] += 1
                    continue
                file_part, _, anchor = target.partition("#")
                file_part = unquote(file_part)
                if file_part:
                    dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                    if not os.path.exists(dest):
                        if rustdoc and RUST_PATH.match(target):
                            stats["intra-doc"] += 1
                            continue
                        problems.append(f"{where}: {target}: no such file")
                        continue
                else:
                    dest = path
                stats["relative"] += 1
                if not anchor:
                    continue
                if dest.endswith(".md") and os.path.isfile(dest):
                    if dest == path and not path.endswith(".rs"):
                        if own_anchors is None:
                            own_anchors = anchors_of(text)
                        anchors = own_anchors
                    else:
                        anchors = anchors_of(md.text(dest))
                    if anchor not in anchors:
                        problems.append(f"{where}: {target}: no heading with the id #{anchor}")
                elif dest == path:
                    problems.append(f"{where}: {target}: an anchor in a file that has no headings")


# Sections of ndarray's `ArrayBase` page that its methods' docs link to as `#slicing`: rustdoc
# copies those docs, links and all, into the "Methods from Deref" of our types that deref to an
# ndarray view (`RegisteredArray`, `PinnedArray`, ...), where no such section exists. The text is
# ndarray's, so the dead fragment is not ours to fix; any other dead fragment fails.
NDARRAY_DEREF_FRAGMENTS = {"slicing", "subviews"}

HREF = re.compile(r"""\bhref\s*=\s*"([^"]*)\"""")
ID = re.compile(r"""\b(?:id|name)\s*=\s*"([^"]*)\"""")


def check_html(doc_dir, problems, stats):
    if not os.path.isdir(os.path.join(doc_dir, "gpu_runtime")):
        problems.append(f"{os.path.relpath(doc_dir, ROOT)}/gpu_runtime: missing; run `cargo doc --workspace --no-deps` first")
        return
    ids_cache = {}

    def ids_of(path):
        if path not in ids_cache:
            with open(path, encoding="utf-8", errors="replace") as f:
                ids_cache[path] = set(ID.findall(f.read()))
        return ids_cache[path]

    pages = []
    for crate in WORKSPACE_CRATES:
        pages += glob.glob(os.path.join(doc_dir, crate, "**", "*.html"), recursive=True)
    local_tops = set(WORKSPACE_CRATES) | RUSTDOC_SHARED
    for page in sorted(pages):
        with open(page, encoding="utf-8", errors="replace") as f:
            html = f.read()
        stats["pages"] += 1
        for href in HREF.findall(html):
            href = href.replace("&amp;", "&")
            # `${...}`: a template in the page's inline script, not a link.
            if not href or SCHEME.match(href) or href.startswith("/") or "${" in href:
                continue
            file_part, _, fragment = href.partition("#")
            file_part = unquote(file_part.split("?", 1)[0])
            dest = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) if file_part else page
            rel = os.path.relpath(dest, doc_dir)
            top = rel.split(os.sep, 1)[0]
            if rel.startswith(".."):
                problems.append(f"{os.path.relpath(page, ROOT)}: {href}: leads out of {os.path.relpath(doc_dir, ROOT)}")
                continue
            if top not in local_tops:
                stats["other crates"] += 1
                continue
            if not os.path.exists(dest):
                problems.append(f"{os.path.relpath(page, ROOT)}: {href}: no such file")
                continue
            stats["hrefs"] += 1
            # Source pages name lines and line ranges (#12, #12-30), which their script
            # highlights: not ids.
            if not fragment or not dest.endswith(".html") or re.fullmatch(r"\d+(-\d+)?", fragment):
                continue
            # rustdoc writes some ids percent-encoded (`impl-From%3CT%3E-for-T`) and links to
            # them as written; a browser matches either form.
            if fragment in NDARRAY_DEREF_FRAGMENTS and dest == page:
                stats["ndarray"] += 1
                continue
            if fragment not in ids_of(dest) and unquote(fragment) not in ids_of(dest):
                problems.append(f"{os.path.relpath(page, ROOT)}: {href}: no id #{fragment} in {rel}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-html", action="store_true", help="check the markdown only")
    parser.add_argument("--doc-dir", default=os.path.join(ROOT, "target", "doc"),
                        help="where cargo doc wrote its pages (default target/doc)")
    args = parser.parse_args()
    problems = []
    stats = {"relative": 0, "intra-doc": 0, "external": 0, "pages": 0, "hrefs": 0, "other crates": 0,
             "ndarray": 0}
    check_markdown(problems, stats)
    if not args.no_html:
        check_html(os.path.abspath(args.doc_dir), problems, stats)
    for p in problems:
        print(p)
    summary = (f"check_links: markdown: {stats['relative']} relative links resolved "
               f"({stats['intra-doc']} intra-doc links left to rustdoc, {stats['external']} external not followed)")
    if not args.no_html:
        summary += (f"; HTML: {stats['hrefs']} relative hrefs of {stats['pages']} pages resolved "
                    f"({stats['other crates']} into crates outside the workspace not checked, "
                    f"{stats['ndarray']} fragments of ndarray's own docs left)")
    print(f"{summary}; {len(problems)} dead" if problems else summary)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
