// Linux calls Swift's Glibc module does not import (they need _GNU_SOURCE). Internal to hubhost; not part of the
// plugin ABI. No system headers here: included with _GNU_SOURCE, they would clash with Glibc's module.
#ifndef CSYSTEM_H
#define CSYSTEM_H

/// The calling thread's kernel id (gettid); equal to getpid() on the process's main thread.
int csystem_thread_id(void);

/// Names the calling thread for debuggers and `top -H` (pthread_setname_np; at most 15 bytes are kept).
void csystem_name_thread(const char *name);

#endif
