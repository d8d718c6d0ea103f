#if canImport(Glibc)
    import Glibc
#endif

/// The bytes of the file at `path`, read straight into the array the decoder scans (`Data(contentsOf:)` and a
/// copy into `[UInt8]` cost a 100k view two passes over 12 MB). Reads to the end, so a FIFO or `/dev/stdin` works.
/// A relative path is the user's: from the directory hubhost started in (`ProcessStart`).
/// With `limit`, a file (or stream) of more bytes is refused with `FileTooLarge` before it is read whole.
public func readWholeFile(_ path: String, limit: Int? = nil) throws -> [UInt8] {
    let fd = open(ProcessStart.absolute(path), O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw FileReadError(errno: errno) }
    defer { close(fd) }
    /// Reads into `buffer` until it is full or the file ends; the count read.
    func readFully(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var count = 0
        while count < buffer.count {
            let got = read(fd, buffer.baseAddress! + count, buffer.count - count)
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw FileReadError(errno: errno) }
            if got == 0 { break }
            count += got
        }
        return count
    }
    var status = stat()
    let size = fstat(fd, &status) == 0 ? Int(status.st_size) : 0
    if let limit, size > limit { throw FileTooLarge(size: size, limit: limit) }
    let expected = size > 0 ? size + 1 : 64 << 10
    var bytes = try [UInt8](unsafeUninitializedCapacity: expected) { buffer, count in
        count = try readFully(UnsafeMutableRawBufferPointer(buffer))
    }
    guard bytes.count == expected else { return bytes }
    // More than fstat said (a FIFO, a file still growing): the rest in chunks.
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
        let got = try chunk.withUnsafeMutableBytes(readFully)
        bytes.append(contentsOf: chunk[..<got])
        if let limit, bytes.count > limit { throw FileTooLarge(size: bytes.count, limit: limit) }
        if got < chunk.count { return bytes }
    }
}

/// A file that cannot be read, with the system's reason ("No such file or directory").
public struct FileReadError: Error, CustomStringConvertible {
    public let errno: Int32
    public init(errno: Int32) { self.errno = errno }
    public var description: String { String(cString: strerror(errno)) }
}

/// A file over the size a reader allows ("is 300 MB, more than the 64 MB an event script may be").
public struct FileTooLarge: Error, CustomStringConvertible {
    public let size: Int
    public let limit: Int
    public var description: String {
        "is \(size >> 20 > 0 ? "\(size >> 20) MiB" : "\(size) bytes") or more, over the limit of \(limit >> 20) MiB"
    }
}

/// Up to `count` bytes of `fd` from `offset` (fewer at the end of the file); nil when the read fails.
public func readBytes(_ fd: Int32, count: Int, at offset: Int) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: max(0, count))
    let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
    return got < 0 ? nil : Array(bytes.prefix(got))
}

/// Writes all of `bytes` to `fd`, again after a signal or a short write; false when a write fails (errno says
/// why: EPIPE when a pipe's reader is gone) or writes nothing.
@discardableResult
public func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var written = 0
    while written < bytes.count {
        let count = write(fd, bytes.baseAddress! + written, bytes.count - written)
        if count < 0 && errno == EINTR { continue }
        // A descriptor made non-blocking behind hubhost's back (plugin code sets O_NONBLOCK on the standard
        // output it shares with the user's shell): wait until the reader takes more, as a blocking write would.
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
            var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&ready, 1, -1) >= 0 || errno == EINTR { continue }
            return false
        }
        guard count > 0 else { return false }
        written += count
    }
    return true
}
