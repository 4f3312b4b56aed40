import CoreTree
import SecurityRules

/// A few reads and writes on sample data, for judging rules fuzzed documents compile to.
enum RuleSamples {
    /// One request: a read, or a write of `after` over the data.
    struct Request: CustomStringConvertible {
        let path: TreePath
        let after: Node?
        let auth: Node?

        /// Whether `rules` allow it.
        func judge(_ rules: RuleSet) -> Bool {
            if let after {
                return rules.canWrite([path], before: RuleSamples.data, after: after, auth: auth, now: 1_700_000_000_000)
            }
            return rules.canRead(path, root: RuleSamples.data, auth: auth, now: 1_700_000_000_000)
        }

        var description: String { "\(after == nil ? "read" : "write") \(path) auth \(auth?.jsonString() ?? "null")" }
    }

    /// The data the requests see.
    static let data: Node = {
        let json = #"{"users":{"ada":{"age":36,"name":"Ada",".priority":1}},"a":{"b":true,"n":-0.5,"s":"x"},"list":["p","q"]}"#
        return (try? Node(jsonString: json)) ?? .empty
    }()

    static let requests: [Request] = {
        let auth = try? Node(jsonString: #"{"uid":"ada","token":{"email":"ada@example.com","admin":true}}"#)
        let paths: [TreePath] = [.root, "users", "users/ada", "users/ada/age", "a/b", "list/1", "missing/deep/path"]
        var requests: [Request] = []
        for path in paths {
            for caller in [nil, auth] {
                requests.append(Request(path: path, after: nil, auth: caller))
                requests.append(Request(path: path, after: data.updatingChild(at: path, to: Node(.number(7))), auth: caller))
                requests.append(Request(path: path, after: data.updatingChild(at: path, to: .empty), auth: caller))
            }
        }
        return requests
    }()
}
