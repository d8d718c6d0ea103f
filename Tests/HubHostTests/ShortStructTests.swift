import CHubPlugin
import Foundation
import Testing

@testable import HubHost

#if canImport(Glibc)
    import Glibc
#endif

/// A plugin built against an older header hands the host shorter structs. The host reads only the bytes a
/// struct's `struct_size` covers: placed right before an inaccessible page, any read past them would crash.
@Suite struct ShortStructTests {
    /// Two pages, the second inaccessible; returns a pointer `length` bytes before the boundary.
    final class Guarded {
        let base: UnsafeMutableRawPointer
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        init() throws {
            let mapped = mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard let mapped, mapped != MAP_FAILED else { throw CocoaError(.featureUnsupported) }
            base = mapped
            mprotect(base + page, page, PROT_NONE)
        }
        deinit { munmap(base, 2 * page) }
        func ending(at length: Int) -> UnsafeMutableRawPointer { base + page - length }
    }

    @Test func aTextStyleCoveringOnlyItsFontSizeIsReadWithDefaultsForTheRest() throws {
        let guarded = try Guarded()
        let covered = MemoryLayout<hub_text_style>.offset(of: \.font_size)! + MemoryLayout<Double>.size
        let raw = guarded.ending(at: covered)
        raw.storeBytes(of: UInt32(covered), as: UInt32.self)
        raw.storeBytes(of: 20.0, toByteOffset: MemoryLayout<hub_text_style>.offset(of: \.font_size)!, as: Double.self)
        let style = CInterop.textStyle(raw.assumingMemoryBound(to: hub_text_style.self))
        #expect(style.fontSize == 20 && style.weight == 400 && style.lineLimit == 0)
    }

    @Test func aRectStyleCoveringOnlyItsFillIsReadWithDefaultsForTheRest() throws {
        let guarded = try Guarded()
        let covered = MemoryLayout<hub_rect_style>.offset(of: \.fill_color)! + MemoryLayout<UInt32>.size
        let raw = guarded.ending(at: covered)
        raw.storeBytes(of: UInt32(covered), as: UInt32.self)
        raw.storeBytes(
            of: UInt32(0xFF00_00FF), toByteOffset: MemoryLayout<hub_rect_style>.offset(of: \.fill_color)!,
            as: UInt32.self)
        let style = CInterop.rectStyle(raw.assumingMemoryBound(to: hub_rect_style.self))
        #expect(style.strokeWidth == 0 && style.cornerRadius == 0)
    }

    @Test func aShortTableIsCopiedWithItsMissingMembersZeroed() throws {
        let guarded = try Guarded()
        let covered = MemoryLayout<hub_layout_manager>.size / 2
        let raw = guarded.ending(at: covered)
        memset(raw, 0xAB, covered)
        raw.storeBytes(of: UInt32(covered), as: UInt32.self)
        let copy = CInterop.copyTable(raw.assumingMemoryBound(to: hub_layout_manager.self))
        #expect(copy.struct_size == UInt32(covered))
        withUnsafeBytes(of: copy) { bytes in
            #expect(bytes[covered...].allSatisfy { $0 == 0 })
        }
    }
}
