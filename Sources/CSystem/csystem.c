#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "csystem.h"

// gettid is a system call; a thread's id never changes, so each thread asks once. A forked child's thread is a
// new thread with the forking thread's copy of the cache, so the child forgets it.
static __thread int cached_thread_id;

static void forget_thread_id(void) { cached_thread_id = 0; }

__attribute__((constructor)) static void register_fork_handler(void) {
    pthread_atfork(NULL, NULL, forget_thread_id);
}

int csystem_thread_id(void) {
    if (cached_thread_id == 0) cached_thread_id = gettid();
    return cached_thread_id;
}

void csystem_name_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}
