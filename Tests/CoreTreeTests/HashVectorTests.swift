import Foundation
import TestSupport
import Testing
@testable import CoreTree

/// The hash vectors shared with the other clients, read with CoreTree's own (exact) JSON parser.
enum HashVectors {
    /// `../shared/spec/hash-vectors.json` beside the package root (the directory holding Package.swift).
    static func fileURL(from filePath: String = #filePath) throws -> URL {
        var directory = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            let parent = directory.deletingLastPathComponent()
            guard parent.path != directory.path else {
                throw VectorFileMissing(message: "no Package.swift above \(filePath)")
            }
            directory = parent
        }
        let url = directory.deletingLastPathComponent().appendingPathComponent("shared/spec/hash-vectors.json")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw VectorFileMissing(message: "hash vectors not found at \(url.path); the shared spec directory must sit beside the package root")
        }
        return url
    }

    struct VectorFileMissing: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let data: Node
        let hash: String
        let children: [(key: ChildKey, hash: String)]
        var testDescription: String { name }
    }

    static func load() throws -> [Case] {
        let document = try Node(json: Array(Data(contentsOf: fileURL())))
        let cases = document.immediateChild("cases")
        return cases.children.map { _, entry in
            guard case .string(let name)? = entry.immediateChild("name").leafValue,
                  case .string(let hash)? = entry.immediateChild("hash").leafValue
            else { return Case(name: "malformed case \(entry)", data: .empty, hash: "<missing>", children: []) }
            let children = entry.immediateChild("children").children.map { key, value -> (key: ChildKey, hash: String) in
                guard case .string(let childHash)? = value.leafValue else { return (key, "<not a string>") }
                return (key, childHash)
            }
            return Case(name: name, data: entry.immediateChild("data"), hash: hash, children: children)
        }
    }

    /// The cases, or a single failing placeholder that explains why they could not be read.
    static let all: [Case] = {
        do {
            let cases = try load()
            return cases.isEmpty ? [Case(name: "no cases in hash-vectors.json", data: .empty, hash: "<none>", children: [])] : cases
        } catch {
            return [Case(name: "could not read hash vectors: \(error)", data: .empty, hash: "<unreadable>", children: [])]
        }
    }()
}

@Suite("Node hash")
struct HashVectorTests {
    @Test("the shared hash vectors", arguments: HashVectors.all)
    func vector(_ vector: HashVectors.Case) throws {
        if vector.data.isEmpty {
            Issue.record("\(vector.name)")
            return
        }
        #expect(vector.data.hash == vector.hash)
        for child in vector.children {
            #expect(vector.data.immediateChild(child.key).hash == child.hash, "child \(child.key)")
        }
        // The independent reference implementation of the recipe agrees with the vectors too.
        #expect(ReferenceHash.hash(vector.data) == vector.hash)
    }

    @Test("the vector file is found and complete")
    func vectorFile() throws {
        let url = try HashVectors.fileURL()
        #expect(url.lastPathComponent == "hash-vectors.json")
        let cases = try HashVectors.load()
        #expect(cases.count >= 4)
        #expect(cases.contains { !$0.children.isEmpty })
    }

    @Test("a missing vector file is reported with its expected location")
    func missingFile() {
        do {
            _ = try HashVectors.fileURL(from: "/nonexistent/Tests/X/File.swift")
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("Package.swift"))
        }
    }

    @Test("the empty node hashes to the empty string")
    func emptyHash() {
        #expect(Node.empty.hash == "")
        #expect(json("{}").hash == "")
        #expect(json(#"{"a": null}"#).hash == "")
    }

    @Test("the reference SHA-1 passes the FIPS examples")
    func referenceSHA1() {
        #expect(ReferenceSHA1.hex(ReferenceSHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(ReferenceSHA1.hex(ReferenceSHA1.digest([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(
            ReferenceSHA1.hex(ReferenceSHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test("hash texts follow the recipe")
    func hashTexts() {
        #expect(num(1).hashText == "number:3ff0000000000000")
        #expect(num(-2).hashText == "number:c000000000000000")
        #expect(str("x").hashText == "string:x")
        #expect(bool(false).hashText == "boolean:false")
        #expect(num(1, priority: .string("p")).hashText == "priority:string:p:number:3ff0000000000000")
        #expect(num(1, priority: .number(0.5)).hashText == "priority:number:3fe0000000000000:number:3ff0000000000000")
        let node = json(#"{"b": 1, "a": {".value": 2, ".priority": 1}, "10": true, "9": false}"#)
        let expected = ":9:\(bool(false).hash):10:\(bool(true).hash):b:\(num(1).hash):a:\(num(2, priority: .number(1)).hash)"
        #expect(node.hashText == expected, "priority order: no priority first; then integer keys numerically, then strings")
    }

    @Test("hashes match the reference on random trees", arguments: [1, 2, 3] as [UInt64])
    func randomTrees(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<100 {
            let node = Gen.node(depth: Int.random(in: 0...4, using: &random), using: &random)
            #expect(node.hash == ReferenceHash.hash(node), "\(node)")
            #expect(node.hashText == ReferenceHash.representation(node))
        }
    }

    @Test("children in priority order")
    func priorityOrder() {
        let node = json(#"""
        {"a": {".value": 1, ".priority": "b"}, "b": {".value": 1, ".priority": 2}, "c": 1,
         "d": {".value": 1, ".priority": "a"}, "e": {".value": 1, ".priority": 1}, "1": 1}
        """#)
        #expect(node.childrenInPriorityOrder.map(\.key.stringValue) == ["1", "c", "e", "b", "d", "a"])
        let plain = json(#"{"b": 1, "a": 2, "10": 3, "9": 4}"#)
        #expect(plain.childrenInPriorityOrder.map(\.key.stringValue) == ["9", "10", "a", "b"])
    }
}
