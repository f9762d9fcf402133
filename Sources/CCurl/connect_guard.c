// The connect guard: stops a connect-only transfer (WebSocket) from another thread, through
// libcurl's socket callbacks. Its declarations are in ccurl.h.
#include "ccurl.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

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
