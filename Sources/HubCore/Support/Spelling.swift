/// "Did you mean …?" for names a person typed: a component id, a script key, a module-file field.
public enum Spelling {
    /// The candidate closest to `word`, when it is within `maxDistance` edits of it (by default one edit for a
    /// word of up to four characters, else two): close enough to be a typo of it.
    public static func nearest(_ word: String, in candidates: [String], maxDistance: Int? = nil) -> String? {
        // Lengths first: the distance is at least their difference, so a word far longer than every candidate (a
        // megabyte-long name from an untrusted script) is answered without a table of its length by theirs.
        let lengths = candidates.map { $0.unicodeScalars.count }
        let longest = lengths.max() ?? 0
        let limit = maxDistance ?? (word.count <= 4 ? 1 : 2)
        guard word.unicodeScalars.count <= longest + limit else { return nil }
        let letters = Array(word.unicodeScalars)
        var best: (name: String, distance: Int)?
        for (candidate, length) in zip(candidates, lengths).sorted(by: { $0.0 < $1.0 })
        where abs(length - letters.count) <= limit {
            let distance = editDistance(letters, Array(candidate.unicodeScalars))
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Levenshtein distance, with a swap of two neighbours counting as one edit ("hduex" → "hdeux").
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
