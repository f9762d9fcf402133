// See ccurl_poller.h.
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // ppoll
#endif
#include "ccurl_poller.h"
#include "ccurl.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdio.h>

#if defined(__linux__)
#include <sys/random.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/// The token the wake-up eventfd is registered with; never handed to the caller.
#define WAKE_TOKEN UINT64_MAX

struct ccurl_poller {
    int epoll;
    int wake;
};

ccurl_poller *ccurl_poller_create(void) {
    struct ccurl_poller *poller = calloc(1, sizeof *poller);
    if (poller == NULL) return NULL;
    poller->epoll = epoll_create1(EPOLL_CLOEXEC);
    poller->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = WAKE_TOKEN};
    if (poller->epoll < 0 || poller->wake < 0 || epoll_ctl(poller->epoll, EPOLL_CTL_ADD, poller->wake, &event) != 0) {
        int saved = errno;
        if (poller->epoll >= 0) close(poller->epoll);
        if (poller->wake >= 0) close(poller->wake);
        free(poller);
        errno = saved;
        return NULL;
    }
    return poller;
}

void ccurl_poller_destroy(ccurl_poller *poller) {
    if (poller == NULL) return;
    close(poller->epoll);
    close(poller->wake);
    free(poller);
}

int ccurl_poller_watch(ccurl_poller *poller, int socket, uint64_t token, int events, int first) {
    struct epoll_event event = {0};
    event.data.u64 = token;
    if (events & CCURL_POLLER_READ) event.events |= EPOLLIN | EPOLLRDHUP;
    if (events & CCURL_POLLER_WRITE) event.events |= EPOLLOUT;
    return epoll_ctl(poller->epoll, first ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, socket, &event);
}

void ccurl_poller_forget(ccurl_poller *poller, int socket) {
    epoll_ctl(poller->epoll, EPOLL_CTL_DEL, socket, NULL);
}

int ccurl_poller_wait(ccurl_poller *poller, uint64_t *tokens, int *events, int capacity, int timeout_ms) {
    struct epoll_event ready[64];
    int limit = capacity < 64 ? capacity : 64;
    int count = epoll_wait(poller->epoll, ready, limit, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    int found = 0;
    for (int i = 0; i < count; i++) {
        if (ready[i].data.u64 == WAKE_TOKEN) {
            uint64_t value;
            while (read(poller->wake, &value, sizeof value) > 0) {}
            continue;
        }
        int bits = 0;
        if (ready[i].events & EPOLLIN) bits |= CCURL_POLLER_READ;
        if (ready[i].events & EPOLLOUT) bits |= CCURL_POLLER_WRITE;
        if (ready[i].events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) bits |= CCURL_POLLER_HANGUP;
        tokens[found] = ready[i].data.u64;
        events[found] = bits;
        found++;
    }
    return found;
}

void ccurl_poller_wakeup(ccurl_poller *poller) {
    uint64_t one = 1;
    ssize_t written = write(poller->wake, &one, sizeof one);
    (void)written;  // a full counter (EAGAIN) already wakes the waiter
}

#else

ccurl_poller *ccurl_poller_create(void) { errno = ENOSYS; return NULL; }
void ccurl_poller_destroy(ccurl_poller *poller) { (void)poller; }
int ccurl_poller_watch(ccurl_poller *poller, int socket, uint64_t token, int events, int first) {
    (void)poller; (void)socket; (void)token; (void)events; (void)first;
    errno = ENOSYS;
    return -1;
}
void ccurl_poller_forget(ccurl_poller *poller, int socket) { (void)poller; (void)socket; }
int ccurl_poller_wait(ccurl_poller *poller, uint64_t *tokens, int *events, int capacity, int timeout_ms) {
    (void)poller; (void)tokens; (void)events; (void)capacity; (void)timeout_ms;
    errno = ENOSYS;
    return -1;
}
void ccurl_poller_wakeup(ccurl_poller *poller) { (void)poller; }

#endif

int ccurl_wait_readable(int socket, int64_t timeout_ns) {
    struct pollfd descriptor = {.fd = socket, .events = POLLIN};
    if (timeout_ns < 0) timeout_ns = 0;
#if defined(__linux__)
    struct timespec timeout = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
    int ready = ppoll(&descriptor, 1, &timeout, NULL);
#else
    int ready = poll(&descriptor, 1, (int)((timeout_ns + 999999) / 1000000));
#endif
    if (ready < 0) return errno == EINTR ? 0 : -1;
    return ready > 0 ? 1 : 0;
}

int ccurl_random_bytes(void *buffer, size_t count) {
#if defined(__linux__)
    unsigned char *bytes = buffer;
    while (count > 0) {
        ssize_t got = getrandom(bytes, count, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        bytes += got;
        count -= (size_t)got;
    }
    return 0;
#else
    arc4random_buf(buffer, count);
    return 0;
#endif
}

int ccurl_rename_exchange(const char *first, const char *second) {
#if defined(__linux__) && defined(RENAME_EXCHANGE)
    return renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE);
#elif defined(__APPLE__)
    return renamex_np(first, second, RENAME_SWAP);
#else
    (void)first;
    (void)second;
    errno = ENOSYS;
    return -1;
#endif
}

// MARK: - Connect guard

#define CCURLOPT_SOCKOPTFUNCTION 20148      // 7.16.0
#define CCURLOPT_SOCKOPTDATA 10149          // 7.16.0
#define CCURL_SOCKOPT_OK 0
#define CCURL_SOCKOPT_ERROR 1
#define CCURLOPT_CLOSESOCKETFUNCTION 20208  // 7.21.7
#define CCURLOPT_CLOSESOCKETDATA 10209      // 7.21.7

struct ccurl_connect_guard {
    pthread_mutex_t lock;   // guards the three fields below
    int cancelled;
    int socket;             // the socket being connected, -1 when none
    int finished;           // perform returned: the socket is no longer the guard's to touch
};

ccurl_connect_guard *ccurl_connect_guard_create(void) {
    struct ccurl_connect_guard *guard = calloc(1, sizeof *guard);
    if (guard == NULL) return NULL;
    pthread_mutex_init(&guard->lock, NULL);
    guard->socket = -1;
    return guard;
}

void ccurl_connect_guard_destroy(ccurl_connect_guard *guard) {
    if (guard == NULL) return;
    pthread_mutex_destroy(&guard->lock);
    free(guard);
}

// CURLOPT_SOCKOPTFUNCTION: libcurl made a socket and is about to connect it.
static int guard_socket(void *clientp, int socket, int purpose) {
    (void)purpose;
    struct ccurl_connect_guard *guard = clientp;
    pthread_mutex_lock(&guard->lock);
    int cancelled = guard->cancelled;
    if (!cancelled) guard->socket = socket;
    pthread_mutex_unlock(&guard->lock);
    return cancelled ? CCURL_SOCKOPT_ERROR : CCURL_SOCKOPT_OK;
}

// CURLOPT_XFERINFOFUNCTION: a non-zero answer aborts the transfer.
static int guard_progress(void *clientp, int64_t dltotal, int64_t dlnow, int64_t ultotal, int64_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    struct ccurl_connect_guard *guard = clientp;
    pthread_mutex_lock(&guard->lock);
    int cancelled = guard->cancelled;
    pthread_mutex_unlock(&guard->lock);
    return cancelled;
}

// CURLOPT_CLOSESOCKETFUNCTION: libcurl is done with a socket (a failed attempt, or the end).
static int guard_close(void *clientp, int socket) {
    struct ccurl_connect_guard *guard = clientp;
    pthread_mutex_lock(&guard->lock);
    if (guard->socket == socket) guard->socket = -1;
    int result = close(socket);
    pthread_mutex_unlock(&guard->lock);
    return result;
}

int ccurl_connect_guard_install(ccurl_connect_guard *guard, void *easy) {
    int code = ccurl_easy_setopt_ptr(easy, CCURLOPT_SOCKOPTFUNCTION, (const void *)guard_socket);
    if (code == CCURLE_OK) code = ccurl_easy_setopt_func_close(easy, CCURLOPT_CLOSESOCKETFUNCTION, guard_close);
    if (code == CCURLE_OK) code = ccurl_easy_setopt_ptr(easy, CCURLOPT_CLOSESOCKETDATA, guard);
    if (code == CCURLE_OK) code = ccurl_easy_setopt_ptr(easy, CCURLOPT_SOCKOPTDATA, guard);
    if (code == CCURLE_OK) code = ccurl_easy_setopt_func_xferinfo(easy, CCURLOPT_XFERINFOFUNCTION, guard_progress);
    if (code == CCURLE_OK) code = ccurl_easy_setopt_ptr(easy, CCURLOPT_XFERINFODATA, guard);
    if (code == CCURLE_OK) code = ccurl_easy_setopt_long(easy, CCURLOPT_NOPROGRESS, 0);
    return code;
}

void ccurl_connect_guard_cancel(ccurl_connect_guard *guard) {
    pthread_mutex_lock(&guard->lock);
    guard->cancelled = 1;
    // Under the lock, which guard_close() takes to close a socket: the descriptor is still the
    // one libcurl is connecting, never a number reused by someone else.
    if (!guard->finished && guard->socket >= 0) shutdown(guard->socket, SHUT_RDWR);
    pthread_mutex_unlock(&guard->lock);
}

int ccurl_connect_guard_finish(ccurl_connect_guard *guard) {
    pthread_mutex_lock(&guard->lock);
    guard->finished = 1;
    int cancelled = guard->cancelled;
    pthread_mutex_unlock(&guard->lock);
    return cancelled;
}
