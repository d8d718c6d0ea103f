import CHubSystem
import Glibc

/// Children that run plugin code (a worker, a probe, the scanner, the probe server) start in a process group of
/// their own. Plugin code that signals its process group (`kill(0, SIGTERM)`, a script's `kill -TERM 0`,
/// `killpg`) then ends that child, which is reported as the plugin's fault, instead of hubhost with it: in
/// `hubhost dev` that was the supervisor and the page's edits.
///
/// The terminal's Ctrl-C and hang-up reach hubhost alone, and the children end with it: a worker through
/// `csystem_die_with_parent`, a probe through `csystem_exit_when_orphaned`. Ctrl-Z reaches hubhost alone too, which
/// stops the children's groups with itself and continues them with itself (`csystem_follow_job_control`): each
/// group is recorded while its leader lives (`ended` forgets it once reaped).
enum OwnProcessGroup {
    /// The highest descriptor a child is handed (a worker's control channel is 4); every one above is closed in it.
    static let highestHandedDescriptor: Int32 = 4

    /// `posix_spawn` with the attribute that puts the child in a new process group (its pid is the group's id), and
    /// only the descriptors `actions` hands it, up to `highestHandedDescriptor`.
    static func spawn(
        _ pid: inout pid_t, _ path: String, _ actions: inout posix_spawn_file_actions_t,
        _ argv: [UnsafeMutablePointer<CChar>?], _ envp: [UnsafeMutablePointer<CChar>?]
    ) -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        // Only what the caller handed it (descriptors 0 to 4 at most): a preview server's listening socket and its
        // connections, open without close-on-exec, went to every worker started after them, which kept them open
        // after the server closed them (a page's connection then never closed, and plugin code could use them).
        _ = csystem_spawn_close_from(&actions, highestHandedDescriptor + 1)
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        if spawned == 0 { csystem_job_group_add(pid) }
        return spawned
    }

    /// The child `pid` was reaped: its group is no longer this job's (its id may be reused by anything).
    static func ended(_ pid: pid_t) { csystem_job_group_forget(pid) }
}
