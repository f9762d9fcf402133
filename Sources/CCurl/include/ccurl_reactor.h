// The wait set behind a Courier curl event loop: libcurl's socket interface
// (curl_multi_socket_action) driven by epoll on Linux and poll(2) elsewhere.
//
// libcurl tells the reactor which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when its timer
// is due (CURLMOPT_TIMERFUNCTION); the reactor sleeps until one of them is ready and hands exactly
// those to libcurl. Unlike curl_multi_perform, a pass costs nothing for transfers that have no
// event, so many transfers on one loop do not make every pass slower.
//
// A loop thread waits with ccurl_reactor_prepare_wait() + ccurl_reactor_poll(), then hands what
// was found to libcurl with ccurl_reactor_dispatch(). Only ccurl_reactor_poll() and
// ccurl_reactor_wakeup() may run while another thread uses the multi handle: everything else,
// like every libcurl call on the multi handle, must be serialised by the caller. Where
// ccurl_reactor_supports_foreign_passes() says so (epoll), another thread may even run libcurl
// (add a transfer, run timers) while the loop thread sleeps in ccurl_reactor_poll(): the sockets
// it registers are watched by that sleep at once.

#ifndef CCURL_REACTOR_H
#define CCURL_REACTOR_H

#include "ccurl.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A wait set bound to one multi handle.
typedef struct ccurl_reactor ccurl_reactor;

/// Creates the wait set for `multi`; ccurl_reactor_install() then connects libcurl to it.
/// Returns NULL (and sets errno) when the system refuses a descriptor or memory.
ccurl_reactor *ccurl_reactor_create(ccurl_multi *multi);

/// Installs libcurl's socket and timer callbacks (and their data) on the multi handle. Returns a
/// CURLMcode: 0, or the first refusal, with the refused option's name ("CURLMOPT_SOCKETFUNCTION")
/// in `*failed_option`.
int ccurl_reactor_install(ccurl_reactor *reactor, const char **failed_option);

/// Takes the next transfer whose socket the reactor refused to watch (libcurl gave it a negative
/// descriptor, or one the system cannot watch), oldest first: returns 1 and fills `easy`, or 0.
/// Such a descriptor never enters the wait set, so the loop still sleeps until its timeout; the
/// caller must fail the transfer, which would otherwise wait for events that never come.
int ccurl_reactor_next_refused(ccurl_reactor *reactor, ccurl_easy **easy);

/// Forgets a refusal for `easy`; call before the easy handle serves another transfer.
void ccurl_reactor_forget_easy(ccurl_reactor *reactor, ccurl_easy *easy);

/// For tests (thread-safe): the next socket libcurl asks the reactor to watch is refused as if its
/// descriptor were negative.
void ccurl_reactor_refuse_next_socket(ccurl_reactor *reactor);

/// For tests: runs the reactor's socket callback as libcurl would (`what` is a CCURL_POLL_ value)
/// and returns what it would return to libcurl (0, or -1 to fail the multi handle).
int ccurl_reactor_socket_event(ccurl_reactor *reactor, ccurl_easy *easy, int socket, int what);

/// Closes the wait set. Call after curl_multi_cleanup(), which may still report sockets to it.
void ccurl_reactor_destroy(ccurl_reactor *reactor);

/// Thread-safe: makes the current or next ccurl_reactor_poll() return promptly.
void ccurl_reactor_wakeup(ccurl_reactor *reactor);

/// Prepares an easy handle (after curl_easy_reset, before curl_multi_add_handle) so the reactor
/// learns when libcurl closes the connections it opens. Returns a CURLcode: 0, or the refusal, with
/// the refused option's name ("CURLOPT_CLOSESOCKETFUNCTION") in `*failed_option`.
int ccurl_reactor_attach_easy(ccurl_reactor *reactor, ccurl_easy *easy, const char **failed_option);

/// Around a pass on a thread other than the loop's (a foreign pass): sockets libcurl asks for in
/// between stay out of the epoll set until the pass ends, so that a response the pass reads itself
/// (ccurl_reactor_await_pending) does not also wake the loop thread. end registers the sockets
/// still wanted and returns a CURLMcode (0, or a failure to register one).
void ccurl_reactor_begin_foreign_pass(ccurl_reactor *reactor);
int ccurl_reactor_end_foreign_pass(ccurl_reactor *reactor);

/// In a foreign pass: waits up to `timeout_ns` for a socket deferred so far to be ready and hands
/// the ready ones, and a due timer, to libcurl. Returns -1 when nothing was ready in time, when
/// there is nothing to wait for, or when a sender woke the loop meanwhile (epoll only; always -1
/// with poll(2)); otherwise a CURLMcode.
int ccurl_reactor_await_pending(ccurl_reactor *reactor, int64_t timeout_ns);

/// Makes libcurl's timer due now, for a change libcurl may not report through its timer callback
/// (curl_easy_pause schedules the transfer to run again without one in some releases).
void ccurl_reactor_timer_due_now(ccurl_reactor *reactor);

/// Runs libcurl's timer work if it is due (a transfer just added or unpaused is due at once).
/// Returns a CURLMcode: 0, or the first failure.
int ccurl_reactor_run_timers(ccurl_reactor *reactor);

/// Whether libcurl may be driven by another thread while the loop thread sleeps in
/// ccurl_reactor_poll(): 1 with epoll; 0 with poll(2), whose sleep does not see new sockets.
int ccurl_reactor_supports_foreign_passes(void);

/// Before a sleep: returns how long ccurl_reactor_poll() may sleep, in milliseconds (-1: no limit):
/// at most `timeout_ms` (-1: none of its own), less if libcurl's timer is due sooner, rounded up so
/// the sleep ends after the deadline rather than just before it. Remembers when the sleep ends.
int ccurl_reactor_prepare_wait(ccurl_reactor *reactor, int timeout_ms);

/// Whether the prepared sleep ends in time for libcurl's timer and for `timeout_ms` from now; when
/// it does not, whoever changed them must wake the loop.
int ccurl_reactor_wakes_in_time(ccurl_reactor *reactor, int timeout_ms);

/// Sleeps up to `timeout_ms` (-1: no limit) until a watched socket is ready or
/// ccurl_reactor_wakeup() is called, and remembers the ready sockets. Calls nothing in libcurl.
void ccurl_reactor_poll(ccurl_reactor *reactor, int timeout_ms);

/// Hands the sockets the last poll found ready, and a due timer, to libcurl. Returns a CURLMcode:
/// 0, or the first failure.
int ccurl_reactor_dispatch(ccurl_reactor *reactor);

#ifdef __cplusplus
}
#endif

#endif
