/// Allocates `value` for the lifetime of the image: the C tables the host reads (component class, extension
/// tables) are shared by every instance and never freed.
func staticTable<T>(_ value: T) -> UnsafePointer<T> {
    let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
    pointer.initialize(to: value)
    return UnsafePointer(pointer)
}
