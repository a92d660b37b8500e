// libFuzzer target: ctxui value decoding in the SDK (Sources/ContextProviderKit/Model). The input is parsed as
// JSON and decoded as each value type in turn (chip, detail, detail block, form, field, option,
// item, encoded item, submit outcome, availability, metadata, accessory, coordinate, marker, fact,
// series, threshold): what decodes must encode to JSON that decodes to an equal value. It is also
// read as request params the fast way (`RequestParams.readItem`), which must agree with the
// general decoder, as must `InProcessHost`'s fast paths (`ContextChip(text:)`,
// `ContextItem.appendJSON`). See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`ctxui-fuzzer FILE|DIR…`).
import ContextProviderKit
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    SDKFuzzEntry.ctxui(data)
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
