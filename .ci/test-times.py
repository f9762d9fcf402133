#!/usr/bin/env python3
"""Prints the slowest tests of a CI run, from the JUnit XML files `swift test --xunit-output`
writes (Swift Testing's is `NAME-swift-testing.xml` beside XCTest's `NAME.xml`).

Usage: .ci/test-times.py [--top N] DIRECTORY
Each XML file in DIRECTORY is one test step; its name (without `.xml` and `-swift-testing`) is
the step's label. Prints the N slowest test cases (20 by default) over all steps, with the
step they ran in, then each step's test count and summed test time. A test that ran in several
steps is listed once per step: drift shows as the same test creeping up in every run.
"""
import glob
import os
import sys
import xml.etree.ElementTree as ElementTree


def main(argv):
    top = 20
    if len(argv) >= 2 and argv[0] == "--top":
        top = int(argv[1])
        argv = argv[2:]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    cases = []
    totals = {}
    walls = {}
    for path in sorted(glob.glob(os.path.join(argv[0], "*.xml"))):
        label = os.path.basename(path)[: -len(".xml")]
        if label.endswith("-swift-testing"):
            label = label[: -len("-swift-testing")]
        try:
            root = ElementTree.parse(path).getroot()
        except (ElementTree.ParseError, OSError) as error:
            print(f"  ({os.path.basename(path)}: unreadable, {error})")
            continue
        for suite in root.iter("testsuite"):
            try:
                walls[label] = walls.get(label, 0.0) + float(suite.get("time", "0"))
            except ValueError:
                pass
        for case in root.iter("testcase"):
            try:
                seconds = float(case.get("time", "0"))
            except ValueError:
                continue
            name = f"{case.get('classname', '?')}/{case.get('name', '?')}"
            cases.append((seconds, name, label))
            count, summed = totals.get(label, (0, 0.0))
            totals[label] = (count + 1, summed + seconds)
    if not cases:
        print("  (no test results were written)")
        return 0
    cases.sort(reverse=True)
    width = max(len(label) for _, _, label in cases[:top])
    for seconds, name, label in cases[:top]:
        print(f"  {seconds:8.1f} s  {label:<{width}}  {name}")
    print("  (A step that runs the suite runs its tests in parallel: a test's time there includes the time")
    print("  it waited for a processor while the others ran, so compare a test with itself across runs.)")
    print()
    for label, (count, summed) in sorted(totals.items()):
        wall = f", {walls[label]:.0f} s from first start to last end" if label in walls else ""
        print(f"  {label}: {count} tests{wall}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
