import Testing

@testable import ContextProviderKit

/// Generic form validation: the messages say what to fix.
@Suite("Form validation")
struct FormValidationTests {
    let form = ContextForm(
        stepId: "s", title: "T",
        fields: [
            .text(id: "title", label: "Title", required: true, maxLength: 5),
            .text(id: "body", label: "Body", minLength: 3, maxLength: 10000),
            .text(id: "code", label: "Code", pattern: "[A-Z]{3}", help: "Three capital letters, e.g. ABC."),
            .number(id: "qty", label: "Quantity", min: 1, max: 10, step: 0.5, unit: "kg"),
            .field(.date, id: "day", label: "Day"),
            .field(.datetime, id: "at", label: "Start"),
            .choice(id: "color", label: "Color", options: [FormOption(value: "r", label: "Red"), FormOption(value: "g", label: "Green")]),
            .choice(id: "city", label: "City", search: ChoiceSearch()),
            .toggle(id: "agree", label: "Agree", required: true),
            .toggle(id: "news", label: "Newsletter"),
            .field(.location, id: "place", label: "Place"),
        ])

    @Test func acceptsValidValues() {
        let values: FormValues = [
            "title": "Hello", "body": "Some text", "code": "ABC", "qty": 2.5, "day": "2024-02-29",
            "at": "2025-01-31T09:30:00+01:00", "color": "g", "city": "anything", "agree": true, "news": false,
            "place": ["latitude": 48.8, "longitude": 2.3], "unknown": 5,
        ]
        #expect(form.validate(values) == [:])
    }

    @Test func requiredFields() {
        #expect(form.validate([:]) == ["title": "Title is required.", "agree": "Agree is required."])
        #expect(form.validate(["title": "   ", "agree": nil])["title"] == "Title is required.")
        #expect(form.validate(["title": "x", "agree": false])["agree"] == "Agree must be turned on.")
    }

    @Test func textRules() {
        let errors = form.validate(["title": "Too long!", "body": "ab", "code": "abc", "agree": true])
        #expect(errors["title"] == "Title must be at most 5 characters.")
        #expect(errors["body"] == "Body must be at least 3 characters.")
        #expect(errors["code"] == "Code is not in the expected format: Three capital letters, e.g. ABC.")
        #expect(form.validate(["title": 5, "agree": true])["title"] == "Title must be text.")
        // Lengths count characters as users see them.
        #expect(form.validate(["title": "😀😀😀😀😀", "agree": true])["title"] == nil)
        #expect(form.validate(["title": "ok", "body": .string(String(repeating: "x", count: 10001)), "agree": true])["body"] == "Body must be at most 10000 characters.")
        // The pattern must match the whole value.
        #expect(form.validate(["title": "ok", "code": "ABCD", "agree": true])["code"] != nil)
    }

    @Test func numberRules() {
        #expect(form.validate(["title": "a", "agree": true, "qty": 0])["qty"] == "Quantity must be at least 1 kg.")
        #expect(form.validate(["title": "a", "agree": true, "qty": 11])["qty"] == "Quantity must be at most 10 kg.")
        #expect(form.validate(["title": "a", "agree": true, "qty": 1.25])["qty"] == "Quantity must be a multiple of 0.5 kg.")
        #expect(form.validate(["title": "a", "agree": true, "qty": "3"])["qty"] == "Quantity must be a number.")
    }

    @Test func dateRules() {
        #expect(form.validate(["title": "a", "agree": true, "day": "2023-02-29"])["day"] == "Day must be a date like 2025-01-31.")
        #expect(form.validate(["title": "a", "agree": true, "day": "2023-1-5"])["day"] != nil)
        for ok in ["2025-01-31T09:30", "2025-01-31 09:30:15", "2025-01-31T09:30:15.123Z", "2025-01-31t23:59:60z"] {
            #expect(form.validate(["title": "a", "agree": true, "at": .string(ok)])["at"] == nil, "\(ok)")
        }
        for bad in ["2025-01-31", "2025-01-31T24:00", "2025-01-31T09:30+1:00", "2025-01-31T09:30:15.Z", "yesterday"] {
            #expect(form.validate(["title": "a", "agree": true, "at": .string(bad)])["at"] == "Start must be a date and time like 2025-01-31T09:30:00Z.", "\(bad)")
        }
    }

    @Test func choiceToggleAndLocationRules() {
        #expect(form.validate(["title": "a", "agree": true, "color": "b"])["color"] == "Color must be one of: Red, Green.")
        #expect(form.validate(["title": "a", "agree": true, "city": 3])["city"] == "City must be one of the offered options.")
        #expect(form.validate(["title": "a", "agree": true, "news": "yes"])["news"] == "Newsletter must be on or off.")
        #expect(form.validate(["title": "a", "agree": true, "place": ["latitude": 100, "longitude": 0]])["place"] != nil)
        #expect(form.validate(["title": "a", "agree": true, "place": "48,2"])["place"] != nil)
    }
}
