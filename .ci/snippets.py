#!/usr/bin/env python3
"""Compiles every ```swift block of Courier's documentation, and runs the runnable ones.

Documents: README.md, CONTRIBUTING.md, docs/**/*.md and Sources/*/*.docc/**/*.md. Each document becomes one
test target (its own module) of a scratch SwiftPM package in .build-snippets/ (gitignored) that
depends on this checkout's Courier and CourierTestServer by path. A compile error is reported at
the document's own file:line (the generated code carries #sourceLocation directives).

Conventions (so that the documents stay readable):

- A block is compiled inside `func ...() async throws { ... }`, so statements, `try await` and
  local `struct`s just work. A block whose top-level code is only declarations (types, functions,
  extensions, protocols, `@Test` functions; not `let`/`var`) is placed at file scope instead, and
  what it declares is visible to the document's other blocks. `import` lines are allowed anywhere
  (they are hoisted); Courier, CourierTestServer, Foundation(Networking) and Testing are always
  imported.
- Hidden per-document code, in HTML comments (GitHub and DocC show neither):
    <!-- snippet-prelude
    struct User: Decodable, Sendable { let nick: String }   // file-scope declarations
    var api: Session { Session(baseURL: apiURL) }           // computed: a fresh one per use
    -->
    <!-- snippet-setup
    let server = try TestServer()                           // statements run at the start of every
    defer { _ = server.shutdown() }                         // wrapped block (the block may shadow them)
    -->
    <!-- snippet-server
    server.route("/v2/users/42") { _ in .json(#"{"nick":"ada"}"#) }   // routes for runnable blocks
    -->
  `apiURL` is provided: https://api.example.com/v2/ when compiled, the test server's
  http://127.0.0.1:PORT/v2/ when a runnable block runs (`snippetServerURL` is the server's root).
- Markers, in an HTML comment on the line(s) just before the fence (DocC would print a marker
  written in the fence's info string as part of the language name):
    <!-- snippet: runnable -->          also run it, in a test, against a CourierTestServer
                                        configured by the document's snippet-server code; the
                                        step fails if it throws or sends a request no route
                                        answers. (A file-scope block's @Test functions run as they
                                        are.)
    <!-- snippet: toplevel -->          force file scope
    <!-- snippet: no-compile REASON --> skip it (listed in the summary: keep these rare, and make
                                        fragments compile with the prelude instead)
  ```swift runnable / ```swift no-compile REASON (words after the language) work too, but only
  GitHub renders them well.
- Using a deprecated Courier API in a document is a compile error (Swift 6.2+ toolchains).

Usage: .ci/snippets.py [--compile-only] [--list]
"""
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRATCH = os.path.join(ROOT, ".build-snippets")

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)(.*)$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
HIDDEN = re.compile(r"^\s*<!--\s*snippet-(prelude|setup|server)\s*$")
IMPORT = re.compile(r"^\s*(@testable\s+|@preconcurrency\s+)?import\s+\w")
DECLARATION = re.compile(
    r"^(@\w+(\([^)]*\))?\s+)*((public|internal|private|fileprivate|package|final|open|nonisolated|indirect)\s+)*"
    r"(struct|class|enum|actor|protocol|extension|func|typealias)\b")
ATTRIBUTE_LINE = re.compile(r"^@\w+(\(.*\))?\s*$")
DEFAULT_IMPORTS = """import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SnippetHarness
import Testing
"""


class Block:
    def __init__(self, doc, line, lines, flags):
        self.doc, self.line, self.lines, self.flags = doc, line, lines, flags  # line: 1-based, of the fence

    @property
    def location(self):
        return f"{self.doc}:{self.line}"


class Document:
    def __init__(self, path):
        self.path = path
        self.blocks, self.prelude, self.setup, self.server = [], [], [], []


def documents():
    paths = ["README.md", "CONTRIBUTING.md"]
    for base in ["docs"]:
        for directory, _, files in os.walk(os.path.join(ROOT, base)):
            paths += [os.path.relpath(os.path.join(directory, f), ROOT) for f in files if f.endswith(".md")]
    sources = os.path.join(ROOT, "Sources")
    for target in sorted(os.listdir(sources)):
        for directory, _, files in os.walk(os.path.join(sources, target)):
            if ".docc" in directory:
                paths += [os.path.relpath(os.path.join(directory, f), ROOT) for f in files if f.endswith(".md")]
    return sorted(set(p for p in paths if os.path.exists(os.path.join(ROOT, p))))


def parse(path):
    doc = Document(path)
    lines = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    i, pending = 0, []
    while i < len(lines):
        line = lines[i]
        hidden = HIDDEN.match(line)
        if hidden:
            kind, start = hidden.group(1), i + 2
            body = []
            i += 1
            while i < len(lines) and not lines[i].rstrip().endswith("-->"):
                body.append(lines[i])
                i += 1
            if i < len(lines) and lines[i].strip() != "-->":
                body.append(lines[i].rstrip()[:-3])  # code on the closing line
            getattr(doc, kind).append((start, body))
            i += 1
            continue
        marker = MARKER.match(line)
        if marker:
            pending.append(marker.group(1))
            i += 1
            continue
        fence = FENCE.match(line)
        if fence:
            indent, ticks, language, rest = fence.groups()
            body, start = [], i + 1
            i += 1
            while i < len(lines) and not re.match(r"^\s*" + re.escape(ticks[0]) + "{" + str(len(ticks)) + r",}\s*$", lines[i]):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
                i += 1
            i += 1
            language = language.strip(",")
            if language == "swift":
                flags = " ".join(pending + [rest.strip().strip(",")]).strip()
                doc.blocks.append(Block(path, start, body, flags))
            pending = []
            continue
        if line.strip():
            pending = []
        i += 1
    return doc


def flag(block, name):
    return re.search(r"(^|[\s,])" + name + r"\b", block.flags) is not None


def no_compile_reason(block):
    m = re.search(r"no-compile\b[:\s]*(.*)", block.flags)
    return m.group(1).strip() if m else None


def is_declarations_only(lines):
    """True when every top-level line of the block (brace depth 0) starts a declaration."""
    depth, any_declaration = 0, False
    for raw in lines:
        line = re.sub(r'"(\\.|[^"\\])*"', '""', raw)  # strings do not count braces
        line = line.split("//")[0]
        stripped = line.strip()
        if depth == 0 and stripped and not IMPORT.match(stripped) and not stripped.startswith("#"):
            if DECLARATION.match(stripped):
                any_declaration = True
            elif not ATTRIBUTE_LINE.match(stripped) and stripped not in ("}", ")", "]"):
                return False
        depth += line.count("{") - line.count("}")
    return any_declaration


def test_functions(lines):
    """The @Test functions a block declares, as swift test names them: `name`, or `Type/name`
    inside a type declared at the block's top level."""
    names, after_test, depth, enclosing = [], False, 0, None
    for line in lines:
        code = re.sub(r'"(\\.|[^"\\])*"', '""', line).split("//")[0]
        declared = re.match(r"^\s*(@\w+(\([^)]*\))?\s+)*(struct|class|enum|actor|extension)\s+(\w+)", code)
        if depth == 0 and declared:
            enclosing = declared.group(4)
        if re.match(r"^\s*@Test\b", line):
            after_test = True
        m = re.search(r"\bfunc\s+(\w+)", code)
        if after_test and m:
            names.append(f"{enclosing}/{m.group(1)}" if depth > 0 and enclosing else m.group(1))
            after_test = False
        depth += code.count("{") - code.count("}")
        if depth == 0:
            enclosing = None
    return names


def source(doc, line):
    return f'#sourceLocation(file: "{doc}", line: {line})'


def generate(doc, module):
    """The test target's Swift file, and the names of the tests that run runnable blocks."""
    out, imports, runnable_tests, skipped = [], [], [], []
    for block in doc.blocks:
        if no_compile_reason(block) is None:
            imports += [l.strip() for l in block.lines if IMPORT.match(l)]
    header = DEFAULT_IMPORTS + "".join(sorted(set(i + "\n" for i in imports) - set(DEFAULT_IMPORTS.splitlines(True))))
    out.append(f"// Generated by .ci/snippets.py from {doc.path}; do not edit.\n{header}")

    def emit(start, lines, strip_imports):
        out.append(source(doc.path, start))
        for l in lines:
            out.append("" if strip_imports and IMPORT.match(l) else l)
        out.append("#sourceLocation()")

    for start, body in doc.prelude:
        emit(start, body, True)
    out.append("func configureSnippetServer(_ server: TestServer) {\n    _ = server")
    for start, body in doc.server:
        emit(start, body, True)
    out.append("}")

    for block in doc.blocks:
        reason = no_compile_reason(block)
        if reason is not None:
            skipped.append((block, reason or "no reason given"))
            continue
        name = f"snippet_{block.line}"
        code = [l for l in block.lines]
        # `#if canImport(X)` / `import X` / `#endif` groups move to the header with the imports.
        for k in range(len(code) - 2):
            if code[k].strip().startswith("#if canImport") and IMPORT.match(code[k + 1]) and code[k + 2].strip() == "#endif":
                code[k] = code[k + 2] = ""
        toplevel = flag(block, "toplevel") or is_declarations_only(code)
        out.append(f"\n// {block.location}")
        if toplevel:
            emit(block.line + 1, code, True)
            if flag(block, "runnable"):
                runnable_tests += test_functions(code)
        else:
            out.append(f"func {name}() async throws {{")
            for start, body in doc.setup:
                emit(start, body, True)
            out.append("do {")
            emit(block.line + 1, code, True)
            out.append("}\n}")
            if flag(block, "runnable"):
                out.append(f"@Test(.timeLimit(.minutes(1))) func runnable_{block.line}() async throws {{\n"
                           f"    let problems = try await SnippetHarness.run(configure: configureSnippetServer) {{ try await {name}() }}\n"
                           f"    #expect(problems == [], \"{block.location}: the test server's report\")\n}}")
                runnable_tests.append(f"runnable_{block.line}")
    return "\n".join(out) + "\n", runnable_tests, skipped


HARNESS = '''// Generated by .ci/snippets.py; do not edit.
import CourierTestServer
import Foundation

/// What runnable snippets talk to.
public enum SnippetHarness {
    /// The base URL of the test server a runnable snippet is running against (an example.com URL
    /// when the snippet is only compiled).
    @TaskLocal public static var baseURL = URL(fileURLWithPath: "/")

    /// Starts a test server, configures it, runs `body` with `baseURL` pointing at it, and returns
    /// the problems of its shutdown report other than unconsumed responses.
    public static func run(configure: (TestServer) -> Void, _ body: () async throws -> Void) async throws -> [String] {
        let server = try TestServer()
        configure(server)
        do {
            try await $baseURL.withValue(server.baseURL) { try await body() }
        } catch {
            _ = server.shutdown()
            throw error
        }
        let report = server.shutdown()
        return report.problems(unconsumedResponses: report.unconsumedResponses.count)
    }
}

/// The root of the server runnable snippets talk to: the test server's when running,
/// https://api.example.com/ otherwise.
public var snippetServerURL: URL {
    let url = SnippetHarness.baseURL
    return url.scheme == "http" ? url : URL(string: "https://api.example.com/") ?? url
}

/// The API base URL documents use: `snippetServerURL` + `v2/`.
public var apiURL: URL { snippetServerURL.appendingPathComponent("v2/") }
'''


def package_manifest(identity, modules):
    targets = ",\n        ".join(
        f'.testTarget(name: "{m}", dependencies: [.product(name: "Courier", package: "{identity}"), '
        f'.product(name: "CourierTestServer", package: "{identity}"), "SnippetHarness"], path: "Tests/{m}", '
        f'swiftSettings: documentSettings)'
        for m in modules)
    return f'''// swift-tools-version: 6.1
// Generated by .ci/snippets.py; do not edit.
import PackageDescription

// Documentation must not show deprecated API: a deprecation warning is an error in the documents.
#if compiler(>=6.2)
let documentSettings: [SwiftSetting] = [.unsafeFlags(["-Werror", "DeprecatedDeclaration"])]
#else
let documentSettings: [SwiftSetting] = []
#endif

let package = Package(
    name: "CourierSnippets",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "SnippetHarness", dependencies: [.product(name: "CourierTestServer", package: "{identity}")]),
        {targets}
    ]
)
'''


def module_name(path):
    return "Doc_" + re.sub(r"[^A-Za-z0-9]+", "_", os.path.splitext(path)[0]).strip("_")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.exists(path) or open(path).read() != text:
        open(path, "w").write(text)


def run(command, timeout):
    started = time.time()
    result = subprocess.run(command, cwd=SCRATCH, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return result.returncode, result.stdout, time.time() - started


def main():
    sys.stdout.reconfigure(line_buffering=True)
    compile_only = "--compile-only" in sys.argv
    docs = [parse(p) for p in documents()]
    docs = [d for d in docs if d.blocks]
    if "--list" in sys.argv:
        for d in docs:
            for b in d.blocks:
                print(f"{b.location}: {b.flags or '-'}")
        return 0

    identity = os.path.basename(ROOT).lower()
    modules, runnable, skipped, counts, locations = [], [], [], {}, {}
    for d in docs:
        module = module_name(d.path)
        text, tests, skips = generate(d, module)
        write(os.path.join(SCRATCH, "Tests", module, "Snippets.swift"), text)
        modules.append(module)
        runnable += [f"{module}.{t}" for t in tests]
        for block in d.blocks:
            locations[f"runnable_{block.line}"] = block.location  # @Test functions keep their own names
        skipped += skips
        counts[d.path] = (len(d.blocks) - len(skips), len([t for t in tests]))
    for stale in set(os.listdir(os.path.join(SCRATCH, "Tests"))) - set(modules):
        shutil.rmtree(os.path.join(SCRATCH, "Tests", stale))
    write(os.path.join(SCRATCH, "Sources", "SnippetHarness", "SnippetHarness.swift"), HARNESS)
    write(os.path.join(SCRATCH, "Package.swift"), package_manifest(identity, modules))

    print(f"snippets: {sum(len(d.blocks) for d in docs)} Swift blocks in {len(docs)} documents; building .build-snippets "
          f"(Courier and CourierTestServer by path, one test target per document)")
    status, output, seconds = run(["swift", "build", "--build-tests"], 1800)
    errors = [l for l in output.splitlines() if re.search(r":\d+:\d+: error:", l)]
    print(f"snippets: swift build --build-tests in .build-snippets: {seconds:.0f} s")
    if status != 0:
        shown = sorted(set(errors), key=lambda l: (l.split(":")[0], int(l.split(":")[1]) if l.split(":")[1].isdigit() else 0))
        for line in shown or output.splitlines()[-40:]:
            print(line)
        print(f"snippets: FAILED: {len(set(errors))} compile errors (a deprecated API is an error in the documents)")
        return 1

    ran = 0
    if runnable and not compile_only:
        command = ["swift", "test", "--skip-build"]
        for test in runnable:
            command += ["--filter", re.escape(test) + r"\b"]
        status, output, seconds = run(command, 600)
        ran = len(re.findall(r"✔ Test (\w+)\(\) passed", output))
        failed = sorted(set(re.findall(r"✘ Test (\w+)\(\) (?:failed|recorded)", output)))
        print(f"snippets: swift test (runnable snippets): {seconds:.0f} s")
        if status != 0 or ran != len(runnable):
            print("\n".join(l for l in output.splitlines() if "✘" in l or "error:" in l) or output[-4000:])
            for name in failed:
                print(f"snippets: runnable snippet failed: {locations.get(name, name)}")
            print(f"snippets: FAILED: {ran} of {len(runnable)} runnable snippets passed")
            return 1

    for path, (compiled, run_count) in counts.items():
        print(f"snippets: {path}: {compiled} compiled, {run_count} run")
    for block, reason in skipped:
        print(f"snippets: not compiled: {block.location} ({reason})")
    total = sum(c for c, _ in counts.values())
    print(f"snippets: {total} Swift blocks compile, {ran} ran against CourierTestServer, {len(skipped)} exempt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
