// See csystem.h.
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // ppoll
#endif
#include "csystem.h"

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

struct csystem_poller {
    int epoll;
    int wake;
};

csystem_poller *csystem_poller_create(void) {
    struct csystem_poller *poller = calloc(1, sizeof *poller);
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

void csystem_poller_destroy(csystem_poller *poller) {
    if (poller == NULL) return;
    close(poller->epoll);
    close(poller->wake);
    free(poller);
}

int csystem_poller_watch(csystem_poller *poller, int socket, uint64_t token, int events, int first) {
    struct epoll_event event = {0};
    event.data.u64 = token;
    if (events & CSYSTEM_POLLER_READ) event.events |= EPOLLIN | EPOLLRDHUP;
    if (events & CSYSTEM_POLLER_WRITE) event.events |= EPOLLOUT;
    return epoll_ctl(poller->epoll, first ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, socket, &event);
}

void csystem_poller_forget(csystem_poller *poller, int socket) {
    epoll_ctl(poller->epoll, EPOLL_CTL_DEL, socket, NULL);
}

int csystem_poller_wait(csystem_poller *poller, uint64_t *tokens, int *events, int capacity, int timeout_ms) {
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
        if (ready[i].events & EPOLLIN) bits |= CSYSTEM_POLLER_READ;
        if (ready[i].events & EPOLLOUT) bits |= CSYSTEM_POLLER_WRITE;
        if (ready[i].events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) bits |= CSYSTEM_POLLER_HANGUP;
        tokens[found] = ready[i].data.u64;
        events[found] = bits;
        found++;
    }
    return found;
}

void csystem_poller_wakeup(csystem_poller *poller) {
    uint64_t one = 1;
    ssize_t written = write(poller->wake, &one, sizeof one);
    (void)written;  // a full counter (EAGAIN) already wakes the waiter
}

#else

csystem_poller *csystem_poller_create(void) { errno = ENOSYS; return NULL; }
void csystem_poller_destroy(csystem_poller *poller) { (void)poller; }
int csystem_poller_watch(csystem_poller *poller, int socket, uint64_t token, int events, int first) {
    (void)poller; (void)socket; (void)token; (void)events; (void)first;
    errno = ENOSYS;
    return -1;
}
void csystem_poller_forget(csystem_poller *poller, int socket) { (void)poller; (void)socket; }
int csystem_poller_wait(csystem_poller *poller, uint64_t *tokens, int *events, int capacity, int timeout_ms) {
    (void)poller; (void)tokens; (void)events; (void)capacity; (void)timeout_ms;
    errno = ENOSYS;
    return -1;
}
void csystem_poller_wakeup(csystem_poller *poller) { (void)poller; }

#endif

int csystem_wait_readable(int socket, int64_t timeout_ns) {
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

int csystem_random_bytes(void *buffer, size_t count) {
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

int csystem_rename_exchange(const char *first, const char *second) {
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

// MARK: - Threads

void csystem_name_current_thread(const char *name) {
    char truncated[16];
    snprintf(truncated, sizeof truncated, "%s", name);
#if defined(__APPLE__)
    pthread_setname_np(truncated);
#elif defined(__linux__)
    pthread_setname_np(pthread_self(), truncated);
#endif
}
