import CoreTree
import SecurityRules
import Testing

/// The record of what data the rules read: what a server holding only part of a namespace loads
/// before it evaluates again.
@Suite("Rule data access")
struct RuleDataAccessTests {
    private static let rules = """
    {"rules": {
      "public": {".read": true},
      "rooms": {"$room": {
        ".read": "root.child('members/' + $room).hasChild(auth.uid)",
        ".write": "root.child('admins').child(auth.uid).val() === true || data.child('owner').val() === auth.uid",
        ".validate": "newData.hasChildren(['title']) && newData.child('title').isString()"
      }},
      "users": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}}
    }}
    """

    private let ruleSet: RuleSet
    private let auth = Node(children: ["uid": Node(.string("ada"))])
    private let data: Node

    init() throws {
        ruleSet = try RuleSet(parsing: Self.rules)
        data = try Node(jsonString: #"{"members":{"r1":{"ada":true}},"admins":{"bob":true},"rooms":{"r1":{"owner":"ada","title":"t"}}}"#)
    }

    @Test("A read records the locations its rule looked at, and nothing for rules that read no data")
    func reads() {
        let access = RuleDataAccess()
        #expect(ruleSet.canRead("rooms/r1", root: data, auth: auth, now: 0, access: access))
        #expect(access.before == ["members/r1/ada"], "recorded \(access.before)")
        #expect(access.after.isEmpty)
        let none = RuleDataAccess()
        #expect(ruleSet.canRead("users/ada", root: data, auth: auth, now: 0, access: none))
        #expect(ruleSet.canRead("public/x", root: data, auth: auth, now: 0, access: none))
        #expect(none.before.isEmpty && none.after.isEmpty, "recorded \(none.before) \(none.after)")
    }

    @Test("A write records the old data its .write read and the new data its .validate read")
    func writes() {
        let access = RuleDataAccess()
        let after = data.updatingChild(at: "rooms/r1/title", to: Node(.string("new")))
        #expect(ruleSet.canWrite(["rooms/r1/title"], before: data, after: after, auth: auth, now: 0, access: access))
        #expect(access.before == ["admins/ada", "rooms/r1/owner"], "recorded \(access.before)")
        #expect(access.after.contains("rooms/r1/title") && access.after.contains("rooms/r1"), "recorded \(access.after)")
    }

    @Test("The answer is the same with and without a record")
    func sameAnswer() {
        let stranger = Node(children: ["uid": Node(.string("eve"))])
        let access = RuleDataAccess()
        #expect(!ruleSet.canRead("rooms/r1", root: data, auth: stranger, now: 0, access: access))
        #expect(!ruleSet.canRead("rooms/r1", root: data, auth: stranger, now: 0))
        #expect(access.before == ["members/r1/eve"])
    }
}
