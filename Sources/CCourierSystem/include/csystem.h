// The system calls Courier makes itself, apart from libcurl (CCurl) and the codecs (CCodecs):
// a readiness poller for connections Courier reads and writes itself after libcurl connected
// them (CURLOPT_CONNECT_ONLY: WebSocket), a wait for one readable socket, secure random bytes
// (WebSocket masking keys), an atomic swap of two files (the disk cache) and thread names.
//
// The poller is epoll on Linux, level-triggered; elsewhere it is not available
// (csystem_poller_create returns NULL with errno ENOSYS), as libcurl is not Courier's transport
// there. One thread waits in csystem_poller_wait(); any thread may watch, forget or wake.

#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A wait set of sockets, each known by a token of the caller's.
typedef struct csystem_poller csystem_poller;

/// Readiness bits, in what csystem_poller_watch() takes and csystem_poller_wait() reports.
#define CSYSTEM_POLLER_READ 1
#define CSYSTEM_POLLER_WRITE 2
/// Reported only: the peer hung up or the socket has an error (reading tells which).
#define CSYSTEM_POLLER_HANGUP 4

/// Creates a wait set, or returns NULL and sets errno.
csystem_poller *csystem_poller_create(void);

/// Closes the wait set; no thread may be waiting in it.
void csystem_poller_destroy(csystem_poller *poller);

/// Watches `socket` for `events` (CSYSTEM_POLLER_READ | CSYSTEM_POLLER_WRITE; 0 still reports hang-ups),
/// reported with `token`; `first` is 1 for a socket not watched yet. Returns 0, or -1 and sets errno.
int csystem_poller_watch(csystem_poller *poller, int socket, uint64_t token, int events, int first);

/// Stops watching `socket`; call before the socket is closed.
void csystem_poller_forget(csystem_poller *poller, int socket);

/// Sleeps up to `timeout_ms` (-1: no limit) until a watched socket is ready or csystem_poller_wakeup()
/// is called; fills up to `capacity` tokens and their readiness. Returns how many, 0 when woken or
/// timed out, -1 (errno set) on failure.
int csystem_poller_wait(csystem_poller *poller, uint64_t *tokens, int *events, int capacity, int timeout_ms);

/// Thread-safe: makes the current or next csystem_poller_wait() return promptly.
void csystem_poller_wakeup(csystem_poller *poller);

/// Blocks up to `timeout_ns` until `socket` may be read (or has ended): 1 when it may, 0 when the
/// time passed, -1 on failure. Nanosecond precision where the system has ppoll (Linux).
int csystem_wait_readable(int socket, int64_t timeout_ns);

/// Fills `buffer` with `count` bytes from the system's cryptographically secure generator
/// (getrandom on Linux, arc4random_buf elsewhere). Returns 0, or -1 when it could not.
int csystem_random_bytes(void *buffer, size_t count);

/// Swaps the files at two paths atomically (both must exist): renameat2(RENAME_EXCHANGE) on Linux,
/// renamex_np(RENAME_SWAP) on Apple platforms. Returns 0, or -1 with errno set (ENOENT when one is
/// missing, EINVAL or ENOSYS where the file system or system cannot).
int csystem_rename_exchange(const char *first, const char *second);

/// Names the calling thread (at most 15 characters are kept), for debuggers and /proc.
void csystem_name_current_thread(const char *name);

#ifdef __cplusplus
}
#endif

#endif
