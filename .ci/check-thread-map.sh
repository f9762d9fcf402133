#!/usr/bin/env bash
# docs/thread-map.md cites the code it describes: files (`Core/RequestExecutor.swift:110`, a bare
# `RequestExecutor.swift:119`, or `:205` after a file) and names (`RequestExecutor.submit`,
# `DeliveryBatch`, `perform`). This fails when a cited file no longer exists, a cited line is past
# the file's end, or a cited name no longer appears in the code, so the map cannot rot silently
# when code moves or is renamed. What it does not check: that a line number still points at the
# line meant (fix the map in the same change that moves the code, CONTRIBUTING.md).
#
# Paths: `Sources/…`, `Tests/…`, `.ci/…`, `docs/…`, `Benchmarks/…` and `Fuzz/…` from the repository
# root, other relative paths from Sources/Courier, else the one file whose path ends so; a bare file
# name wherever it is unique under Sources/ (then Tests/). A bare line number continues the last
# file cited before it in the same paragraph or table row.
# Names (between backticks, arguments dropped): each dotted part must appear as a word in the code
# of Sources/ and Tests/ (comments and strings removed; the C sources of Sources/C* as they are),
# and the member of one of Courier's own types (`Type.member`) must be declared somewhere (func,
# var, let, case, or a nested type). Words with spaces, `=`, `-` or quotes are prose, not names,
# and are skipped.
#
# Usage: .ci/check-thread-map.sh [FILE.md]   (docs/thread-map.md by default)
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "${1:-docs/thread-map.md}" <<'PYTHON'
import glob, os, re, sys

document = sys.argv[1]
lines = open(document, encoding="utf-8").read().split("\n")


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'#*"""(?:.|\n)*?"""#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"//.*", "", text)


swift_files = sorted(glob.glob("Sources/**/*.swift", recursive=True) + glob.glob("Tests/**/*.swift", recursive=True))
code = "\n".join(strip(open(p, encoding="utf-8").read()) for p in swift_files)
c_code = "\n".join(open(p, encoding="utf-8", errors="replace").read()
                   for p in glob.glob("Sources/C*/**/*.[ch]", recursive=True))
words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code)) | set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", c_code))
words |= set(os.listdir("Sources"))  # module names
types = set(re.findall(r"\b(?:class|struct|enum|actor|protocol|typealias)\s+([A-Z][A-Za-z0-9_]*)", code))
members = set(re.findall(
    r"\b(?:func|var|let|class|struct|enum|actor|protocol|typealias|associatedtype)\s+`?([A-Za-z_][A-Za-z0-9_]*)", code))
for cases in re.findall(r"\bcase\s+([^\n=:{]+)", code):
    for case in cases.split(","):
        match = re.match(r"\s*\.?([A-Za-z_][A-Za-z0-9_]*)", case)
        if match:
            members.add(match.group(1))

roots = ("Sources/", "Tests/", ".ci/", "docs/", "Benchmarks/", "Fuzz/")
basenames = {}
for path in swift_files:
    basenames.setdefault(os.path.basename(path), []).append(path)

problems = []


def problem(number, message):
    problems.append(f"{document}:{number}: {message}")


def resolve(number, cited):
    if cited.startswith(roots):
        candidates = glob.glob(cited)
    elif "/" in cited:
        # From Sources/Courier, else a unique file whose path ends so ("WebSocket/X.swift" after
        # "under Tests/CourierTests/").
        candidates = glob.glob("Sources/Courier/" + cited) or [
            p for p in swift_files if p.endswith("/" + cited)]
        if len(candidates) > 1 and "*" not in cited:
            problem(number, f"`{cited}` is ambiguous ({', '.join(candidates)}): give its folder")
            return None
    else:
        found = basenames.get(cited, [])
        sources = [p for p in found if p.startswith("Sources/")]
        candidates = sources or found
        if len(candidates) > 1 and "*" not in cited:
            problem(number, f"`{cited}` is ambiguous ({', '.join(candidates)}): give its folder")
            return None
    if not candidates:
        problem(number, f"cites {cited}, which does not exist")
        return None
    return candidates[0]


def check_line(number, path, cited, first, last):
    if path is None or os.path.isdir(path):
        return
    count = len(open(path, encoding="utf-8", errors="replace").read().split("\n"))
    for value in (first, last):
        if value and int(value) > count:
            problem(number, f"cites {cited}:{value}, past the end of {path} ({count} lines)")


path_pattern = re.compile(
    r"(?<![\w/.`-])((?:\.ci/|[A-Za-z][\w+-]*/)(?:[\w+*.-]+/)*[\w+*.-]*|[A-Za-z][\w+*-]*\.swift)"
    r"(?::(\d+)(?:[–-](\d+))?)?")
continuation = re.compile(r"(?<=[\s,(])(?<![\w.]):(\d+)(?:[–-](\d+))?")
name_pattern = re.compile(r"`([^`]+)`")
in_fence = False
last_path = None
for number, line in enumerate(lines, 1):
    if line.startswith("```"):
        in_fence = not in_fence
        continue
    if in_fence:
        continue
    # Files, and bare line numbers continuing the last file cited before them in the paragraph
    # (a table row is a paragraph of its own).
    if not line.strip() or line.startswith(("|", "#", "- ")) or re.match(r"\d+\. ", line):
        last_path = None
    position = 0
    events = sorted([(m.start(), "path", m) for m in path_pattern.finditer(line)]
                    + [(m.start(), "line", m) for m in continuation.finditer(line)], key=lambda e: e[0])
    for start, kind, match in events:
        if kind == "path":
            cited = match.group(1).rstrip(".")
            if not (cited.endswith(".swift") or cited.startswith(roots) or re.match(r"(Core|Transport|Features|Model|Support|Stages|Bodies|Requests|Extras|Subsystems|Serialization)/", cited)):
                continue  # prose with a slash ("and/or", "head/body")
            last_path = resolve(number, cited)
            check_line(number, last_path, cited, match.group(2), match.group(3))
        elif last_path is not None:
            check_line(number, last_path, last_path, match.group(1), match.group(2))
    # Names.
    for token in name_pattern.findall(line):
        name = re.sub(r"\([^)]*\)", "", token).rstrip("…")
        if "/" in name or not re.fullmatch(r"\.?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", name):
            continue
        parts = name.lstrip(".").split(".")
        missing = [part for part in parts if part not in words]
        if missing:
            problem(number, f"cites `{token}`, but {', '.join(missing)} appears nowhere in the code")
            continue
        if len(parts) >= 2 and parts[0] in types and parts[-1] not in ("init", "deinit") and parts[-1] not in members:
            problem(number, f"cites `{token}`, but nothing declares {parts[-1]}")

for message in problems:
    print(message)
if problems:
    print(f"check-thread-map: {len(problems)} stale reference(s) in {document}: fix the map in the same change as the code")
    sys.exit(1)
print(f"check-thread-map: every file, line and name {document} cites exists")
PYTHON
