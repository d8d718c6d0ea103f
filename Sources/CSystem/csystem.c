#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
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
