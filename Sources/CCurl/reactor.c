// The wait set behind a curl event loop. See ccurl_reactor.h.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "ccurl_reactor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__) && !defined(CCURL_REACTOR_POLL)
#define CCURL_REACTOR_EPOLL 1
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#else
#include <poll.h>
#endif

// CURLM_OK and CURLM_INTERNAL_ERROR (7.9.6).
#define CCURLM_OK 0
#define CCURLM_INTERNAL_ERROR 4

// CURLOPT_CLOSESOCKETFUNCTION and CURLOPT_CLOSESOCKETDATA (7.21.7).
#define CCURLOPT_CLOSESOCKETFUNCTION 20208
#define CCURLOPT_CLOSESOCKETDATA 10209

/// The most events one wait hands to libcurl; the rest stay ready for the next wait.
#define CCURL_REACTOR_BATCH 64
/// The most sockets a foreign pass keeps out of the epoll set; any more are registered at once.
#define CCURL_REACTOR_PENDING 8
/// The most transfers whose socket was refused that wait for the loop to fail them.
#define CCURL_REACTOR_REFUSED 16

struct ccurl_reactor {
    ccurl_multi *multi;
    /// When libcurl's timer is due, in CLOCK_MONOTONIC nanoseconds; -1 without a timer.
    /// Written by the timer callback, read by the waits (both on the owning thread); atomic so a
    /// future reader on another thread stays well defined.
    _Atomic int64_t deadline;
    /// When the current or next wait ends at the latest, in CLOCK_MONOTONIC nanoseconds
    /// (INT64_MAX: no limit); set by ccurl_reactor_prepare_wait.
    _Atomic int64_t sleep_until;
    /// Transfers whose socket could not be watched (a negative or unusable descriptor), in order,
    /// until the loop takes them with ccurl_reactor_next_refused and fails them.
    ccurl_easy *refused[CCURL_REACTOR_REFUSED];
    int refused_count;
    /// Set by ccurl_reactor_refuse_next_socket (any thread), cleared by the socket callback it affects.
    _Atomic int refuse_next;
#ifdef CCURL_REACTOR_EPOLL
    int epoll;
    int wake;               // an eventfd in the epoll set
    /// Per descriptor: WATCH_* bits, what the epoll set holds for it and whether libcurl wants it.
    /// Touched only under the caller's serialisation (socket callback, close callback, dispatch).
    uint8_t *watch;
    size_t watch_capacity;
    /// Set between ccurl_reactor_begin_foreign_pass and ccurl_reactor_end_foreign_pass.
    int foreign;
    /// Sockets whose registration a foreign pass deferred (WATCH_PENDING), in order.
    int pending[CCURL_REACTOR_PENDING];
    /// The transfer that last asked for each pending socket, to fail if it cannot be registered.
    ccurl_easy *pending_easy[CCURL_REACTOR_PENDING];
    int pending_count;
    struct epoll_event ready[CCURL_REACTOR_BATCH];  // what the last poll found, for dispatch
    int ready_count;
#else
    int wake_read, wake_write;  // a non-blocking pipe; wake_read is fds[0]
    struct pollfd *fds;     // fds[0] is the wake pipe, then the sockets libcurl watches
    size_t count, capacity;
    struct pollfd ready[CCURL_REACTOR_BATCH];  // what the last poll found, for dispatch
    int ready_count;
#endif
};

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// libcurl's timer callback: remember the deadline; the next run_timers or wait acts on it.
static int on_timer(ccurl_multi *multi, long timeout_ms, void *userp) {
    (void)multi;
    ccurl_reactor *reactor = userp;
    atomic_store_explicit(&reactor->deadline, timeout_ms < 0 ? -1 : now_ns() + (int64_t)timeout_ms * 1000000,
                          memory_order_relaxed);
    return 0;
}

// The earlier of libcurl's deadline and `timeout_ms` from `now` (-1: none), in nanoseconds; INT64_MAX for none.
static int64_t wake_deadline(ccurl_reactor *reactor, int timeout_ms, int64_t now) {
    int64_t deadline = atomic_load_explicit(&reactor->deadline, memory_order_relaxed);
    int64_t limit = timeout_ms < 0 ? INT64_MAX : now + (int64_t)timeout_ms * 1000000;
    return (deadline >= 0 && deadline < limit) ? deadline : limit;
}

int ccurl_reactor_prepare_wait(ccurl_reactor *reactor, int timeout_ms) {
    int64_t now = now_ns();
    int64_t until = wake_deadline(reactor, timeout_ms, now);
    atomic_store_explicit(&reactor->sleep_until, until, memory_order_relaxed);
    if (until == INT64_MAX) return -1;
    if (until <= now) return 0;
    // Rounded up, so the wait ends after the deadline rather than just before it.
    int64_t ms = (until - now + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

int ccurl_reactor_wakes_in_time(ccurl_reactor *reactor, int timeout_ms) {
    int64_t needed = wake_deadline(reactor, timeout_ms, now_ns());
    return atomic_load_explicit(&reactor->sleep_until, memory_order_relaxed) <= needed;
}

void ccurl_reactor_timer_due_now(ccurl_reactor *reactor) {
    atomic_store_explicit(&reactor->deadline, now_ns(), memory_order_relaxed);
}

int ccurl_reactor_run_timers(ccurl_reactor *reactor) {
    int64_t deadline = atomic_load_explicit(&reactor->deadline, memory_order_relaxed);
    if (deadline < 0 || deadline > now_ns()) return CCURLM_OK;
    // The timer is one-shot: a timeout action makes libcurl report any deadline it still has
    // (even an unchanged one) through on_timer, but it reports "none" only if it had reported a
    // deadline since, so the expired one must be forgotten here or the loop would spin on it.
    atomic_store_explicit(&reactor->deadline, -1, memory_order_relaxed);
    int running = 0;
    return ccurl_multi_socket_action(reactor->multi, CCURL_SOCKET_TIMEOUT, 0, &running);
}

// Remembers that the socket libcurl gave `easy` cannot be watched, so that the loop fails that
// transfer (ccurl_reactor_next_refused) instead of waiting for events that never come; the
// descriptor itself stays out of the wait set, which therefore still sleeps until its timeout.
// Returns 0, or -1 when too many refusals are waiting already: libcurl then fails the multi
// handle, which the loop reports for every transfer.
static int refuse(ccurl_reactor *reactor, ccurl_easy *easy) {
    if (easy == NULL) return 0;  // no transfer to fail; nothing was registered either
    for (int i = 0; i < reactor->refused_count; i++) {
        if (reactor->refused[i] == easy) return 0;
    }
    if (reactor->refused_count == CCURL_REACTOR_REFUSED) return -1;
    reactor->refused[reactor->refused_count++] = easy;
    return 0;
}

// Whether the socket callback must refuse `socket` outright: a negative descriptor, or the one a
// test asked to refuse. That is a transfer's socket (its easy handle carries CURLOPT_PRIVATE):
// libcurl 8.x also registers sockets of its own, such as the multi handle's wakeup pair.
static int refuses_this_socket(ccurl_reactor *reactor, ccurl_easy *easy, int socket) {
    if (socket < 0) return 1;
    if (!atomic_load_explicit(&reactor->refuse_next, memory_order_relaxed)) return 0;
    void *transfer = NULL;
    if (easy == NULL || ccurl_easy_getinfo_ptr(easy, CCURLINFO_PRIVATE, &transfer) != CCURLE_OK || transfer == NULL) return 0;
    return atomic_exchange_explicit(&reactor->refuse_next, 0, memory_order_relaxed);
}

void ccurl_reactor_refuse_next_socket(ccurl_reactor *reactor) {
    atomic_store_explicit(&reactor->refuse_next, 1, memory_order_relaxed);
}

int ccurl_reactor_next_refused(ccurl_reactor *reactor, ccurl_easy **easy) {
    if (reactor->refused_count == 0) return 0;
    *easy = reactor->refused[0];
    reactor->refused_count--;
    for (int i = 0; i < reactor->refused_count; i++) reactor->refused[i] = reactor->refused[i + 1];
    return 1;
}

void ccurl_reactor_forget_easy(ccurl_reactor *reactor, ccurl_easy *easy) {
    int kept = 0;
    for (int i = 0; i < reactor->refused_count; i++) {
        if (reactor->refused[i] != easy) reactor->refused[kept++] = reactor->refused[i];
    }
    reactor->refused_count = kept;
}

// Hands one ready socket to libcurl; returns a CURLMcode. An error or hang-up is reported as
// readable and writable so that libcurl's own recv/send or connect check finds the real cause.
static int act_on_socket(ccurl_reactor *reactor, int socket, int readable, int writable, int failed) {
    int bits = failed ? CCURL_CSELECT_IN | CCURL_CSELECT_OUT
                      : (readable ? CCURL_CSELECT_IN : 0) | (writable ? CCURL_CSELECT_OUT : 0);
    int running = 0;
    return ccurl_multi_socket_action(reactor->multi, socket, bits, &running);
}

#ifdef CCURL_REACTOR_EPOLL

// What the epoll set holds for a descriptor (WATCH_IN, WATCH_OUT: the registered events) and
// whether libcurl currently wants it watched (WATCH_WANTED).
//
// libcurl asks for a socket when a transfer starts on a connection and drops it when the transfer
// ends, so a connection reused request after request would cost an EPOLL_CTL_ADD and an
// EPOLL_CTL_DEL each time. Instead a dropped socket watched for input only stays in the set,
// marked unwanted: the next transfer on it costs no system call when it asks for the same events,
// and the socket leaves the set only if it reports an event while unwanted (a server closing an
// idle connection) or when it is closed. A descriptor number can be reused by a new socket only
// after a close, and libcurl closes every socket it opened through on_close below, which forgets
// the number.
//
// A pass on another thread (a foreign pass) defers registration instead (WATCH_PENDING) until it
// ends: a response it reads itself while it waits (ccurl_reactor_await_pending) then never wakes
// the loop thread, which sleeps in the same epoll set.
enum { WATCH_IN = 1, WATCH_OUT = 2, WATCH_WANTED = 4, WATCH_REGISTERED = 8, WATCH_PENDING = 16 };

static int ensure_watch_capacity(ccurl_reactor *reactor, int socket) {
    // A negative descriptor, cast to size_t, would double the capacity until it wrapped to 0 and
    // then forever.
    if (socket < 0) return -1;
    if ((size_t)socket < reactor->watch_capacity) return 0;
    size_t capacity = reactor->watch_capacity ? reactor->watch_capacity : 64;
    while (capacity <= (size_t)socket) capacity *= 2;
    uint8_t *grown = realloc(reactor->watch, capacity);
    if (grown == NULL) return -1;
    for (size_t i = reactor->watch_capacity; i < capacity; i++) grown[i] = 0;
    reactor->watch = grown;
    reactor->watch_capacity = capacity;
    return 0;
}

static uint8_t watch_state(ccurl_reactor *reactor, int socket) {
    return socket >= 0 && (size_t)socket < reactor->watch_capacity ? reactor->watch[socket] : 0;
}

// Puts `socket` in the epoll set for `events` (WATCH_IN/WATCH_OUT) and records it as registered
// and wanted; returns 0, or the errno value, forgetting the socket, when the kernel refuses.
static int watch_socket(ccurl_reactor *reactor, int socket, uint8_t events, int registered) {
    struct epoll_event event = {0};
    event.events = ((events & WATCH_IN) ? EPOLLIN : 0) | ((events & WATCH_OUT) ? EPOLLOUT : 0);
    event.data.fd = socket;
    int first = registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    int ok = epoll_ctl(reactor->epoll, first, socket, &event) == 0;
    // The kernel's view can differ from ours only if the descriptor was closed behind libcurl's
    // back (the set drops closed descriptors by itself); the other operation then succeeds.
    if (!ok && (errno == ENOENT || errno == EEXIST)) {
        ok = epoll_ctl(reactor->epoll, first == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, socket, &event) == 0;
    }
    int failure = ok ? 0 : errno;
    reactor->watch[socket] = ok ? (uint8_t)(WATCH_REGISTERED | WATCH_WANTED | events) : 0;
    return failure;
}

// Whether epoll_ctl's `failure` says the descriptor itself is unusable (not open, or not something
// epoll can watch) rather than that the kernel ran out of memory or watches.
static int is_bad_descriptor(int failure) {
    return failure == EBADF || failure == EPERM;
}

// libcurl's socket callback: mirror its interest in the epoll set.
static int on_socket(ccurl_easy *easy, int socket, int what, void *userp, void *socketp) {
    (void)socketp;
    ccurl_reactor *reactor = userp;
    if (what != CCURL_POLL_REMOVE && refuses_this_socket(reactor, easy, socket)) return refuse(reactor, easy);
    if (socket < 0) return 0;
    uint8_t state = watch_state(reactor, socket);
    if (what == CCURL_POLL_REMOVE) {
        if (state & WATCH_PENDING) {
            // Never registered; ccurl_reactor_end_foreign_pass skips it.
            reactor->watch[socket] = 0;
        } else if (state & WATCH_OUT) {
            // An idle socket is always writable: watched for output, it would wake every wait.
            epoll_ctl(reactor->epoll, EPOLL_CTL_DEL, socket, NULL);
            reactor->watch[socket] = 0;
        } else if (state != 0) {
            reactor->watch[socket] = state & (uint8_t)~WATCH_WANTED;
        }
        return 0;
    }
    uint8_t events = (uint8_t)(((what & CCURL_POLL_IN) ? WATCH_IN : 0) | ((what & CCURL_POLL_OUT) ? WATCH_OUT : 0));
    if (ensure_watch_capacity(reactor, socket) != 0) return -1;
    if (reactor->foreign && ((state & WATCH_PENDING) || reactor->pending_count < CCURL_REACTOR_PENDING)) {
        if (state & WATCH_REGISTERED) epoll_ctl(reactor->epoll, EPOLL_CTL_DEL, socket, NULL);
        int slot = 0;
        while (slot < reactor->pending_count && reactor->pending[slot] != socket) slot++;
        if (slot == reactor->pending_count) reactor->pending[reactor->pending_count++] = socket;
        reactor->pending_easy[slot] = easy;
        reactor->watch[socket] = (uint8_t)(WATCH_PENDING | WATCH_WANTED | events);
        return 0;
    }
    if (state & WATCH_PENDING) state = 0;
    if ((state & WATCH_REGISTERED) && (state & (WATCH_IN | WATCH_OUT)) == events) {
        reactor->watch[socket] = state | WATCH_WANTED;
        return 0;
    }
    // The kernel refused to watch the socket. A bad descriptor fails its transfer; out of memory
    // or watches fails the multi handle, which is loud, where ignoring it would leave the transfer
    // hanging until its timeout.
    int failure = watch_socket(reactor, socket, events, state & WATCH_REGISTERED);
    if (failure == 0) return 0;
    return is_bad_descriptor(failure) ? refuse(reactor, easy) : -1;
}

// libcurl's close-socket callback (every easy handle of the loop): the descriptor leaves the set
// and the table before its number can be reused.
static int on_close(void *clientp, int socket) {
    ccurl_reactor *reactor = clientp;
    if (watch_state(reactor, socket) & WATCH_REGISTERED) epoll_ctl(reactor->epoll, EPOLL_CTL_DEL, socket, NULL);
    if (socket >= 0 && (size_t)socket < reactor->watch_capacity) reactor->watch[socket] = 0;
    return close(socket);
}

int ccurl_reactor_attach_easy(ccurl_reactor *reactor, ccurl_easy *easy, const char **failed_option) {
    int code = ccurl_easy_setopt_ptr(easy, CCURLOPT_CLOSESOCKETDATA, reactor);
    if (code != 0) {
        *failed_option = "CURLOPT_CLOSESOCKETDATA";
        return code;
    }
    code = ccurl_easy_setopt_func_close(easy, CCURLOPT_CLOSESOCKETFUNCTION, on_close);
    if (code != 0) *failed_option = "CURLOPT_CLOSESOCKETFUNCTION";
    return code;
}

void ccurl_reactor_begin_foreign_pass(ccurl_reactor *reactor) {
    reactor->foreign = 1;
    reactor->pending_count = 0;
}

int ccurl_reactor_end_foreign_pass(ccurl_reactor *reactor) {
    reactor->foreign = 0;
    int result = CCURLM_OK;
    for (int i = 0; i < reactor->pending_count; i++) {
        int socket = reactor->pending[i];
        uint8_t state = watch_state(reactor, socket);
        if (!(state & WATCH_PENDING)) continue;  // removed or closed during the pass
        int failure = watch_socket(reactor, socket, state & (WATCH_IN | WATCH_OUT), 0);
        if (failure == 0) continue;
        int refused = is_bad_descriptor(failure) && refuse(reactor, reactor->pending_easy[i]) == 0;
        if (!refused && result == CCURLM_OK) result = CCURLM_INTERNAL_ERROR;
    }
    reactor->pending_count = 0;
    return result;
}

int ccurl_reactor_await_pending(ccurl_reactor *reactor, int64_t timeout_ns) {
    struct pollfd fds[CCURL_REACTOR_PENDING + 1];
    nfds_t count = 0;
    for (int i = 0; i < reactor->pending_count; i++) {
        int socket = reactor->pending[i];
        uint8_t state = watch_state(reactor, socket);
        if (!(state & WATCH_PENDING)) continue;
        fds[count].fd = socket;
        fds[count].events = (short)(((state & WATCH_IN) ? POLLIN : 0) | ((state & WATCH_OUT) ? POLLOUT : 0));
        fds[count].revents = 0;
        count++;
    }
    if (count == 0) return -1;
    // The loop's wake-up descriptor too: a sender that wakes the loop ends the wait at once (and
    // is left for the loop to read).
    fds[count].fd = reactor->wake;
    fds[count].events = POLLIN;
    fds[count].revents = 0;
    struct timespec timeout = { .tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000 };
    int ready = ppoll(fds, count + 1, &timeout, NULL);
    if (ready <= 0 || fds[count].revents != 0) return -1;
    int result = CCURLM_OK;
    for (nfds_t i = 0; i < count; i++) {
        if (fds[i].revents == 0) continue;
        short ev = fds[i].revents;
        int code = act_on_socket(reactor, fds[i].fd, ev & POLLIN, ev & POLLOUT, ev & (POLLERR | POLLHUP | POLLNVAL));
        if (code != CCURLM_OK && result == CCURLM_OK) result = code;
    }
    int code = ccurl_reactor_run_timers(reactor);
    return result != CCURLM_OK ? result : code;
}

ccurl_reactor *ccurl_reactor_create(ccurl_multi *multi) {
    ccurl_reactor *reactor = calloc(1, sizeof *reactor);
    if (reactor == NULL) return NULL;
    reactor->multi = multi;
    atomic_init(&reactor->deadline, -1);
    atomic_init(&reactor->sleep_until, INT64_MAX);
    atomic_init(&reactor->refuse_next, 0);
    reactor->epoll = epoll_create1(EPOLL_CLOEXEC);
    reactor->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event event = {0};
    event.events = EPOLLIN;
    event.data.fd = reactor->wake;
    if (reactor->epoll < 0 || reactor->wake < 0
        || epoll_ctl(reactor->epoll, EPOLL_CTL_ADD, reactor->wake, &event) != 0) {
        int saved = errno;
        if (reactor->epoll >= 0) close(reactor->epoll);
        if (reactor->wake >= 0) close(reactor->wake);
        free(reactor);
        errno = saved;
        return NULL;
    }
    return reactor;
}

void ccurl_reactor_destroy(ccurl_reactor *reactor) {
    if (reactor == NULL) return;
    close(reactor->epoll);
    close(reactor->wake);
    free(reactor->watch);
    free(reactor);
}

void ccurl_reactor_wakeup(ccurl_reactor *reactor) {
    uint64_t one = 1;
    // EAGAIN means the counter is already non-zero: the wait will return anyway.
    ssize_t written = write(reactor->wake, &one, sizeof one);
    (void)written;
}

int ccurl_reactor_supports_foreign_passes(void) { return 1; }

void ccurl_reactor_poll(ccurl_reactor *reactor, int timeout_ms) {
    int ready = epoll_wait(reactor->epoll, reactor->ready, CCURL_REACTOR_BATCH, timeout_ms);
    reactor->ready_count = 0;
    for (int i = 0; i < ready; i++) {
        if (reactor->ready[i].data.fd == reactor->wake) {
            uint64_t count;
            ssize_t got = read(reactor->wake, &count, sizeof count);
            (void)got;
            continue;
        }
        reactor->ready[reactor->ready_count++] = reactor->ready[i];
    }
}

int ccurl_reactor_dispatch(ccurl_reactor *reactor) {
    int result = CCURLM_OK;
    for (int i = 0; i < reactor->ready_count; i++) {
        uint32_t ev = reactor->ready[i].events;
        int socket = reactor->ready[i].data.fd;
        uint8_t state = watch_state(reactor, socket);
        // Checked here, not in the poll: a pass on another thread may change the table during it.
        if (!(state & WATCH_WANTED)) {
            // An event on a socket no transfer uses (say, the server closed an idle connection):
            // stop watching it rather than wake for it again. A closed one (state 0) is gone already.
            if (state & WATCH_REGISTERED) {
                epoll_ctl(reactor->epoll, EPOLL_CTL_DEL, socket, NULL);
                reactor->watch[socket] = 0;
            }
            continue;
        }
        int code = act_on_socket(reactor, socket, ev & EPOLLIN, ev & EPOLLOUT, ev & (EPOLLERR | EPOLLHUP));
        if (code != CCURLM_OK && result == CCURLM_OK) result = code;
    }
    reactor->ready_count = 0;
    int code = ccurl_reactor_run_timers(reactor);
    return result != CCURLM_OK ? result : code;
}

#else // poll(2): macOS and other systems without epoll

// Finds `socket` among the watched descriptors (never the wake pipe at index 0).
static size_t find(ccurl_reactor *reactor, int socket) {
    for (size_t i = 1; i < reactor->count; i++) {
        if (reactor->fds[i].fd == socket) return i;
    }
    return 0;
}

static int on_socket(ccurl_easy *easy, int socket, int what, void *userp, void *socketp) {
    (void)socketp;
    ccurl_reactor *reactor = userp;
    if (what != CCURL_POLL_REMOVE && refuses_this_socket(reactor, easy, socket)) return refuse(reactor, easy);
    if (socket < 0) return 0;
    size_t index = find(reactor, socket);
    if (what == CCURL_POLL_REMOVE) {
        if (index != 0) reactor->fds[index] = reactor->fds[--reactor->count];
        return 0;
    }
    short events = (short)(((what & CCURL_POLL_IN) ? POLLIN : 0) | ((what & CCURL_POLL_OUT) ? POLLOUT : 0));
    if (index == 0) {
        // poll(2) reports a descriptor that is not open as POLLNVAL on every call: never watch one.
        if (fcntl(socket, F_GETFD) == -1) return refuse(reactor, easy);
        if (reactor->count == reactor->capacity) {
            size_t capacity = reactor->capacity * 2;
            struct pollfd *grown = realloc(reactor->fds, capacity * sizeof *grown);
            if (grown == NULL) return -1;
            reactor->fds = grown;
            reactor->capacity = capacity;
        }
        index = reactor->count++;
        reactor->fds[index].fd = socket;
    }
    reactor->fds[index].events = events;
    reactor->fds[index].revents = 0;
    return 0;
}

ccurl_reactor *ccurl_reactor_create(ccurl_multi *multi) {
    ccurl_reactor *reactor = calloc(1, sizeof *reactor);
    if (reactor == NULL) return NULL;
    reactor->multi = multi;
    atomic_init(&reactor->deadline, -1);
    atomic_init(&reactor->sleep_until, INT64_MAX);
    atomic_init(&reactor->refuse_next, 0);
    int pipe_fds[2];
    reactor->capacity = 16;
    reactor->fds = calloc(reactor->capacity, sizeof *reactor->fds);
    if (reactor->fds == NULL || pipe(pipe_fds) != 0) {
        int saved = errno;
        free(reactor->fds);
        free(reactor);
        errno = saved;
        return NULL;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(pipe_fds[i], F_SETFL, fcntl(pipe_fds[i], F_GETFL) | O_NONBLOCK);
        fcntl(pipe_fds[i], F_SETFD, FD_CLOEXEC);
    }
    reactor->wake_read = pipe_fds[0];
    reactor->wake_write = pipe_fds[1];
    reactor->fds[0].fd = reactor->wake_read;
    reactor->fds[0].events = POLLIN;
    reactor->count = 1;
    return reactor;
}

void ccurl_reactor_destroy(ccurl_reactor *reactor) {
    if (reactor == NULL) return;
    close(reactor->wake_read);
    close(reactor->wake_write);
    free(reactor->fds);
    free(reactor);
}

void ccurl_reactor_wakeup(ccurl_reactor *reactor) {
    char byte = 1;
    // EAGAIN means the pipe is full of wake-ups already.
    ssize_t written = write(reactor->wake_write, &byte, 1);
    (void)written;
}

int ccurl_reactor_supports_foreign_passes(void) { return 0; }

int ccurl_reactor_attach_easy(ccurl_reactor *reactor, ccurl_easy *easy, const char **failed_option) {
    (void)reactor;
    (void)easy;
    (void)failed_option;
    return 0;
}

void ccurl_reactor_begin_foreign_pass(ccurl_reactor *reactor) { (void)reactor; }

int ccurl_reactor_end_foreign_pass(ccurl_reactor *reactor) {
    (void)reactor;
    return CCURLM_OK;
}

int ccurl_reactor_await_pending(ccurl_reactor *reactor, int64_t timeout_ns) {
    (void)reactor;
    (void)timeout_ns;
    return -1;
}

void ccurl_reactor_poll(ccurl_reactor *reactor, int timeout_ms) {
    int ready = poll(reactor->fds, (nfds_t)reactor->count, timeout_ms);
    reactor->ready_count = 0;
    // libcurl changes the watched set from inside socket_action, so dispatch works on a copy.
    for (size_t i = 0; ready > 0 && i < reactor->count && reactor->ready_count < CCURL_REACTOR_BATCH; i++) {
        if (reactor->fds[i].revents == 0) continue;
        if (reactor->fds[i].fd == reactor->wake_read) {
            char drain[64];
            while (read(reactor->wake_read, drain, sizeof drain) > 0) {}
            continue;
        }
        reactor->ready[reactor->ready_count++] = reactor->fds[i];
    }
}

int ccurl_reactor_dispatch(ccurl_reactor *reactor) {
    int result = CCURLM_OK;
    for (int i = 0; i < reactor->ready_count; i++) {
        short ev = reactor->ready[i].revents;
        int code = act_on_socket(reactor, reactor->ready[i].fd, ev & POLLIN, ev & POLLOUT, ev & (POLLERR | POLLHUP | POLLNVAL));
        if (code != CCURLM_OK && result == CCURLM_OK) result = code;
    }
    reactor->ready_count = 0;
    int code = ccurl_reactor_run_timers(reactor);
    return result != CCURLM_OK ? result : code;
}

#endif

int ccurl_reactor_install(ccurl_reactor *reactor, const char **failed_option) {
    ccurl_multi *multi = reactor->multi;
    int code = ccurl_multi_setopt_ptr(multi, CCURLMOPT_SOCKETDATA, reactor);
    if (code != CCURLM_OK) {
        *failed_option = "CURLMOPT_SOCKETDATA";
        return code;
    }
    code = ccurl_multi_setopt_func_socket(multi, CCURLMOPT_SOCKETFUNCTION, on_socket);
    if (code != CCURLM_OK) {
        *failed_option = "CURLMOPT_SOCKETFUNCTION";
        return code;
    }
    code = ccurl_multi_setopt_ptr(multi, CCURLMOPT_TIMERDATA, reactor);
    if (code != CCURLM_OK) {
        *failed_option = "CURLMOPT_TIMERDATA";
        return code;
    }
    code = ccurl_multi_setopt_func_timer(multi, CCURLMOPT_TIMERFUNCTION, on_timer);
    if (code != CCURLM_OK) *failed_option = "CURLMOPT_TIMERFUNCTION";
    return code;
}

int ccurl_reactor_socket_event(ccurl_reactor *reactor, ccurl_easy *easy, int socket, int what) {
    return on_socket(easy, socket, what, reactor, NULL);
}
