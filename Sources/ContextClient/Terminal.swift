import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One entry of a menu.
public struct MenuOption: Sendable, Equatable {
    /// What is shown (may contain ANSI colour).
    public var label: String
    /// Whether it can be picked; disabled ones are shown greyed with `note`.
    public var enabled: Bool
    /// Why it is disabled, or a remark.
    public var note: String?

    public init(_ label: String, enabled: Bool = true, note: String? = nil) {
        self.label = label
        self.enabled = enabled
        self.note = note
    }
}

/// The answer to a search-backed choice.
public enum SearchAnswer: Equatable, Sendable {
    /// An option's value.
    case picked(String)
    /// No value (the field is left out).
    case skipped
    /// Cancel the form (Esc, end of input).
    case cancelled
}

/// What the compose flow needs from a terminal. Two implementations: ``LineTerminal`` (plain
/// lines, for pipes and scripts) and ``RawTerminal`` (arrow keys on a TTY).
public protocol ComposeTerminal: AnyObject {
    /// Columns available.
    var width: Int { get }
    /// Whether the screen is redrawn for every question (a raw terminal), rather than printed once.
    var redraws: Bool { get }
    /// Whether ANSI colour may be used.
    var color: Bool { get }
    /// Sets what is shown above the next question (a line terminal prints it at once).
    func show(_ lines: [String])
    /// Asks to pick one of `options`, starting at `preselected` (an empty answer takes it); nil
    /// means back (Esc, or an empty answer without `preselected`) or end of input.
    func menu(_ title: String, _ options: [MenuOption], preselected: Int?) -> Int?
    /// Asks for one line of text; nil means cancel (Esc) or end of input.
    func readLine(_ prompt: String, initial: String) -> String?
    /// A choice answered by live search: `search(query)` gives the options for what was typed.
    func searchChoice(_ title: String, minimumQueryLength: Int, search: (String) -> [(value: String, option: MenuOption)]) -> SearchAnswer
    /// Waits for Enter; false at end of input.
    func pause(_ prompt: String) -> Bool
    /// Whether input has ended (EOF on a line terminal).
    var inputEnded: Bool { get }
    /// Leaves the interactive screen and prints `text` on standard output.
    func finish(printing text: String)
}

extension ComposeTerminal {
    /// A menu with nothing preselected.
    public func menu(_ title: String, _ options: [MenuOption]) -> Int? {
        menu(title, options, preselected: nil)
    }
}

/// Writes bytes to a file descriptor, all of them.
func writeAll(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeMutableBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
    bytes.removeAll()
}

// MARK: - Line mode

/// Plain line input and output: numbered menus, one answer per line, deterministic output, so
/// the client can be scripted. Answers are echoed after the prompt (`> 2`) so a transcript reads
/// like a session. A menu answer may be the number, or (part of) the option's text.
public final class LineTerminal: ComposeTerminal {
    public let width: Int
    public let color: Bool
    public var redraws: Bool { false }
    public private(set) var inputEnded = false
    private let inputFD: Int32
    private let outputFD: Int32
    private var pending: [UInt8] = []

    public init(width: Int, color: Bool, inputFD: Int32 = STDIN_FILENO, outputFD: Int32 = STDOUT_FILENO) {
        self.width = max(width, 20)
        self.color = color
        self.inputFD = inputFD
        self.outputFD = outputFD
    }

    private func emit(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        writeAll(outputFD, lines.joined(separator: "\n") + "\n")
    }

    public func show(_ lines: [String]) { emit(lines) }

    /// Reads one line from the input (without its newline); nil at end of input.
    private func nextLine() -> String? {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                var line = Array(pending[..<newline])
                pending.removeFirst(newline + 1)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(inputFD, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                if pending.isEmpty { inputEnded = true; return nil }
                defer { pending.removeAll() }
                return String(decoding: pending, as: UTF8.self)
            }
            pending.append(contentsOf: chunk[..<count])
        }
    }

    private func ask(_ prompt: String) -> String? {
        writeAll(outputFD, prompt + "> ")
        guard let line = nextLine() else {
            writeAll(outputFD, "(end of input)\n")
            return nil
        }
        writeAll(outputFD, line + "\n")
        return line
    }

    public func menu(_ title: String, _ options: [MenuOption], preselected: Int?) -> Int? {
        var lines = [CtxuiRender.styled(title, [.bold], color: color)
            + (preselected.map { options.indices.contains($0) ? CtxuiRender.styled(" (empty line: \($0 + 1))", [.dim], color: color) : "" } ?? "")]
        for (index, option) in options.enumerated() {
            let number = "\(index + 1))"
            var text = "  \(number) " + (option.enabled ? option.label : CtxuiRender.styled(option.label, [.dim], color: color))
            if let note = option.note { text += CtxuiRender.styled("  — " + note, [.dim], color: color) }
            lines.append(text)
        }
        emit(lines)
        while true {
            guard let answer = ask("") else { return nil }
            let trimmed = answer.trimmingWhitespace()
            if trimmed.isEmpty, let preselected, options.indices.contains(preselected) { return preselected }
            if trimmed.isEmpty || trimmed == "-" || trimmed.lowercased() == "back" { return nil }
            guard let index = Self.match(trimmed, options) else {
                emit(["'\(trimmed)' is not one of the options; answer with a number from 1 to \(options.count)."])
                continue
            }
            guard options[index].enabled else {
                emit(["\(CtxuiRender.stripANSI(options[index].label)) cannot be picked: \(options[index].note ?? "unavailable")."])
                continue
            }
            return index
        }
    }

    /// The option an answer names: its number, its text, or a unique part of its text.
    static func match(_ answer: String, _ options: [MenuOption]) -> Int? {
        if let number = Int(answer) { return (1...max(options.count, 1)).contains(number) && number <= options.count ? number - 1 : nil }
        let needle = answer.lowercased()
        let labels = options.map { CtxuiRender.stripANSI($0.label).lowercased() }
        if let exact = labels.firstIndex(of: needle) { return exact }
        let prefixed = labels.indices.filter { labels[$0].hasPrefix(needle) }
        if prefixed.count == 1 { return prefixed[0] }
        let containing = labels.indices.filter { labels[$0].contains(needle) }
        return containing.count == 1 ? containing[0] : nil
    }

    public func readLine(_ prompt: String, initial: String) -> String? {
        ask(prompt)
    }

    public func searchChoice(_ title: String, minimumQueryLength: Int, search: (String) -> [(value: String, option: MenuOption)]) -> SearchAnswer {
        while true {
            emit([CtxuiRender.styled(title, [.bold], color: color) + " — type at least \(minimumQueryLength) character(s) to search; an empty line skips"])
            guard let query = ask("search") else { return .cancelled }
            if query.isEmpty { return .skipped }
            guard query.count >= minimumQueryLength else {
                emit(["Type at least \(minimumQueryLength) character(s)."])
                continue
            }
            let results = search(query)
            if results.isEmpty {
                emit(["No matches for '\(query)'."])
                continue
            }
            var options = results.map(\.option)
            options.append(MenuOption("(search again)"))
            guard let index = menu("Matches for '\(query)':", options, preselected: nil) else { return inputEnded ? .cancelled : .skipped }
            if index < results.count { return .picked(results[index].value) }
        }
    }

    public func pause(_ prompt: String) -> Bool {
        ask(prompt) != nil
    }

    public func finish(printing text: String) {
        writeAll(outputFD, text.hasSuffix("\n") ? text : text + "\n")
    }
}

// MARK: - TTY mode

/// The terminal state to restore at exit, kept where a signal handler can reach it.
nonisolated(unsafe) private var savedTermios = termios()
nonisolated(unsafe) private var rawModeActive = false

/// Puts the terminal back (cooked mode, main screen, cursor shown). Safe in a signal handler.
private func restoreTerminal() {
    guard rawModeActive else { return }
    rawModeActive = false
    _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &savedTermios)
    let leave = "\u{1B}[?25h\u{1B}[?1049l"
    _ = leave.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
}

/// A key read in raw mode.
enum Key: Equatable {
    case up, down, left, right, enter, escape, backspace, character(Character), clearLine, endOfInput, other
}

/// Raw-mode terminal: arrow keys and Enter, Esc to go back, a redraw on every key, the width
/// from `TIOCGWINSZ`, the alternate screen while running; the terminal is restored on exit and
/// on SIGINT/SIGTERM.
public final class RawTerminal: ComposeTerminal {
    public let color: Bool
    public var redraws: Bool { true }
    public private(set) var inputEnded = false
    private var body: [String] = []

    /// Enters raw mode; nil when stdin is not a terminal.
    public init?(color: Bool) {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &savedTermios) == 0 else { return nil }
        self.color = color
        var raw = savedTermios
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else { return nil }
        rawModeActive = true
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber) { number in
                restoreTerminal()
                _exit(128 + number)
            }
        }
        writeAll(STDOUT_FILENO, "\u{1B}[?1049h\u{1B}[?25l")
    }

    deinit { restoreTerminal() }

    public var width: Int { max(size().columns, 20) }

    private func size() -> (columns: Int, rows: Int) {
        var window = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 {
            return (Int(window.ws_col), Int(window.ws_row))
        }
        return (80, 24)
    }

    public func show(_ lines: [String]) { body = lines }

    /// Clears the screen and draws the body (clipped to fit, from line `scroll`) and then `interaction`.
    /// Returns how many body lines did not fit below the shown ones.
    @discardableResult
    private func draw(_ interaction: [String], scroll: Int = 0) -> Int {
        let (columns, rows) = size()
        var shownBody = Array(body.dropFirst(scroll))
        let room = max(rows - interaction.count - 1, 3)
        var hidden = 0
        if shownBody.count > room {
            hidden = shownBody.count - room + 1
            shownBody = Array(shownBody.prefix(room - 1)) + [CtxuiRender.styled("… \(hidden) more lines (↓ to scroll)", [.dim], color: color)]
        }
        var screen = "\u{1B}[H"
        for line in shownBody + interaction {
            screen += (CtxuiRender.visibleWidth(line) > columns ? CtxuiRender.truncate(CtxuiRender.stripANSI(line), width: columns) : line) + "\u{1B}[K\r\n"
        }
        screen += "\u{1B}[J"
        writeAll(STDOUT_FILENO, screen)
        return hidden
    }

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count == 1 { return byte }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// Whether another byte arrives within `milliseconds`.
    private func byteWaiting(_ milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }

    private func readKey() -> Key {
        guard let byte = readByte() else { inputEnded = true; return .endOfInput }
        switch byte {
        case 0x0D, 0x0A: return .enter
        case 0x7F, 0x08: return .backspace
        case 0x15: return .clearLine
        case 0x04: return .endOfInput
        case 0x1B:
            guard byteWaiting(50), let next = readByte() else { return .escape }
            guard next == 0x5B || next == 0x4F, let code = readByte() else { return .other }
            switch code {
            case 0x41: return .up
            case 0x42: return .down
            case 0x43: return .right
            case 0x44: return .left
            default:
                while code >= 0x30 && code <= 0x39, byteWaiting(10), let more = readByte(), more != 0x7E {}
                return .other
            }
        case 0x20...0x7E: return .character(Character(Unicode.Scalar(byte)))
        case 0xC0...0xF7:
            var bytes = [byte]
            let extra = byte >= 0xF0 ? 3 : byte >= 0xE0 ? 2 : 1
            for _ in 0..<extra { if let more = readByte() { bytes.append(more) } }
            return String(decoding: bytes, as: UTF8.self).first.map(Key.character) ?? .other
        default: return .other
        }
    }

    private func menuLines(_ title: String, _ options: [MenuOption], selected: Int, footer: String) -> [String] {
        var lines = [CtxuiRender.styled(title, [.bold], color: color)]
        for (index, option) in options.enumerated() {
            let pointer = index == selected ? "▸ " : "  "
            var text = pointer + "\(index + 1)) " + option.label
            if let note = option.note { text += "  — " + note }
            if index == selected {
                text = CtxuiRender.styled(CtxuiRender.stripANSI(text), [.reverse], color: color)
            } else if !option.enabled {
                text = CtxuiRender.styled(CtxuiRender.stripANSI(text), [.dim], color: color)
            }
            lines.append(text)
        }
        lines.append(CtxuiRender.styled(footer, [.dim], color: color))
        return lines
    }

    public func menu(_ title: String, _ options: [MenuOption], preselected: Int?) -> Int? {
        var selected = preselected.flatMap { options.indices.contains($0) ? $0 : nil } ?? options.firstIndex(where: \.enabled) ?? 0
        var message = "↑/↓ move · Enter pick · Esc back"
        while true {
            draw(menuLines(title, options, selected: selected, footer: message))
            message = "↑/↓ move · Enter pick · Esc back"
            switch readKey() {
            case .up: selected = (selected + options.count - 1) % max(options.count, 1)
            case .down: selected = (selected + 1) % max(options.count, 1)
            case .enter:
                guard options.indices.contains(selected) else { continue }
                if options[selected].enabled { return selected }
                message = "\(CtxuiRender.stripANSI(options[selected].label)) cannot be picked: \(options[selected].note ?? "unavailable")."
            case .character(let character):
                if let digit = character.wholeNumberValue, options.indices.contains(digit - 1) { selected = digit - 1 }
            case .escape, .endOfInput: return nil
            default: continue
            }
        }
    }

    public func readLine(_ prompt: String, initial: String) -> String? {
        var text = initial
        while true {
            draw([prompt + "> " + text + (color ? "\u{1B}[7m \u{1B}[0m" : "_"),
                  CtxuiRender.styled("Enter accept · Esc cancel · Ctrl-U clear", [.dim], color: color)])
            switch readKey() {
            case .enter: return text
            case .escape, .endOfInput: return nil
            case .backspace: if !text.isEmpty { text.removeLast() }
            case .clearLine: text = ""
            case .character(let character): text.append(character)
            default: continue
            }
        }
    }

    public func searchChoice(_ title: String, minimumQueryLength: Int, search: (String) -> [(value: String, option: MenuOption)]) -> SearchAnswer {
        var query = ""
        var results: [(value: String, option: MenuOption)] = []
        var selected = 0
        while true {
            var lines = [CtxuiRender.styled(title, [.bold], color: color), "search> " + query + (color ? "\u{1B}[7m \u{1B}[0m" : "_")]
            if query.count < minimumQueryLength {
                lines.append(CtxuiRender.styled("type at least \(minimumQueryLength) character(s)", [.dim], color: color))
            } else if results.isEmpty {
                lines.append(CtxuiRender.styled("no matches", [.dim], color: color))
            } else {
                lines += menuLines("", results.map(\.option), selected: selected, footer: "").dropFirst().dropLast()
            }
            lines.append(CtxuiRender.styled("type to search · ↑/↓ move · Enter pick (with no matches: skip) · Esc cancel", [.dim], color: color))
            draw(lines)
            var changed = false
            switch readKey() {
            case .up: if !results.isEmpty { selected = (selected + results.count - 1) % results.count }
            case .down: if !results.isEmpty { selected = (selected + 1) % results.count }
            case .enter:
                if results.isEmpty { return .skipped }
                if results.indices.contains(selected), results[selected].option.enabled { return .picked(results[selected].value) }
            case .escape, .endOfInput: return .cancelled
            case .backspace: if !query.isEmpty { query.removeLast(); changed = true }
            case .clearLine: query = ""; changed = true
            case .character(let character): query.append(character); changed = true
            default: continue
            }
            if changed {
                results = query.count >= minimumQueryLength ? search(query) : []
                selected = 0
            }
        }
    }

    public func pause(_ prompt: String) -> Bool {
        var scroll = 0
        while true {
            let hidden = draw([CtxuiRender.styled(prompt + " (Enter) · ↑/↓ scroll", [.dim], color: color)], scroll: scroll)
            switch readKey() {
            case .enter, .escape: return true
            case .endOfInput: return false
            case .down: if hidden > 0 { scroll += 1 }
            case .up: scroll = max(scroll - 1, 0)
            default: continue
            }
        }
    }

    public func finish(printing text: String) {
        restoreTerminal()
        writeAll(STDOUT_FILENO, text.hasSuffix("\n") ? text : text + "\n")
    }
}

extension CtxuiRender {
    /// `text` without ANSI escape sequences.
    public static func stripANSI(_ text: String) -> String {
        var result = ""
        var inEscape = false
        for character in text {
            if inEscape {
                if character.isLetter { inEscape = false }
            } else if character == "\u{1B}" {
                inEscape = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}
