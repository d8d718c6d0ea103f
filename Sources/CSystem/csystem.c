#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "csystem.h"

// gettid and getpid are system calls (glibc caches neither); a thread's id and the process's never change, so
// each is asked once. A forked child is a new process whose thread has the forking thread's copy of the caches,
// so the child forgets them.
static __thread int cached_thread_id;
static int cached_process_id;

static void forget_thread_id(void) {
    cached_thread_id = 0;
    cached_process_id = 0;
}

__attribute__((constructor)) static void register_fork_handler(void) {
    pthread_atfork(NULL, NULL, forget_thread_id);
}

int csystem_thread_id(void) {
    if (cached_thread_id == 0) cached_thread_id = gettid();
    return cached_thread_id;
}

bool csystem_is_main_thread(void) {
    if (cached_process_id == 0) cached_process_id = getpid();
    return csystem_thread_id() == cached_process_id;
}

void csystem_name_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}

// Fatal signals, and exit() off the main thread: where they happened, for a supervisor to name the plugin whose
// code it was (see csystem.h).

static uint64_t *fault_record;
static int fault_capacity;

static uint64_t faulting_instruction(const ucontext_t *context) {
#if defined(__x86_64__)
    return (uint64_t)context->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uint64_t)context->uc_mcontext.pc;
#else
    (void)context;
    return 0;
#endif
}

/// Writes the record once (a second fault, on another thread or in the handler itself, finds it taken): `first`
/// (the faulting instruction, or 0), then this thread's stack, then the thread, last.
static void note_fault(uint64_t first) {
    uint64_t *record = fault_record;
    if (record == NULL || __atomic_exchange_n(&fault_record, NULL, __ATOMIC_ACQ_REL) != record) return;
    int count = 0;
    if (first != 0) record[2 + count++] = first;
    // glibc's backtrace (warmed up at install, so it loads nothing now) walks through a signal frame into the
    // code that faulted.
    void *frames[64];
    int depth = backtrace(frames, 64);
    for (int i = 0; i < depth && count < fault_capacity; i++) {
        uint64_t address = (uint64_t)frames[i];
        if (address != first) record[2 + count++] = address;
    }
    record[1] = (uint64_t)count;
    __atomic_store_n(&record[0], gettid() == getpid() ? 1 : 2, __ATOMIC_RELEASE);
}

static void note_fatal_signal(int signal_number, siginfo_t *info, void *context) {
    (void)info;
    note_fault(context ? faulting_instruction((const ucontext_t *)context) : 0);
    // SA_RESETHAND made the action the default again; the signal, blocked until this returns, then ends the process.
    raise(signal_number);
}

/// exit() called on another thread than the main one (a plugin's own): the main thread's ends are the host's.
static void note_exit(void) {
    if (gettid() != getpid()) note_fault(0);
}

void csystem_note_faults(uint64_t *record, int capacity) {
    void *warm[2];
    backtrace(warm, 2);  // loads the unwinder now, not in the handler
    fault_capacity = capacity;
    fault_record = record;
    static const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = note_fatal_signal;
        action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        sigaction(signals[i], &action, NULL);
    }
    atexit(note_exit);
}

struct image_search {
    uintptr_t base;
    const char *name;
    uint64_t start, end;
    bool found;
};

static int find_image(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct image_search *search = data;
    if (info->dlpi_addr != search->base || strcmp(info->dlpi_name, search->name) != 0) return 0;
    uint64_t low = UINT64_MAX, high = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_LOAD) continue;
        uint64_t from = info->dlpi_addr + header->p_vaddr;
        if (from < low) low = from;
        if (from + header->p_memsz > high) high = from + header->p_memsz;
    }
    if (low < high) {
        search->start = low;
        search->end = high;
        search->found = true;
    }
    return 1;
}

bool csystem_image_range(void *handle, uint64_t *start, uint64_t *end) {
    struct link_map *map = NULL;
    if (handle == NULL || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL) return false;
    struct image_search search = {map->l_addr, map->l_name, 0, 0, false};
    dl_iterate_phdr(find_image, &search);
    if (!search.found) return false;
    *start = search.start;
    *end = search.end;
    return true;
}

int csystem_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

bool csystem_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }

bool csystem_die_with_parent(int parent) {
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    return getppid() == parent;
}
