#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "csystem.h"

int csystem_thread_id(void) { return gettid(); }

void csystem_name_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}
