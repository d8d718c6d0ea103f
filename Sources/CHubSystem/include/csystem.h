// Linux calls Swift's Glibc module does not import (they need _GNU_SOURCE). Internal to hubhost; not part of the
// plugin ABI. Only stdbool.h and stdint.h here: the system headers csystem.c needs come with _GNU_SOURCE there,
// and seen by Swift with it they would clash with Glibc's module.
#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stdbool.h>
#include <stdint.h>

/// The calling thread's kernel id (gettid); equal to getpid() on the process's main thread.
int csystem_thread_id(void);

/// Whether the caller runs on the process's main thread (its thread id is the process id); no system call after
/// a thread's first.
bool csystem_is_main_thread(void);

/// Reads `*word` as it is in memory now (an acquire load the compiler cannot merge or move): for words another
/// process writes, such as a worker's black box.
uint64_t csystem_load_word(const uint64_t *word);

/// Names the calling thread for debuggers and `top -H` (pthread_setname_np; at most 15 bytes are kept).
void csystem_name_thread(const char *name);

/// Notes, when a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS) hits any thread of the
/// process or a thread other than the main one calls exit(), which thread and where, into `record` (a worker's
/// black box), then lets the process end as it would have: `record[2…]` the faulting instruction's address (a
/// signal) and the return addresses of that thread's stack (at most `capacity` in all), `record[1]` their
/// number, and `record[0]` last: 1 on the main thread, 2 on another. Only the first is noted. Call once.
void csystem_note_faults(uint64_t *record, int capacity);

/// A probe child's `csystem_note_faults`: noted in its own memory, and when a noted address is in the image set
/// with `csystem_set_fault_image`, one line `{"faultOffset":N}` (its offset in that image) written to `fd`, the
/// child's report channel, before the process ends. Call once.
void csystem_report_faults(int fd);

/// The image a probe child is exercising, `[start, end)` (0, 0: none), for `csystem_report_faults`.
void csystem_set_fault_image(uint64_t start, uint64_t end);

/// Arms a restart for a process that runs plugin code in itself: when a fatal signal (those above) hits it,
/// `*call_word` (the call recorder's word for the call in progress; 0 between calls) stays the same non-zero value
/// for `timeout_ms`, or exit() is called during a call, the process writes why into `cause` ("11" for SIGSEGV,
/// "hang", "exit"; it must hold 5 bytes and be the value of an entry of `envp`) and replaces itself with
/// `execve(path, argv, envp)`, its standard output pointed back at the one it had when this was first called.
/// Everything must stay valid until `csystem_restart_on_fault_end`. A watchdog thread polls the word every 50 ms;
/// false when it could not be started (signals are still caught).
bool csystem_restart_on_fault(const char *path, char *const argv[], char *const envp[], char *cause,
                              const uint64_t *call_word, unsigned timeout_ms);

/// Disarms `csystem_restart_on_fault`: the earlier signal actions are back, and the watchdog ends.
void csystem_restart_on_fault_end(void);

/// Notes in `*record`, when SIGTERM, SIGINT, SIGHUP or SIGQUIT comes from outside this process (another process,
/// or the kernel for a terminal that hung up), `sender pid << 8 | signal` (pid 0: the kernel), then lets the signal
/// end the process as it would have. A signal the process sends itself (plugin code's raise or kill) is not noted.
/// Signals the process ignores stay ignored; blocked ones are unblocked on the calling thread (call it on the main
/// thread before any other starts, so every thread inherits that).
void csystem_note_stop_signals(uint64_t *record);

/// Unblocks SIGTERM, SIGINT, SIGHUP and SIGQUIT on the calling thread (a launcher may have blocked them, and the
/// mask is inherited): a process hubhost starts must end when asked to.
void csystem_unblock_stop_signals(void);

/// Holds back SIGINT, SIGTERM, SIGHUP and SIGQUIT until `csystem_release_stop_signals`, for a short step that must
/// not be cut in half (goldens put in place): one that arrives meanwhile is noted, and raised on release with the
/// process's own disposition back. Not nested; main thread.
void csystem_hold_stop_signals(void);

/// Ends `csystem_hold_stop_signals`, raising the signal that arrived meanwhile, if any.
void csystem_release_stop_signals(void);

/// In a supervisor: a stop signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT) sent by `worker` or a process it started is
/// plugin code's (`kill(getppid(), SIGTERM)`): the worker is killed instead of the supervisor, and the signal is
/// kept for `csystem_take_worker_stop_signal`. Any other sender's signal ends the supervisor as by default.
/// Installed on the first call; each call names the current worker (0: none) and its black box's words, whose call
/// and location words (1 and 2) are kept as the signal arrives: the call that sent it.
void csystem_guard_supervisor(int32_t worker, const uint64_t *box_words);

/// The stop signal the worker sent its supervisor since the last call (0: none), cleared, with the black box's call
/// and location words when it arrived.
int csystem_take_worker_stop_signal(uint64_t *call_word, uint64_t *location_word);

/// In a worker: from now on, a stop signal plugin code sends the parent (`kill(getppid(), SIGTERM)`, through the
/// `kill` the hubhost executables export) is sent, then the calling thread waits for the supervisor to end the
/// worker, so the call in progress is still the one the supervisor reads (it had often returned by then).
void csystem_parent_guards_worker(int32_t parent);

/// Plugin code runs in the user's own process (`list-namespaces`), or no longer: while it does, a signal it sends
/// its process group, its parent or every process (`kill(0, …)`, `kill(getppid(), …)`, `kill(-1, …)`) reaches only
/// this process: the user's shell and script are not plugin code's to end. `kill(-1, …)` is held to this process
/// everywhere.
void csystem_plugin_code_in_this_process(int running);

/// In a worker: from now on, an alarm or interval timer (`alarm`, `setitimer`) or a lowered file size or CPU time
/// limit (`setrlimit`) set while `call_word` names a plugin call is noted in `record` as `kind << 56 | the low 32
/// bits of the call word` (kind 1 alarm or timer, 2 file size limit, 3 CPU limit): when the signal it brings ends
/// the worker later, outside that call, the supervisor can still name who set it. Through the `alarm`, `setitimer`
/// and `setrlimit` the hubhost executables export.
void csystem_note_process_state_changes(uint64_t *record, const uint64_t *call_word);

/// The signal whose handler plugin code tried to replace in a call since the last call (0: none), cleared. In a
/// worker (`csystem_note_process_state_changes`), `sigaction` and `signal` refuse a handler for SIGSEGV, SIGBUS,
/// SIGILL, SIGFPE, SIGABRT or SIGTRAP set in a plugin call other than init: hubhost's own tells whose code faulted
/// (another plugin's crash read as a hang, or as an exit with status 0). The refusal answers success; a handler set
/// while loading is put back after it instead (`ProcessStateGuard`), as a runtime may need it during init.
int csystem_take_refused_handler(void);

/// A pointer to the refused signal `csystem_take_refused_handler` clears, to check without a call.
const volatile int *csystem_refused_handler_flag(void);

/// Forgets `worker` (its black box is about to be unmapped), unless another worker was named since.
void csystem_unguard_supervisor(int32_t worker);

/// Adds to `actions` (a `posix_spawn_file_actions_t *`) the closing of every descriptor from `from` up, so a child
/// gets only the descriptors it is handed, whatever the parent has open without close-on-exec (a server library's
/// sockets). Returns 0 or an errno value.
int csystem_spawn_close_from(void *actions, int from);

/// Records `group` (a child hubhost started as the leader of a process group of its own) as part of this process's
/// job, until `csystem_job_group_forget`: see `csystem_follow_job_control`. Async-signal-safe; at most 256 at once
/// (more are not followed).
void csystem_job_group_add(int32_t group);

/// Forgets `group` once its leader has been reaped (its id may then be reused by anything).
void csystem_job_group_forget(int32_t group);

/// Makes Ctrl-Z (SIGTSTP) stop the recorded child groups with this process and SIGCONT (`fg`, `bg`) continue them
/// with it: children in groups of their own are not in the terminal's job, so they went on without it. A SIGTSTP
/// the process ignores stays ignored; a blocked one is unblocked on the calling thread (call it on the main thread
/// before any other starts).
void csystem_follow_job_control(void);

/// Asks the kernel to end this process (SIGKILL) when the thread that started it ends, as a worker must when its
/// supervisor is gone (killed, or ended by a signal). False when the parent is no longer `parent`: it ended
/// before the request was made.
bool csystem_die_with_parent(int parent);

/// Starts a thread that ends this process (`_exit(70)`) within a quarter of a second of its parent ending (its
/// parent process id changes), whatever its main thread is doing: a probe whose plugin hangs in `init` must not
/// outlive the hubhost that started it. Unlike PR_SET_PDEATHSIG, it does not depend on which of the parent's
/// threads started it (a pool thread that ends would end the child with it). Call again in a forked child.
void csystem_exit_when_orphaned(void);

/// Makes this process the one that inherits the processes its descendants leave behind when they end (instead
/// of init), so a supervisor can end what a plugin forked in its worker. False when the kernel refuses.
bool csystem_become_subreaper(void);

/// A descriptor that becomes readable when process `pid` (a child) ends (Linux 5.3's pidfd_open), so a
/// supervisor can sleep until its worker ends instead of polling; -1 where the kernel has none.
int csystem_pidfd_open(int pid);

/// The addresses `[*start, *end)` the image `handle` (from dlopen) is mapped at; false when unknown.
bool csystem_image_range(void *handle, uint64_t *start, uint64_t *end);

#endif
