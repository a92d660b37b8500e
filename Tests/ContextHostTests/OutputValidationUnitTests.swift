import ContextHost
import ContextProviderKit
import Testing

/// The allocation-free chip scan (hot path) and the full validator agree.
@Suite("Output validation (unit)")
struct OutputValidationUnitTests {
    static let noteChip = #"{"ctxui":1,"icon":"note.text","title":"Groceries","subtitle":"6 words","tone":"neutral","accessibilityLabel":"Note: Groceries, 6 words","fallbackText":"Groceries (6 words)"}"#

    private func scan(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { ChipScan.isValid($0) }
    }

    private func decodes(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { bytes in
            (try? OutputValidation.check(bytes, as: .chip, providerID: "p", method: "item/preview", limits: OutputLimits(), messageLimit: 1 << 20)) != nil
        }
    }

    @Test("valid chips take the fast path")
    func accepted() {
        for chip in [
            Self.noteChip,
            #" {"icon":"a","title":"b","fallbackText":"c","extra":{"x":[1,2]},"thumbnail":"data:image/png;base64,AA=="} "#,
        ] {
            #expect(scan(chip), "\(chip)")
            #expect(decodes(chip), "\(chip)")
        }
    }

    @Test("anything doubtful falls back to the decoder, which decides", arguments: [
        (#"{"icon":"a","title":"b","fallbackText":"c","tone":"blue"}"#, false),
        (#"{"icon":"a","title":"b"}"#, false),
        (#"{"icon":"a","title":5,"fallbackText":"c"}"#, false),
        (#"{"icon":"a","title":"b","fallbackText":"c","ctxui":2}"#, false),
        (#"{"icon":"a","title":"b","fallbackText":"c","thumbnail":"https://x"}"#, false),
        (#"{"icon":"a","title":"b","fallbackText":"c","accessory":{"kind":"sparkline","values":[1]}}"#, true),
        (#"{"icon":"a","title":"b","fallbackText":"c","tone":null}"#, true),
        (#"{"icon":"a","title":"b","fallbackText":"c","tone":"blue","tone":"good"}"#, true),
        (#"{"icon":"a","title":"b","fallbackText":"c","t\u006fne":"blue"}"#, false),
        (#"{"icon":"a","title":"b","fallbackText":"c"} x"#, false),
        (#"{"icon":"a","title":"\uD800","fallbackText":"c"}"#, false),  // a lone surrogate
        (#"{"icon":"a","title":"b","fallbackText":"c","x":"\uDC00\uD800"}"#, false),
        (#"[]"#, false),
    ])
    func fallback(_ chip: String, _ valid: Bool) {
        #expect(!scan(chip), "\(chip)")
        #expect(decodes(chip) == valid, "\(chip)")
    }
}
