import Testing
@_spi(Transport) @testable import Courier

extension Values {
    @Suite("JSONShape") struct JSONShapeTests {
        @Test(
            "matching values have no mismatch",
            arguments: [
                (JSONShape.object(["nick": .string, "level": .number]), ["nick": "bob", "level": 3, "extra": [1]] as JSON),
                (.object(["tags": .array(of: .string)]), ["tags": []]),
                (.object(["tags": .array(of: .string)]), ["tags": ["a", "b"]]),
                (.object(["bio": .optional(.string)]), [:]),
                (.object(["bio": .optional(.string)]), ["bio": nil]),
                (.object(["bio": .optional(.string)]), ["bio": "hi"]),
                (.object(["x": .any]), ["x": nil]),
                (.object(["x": .null]), ["x": nil]),
                (.object([:]), ["anything": true]),
                (.array(of: .object(["id": .number])), [["id": 1], ["id": 2, "name": "b"]]),
                (.array(of: .array(of: .bool)), [[true], [], [false, true]]),
                (.any, "whatever"),
                (.bool, false),
                (.optional(.number), nil),
            ] as [(JSONShape, JSON)])
        func matches(shape: JSONShape, json: JSON) {
            #expect(shape.firstMismatch(in: json) == nil)
            #expect(shape.matches(json))
        }

        @Test(
            "the first mismatch names its path, the expected and the found type",
            arguments: [
                (JSONShape.object(["level": .number]), ["level": "high"] as JSON, "$.level: expected number, found string"),
                (.object(["tags": .array(of: .string)]), ["tags": ["a", "b", 3]], "$.tags[2]: expected string, found number"),
                (.object(["user": .object(["nick": .string])]), ["user": [:]], "$.user.nick: expected string, found missing"),
                (.object(["user": .object(["nick": .string])]), ["user": nil], "$.user: expected object, found null"),
                (.object(["a b": .string]), ["a b": 1], #"$["a b"]: expected string, found number"#),
                (.object([#"say "hi""#: .string]), [#"say "hi""#: true], #"$["say \"hi\""]: expected string, found bool"#),
                (.object(["1st": .string]), ["1st": []], #"$["1st"]: expected string, found array"#),
                (.object(["_ok9": .string]), ["_ok9": [:]], "$._ok9: expected string, found object"),
                (.object(["bio": .optional(.string)]), ["bio": 1], "$.bio: expected string or null, found number"),
                (.object(["x": .any]), [:], "$.x: expected any value, found missing"),
                (.array(of: .object(["id": .number])), [["id": 1], ["id": "2"]], "$[1].id: expected number, found string"),
                (.array(of: .array(of: .number)), [[1], [2, "x"]], "$[1][1]: expected number, found string"),
                (
                    .object(["list": .optional(.array(of: .object(["n": .number])))]), ["list": [["n": true]]],
                    "$.list[0].n: expected number, found bool"
                ),
                (.object([:]), [], "$: expected object, found array"),
                (.array(of: .any), ["a": 1], "$: expected array, found object"),
                (.bool, 1, "$: expected bool, found number"),
                (.null, "", "$: expected null, found string"),
                (.string, nil, "$: expected string, found null"),
                (.object(["b": .string, "a": .string]), ["b": 1, "a": 2], "$.a: expected string, found number"),
            ] as [(JSONShape, JSON, String)])
        func mismatch(shape: JSONShape, json: JSON, expected: String) throws {
            let mismatch = try #require(shape.firstMismatch(in: json))
            #expect(mismatch.description == expected)
            #expect(!shape.matches(json))
        }

        @Test("Mismatch exposes its parts")
        func mismatchParts() throws {
            let shape = JSONShape.object(["user": .object(["tags": .array(of: .string)])])
            let mismatch = try #require(shape.firstMismatch(in: ["user": ["tags": ["ok", nil]]]))
            #expect(mismatch == JSONShape.Mismatch(path: "$.user.tags[1]", expected: "string", found: "null"))
        }

        @Test(
            "expected names describe nested optionals once",
            arguments: [
                (JSONShape.optional(.string), "string or null"),
                (.optional(.optional(.number)), "number or null"),
                (.optional(.null), "null"),
                (.optional(.any), "any value"),
                (.array(of: .string), "array"),
            ])
        func expectedNames(shape: JSONShape, name: String) {
            #expect(shape.expectedName == name)
        }
    }
}
