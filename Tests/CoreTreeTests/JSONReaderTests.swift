import CoreTree
import Testing

@Suite struct JSONReaderTests {
    @Test func readsMembersOfEveryKindAndSkipsTheRest() throws {
        let text = #" {"n": null, "a": [1, {"x": [true]}], "s": "h\u00e9", "num": -2.5e1, "b": false, "d": {"k": {".value": 1, ".priority": 2}}} "#
        let fields = try JSONReader.read(text) { reader throws(CoreTreeError) in
            var seen: [String] = []
            try reader.beginObject()
            while let key = try reader.nextKey() {
                switch key {
                case "n": seen.append("n=\(try reader.readNullIfPresent())")
                case "s": seen.append("s=\(try reader.readString())")
                case "num": seen.append("num=\(try reader.readNumber())")
                case "b": seen.append("b=\(try reader.readBool())")
                case "d": seen.append("d=\(try reader.readNode().jsonString(format: .export))")
                default: try reader.skipValue()
                }
            }
            return seen
        }
        #expect(fields == ["n=true", "s=hé", "num=-25.0", "b=false", #"d={"k":{".value":1,".priority":2}}"#])
    }

    @Test func rawValuesAreTheirExactText() throws {
        let raw = try JSONReader.read(#"{"a": {"x" : [1, 2]}, "b": 1}"#) { reader throws(CoreTreeError) in
            try reader.beginObject()
            _ = try reader.nextKey()
            let raw = try reader.readRawValue()
            while try reader.nextKey() != nil { try reader.skipValue() }
            return raw
        }
        #expect(raw == #"{"x" : [1, 2]}"#)
    }

    @Test func malformedInputAndTrailingDataAreErrors() {
        for text in [#"{"a" 1}"#, #"{"a":1,}"#, #"{,"a":1}"#, #"{"a":1} x"#, #"[1 2]"#, #"{"a":"#] {
            #expect(throws: CoreTreeError.self, "\(text)") {
                try JSONReader.read(text) { reader throws(CoreTreeError) in try reader.skipValue() }
            }
        }
    }
}
