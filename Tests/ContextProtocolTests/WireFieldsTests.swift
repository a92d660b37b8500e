import Testing

import ContextProtocol

/// The table codec (`WireFields`): the wire form, member order, unknown members and the errors
/// of the wire types that list their members once.
@Suite("WireFields: the table codec of the wire types")
struct WireFieldsTests {
    private func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: text) }

    /// The error `T(json:path:)` throws for `text`, as its description.
    private func decodeError<T: JSONConvertible>(_ type: T.Type, _ text: String, path: String = "params") throws -> String? {
        do {
            _ = try T(json: try parse(text), path: path)
            return nil
        } catch let error as JSONDecodeError {
            return error.description
        }
    }

    @Test("members are written in table order, optional ones only when set, the bytes as before")
    func wireForm() {
        let summary = ComposerSummary(composerId: "c1", maximumItems: 10, byteBudget: 4096, bytesUsed: 12, itemCount: 1)
        #expect(summary.json.jsonString == #"{"composerId":"c1","maximumItems":10,"byteBudget":4096,"bytesUsed":12,"itemCount":1}"#)
        #expect(ProviderLoadError(code: "x", message: "y").json.jsonString == #"{"code":"x","message":"y"}"#)
        #expect(CollectMakeResult(item: nil).json.jsonString == #"{"item":null}"#)
        let chart = DetailBlock.chart(ChartBlock(kind: .line, series: [ChartSeries(name: "s", points: [ChartPoint(x: "a", y: 1)])]))
        #expect(chart.json.jsonString == #"{"type":"chart","kind":"line","series":[{"name":"s","points":[{"x":"a","y":1}]}]}"#)
        let field = FormField.text(id: "t", label: "Title", required: true, maxLength: 5)
        #expect(field.json.jsonString == #"{"id":"t","kind":"text","label":"Title","required":true,"maxLength":5}"#)
        #expect(EncodedItem.text("hi").json.jsonString == #"{"representation":"text","contentType":"text/plain; charset=utf-8","data":"aGk=","metadata":{}}"#)
    }

    @Test("unknown members are kept after the known ones; absent params read as {}")
    func extrasAndParams() throws {
        let entry = try ProviderDescription(json: try parse(#"{"future":[1],"id":"a","status":"loaded"}"#), path: "p")
        #expect(entry.id == "a" && entry.status == "loaded")
        #expect(entry.extra["future"] == [1])
        #expect(entry.json.jsonString == #"{"id":"a","status":"loaded","future":[1]}"#)
        #expect(try ComposerOpenRequest(json: .null, path: "params") == ComposerOpenRequest())
        #expect(try ProvidersChangedNotification(json: [:], path: "params").added == [])
    }

    @Test("errors name the member and say what was expected, as the hand-written readers did")
    func errors() throws {
        #expect(try decodeError(ComposerSummary.self, #"{"composerId":"c"}"#) == "params.maximumItems: missing; expected an integer")
        #expect(try decodeError(ProviderProblem.self, #"{"code":1,"message":"m"}"#) == "params.code: expected a string, got number")
        #expect(try decodeError(ProgressNotification.self, #"{"done":1}"#) == "params.token: missing; expected a string or an integer")
        #expect(try decodeError(ProviderLogNotification.self, #"{"level":"off","message":"m"}"#) == "params.level: expected error, warning, info or debug")
        #expect(try decodeError(ProviderProgressNotification.self, #"{"done":5,"total":2}"#) == "params.total: expected a finite number ≥ done")
        #expect(try decodeError(EncodedItem.self, #"{"representation":"json","contentType":"a","data":"!!"}"#) == "params.data: expected Base64 text")
        #expect(try decodeError(FormField.self, #"{"id":"a","kind":"number","label":"A","step":0}"#) == "params.step: expected a positive number, got 0")
        #expect(try decodeError(FormField.self, #"{"id":"a","kind":"dial","label":"A"}"#)
            == "params.kind: expected one of text, number, date, datetime, choice, toggle, location, got \"dial\"")
        #expect(try decodeError(ContextDetail.self, #"{"ctxui":2,"title":"t","fallbackText":"f","blocks":[]}"#, path: "result")
            == "result.ctxui: unsupported ctxui version 2; this SDK reads 1")
        #expect(try decodeError(ContextDetail.self, #"{"title":"t","fallbackText":"f","blocks":[{"type":"list","items":[1]}]}"#, path: "result")
            == "result.blocks[0].items[0]: expected a string, got number")
    }

    @Test("the schema comes from the same table")
    func schema() {
        #expect(ProviderProblem.schema.jsonString
            == #"{"type":"object","properties":{"code":{"type":"string"},"message":{"type":"string"}},"required":["code","message"]}"#)
        #expect(ComposerListRequest.schema.jsonString
            == #"{"type":"object","properties":{"composerId":{"type":"string","description":"The composer to list."}}}"#)
    }
}
