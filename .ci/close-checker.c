// A close(2) that fails with EBADF on a descriptor number >= 0 means the number was closed twice
// (or never opened). Between the two closes another thread may have been given that number (a
// test server's listener, a connection, a file) and lost it to the second close: a failure that
// shows up far from its cause, rarely. Preloaded by .ci/close-check.sh, this records each such
// close with a backtrace, so the suite can fail on the first one instead.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_descriptor = -1;

int close(int descriptor) {
    static int (*real_close)(int);
    if (!real_close) real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    int result = real_close(descriptor);
    if (result == 0 || errno != EBADF || descriptor < 0) return result;
    int saved = errno;
    pthread_mutex_lock(&log_lock);
    if (log_descriptor < 0) {
        const char *path = getenv("COURIER_CLOSE_LOG");
        int opened = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
        // Far above the numbers the code under test is given, so this log is never a victim.
        log_descriptor = opened >= 0 ? fcntl(opened, F_DUPFD_CLOEXEC, 900) : -1;
        if (opened >= 0) real_close(opened);
    }
    if (log_descriptor >= 0) {
        char line[96];
        int length = snprintf(line, sizeof line, "=== close(%d) failed with EBADF in process %d\n", descriptor, getpid());
        if (length > 0) (void)!write(log_descriptor, line, (size_t)length);
        void *frames[48];
        backtrace_symbols_fd(frames, backtrace(frames, 48), log_descriptor);
    }
    pthread_mutex_unlock(&log_lock);
    errno = saved;
    return result;
}
