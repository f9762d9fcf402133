// What the C files of CCurl share with each other and not with Swift.

#ifndef CCURL_INTERNAL_H
#define CCURL_INTERNAL_H

#include "ccurl.h"

/// The dlopen handle of the loaded libcurl; NULL before a successful load.
void *ccurl_library_handle(void);

/// CURLOPT_SSL_CTX_FUNCTION (7.10.6): `callback(easy, ssl_ctx, userptr)` runs before each new TLS
/// connection's handshake (NULL: none). Returns a CURLcode.
int ccurl_easy_setopt_ssl_ctx_function(ccurl_easy *handle, int (*callback)(void *easy, void *ssl_ctx, void *userptr));

#endif
