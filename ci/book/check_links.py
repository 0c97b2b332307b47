#!/usr/bin/env python3
"""Fails on any relative link in the built book that points nowhere.

    python3 ci/book/check_links.py [BOOK_DIR]     # default: target/book
    python3 ci/book/check_links.py --self-test
    python3 ci/book/check_links.py --markdown README.md ARCHITECTURE.md

It walks the HTML mdBook wrote (so it checks what readers get: `.md` links
already turned into `.html`, heading ids as mdBook made them) and, for every
`href` and `src` that is not absolute, checks that the file exists and, when
the link has a `#fragment`, that the target page has an element with that
id. A link from a page in `docs/` to a file outside it (`../crates/...`) is
broken in the book and is reported too. External links (`https:`, `mailto:`)
are not fetched: CI has no network. Exit status 1 when anything is broken,
with one line per broken link.

`--markdown FILE...` checks Markdown files that are not in the book (the
repository's README and ARCHITECTURE) the simple way: every relative
`[text](target)` must name an existing file or folder (fragments are not
checked there: GitHub makes those ids, not mdBook).
"""

import os
import re
import sys
import tempfile
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

# Pages mdBook generates around the chapters: their links are mdBook's own.
SKIPPED_PAGES = {"print.html", "toc.html", "404.html"}


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []  # (attribute, value, line)

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            elif name in ("href", "src") and tag != "script":
                self.links.append((name, value, self.getpos()[0]))


def parse(path):
    page = Page()
    with open(path, encoding="utf-8") as file:
        page.feed(file.read())
    return page


def is_external(url):
    parts = urlsplit(url)
    return bool(parts.scheme) or url.startswith("//")


def check(book_dir):
    """Returns the broken links as human-readable lines."""
    book_dir = os.path.abspath(book_dir)
    pages = {}

    def page_at(path):
        if path not in pages:
            pages[path] = parse(path)
        return pages[path]

    problems = []
    check.links = 0
    for root, _dirs, files in os.walk(book_dir):
        for name in sorted(files):
            if not name.endswith(".html"):
                continue
            path = os.path.join(root, name)
            relative = os.path.relpath(path, book_dir)
            if relative in SKIPPED_PAGES:
                continue
            for attribute, url, line in page_at(path).links:
                if not url or is_external(url):
                    continue
                parts = urlsplit(url)
                target = path
                if parts.path:
                    target = os.path.normpath(os.path.join(root, unquote(parts.path)))
                    if os.path.isdir(target):
                        target = os.path.join(target, "index.html")
                check.links += 1
                where = f"{relative}:{line}: {attribute}=\"{url}\""
                if not target.startswith(book_dir + os.sep):
                    problems.append(f"{where}: points outside the book")
                    continue
                if not os.path.isfile(target):
                    problems.append(f"{where}: no such file {os.path.relpath(target, book_dir)}")
                    continue
                fragment = unquote(parts.fragment)
                if fragment and target.endswith(".html") and fragment not in page_at(target).ids:
                    problems.append(
                        f"{where}: no id \"{fragment}\" in {os.path.relpath(target, book_dir)}"
                    )
    return sorted(problems)


MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def check_markdown(paths):
    """Relative links of Markdown files outside the book: the file must exist."""
    problems = []
    for path in paths:
        in_code = False
        with open(path, encoding="utf-8") as file:
            for number, line in enumerate(file, 1):
                if line.lstrip().startswith("```"):
                    in_code = not in_code
                if in_code:
                    continue
                for url in MARKDOWN_LINK.findall(line):
                    if is_external(url) or url.startswith("#"):
                        continue
                    target = os.path.join(os.path.dirname(path), unquote(urlsplit(url).path))
                    if not os.path.exists(target):
                        problems.append(f"{path}:{number}: ({url}): no such file {os.path.normpath(target)}")
    return problems


def self_test():
    """The checker must find what is broken and nothing else."""
    pages = {
        "index.html": """
            <h1 id="top">Top</h1>
            <a href="#top">same page</a>
            <a href="sub/b.html#here">good anchor</a>
            <a href="sub/b.html#missing">bad anchor</a>
            <a href="gone.html">missing page</a>
            <a href="https://example.org/x.html#y">external</a>
            <a href="mailto:someone@example.org">mail</a>
            <a href="#nowhere">bad anchor on the same page</a>
            <img src="img/missing.png">
            <a href="sub/">directory with an index</a>
            <a href="../outside.html">outside</a>
        """,
        "sub/b.html": '<h2 id="here">Here</h2><a href="../index.html#top">back</a>',
        "sub/index.html": "<p>index</p>",
        "print.html": '<a href="nothing.html">mdBook\'s own page, skipped</a>',
    }
    with tempfile.TemporaryDirectory() as directory:
        for name, text in pages.items():
            path = os.path.join(directory, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
        found = check(directory)
    expected = [
        'index.html:12: href="../outside.html": points outside the book',
        'index.html:5: href="sub/b.html#missing": no id "missing" in sub/b.html',
        'index.html:6: href="gone.html": no such file gone.html',
        'index.html:9: href="#nowhere": no id "nowhere" in index.html',
        'index.html:10: src="img/missing.png": no such file img/missing.png',
    ]
    if found != sorted(expected):
        print("self-test FAILED: the checker found")
        for line in found:
            print("  " + line)
        print("instead of")
        for line in sorted(expected):
            print("  " + line)
        return 1
    with tempfile.TemporaryDirectory() as directory:
        readme = os.path.join(directory, "README.md")
        os.makedirs(os.path.join(directory, "docs"))
        open(os.path.join(directory, "docs", "up.md"), "w").close()
        with open(readme, "w", encoding="utf-8") as file:
            file.write("[ok](docs/up.md) [ok](docs/) [web](https://x.org/a.md) [here](#top)\n"
                       "[gone](docs/gone.md#x)\n```\n[in code](nothing.md)\n```\n")
        markdown = check_markdown([readme])
    if len(markdown) != 1 or "docs/gone.md" not in markdown[0]:
        print("self-test FAILED: --markdown found", markdown, "instead of docs/gone.md alone")
        return 1
    print(f"self-test ok: {len(expected) + 1} broken links found, nothing else")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if argv[1:2] == ["--markdown"]:
        problems = check_markdown(argv[2:])
        for line in problems:
            print(line)
        if problems:
            return 1
        print(f"links ok in {', '.join(argv[2:])}")
        return 0
    book_dir = argv[1] if len(argv) > 1 else "target/book"
    if not os.path.isfile(os.path.join(book_dir, "index.html")):
        print(f"{book_dir} holds no built book: run `mdbook build` first")
        return 1
    problems = check(book_dir)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} broken link(s) in {book_dir}")
        return 1
    print(f"links ok in {book_dir} ({check.links} relative links checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
