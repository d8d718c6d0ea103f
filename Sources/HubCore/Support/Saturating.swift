extension Int {
    /// `value` rounded toward zero and clamped to Int's range; NaN is 0. Sizes and counts derived from untrusted
    /// numbers (a viewport of 1e300, a font size near zero) go through this instead of `Int(_:)`, which traps.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9.2e18 {
            self = .max
        } else if value <= -9.2e18 {
            self = .min
        } else {
            self = Int(value)
        }
    }
}
