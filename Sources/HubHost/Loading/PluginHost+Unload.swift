import CHubPlugin
import FoundationEssentials
import HubCore

#if canImport(Glibc)
    import Glibc
#endif

/// Unloading: one transaction per plugin (live components destroyed, registrations and timers revoked, `deinit`,
/// then `dlclose` for C images or retirement for Swift ones), checked with the dynamic loader.
extension PluginHost {
    // MARK: Unloading

    /// Unloads `record` as one transaction: its live components are destroyed, everything it registered is
    /// revoked, `deinit` runs, then the image is `dlclose`d (C) or retired but kept mapped (Swift). The report
    /// says what really happened, checked with the dynamic loader.
    @discardableResult
    public func unload(_ record: PluginRecord) -> UnloadReport {
        unload([record])[0]
    }

    /// Unloads every loaded plugin, most recently loaded first.
    @discardableResult
    public func unloadAll() -> [UnloadReport] {
        unload(plugins.filter(\.isLoaded).reversed())
    }

    func unload(_ records: [PluginRecord]) -> [UnloadReport] {
        var pending: [(record: PluginRecord, wasLoaded: Bool, destroyed: Int, revoked: [String])] = []
        for record in records {
            guard record.isLoaded else {
                pending.append((record, false, 0, []))
                continue
            }
            record.isUnloading = true
            let destroyed = record.revokeLiveComponents()
            let revoked = revokeRegistrations(of: record)
            // A descriptor too short to hold deinit reads as NULL there (copyTable zeroes what it does not cover).
            if let descriptor = record.descriptor, let deinitialize = CInterop.copyTable(descriptor).deinit {
                CallRecorder.during(.deinitialize, slot: record.callSlot) { deinitialize() }
            }
            record.codeCallable = false
            record.injectCache.clear()
            if record.isSwiftImage {
                // The Swift runtime keeps this image's metadata for good: keep it mapped (and its host table alive).
                record.state = .retired
            } else {
                closeImage(record)
                record.state = .unloaded
            }
            pending.append((record, true, destroyed, revoked))
        }
        return pending.map { record, wasLoaded, destroyed, revoked in
            let name = record.file.lastPathComponent
            let outcome: UnloadReport.Outcome
            if !wasLoaded {
                outcome = .notLoaded
            } else if record.isSwiftImage {
                outcome = .pinned
            } else if let copy = record.privateCopy?.path, MappedImages.loaderHolds(copy) {
                // In a probe or validate child, the copy is a memfd (/proc/self/fd/N): the file is named instead.
                let held = copy.hasPrefix("/proc/self/fd/") ? "\(name) (its copy \(copy))" : copy
                outcome = .stillMapped(
                    "the loader still holds \(held) (another reference, or NODELETE: C++ unique symbols, thread-local "
                        + "destructors)")
                record.warnings.append("still mapped after dlclose: \(copy)")
            } else {
                CallRecorder.imageUnmapped(slot: record.callSlot)
                discardCopy(record)
                outcome = .unloaded
            }
            let report = UnloadReport(file: name, outcome: outcome, destroyedComponents: destroyed, revoked: revoked)
            logger.debug("\(report)")
            return report
        }
    }

    /// Revokes every registration of `record` (used by unload and by a failed init). Returns what was revoked.
    @discardableResult
    func revokeRegistrations(of record: PluginRecord) -> [String] {
        var revoked: [String] = []
        record.revokeLiveComponents()
        revoked += registry.unregisterAll(ownedBy: record.owner).map { "namespace \($0.namespace)" }
        revoked += layoutManagers.unregisterAll(ownedBy: record.owner).map { "layout manager \($0.key)" }
        revoked += actionFactories.unregisterAll(ownedBy: record.owner).map { "action namespace \($0.key)" }
        let handlers = actionHandlers.filter { $0.owner == record.owner }.count
        actionHandlers.removeAll { $0.owner == record.owner }
        if handlers > 0 { revoked.append("\(handlers) action handler(s)") }
        let timers = scheduler.cancelAll(ownedBy: record.owner)
        if timers > 0 { revoked.append("\(timers) timer(s)") }
        for observer in unloadObservers { observer(record) }
        return revoked
    }

    /// Closes a C image (a Swift image stays mapped: NODELETE) and retires its host table. The caller checks
    /// whether it is really unmapped before deleting the private copy.
    func closeImage(_ record: PluginRecord) {
        guard let handle = record.handle, !record.isSwiftImage else { return }
        record.handle = nil
        // Its static destructors run in dlclose: timed and named as any call into it (one that hung wedged dev).
        CallRecorder.during(.unload, slot: record.callSlot) { _ = dlclose(handle) }
        if let table = record.hostTable {
            HostTable.retire(table)
            record.hostTable = nil
        }
    }

    /// After a failed load: close the image and delete its copy unless something still maps it.
    func abandonImage(_ record: PluginRecord) {
        closeImage(record)
        guard !record.isSwiftImage else { return }
        if let copy = record.privateCopy?.path, MappedImages.loaderHolds(copy) { return }
        discardCopy(record)
    }

    func discardCopy(_ record: PluginRecord) {
        guard let copy = record.privateCopy else { return }
        LoadedImagePaths.release(copy.path)
        PrivateCopies.discard(copy)
    }
}
