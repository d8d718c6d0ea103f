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

    /// Whole numbers' digits, written two at a time, against Swift's own: every length, both signs, Int64's ends.
    @Test func decimalDigitsAreSwiftsDigits() {
        var values: [Int64] = [0, 1, -1, 9, -9, 10, 99, 100, 101, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -(power - 1), -power, power / 2 + 7]
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            values.append(
                Int64.random(in: .min ... .max, using: &generator) >> Int64.random(in: 0..<63, using: &generator))
        }
        for value in values {
            let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int64.maxDecimalLength) { buffer in
                let count = value.writeDecimal(into: buffer.baseAddress!)
                return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
            }
            #expect(written == String(value))
        }
    }

    /// `wholeNumber`: the integer of a whole value below 10^15, nil for a fraction, 10^15 and past, NaN and the
    /// infinities.
    @Test func wholeNumbersAreTheIntegralValuesBelowTheLimit() {
        let whole: [(Double, Int64)] = [
            (0, 0), (-0.0, 0), (3, 3), (-375, -375), (999_999_999_999_999, 999_999_999_999_999),
        ]
        for (value, expected) in whole { #expect(value.wholeNumber == expected, "\(value)") }
        for value in [0.5, -2.5, 1e-300, 1e15, -1e15, 1e300, Double.nan, .infinity, -.infinity, 0.1 + 0.2] {
            #expect(value.wholeNumber == nil, "\(value)")
        }
    }
}
