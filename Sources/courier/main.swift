import Foundation

// courier: the command-line tool of Courier. Everything happens in CLI.run; this file only
// installs signal handling, runs it, and exits with its status.
let interrupts = Interrupts()
let status = await CLI.run(
    Array(CommandLine.arguments.dropFirst()),
    environment: ProcessInfo.processInfo.environment,
    interrupts: interrupts)
exit(status.rawValue)
