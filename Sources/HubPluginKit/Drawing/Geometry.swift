import CHubPlugin

/// A size in points.
public struct Size: Hashable, Sendable, CustomStringConvertible {
    public var width: Double
    public var height: Double

    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    public static let zero = Size(width: 0, height: 0)

    public var description: String { "\(width)×\(height)" }
}

/// A point in points; the origin is the top-left corner and y grows downwards.
public struct Point: Hashable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    public static let zero = Point(x: 0, y: 0)

    public var description: String { "(\(x), \(y))" }
}

/// A rectangle in a component's own coordinates.
public struct Rect: Hashable, Sendable, CustomStringConvertible {
    public var origin: Point
    public var size: Size

    public init(x: Double, y: Double, width: Double, height: Double) {
        origin = Point(x: x, y: y)
        size = Size(width: width, height: height)
    }

    public init(origin: Point = .zero, size: Size) {
        self.origin = origin
        self.size = size
    }

    public var x: Double { origin.x }
    public var y: Double { origin.y }
    public var width: Double { size.width }
    public var height: Double { size.height }
    public var maxX: Double { origin.x + size.width }
    public var maxY: Double { origin.y + size.height }

    /// The rectangle shrunk by `dx` on the left and right and `dy` on the top and bottom (never below zero size).
    public func insetBy(dx: Double, dy: Double) -> Rect {
        Rect(x: x + dx, y: y + dy, width: max(0, width - 2 * dx), height: max(0, height - 2 * dy))
    }

    public var description: String { "(\(x), \(y), \(width), \(height))" }
}

// MARK: - Internals: conversions to and from the C types

extension Size {
    init(_ size: hub_size) { self.init(width: size.width, height: size.height) }
    var c: hub_size { hub_size(width: width, height: height) }
}

extension Point {
    init(_ point: hub_point) { self.init(x: point.x, y: point.y) }
    var c: hub_point { hub_point(x: x, y: y) }
}

extension Rect {
    var c: hub_rect { hub_rect(x: x, y: y, width: width, height: height) }
}
