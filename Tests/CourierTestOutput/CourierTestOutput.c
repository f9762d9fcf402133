// A readable `swift test`: the test process runs as `swift test --quiet` would, unless asked otherwise.
//
// Swift Testing prints two lines for every test and test case (started, passed), several thousand
// for this package, so that a failure is hard to find. Its quiet mode prints each issue and the
// summary. SwiftPM has no setting for it but the `--quiet` flag, which a newcomer does not know to
// pass, so this constructor adds it to the arguments of the Swift Testing run (the one SwiftPM
// starts with `--testing-library swift-testing`) before Swift reads them, through the runtime's
// `_swift_stdlib_overrideUnsafeArgvArgc`. It does nothing when:
//   - COURIER_TEST_VERBOSE=1 is set (every test's lines are printed; .ci/run sets it);
//   - the command line already chose a verbosity (`--verbose`, `--very-verbose`, `--quiet`, ...);
//   - the process is not a Swift Testing run (XCTest's run, `swift test list`, a child process).
// Skipped groups of tests are named once each by the tests themselves (CourierTestSupport's
// SkipNotice), since the quiet mode names no skipped test.
#include <stdlib.h>
#include <string.h>
#include "CourierTestOutput.h"

extern void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);

static int quiet = 0;

int courier_test_output_is_quiet(void) { return quiet; }

static int chooses_verbosity(const char *argument) {
    static const char *const flags[] = {"--verbose", "-v", "--very-verbose", "--vv", "--quiet", "-q", "--verbosity"};
    for (size_t index = 0; index < sizeof flags / sizeof flags[0]; index++) {
        size_t length = strlen(flags[index]);
        if (strncmp(argument, flags[index], length) == 0 && (argument[length] == '\0' || argument[length] == '=')) return 1;
    }
    return 0;
}

__attribute__((constructor)) static void courier_test_output_quiet(int argc, char **argv, char **envp) {
    (void)envp;
    const char *verbose = getenv("COURIER_TEST_VERBOSE");
    if (verbose != NULL && strcmp(verbose, "1") == 0) return;
    if (argc < 1 || argv == NULL) return;
    int swiftTesting = 0;
    for (int index = 1; index < argc; index++) {
        if (chooses_verbosity(argv[index]) || strcmp(argv[index], "--list-tests") == 0) return;
        if (index + 1 < argc && strcmp(argv[index], "--testing-library") == 0 && strcmp(argv[index + 1], "swift-testing") == 0) {
            swiftTesting = 1;
        }
    }
    if (!swiftTesting) return;
    // Lives as long as the process: the runtime keeps the pointer.
    char **arguments = calloc((size_t)argc + 2, sizeof(char *));
    if (arguments == NULL) return;
    memcpy(arguments, argv, (size_t)argc * sizeof(char *));
    arguments[argc] = "--quiet";
    _swift_stdlib_overrideUnsafeArgvArgc(arguments, argc + 1);
    quiet = 1;
}
