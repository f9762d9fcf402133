// Request-body compression (gzip and zlib "deflate") on the system's zlib, loaded at run time
// by decoder.c with dlopen/dlsym (the zlib the decoders use): no zlib header is included and nothing links
// against it.

#ifndef CCODECS_ENCODER_H
#define CCODECS_ENCODER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when zlib loads and has its compressor (deflateInit2_, deflate, deflateEnd), 0 otherwise. Thread-safe.
int ccodecs_compressor_available(void);

/// The most bytes ccodecs_compress() can produce for `input_length` bytes, in either format.
size_t ccodecs_compress_bound(size_t input_length);

/// Compresses `input` in one go, as gzip (RFC 1952) when `gzip` is 1, else as a zlib stream
/// (RFC 1950, HTTP's "deflate"), at zlib's default level. Returns the bytes written to `output`
/// (room for `output_capacity`, at least ccodecs_compress_bound() bytes), or -1 when zlib is missing,
/// memory ran out or the output did not fit. Thread-safe.
long ccodecs_compress(int gzip, const void *input, size_t input_length, void *output, size_t output_capacity);

#ifdef __cplusplus
}
#endif

#endif
