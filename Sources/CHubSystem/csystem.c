#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
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

uint64_t csystem_load_word(const uint64_t *word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }

void csystem_name_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}

// Shared by the handlers below.

/// The signals that end a process for a fault in its code.
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
#define FATAL_SIGNAL_COUNT (sizeof fatal_signals / sizeof fatal_signals[0])

/// The signals that ask a process to end.
static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
#define STOP_SIGNAL_COUNT (sizeof stop_signals / sizeof stop_signals[0])

/// Installs `handler` for `signal_number` (SA_SIGINFO | SA_RESETHAND and `extra_flags`, nothing else blocked while
/// it runs), keeping the action before in `previous` when given.
static void install_handler(int signal_number, void (*handler)(int, siginfo_t *, void *), int extra_flags,
                            struct sigaction *previous) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handler;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND | extra_flags;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, previous);
}

/// Starts `body(argument)` on a detached thread (`stack_size` 0: the default stack); false when it could not.
static bool start_detached(void *(*body)(void *), void *argument, size_t stack_size) {
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    if (stack_size > 0) pthread_attr_setstacksize(&attributes, stack_size);
    bool started = pthread_create(&thread, &attributes, body, argument) == 0;
    pthread_attr_destroy(&attributes);
    return started;
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

/// Whether the page holding `address` is mapped (mincore fails with ENOMEM on an unmapped one). Signal-safe.
static bool address_is_mapped(uint64_t address) {
    int saved = errno;
    uint64_t page = (uint64_t)getpagesize();
    unsigned char resident;
    bool mapped = mincore((void *)(uintptr_t)(address & ~(page - 1)), 1, &resident) == 0 || errno != ENOMEM;
    errno = saved;
    return mapped;
}

/// Writes the record once (a second fault, on another thread or in the handler itself, finds it taken): `first`
/// (the faulting instruction, or 0), then this thread's stack, then the thread, last.
static void note_fault(uint64_t first) {
    uint64_t *record = fault_record;
    if (record == NULL || __atomic_exchange_n(&fault_record, NULL, __ATOMIC_ACQ_REL) != record) return;
    int count = 0;
    if (first != 0) record[2 + count++] = first;
    // glibc's backtrace (warmed up at install, so it loads nothing now) walks through a signal frame into the
    // code that faulted. Not when that code is not mapped (a plugin's thread still running after its image was
    // unloaded): the unwinder reads the instructions there and faulted in this handler, so nothing was noted.
    void *frames[64];
    int depth = first != 0 && !address_is_mapped(first) ? 0 : backtrace(frames, 64);
    for (int i = 0; i < depth && count < fault_capacity; i++) {
        uint64_t address = (uint64_t)frames[i];
        if (address != first) record[2 + count++] = address;
    }
    record[1] = (uint64_t)count;
    __atomic_store_n(&record[0], gettid() == getpid() ? 1 : 2, __ATOMIC_RELEASE);
}

// A probe child reports where in the plugin's image a fault was, as one line on its report channel (see
// csystem_report_faults): it has no black box its parent reads.
static int fault_report_fd = -1;
static uint64_t fault_report_record[2 + 32];
static uint64_t fault_image_start, fault_image_end;

/// Writes `{"faultOffset":N}` to the report channel: N the offset in the plugin's image of the innermost noted
/// address inside it (a return address less one, so it names the calling instruction). Signal-safe.
static void report_fault_offset(bool first_is_instruction) {
    uint64_t start = fault_image_start, end = fault_image_end;
    if (fault_report_fd < 0 || start == 0 || fault_report_record[0] == 0) return;
    uint64_t count = fault_report_record[1];
    for (uint64_t i = 0; i < count && i < 32; i++) {
        uint64_t address = fault_report_record[2 + i];
        if (address < start || address >= end) continue;
        uint64_t offset = address - start - (i == 0 && first_is_instruction ? 0 : 1);
        char line[64] = "{\"faultOffset\":";
        size_t at = strlen(line);
        char digits[24];
        int n = 0;
        do {
            digits[n++] = (char)('0' + offset % 10);
            offset /= 10;
        } while (offset != 0);
        while (n > 0) line[at++] = digits[--n];
        line[at++] = '}';
        line[at++] = '\n';
        ssize_t ignored = write(fault_report_fd, line, at);
        (void)ignored;
        return;
    }
}

static void note_fatal_signal(int signal_number, siginfo_t *info, void *context) {
    (void)info;
    uint64_t instruction = context ? faulting_instruction((const ucontext_t *)context) : 0;
    note_fault(instruction);
    report_fault_offset(instruction != 0);
    // SA_RESETHAND made the action the default again; the signal, blocked until this returns, then ends the process.
    raise(signal_number);
}

/// exit() called on another thread than the main one (a plugin's own): the main thread's ends are the host's.
static void note_exit(void) {
    if (gettid() != getpid()) note_fault(0);
}

// Every thread of a worker gets a signal stack of its own, so the handler above runs, and notes the thread, when a
// thread overflows its stack. Without one the kernel ends the process before any handler: a plugin thread's
// overflow was blamed on the main thread's call in progress, or on hubhost when no call was (and `dev` restarted
// the worker with the same plugin, to crash again). Threads plugin code starts get theirs through
// `pthread_create`, which the hubhost executables export so that it interposes on libc's for every library.

#define THREAD_SIGNAL_STACK_SIZE (64 * 1024)

static bool signal_stacks_for_new_threads;
static pthread_key_t signal_stack_key;
static pthread_once_t signal_stack_key_once = PTHREAD_ONCE_INIT;

static void release_signal_stack(void *stack) {
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    munmap(stack, THREAD_SIGNAL_STACK_SIZE);
}

static void make_signal_stack_key(void) { pthread_key_create(&signal_stack_key, release_signal_stack); }

/// Gives the calling thread a signal stack, freed when the thread ends.
static void give_thread_signal_stack(void) {
    void *stack = mmap(NULL, THREAD_SIGNAL_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) return;
    stack_t given = {.ss_sp = stack, .ss_size = THREAD_SIGNAL_STACK_SIZE, .ss_flags = 0};
    if (sigaltstack(&given, NULL) != 0) {
        munmap(stack, THREAD_SIGNAL_STACK_SIZE);
        return;
    }
    pthread_once(&signal_stack_key_once, make_signal_stack_key);
    pthread_setspecific(signal_stack_key, stack);
}

struct thread_start {
    void *(*routine)(void *);
    void *argument;
};

static void *start_with_signal_stack(void *start) {
    struct thread_start copy = *(struct thread_start *)start;
    free(start);
    give_thread_signal_stack();
    return copy.routine(copy.argument);
}

typedef int (*pthread_create_function)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

__attribute__((visibility("default"))) int pthread_create(pthread_t *thread, const pthread_attr_t *attributes,
                                                          void *(*routine)(void *), void *argument) {
    static pthread_create_function libc_create;
    if (libc_create == NULL) libc_create = (pthread_create_function)dlsym(RTLD_NEXT, "pthread_create");
    if (libc_create == NULL) return EAGAIN;  // no libc after this executable: no thread, rather than a crash
    if (!__atomic_load_n(&signal_stacks_for_new_threads, __ATOMIC_ACQUIRE)) {
        return libc_create(thread, attributes, routine, argument);
    }
    struct thread_start *start = malloc(sizeof *start);
    if (start == NULL) return libc_create(thread, attributes, routine, argument);
    start->routine = routine;
    start->argument = argument;
    int result = libc_create(thread, attributes, start_with_signal_stack, start);
    if (result != 0) free(start);
    return result;
}

void csystem_note_faults(uint64_t *record, int capacity) {
    void *warm[2];
    backtrace(warm, 2);  // loads the unwinder now, not in the handler
    give_thread_signal_stack();
    __atomic_store_n(&signal_stacks_for_new_threads, true, __ATOMIC_RELEASE);
    fault_capacity = capacity;
    fault_record = record;
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++) install_handler(fatal_signals[i], note_fatal_signal, SA_ONSTACK, NULL);
    atexit(note_exit);
}

void csystem_report_faults(int fd) {
    csystem_note_faults(fault_report_record, 32);
    fault_report_fd = fd;
}

void csystem_set_fault_image(uint64_t start, uint64_t end) {
    fault_image_start = start;
    fault_image_end = end;
}

// A listing that loads plugins in its own process starts itself again when plugin code crashes or stalls in it
// (see csystem.h). Everything the handler and the watchdog need is prepared before any plugin code runs: they
// only patch one byte, restore the signal mask and call execve, all async-signal-safe.

static struct sigaction restart_saved[FATAL_SIGNAL_COUNT];
static sigset_t restart_mask;
static const char *restart_path;
static char *const *restart_argv;
static char *const *restart_envp;
static char *restart_cause;  // the value of the environment entry that says why: a digit string, or "hang"
static const uint64_t *restart_call_word;
static unsigned restart_timeout_ms;
static int restart_active;  // 1 while armed; the watchdog thread ends when it reads 0
static int restart_stdout = -1;  // a copy of the standard output the process started with

static void restart_now(void) {
    pthread_sigmask(SIG_SETMASK, &restart_mask, NULL);  // execve keeps the mask: the new image needs these signals
    // The host points descriptor 1 at stderr while plugin code runs; the new run writes its output to the real one.
    if (restart_stdout >= 0) dup2(restart_stdout, 1);
    execve(restart_path, restart_argv, restart_envp);
}

static void restart_after_signal(int signal_number, siginfo_t *info, void *context) {
    (void)info;
    (void)context;
    if (__atomic_exchange_n(&restart_active, 0, __ATOMIC_ACQ_REL) == 1) {
        restart_cause[0] = (char)('0' + signal_number / 10);
        restart_cause[1] = (char)('0' + signal_number % 10);
        restart_cause[2] = 0;
        restart_now();
    }
    // Not armed any more, or execve failed: end as the signal would have (SA_RESETHAND made it the default).
    raise(signal_number);
}

static void *restart_watchdog(void *unused) {
    (void)unused;
    uint64_t seen = 0;
    unsigned still = 0;
    while (__atomic_load_n(&restart_active, __ATOMIC_ACQUIRE) == 1) {
        usleep(50 * 1000);
        uint64_t word = __atomic_load_n(restart_call_word, __ATOMIC_RELAXED);
        if (word == 0 || word != seen) {
            seen = word;
            still = 0;
            continue;
        }
        still += 50;
        if (still >= restart_timeout_ms && __atomic_exchange_n(&restart_active, 0, __ATOMIC_ACQ_REL) == 1) {
            memcpy(restart_cause, "hang", 5);
            restart_now();
            _exit(70);  // execve failed: the stalled call would never return
        }
    }
    return NULL;
}

/// exit() called by plugin code (a call is in progress): the process would end with the listing unwritten.
static void restart_after_exit(void) {
    if (__atomic_load_n(restart_call_word, __ATOMIC_RELAXED) != 0 &&
        __atomic_exchange_n(&restart_active, 0, __ATOMIC_ACQ_REL) == 1) {
        memcpy(restart_cause, "exit", 5);
        restart_now();
    }
}

bool csystem_restart_on_fault(const char *path, char *const argv[], char *const envp[], char *cause,
                              const uint64_t *call_word, unsigned timeout_ms) {
    if (restart_stdout < 0) restart_stdout = fcntl(1, F_DUPFD_CLOEXEC, 10);
    restart_path = path;
    restart_argv = argv;
    restart_envp = envp;
    restart_cause = cause;
    restart_call_word = call_word;
    restart_timeout_ms = timeout_ms;
    pthread_sigmask(SIG_SETMASK, NULL, &restart_mask);
    // A stack overflow in plugin code needs a stack of its own for the handler (kept for the process's life).
    static void *alternate;
    if (alternate == NULL && (alternate = malloc(64 * 1024)) != NULL) {
        stack_t stack = {.ss_sp = alternate, .ss_size = 64 * 1024, .ss_flags = 0};
        sigaltstack(&stack, NULL);
    }
    __atomic_store_n(&restart_active, 1, __ATOMIC_RELEASE);
    static bool exit_handler_registered;
    if (!exit_handler_registered) exit_handler_registered = atexit(restart_after_exit) == 0;
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++) {
        install_handler(fatal_signals[i], restart_after_signal, SA_ONSTACK, &restart_saved[i]);
    }
    return start_detached(restart_watchdog, NULL, 0);
}

void csystem_restart_on_fault_end(void) {
    __atomic_store_n(&restart_active, 0, __ATOMIC_RELEASE);
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++) sigaction(fatal_signals[i], &restart_saved[i], NULL);
}

// Signals that ask a process to end (SIGTERM, SIGINT, SIGHUP, SIGQUIT): who sent one, so a supervisor can tell a
// worker stopped from outside (a user's kill, a closed terminal) from plugin code that ended its own process.

static uint64_t *stop_record;

/// The parent of `pid`, from /proc/PID/stat (async-signal-safe: open, read, close); 0 when unknown.
static pid_t parent_of(pid_t pid) {
    char path[32] = "/proc/";
    int at = 6;
    char digits[12];
    int count = 0;
    for (unsigned value = (unsigned)pid; value > 0 && count < 11; value /= 10) digits[count++] = (char)('0' + value % 10);
    while (count > 0) path[at++] = digits[--count];
    memcpy(path + at, "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buffer[512];
    ssize_t length = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (length <= 0) return 0;
    buffer[length] = 0;
    // "pid (name) S ppid …": the name may hold anything, so the fields start after the last ')'.
    char *close_paren = NULL;
    for (char *c = buffer; *c; c++) if (*c == ')') close_paren = c;
    if (close_paren == NULL || close_paren[1] != ' ' || close_paren[2] == 0 || close_paren[3] != ' ') return 0;
    pid_t parent = 0;
    for (char *c = close_paren + 4; *c >= '0' && *c <= '9'; c++) parent = parent * 10 + (*c - '0');
    return parent;
}

/// Whether `pid` is this process or one it started (a child, a child's child…): plugin code's processes.
static bool is_own_process(pid_t pid) {
    pid_t self = getpid();
    for (int depth = 0; depth < 32 && pid > 1; depth++) {
        if (pid == self) return true;
        pid = parent_of(pid);
    }
    return false;
}

static void note_stop_signal(int signal_number, siginfo_t *info, void *context) {
    (void)context;
    // Sent by the kernel (a terminal hanging up) or by another process: from outside. Sent by this process itself
    // (raise, kill(getpid())) or by a process it started (a plugin's fork, `system("kill …")`): plugin code's, so
    // nothing is noted.
    bool outside =
        info == NULL || info->si_code == SI_KERNEL || (info->si_code <= 0 && !is_own_process(info->si_pid));
    if (outside && stop_record != NULL) {
        uint64_t sender = info != NULL && info->si_code != SI_KERNEL ? (uint64_t)(uint32_t)info->si_pid : 0;
        __atomic_store_n(stop_record, sender << 8 | (uint64_t)signal_number, __ATOMIC_RELEASE);
    }
    raise(signal_number);  // SA_RESETHAND: the default action now ends the process
}

void csystem_unblock_stop_signals(void) {
    // A launcher may start hubhost with these blocked (test runners do), and the mask is inherited: a worker or
    // probe that could not be stopped by them would outlive a user's kill.
    sigset_t stop_set;
    sigemptyset(&stop_set);
    for (size_t i = 0; i < STOP_SIGNAL_COUNT; i++) sigaddset(&stop_set, stop_signals[i]);
    pthread_sigmask(SIG_UNBLOCK, &stop_set, NULL);
}

// Stop signals held back while a short step that must not be cut in half runs (`csystem_hold_stop_signals`).
static const int held_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define HELD_SIGNAL_COUNT (sizeof held_signals / sizeof held_signals[0])
static struct sigaction held_previous[HELD_SIGNAL_COUNT];
static volatile sig_atomic_t held_arrived = 0;

static void note_held_signal(int signal_number) { held_arrived = signal_number; }

void csystem_hold_stop_signals(void) {
    held_arrived = 0;
    for (size_t i = 0; i < HELD_SIGNAL_COUNT; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = note_held_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        sigaction(held_signals[i], &action, &held_previous[i]);
    }
}

void csystem_release_stop_signals(void) {
    for (size_t i = 0; i < HELD_SIGNAL_COUNT; i++) sigaction(held_signals[i], &held_previous[i], NULL);
    int arrived = held_arrived;
    held_arrived = 0;
    if (arrived != 0) raise(arrived);
}

static pid_t guarding_parent = 0;

void csystem_parent_guards_worker(int32_t parent) { __atomic_store_n(&guarding_parent, (pid_t)parent, __ATOMIC_RELEASE); }

static uint64_t *state_change_record;
static const uint64_t *state_change_call;
static int plugin_code_in_this_process = 0;

void csystem_plugin_code_in_this_process(int running) {
    __atomic_store_n(&plugin_code_in_this_process, running, __ATOMIC_RELEASE);
}

/// Notes `kind` (and `detail`) with the call in progress in black box word 7 (see
/// `csystem_note_process_state_changes`); `only_in_call`: not when no plugin call is in progress (hubhost's own).
static void note_state_change(uint64_t kind, uint64_t detail, bool only_in_call) {
    uint64_t *record = __atomic_load_n(&state_change_record, __ATOMIC_ACQUIRE);
    const uint64_t *call = __atomic_load_n(&state_change_call, __ATOMIC_ACQUIRE);
    if (record == NULL || call == NULL) return;
    uint64_t word = __atomic_load_n(call, __ATOMIC_ACQUIRE);
    if (only_in_call && (word & 0xFFFF) == 0) return;
    __atomic_store_n(record, kind << 56 | detail << 32 | (word & 0xFFFFFFFFu), __ATOMIC_RELEASE);
}

/// Interposes on libc's `kill` for every library (the hubhost executables export it, as `pthread_create`): as
/// libc's, but see `csystem_parent_guards_worker` and `csystem_plugin_code_in_this_process`.
__attribute__((visibility("default"))) int kill(pid_t pid, int signal_number) {
    pid_t parent = __atomic_load_n(&guarding_parent, __ATOMIC_ACQUIRE);
    // Every process the user may signal (hubhost never asks for that), or, while plugin code runs in the user's own
    // process, its group or parent: held to this process.
    if (pid == -1 || (__atomic_load_n(&plugin_code_in_this_process, __ATOMIC_ACQUIRE) &&
                      (pid == 0 || pid == -getpgrp() || pid == getppid()))) {
        pid = getpid();
    }
    // SIGSTOP and SIGKILL cannot be caught: the supervisor would freeze, or die leaving the user's command undone.
    // Sent as SIGTERM, which it can catch and blame; the signal meant is noted (black box word 7, kind 4).
    if (parent > 0 && pid == parent &&
        (signal_number == SIGSTOP || signal_number == SIGKILL || signal_number == SIGTSTP)) {
        note_state_change(4, (uint64_t)(unsigned)signal_number, false);
        signal_number = SIGTERM;
    }
    long result = syscall(SYS_kill, pid, signal_number);
    bool stop = signal_number == SIGTERM || signal_number == SIGINT || signal_number == SIGHUP || signal_number == SIGQUIT;
    if (result == 0 && parent > 0 && pid == parent && stop) {
        for (int waited = 0; waited < 100; waited++) usleep(100000);  // ended by the supervisor well before 10 s
    }
    return (int)result;
}

void csystem_note_process_state_changes(uint64_t *record, const uint64_t *call_word) {
    __atomic_store_n(&state_change_call, call_word, __ATOMIC_RELEASE);
    __atomic_store_n(&state_change_record, record, __ATOMIC_RELEASE);
}

__attribute__((visibility("default"))) unsigned int alarm(unsigned int seconds) {
    static unsigned int (*libc_alarm)(unsigned int);
    if (libc_alarm == NULL) libc_alarm = (unsigned int (*)(unsigned int))dlsym(RTLD_NEXT, "alarm");
    if (seconds > 0) note_state_change(1, 0, true);
    return libc_alarm != NULL ? libc_alarm(seconds) : 0;
}

__attribute__((visibility("default"))) int setitimer(__itimer_which_t which, const struct itimerval *value,
                                                     struct itimerval *old) {
    if (value != NULL && (value->it_value.tv_sec != 0 || value->it_value.tv_usec != 0)) note_state_change(1, 0, true);
    return (int)syscall(SYS_setitimer, which, value, old);
}

__attribute__((visibility("default"))) int setrlimit(__rlimit_resource_t resource, const struct rlimit *limit) {
    if (limit->rlim_cur != RLIM_INFINITY) {  // glibc declares `limit` non-null
        if (resource == RLIMIT_FSIZE) note_state_change(2, 0, true);
        if (resource == RLIMIT_CPU) note_state_change(3, 0, true);
    }
    return (int)syscall(SYS_prlimit64, 0, resource, limit, NULL);
}

static volatile int refused_handler = 0;

int csystem_take_refused_handler(void) {
    int signal_number = refused_handler;
    refused_handler = 0;
    return signal_number;
}

const volatile int *csystem_refused_handler_flag(void) { return &refused_handler; }

/// Whether plugin code in a call is replacing the handler of a signal hubhost's fault reports depend on.
static bool refuses_handler(int signal_number, bool replacing) {
    if (!replacing) return false;
    switch (signal_number) {
    case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGABRT: case SIGTRAP: break;
    default: return false;
    }
    const uint64_t *call = __atomic_load_n(&state_change_call, __ATOMIC_ACQUIRE);
    if (call == NULL) return false;
    uint64_t word = __atomic_load_n(call, __ATOMIC_ACQUIRE);
    // Not in a call; or in init (PluginCall 1), after which the loader puts back what loading changed, and says so.
    if ((word & 0xFFFF) == 0 || ((word >> 16) & 0xFF) == 1) return false;
    refused_handler = signal_number;
    return true;
}

typedef int (*sigaction_function)(int, const struct sigaction *, struct sigaction *);

__attribute__((visibility("default"))) int sigaction(int signal_number, const struct sigaction *action,
                                                     struct sigaction *old) {
    static sigaction_function libc_sigaction;
    if (libc_sigaction == NULL) libc_sigaction = (sigaction_function)dlsym(RTLD_NEXT, "sigaction");
    if (libc_sigaction == NULL) return -1;
    if (refuses_handler(signal_number, action != NULL)) return old != NULL ? libc_sigaction(signal_number, NULL, old) : 0;
    return libc_sigaction(signal_number, action, old);
}

__attribute__((visibility("default"))) __sighandler_t signal(int signal_number, __sighandler_t handler) {
    static __sighandler_t (*libc_signal)(int, __sighandler_t);
    if (libc_signal == NULL) libc_signal = (__sighandler_t(*)(int, __sighandler_t))dlsym(RTLD_NEXT, "signal");
    if (libc_signal == NULL) return SIG_ERR;
    if (refuses_handler(signal_number, true)) {
        struct sigaction current;
        return sigaction(signal_number, NULL, &current) == 0 ? current.sa_handler : SIG_ERR;
    }
    return libc_signal(signal_number, handler);
}

static pid_t guarded_worker = 0;
static const uint64_t *guarded_box = NULL;
static volatile sig_atomic_t worker_stop_signal = 0;
static uint64_t worker_stop_call = 0, worker_stop_location = 0;

static void supervisor_stop_signal(int signal_number, siginfo_t *info, void *context) {
    (void)context;
    pid_t worker = __atomic_load_n(&guarded_worker, __ATOMIC_ACQUIRE);
    // From the worker or a process it started (not the kernel, not this process): plugin code aimed at hubhost.
    if (info != NULL && info->si_code <= 0 && worker > 0 && info->si_pid != getpid() && is_own_process(info->si_pid)) {
        const uint64_t *box = __atomic_load_n(&guarded_box, __ATOMIC_ACQUIRE);
        if (box != NULL) {
            worker_stop_call = __atomic_load_n(&box[1], __ATOMIC_ACQUIRE);
            worker_stop_location = __atomic_load_n(&box[2], __ATOMIC_ACQUIRE);
        }
        worker_stop_signal = signal_number;
        kill(worker, SIGKILL);
        return;
    }
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

void csystem_guard_supervisor(int32_t worker, const uint64_t *box_words) {
    static int installed = 0;
    __atomic_store_n(&guarded_box, box_words, __ATOMIC_RELEASE);
    __atomic_store_n(&guarded_worker, (pid_t)worker, __ATOMIC_RELEASE);
    if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL)) return;
    for (size_t i = 0; i < STOP_SIGNAL_COUNT; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = supervisor_stop_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigaction(stop_signals[i], &action, NULL);
    }
}

void csystem_unguard_supervisor(int32_t worker) {
    pid_t expected = (pid_t)worker;
    if (__atomic_compare_exchange_n(&guarded_worker, &expected, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        __atomic_store_n(&guarded_box, NULL, __ATOMIC_RELEASE);
}

int csystem_take_worker_stop_signal(uint64_t *call_word, uint64_t *location_word) {
    int signal_number = worker_stop_signal;
    worker_stop_signal = 0;
    *call_word = worker_stop_call;
    *location_word = worker_stop_location;
    return signal_number;
}

int csystem_spawn_close_from(void *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, from);
}

// Job control for children in process groups of their own (`csystem_follow_job_control`).
#define JOB_GROUP_CAPACITY 256
static pid_t job_groups[JOB_GROUP_CAPACITY];

void csystem_job_group_add(int32_t group) {
    for (size_t i = 0; i < JOB_GROUP_CAPACITY; i++) {
        pid_t empty = 0;
        if (__atomic_compare_exchange_n(&job_groups[i], &empty, group, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return;
    }
}

void csystem_job_group_forget(int32_t group) {
    for (size_t i = 0; i < JOB_GROUP_CAPACITY; i++) {
        pid_t expected = group;
        __atomic_compare_exchange_n(&job_groups[i], &expected, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
}

static void signal_job_groups(int signal_number) {
    for (size_t i = 0; i < JOB_GROUP_CAPACITY; i++) {
        pid_t group = __atomic_load_n(&job_groups[i], __ATOMIC_ACQUIRE);
        if (group > 0) kill(-group, signal_number);
    }
}

static void install_job_control_handler(void);

static void stop_with_job(int signal_number) {
    (void)signal_number;
    int saved = errno;
    // The children stop first, then this process as the terminal asked (the default action, raised again with
    // the handler out of the way); once continued, it continues them.
    signal_job_groups(SIGSTOP);
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(SIGTSTP, &default_action, NULL);
    sigset_t tstp;
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    pthread_sigmask(SIG_UNBLOCK, &tstp, NULL);
    raise(SIGTSTP);  // stopped here until SIGCONT
    install_job_control_handler();
    signal_job_groups(SIGCONT);
    errno = saved;  // the handler's return puts the signal mask back
}

static void install_job_control_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = stop_with_job;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGTSTP, &action, NULL);
}

void csystem_follow_job_control(void) {
    struct sigaction current;
    if (sigaction(SIGTSTP, NULL, &current) == 0 && current.sa_handler == SIG_IGN) return;
    install_job_control_handler();
    // As for the stop signals: a launcher may have blocked it, and the mask is inherited.
    sigset_t tstp;
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    pthread_sigmask(SIG_UNBLOCK, &tstp, NULL);
}

void csystem_note_stop_signals(uint64_t *record) {
    stop_record = record;
    csystem_unblock_stop_signals();
    for (size_t i = 0; i < STOP_SIGNAL_COUNT; i++) {
        struct sigaction current;
        // A signal the process ignores (a worker started with SIGINT ignored) stays ignored.
        if (sigaction(stop_signals[i], NULL, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        install_handler(stop_signals[i], note_stop_signal, 0, NULL);
    }
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

static void *exit_when_orphaned(void *parent) {
    pid_t original = (pid_t)(intptr_t)parent;
    for (;;) {
        usleep(250 * 1000);
        if (getppid() != original) _exit(70);
    }
    return NULL;
}

void csystem_exit_when_orphaned(void) { start_detached(exit_when_orphaned, (void *)(intptr_t)getppid(), 64 * 1024); }

bool csystem_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }

bool csystem_die_with_parent(int parent) {
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    return getppid() == parent;
}
