// Linux calls Swift's Glibc module does not import (they need _GNU_SOURCE). Internal to hubhost; not part of the
// plugin ABI. Only stdbool.h here: the system headers csystem.c needs come with _GNU_SOURCE there, and seen by
// Swift with it they would clash with Glibc's module.
#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stdbool.h>

/// The calling thread's kernel id (gettid); equal to getpid() on the process's main thread.
int csystem_thread_id(void);

/// Whether the caller runs on the process's main thread (its thread id is the process id); no system call after
/// a thread's first.
bool csystem_is_main_thread(void);

/// Names the calling thread for debuggers and `top -H` (pthread_setname_np; at most 15 bytes are kept).
void csystem_name_thread(const char *name);

#endif
