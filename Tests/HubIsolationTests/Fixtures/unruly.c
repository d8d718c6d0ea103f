/*
 * unruly.c — a test plugin that does what a plugin under development does by mistake, without crashing:
 * namespace "unruly", one component "row" (full width, 40 high).
 *
 *   every configure   printf()s "UNRULY-STDOUT" (a leftover debugging line), prints a coloured line and a
 *                      terminal title to stderr, and logs a warning and an info line
 *   -DHUGE_STORIES     its showcase extension says (size_t)-1 stories; each story has the same name
 *   -DODD_STORIES      three stories that can be drawn, each wrong: a width of 50000, a model of another
 *                      component, a child of a namespace nobody serves and an image that is not a valid URI
 *   -DODD_CHILD='"x:y"'  with ODD_STORIES: the component id of that child (default "gone:card")
 *   -DNAN_MARGIN       registers a layout manager "unruly" whose margins to the content edges are NaN
 *   -DBAD_INIT_ERROR   init fails, filling the whole error buffer with an escape sequence and no NUL
 *   -DCRASH_IN_DRAW    draw dereferences NULL, except in a probe child (so it loads, then faults while drawing)
 *   -DCRASH_IN_DRAW_WHEN_PROBED  draw dereferences NULL in probe children too
 *   -DCRASH_BELOW=W    draw dereferences NULL when drawn narrower than W points, in probe children too
 *   -DTRAP_IN_DRAW     draw writes what the Swift runtime writes for a trap (the reason, then a backtrace of 30
 *                      frames) and traps, except in a probe child
 *   -DHANG_IN_DRAW     draw never returns, except in a probe child
 *   -DHANDLER_IN_DRAW  draw sets a SIGILL handler that returns (with TRAP_IN_DRAW: the trap would run for ever)
 *   -DCLOSE_IN_DRAW=N  draw closes descriptors 0 to N-1, except in a probe child (a plugin "daemonizing")
 *   -DNULL_IN_DRAW=N   draw points descriptors 0 to N-1 at /dev/null, except in a probe child
 *   -DCLOSE_FROM_3_IN_DRAW=N  draw closes descriptors 3 to N-1 (the usual "close inherited descriptors" loop)
 *   -DFORK_IN_DRAW     the first draw forks a child that sleeps 30 s holding the worker's descriptors
 *   -DFORK_IN_PROBE=N  init, in a probe child only, forks a child that sleeps 30 s holding the probe's
 *                      descriptors; with N=2 it first leaves the process group (setsid)
 *   -DKILL_GROUP_IN_LOAD  init, outside a probe child, sends SIGKILL to its process group (kill(0, SIGKILL))
 *   -DFORK_IN_LOAD     init, outside a probe child, forks a child that sleeps 30 s holding hubhost's descriptors
 *   -DCLOSE_IN_PROBE=N  init, in a probe child only, closes descriptor N (1: standard output, 2: standard error)
 *   -DABORT_AT_EXIT    draw registers an atexit handler that aborts (outside a probe child)
 *   -DLOWER_FILE_SIZE  init lowers the file size limit to 1000 bytes, soft and hard
 *   -DFORK_RETURNS     draw forks, and the child returns from draw as the parent does (outside a probe child)
 *   -DTIMER_IN_DRAW    the first draw sets a timer whose SIGALRM comes 2 ms later (outside a probe child)
 *   -DSIGNAL_PARENT=S  draw sends signal S to its process's parent (outside a probe child)
 *   -DNONBLOCKING_STDOUT  draw sets O_NONBLOCK on every open descriptor (standard output is shared with the
 *                      user's shell)
 *   -DCHANGE_PROCESS="dir"  init chdir()s to dir, sets umask 0, a SIGSEGV handler, ignores SIGHUP and sets an
 *                           alarm; draw chdir()s
 *                      to dir and sets umask 0 again (outside a probe child)
 */
#include "hub_plugin.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <signal.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <fcntl.h>

static const hub_host *host;

static const char *traits(void *instance) {
    (void)instance;
    return HUB_TRAIT_FULL_WIDTH;
}

static void load_view(void *instance) { (void)instance; }

static hub_size preferred_size(void *instance, const hub_model *model, hub_size container) {
    (void)instance;
    (void)model;
    return (hub_size){container.width, 40};
}

static void prepare_for_reuse(void *instance) { (void)instance; }

static void configure(void *instance, const hub_model *model, hub_size container) {
    (void)instance;
    (void)model;
    (void)container;
    printf("UNRULY-STDOUT\n");
    fprintf(stderr, "UNRULY-COLOUR \x1b[31mred\x1b[0m \x1b]0;title\x07\n");
    fflush(stdout);
    host->log(host, HUB_LOG_WARNING, "unruly warning");
    host->log(host, HUB_LOG_INFO, "unruly info");
}

#ifdef HANDLER_IN_DRAW
static void ignore_fault(int signal) { (void)signal; }
#endif
#ifdef CHANGE_PROCESS
static void swallow(int signal) { (void)signal; }
#endif
#ifdef ABORT_AT_EXIT
static void abort_at_exit(void) { abort(); }
#endif

static void draw(void *instance, const hub_view_builder *view, hub_size size) {
    (void)instance;
#ifdef CHANGE_PROCESS
    if (!getenv("HUBHOST_PROBE_CHILD")) {
        if (chdir(CHANGE_PROCESS) != 0) abort();
        umask(0);
    }
#endif
#ifdef FORK_IN_DRAW
    static int forked;
    if (!getenv("HUBHOST_PROBE_CHILD") && !forked++ && fork() == 0) {
        sleep(30);
        _exit(0);
    }
#endif
#ifdef FORK_RETURNS
    if (!getenv("HUBHOST_PROBE_CHILD")) fork(); /* both return: the child into hubhost */
#endif
#ifdef TIMER_IN_DRAW
    static int timer_set;
    if (!getenv("HUBHOST_PROBE_CHILD") && !timer_set++) {
        struct itimerval soon = {{0, 0}, {0, 2000}}; /* SIGALRM in 2 ms, after draw returned */
        sigset_t alarm_set; /* a test runner may start processes with it blocked */
        sigemptyset(&alarm_set);
        sigaddset(&alarm_set, SIGALRM);
        pthread_sigmask(SIG_UNBLOCK, &alarm_set, NULL);
        setitimer(ITIMER_REAL, &soon, NULL);
    }
#endif
#ifdef SIGNAL_PARENT
    if (!getenv("HUBHOST_PROBE_CHILD")) kill(getppid(), SIGNAL_PARENT); /* hubhost's supervisor */
#endif
#ifdef NONBLOCKING_STDOUT
    for (int fd = 0; fd < 1024 && !getenv("HUBHOST_PROBE_CHILD"); fd++) {
        int flags = fcntl(fd, F_GETFL);
        if (flags != -1) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    }
#endif
#ifdef ABORT_AT_EXIT
    static int registered;
    if (!getenv("HUBHOST_PROBE_CHILD") && !registered++) atexit(abort_at_exit);
#endif
#ifdef HANDLER_IN_DRAW
    if (!getenv("HUBHOST_PROBE_CHILD")) signal(SIGILL, ignore_fault); /* returning re-runs the trap: a hang */
#endif
#ifdef TRAP_IN_DRAW
    if (!getenv("HUBHOST_PROBE_CHILD")) {
        fprintf(stderr, "Unruly/Row.swift:12: Fatal error: Unexpectedly found nil while unwrapping an Optional value\n");
        fprintf(stderr, "Current stack trace:\n");
        for (int i = 0; i < 30; i++) fprintf(stderr, "%d    hubhost    0x%016x <unavailable> + %d\n", i, 0x5641 + i, 1911397 + i);
        fflush(stderr);
        __builtin_trap();
    }
#endif
#ifdef HANG_IN_DRAW
    if (!getenv("HUBHOST_PROBE_CHILD"))
        for (;;) pause();
#endif
#ifdef CLOSE_IN_DRAW
    if (!getenv("HUBHOST_PROBE_CHILD"))
        for (int fd = 0; fd < CLOSE_IN_DRAW; fd++) close(fd);
#endif
#ifdef NULL_IN_DRAW
    if (!getenv("HUBHOST_PROBE_CHILD")) {
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; fd < NULL_IN_DRAW; fd++)
            if (fd != null) dup2(null, fd);
    }
#endif
#ifdef CLOSE_FROM_3_IN_DRAW
    if (!getenv("HUBHOST_PROBE_CHILD"))
        for (int fd = 3; fd < CLOSE_FROM_3_IN_DRAW; fd++) close(fd);
#endif
#ifdef CRASH_IN_DRAW
    if (!getenv("HUBHOST_PROBE_CHILD")) *(volatile int *)0 = 1;
#endif
#ifdef CRASH_IN_DRAW_WHEN_PROBED
    *(volatile int *)0 = 1;
#endif
#ifdef CRASH_BELOW
    if (size.width < CRASH_BELOW) *(volatile int *)0 = 1;
#endif
    hub_rect_style fill = {sizeof fill, 0x999999FFu, 0, 0, 0};
    view->rect(view, (hub_rect){0, 0, size.width, size.height}, &fill);
}

static size_t story_count(void *instance) {
    (void)instance;
    return (size_t)-1;
}

static bool story(void *instance, size_t index, hub_story *out) {
    (void)instance;
    (void)index;
    out->name = "same";
    out->model_json = "{\"text\":{\"title\":\"story\"}}";
    out->widths = NULL;
    out->width_count = (size_t)-1;
    return true;
}

#ifndef ODD_CHILD
#define ODD_CHILD "gone:card"
#endif

static size_t odd_story_count(void *instance) {
    (void)instance;
    return 3;
}

static bool odd_story(void *instance, size_t index, hub_story *out) {
    (void)instance;
    static const double huge[] = {50000, 320};
    out->widths = NULL;
    out->width_count = 0;
    switch (index) {
    case 0:
        out->name = "huge width";
        out->model_json = "{\"text\":{\"title\":\"wide\"}}";
        out->widths = huge;
        out->width_count = 2;
        return true;
    case 1:
        out->name = "other component";
        out->model_json = "{\"component\":{\"id\":\"cdemo:banner\"},\"text\":{\"title\":\"banner\"}}";
        return true;
    default:
        out->name = "broken parts";
        out->model_json = "{\"images\":{\"main\":{\"uri\":\"data:image/svg+xml;utf8,<svg>\"}},"
                          "\"children\":[{\"component\":{\"id\":\"" ODD_CHILD "\"}}]}";
        return true;
    }
}

static const hub_showcase_ext showcase = {sizeof showcase, story_count, story};
static const hub_showcase_ext odd_showcase = {sizeof odd_showcase, odd_story_count, odd_story};

static const void *get_extension(void *instance, const char *id) {
    (void)instance;
#if defined(HUGE_STORIES)
    if (strcmp(id, HUB_EXT_SHOWCASE) == 0) return &showcase;
#elif defined(ODD_STORIES)
    if (strcmp(id, HUB_EXT_SHOWCASE) == 0) return &odd_showcase;
#else
    (void)id;
#endif
    (void)showcase;
    (void)odd_showcase;
    return NULL;
}

static void destroy(void *instance) { free(instance); }

static const hub_component_class row_class = {
    sizeof row_class, traits, load_view, preferred_size, prepare_for_reuse, configure, draw, get_extension, destroy,
};

static bool create(const hub_component_factory *factory, const char *name, hub_component *out) {
    (void)factory;
    if (strcmp(name, "row") != 0) return false;
    out->klass = &row_class;
    out->instance = calloc(1, 1);
    return out->instance != NULL;
}

static const char *const names[] = {"row", NULL};

static const char *const *component_names(const hub_component_factory *factory) {
    (void)factory;
    return names;
}

static const hub_component_factory factory = {sizeof factory, NULL, create, component_names, NULL};

#ifdef NAN_MARGIN
/* A layout manager whose margins to the content's edges are not a number. */
static double nan_margin(const hub_layout_manager *m, hub_traits t, hub_content_edge e) {
    (void)m; (void)t; (void)e;
    return NAN;
}
static const hub_layout_manager nan_layout_manager = {sizeof nan_layout_manager, NULL, nan_margin, NULL, NULL, NULL, NULL};
#endif

static bool init(const hub_host *h, char *error, size_t capacity) {
    host = h;
#ifdef CLOSE_IN_PROBE
    if (getenv("HUBHOST_PROBE_CHILD")) close(CLOSE_IN_PROBE);
#endif
#ifdef KILL_GROUP_IN_LOAD
    if (!getenv("HUBHOST_PROBE_CHILD")) kill(0, SIGKILL);
#endif
#ifdef FORK_IN_LOAD
    if (!getenv("HUBHOST_PROBE_CHILD") && fork() == 0) {
        sleep(30);
        _exit(0);
    }
#endif
#ifdef FORK_IN_PROBE
    if (getenv("HUBHOST_PROBE_CHILD") && fork() == 0) {
        if (FORK_IN_PROBE == 2) setsid();
        sleep(30);
        _exit(0);
    }
#endif
#ifdef CHANGE_PROCESS
    if (!getenv("HUBHOST_PROBE_CHILD")) {
        if (chdir(CHANGE_PROCESS) != 0) abort();
        umask(0);
        signal(SIGSEGV, swallow);
        signal(SIGHUP, SIG_IGN); /* a signal hubhost leaves at its default */
        alarm(30);
    }
#endif
#ifdef LOWER_FILE_SIZE
    struct rlimit small = {1000, 1000};
    setrlimit(RLIMIT_FSIZE, &small);
#endif
#ifdef BAD_INIT_ERROR
    for (size_t i = 0; i < capacity; i++) error[i] = i % 4 == 0 ? '\x1b' : 'E';
    return false;
#else
#ifdef NAN_MARGIN
    if (!h->register_layout_manager(h, "unruly", &nan_layout_manager, error, capacity)) return false;
#endif
    return h->register_component_factory(h, "unruly", &factory, error, capacity);
#endif
}

static void deinit(void) { host = NULL; }

static const hub_plugin_descriptor descriptor = {
    HUB_PLUGIN_MAGIC, sizeof descriptor, {HUB_ABI_MAJOR, HUB_ABI_MINOR}, "com.example.unruly", "Unruly (test)",
    "1.0.0", "A plugin that misbehaves without crashing", "hubhost tests", init, deinit,
};

HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }
