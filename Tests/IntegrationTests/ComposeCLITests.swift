import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// `context-host compose`, the terminal client: scripted in line mode (stdin is a pipe) and
/// driven through a pseudo-terminal with tmux (arrow keys, raw mode).
@Suite("compose CLI", .timeLimit(.minutes(1)))
struct ComposeCLITests {
    static let manifests = BuildProducts.packageRoot + "/manifests"
    static let envelopeMarker = "Sent. The envelope a backend receives (composer/send):"

    /// Runs `compose` with `script` on stdin (a pipe, so line mode) and returns stdout and the status.
    private func compose(_ script: [String], arguments: [String] = [], environment: [String: String] = [:]) throws -> (output: String, status: Int32) {
        let process = try HostProcess(
            arguments: ["compose", "--manifests", Self.manifests, "--library-path", BuildProducts.directory] + arguments,
            environment: environment)
        process.write(script.joined(separator: "\n") + "\n")
        process.closeInput()
        guard let status = process.waitForExit(timeout: 30) else {
            process.terminate()
            throw ComposeFailure(description: "compose did not finish; stderr: \(process.standardError)")
        }
        process.waitForOutputEnd()
        let output = process.takeOutput(timeout: 0.5) { buffer in (String(decoding: buffer, as: UTF8.self), buffer.count) } ?? ""
        return (output, status)
    }

    /// The envelope JSON printed after the marker.
    static func envelope(in output: String) throws -> JSONValue {
        let range = try #require(output.range(of: envelopeMarker), "no envelope in:\n\(output)")
        let text = output[range.upperBound...]
        let start = try #require(text.firstIndex(of: "{"))
        let end = try #require(text.lastIndex(of: "}"))
        return try JSONValue(parsing: String(text[start...end]))
    }

    /// The envelope of the Note "Groceries" with the message text.
    static func checkGroceries(_ envelope: JSONValue) throws {
        let message = try #require(envelope["message"])
        #expect(message["text"] == "What can I cook with this?")
        let items = try #require(message["contextItems"]?.arrayValue)
        #expect(items.count == 1)
        #expect(items.first?["contextType"] == "note")
        #expect(items.first?["displayName"] == "Groceries")
        #expect(items.first?["metadata"]?["provider"] == "com.contexthost.note")
        #expect(items.first?["metadata"]?["localizedDescription"] == "Note “Groceries” (6 words)")
        let encoded = try #require(items.first?["encodedContent"]?.stringValue)
        let content = try JSONValue(parsing: Array(try #require(Data(base64Encoded: encoded))))
        #expect(content == ["title": "Groceries", "body": "Milk, eggs and **bread**.\nAlso coffee.", "wordCount": 6])
        #expect(message["summary"] == "What can I cook with this?\n\nAttached context:\n- Note “Groceries” (6 words)")
    }

    @Test("line mode: pick Note, see the inline error for an empty title, fix it, open the detail, send")
    func lineModeFlow() throws {
        let (output, status) = try compose([
            "attach", "Note",
            "",  // title: empty, refused by the provider
            "Milk, eggs and **bread**.", "Also coffee.", ".",
            "Groceries",  // only the field in error is asked again
            "open", "Groceries", "",
            "send", "What can I cook with this?",
        ])
        #expect(status == 0)
        #expect(output.contains("Attach context — pick a provider:"))
        #expect(output.contains(") Note"))
        #expect(output.contains("✗ Title is required."))
        #expect(output.contains("[✎ Groceries · 6 words ▨]"))
        #expect(output.contains("Characters  38"))  // the detail's facts
        #expect(output.contains("Note “Groceries” (6 words)"))
        #expect(!output.contains("\u{1B}["))  // no colour on a pipe
        try Self.checkGroceries(try Self.envelope(in: output))
    }

    @Test("line mode: remove an item before sending; quitting sends nothing")
    func removeAndQuit() throws {
        let (output, status) = try compose([
            "attach", "Note", "First", "one two", ".",
            "attach", "Note", "Second", "three", ".",
            "remove", "First",
            "send", "",
        ])
        #expect(status == 0)
        #expect(output.contains("Removed “First”."))
        let items = try #require(try Self.envelope(in: output)["message"]?["contextItems"]?.arrayValue)
        #expect(items.map { $0["displayName"] } == ["Second"])

        let quit = try compose(["quit"])
        #expect(quit.status == 0)
        #expect(quit.output.contains("Nothing sent."))
        let ended = try compose(["attach"])  // input ends inside a menu
        #expect(ended.status == 0)
        #expect(ended.output.contains("(end of input)"))
    }

    @Test("the picker greys a provider that needs a permission, with the reason, and refuses it")
    func unavailableProvider() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.write("perm.yaml", TestManifest.yaml(
            id: "com.example.perm", library: "libFixtureProviders.so", permissions: "[network]", priority: 99))
        let (output, _) = try compose(["attach", "Test com.example.perm", "back", "quit"], arguments: ["--manifests", directory.path])
        #expect(output.contains("1) Test com.example.perm  — unavailable: "))
        #expect(output.contains("needs permission network"))
        #expect(output.contains("Test com.example.perm cannot be picked: unavailable: "))
        #expect(output.contains("Nothing sent."))
    }

    // MARK: Pseudo-terminal

    static let tmuxPath: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A private tmux server (its own TMUX_TMPDIR) running one session.
    final class Tmux {
        let socketDirectory: TemporaryDirectory
        let session = "compose"

        init(command: String) throws {
            socketDirectory = try TemporaryDirectory()
            // remain-on-exit keeps the pane (and what compose printed last) after the command ends.
            try run(["-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "100", "-y", "40", command,
                     ";", "set-option", "-t", session, "remain-on-exit", "on"])
        }

        /// Runs a tmux command and returns what it printed. It is spawned with posix_spawn and
        /// its output goes to a file: Foundation's Process watches a descriptor the child inherits,
        /// and the server `new-session` forks would keep it open, so the call would never end.
        @discardableResult
        func run(_ arguments: [String]) throws -> String {
            let outputPath = socketDirectory.path + "/output-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: outputPath) }
            var environment = ProcessInfo.processInfo.environment
            environment["TMUX_TMPDIR"] = socketDirectory.path
            environment.removeValue(forKey: "TMUX")
            let argv: [UnsafeMutablePointer<CChar>?] = ([ComposeCLITests.tmuxPath!] + arguments).map { strdup($0) } + [nil]
            let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in argv + envp { free(pointer) } }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            var pid: pid_t = 0
            let status = posix_spawn(&pid, ComposeCLITests.tmuxPath!, &actions, nil, argv, envp)
            guard status == 0 else { throw ComposeFailure(description: "cannot start tmux: errno \(status)") }
            var exitStatus: Int32 = 0
            while waitpid(pid, &exitStatus, 0) < 0 && errno == EINTR {}
            return (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        }

        func keys(_ keys: String...) throws { try run(["send-keys", "-t", session] + keys) }
        /// Types text literally.
        func type(_ text: String) throws { try run(["send-keys", "-t", session, "-l", text]) }
        /// Types a line of text and Enter.
        func enter(_ text: String) throws {
            try type(text)
            try keys("Enter")
        }

        /// Picks entry `number` of the menu on screen with the arrow keys (from the first entry),
        /// once the screen shows it selected as `▸ number) label`.
        func choose(_ number: Int, _ label: String) throws {
            for _ in 1..<number { try keys("Down") }
            try waitFor("▸ \(number)) \(label)")
            try keys("Enter")
        }

        func screen() throws -> String { try run(["capture-pane", "-p", "-J", "-t", session, "-S", "-200"]) }

        /// Waits until the screen contains every one of `texts`; fails with the screen after `timeout`.
        @discardableResult
        func waitFor(_ texts: String..., timeout: Double = 15) throws -> String {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                let screen = try screen()
                if texts.allSatisfy(screen.contains) { return screen }
                if Date() > deadline { throw ComposeFailure(description: "timed out waiting for \(texts) on:\n\(screen)") }
                usleep(50_000)
            }
        }

        /// Ends the private server and everything in it.
        func kill() {
            let pids = ((try? run(["display-message", "-p", "-t", session, "#{pid} #{pane_pid}"])) ?? "")
                .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            _ = try? run(["kill-server"])
            usleep(100_000)
            // Whatever survived (a compose still running after a failure): only our own processes,
            // recognised by their command line.
            for pid in pids where pid > 0 {
                let commandLine = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
                if commandLine.contains("tmux") || commandLine.contains("compose") { _ = Foundation.kill(pid, SIGKILL) }
            }
        }
    }

    @Test("pseudo-terminal: arrow keys pick Note, the form shows the error inline, attach, detail, send")
    func pseudoTerminal() throws {
        // Fails, never skips, without tmux (.ci/run installs it).
        try #require(Self.tmuxPath != nil, "tmux is not installed (apt-get install tmux; .ci/run does)")
        let command = "cd '\(BuildProducts.packageRoot)' && NO_COLOR=1 TERM=xterm-256color XDG_STATE_HOME=/nonexistent "
            + "'\(BuildProducts.hostExecutable)' compose --manifests '\(Self.manifests)' --library-path '\(BuildProducts.directory)'; "
            + "echo \"[compose exited $?]\""
        let tmux = try Tmux(command: command)
        defer { tmux.kill() }
        try tmux.waitFor("What next?", "▸ 1) Attach context…")
        try tmux.keys("Enter")
        let picker = try tmux.waitFor("Attach context — pick a provider:", "▸ 1)")
        // Note's place in the priority order, then arrow keys down to it.
        let noteLine = try #require(picker.split(separator: "\n").first { $0.hasSuffix(") Note") })
        let number = try #require(Int(noteLine.drop { !$0.isNumber }.prefix { $0.isNumber }))
        try tmux.choose(number, "Note")

        try tmux.waitFor("New Note", "Title>")
        try tmux.keys("Enter")  // an empty title
        try tmux.waitFor("Body (end with '.')>")
        try tmux.enter("Milk, eggs and **bread**.")
        try tmux.waitFor("│ Milk, eggs and **bread**.", "Body>")
        try tmux.enter("Also coffee.")
        try tmux.waitFor("│ Also coffee.")
        try tmux.enter(".")
        try tmux.waitFor("✗ Title is required.", "Title>")
        try tmux.enter("Groceries")

        try tmux.waitFor("[✎ Groceries · 6 words ▨]", "Attached “Groceries”.", "What next?")
        try tmux.choose(2, "Open an item")
        try tmux.waitFor("Open which item?")
        try tmux.choose(1, "[✎ Groceries · 6 words ▨]")
        try tmux.waitFor("Characters  38", "Words       6", "Back to the message")
        try tmux.keys("Enter")

        try tmux.waitFor("What next?")
        try tmux.choose(4, "Send")
        try tmux.waitFor("Message>")
        try tmux.enter("What can I cook with this?")
        let final = try tmux.waitFor("[compose exited 0]")
        try Self.checkGroceries(try Self.envelope(in: final.components(separatedBy: "[compose exited")[0]))
    }
}

/// A compose test that could not go on.
struct ComposeFailure: Error, CustomStringConvertible {
    var description: String
}
