"""docs/results/ keeps only what the doc pages cite, and what the pages cite is there.

A doc page is README.md or docs/*.md; the folder READMEs inside docs/results/ are indexes, not
pages. A file under docs/results/ is cited when a page names it:

* by its path relative to the repository, to docs/ or to docs/results/
  (`docs/results/x/y.txt`, `x/y.txt` in a table headed "file in `docs/results/`");
* by its path below a folder, where that suffix names one file only (`es-alone-rate/results.md`);
* or by its name (or its path below a folder) in a paragraph that names its folder
  ("`docs/results/x/`, `bash commands.sh` there"), or, where that paragraph names no folder that
  has it, after the paragraph of the same section that named its folder last ("`table.md` in the
  same folder", "`greedy_game_gpu.txt` there").

A paragraph is the lines between blank lines (a table is one); a section runs from one heading
to the next. Pure text: no JAX, no package import; a fraction of a second.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
MAX_BYTES = 5 * 1024 * 1024

# A path-like word: the results' folders and files use letters, digits and _ - . @ / only.
_WORD = re.compile(r"[\w@.\-/]+")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
# A results folder's name carries its date: agent-cpu-2026-11-28, placer-speed-cpu-2026-11-28-s24.
_DATED = re.compile(r"^[\w.\-]*-20\d\d-\d\d-\d\d[\w.\-]*/")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def result_files() -> list[str]:
    """Every file under docs/results/ but the folder READMEs, relative to docs/results/."""
    return sorted(p.relative_to(RESULTS).as_posix() for p in RESULTS.rglob("*") if p.is_file() and p.name != "README.md")


def _relative(word: str) -> str:
    """A word as a path relative to docs/results/ where it is written relative to the repository or docs/."""
    word = word.strip(".")  # a sentence's full stop
    for prefix in ("docs/results/", "results/"):
        if word.startswith(prefix):
            return word[len(prefix):]
    return word


def sections(text: str) -> list[list[str]]:
    """A page's sections (split at headings outside code blocks), each a list of paragraphs."""
    out: list[list[str]] = [[]]
    paragraph: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#"):
            out[-1].append("\n".join(paragraph))
            out.append([])
            paragraph = []
        elif not line.strip():
            out[-1].append("\n".join(paragraph))
            paragraph = []
        else:
            paragraph.append(line)
    out[-1].append("\n".join(paragraph))
    return [[p for p in s if p.strip()] for s in out]


def _words(paragraph: str) -> tuple[list[str], set[str]]:
    """The folders a paragraph names, in order ("x/y/", and x/ of a path x/y.txt), and the file paths or names."""
    words = [_relative(w) for w in _WORD.findall(paragraph)]
    files = {w for w in words if w and not w.endswith("/")}
    folders = [w if w.endswith("/") else w.rsplit("/", 1)[0] + "/" for w in words if "/" in w]
    return folders, files


def _in(folder: str, named: str) -> bool:
    return folder == named or folder.endswith("/" + named)


def cited(files: list[str], page_texts: list[str]) -> set[str]:
    """The files the pages cite: in a paragraph, a name cites it in any folder that paragraph names;
    failing that, in the folder named last before it in the same section ("there", "above")."""
    found: set[str] = set()
    for text in page_texts:
        for section in sections(text):
            earlier: list[str] = []  # folders named by this section's previous paragraphs, in order
            for paragraph in section:
                folders, names = _words(paragraph)
                for name in names:
                    found.update(f for f in files if f == name)
                    below = [f for f in files if f.endswith("/" + name)]
                    if "/" in name and len(below) == 1:
                        found.update(below)
                        continue
                    here = [f for f in below if any(_in(f[: -len(name)], d) for d in folders)]
                    if here:
                        found.update(here)
                        continue
                    for d in reversed(earlier):
                        there = [f for f in below if _in(f[: -len(name)], d)]
                        if there:
                            found.update(there)
                            break
                earlier += folders
    return found


def test_every_result_file_is_cited_by_a_page():
    files = result_files()
    found = cited(files, [p.read_text(encoding="utf-8") for p in pages()])
    uncited = [f for f in files if f not in found]
    assert not uncited, f"files under docs/results/ that no doc page names (cite them or remove them): {uncited}"


def test_links_and_results_paths_of_the_pages_exist():
    missing = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(ROOT).as_posix()
        for target in _LINK.findall(text):
            path = target.split("#")[0]
            if path and not re.match(r"[a-z]+:", path) and not (page.parent / path).exists():
                missing.append(f"{name}: link {target}")
        for word in _WORD.findall(text):
            word = word.rstrip(".")
            if word.startswith("docs/results/"):
                path = ROOT / word
            elif word.startswith("results/") and page.parent.name == "docs":
                path = page.parent / word
            elif _DATED.match(word):
                path = RESULTS / word
            else:
                continue
            if not path.exists():
                missing.append(f"{name}: {word}")
    assert not missing, f"links and docs/results/ paths the pages name that do not exist: {missing}"


def test_results_stay_small():
    size = sum(p.stat().st_size for p in RESULTS.rglob("*") if p.is_file())
    assert size <= MAX_BYTES, f"docs/results/ holds {size:,} bytes, more than {MAX_BYTES:,}"
