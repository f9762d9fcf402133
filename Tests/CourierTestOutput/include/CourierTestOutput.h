#ifndef COURIER_TEST_OUTPUT_H
#define COURIER_TEST_OUTPUT_H

/// Whether this test process asked Swift Testing for its quiet output: `swift test` then prints
/// the failures and a summary, not every test that started and passed (see CourierTestOutput.c).
int courier_test_output_is_quiet(void);

#endif
