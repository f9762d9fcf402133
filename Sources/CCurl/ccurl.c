// Loads libcurl at run time and forwards typed, non-variadic calls to it. See ccurl.h.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE // pthread_setname_np, dladdr, RTLD_DEEPBIND, RTLD_DEFAULT
#endif

#include "ccurl.h"
#include "ccurl_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__APPLE__)
#define CCURL_LIBRARY_NAME "libcurl.4.dylib"
#else
#define CCURL_LIBRARY_NAME "libcurl.so.4"
#endif
// The environment variable that names the libcurl file to load instead.
#define CCURL_LIBRARY_VARIABLE "COURIER_LIBCURL"

// CURLMSG_DONE (7.9.6) and the CURLMsg layout: { CURLMSG msg; CURL *easy; union { void *; CURLcode } }.
#define CCURLMSG_DONE 1
typedef struct ccurl_message {
    int msg;
    ccurl_easy *easy_handle;
    union {
        void *whatever;
        int result;
    } data;
} ccurl_message;

// The leading fields of curl_version_info_data; `age` says how many of them libcurl filled in.
typedef struct ccurl_version_data {
    int age;                      // CURLVERSION_FIRST (0) and later
    const char *version;
    unsigned int version_num;
    const char *host;
    int features;
    const char *ssl_version;
    long ssl_version_num;
    const char *libz_version;
    const char *const *protocols;
    const char *ares;             // CURLVERSION_SECOND (1)
    int ares_num;
    const char *libidn;           // CURLVERSION_THIRD (2)
    int iconv_ver_num;            // CURLVERSION_FOURTH (3)
    const char *libssh_version;
    unsigned int brotli_ver_num;  // CURLVERSION_FIFTH (4)
    const char *brotli_version;
    unsigned int nghttp2_ver_num; // CURLVERSION_SIXTH (5)
    const char *nghttp2_version;
    const char *quic_version;
    const char *cainfo;           // CURLVERSION_SEVENTH (6), libcurl 7.70.0
    const char *capath;
    unsigned int zstd_ver_num;    // CURLVERSION_EIGHTH (7), libcurl 7.71.0
    const char *zstd_version;
    const char *hyper_version;    // CURLVERSION_NINTH (8), libcurl 7.75.0
    const char *gsasl_version;    // CURLVERSION_TENTH (9), libcurl 7.77.0
    const char *const *feature_names; // CURLVERSION_ELEVENTH (10), libcurl 7.87.0
} ccurl_version_data;
#define CCURLVERSION_SEVENTH 6
#define CCURLVERSION_ELEVENTH 10
#define CCURL_GLOBAL_ALL 3

static struct {
    int (*global_init)(long flags);
    ccurl_version_data *(*version_info)(int age);
    const char *(*version)(void);
    ccurl_easy *(*easy_init)(void);
    void (*easy_cleanup)(ccurl_easy *);
    void (*easy_reset)(ccurl_easy *);
    int (*easy_pause)(ccurl_easy *, int);
    const char *(*easy_strerror)(int);
    int (*easy_setopt)(ccurl_easy *, int, ...);
    int (*easy_getinfo)(ccurl_easy *, int, ...);
    int (*easy_perform)(ccurl_easy *);
    int (*easy_send)(ccurl_easy *, const void *, size_t, size_t *);
    int (*easy_recv)(ccurl_easy *, void *, size_t, size_t *);
    ccurl_slist *(*slist_append)(ccurl_slist *, const char *);
    void (*slist_free_all)(ccurl_slist *);
    ccurl_multi *(*multi_init)(void);
    int (*multi_cleanup)(ccurl_multi *);
    int (*multi_setopt)(ccurl_multi *, int, ...);
    int (*multi_add_handle)(ccurl_multi *, ccurl_easy *);
    int (*multi_remove_handle)(ccurl_multi *, ccurl_easy *);
    int (*multi_socket_action)(ccurl_multi *, int, int, int *);
    ccurl_message *(*multi_info_read)(ccurl_multi *, int *);
    const char *(*multi_strerror)(int);
    void *(*share_init)(void);
    int (*share_setopt)(void *, int, ...);
    int (*share_cleanup)(void *);
} api;

// Loading is serialised by this mutex. `api` and `library_info` are written under it once, by the
// load that succeeds, and only read afterwards: every caller has seen ccurl_load() or
// ccurl_load_file() succeed (under the mutex) before it calls a wrapper.
static pthread_mutex_t load_mutex = PTHREAD_MUTEX_INITIALIZER;
static int load_status = CCURL_LOAD_UNAVAILABLE;
static int default_attempted = 0;         // ccurl_load() tried once; its failure stands
static char default_error[512] = "libcurl was not loaded";
static void *loaded_handle = NULL;
static char loaded_path[4096];
static ccurl_library_info library_info;

// Resolves one symbol into `slot`; on failure writes the reason.
static int resolve(void *library, const char *file, const char *name, void **slot, char *err, size_t errlen) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(err, errlen, "%s has no symbol %s (libcurl too old, or not libcurl)", file, name);
        return -1;
    }
    return 0;
}

// Whether a sanitizer runtime is in the process: they refuse RTLD_DEEPBIND (and abort).
static int sanitizer_present(void) {
    static const char *const runtimes[] = { "__tsan_init", "__asan_init", "__msan_init", "__hwasan_init" };
    for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
        if (dlsym(RTLD_DEFAULT, runtimes[i]) != NULL) return 1;
    }
    return 0;
}

// dlopen flags for `file`. The default libcurl is the one FoundationNetworking already loaded.
// A chosen one is a second libcurl in the process: RTLD_DEEPBIND makes its own calls (libcurl's
// exported functions, OpenSSL, nghttp2) bind to itself and the libraries beside it before
// anything the process loaded first, where they would otherwise go to the system's libcurl and
// OpenSSL that carry the same symbol names and versions.
static int open_flags(int chosen) {
    int flags = RTLD_NOW | RTLD_LOCAL;
#ifdef RTLD_DEEPBIND
    if (chosen && !sanitizer_present()) flags |= RTLD_DEEPBIND;
#else
    (void)chosen;
#endif
    return flags;
}

#define RESOLVE(field, name) \
    if (resolve(library, file, name, (void **)&table.field, err, errlen) != 0) goto fail

// Loads `file` and fills `api` and `library_info`; called with load_mutex held and nothing loaded.
// Returns 0, or -1 with the reason in `err`.
static int load_library(const char *file, int chosen, char *err, size_t errlen) {
    void *library = dlopen(file, open_flags(chosen));
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(err, errlen, "cannot load %s: %s", file, reason != NULL ? reason : "unknown dlopen error");
        return -1;
    }
    __typeof__(api) table;
    memset(&table, 0, sizeof table);
    RESOLVE(version_info, "curl_version_info");
    // libcurl answers with its own struct whatever age is asked; `age` says which fields it has.
    ccurl_version_data *version = table.version_info(CCURLVERSION_ELEVENTH);
    if (version == NULL || version->version_num < CCURL_MINIMUM_VERSION) {
        snprintf(err, errlen, "%s is libcurl %s, too old: Courier needs 7.68.0 or later", file,
                 version != NULL && version->version != NULL ? version->version : "(unknown)");
        goto fail;
    }
    RESOLVE(version, "curl_version");
    RESOLVE(global_init, "curl_global_init");
    RESOLVE(easy_init, "curl_easy_init");
    RESOLVE(easy_cleanup, "curl_easy_cleanup");
    RESOLVE(easy_reset, "curl_easy_reset");
    RESOLVE(easy_pause, "curl_easy_pause");
    RESOLVE(easy_strerror, "curl_easy_strerror");
    RESOLVE(easy_setopt, "curl_easy_setopt");
    RESOLVE(easy_getinfo, "curl_easy_getinfo");
    RESOLVE(easy_perform, "curl_easy_perform");
    RESOLVE(easy_send, "curl_easy_send");
    RESOLVE(easy_recv, "curl_easy_recv");
    RESOLVE(slist_append, "curl_slist_append");
    RESOLVE(slist_free_all, "curl_slist_free_all");
    RESOLVE(multi_init, "curl_multi_init");
    RESOLVE(multi_cleanup, "curl_multi_cleanup");
    RESOLVE(multi_setopt, "curl_multi_setopt");
    RESOLVE(multi_add_handle, "curl_multi_add_handle");
    RESOLVE(multi_remove_handle, "curl_multi_remove_handle");
    RESOLVE(multi_socket_action, "curl_multi_socket_action");
    RESOLVE(multi_info_read, "curl_multi_info_read");
    RESOLVE(multi_strerror, "curl_multi_strerror");
    RESOLVE(share_init, "curl_share_init");
    RESOLVE(share_setopt, "curl_share_setopt");
    RESOLVE(share_cleanup, "curl_share_cleanup");

    int code = table.global_init(CCURL_GLOBAL_ALL);
    if (code != CCURLE_OK) {
        // The library stays mapped from here on: dlclose of a libcurl that ran its global
        // initialisation (threads, OpenSSL state) is not worth the risk.
        snprintf(err, errlen, "curl_global_init of %s failed with code %d", file, code);
        return -1;
    }
    Dl_info where;
    if (dladdr((void *)table.version_info, &where) != 0 && where.dli_fname != NULL) {
        snprintf(loaded_path, sizeof loaded_path, "%s", where.dli_fname);
    } else {
        snprintf(loaded_path, sizeof loaded_path, "%s", file);
    }
    api = table;
    loaded_handle = library;
    library_info.version = version->version;
    library_info.version_num = version->version_num;
    library_info.features = version->features;
    library_info.ssl_version = version->ssl_version;
    library_info.cainfo = version->age >= CCURLVERSION_SEVENTH ? version->cainfo : NULL;
    library_info.version_text = table.version();
    library_info.host = version->host;
    library_info.protocols = version->protocols;
    library_info.feature_names = version->age >= CCURLVERSION_ELEVENTH ? version->feature_names : NULL;
    library_info.path = loaded_path;
    library_info.chosen = chosen;
    load_status = CCURL_LOAD_OK;
    return 0;

fail:
    // Nothing of it ran: unmapped again, so that another file can be tried.
    dlclose(library);
    return -1;
}

static void copy_error(char *err, size_t errlen, const char *text) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "%s", text);
}

int ccurl_load(char *err, size_t errlen) {
    pthread_mutex_lock(&load_mutex);
    if (load_status != CCURL_LOAD_OK && !default_attempted) {
        default_attempted = 1;
        const char *chosen = getenv(CCURL_LIBRARY_VARIABLE);
        char reason[512];
        if (chosen != NULL && chosen[0] != '\0') {
            if (load_library(chosen, 1, reason, sizeof reason) != 0) {
                snprintf(default_error, sizeof default_error, "%s=%s: %s", CCURL_LIBRARY_VARIABLE, chosen, reason);
                load_status = CCURL_LOAD_CHOSEN_UNUSABLE;
            }
        } else if (load_library(CCURL_LIBRARY_NAME, 0, reason, sizeof reason) != 0) {
            snprintf(default_error, sizeof default_error, "%s", reason);
            load_status = CCURL_LOAD_UNAVAILABLE;
        }
    }
    int status = load_status;
    if (status != CCURL_LOAD_OK) copy_error(err, errlen, default_error);
    pthread_mutex_unlock(&load_mutex);
    return status;
}

// Whether `file` names the library already loaded: the same object to the dynamic linker, or the
// same file on disk.
static int names_loaded_library(const char *file) {
    void *handle = dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
    if (handle != NULL) {
        dlclose(handle); // drops the reference RTLD_NOLOAD took
        if (handle == loaded_handle) return 1;
    }
    struct stat wanted, loaded;
    return stat(file, &wanted) == 0 && stat(loaded_path, &loaded) == 0
        && wanted.st_dev == loaded.st_dev && wanted.st_ino == loaded.st_ino;
}

int ccurl_load_file(const char *file, char *err, size_t errlen) {
    if (file == NULL || file[0] == '\0') {
        copy_error(err, errlen, "no libcurl file was named");
        return CCURL_LOAD_CHOSEN_UNUSABLE;
    }
    pthread_mutex_lock(&load_mutex);
    int status;
    if (load_status == CCURL_LOAD_OK) {
        status = names_loaded_library(file) ? CCURL_LOAD_OK : CCURL_LOAD_OTHER_LOADED;
        if (status != CCURL_LOAD_OK && err != NULL && errlen > 0) {
            snprintf(err, errlen, "libcurl %s from %s is loaded already, and a process loads one libcurl",
                     library_info.version, loaded_path);
        }
    } else {
        char reason[512];
        status = load_library(file, 1, reason, sizeof reason) == 0 ? CCURL_LOAD_OK : CCURL_LOAD_CHOSEN_UNUSABLE;
        if (status != CCURL_LOAD_OK) copy_error(err, errlen, reason);
    }
    pthread_mutex_unlock(&load_mutex);
    return status;
}

ccurl_library_info ccurl_library(void) {
    pthread_mutex_lock(&load_mutex);
    ccurl_library_info info = library_info;
    pthread_mutex_unlock(&load_mutex);
    return info;
}

void *ccurl_library_handle(void) {
    pthread_mutex_lock(&load_mutex);
    void *handle = loaded_handle;
    pthread_mutex_unlock(&load_mutex);
    return handle;
}

// MARK: - Easy

ccurl_easy *ccurl_easy_init(void) { return api.easy_init ? api.easy_init() : NULL; }
void ccurl_easy_cleanup(ccurl_easy *handle) { if (api.easy_cleanup && handle) api.easy_cleanup(handle); }
void ccurl_easy_reset(ccurl_easy *handle) { if (api.easy_reset && handle) api.easy_reset(handle); }
int ccurl_easy_pause(ccurl_easy *handle, int bitmask) {
    return api.easy_pause ? api.easy_pause(handle, bitmask) : CCURLE_FAILED_INIT;
}
const char *ccurl_easy_strerror(int code) {
    return api.easy_strerror ? api.easy_strerror(code) : "libcurl is not loaded";
}

int ccurl_easy_setopt_long(ccurl_easy *handle, int option, long value) {
    return api.easy_setopt ? api.easy_setopt(handle, option, value) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_off(ccurl_easy *handle, int option, int64_t value) {
    return api.easy_setopt ? api.easy_setopt(handle, option, (int64_t)value) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_ptr(ccurl_easy *handle, int option, const void *value) {
    return api.easy_setopt ? api.easy_setopt(handle, option, value) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_func_data(ccurl_easy *handle, int option, ccurl_data_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_func_read(ccurl_easy *handle, int option, ccurl_read_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_func_seek(ccurl_easy *handle, int option, ccurl_seek_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_func_trailer(ccurl_easy *handle, int option, ccurl_trailer_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_func_xferinfo(ccurl_easy *handle, int option, ccurl_xferinfo_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_func_close(ccurl_easy *handle, int option, ccurl_close_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_func_debug(ccurl_easy *handle, int option, ccurl_debug_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
}

int ccurl_easy_setopt_ssl_ctx_function(ccurl_easy *handle, int (*callback)(void *, void *, void *)) {
    // CURLOPT_SSL_CTX_FUNCTION (7.10.6).
    return api.easy_setopt ? api.easy_setopt(handle, 20108, callback) : CCURLE_FAILED_INIT;
}

int ccurl_easy_getinfo_long(ccurl_easy *handle, int info, long *value) {
    return api.easy_getinfo ? api.easy_getinfo(handle, info, value) : CCURLE_FAILED_INIT;
}
int ccurl_easy_getinfo_off(ccurl_easy *handle, int info, int64_t *value) {
    return api.easy_getinfo ? api.easy_getinfo(handle, info, value) : CCURLE_FAILED_INIT;
}
int ccurl_easy_getinfo_ptr(ccurl_easy *handle, int info, void **value) {
    return api.easy_getinfo ? api.easy_getinfo(handle, info, value) : CCURLE_FAILED_INIT;
}
int ccurl_easy_getinfo_string(ccurl_easy *handle, int info, const char **value) {
    return api.easy_getinfo ? api.easy_getinfo(handle, info, value) : CCURLE_FAILED_INIT;
}
int ccurl_easy_getinfo_double(ccurl_easy *handle, int info, double *value) {
    return api.easy_getinfo ? api.easy_getinfo(handle, info, value) : CCURLE_FAILED_INIT;
}

int ccurl_easy_perform(ccurl_easy *handle) {
    return api.easy_perform ? api.easy_perform(handle) : CCURLE_FAILED_INIT;
}
int ccurl_easy_send(ccurl_easy *handle, const void *buffer, size_t length, size_t *sent) {
    *sent = 0;
    return api.easy_send ? api.easy_send(handle, buffer, length, sent) : CCURLE_FAILED_INIT;
}
int ccurl_easy_recv(ccurl_easy *handle, void *buffer, size_t length, size_t *received) {
    *received = 0;
    return api.easy_recv ? api.easy_recv(handle, buffer, length, received) : CCURLE_FAILED_INIT;
}
int ccurl_easy_active_socket(ccurl_easy *handle, int *socket) {
    *socket = -1;
    return api.easy_getinfo ? api.easy_getinfo(handle, CCURLINFO_ACTIVESOCKET, socket) : CCURLE_FAILED_INIT;
}

// MARK: - String lists

ccurl_slist *ccurl_slist_append(ccurl_slist *list, const char *string) {
    return api.slist_append ? api.slist_append(list, string) : NULL;
}
void ccurl_slist_free_all(ccurl_slist *list) { if (api.slist_free_all && list) api.slist_free_all(list); }

// MARK: - Multi

// CURLM_INTERNAL_ERROR (7.9.6): what the multi wrappers return before a successful load.
#define CCURLM_INTERNAL_ERROR 4

ccurl_multi *ccurl_multi_init(void) { return api.multi_init ? api.multi_init() : NULL; }
int ccurl_multi_cleanup(ccurl_multi *multi) {
    return api.multi_cleanup ? api.multi_cleanup(multi) : CCURLM_INTERNAL_ERROR;
}
int ccurl_multi_setopt_long(ccurl_multi *multi, int option, long value) {
    return api.multi_setopt ? api.multi_setopt(multi, option, value) : CCURLM_INTERNAL_ERROR;
}
int ccurl_multi_add_handle(ccurl_multi *multi, ccurl_easy *handle) {
    return api.multi_add_handle ? api.multi_add_handle(multi, handle) : CCURLM_INTERNAL_ERROR;
}
int ccurl_multi_remove_handle(ccurl_multi *multi, ccurl_easy *handle) {
    return api.multi_remove_handle ? api.multi_remove_handle(multi, handle) : CCURLM_INTERNAL_ERROR;
}
int ccurl_multi_setopt_ptr(ccurl_multi *multi, int option, void *value) {
    return api.multi_setopt ? api.multi_setopt(multi, option, value) : CCURLM_INTERNAL_ERROR;
}
int ccurl_multi_setopt_func_socket(ccurl_multi *multi, int option, ccurl_socket_callback callback) {
    return api.multi_setopt ? api.multi_setopt(multi, option, callback) : CCURLM_INTERNAL_ERROR;
}
int ccurl_multi_setopt_func_timer(ccurl_multi *multi, int option, ccurl_timer_callback callback) {
    return api.multi_setopt ? api.multi_setopt(multi, option, callback) : CCURLM_INTERNAL_ERROR;
}
int ccurl_multi_socket_action(ccurl_multi *multi, int socket, int events, int *running_handles) {
    return api.multi_socket_action ? api.multi_socket_action(multi, socket, events, running_handles) : CCURLM_INTERNAL_ERROR;
}
const char *ccurl_multi_strerror(int code) {
    return api.multi_strerror ? api.multi_strerror(code) : "libcurl is not loaded";
}

int ccurl_multi_next_done(ccurl_multi *multi, ccurl_easy **handle, int *result) {
    if (!api.multi_info_read) return 0;
    int queued = 0;
    ccurl_message *message;
    while ((message = api.multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == CCURLMSG_DONE) {
            *handle = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

// MARK: - Share

// CURLSHoption (7.10) and curl_lock_data (7.10.3 / 7.23.0) values.
#define CCURLSHOPT_SHARE 1
#define CCURLSHOPT_LOCKFUNC 3
#define CCURLSHOPT_UNLOCKFUNC 4
#define CCURLSHOPT_USERDATA 5
#define CCURL_LOCK_DATA_DNS 3
#define CCURL_LOCK_DATA_SSL_SESSION 4
#define CCURL_LOCK_DATA_LAST 8

struct ccurl_share {
    void *handle;
    pthread_mutex_t locks[CCURL_LOCK_DATA_LAST];
};

static void share_lock(void *easy, int data, int access, void *userptr) {
    (void)easy; (void)access;
    struct ccurl_share *share = userptr;
    if (data >= 0 && data < CCURL_LOCK_DATA_LAST) pthread_mutex_lock(&share->locks[data]);
}

static void share_unlock(void *easy, int data, void *userptr) {
    (void)easy;
    struct ccurl_share *share = userptr;
    if (data >= 0 && data < CCURL_LOCK_DATA_LAST) pthread_mutex_unlock(&share->locks[data]);
}

ccurl_share *ccurl_share_create(void) {
    if (!api.share_init) return NULL;
    struct ccurl_share *share = calloc(1, sizeof *share);
    if (share == NULL) return NULL;
    for (int i = 0; i < CCURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&share->locks[i], NULL);
    share->handle = api.share_init();
    if (share->handle == NULL
        || api.share_setopt(share->handle, CCURLSHOPT_LOCKFUNC, share_lock) != 0
        || api.share_setopt(share->handle, CCURLSHOPT_UNLOCKFUNC, share_unlock) != 0
        || api.share_setopt(share->handle, CCURLSHOPT_USERDATA, share) != 0
        || api.share_setopt(share->handle, CCURLSHOPT_SHARE, CCURL_LOCK_DATA_SSL_SESSION) != 0
        || api.share_setopt(share->handle, CCURLSHOPT_SHARE, CCURL_LOCK_DATA_DNS) != 0) {
        if (share->handle != NULL) api.share_cleanup(share->handle);
        for (int i = 0; i < CCURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&share->locks[i]);
        free(share);
        return NULL;
    }
    return share;
}

int ccurl_share_destroy(ccurl_share *share) {
    if (share == NULL || !api.share_cleanup) return 0;
    int code = api.share_cleanup(share->handle);
    if (code != 0) return code; // still in use: keep the locks alive for whoever uses it
    for (int i = 0; i < CCURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&share->locks[i]);
    free(share);
    return 0;
}

int ccurl_easy_setopt_share(ccurl_easy *handle, ccurl_share *share) {
    return api.easy_setopt ? api.easy_setopt(handle, CCURLOPT_SHARE, share != NULL ? share->handle : NULL) : CCURLE_FAILED_INIT;
}
