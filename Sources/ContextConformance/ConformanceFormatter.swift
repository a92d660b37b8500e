import ContextHost
import ContextProviderKit
import ContextWire

/// Report formats: readable text (optionally coloured), TAP 13, JUnit XML and JSON.
public enum ConformanceFormat: String, Sendable, CaseIterable {
    case text, tap, junit, json
}

/// Renders a `ConformanceReport`.
public enum ConformanceFormatter {
    /// The report in `format`.
    public static func render(_ report: ConformanceReport, format: ConformanceFormat, colour: Bool = false) -> String {
        switch format {
        case .text: text(report, colour: colour)
        case .tap: tap(report)
        case .junit: junit(report)
        case .json: json(report).jsonString + "\n"
        }
    }

    // MARK: Text

    /// A readable report: one block per provider and mode, failures with their evidence and fix.
    public static func text(_ report: ConformanceReport, colour: Bool) -> String {
        func paint(_ text: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        var lines: [String] = []
        for provider in report.providers {
            lines.append(paint("\(provider.name)", "1") + " (\(provider.mode.rawValue)) — \(provider.manifestPath)")
            for result in provider.results {
                let mark: String
                switch result.status {
                case .passed: mark = paint("✔", "32")
                case .warning: mark = paint("⚠", "33")
                case .failed: mark = paint("✘", "31")
                case .expectedFailure: mark = paint("✘", "35")
                case .skipped: mark = paint("–", "90")
                }
                let suffix = result.status == .expectedFailure ? " (expected failure, in the baseline)" : ""
                let message = result.status == .skipped ? paint(result.message, "90") : result.message
                lines.append("  \(mark) \(result.id)  \(message)\(suffix)")
                if result.status == .failed || result.status == .warning || result.status == .expectedFailure {
                    for detail in result.details.prefix(12) { lines.append("      \(detail)") }
                    if result.details.count > 12 { lines.append("      … and \(result.details.count - 12) more") }
                }
            }
            lines.append("")
        }
        for stale in report.staleBaselineEntries {
            lines.append(paint("✘", "31") + " baseline \(stale.location): '\(stale.entry)' is stale: \(stale.reason)")
        }
        if let path = report.galleryPath { lines.append("Gallery: \(path)") }
        if let problem = report.galleryProblem { lines.append(paint("Gallery not written: \(problem)", "31")) }
        let summary = summaryLine(report)
        lines.append(report.passed ? paint(summary, "32") : paint(summary, "31"))
        return lines.joined(separator: "\n") + "\n"
    }

    static func summaryLine(_ report: ConformanceReport) -> String {
        var parts = ["\(report.count(.passed)) passed", "\(report.count(.warning)) warning(s)", "\(report.count(.failed)) failed"]
        if report.count(.expectedFailure) > 0 { parts.append("\(report.count(.expectedFailure)) expected failure(s)") }
        parts.append("\(report.count(.skipped)) skipped")
        if !report.staleBaselineEntries.isEmpty { parts.append("\(report.staleBaselineEntries.count) stale baseline entr(ies)") }
        let runs = report.providers.count
        return "\(report.passed ? "PASS" : "FAIL"): \(runs) run(s): " + parts.joined(separator: ", ") + "."
    }

    // MARK: TAP

    /// TAP version 13: one test point per check and provider/mode, skips as `# SKIP`, expected
    /// failures as `# TODO`, failures and warnings with a YAML block.
    public static func tap(_ report: ConformanceReport) -> String {
        var lines = ["TAP version 13"]
        let total = report.providers.reduce(0) { $0 + $1.results.count } + report.staleBaselineEntries.count
        lines.append("1..\(total)")
        var number = 0
        func escape(_ text: String) -> String {
            text.replacingControlCharacters().replacing("\\", with: "\\\\").replacing("#", with: "\\#")
        }
        func yaml(_ fields: [(String, String)], details: [String]) {
            lines.append("  ---")
            for (key, value) in fields { lines.append("  \(key): \(yamlString(value))") }
            if !details.isEmpty {
                lines.append("  details:")
                for detail in details { lines.append("    - \(yamlString(detail))") }
            }
            lines.append("  ...")
        }
        for provider in report.providers {
            for result in provider.results {
                number += 1
                let description = escape("\(provider.name) [\(provider.mode.rawValue)] \(result.id): \(result.message)")
                switch result.status {
                case .passed:
                    lines.append("ok \(number) - \(description)")
                case .warning:
                    lines.append("ok \(number) - \(description)")
                    yaml([("severity", "warning"), ("check", result.id), ("manifest", provider.manifestPath)], details: result.details)
                case .skipped:
                    lines.append("ok \(number) - \(escape("\(provider.name) [\(provider.mode.rawValue)] \(result.id)")) # SKIP \(escape(result.message))")
                case .expectedFailure:
                    lines.append("not ok \(number) - \(description) # TODO expected failure (baseline)")
                case .failed:
                    lines.append("not ok \(number) - \(description)")
                    yaml([("severity", "fail"), ("check", result.id), ("manifest", provider.manifestPath), ("mode", provider.mode.rawValue)], details: result.details)
                }
            }
        }
        for stale in report.staleBaselineEntries {
            number += 1
            lines.append("not ok \(number) - \(escape("baseline \(stale.location): '\(stale.entry)' is stale"))")
            yaml([("severity", "fail"), ("reason", stale.reason)], details: [])
        }
        if let path = report.galleryPath { lines.append("# gallery: " + escape(path)) }
        if let problem = report.galleryProblem { lines.append("# gallery not written: " + escape(problem)) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A double-quoted YAML scalar. Besides `"` and `\\`, control characters become `\n`, `\t`,
    /// `\xNN`, and `:` becomes `\x3a`: TAP::Parser's YAMLish reader (behind `prove`) reads a list
    /// item containing `: ` as a mapping, and every YAML parser decodes the escape.
    static func yamlString(_ text: String) -> String {
        let escaped = TextEscaping.escape(text, yamlEscapes) { scalar, result in
            if TextEscaping.isControl(scalar) {
                let hex = String(scalar.value, radix: 16)
                result += "\\x" + String(repeating: "0", count: 2 - hex.count) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return "\"" + escaped + "\""
    }

    private static let yamlEscapes: [Unicode.Scalar: String] = ["\"": "\\\"", "\\": "\\\\", "\n": "\\n", "\t": "\\t", ":": "\\x3a"]

    // MARK: JUnit

    /// JUnit XML (the Ant/Surefire dialect Jenkins, GitLab and GitHub read): one `testsuite` per
    /// provider and mode, one `testcase` per check; warnings go to the test case's `system-out`.
    public static func junit(_ report: ConformanceReport) -> String {
        var lines = [#"<?xml version="1.0" encoding="UTF-8"?>"#]
        let tests = report.providers.reduce(0) { $0 + $1.results.count } + report.staleBaselineEntries.count
        let failures = report.count(.failed) + report.staleBaselineEntries.count
        let totalMs = report.providers.reduce(0.0) { $0 + $1.results.reduce(0.0) { $0 + $1.durationMs } }
        lines.append(#"<testsuites name="context-host conformance" tests="\#(tests)" failures="\#(failures)" errors="0" time="\#(seconds(totalMs))">"#)
        for provider in report.providers {
            let suiteMs = provider.results.reduce(0.0) { $0 + $1.durationMs }
            let suiteFailures = provider.results.filter { $0.status == .failed }.count
            let skipped = provider.results.filter { $0.status == .skipped || $0.status == .expectedFailure }.count
            lines.append(#"  <testsuite name="\#(xml(provider.name)) (\#(provider.mode.rawValue))" tests="\#(provider.results.count)" failures="\#(suiteFailures)" errors="0" skipped="\#(skipped)" time="\#(seconds(suiteMs))" file="\#(xml(provider.manifestPath))">"#)
            lines.append("    <properties>")
            lines.append(#"      <property name="manifest" value="\#(xml(provider.manifestPath))"/>"#)
            lines.append(#"      <property name="mode" value="\#(provider.mode.rawValue)"/>"#)
            if let path = report.galleryPath { lines.append(#"      <property name="gallery" value="\#(xml(path))"/>"#) }
            lines.append("    </properties>")
            let classname = xml("\(provider.name).\(provider.mode.rawValue)")
            for result in provider.results {
                let open = #"    <testcase name="\#(result.id)" classname="\#(classname)" time="\#(seconds(result.durationMs))""#
                let body = ([result.message] + result.details).joined(separator: "\n")
                switch result.status {
                case .passed:
                    lines.append(open + "/>")
                case .warning:
                    lines.append(open + ">")
                    lines.append("      <system-out>\(xml("warning: " + body))</system-out>")
                    lines.append("    </testcase>")
                case .skipped:
                    lines.append(open + ">")
                    lines.append(#"      <skipped message="\#(xml(result.message))"/>"#)
                    lines.append("    </testcase>")
                case .expectedFailure:
                    lines.append(open + ">")
                    lines.append(#"      <skipped message="\#(xml("expected failure (baseline): " + result.message))"/>"#)
                    lines.append("    </testcase>")
                case .failed:
                    lines.append(open + ">")
                    lines.append(#"      <failure message="\#(xml(result.message))" type="\#(result.id)">\#(xml(body))</failure>"#)
                    lines.append("    </testcase>")
                }
            }
            lines.append("  </testsuite>")
        }
        if !report.staleBaselineEntries.isEmpty {
            lines.append(#"  <testsuite name="baseline" tests="\#(report.staleBaselineEntries.count)" failures="\#(report.staleBaselineEntries.count)" errors="0" time="0">"#)
            for stale in report.staleBaselineEntries {
                lines.append(#"    <testcase name="\#(xml(stale.entry))" classname="baseline" time="0">"#)
                lines.append(#"      <failure message="\#(xml("stale baseline entry at \(stale.location)"))" type="baseline.stale">\#(xml(stale.reason))</failure>"#)
                lines.append("    </testcase>")
            }
            lines.append("  </testsuite>")
        }
        lines.append("</testsuites>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Seconds with three decimals (the Surefire `time` pattern).
    static func seconds(_ milliseconds: Double) -> String {
        let thousandths = Int((milliseconds).rounded())
        let text = "\(thousandths / 1000)."
        let fraction = String(thousandths % 1000)
        return text + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// Text escaped for XML content and attributes; characters XML 1.0 forbids are dropped.
    static func xml(_ text: String) -> String {
        TextEscaping.escape(text, xmlEscapes) { scalar, result in
            let value = scalar.value
            if value < 0x20 || (0xFFFE...0xFFFF).contains(value) { return }
            result.unicodeScalars.append(scalar)
        }
    }

    private static let xmlEscapes: [Unicode.Scalar: String] = [
        "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;", "\n": "&#10;", "\t": "&#9;",
    ]

    // MARK: JSON

    /// The JSON report (format 1): stable keys, checks in catalogue order.
    public static func json(_ report: ConformanceReport) -> JSONValue {
        var root = JSONObject()
        root["format"] = 1
        root["tool"] = "context-host conformance"
        root["hostVersion"] = .string(HostConfiguration.hostVersion)
        root["passed"] = .bool(report.passed)
        root["exitCode"] = .number(Double(report.exitCode))
        var summary = JSONObject()
        for status in [CheckStatus.passed, .warning, .failed, .expectedFailure, .skipped] {
            summary[status.rawValue] = .number(Double(report.count(status)))
        }
        summary["staleBaselineEntries"] = .number(Double(report.staleBaselineEntries.count))
        root["summary"] = .object(summary)
        root["providers"] = .array(report.providers.map { provider in
            var object = JSONObject()
            object["manifest"] = .string(provider.manifestPath)
            object["providerId"] = provider.providerId.map(JSONValue.string) ?? .null
            object["mode"] = .string(provider.mode.rawValue)
            object["failed"] = .array(provider.failures.map { .string($0.id) })
            object["checks"] = .array(provider.results.map { result in
                [
                    "id": .string(result.id), "status": .string(result.status.rawValue), "message": .string(result.message),
                    "details": .array(result.details.map(JSONValue.string)),
                    "durationMs": .number((result.durationMs * 1000).rounded() / 1000),
                ]
            })
            return .object(object)
        })
        if let path = report.galleryPath { root["gallery"] = .string(path) }
        if let problem = report.galleryProblem { root["galleryProblem"] = .string(problem) }
        root["staleBaselineEntries"] = .array(report.staleBaselineEntries.map {
            ["entry": .string($0.entry), "location": .string($0.location), "reason": .string($0.reason)]
        })
        return .object(root)
    }
}
