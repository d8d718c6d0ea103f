import FoundationEssentials

/// The lines of the host's small index files (`images-index.tsv`, `probe-index.tsv`): a header line, then one
/// record per line with tab-separated fields, the last of which takes the rest of the line (a path).
///
/// Parsed from the bytes: with `String.split`, reading a 200-line index was a tenth of a warm start's CPU.
struct TabSeparatedLines {
    /// One line's fields, valid only inside the `forEachRecord` call that passes it.
    struct Fields {
        fileprivate let bytes: UnsafeBufferPointer<UInt8>
        fileprivate var ranges: [Range<Int>] = []

        var count: Int { ranges.count }

        func string(_ i: Int) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[ranges[i]]), as: UTF8.self)
        }

        /// True when field `i` is exactly the one ASCII character `c`.
        func isCharacter(_ i: Int, _ c: UInt8) -> Bool { ranges[i].count == 1 && bytes[ranges[i].lowerBound] == c }

        /// Field `i` as a decimal integer (an optional leading minus); nil when it is not one or overflows.
        func int64(_ i: Int) -> Int64? {
            var range = ranges[i]
            var negative = false
            if range.first.map({ bytes[$0] == UInt8(ascii: "-") }) == true {
                negative = true
                range = range.dropFirst()
            }
            guard let magnitude = unsigned(range), magnitude <= UInt64(Int64.max) else { return nil }
            return negative ? -Int64(magnitude) : Int64(magnitude)
        }

        func uint64(_ i: Int) -> UInt64? { unsigned(ranges[i]) }

        private func unsigned(_ range: Range<Int>) -> UInt64? {
            guard !range.isEmpty, range.count <= 20 else { return nil }
            var value: UInt64 = 0
            for index in range {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
                guard !overflow1, !overflow2 else { return nil }
                value = sum
            }
            return value
        }
    }

    let data: Data

    /// The first line, without its newline.
    var header: String {
        let end = data.firstIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
        return String(decoding: data[data.startIndex..<end], as: UTF8.self)
    }

    /// Calls `body` with the fields of every non-empty line after the header, split at the first
    /// `fieldCount - 1` tabs (a line with fewer fields is passed with fewer: the caller checks `count`).
    func forEachRecord(fieldCount: Int, _ body: (Fields) -> Void) {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var fields = Fields(bytes: bytes)
            fields.ranges.reserveCapacity(fieldCount)
            var lineStart = (bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count - 1) + 1
            while lineStart < bytes.count {
                let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                defer { lineStart = lineEnd + 1 }
                guard lineEnd > lineStart else { continue }
                fields.ranges.removeAll(keepingCapacity: true)
                var fieldStart = lineStart
                var index = lineStart
                while index < lineEnd, fields.ranges.count < fieldCount - 1 {
                    if bytes[index] == UInt8(ascii: "\t") {
                        fields.ranges.append(fieldStart..<index)
                        fieldStart = index + 1
                    }
                    index += 1
                }
                fields.ranges.append(fieldStart..<lineEnd)
                body(fields)
            }
        }
    }
}
