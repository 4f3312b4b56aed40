/// Makes the 20-character ids of `childByAutoId()`: 8 characters of millisecond time followed by 12
/// random characters, in an alphabet whose ASCII order matches its digit order.
///
/// Ids therefore sort by creation time across clients, and within one generator strictly in
/// creation order: an id made in the same millisecond as the previous one reuses its random part
/// plus one. The generator is a value; a client keeps one behind its own lock.
public struct PushIDGenerator<Source: RandomNumberGenerator> {
    /// The 64 characters of push ids in ascending ASCII order (web-safe base 64).
    public static var alphabet: [UInt8] { Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8) }

    private var source: Source
    private var lastTime: Int64 = -1
    private var lastRandom = [UInt8](repeating: 0, count: 12)
    private let alphabet = PushIDGenerator.alphabet

    /// Creates a generator drawing random digits from `source`.
    public init(source: Source) { self.source = source }

    /// The next id for the time `milliseconds` since the Unix epoch (the server-estimated time).
    ///
    /// - Precondition: `milliseconds` is positive and below 64^8.
    public mutating func next(milliseconds: Int64) -> String {
        precondition(milliseconds > 0 && milliseconds < 1 << 48, "push id time \(milliseconds) out of range")
        var time = milliseconds
        if time <= lastTime && incrementRandomDigits() {
            time = lastTime
        } else {
            // A new millisecond (or a clock that went back, or a random part used up): fresh digits.
            if time <= lastTime { time = lastTime + 1 }
            for index in 0..<12 { lastRandom[index] = UInt8(source.next() & 63) }
        }
        lastTime = time
        var bytes = [UInt8](repeating: 0, count: 20)
        var remaining = time
        for index in stride(from: 7, through: 0, by: -1) {
            bytes[index] = alphabet[Int(remaining & 63)]
            remaining >>= 6
        }
        for index in 0..<12 { bytes[8 + index] = alphabet[Int(lastRandom[index])] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Adds one to the random digits, carrying from the right; `false` if they were all at maximum.
    private mutating func incrementRandomDigits() -> Bool {
        var index = 11
        while index >= 0 && lastRandom[index] == 63 {
            lastRandom[index] = 0
            index -= 1
        }
        guard index >= 0 else { return false }
        lastRandom[index] += 1
        return true
    }
}

extension PushIDGenerator where Source == SystemRandomNumberGenerator {
    /// Creates a generator using the system's secure random numbers.
    public init() { self.init(source: SystemRandomNumberGenerator()) }
}
