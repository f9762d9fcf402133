// CCurl: libcurl loaded at run time with dlopen/dlsym.
//
// No curl header is included and nothing links against libcurl: this file declares the few
// opaque types, constants and functions Courier uses, with the values of libcurl's stable ABI.
// Each constant names the libcurl version that introduced it. Courier supports libcurl 7.68.0 and
// later (the oldest release it was designed against); ccurl_load() refuses anything older.
//
// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic in C; Swift cannot call
// variadic functions, so every argument kind has its own non-variadic wrapper here.
//
// Every function other than ccurl_load(), ccurl_load_file() and ccurl_library() requires a
// successful load first; before that they return an error code or NULL and do nothing.

#ifndef CCURL_H
#define CCURL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Opaque handles

/// A libcurl easy handle (`CURL *`).
typedef struct ccurl_easy ccurl_easy;
/// A libcurl multi handle (`CURLM *`).
typedef struct ccurl_multi ccurl_multi;
/// A libcurl string list (`struct curl_slist *`).
typedef struct ccurl_slist ccurl_slist;

// MARK: - Callback types

/// CURLOPT_WRITEFUNCTION / CURLOPT_HEADERFUNCTION: returns the bytes taken, or CCURL_WRITEFUNC_PAUSE.
typedef size_t (*ccurl_data_callback)(char *buffer, size_t size, size_t nitems, void *userdata);
/// CURLOPT_READFUNCTION: fills `buffer`, returns the bytes written, 0 at the end, or CCURL_READFUNC_ABORT.
typedef size_t (*ccurl_read_callback)(char *buffer, size_t size, size_t nitems, void *userdata);
/// CURLOPT_TRAILERFUNCTION: appends the request's trailer fields (`Name: value`, no CRLF) to `*list`
/// with ccurl_slist_append; returns CCURL_TRAILERFUNC_OK, or CCURL_TRAILERFUNC_ABORT to fail the transfer.
typedef int (*ccurl_trailer_callback)(ccurl_slist **list, void *userdata);
/// CURLOPT_SEEKFUNCTION: `origin` is SEEK_SET/SEEK_CUR/SEEK_END; returns a CCURL_SEEKFUNC_ value.
typedef int (*ccurl_seek_callback)(void *userdata, int64_t offset, int origin);
/// CURLOPT_XFERINFOFUNCTION: byte counts so far; a non-zero return aborts the transfer.
typedef int (*ccurl_xferinfo_callback)(void *userdata, int64_t dltotal, int64_t dlnow, int64_t ultotal, int64_t ulnow);
/// CURLOPT_CLOSESOCKETFUNCTION: must close `socket`; returns 0 on success.
typedef int (*ccurl_close_callback)(void *clientp, int socket);
/// CURLOPT_DEBUGFUNCTION: `type` is a CCURLINFO_ kind (text, header in or out, data...), `data`
/// is not NUL-terminated. Must return 0.
typedef int (*ccurl_debug_callback)(ccurl_easy *handle, int type, char *data, size_t size, void *userdata);
/// CURLMOPT_SOCKETFUNCTION: watch `socket` for `what` (a CCURL_POLL_ value); `socketp` is what
/// curl_multi_assign stored for it. Returns 0, or -1 to fail the transfers on it.
typedef int (*ccurl_socket_callback)(ccurl_easy *easy, int socket, int what, void *userp, void *socketp);
/// CURLMOPT_TIMERFUNCTION: call curl_multi_socket_action(CCURL_SOCKET_TIMEOUT) in `timeout_ms`
/// (0: as soon as possible, not from inside the callback; -1: no timer).
typedef int (*ccurl_timer_callback)(ccurl_multi *multi, long timeout_ms, void *userp);

// MARK: - Easy options (CURLoption)

#define CCURLOPT_WRITEDATA 10001              // 7.9.7 (as CURLOPT_FILE since 7.1)
#define CCURLOPT_URL 10002                    // 7.1
#define CCURLOPT_PROXY 10004                  // 7.1
#define CCURLOPT_READDATA 10009               // 7.9.7 (as CURLOPT_INFILE since 7.1)
#define CCURLOPT_ERRORBUFFER 10010            // 7.1
#define CCURLOPT_WRITEFUNCTION 20011          // 7.1
#define CCURLOPT_READFUNCTION 20012           // 7.1
#define CCURLOPT_HTTPHEADER 10023             // 7.1
#define CCURLOPT_HEADERDATA 10029             // 7.10 (as CURLOPT_WRITEHEADER since 7.1)
#define CCURLOPT_CUSTOMREQUEST 10036          // 7.1
#define CCURLOPT_LOW_SPEED_LIMIT 19            // 7.1
#define CCURLOPT_LOW_SPEED_TIME 20             // 7.1
#define CCURLOPT_NOPROGRESS 43                // 7.1
#define CCURLOPT_NOBODY 44                    // 7.1
#define CCURLOPT_UPLOAD 46                    // 7.1
#define CCURLOPT_FOLLOWLOCATION 52            // 7.1
#define CCURLOPT_XFERINFODATA 10057           // 7.32.0 (as CURLOPT_PROGRESSDATA since 7.1)
#define CCURLOPT_CAINFO 10065                 // 7.4.2
#define CCURLOPT_HEADERFUNCTION 20079         // 7.7.2
#define CCURLOPT_BUFFERSIZE 98                // 7.10
#define CCURLOPT_NOSIGNAL 99                  // 7.10
#define CCURLOPT_ACCEPT_ENCODING 10102        // 7.21.6 (as CURLOPT_ENCODING since 7.10)
#define CCURLOPT_PRIVATE 10103                // 7.10.3
#define CCURLOPT_INFILESIZE_LARGE 30115       // 7.11.0
#define CCURLOPT_TCP_NODELAY 121              // 7.11.2
#define CCURLOPT_NOPROXY 10177                // 7.19.4
#define CCURLOPT_HTTP_CONTENT_DECODING 158    // 7.16.2
#define CCURLOPT_SEEKFUNCTION 20167           // 7.18.0
#define CCURLOPT_SEEKDATA 10168               // 7.18.0
#define CCURLOPT_PROTOCOLS 181                // 7.19.4 (deprecated in 7.85.0, still honoured)
#define CCURLOPT_XFERINFOFUNCTION 20219       // 7.32.0
#define CCURLOPT_CONNECT_ONLY 141             // 7.15.2
#define CCURLOPT_HTTPPROXYTUNNEL 61           // 7.3
#define CCURLOPT_CONNECTTIMEOUT_MS 156        // 7.16.2
#define CCURLOPT_SUPPRESS_CONNECT_HEADERS 265 // 7.54.0
#define CCURLOPT_UPLOAD_BUFFERSIZE 280        // 7.62.0
#define CCURLOPT_TRAILERFUNCTION 20283        // 7.64.0: called once before a chunked upload's last CRLF
#define CCURLOPT_TRAILERDATA 10284            // 7.64.0
#define CCURL_TRAILERFUNC_OK 0                // 7.64.0
#define CCURL_TRAILERFUNC_ABORT 1             // 7.64.0
#define CCURLOPT_SSLCERT 10025                // 7.1
#define CCURLOPT_KEYPASSWD 10026              // 7.17.0 (as CURLOPT_SSLCERTPASSWD since 7.1)
#define CCURLOPT_SSLVERSION 32                // 7.1
#define CCURLOPT_SSL_VERIFYPEER 64            // 7.4.2
#define CCURLOPT_SSL_VERIFYHOST 81            // 7.8.1
#define CCURLOPT_HTTP_VERSION 84              // 7.9.1
#define CCURLOPT_SSLCERTTYPE 10086            // 7.9.3
#define CCURLOPT_SSLKEY 10087                 // 7.9.3
#define CCURLOPT_CAPATH 10097                 // 7.9.8
#define CCURLOPT_SHARE 10100                  // 7.10
#define CCURLOPT_PINNEDPUBLICKEY 10230        // 7.39.0 (sha256// pins with OpenSSL since 7.44.0)
#define CCURLOPT_PIPEWAIT 237                 // 7.43.0
#define CCURLOPT_FRESH_CONNECT 74             // 7.7
#define CCURLOPT_FORBID_REUSE 75              // 7.7
#define CCURLOPT_CA_CACHE_TIMEOUT 321         // 7.87.0
#define CCURLOPT_VERBOSE 41                   // 7.1
#define CCURLOPT_DEBUGFUNCTION 20094          // 7.9.6
#define CCURLOPT_DEBUGDATA 10095              // 7.9.6
#define CCURLOPT_MAX_SEND_SPEED_LARGE 30145   // 7.15.5
#define CCURLOPT_MAX_RECV_SPEED_LARGE 30146   // 7.15.5

// curl_infotype values a CURLOPT_DEBUGFUNCTION receives.
#define CCURLINFO_TEXT 0                      // 7.9.6: libcurl's own description of what it does
#define CCURLINFO_HEADER_IN 1                 // 7.9.6: a response header line as received
#define CCURLINFO_HEADER_OUT 2                // 7.9.6: the request head as sent
#define CCURLOPT_CONNECT_TO 10243             // 7.49.0

// CURL_HTTP_VERSION_* values for CCURLOPT_HTTP_VERSION.
#define CCURL_HTTP_VERSION_NONE 0             // 7.9.1: libcurl's default (HTTP/2 over TLS by ALPN since 7.62.0)
#define CCURL_HTTP_VERSION_2TLS 4             // 7.47.0: HTTP/2 over TLS by ALPN, HTTP/1.1 in the clear
#define CCURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE 5 // 7.49.0
#define CCURL_HTTP_VERSION_3ONLY 31           // 7.88.0: HTTP/3 without fallback (CURL_HTTP_VERSION_3,
                                              // 30, meant that before 7.88.0 and falls back to TCP since)

// CURL_SSLVERSION_* values for CCURLOPT_SSLVERSION (the minimum; the maximum stays the default).
#define CCURL_SSLVERSION_DEFAULT 0            // 7.1
#define CCURL_SSLVERSION_TLSv1_2 6            // 7.34.0
#define CCURL_SSLVERSION_TLSv1_3 7            // 7.52.0

// CURLPROTO_* bits for CCURLOPT_PROTOCOLS.
#define CCURLPROTO_HTTP 1                     // 7.19.4
#define CCURLPROTO_HTTPS 2                    // 7.19.4

// MARK: - Info (CURLINFO)

#define CCURLINFO_RESPONSE_CODE 0x200002        // 7.10.8
#define CCURLINFO_PRIVATE 0x100015              // 7.10.3
#define CCURLINFO_NUM_CONNECTS 0x20001A         // 7.12.3
#define CCURLINFO_PRIMARY_IP 0x100020           // 7.19.0
#define CCURLINFO_PRIMARY_PORT 0x200028         // 7.21.0
#define CCURLINFO_HTTP_VERSION 0x20002E         // 7.50.0
#define CCURLINFO_SIZE_UPLOAD_T 0x600007        // 7.55.0
#define CCURLINFO_TOTAL_TIME_T 0x600032         // 7.61.0
#define CCURLINFO_NAMELOOKUP_TIME_T 0x600033    // 7.61.0
#define CCURLINFO_CONNECT_TIME_T 0x600034       // 7.61.0
#define CCURLINFO_STARTTRANSFER_TIME_T 0x600036 // 7.61.0
#define CCURLINFO_APPCONNECT_TIME_T 0x600038    // 7.61.0
#define CCURLINFO_CAINFO 0x10003D               // 7.84.0
#define CCURLINFO_ACTIVESOCKET 0x50002C         // 7.45.0 (a curl_socket_t, an int on POSIX)
#define CCURLINFO_SSL_VERIFYRESULT 0x20000D     // 7.5: the X509_V_ERR_* result of verifying the peer

// CURL_HTTP_VERSION_* values reported by CCURLINFO_HTTP_VERSION.
#define CCURL_HTTP_VERSION_1_0 1                // 7.9.1
#define CCURL_HTTP_VERSION_1_1 2                // 7.9.1
#define CCURL_HTTP_VERSION_2_0 3                // 7.33.0
#define CCURL_HTTP_VERSION_3 30                 // 7.66.0

// MARK: - Multi options (CURLMoption)

#define CCURLMOPT_SOCKETFUNCTION 20001          // 7.15.4
#define CCURLMOPT_SOCKETDATA 10002              // 7.15.4
#define CCURLMOPT_TIMERFUNCTION 20004           // 7.16.0
#define CCURLMOPT_TIMERDATA 10005               // 7.16.0
#define CCURLMOPT_MAXCONNECTS 6                 // 7.16.3
#define CCURLMOPT_MAX_HOST_CONNECTIONS 7        // 7.30.0
#define CCURLMOPT_MAX_CONCURRENT_STREAMS 16     // 7.67.0

// MARK: - Socket interface (curl_multi_socket_action)

#define CCURL_SOCKET_TIMEOUT (-1)               // 7.15.4 (CURL_SOCKET_BAD)
#define CCURL_POLL_NONE 0                       // 7.14.0
#define CCURL_POLL_IN 1                         // 7.14.0
#define CCURL_POLL_OUT 2                        // 7.14.0
#define CCURL_POLL_INOUT 3                      // 7.14.0
#define CCURL_POLL_REMOVE 4                     // 7.14.0
#define CCURL_CSELECT_IN 1                      // 7.16.3
#define CCURL_CSELECT_OUT 2                     // 7.16.3
#define CCURL_CSELECT_ERR 4                     // 7.16.3

// MARK: - Callback return values and pause bits

#define CCURL_WRITEFUNC_PAUSE 0x10000001        // 7.18.0
#define CCURL_READFUNC_ABORT 0x10000000         // 7.12.1
#define CCURL_SEEKFUNC_OK 0                     // 7.19.5
#define CCURL_SEEKFUNC_FAIL 1                   // 7.19.5
#define CCURL_SEEKFUNC_CANTSEEK 2               // 7.19.5
#define CCURLPAUSE_RECV 1                       // 7.18.0
#define CCURLPAUSE_SEND 4                       // 7.18.0
#define CCURLPAUSE_ALL 5                        // 7.18.0
#define CCURLPAUSE_CONT 0                       // 7.18.0

/// CURL_ERROR_SIZE: the size CCURLOPT_ERRORBUFFER needs (7.1).
#define CCURL_ERROR_SIZE 256

// MARK: - Result codes (CURLcode)

#define CCURLE_OK 0                             // 7.1
#define CCURLE_UNSUPPORTED_PROTOCOL 1           // 7.1
#define CCURLE_FAILED_INIT 2                    // 7.1
#define CCURLE_URL_MALFORMAT 3                  // 7.1
#define CCURLE_COULDNT_RESOLVE_PROXY 5          // 7.1
#define CCURLE_COULDNT_RESOLVE_HOST 6           // 7.1
#define CCURLE_COULDNT_CONNECT 7                // 7.1
#define CCURLE_WEIRD_SERVER_REPLY 8             // 7.51.0 (as FTP_WEIRD_SERVER_REPLY since 7.1)
#define CCURLE_HTTP2 16                         // 7.38.0
#define CCURLE_PARTIAL_FILE 18                  // 7.1
#define CCURLE_WRITE_ERROR 23                   // 7.1
#define CCURLE_READ_ERROR 26                    // 7.1
#define CCURLE_BAD_FUNCTION_ARGUMENT 43         // 7.1
#define CCURLE_OUT_OF_MEMORY 27                 // 7.1
#define CCURLE_OPERATION_TIMEDOUT 28            // 7.10.2
#define CCURLE_SSL_CONNECT_ERROR 35             // 7.1
#define CCURLE_ABORTED_BY_CALLBACK 42           // 7.1
#define CCURLE_GOT_NOTHING 52                   // 7.9.1
#define CCURLE_SSL_ENGINE_NOTFOUND 53           // 7.9.3
#define CCURLE_SSL_ENGINE_SETFAILED 54          // 7.9.3
#define CCURLE_SEND_ERROR 55                    // 7.10
#define CCURLE_RECV_ERROR 56                    // 7.10
#define CCURLE_SSL_CERTPROBLEM 58               // 7.10
#define CCURLE_SSL_CIPHER 59                    // 7.10
#define CCURLE_PEER_FAILED_VERIFICATION 60      // 7.62.0 (as SSL_CACERT since 7.10)
#define CCURLE_BAD_CONTENT_ENCODING 61          // 7.10
#define CCURLE_USE_SSL_FAILED 64                // 7.17.0
#define CCURLE_SEND_FAIL_REWIND 65              // 7.12.3
#define CCURLE_SSL_ENGINE_INITFAILED 66         // 7.12.3
#define CCURLE_SSL_CACERT_BADFILE 77            // 7.16.0
#define CCURLE_SSL_SHUTDOWN_FAILED 80           // 7.16.1
#define CCURLE_SSL_CRL_BADFILE 82               // 7.19.0
#define CCURLE_SSL_ISSUER_ERROR 83              // 7.19.0
#define CCURLE_SSL_PINNEDPUBKEYNOTMATCH 90      // 7.39.0
#define CCURLE_SSL_INVALIDCERTSTATUS 91         // 7.41.0
#define CCURLE_HTTP2_STREAM 92                  // 7.49.0
#define CCURLE_SSL_CLIENTCERT 98                // 7.77.0
#define CCURLE_AGAIN 81                         // 7.18.2: curl_easy_send/recv would block
#define CCURLE_HTTP3 95                         // 7.68.0
#define CCURLE_QUIC_CONNECT_ERROR 96            // 7.69.0
#define CCURLE_TOO_LARGE 100                    // 8.6.0: a value or buffer over libcurl's limit

// MARK: - Version features (curl_version_info_data.features)

#define CCURL_VERSION_SSL (1 << 2)              // 7.10
#define CCURL_VERSION_ASYNCHDNS (1 << 7)        // 7.10.7
#define CCURL_VERSION_LIBZ (1 << 3)             // 7.10
#define CCURL_VERSION_HTTP2 (1 << 16)           // 7.33.0
#define CCURL_VERSION_ALTSVC (1 << 24)          // 7.64.1
#define CCURL_VERSION_HTTP3 (1 << 25)           // 7.66.0
#define CCURL_VERSION_BROTLI (1 << 23)          // 7.57.0
#define CCURL_VERSION_ZSTD (1 << 26)            // 7.72.0

/// The oldest libcurl Courier accepts: 7.68.0.
#define CCURL_MINIMUM_VERSION 0x074400

// MARK: - Loading

/// What the loaded libcurl reports about itself; strings are owned by libcurl (or ccurl) and live forever.
typedef struct ccurl_library_info {
    /// e.g. "7.88.1".
    const char *version;
    /// 0xXXYYZZ, e.g. 0x075801.
    unsigned int version_num;
    /// CCURL_VERSION_* bits.
    int features;
    /// e.g. "OpenSSL/3.0.19"; NULL without TLS.
    const char *ssl_version;
    /// The CA bundle libcurl was built to use (7.70.0+), or NULL.
    const char *cainfo;
    /// The file the dynamic linker loaded, e.g. "/lib/x86_64-linux-gnu/libcurl.so.4".
    const char *path;
    /// 1 when the file was chosen (COURIER_LIBCURL or ccurl_load_file()), 0 for the system's libcurl.so.4.
    int chosen;
    /// curl_version(): "libcurl/7.88.1 OpenSSL/3.0.19 zlib/1.2.13 ...", as `curl -V` prints it.
    const char *version_text;
    /// The platform libcurl was built for, e.g. "x86_64-pc-linux-gnu".
    const char *host;
    /// The protocols it speaks, lower case, ending with NULL.
    const char *const *protocols;
    /// The names of its features (7.87.0+), ending with NULL; NULL before 7.87.0 (use `features`).
    const char *const *feature_names;
} ccurl_library_info;

/// ccurl_load() and ccurl_load_file() results.
#define CCURL_LOAD_OK 0
/// The system's libcurl.so.4 is missing, too old or unusable.
#define CCURL_LOAD_UNAVAILABLE (-1)
/// The chosen file (COURIER_LIBCURL, or the one named) is missing, too old or not libcurl.
#define CCURL_LOAD_CHOSEN_UNUSABLE (-2)
/// Another libcurl than the one named is loaded already: a process loads one.
#define CCURL_LOAD_OTHER_LOADED (-3)

/// Loads libcurl once per process (thread-safe, idempotent): the file the environment variable
/// COURIER_LIBCURL names when it is set and not empty, else the system's libcurl.so.4. Returns
/// CCURL_LOAD_OK, or a CCURL_LOAD_ code and a NUL-terminated reason in `err` (up to `errlen`
/// bytes; `err` may be NULL). The first attempt's failure stands for later calls, unless
/// ccurl_load_file() loads a libcurl meanwhile.
int ccurl_load(char *err, size_t errlen);

/// Loads the libcurl at `path` (a path, or a name the dynamic linker searches for) unless one is
/// loaded: CCURL_LOAD_OK when it loads, or when the loaded one is that file;
/// CCURL_LOAD_OTHER_LOADED when another is loaded; CCURL_LOAD_CHOSEN_UNUSABLE when it cannot be
/// loaded (nothing is loaded then, and another file may be tried). The reason goes to `err`.
int ccurl_load_file(const char *path, char *err, size_t errlen);

/// The loaded library's version and features; all zero/NULL before a successful load.
ccurl_library_info ccurl_library(void);

// MARK: - Easy interface

ccurl_easy *ccurl_easy_init(void);
void ccurl_easy_cleanup(ccurl_easy *handle);
void ccurl_easy_reset(ccurl_easy *handle);
int ccurl_easy_pause(ccurl_easy *handle, int bitmask);
const char *ccurl_easy_strerror(int code);

int ccurl_easy_setopt_long(ccurl_easy *handle, int option, long value);
int ccurl_easy_setopt_off(ccurl_easy *handle, int option, int64_t value);
/// Pointer options: strings (copied by libcurl), userdata, slists, the error buffer.
int ccurl_easy_setopt_ptr(ccurl_easy *handle, int option, const void *value);
/// CCURLOPT_WRITEFUNCTION and CCURLOPT_HEADERFUNCTION.
int ccurl_easy_setopt_func_data(ccurl_easy *handle, int option, ccurl_data_callback callback);
int ccurl_easy_setopt_func_read(ccurl_easy *handle, int option, ccurl_read_callback callback);
int ccurl_easy_setopt_func_seek(ccurl_easy *handle, int option, ccurl_seek_callback callback);
int ccurl_easy_setopt_func_trailer(ccurl_easy *handle, int option, ccurl_trailer_callback callback);
int ccurl_easy_setopt_func_xferinfo(ccurl_easy *handle, int option, ccurl_xferinfo_callback callback);
int ccurl_easy_setopt_func_close(ccurl_easy *handle, int option, ccurl_close_callback callback);
int ccurl_easy_setopt_func_debug(ccurl_easy *handle, int option, ccurl_debug_callback callback);

int ccurl_easy_getinfo_long(ccurl_easy *handle, int info, long *value);
int ccurl_easy_getinfo_off(ccurl_easy *handle, int info, int64_t *value);
int ccurl_easy_getinfo_ptr(ccurl_easy *handle, int info, void **value);
int ccurl_easy_getinfo_string(ccurl_easy *handle, int info, const char **value);
int ccurl_easy_getinfo_double(ccurl_easy *handle, int info, double *value);

// MARK: - Connect-only connections (a protocol of Courier's own after the connect: WebSocket)

/// curl_easy_perform: runs the transfer on the calling thread, blocking. With CCURLOPT_CONNECT_ONLY
/// it returns once the connection (TCP, proxy tunnel, TLS) is up. Returns a CURLcode.
int ccurl_easy_perform(ccurl_easy *handle);
/// curl_easy_send on the connection a connect-only transfer made: `*sent` bytes went out; returns
/// a CURLcode, CCURLE_AGAIN when the socket takes nothing now.
int ccurl_easy_send(ccurl_easy *handle, const void *buffer, size_t length, size_t *sent);
/// curl_easy_recv on that connection: `*received` bytes were read, 0 with CCURLE_OK at the end of
/// the stream; returns a CURLcode, CCURLE_AGAIN when nothing is there now.
int ccurl_easy_recv(ccurl_easy *handle, void *buffer, size_t length, size_t *received);
/// CCURLINFO_ACTIVESOCKET: the connection's socket, -1 when there is none. Returns a CURLcode.
int ccurl_easy_active_socket(ccurl_easy *handle, int *socket);

// MARK: - String lists

/// Appends a copy of `string`; returns the new head, or NULL on failure (the old list is kept).
ccurl_slist *ccurl_slist_append(ccurl_slist *list, const char *string);
void ccurl_slist_free_all(ccurl_slist *list);

// MARK: - Multi interface

ccurl_multi *ccurl_multi_init(void);
int ccurl_multi_cleanup(ccurl_multi *multi);
int ccurl_multi_setopt_long(ccurl_multi *multi, int option, long value);
int ccurl_multi_add_handle(ccurl_multi *multi, ccurl_easy *handle);
int ccurl_multi_remove_handle(ccurl_multi *multi, ccurl_easy *handle);
/// CURLMOPT_SOCKETDATA and CURLMOPT_TIMERDATA.
int ccurl_multi_setopt_ptr(ccurl_multi *multi, int option, void *value);
/// CURLMOPT_SOCKETFUNCTION.
int ccurl_multi_setopt_func_socket(ccurl_multi *multi, int option, ccurl_socket_callback callback);
/// CURLMOPT_TIMERFUNCTION.
int ccurl_multi_setopt_func_timer(ccurl_multi *multi, int option, ccurl_timer_callback callback);
/// curl_multi_socket_action: `socket` is ready for `events` (CCURL_CSELECT_ bits), or CCURL_SOCKET_TIMEOUT.
int ccurl_multi_socket_action(ccurl_multi *multi, int socket, int events, int *running_handles);
const char *ccurl_multi_strerror(int code);

/// Takes the next finished transfer off the multi handle's message queue (curl_multi_info_read
/// filtered to CURLMSG_DONE). Returns 1 and fills `handle`/`result`, or 0 when none is left.
int ccurl_multi_next_done(ccurl_multi *multi, ccurl_easy **handle, int *result);

// MARK: - Share interface

/// A libcurl share handle (`CURLSH *`) with its own locks, usable from several threads at once.
typedef struct ccurl_share ccurl_share;

/// Creates a share handle that shares TLS sessions (CURL_LOCK_DATA_SSL_SESSION) and the DNS cache
/// (CURL_LOCK_DATA_DNS) between every easy handle given it through CCURLOPT_SHARE, from any thread:
/// each kind of data has a mutex of its own. NULL when libcurl cannot.
ccurl_share *ccurl_share_create(void);
/// Releases the share once no easy handle uses it any more; returns 0, or libcurl's CURLSHcode.
int ccurl_share_destroy(ccurl_share *share);
/// CCURLOPT_SHARE: `handle` shares through `share` (NULL: stops sharing).
int ccurl_easy_setopt_share(ccurl_easy *handle, ccurl_share *share);

// MARK: - TLS details

/// The libssl file the loaded libcurl calls (read from libcurl's own relocations, not guessed from
/// a name: a process may hold two OpenSSLs), e.g. "/lib/x86_64-linux-gnu/libssl.so.3"; NULL when
/// libcurl's TLS backend is not OpenSSL or the binding cannot be read. The two functions below and
/// the shared trust store use only that OpenSSL (and the libcrypto libcurl calls).
const char *ccurl_openssl_path(void);

/// The negotiated TLS protocol version ("TLSv1.3") and cipher suite of the connection `handle` is
/// using right now, read from OpenSSL through CURLINFO_TLS_SSL_PTR (7.48.0). The strings are
/// OpenSSL's static ones. Returns 0 and fills both, or -1 (not TLS, not OpenSSL, no connection).
int ccurl_tls_details(ccurl_easy *handle, const char **version, const char **cipher);

// MARK: - Shared trust store

/// One parsed set of trusted certificates (an OpenSSL `X509_STORE`), shared by every TLS connection
/// of every easy handle given it, from any thread (OpenSSL locks the store itself).
typedef struct ccurl_trust_store ccurl_trust_store;

/// Parses `files` (PEM bundles, each read whole, once) and adds `directory` (an OpenSSL hashed
/// directory, read lazily: one certificate per issuer looked up, kept afterwards) to a new store of
/// the OpenSSL libcurl calls (ccurl_openssl_path()). NULL when libcurl's TLS backend is not
/// OpenSSL, that OpenSSL cannot be told apart for certain, or a file or the directory cannot be loaded.
ccurl_trust_store *ccurl_trust_store_create(const char *const *files, int file_count,
                                            const char *directory);
/// Drops this reference; connections that took the store keep their own.
void ccurl_trust_store_release(ccurl_trust_store *store);
/// CURLOPT_SSL_CTX_FUNCTION: every new TLS connection of `handle` verifies against `store` (NULL:
/// stops). Returns libcurl's CURLcode (CURLE_NOT_BUILT_IN / CURLE_UNKNOWN_OPTION where unsupported).
int ccurl_easy_use_trust_store(ccurl_easy *handle, ccurl_trust_store *store);

// MARK: - Connect guard (connect_guard.c)

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
