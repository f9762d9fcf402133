// Loads libcurl at run time and forwards typed, non-variadic calls to it. See ccurl.h.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE // pthread_setname_np
#endif

#include "ccurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__APPLE__)
#define CCURL_LIBRARY_NAME "libcurl.4.dylib"
#else
#define CCURL_LIBRARY_NAME "libcurl.so.4"
#endif

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

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status = -1;            // written once inside pthread_once, read-only afterwards
static char load_error[512] = "libcurl was not loaded";
static ccurl_library_info library_info;

// Resolves one symbol into `slot`; records the first failure.
static int resolve(void *library, const char *name, void **slot) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(load_error, sizeof load_error, "%s has no symbol %s (libcurl too old or not libcurl)",
                 CCURL_LIBRARY_NAME, name);
        return -1;
    }
    return 0;
}

#define RESOLVE(field, name) if (resolve(library, name, (void **)&api.field) != 0) goto fail

static void load_library(void) {
    void *library = dlopen(CCURL_LIBRARY_NAME, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s: %s", CCURL_LIBRARY_NAME,
                 reason != NULL ? reason : "unknown dlopen error");
        return;
    }
    RESOLVE(version_info, "curl_version_info");
    // libcurl answers with its own struct whatever age is asked; `age` says which fields it has.
    ccurl_version_data *version = api.version_info(CCURLVERSION_ELEVENTH);
    if (version == NULL || version->version_num < CCURL_MINIMUM_VERSION) {
        snprintf(load_error, sizeof load_error, "libcurl %s is too old: Courier needs 7.68.0 or later",
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

    int code = api.global_init(CCURL_GLOBAL_ALL);
    if (code != CCURLE_OK) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed with code %d", code);
        goto fail;
    }
    library_info.version = version->version;
    library_info.version_num = version->version_num;
    library_info.features = version->features;
    library_info.ssl_version = version->ssl_version;
    library_info.cainfo = version->age >= CCURLVERSION_SEVENTH ? version->cainfo : NULL;
    library_info.version_text = api.version();
    library_info.host = version->host;
    library_info.protocols = version->protocols;
    library_info.feature_names = version->age >= CCURLVERSION_ELEVENTH ? version->feature_names : NULL;
    load_error[0] = '\0';
    load_status = 0;
    return;

fail:
    // The library stays mapped (dlclose of a half-used libcurl is not worth the risk), but no
    // wrapper will call into it: they all check load_status through the NULL-ed table.
    memset(&api, 0, sizeof api);
}

int ccurl_load(char *err, size_t errlen) {
    pthread_once(&load_once, load_library);
    if (load_status != 0 && err != NULL && errlen > 0) {
        snprintf(err, errlen, "%s", load_error);
    }
    return load_status;
}

ccurl_library_info ccurl_library(void) {
    return library_info;
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
int ccurl_easy_setopt_func_xferinfo(ccurl_easy *handle, int option, ccurl_xferinfo_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_func_close(ccurl_easy *handle, int option, ccurl_close_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
}
int ccurl_easy_setopt_func_debug(ccurl_easy *handle, int option, ccurl_debug_callback callback) {
    return api.easy_setopt ? api.easy_setopt(handle, option, callback) : CCURLE_FAILED_INIT;
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

// MARK: - TLS details

// CURLINFO_TLS_SSL_PTR (7.48.0) and CURLSSLBACKEND_OPENSSL (7.34.0).
#define CCURLINFO_TLS_SSL_PTR 0x40002D
#define CCURLSSLBACKEND_OPENSSL 1

typedef struct ccurl_tls_session_info {
    int backend;
    void *internals;
} ccurl_tls_session_info;

static struct {
    const char *(*get_version)(const void *ssl);
    const void *(*get_current_cipher)(const void *ssl);
    const char *(*cipher_get_name)(const void *cipher);
    void *(*store_new)(void);
    void (*store_free)(void *store);
    int (*store_up_ref)(void *store);
    int (*store_load_locations)(void *store, const char *file, const char *directory);
    int (*store_set_flags)(void *store, unsigned long flags);
    void (*ctx_set_cert_store)(void *ctx, void *store);
} openssl;
static pthread_once_t openssl_once = PTHREAD_ONCE_INIT;

// libssl is already in the process (libcurl loaded it); RTLD_NOLOAD finds it without loading
// anything. The one libcurl was built against comes first ("OpenSSL/3…" → libssl.so.3), so that a
// process holding two OpenSSL versions never mixes their objects. dlsym on libssl's handle also
// finds libcrypto's symbols (X509_STORE_*): libcrypto is one of its dependencies.
static void *openssl_library(void) {
    const char *preferred = NULL;
    if (library_info.ssl_version != NULL && strncmp(library_info.ssl_version, "OpenSSL/", 8) == 0) {
        preferred = strncmp(library_info.ssl_version + 8, "1.1", 3) == 0 ? "libssl.so.1.1" : "libssl.so.3";
    } else {
        return NULL; // another TLS backend: there is no OpenSSL object to talk to
    }
    const char *names[] = { preferred, "libssl.3.dylib", "libssl.so" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *library = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
        if (library != NULL) return library;
    }
    return NULL;
}

static void load_openssl(void) {
    void *library = openssl_library();
    if (library == NULL) return;
    openssl.get_version = (const char *(*)(const void *))dlsym(library, "SSL_get_version");
    openssl.get_current_cipher = (const void *(*)(const void *))dlsym(library, "SSL_get_current_cipher");
    openssl.cipher_get_name = (const char *(*)(const void *))dlsym(library, "SSL_CIPHER_get_name");
    openssl.store_new = (void *(*)(void))dlsym(library, "X509_STORE_new");
    openssl.store_free = (void (*)(void *))dlsym(library, "X509_STORE_free");
    openssl.store_up_ref = (int (*)(void *))dlsym(library, "X509_STORE_up_ref");
    openssl.store_load_locations = (int (*)(void *, const char *, const char *))dlsym(library, "X509_STORE_load_locations");
    openssl.store_set_flags = (int (*)(void *, unsigned long))dlsym(library, "X509_STORE_set_flags");
    openssl.ctx_set_cert_store = (void (*)(void *, void *))dlsym(library, "SSL_CTX_set_cert_store");
    if (!openssl.get_version || !openssl.get_current_cipher || !openssl.cipher_get_name) {
        openssl.get_version = NULL;
    }
    if (!openssl.store_new || !openssl.store_free || !openssl.store_up_ref || !openssl.store_load_locations
        || !openssl.store_set_flags || !openssl.ctx_set_cert_store) {
        openssl.store_new = NULL;
    }
}

int ccurl_tls_details(ccurl_easy *handle, const char **version, const char **cipher) {
    if (!api.easy_getinfo) return -1;
    ccurl_tls_session_info *info = NULL;
    if (api.easy_getinfo(handle, CCURLINFO_TLS_SSL_PTR, &info) != CCURLE_OK || info == NULL
        || info->backend != CCURLSSLBACKEND_OPENSSL || info->internals == NULL) return -1;
    pthread_once(&openssl_once, load_openssl);
    if (!openssl.get_version) return -1;
    const void *cipher_object = openssl.get_current_cipher(info->internals);
    *version = openssl.get_version(info->internals);
    *cipher = cipher_object != NULL ? openssl.cipher_get_name(cipher_object) : NULL;
    return *version != NULL ? 0 : -1;
}

// MARK: - Shared trust store

// CURLOPT_SSL_CTX_FUNCTION and CURLOPT_SSL_CTX_DATA (7.10.6); X509_V_FLAG_TRUSTED_FIRST and
// X509_V_FLAG_PARTIAL_CHAIN (OpenSSL 1.1.0), the flags libcurl sets on a store it fills itself.
#define CCURLOPT_SSL_CTX_FUNCTION 20108
#define CCURLOPT_SSL_CTX_DATA 10109
#define CCX509_V_FLAG_TRUSTED_FIRST 0x8000UL
#define CCX509_V_FLAG_PARTIAL_CHAIN 0x80000UL

struct ccurl_trust_store {
    void *store; // X509_STORE *, one reference owned here
};

ccurl_trust_store *ccurl_trust_store_create(const char *const *files, int file_count,
                                            const char *directory) {
    if (load_status != 0) return NULL;
    pthread_once(&openssl_once, load_openssl);
    if (!openssl.store_new) return NULL;
    void *store = openssl.store_new();
    if (store == NULL) return NULL;
    for (int i = 0; i < file_count; i++) {
        if (openssl.store_load_locations(store, files[i], NULL) != 1) goto fail;
    }
    if (directory != NULL && openssl.store_load_locations(store, NULL, directory) != 1) goto fail;
    // Set once here, so that libcurl setting them again on the shared store changes nothing.
    openssl.store_set_flags(store, CCX509_V_FLAG_TRUSTED_FIRST | CCX509_V_FLAG_PARTIAL_CHAIN);
    struct ccurl_trust_store *trust = calloc(1, sizeof *trust);
    if (trust == NULL) goto fail;
    trust->store = store;
    return trust;
fail:
    openssl.store_free(store);
    return NULL;
}

void ccurl_trust_store_release(ccurl_trust_store *trust) {
    if (trust == NULL) return;
    openssl.store_free(trust->store);
    free(trust);
}

// Runs for each new TLS connection, before its handshake: the connection's SSL_CTX takes a
// reference to the shared store in place of the empty one libcurl made for it.
static int use_trust_store(void *easy, void *ssl_ctx, void *userptr) {
    (void)easy;
    struct ccurl_trust_store *trust = userptr;
    if (trust == NULL || ssl_ctx == NULL) return CCURLE_OK;
    if (openssl.store_up_ref(trust->store) != 1) return 27; // CURLE_OUT_OF_MEMORY
    openssl.ctx_set_cert_store(ssl_ctx, trust->store);
    return CCURLE_OK;
}

int ccurl_easy_use_trust_store(ccurl_easy *handle, ccurl_trust_store *trust) {
    if (!api.easy_setopt) return CCURLE_FAILED_INIT;
    int code = api.easy_setopt(handle, CCURLOPT_SSL_CTX_DATA, (void *)trust);
    if (code != CCURLE_OK) return code;
    return api.easy_setopt(handle, CCURLOPT_SSL_CTX_FUNCTION, trust != NULL ? use_trust_store : NULL);
}

// MARK: - Threads

void ccurl_name_current_thread(const char *name) {
    char truncated[16];
    snprintf(truncated, sizeof truncated, "%s", name);
#if defined(__APPLE__)
    pthread_setname_np(truncated);
#elif defined(__linux__)
    pthread_setname_np(pthread_self(), truncated);
#endif
}
