/// Sizes, points and rectangles in points; the origin is top-left and y grows downwards.
public struct Size: Hashable, Sendable, Codable, CustomStringConvertible {
    public var width: Double
    public var height: Double
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
    public static let zero = Size(width: 0, height: 0)
    public var description: String { "\(width.compact)×\(height.compact)" }
}

public struct Point: Hashable, Sendable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
    public static let zero = Point(x: 0, y: 0)
    public var description: String { "(\(x.compact), \(y.compact))" }
}

public struct Rect: Hashable, Sendable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    public init(origin: Point = .zero, size: Size) {
        self.init(x: origin.x, y: origin.y, width: size.width, height: size.height)
    }
    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)
    public var minX: Double { x }
    public var minY: Double { y }
    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var size: Size { Size(width: width, height: height) }
    public var origin: Point { Point(x: x, y: y) }
    public func contains(_ p: Point) -> Bool { p.x >= x && p.x < maxX && p.y >= y && p.y < maxY }
    public func intersects(_ other: Rect) -> Bool {
        x < other.maxX && other.x < maxX && y < other.maxY && other.y < maxY
    }
    public func offsetBy(dx: Double, dy: Double) -> Rect { Rect(x: x + dx, y: y + dy, width: width, height: height) }
    /// The part both rectangles cover (zero-sized when they do not meet).
    public func intersection(_ other: Rect) -> Rect {
        let left = max(x, other.x)
        let top = max(y, other.y)
        let right = min(maxX, other.maxX)
        let bottom = min(maxY, other.maxY)
        return Rect(x: left, y: top, width: max(0, right - left), height: max(0, bottom - top))
    }
    /// Shrunk by `dx` on the left and right and `dy` on the top and bottom (never below zero size).
    public func insetBy(dx: Double, dy: Double) -> Rect {
        Rect(x: x + dx, y: y + dy, width: max(0, width - 2 * dx), height: max(0, height - 2 * dy))
    }
    public var description: String { "(\(x.compact), \(y.compact), \(width.compact), \(height.compact))" }
}

extension Double {
    /// The value as an integer when it is a whole number below 10^15, else nil. A round trip through Int64
    /// rather than `rounded()`, which is a libm call (the writers ask for every coordinate).
    @inlinable
    public var wholeNumber: Int64? {
        guard abs(self) < 1e15 else { return nil }  // also false for NaN
        let whole = Int64(self)
        return Double(whole) == self ? whole : nil
    }

    /// "15" rather than "15.0"; used in messages and outlines.
    public var compact: String {
        if let whole = wholeNumber { return String(whole) }
        return String(self)
    }

    /// The most bytes `writeCompact` writes.
    public static let maxCompactLength = 32

    /// `compact`'s text written as UTF-8 at `destination` (room for `maxCompactLength` bytes); returns the byte
    /// count. A whole number's digits are written straight in: trace lines write a few per line, and a String
    /// each cost more than the rest of the line.
    public func writeCompact(into destination: UnsafeMutablePointer<UInt8>) -> Int {
        guard let whole = wholeNumber else {
            var text = String(self)
            return text.withUTF8 { utf8 in
                let count = Swift.min(utf8.count, Double.maxCompactLength)
                destination.update(from: utf8.baseAddress!, count: count)
                return count
            }
        }
        return whole.writeDecimal(into: destination)
    }
}

extension Int64 {
    /// The most bytes `writeDecimal` writes ("-9223372036854775808").
    public static let maxDecimalLength = 20

    /// The decimal digits (and sign) written as UTF-8 at `destination` (room for `maxDecimalLength` bytes);
    /// returns the byte count. Digits are counted, then written from the last one back, two per division: a
    /// division by a constant is a multiply, and each waits for the one before, so pairs halve the wait. The
    /// writers (`ByteWriter`) and trace lines write whole numbers through it.
    @inlinable
    public func writeDecimal(into destination: UnsafeMutablePointer<UInt8>) -> Int {
        var written = 0
        if self < 0 {
            destination[0] = UInt8(ascii: "-")
            written = 1
        }
        var magnitude = self.magnitude
        var digits = 1
        var power: UInt64 = 10
        while digits < 19 && magnitude >= power {
            digits += 1
            power &*= 10
        }
        written += digits
        var position = written
        while magnitude >= 100 {
            let pair = magnitude % 100
            magnitude /= 100
            position -= 2
            destination[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: pair / 10)
            destination[position + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: pair % 10)
        }
        if magnitude >= 10 {
            destination[position - 2] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude / 10)
            destination[position - 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
        } else {
            destination[position - 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
        }
        return written
    }
}
