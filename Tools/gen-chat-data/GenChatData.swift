import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `gen-chat-data`: writes a chat app's data as a Firebase JSON export to standard output, for
/// import and load figures anyone can reproduce.
///
/// `{"rooms": {"room-0000001": {"<push id>": {"likes": 3, "text": "...", "ts": 1700000000000,
/// "uid": "user-00042"}, ...}, ...}}`: rooms of about 400 messages (300 to 500), message keys
/// made like `childByAutoId()` ids (time, then random), keys in Firebase order as an export
/// writes them. The output depends only on the seed, and memory stays constant.
@main
struct GenChatData: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gen-chat-data",
        abstract: "Write chat-shaped data (rooms of ~400 messages) as a Firebase JSON export to standard output.")

    @Option(help: "About how many megabytes (10^6 bytes) to write; the last room is finished.")
    var megabytes: Double

    @Option(help: "The seed: the same seed writes the same bytes.")
    var seed: UInt64 = 1

    func validate() throws {
        guard megabytes >= 0 else { throw ValidationError("--megabytes must not be negative") }
    }

    func run() throws {
        var generator = ChatGenerator(seed: seed)
        var output = StandardOutput()
        try generator.write(bytes: Int(megabytes * 1e6), to: &output)
        try output.flush()
    }
}

/// The bytes of the document, made room by room.
struct ChatGenerator {
    private var random: SplitMix64
    private var time: Int64 = 1_700_000_000_000

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    private static let words: [[UInt8]] = """
        hi hello hey ok okay sure yes no maybe later soon now today tomorrow tonight lunch dinner coffee meeting call \
        the a an and or but so because if when then than this that these those it is are was were be been have has \
        had do does did will would can could should might must I you he she we they me him her us them my your our \
        their what who where why how which all any some many much more most few less good great nice cool awesome \
        bad sorry thanks thank please welcome see look watch read write send sent got get give take make let know \
        think feel want need like love hate meet go going gone come coming back home work office school weekend \
        plan plans project deploy server database query index release bug fix test tests build ship merge review \
        café naïve déjà-vu 日本 中文 🎉 👍 😀 ✔ "quoted" back\\slash
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { Array($0.utf8) } + [Array("tab\there".utf8), Array("new\nline".utf8)]

    private static let pushAlphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    /// Writes rooms until at least `bytes` are out, then closes the document.
    mutating func write(bytes target: Int, to output: inout StandardOutput) throws {
        output.append(#"{"rooms":{"#)
        var room = 0
        while output.written < target {
            if room > 0 { output.append(",") }
            room += 1
            output.append(#"""#)
            output.appendPadded(room, digits: 7, prefix: "room-")
            output.append(#"":{"#)
            writeMessages(count: 300 + Int(random.next() % 201), to: &output)
            output.append("}")
            if output.pending >= 1 << 20 { try output.flush() }
        }
        output.append("}}\n")
    }

    private mutating func writeMessages(count: Int, to output: inout StandardOutput) {
        for index in 0..<count {
            if index > 0 { output.append(",") }
            // A message every few seconds; ids sort by time, and by their random part within a millisecond.
            time += 1 + Int64(random.next() % 20_000)
            output.append(#"""#)
            appendPushID(to: &output)
            output.append(#"":{"likes":"#)
            output.appendInteger(Int64(random.next() % 4 == 0 ? random.next() % 50 : 0))
            output.append(#","text":""#)
            let wordCount = 3 + Int(random.next() % 23)
            for word in 0..<wordCount {
                if word > 0 { output.append(" ") }
                appendEscaped(ChatGenerator.words[Int(random.next() % UInt64(ChatGenerator.words.count))], to: &output)
            }
            output.append(#"","ts":"#)
            output.appendInteger(time)
            output.append(#","uid":""#)
            output.appendPadded(Int(random.next() % 100_000), digits: 5, prefix: "user-")
            output.append(#""}"#)
        }
    }

    /// 8 characters of `time`, then 12 random ones (a `childByAutoId()` id).
    private mutating func appendPushID(to output: inout StandardOutput) {
        var id = [UInt8](repeating: 0, count: 20)
        var remaining = time
        for index in stride(from: 7, through: 0, by: -1) {
            id[index] = ChatGenerator.pushAlphabet[Int(remaining & 63)]
            remaining >>= 6
        }
        var bits = random.next()
        for index in 8..<20 {
            id[index] = ChatGenerator.pushAlphabet[Int(bits & 63)]
            bits >>= 5
        }
        output.append(bytes: id)
    }

    private func appendEscaped(_ word: [UInt8], to output: inout StandardOutput) {
        for byte in word {
            switch byte {
            case UInt8(ascii: "\""): output.append(#"\""#)
            case UInt8(ascii: "\\"): output.append(#"\\"#)
            case UInt8(ascii: "\n"): output.append(#"\n"#)
            case UInt8(ascii: "\t"): output.append(#"\t"#)
            default: output.append(byte: byte)
            }
        }
    }
}

/// Standard output through a buffer, written with `write(2)`.
struct StandardOutput {
    private var buffer: [UInt8] = []
    /// Bytes handed over so far (written or buffered).
    private(set) var written = 0

    init() { buffer.reserveCapacity(2 << 20) }

    /// Bytes waiting in the buffer.
    var pending: Int { buffer.count }

    mutating func append(_ text: StaticString) {
        append(bytes: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(bytes: some Collection<UInt8>) {
        buffer.append(contentsOf: bytes)
        written += bytes.count
    }

    mutating func append(byte: UInt8) {
        buffer.append(byte)
        written += 1
    }

    mutating func appendInteger(_ value: Int64) { append(bytes: String(value).utf8) }

    mutating func appendPadded(_ value: Int, digits: Int, prefix: StaticString) {
        append(prefix)
        let text = String(value)
        for _ in text.utf8.count..<max(digits, text.utf8.count) { append(byte: UInt8(ascii: "0")) }
        append(bytes: text.utf8)
    }

    mutating func flush() throws {
        var offset = 0
        while offset < buffer.count {
            let count = buffer.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ValidationError("cannot write to standard output: \(String(cString: strerror(errno)))")
            }
            offset += count
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Steele, Lea and Flood's SplitMix64: small, fast, and the same numbers on every platform.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
