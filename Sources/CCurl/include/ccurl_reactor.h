// The wait set behind a Courier curl event loop: libcurl's socket interface
// (curl_multi_socket_action) driven by epoll on Linux and poll(2) elsewhere.
//
// libcurl tells the reactor which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when its timer
// is due (CURLMOPT_TIMERFUNCTION); the reactor sleeps until one of them is ready and hands exactly
// those to libcurl. Unlike curl_multi_perform, a pass costs nothing for transfers that have no
// event, so many transfers on one loop do not make every pass slower.
//
// Every function except ccurl_reactor_wakeup() must be called by one thread at a time, the one
// that owns the multi handle.

#ifndef CCURL_REACTOR_H
#define CCURL_REACTOR_H

#include "ccurl.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A wait set bound to one multi handle.
typedef struct ccurl_reactor ccurl_reactor;

/// Creates the wait set for `multi` and installs libcurl's socket and timer callbacks on it.
/// Returns NULL (and sets errno) when the system refuses a descriptor or memory.
ccurl_reactor *ccurl_reactor_create(ccurl_multi *multi);

/// Closes the wait set. Call after curl_multi_cleanup(), which may still report sockets to it.
void ccurl_reactor_destroy(ccurl_reactor *reactor);

/// Thread-safe: makes the current or next ccurl_reactor_wait() return promptly.
void ccurl_reactor_wakeup(ccurl_reactor *reactor);

/// Makes libcurl's timer due now, for a change libcurl may not report through its timer callback
/// (curl_easy_pause schedules the transfer to run again without one in some releases).
void ccurl_reactor_timer_due_now(ccurl_reactor *reactor);

/// Runs libcurl's timer work if it is due (a transfer just added or unpaused is due at once).
/// Returns a CURLMcode: 0, or the first failure.
int ccurl_reactor_run_timers(ccurl_reactor *reactor);

/// Sleeps until a watched socket is ready, libcurl's timer is due, ccurl_reactor_wakeup() is called,
/// or `timeout_ms` passes (-1: no limit of its own); then hands every ready socket and a due timer
/// to libcurl. Returns a CURLMcode: 0, or the first failure.
int ccurl_reactor_wait(ccurl_reactor *reactor, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif
