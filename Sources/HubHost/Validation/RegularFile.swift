import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a plugin file whole, with plain POSIX calls: one open, one fstat and reads on the same descriptor.
/// Never mapped: a build may truncate the file meanwhile, and a mapped page past the new end would kill the
/// process with SIGBUS. A file that shrank while being read is returned as what was read.
enum RegularFile {
    enum Problem: Error {
        /// open or fstat failed, with its errno text.
        case unreadable(String)
        case notRegular
    }

    static func read(_ url: URL) -> Result<Data, Problem> { read(url.path) }

    static func read(_ path: String) -> Result<Data, Problem> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)  // NONBLOCK: a FIFO named .so must not hang us
        guard fd >= 0 else { return .failure(.unreadable(String(cString: strerror(errno)))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.unreadable(String(cString: strerror(errno)))) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(.notRegular) }
        var data = Data(count: Int(info.st_size))
        let readCount = data.withUnsafeMutableBytes { buffer -> Int in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.read(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
            return offset
        }
        if readCount < data.count { data.removeSubrange(readCount...) }
        return .success(data)
    }
}
