// Every Swift snippet of Firebase's "Offline capabilities on Apple platforms" page
// (../shared/reference/offline-capabilities-apple.txt), unchanged but for `import RealtimeDatabase`.
// Each function holds one snippet, or the snippets that share declarations on the page.
// OfflinePageSnippetTests runs them against a real server and checks what they did.
import Foundation
import RealtimeDatabase

enum OfflinePageSnippets {
    // "Disk persistence"
    static func enablePersistence() {
        Database.database().isPersistenceEnabled = true
    }

    // "Keeping data fresh"
    static func keepScoresSynced() {
        let scoresRef = Database.database().reference(withPath: "scores")
        scoresRef.keepSynced(true)
    }

    static func stopKeepingScoresSynced(_ scoresRef: DatabaseReference) {
        scoresRef.keepSynced(false)
    }

    // "Querying data offline"
    static func lastFourScores() {
        let scoresRef = Database.database().reference(withPath: "scores")
        scoresRef.queryOrderedByValue().queryLimited(toLast: 4).observe(.childAdded) { snapshot in
          print("The \(snapshot.key) dinosaur's score is \(snapshot.value ?? "null")")
        }
    }

    static func lastTwoScores(_ scoresRef: DatabaseReference) {
        scoresRef.queryOrderedByValue().queryLimited(toLast: 2).observe(.childAdded) { snapshot in
          print("The \(snapshot.key) dinosaur's score is \(snapshot.value ?? "null")")
        }
    }

    // "Managing presence"
    static func disconnectMessage() -> DatabaseReference {
        let presenceRef = Database.database().reference(withPath: "disconnectmessage");
        // Write a string when this client loses connection
        presenceRef.onDisconnectSetValue("I disconnected!")
        return presenceRef
    }

    static func disconnectRemoveWithCompletion(_ presenceRef: DatabaseReference) {
        presenceRef.onDisconnectRemoveValue { error, reference in
          if let error = error {
            print("Could not establish onDisconnect event: \(error)")
          }
        }
    }

    static func disconnectThenCancel(_ presenceRef: DatabaseReference) {
        presenceRef.onDisconnectSetValue("I disconnected")
        // some time later when we change our minds
        presenceRef.cancelDisconnectOperations()
    }

    // "Detecting connection state"
    static func observeConnectionState() {
        let connectedRef = Database.database().reference(withPath: ".info/connected")
        connectedRef.observe(.value, with: { snapshot in
          if snapshot.value as? Bool ?? false {
            print("Connected")
          } else {
            print("Not connected")
          }
        })
    }

    // "Server timestamps"
    static func lastOnlineTimestamp() {
        let userLastOnlineRef = Database.database().reference(withPath: "users/morgan/lastOnline")
        userLastOnlineRef.onDisconnectSetValue(ServerValue.timestamp())
    }

    // "Clock skew"
    static func serverTimeOffset() {
        let offsetRef = Database.database().reference(withPath: ".info/serverTimeOffset")
        offsetRef.observe(.value, with: { snapshot in
          if let offset = snapshot.value as? TimeInterval {
            print("Estimated server time in milliseconds: \(Date().timeIntervalSince1970 * 1000 + offset)")
          }
        })
    }

    // "Sample presence app"
    static func presenceApp() {
        // since I can connect from multiple devices, we store each connection instance separately
        // any time that connectionsRef's value is null (i.e. has no children) I am offline
        let myConnectionsRef = Database.database().reference(withPath: "users/morgan/connections")

        // stores the timestamp of my last disconnect (the last time I was seen online)
        let lastOnlineRef = Database.database().reference(withPath: "users/morgan/lastOnline")

        let connectedRef = Database.database().reference(withPath: ".info/connected")

        connectedRef.observe(.value, with: { snapshot in
          // only handle connection established (or I've reconnected after a loss of connection)
          guard let connected = snapshot.value as? Bool, connected else { return }

          // add this device to my connections list
          let con = myConnectionsRef.childByAutoId()

          // when this device disconnects, remove it.
          con.onDisconnectRemoveValue()

          // The onDisconnect() call is before the call to set() itself. This is to avoid a race condition
          // where you set the user's presence to true and the client disconnects before the
          // onDisconnect() operation takes effect, leaving a ghost user.

          // this value could contain info about the device or a timestamp instead of just true
          con.setValue(true)

          // when I disconnect, update the last time I was seen online
          lastOnlineRef.onDisconnectSetValue(ServerValue.timestamp())
        })
    }
}
