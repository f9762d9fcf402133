// A readiness poller for connections Courier reads and writes itself after libcurl connected
// them (CURLOPT_CONNECT_ONLY: WebSocket). epoll on Linux, level-triggered; elsewhere it is not
// available (ccurl_poller_create returns NULL with errno ENOSYS), as libcurl is not Courier's
// transport there.
//
// One thread waits in ccurl_poller_wait(); any thread may watch, forget or wake.

#ifndef CCURL_POLLER_H
#define CCURL_POLLER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A wait set of sockets, each known by a token of the caller's.
typedef struct ccurl_poller ccurl_poller;

/// Readiness bits, in what ccurl_poller_watch() takes and ccurl_poller_wait() reports.
#define CCURL_POLLER_READ 1
#define CCURL_POLLER_WRITE 2
/// Reported only: the peer hung up or the socket has an error (reading tells which).
#define CCURL_POLLER_HANGUP 4

/// Creates a wait set, or returns NULL and sets errno.
ccurl_poller *ccurl_poller_create(void);

/// Closes the wait set; no thread may be waiting in it.
void ccurl_poller_destroy(ccurl_poller *poller);

/// Watches `socket` for `events` (CCURL_POLLER_READ | CCURL_POLLER_WRITE; 0 still reports hang-ups),
/// reported with `token`; `first` is 1 for a socket not watched yet. Returns 0, or -1 and sets errno.
int ccurl_poller_watch(ccurl_poller *poller, int socket, uint64_t token, int events, int first);

/// Stops watching `socket`; call before the socket is closed.
void ccurl_poller_forget(ccurl_poller *poller, int socket);

/// Sleeps up to `timeout_ms` (-1: no limit) until a watched socket is ready or ccurl_poller_wakeup()
/// is called; fills up to `capacity` tokens and their readiness. Returns how many, 0 when woken or
/// timed out, -1 (errno set) on failure.
int ccurl_poller_wait(ccurl_poller *poller, uint64_t *tokens, int *events, int capacity, int timeout_ms);

/// Thread-safe: makes the current or next ccurl_poller_wait() return promptly.
void ccurl_poller_wakeup(ccurl_poller *poller);

/// Blocks up to `timeout_ns` until `socket` may be read (or has ended): 1 when it may, 0 when the
/// time passed, -1 on failure. Nanosecond precision where the system has ppoll (Linux).
int ccurl_wait_readable(int socket, int64_t timeout_ns);

/// Fills `buffer` with `count` bytes from the system's cryptographically secure generator
/// (getrandom on Linux, arc4random_buf elsewhere). Returns 0, or -1 when it could not.
int ccurl_random_bytes(void *buffer, size_t count);

/// Swaps the files at two paths atomically (both must exist): renameat2(RENAME_EXCHANGE) on Linux,
/// renamex_np(RENAME_SWAP) on Apple platforms. Returns 0, or -1 with errno set (ENOENT when one is
/// missing, EINVAL or ENOSYS where the file system or system cannot).
int ccurl_rename_exchange(const char *first, const char *second);

/// What a connect-only transfer is doing, so that another thread can stop it: cancelling shuts its
/// socket down, which ends a connect or TLS handshake in progress at once.
typedef struct ccurl_connect_guard ccurl_connect_guard;

/// Creates a guard, or NULL.
ccurl_connect_guard *ccurl_connect_guard_create(void);
void ccurl_connect_guard_destroy(ccurl_connect_guard *guard);

/// Installs the guard on `easy` (CURLOPT_SOCKOPTFUNCTION, CURLOPT_CLOSESOCKETFUNCTION,
/// CURLOPT_XFERINFOFUNCTION and their data; the connection must then be closed by curl_easy_cleanup
/// while the guard is alive):
/// a socket opened after a cancel is refused, and the progress callback aborts. Returns a CURLcode.
int ccurl_connect_guard_install(ccurl_connect_guard *guard, void *easy);

/// Cancels: sets the flag and shuts down the socket being connected, if any. Thread-safe.
void ccurl_connect_guard_cancel(ccurl_connect_guard *guard);

/// Ends the guard's watch once curl_easy_perform returned: from then on a cancel only sets the
/// flag and never touches the socket, which the connection's owner now closes. Returns whether the
/// guard was cancelled before.
int ccurl_connect_guard_finish(ccurl_connect_guard *guard);

#ifdef __cplusplus
}
#endif

#endif
