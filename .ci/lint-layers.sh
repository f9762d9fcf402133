#!/usr/bin/env bash
# Courier's layers, lowest first. A file may name the types of its own layer and of the layers
# below it, never a type declared in a layer above (CONTRIBUTING.md, "Where things go"). So the
# bottom of the library can be read, tested and changed without the top, and a new feature never
# makes the engine or a transport depend on it.
#
#   0 Model       Sources/Courier/Model: the values every layer speaks (CourierError, HTTPHeaders,
#                 HTTPMethod, HTTPVersion, TLS settings and failures, metrics, progress, and the
#                 cache vocabulary such as ResponseSource)
#   1 Encoding    Sources/Courier/Encoding: the public value encoders and JSON (JSON and its parser,
#                 JSONShape, the form and parameter encoders). The support code below the API
#                 (hashes, HTTP dates, files, descriptor I/O, percent encoding, the FastPaths
#                 switch) is not here: it is the package-only target Sources/CourierSupport, which
#                 cannot name Courier at all (the compiler checks that, not this script)
#   2 Transport   Sources/Courier/Transport (Curl/, URLSession/): the contract, both transports,
#                 what they read and hand upwards (BodyStream, ResponseHead, LazyHTTPResponse) and
#                 the limits they enforce
#   3 Core        Core/ (session, request engine, executor, request base), Serialization/, Stages/
#                 (what the engine calls by name: interceptors, validation, redirects, response-head
#                 handlers, event monitors, HTTP authentication) and Bodies/ (upload bodies)
#   4 Requests    Requests/: the request kinds (data, upload, download, data stream), the session
#                 verbs and tasks that make and await them, and the store that resumes downloads
#   5 Features    Features/: routed features behind `RequestFeature` (response cache, HTTP cache,
#                 deduplication, server pool); Extras/: add-ons built on the stages' protocols
#   6 Subsystems  Subsystems/: protocols of their own on top of requests (WebSocket, event streams)
#
# "Names" means: a capitalised identifier outside comments and string literals, not written after
# a dot (so `URLSession.ResponseDisposition` is not Courier's `ResponseDisposition`), that a
# non-private top-level `class`, `struct`, `enum`, `actor`, `protocol` or `typealias` of another
# layer declares. Every folder holding Swift files must be in the table (a new folder is placed
# on purpose). A violation that needs a redesign is listed in `allowed` below with its reason:
# keep that list short, it is debt.
#
# Within Features/, each folder is a feature of its own: a feature never names another feature's
# types (so the two caches do not form a circle again), except the shared stores listed in
# `shared_features` (Features/CacheStore: the storage both caches use, which names no feature).
# A file directly in Features/ belongs to no feature: Features/Session+Features.swift, the
# composition root, is the one place that names every routed feature (it builds a session of them).
#
# Usage: .ci/lint-layers.sh [--list]   (--list prints each folder's layer)
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PYTHON'
import os, re, sys

root = "Sources/Courier"
# Layer of each folder (relative to Sources/Courier); a subfolder inherits its nearest listed parent.
layers = [
    ("Model", ["Model"]),
    ("Encoding", ["Encoding"]),
    ("Transport", ["Transport"]),
    ("Core", ["Core", "Serialization", "Stages", "Bodies"]),
    ("Requests", ["Requests"]),
    ("Features", ["Features", "Extras"]),
    ("Subsystems", ["Subsystems"]),
]
# (file under Sources/Courier, name it may name from a higher layer): why.
allowed = {
    # Empty: the session used to name the concrete routed features it was composed of; since
    # issue 38 its public initialisers and the properties that hand the features out are
    # extensions in the features' own layers (Features/Session+Features.swift,
    # Requests/DownloadStore/Session+DownloadStore.swift), and Core keeps them as `SessionParts`.
}

# Folders under Features/ that every feature may name (they name no other feature themselves).
shared_features = {"CacheStore"}

declaration = re.compile(
    r"^(?:@\w+(?:\([^)\n]*\))?\s+)*(?:(?:public|package|internal|final|indirect|nonisolated|open)\s+)*"
    r"(?:class|struct|enum|actor|protocol|typealias)\s+([A-Z][A-Za-z0-9_]*)", re.M)

generic_list = re.compile(
    r"(?:func\s+[^\s(<]+|init[?!]?|subscript|(?:class|struct|enum|actor|typealias)\s+[A-Z][A-Za-z0-9_]*)\s*<([^>]*)>")


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'#*"""(?:.|\n)*?"""#*', '""', text)
    text = re.sub(r'#+"(?:[^"\n]|"(?!#))*"#+', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"//.*", "", text)


def layer_of(relative):
    parts = relative.split("/")[:-1]
    for depth in range(len(parts), 0, -1):
        folder = "/".join(parts[:depth])
        for index, (_, folders) in enumerate(layers):
            if folder in folders:
                return index
    return None


def feature_of(relative):
    parts = relative.split("/")
    return parts[1] if parts[0] == "Features" and len(parts) > 2 else None


sources = {}
for directory, subdirectories, names in os.walk(root):
    subdirectories[:] = sorted(d for d in subdirectories if not d.endswith(".docc"))
    for name in sorted(names):
        if name.endswith(".swift"):
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as handle:
                sources[os.path.relpath(path, root)] = strip(handle.read())

status = 0
layer = {}
for relative in sources:
    layer[relative] = layer_of(relative)
    if layer[relative] is None:
        print(f"lint-layers: {root}/{relative} is in no layer: place its folder in .ci/lint-layers.sh's table")
        status = 1
if "--list" in sys.argv:
    for folder in sorted({os.path.dirname(r) for r in sources}):
        index = layer_of(folder + "/x.swift")
        print(f"{index} {layers[index][0] if index is not None else '?':<10} {folder}")
    sys.exit(status)

declared = {}  # name -> lowest layer declaring it
feature_of_name = {}  # name -> the Features/ folder declaring it
for relative, text in sources.items():
    if layer[relative] is None:
        continue
    for name in declaration.findall(text):
        declared[name] = min(declared.get(name, 99), layer[relative])
        if feature_of(relative):
            feature_of_name.setdefault(name, set()).add(feature_of(relative))

used_allowances = set()
violations = 0
for relative, text in sorted(sources.items()):
    own = layer[relative]
    if own is None:
        continue
    # A file's own declarations, and generic parameters (which may shadow a type of any layer).
    own_names = set(declaration.findall(text))
    for generics in generic_list.findall(text):
        own_names.update(re.findall(r"(?:^|,)\s*(?:each\s+)?([A-Z][A-Za-z0-9_]*)", generics))
    named = set(re.findall(r"(?<![.\w])[A-Z][A-Za-z0-9_]*\b", text))
    for name in sorted(named - own_names):
        if declared.get(name, -1) <= own:
            continue
        if (relative, name) in allowed:
            used_allowances.add((relative, name))
            continue
        line = next(i for i, l in enumerate(text.split("\n"), 1) if re.search(rf"(?<![.\w]){name}\b", l))
        print(f"{root}/{relative}:{line}: lint-layers: {layers[own][0]} names {name}, "
              f"declared in {layers[declared[name]][0]}")
        violations += 1
# Features of one layer: a feature names its own types and the shared stores' only.
for relative, text in sorted(sources.items()):
    own_feature = feature_of(relative)
    if own_feature is None:
        continue
    own_names = set(declaration.findall(text))
    named = set(re.findall(r"(?<![.\w])[A-Z][A-Za-z0-9_]*\b", text))
    for name in sorted(named - own_names):
        others = feature_of_name.get(name, set()) - {own_feature}
        if not others or own_feature in feature_of_name.get(name, set()):
            continue
        if own_feature in shared_features or not others <= shared_features:
            line = next(i for i, l in enumerate(text.split("\n"), 1) if re.search(rf"(?<![.\w]){name}\b", l))
            print(f"{root}/{relative}:{line}: lint-layers: feature {own_feature} names {name}, "
                  f"declared in feature {', '.join(sorted(others))}")
            violations += 1
for entry in sorted(set(allowed) - used_allowances):
    print(f"lint-layers: the allowance {entry} is no longer needed: remove it from .ci/lint-layers.sh")
    status = 1
if violations:
    print(f"lint-layers: {violations} upward or cross-feature reference(s); move the type down (or into a shared "
          f"store), or name a protocol of the lower layer")
    status = 1
if status == 0:
    print(f"lint-layers: {len(sources)} files in {len(layers)} layers, no layer names a higher one, "
          f"no feature names another ({len(allowed)} allowed exceptions)")
sys.exit(status)
PYTHON
