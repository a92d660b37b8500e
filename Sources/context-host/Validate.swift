import ArgumentParser
import ContextHost

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ContextHostCommand {
    /// `validate FILE…`: checks manifests and reports every problem with its position.
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check manifest files; exit 1 if any has an error.",
            discussion: "Reports every problem as file:line:column, the field, a stable code and how to fix it. Also resolves each 'library' (confinement rules included) and checks a 'sha256' pin against the file, without loading it.")

        @OptionGroup var options: HostOptions

        @Argument(help: ArgumentHelp("Manifest files to check.", valueName: "file"))
        var files: [String]

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("Name at least one manifest file, e.g. 'context-host validate manifests/note.yaml'.") }
        }

        func run() throws {
            let configuration = options.hostConfiguration()
            var failures = 0
            for file in files {
                let problems = ManifestValidation.check(file: file, configuration: configuration)
                if problems.isEmpty {
                    print("\(file): ok")
                } else {
                    failures += 1
                    for problem in problems { print(problem.description) }
                }
            }
            print(failures == 0 ? "\(files.count) manifest(s) valid." : "\(failures) of \(files.count) manifest(s) have errors.")
            if failures > 0 { throw ExitCode(1) }
        }
    }
}
