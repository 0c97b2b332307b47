#!/usr/bin/env python3
"""Build the retrieval-evaluation drive from pinned public sources.

    python3 eval/retrieval/build.py [OUT]          # default OUT: target/retrieval-drive
    python3 eval/retrieval/build.py --check [OUT]  # verify questions.jsonl against OUT

The sources are the Debian Reference in English and French (Debian packages,
pinned with their SHA-256 in sources.lock). Each chapter's HTML is parsed
with pandoc into a small block model (headings, paragraphs, lists, code,
tables); the model is cut into documents of a few sections each, and every
document is written in one format: Markdown, DOCX, ODT, PDF (headings are
only bold, larger lines: no numbering, no outline), plain text (setext
underlines or bare title lines) or a scan (text drawn into an image, in a
PDF with no text layer).

OUT receives:

    OUT/drive/...            the files, as a user's Nextcloud tree
    OUT/manifest.json        one entry per file: path, format, language,
                             source, headings
    OUT/source-text/<path>.txt  each document's text before conversion,
                             headings marked `#`; the checker reads these

The run is deterministic: the same inputs give the same bytes
(SOURCE_DATE_EPOCH for pandoc, reportlab's invariant mode, seeded noise).
See README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LOCK = HERE / "sources.lock"
QUESTIONS = HERE / "questions.jsonl"
DEFAULT_OUT = REPO / "target" / "retrieval-drive"
DEFAULT_SOURCES = REPO / "target" / "retrieval-sources"
# 2026-01-01T00:00:00Z: every timestamp written into a file.
EPOCH = "1767225600"

# Which chapters become documents in which language: the two translations
# are disjoint, so a French question has one French answer and no English
# twin. Chapters 4 and 7 are not translated in the French package.
CHAPTERS = {
    "en": [1, 4, 6, 7, 9, 10, 12],
    "fr": [2, 3, 5, 8, 11],
}
# Second-level sections per document at most: a long chapter section is
# cut into parts, as people keep long notes in several files.
SECTIONS_PER_DOCUMENT = 5
# Documents shorter than this (characters of text) are left out.
MIN_DOCUMENT_CHARS = 600
# The formats, in the order documents take them in turn.
FORMATS = ["md", "docx", "pdf", "txt", "odt", "md", "docx", "txt", "pdf", "odt"]
# Documents rendered as scans (language, chapter, section title prefix).
SCANS = [
    ("en", 4, "Other access controls"),
    ("en", 6, "Other network application servers"),
    ("fr", 3, "Le système udev"),
]
SCAN_MAX_PAGES = 2

# Where each chapter's documents go in the drive.
FOLDERS = {
    ("en", 1): "Documents/Linux tutorials",
    ("en", 4): "Manuals/Security",
    ("en", 6): "Manuals/Network services",
    ("en", 7): "Notes/Desktop",
    ("en", 9): "Documents/System tips",
    ("en", 10): "Manuals/Data management",
    ("en", 12): "Notes/Programming",
    ("fr", 2): "Documents/Paquets Debian",
    ("fr", 3): "Notes/Démarrage du système",
    ("fr", 5): "Manuels/Réseau",
    ("fr", 8): "Notes/Langues et clavier",
    ("fr", 11): "Documents/Conversion de données",
}


# --------------------------------------------------------------------------
# Sources


def load_lock() -> list[dict]:
    return json.loads(LOCK.read_text(encoding="utf-8"))["sources"]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_sources(directory: Path) -> dict[str, Path]:
    """Each locked source, downloaded with apt-get if absent, hash-checked."""
    directory.mkdir(parents=True, exist_ok=True)
    found = {}
    for source in load_lock():
        path = directory / source["file"]
        if not path.exists():
            if source["kind"] != "deb":
                sys.exit(f"unknown source kind {source['kind']!r} in {LOCK}")
            spec = f"{source['package']}={source['version']}"
            print(f"downloading {spec} with apt-get", file=sys.stderr)
            result = subprocess.run(
                ["apt-get", "download", spec], cwd=directory, capture_output=True, text=True
            )
            if result.returncode != 0 or not path.exists():
                sys.exit(
                    f"could not download {spec}: {result.stderr.strip()}\n"
                    f"Run `apt-get update`, or put {source['file']} into {directory} by hand."
                )
        digest = sha256(path)
        if digest != source["sha256"]:
            sys.exit(
                f"{path} has SHA-256 {digest}, sources.lock says {source['sha256']}: "
                "delete it and run again, or update the lock on purpose."
            )
        found[source["package"]] = path
    return found


def unpack(deb: Path, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)
    return into / "usr" / "share" / "debian-reference"


def pandoc_binary() -> str:
    try:
        import pypandoc  # noqa: PLC0415

        return pypandoc.get_pandoc_path()
    except Exception:  # noqa: BLE001 - any failure: fall back to PATH
        found = shutil.which("pandoc")
        if not found:
            sys.exit("pandoc not found: pip install -r eval/retrieval/requirements.txt")
        return found


def pandoc(args: list[str], data: bytes) -> bytes:
    env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH, LC_ALL="C.UTF-8")
    result = subprocess.run([pandoc_binary(), *args], input=data, capture_output=True, env=env)
    if result.returncode != 0:
        sys.exit(f"pandoc {' '.join(args)} failed: {result.stderr.decode(errors='replace')}")
    return result.stdout


# --------------------------------------------------------------------------
# The block model


@dataclass
class Block:
    kind: str  # "h", "p", "li", "code", "table"
    text: str = ""
    level: int = 0  # headings: 1 title, 2 section, 3 subsection
    rows: list[list[str]] = field(default_factory=list)  # tables: header first


@dataclass
class Document:
    lang: str
    chapter: int
    title: str
    blocks: list[Block]
    path: str = ""
    format: str = ""
    source_lang: str = ""


ADMONITIONS = {"note", "tip", "warning", "caution", "important"}
SKIP_DIVS = {"navheader", "navfooter", "toc", "footnotes", "list-of-tables", "list-of-figures"}
DROP_COLUMNS = {"popcon", "size", "taille"}
NUMBERING = re.compile(r"^(?:Chapter|Chapitre)?\s*(?:[0-9]+\.)+\s*")


def inline_text(inlines: list) -> str:
    out: list[str] = []
    for node in inlines:
        kind = node["t"]
        content = node.get("c")
        if kind == "Str":
            out.append(content)
        elif kind in ("Space", "SoftBreak", "LineBreak"):
            out.append(" ")
        elif kind == "Code":
            out.append(content[1])
        elif kind in ("Emph", "Strong", "Underline", "Strikeout", "SmallCaps", "Subscript"):
            out.append(inline_text(content))
        elif kind == "Superscript":
            text = inline_text(content)
            if not re.fullmatch(r"\[\d+\]", text.strip()):
                out.append(text)
        elif kind == "Link":
            out.append(inline_text(content[1]))
        elif kind == "Span":
            out.append(inline_text(content[1]))
        elif kind == "Quoted":
            quote = '"' if content[0]["t"] == "DoubleQuote" else "'"
            out.append(quote + inline_text(content[1]) + quote)
        elif kind == "Note" or kind == "Image":
            continue
        elif kind in ("Math", "RawInline"):
            out.append(content[1])
    return clean("".join(out))


def clean(text: str) -> str:
    text = unicodedata.normalize("NFC", text.replace("\u00a0", " ").replace("\u202f", " "))
    return re.sub(r"\s+", " ", text).strip()


def blocks_text(blocks: list) -> str:
    parts = []
    for block in blocks:
        if block["t"] in ("Para", "Plain"):
            parts.append(inline_text(block["c"]))
        elif block["t"] == "Div":
            parts.append(blocks_text(block["c"][1]))
        elif block["t"] in ("BulletList", "OrderedList"):
            items = block["c"] if block["t"] == "BulletList" else block["c"][1]
            parts.extend(blocks_text(item) for item in items)
    return clean(" ".join(part for part in parts if part))


def convert(blocks: list, out: list[Block]) -> None:
    for block in blocks:
        kind = block["t"]
        content = block.get("c")
        if kind == "Header":
            text = NUMBERING.sub("", inline_text(content[2])).strip()
            if text:
                out.append(Block("h", text, level=min(content[0], 4)))
        elif kind in ("Para", "Plain"):
            text = inline_text(content)
            if text:
                out.append(Block("p", text))
        elif kind == "CodeBlock":
            code = content[1].rstrip("\n")
            if code.strip():
                out.append(Block("code", code))
        elif kind in ("BulletList", "OrderedList"):
            items = content if kind == "BulletList" else content[1]
            for item in items:
                text = blocks_text(item)
                if text:
                    out.append(Block("li", text))
        elif kind == "DefinitionList":
            for term, definitions in content:
                text = inline_text(term) + ": " + " ".join(blocks_text(d) for d in definitions)
                out.append(Block("li", clean(text)))
        elif kind == "Div":
            classes = set(content[0][1])
            if classes & SKIP_DIVS:
                continue
            if classes & ADMONITIONS:
                admonition(content[1], out)
            elif "table" in classes or "informaltable" in classes:
                table_div(content[1], out)
            else:
                convert(content[1], out)
        elif kind == "Table":
            rows = table_rows(block)
            if rows:
                out.append(Block("table", rows=rows))
        elif kind == "BlockQuote":
            convert(content, out)


def admonition(blocks: list, out: list[Block]) -> None:
    """DocBook draws a note as a table: icon, label, then the paragraphs."""
    for block in blocks:
        if block["t"] != "Table":
            continue
        label = ""
        body: list[Block] = []
        for row in table_cells(block):
            for cell in row:
                plain = [b for b in cell if b["t"] == "Plain"]
                if plain and not label:
                    label = inline_text(plain[0]["c"])
                convert([b for b in cell if b["t"] != "Plain"], body)
        for index, part in enumerate(body):
            if index == 0 and part.kind == "p" and label:
                part.text = f"{label}: {part.text}"
            out.append(part)


def table_div(blocks: list, out: list[Block]) -> None:
    caption = ""
    for block in blocks:
        if block["t"] == "Para" and not caption:
            caption = NUMBERING.sub("", inline_text(block["c"]))
            caption = re.sub(r"^(?:Table|Tableau)\s+[0-9.]+\s*", "", caption)
        elif block["t"] == "Div":
            for inner in block["c"][1]:
                if inner["t"] == "Table":
                    rows = table_rows(inner)
                    if rows:
                        if caption:
                            out.append(Block("p", caption))
                        out.append(Block("table", rows=rows))


def table_cells(table: dict) -> list[list[list]]:
    _attr, _caption, _specs, head, bodies, _foot = table["c"]
    rows = list(head[1])
    for body in bodies:
        rows.extend(body[2])
        rows.extend(body[3])
    return [[cell[4] for cell in row[1]] for row in rows]


def table_rows(table: dict) -> list[list[str]]:
    rows = [[blocks_text(cell) for cell in row] for row in table_cells(table)]
    if not rows:
        return []
    keep = [i for i, name in enumerate(rows[0]) if name.lower() not in DROP_COLUMNS]
    return [[row[i] for i in keep if i < len(row)] for row in rows]


def chapter_blocks(html: Path) -> list[Block]:
    tree = json.loads(pandoc(["-f", "html", "-t", "json"], html.read_bytes()))
    out: list[Block] = []
    convert(tree["blocks"], out)
    return out


def documents_of_chapter(lang: str, chapter: int, blocks: list[Block]) -> list[Document]:
    """Each level-2 section (a DocBook sect1) becomes one or more documents."""
    sections: list[list[Block]] = []
    for block in blocks:
        if block.kind == "h" and block.level <= 2:
            sections.append([block])
        elif sections:
            sections[-1].append(block)
    documents = []
    for section in sections:
        head = section[0]
        if head.level < 2:
            continue
        title = head.text
        intro: list[Block] = []
        parts: list[list[Block]] = []
        for block in section[1:]:
            if block.kind == "h" and block.level == 3:
                parts.append([block])
            elif parts:
                parts[-1].append(block)
            else:
                intro.append(block)
        groups = [
            parts[i : i + SECTIONS_PER_DOCUMENT] for i in range(0, len(parts), SECTIONS_PER_DOCUMENT)
        ] or [[]]
        for number, group in enumerate(groups, start=1):
            name = title if len(groups) == 1 else f"{title} ({number} of {len(groups)})"
            if lang == "fr" and len(groups) > 1:
                name = f"{title} ({number} sur {len(groups)})"
            body = [Block("h", name, level=1)]
            if number == 1:
                body.extend(intro)
            for part in group:
                for block in part:
                    level = {3: 2, 4: 3}.get(block.level, block.level)
                    if block.kind == "h":
                        body.append(Block("h", block.text, level=min(level, 3)))
                    else:
                        body.append(block)
            document = Document(lang, chapter, name, body)
            document.source_lang = lang
            document.lang = language(document)
            if len(plain_text(document)) >= MIN_DOCUMENT_CHARS:
                documents.append(document)
    return documents


FRENCH_WORDS = {"le", "la", "les", "des", "du", "est", "et", "pour", "une", "dans", "vous", "sur"}
ENGLISH_WORDS = {"the", "and", "is", "of", "to", "for", "you", "this", "with", "are", "on"}


def language(document: Document) -> str:
    """Some sections of the French package are still untranslated: such a
    document is English, wherever it sits in the drive."""
    words = re.findall(r"[a-zà-ÿ]+", plain_text(document).lower())
    french = sum(word in FRENCH_WORDS for word in words)
    english = sum(word in ENGLISH_WORDS for word in words)
    return "fr" if french > english else "en"


def plain_text(document: Document) -> str:
    """The document's text before conversion: what the checker reads."""
    lines = []
    for block in document.blocks:
        if block.kind == "h":
            lines.append("#" * block.level + " " + block.text)
        elif block.kind == "table":
            lines.extend(" | ".join(row) for row in block.rows)
        elif block.kind == "li":
            lines.append("- " + block.text)
        elif block.kind == "code":
            lines.extend("    " + line for line in block.text.split("\n"))
        else:
            lines.append(block.text)
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Writers


def safe_name(title: str) -> str:
    name = re.sub(r'[/\\:*?"<>|#%]', " ", title)
    name = re.sub(r"\s+", " ", name).strip().rstrip(".")
    return name[:90]


def pandoc_inlines(text: str) -> list:
    out: list = []
    for index, word in enumerate(text.split(" ")):
        if index:
            out.append({"t": "Space"})
        if word:
            out.append({"t": "Str", "c": word})
    return out


def pandoc_document(document: Document) -> dict:
    blocks: list = []
    pending: list = []

    def flush() -> None:
        if pending:
            blocks.append({"t": "BulletList", "c": [[{"t": "Plain", "c": item}] for item in pending]})
            pending.clear()

    for block in document.blocks:
        if block.kind == "li":
            pending.append(pandoc_inlines(block.text))
            continue
        flush()
        if block.kind == "h":
            blocks.append({"t": "Header", "c": [block.level, ["", [], []], pandoc_inlines(block.text)]})
        elif block.kind == "p":
            blocks.append({"t": "Para", "c": pandoc_inlines(block.text)})
        elif block.kind == "code":
            blocks.append({"t": "CodeBlock", "c": [["", [], []], block.text]})
        elif block.kind == "table":
            blocks.append(pandoc_table(block.rows))
    flush()
    return {"pandoc-api-version": [1, 23, 1], "meta": {}, "blocks": blocks}


def pandoc_table(rows: list[list[str]]) -> dict:
    width = max(len(row) for row in rows)
    empty = ["", [], []]

    def cell(text: str) -> list:
        return [empty, {"t": "AlignDefault"}, 1, 1, [{"t": "Plain", "c": pandoc_inlines(text)}]]

    def row(cells: list[str]) -> list:
        cells = cells + [""] * (width - len(cells))
        return [empty, [cell(text) for text in cells]]

    specs = [[{"t": "AlignDefault"}, {"t": "ColWidthDefault"}] for _ in range(width)]
    head = [empty, [row(rows[0])]]
    body = [[empty, 0, [], [row(r) for r in rows[1:]]]]
    return {"t": "Table", "c": [empty, [None, []], specs, head, body, [empty, []]]}


def write_pandoc(document: Document, target: Path, to: str) -> None:
    data = json.dumps(pandoc_document(document)).encode("utf-8")
    if to == "md":
        target.write_bytes(pandoc(["-f", "json", "-t", "gfm", "--wrap=none"], data))
    else:
        pandoc(["-f", "json", "-t", to, "-o", str(target)], data)


def write_text(document: Document, target: Path, setext: bool) -> None:
    """Plain text as people type it: underlined titles or bare title lines."""
    lines: list[str] = []
    for block in document.blocks:
        if block.kind == "h":
            if lines and lines[-1] != "":
                lines.append("")
            if setext:
                lines.append(block.text)
                if block.level <= 2:
                    lines.append(("=" if block.level == 1 else "-") * len(block.text))
            else:
                lines.append(block.text.upper() if block.level == 1 else block.text)
            lines.append("")
        elif block.kind == "p":
            lines.extend(textwrap.wrap(block.text, 76, break_on_hyphens=False) or [""])
            lines.append("")
        elif block.kind == "li":
            lines.extend(
                textwrap.wrap(
                    block.text, 76, initial_indent="  * ", subsequent_indent="    ",
                    break_on_hyphens=False,
                )
            )
            lines.append("")
        elif block.kind == "code":
            lines.extend("    " + line for line in block.text.split("\n"))
            lines.append("")
        elif block.kind == "table":
            lines.extend("  " + " | ".join(row) for row in block.rows)
            lines.append("")
    target.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_pdf(document: Document, target: Path) -> None:
    """A PDF whose headings are only bold, larger lines (no outline, no numbers)."""
    from reportlab.lib.pagesizes import A4  # noqa: PLC0415
    from reportlab.lib.styles import ParagraphStyle  # noqa: PLC0415
    from reportlab.lib.units import cm  # noqa: PLC0415
    from reportlab.platypus import (  # noqa: PLC0415
        Paragraph,
        Preformatted,
        SimpleDocTemplate,
        Spacer,
        Table,
        TableStyle,
    )

    body = ParagraphStyle("body", fontName="Times-Roman", fontSize=10.5, leading=13.5, spaceAfter=6)
    bullet = ParagraphStyle("bullet", parent=body, leftIndent=14, bulletIndent=4, spaceAfter=3)
    code = ParagraphStyle("code", fontName="Courier", fontSize=8.5, leading=10.5, leftIndent=10)
    cell = ParagraphStyle("cell", fontName="Times-Roman", fontSize=8.5, leading=10)
    headings = {
        1: ParagraphStyle("h1", fontName="Helvetica-Bold", fontSize=17, leading=21, spaceAfter=10),
        2: ParagraphStyle(
            "h2", fontName="Helvetica-Bold", fontSize=13, leading=16, spaceBefore=10, spaceAfter=5
        ),
        3: ParagraphStyle(
            "h3", fontName="Helvetica-Bold", fontSize=11, leading=14, spaceBefore=6, spaceAfter=3
        ),
    }
    story: list = []
    for block in document.blocks:
        if block.kind == "h":
            story.append(Paragraph(xml_escape(block.text), headings[block.level]))
        elif block.kind == "p":
            story.append(Paragraph(xml_escape(block.text), body))
        elif block.kind == "li":
            story.append(Paragraph(xml_escape(block.text), bullet, bulletText="\u2022"))
        elif block.kind == "code":
            wrapped = "\n".join(
                textwrap.fill(line, 95, subsequent_indent="  ") if len(line) > 95 else line
                for line in block.text.split("\n")
            )
            story.append(Preformatted(wrapped, code))
            story.append(Spacer(1, 5))
        elif block.kind == "table":
            data = [[Paragraph(xml_escape(text), cell) for text in row] for row in block.rows]
            width = max(len(row) for row in block.rows)
            data = [row + [""] * (width - len(row)) for row in data]
            table = Table(data, colWidths=[(A4[0] - 4 * cm) / width] * width, repeatRows=1)
            table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.3, "#888888"),
                                       ("VALIGN", (0, 0), (-1, -1), "TOP")]))
            story.append(table)
            story.append(Spacer(1, 6))
    pdf = SimpleDocTemplate(
        str(target), pagesize=A4, leftMargin=2 * cm, rightMargin=2 * cm, topMargin=2 * cm,
        bottomMargin=2 * cm, title="", author="", creator="", producer="", invariant=1,
    )
    pdf.build(story)


def write_scan(document: Document, target: Path, seed: int) -> None:
    """Text drawn into greyscale page images, slightly skewed and noisy, as a
    scanner gives them; the PDF holds the images only (no text layer)."""
    from PIL import Image, ImageDraw, ImageFilter, ImageFont  # noqa: PLC0415
    from reportlab.lib.pagesizes import A4  # noqa: PLC0415
    from reportlab.lib.utils import ImageReader  # noqa: PLC0415
    from reportlab.pdfgen import canvas  # noqa: PLC0415
    import reportlab  # noqa: PLC0415

    fonts = Path(reportlab.__file__).parent / "fonts"
    regular = ImageFont.truetype(str(fonts / "Vera.ttf"), 22)
    bold = ImageFont.truetype(str(fonts / "VeraBd.ttf"), 28)
    mono = ImageFont.truetype(str(fonts / "VeraMono.ttf"), 18) if (fonts / "VeraMono.ttf").exists() else regular
    width, height, margin = 1240, 1754, 110  # A4 at 150 dpi
    lines: list[tuple[str, object]] = []
    for block in document.blocks:
        if block.kind == "h":
            lines += [("", regular), (block.text, bold), ("", regular)]
        elif block.kind == "code":
            lines += [(line[:90], mono) for line in block.text.split("\n")] + [("", regular)]
        elif block.kind == "table":
            for row in block.rows:
                lines += [(line, regular) for line in textwrap.wrap(" | ".join(row), 85)]
            lines.append(("", regular))
        else:
            prefix = "\u2022 " if block.kind == "li" else ""
            lines += [(line, regular) for line in textwrap.wrap(prefix + block.text, 85)]
            lines.append(("", regular))
    rng = random.Random(seed)
    pages = []
    y, page, draw = height, None, None
    for text, font in lines:
        if y > height - margin - 40:
            if len(pages) == SCAN_MAX_PAGES:
                break
            page = Image.new("L", (width, height), 246)
            draw = ImageDraw.Draw(page)
            pages.append(page)
            y = margin
            if not text:
                continue
        draw.text((margin, y), text, font=font, fill=28)
        y += 34 if font is bold else 30
    pdf = canvas.Canvas(str(target), pagesize=A4, invariant=1)
    pdf.setTitle("")
    pdf.setAuthor("")
    pdf.setCreator("")
    pdf.setProducer("")
    for page in pages:
        noisy = page.rotate(rng.uniform(-0.8, 0.8), resample=Image.BICUBIC, fillcolor=246)
        noisy = noisy.filter(ImageFilter.GaussianBlur(0.6))
        pixels = noisy.load()
        for _ in range(6000):
            x, yy = rng.randrange(width), rng.randrange(height)
            pixels[x, yy] = rng.choice((60, 120, 200))
        buffer = io.BytesIO()
        noisy.save(buffer, format="PNG", optimize=False)
        buffer.seek(0)
        pdf.drawImage(ImageReader(buffer), 0, 0, width=A4[0], height=A4[1])
        pdf.showPage()
    pdf.save()


# --------------------------------------------------------------------------
# Build


def assign(documents: list[Document]) -> None:
    turn = 0
    used: set[str] = set()
    for document in documents:
        scan = any(
            document.source_lang == lang and document.chapter == chapter and document.title.startswith(prefix)
            for lang, chapter, prefix in SCANS
        )
        key = (document.source_lang, document.chapter)
        document.format = "scan" if scan else FORMATS[turn % len(FORMATS)]
        turn += 0 if scan else 1
        extension = {"scan": "pdf", "txt": "txt"}.get(document.format, document.format)
        folder = FOLDERS[key]
        if document.format == "scan":
            folder = {"en": "Scans", "fr": "Numérisations"}[document.source_lang]
        path = f"{folder}/{safe_name(document.title)}.{extension}"
        while path in used:
            path = path.replace(f".{extension}", f" (2).{extension}")
        used.add(path)
        document.path = path


def build(out: Path, sources_dir: Path) -> list[Document]:
    debs = fetch_sources(sources_dir)
    scratch = out / ".unpacked"
    documents: list[Document] = []
    for lang, chapters in CHAPTERS.items():
        root = unpack(debs[f"debian-reference-{lang}"], scratch / lang)
        for chapter in chapters:
            blocks = chapter_blocks(root / f"ch{chapter:02d}.{lang}.html")
            documents.extend(documents_of_chapter(lang, chapter, blocks))
    assign(documents)
    drive = out / "drive"
    text_dir = out / "source-text"
    for directory in (drive, text_dir):
        if directory.exists():
            shutil.rmtree(directory)
    manifest = []
    for index, document in enumerate(documents):
        target = drive / document.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if document.format in ("md", "docx", "odt"):
            write_pandoc(document, target, document.format)
        elif document.format == "txt":
            write_text(document, target, setext=index % 2 == 0)
        elif document.format == "pdf":
            write_pdf(document, target)
        elif document.format == "scan":
            write_scan(document, target, seed=index)
        text_path = text_dir / f"{document.path}.txt"
        text_path.parent.mkdir(parents=True, exist_ok=True)
        text_path.write_text(plain_text(document), encoding="utf-8")
        manifest.append({
            "path": document.path,
            "format": document.format,
            "lang": document.lang,
            "source": f"debian-reference-{document.source_lang} ch{document.chapter:02d}",
            "title": document.title,
            "headings": [b.text for b in document.blocks if b.kind == "h"],
            "bytes": target.stat().st_size,
        })
    shutil.rmtree(scratch)
    (out / "manifest.json").write_text(
        json.dumps({"documents": manifest}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return documents


# --------------------------------------------------------------------------
# Checker


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFC", text).replace("\u2019", "'")
    return re.sub(r"\s+", " ", text).strip().casefold()


def sections_of(text: str) -> dict[str, str]:
    """Heading (normalized) -> the text under it, up to the next heading."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.split("\n"):
        match = re.match(r"^(#{1,3}) (.*)$", line)
        if match:
            current = normalize(match.group(2))
            sections.setdefault(current, [])
        elif current is not None:
            sections[current].append(line)
    return {heading: normalize(" ".join(lines)) for heading, lines in sections.items()}


def check(out: Path) -> int:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["documents"]
    by_path = {entry["path"]: entry for entry in manifest}
    problems = []
    kinds: dict[str, int] = {}
    formats: dict[str, int] = {}
    ids = set()
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    for question in questions:
        qid = question.get("id")
        missing = [k for k in ("id", "question", "file", "heading", "answer", "kind") if not question.get(k)]
        if missing:
            problems.append(f"{qid}: missing {', '.join(missing)}")
            continue
        if qid in ids:
            problems.append(f"{qid}: duplicate id")
        ids.add(qid)
        if question["kind"] not in ("exact", "paraphrase", "vocabulary", "french"):
            problems.append(f"{qid}: unknown kind {question['kind']!r}")
        entry = by_path.get(question["file"])
        if entry is None:
            problems.append(f"{qid}: no file {question['file']!r} in the drive")
            continue
        if (question["kind"] == "french") != (entry["lang"] == "fr"):
            problems.append(f"{qid}: kind {question['kind']} but the file is in {entry['lang']}")
        text = (out / "source-text" / f"{question['file']}.txt").read_text(encoding="utf-8")
        sections = sections_of(text)
        heading = normalize(question["heading"])
        if heading not in sections:
            problems.append(f"{qid}: heading {question['heading']!r} is not a heading of {question['file']}")
            continue
        if normalize(question["answer"]) not in sections[heading]:
            where = [h for h, body in sections.items() if normalize(question["answer"]) in body]
            hint = f" (it is under {where[0]!r})" if where else ""
            problems.append(f"{qid}: answer not under {question['heading']!r} in {question['file']}{hint}")
        kinds[question["kind"]] = kinds.get(question["kind"], 0) + 1
        formats[entry["format"]] = formats.get(entry["format"], 0) + 1
    for problem in problems:
        print(problem, file=sys.stderr)
    total = len(questions)
    print(f"{total} questions, {len(problems)} problems")
    print("by kind:   " + ", ".join(f"{k} {v} ({100 * v / max(total, 1):.0f} %)" for k, v in sorted(kinds.items())))
    print("by format: " + ", ".join(f"{k} {v}" for k, v in sorted(formats.items())))
    return 1 if problems or total < 120 else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES,
                        help="where the pinned packages are kept (default target/retrieval-sources)")
    parser.add_argument("--check", action="store_true", help="only check questions.jsonl against OUT")
    args = parser.parse_args()
    if not args.check:
        documents = build(args.out, args.sources)
        counts: dict[str, int] = {}
        for document in documents:
            counts[f"{document.format}/{document.lang}"] = counts.get(f"{document.format}/{document.lang}", 0) + 1
        print(f"{len(documents)} documents in {args.out / 'drive'}: "
              + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        if not QUESTIONS.exists():
            return 0
    return check(args.out)


if __name__ == "__main__":
    sys.exit(main())
