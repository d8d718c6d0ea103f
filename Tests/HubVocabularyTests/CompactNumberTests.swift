import HubVocabulary
import Testing

/// `writeCompact` writes digits itself for whole numbers; its text must be `compact`'s (trace lines and
/// outlines show both).
@Suite struct CompactNumberTests {
    static let values: [Double] = {
        var values: [Double] = [0, -0.0, 1.5, -0.25, 1e15, -1e15, 1e300, .infinity, -.infinity, .nan, 0.1 + 0.2]
        var power = 1.0
        for _ in 0..<15 {
            values += [power - 1, power, power + 1, -power, -(power - 1), 375, 667, 64]
            power *= 10
        }
        values += [999_999_999_999_999, -999_999_999_999_999, 123_456_789_012_345]
        return values
    }()

    @Test(arguments: values) func writtenTextIsTheCompactText(_ value: Double) {
        let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Double.maxCompactLength) { buffer in
            let count = value.writeCompact(into: buffer.baseAddress!)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
        #expect(written == value.compact)
    }
}
