import Testing

@testable import HubHost

/// What a supervisor puts in its worker's environment besides the restart count and quarantine.
@Suite struct WorkerEnvironmentTests {
    @Test func theWorkersHeapAsksForHugePages() {
        #expect(WorkerEnvironment.heapTunables(nil) == "glibc.malloc.hugetlb=1")
        #expect(WorkerEnvironment.heapTunables("") == "glibc.malloc.hugetlb=1")
        #expect(WorkerEnvironment.entries(restarts: 0, quarantined: [])["GLIBC_TUNABLES"] != nil)
    }

    @Test func theUsersOwnTunablesAreKept() {
        #expect(
            WorkerEnvironment.heapTunables("glibc.malloc.arena_max=2")
                == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1")
        // A hugetlb choice of the user's (0 turns it off, 2 asks for hugetlbfs pages) is theirs.
        #expect(WorkerEnvironment.heapTunables("glibc.malloc.hugetlb=0") == "glibc.malloc.hugetlb=0")
        #expect(
            WorkerEnvironment.heapTunables("glibc.malloc.hugetlb=2:glibc.malloc.arena_max=1")
                == "glibc.malloc.hugetlb=2:glibc.malloc.arena_max=1")
    }
}
