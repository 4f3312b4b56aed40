// rules-benchmark: the cost of judging one write against a rules document five levels deep, with a
// $wildcard and a .validate rule at every level (issue 14's figure), against open rules.
//
// Run in release mode: `swift run -c release rules-benchmark`. Figures are for comparison within
// one run on one machine, never asserted by tests.
import CoreTree
import Foundation
import SecurityRules

let deepRules = """
{"rules": {
  "apps": {
    "$app": {
      ".validate": "newData.hasChildren()",
      "teams": {
        "$team": {
          ".validate": "$team.length < 40",
          ".write": "auth != null && root.child('apps/' + $app + '/admins/' + auth.uid).exists()",
          "members": {
            "$member": {
              ".validate": "newData.hasChildren(['name', 'role'])",
              "$field": {
                ".validate": "newData.isString() && newData.val().length < 100",
                "$extra": { ".validate": false }
              }
            }
          }
        }
      }
    }
  }
}}
"""

let rules = try RuleSet(parsing: deepRules)
let open = RuleSet.everywhere(read: true, write: true)
let auth = try Node(jsonString: #"{"uid": "u1", "token": {"email": "u1@example.com"}}"#)
func makeData() throws -> Node {
    var data = try Node(jsonString: #"{"apps": {"a1": {"admins": {"u1": true}, "teams": {}}}}"#)
    for team in 0..<100 {
        for member in 0..<20 {
            data = data.updatingChild(at: TreePath(unchecked: "apps/a1/teams/t\(team)/members/m\(member)"),
                                      to: try Node(jsonString: #"{"name": "n\#(member)", "role": "dev"}"#))
        }
    }
    return data
}
let before = try makeData()
let writes = (0..<1000).map { index -> (TreePath, Node) in
    let path = TreePath(unchecked: "apps/a1/teams/t\(index % 100)/members/new\(index)")
    return (path, before.updatingChild(at: path, to: try! Node(jsonString: #"{"name": "x\#(index)", "role": "ops"}"#)))
}

@MainActor func measure(_ name: String, _ ruleSet: RuleSet, rounds: Int) -> Double {
    let clock = ContinuousClock()
    var granted = 0
    let start = clock.now
    for round in 0..<rounds {
        let (path, after) = writes[round % writes.count]
        if ruleSet.canWrite([path], before: before, after: after, auth: auth, now: 1_700_000_000_000) { granted += 1 }
    }
    let elapsed = clock.now - start
    let micros = (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(rounds)
    print("\(name): \(String(format: "%.2f", micros)) µs per write (\(granted) of \(rounds) granted)")
    return micros
}

_ = measure("warm-up", rules, rounds: 20_000)
let deep = measure("five levels, $wildcards and .validate at each", rules, rounds: 200_000)
let plain = measure("open rules (.write: true at the root)", open, rounds: 200_000)
print("rules evaluation: \(String(format: "%.2f", deep)) µs per write; open rules \(String(format: "%.2f", plain)) µs")
