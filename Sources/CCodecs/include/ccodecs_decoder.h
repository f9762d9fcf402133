// Content-coding decoders (gzip, deflate, br, zstd) on the system's zlib, brotli and zstd
// libraries, loaded at run time with dlopen/dlsym the way ccurl.h loads libcurl: no header of
// theirs is included and nothing links against them. A coding whose library is missing is simply
// unavailable (ccodecs_decoder_available() says so).
//
// The curl transport decodes bodies with these instead of letting libcurl do it, because a decoder
// here produces output only into the buffer it is given: the caller decides how much decoded data
// exists at any time, whatever the compression ratio (libcurl decodes a whole read at once and
// holds the output in its pause buffer while a transfer is paused).
//
// A decoder is used by one thread at a time.

#ifndef CCODECS_DECODER_H
#define CCODECS_DECODER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The content codings (RFC 9110 §8.4.1) a decoder can undo.
typedef enum ccodecs_coding {
    /// gzip (RFC 1952); also accepts a zlib stream, as libcurl does.
    CCODECS_CODING_GZIP = 1,
    /// "deflate": a zlib stream (RFC 1950), or raw deflate (RFC 1951) as some servers send it.
    CCODECS_CODING_DEFLATE = 2,
    /// Brotli (RFC 7932), through libbrotlidec.
    CCODECS_CODING_BROTLI = 3,
    /// Zstandard (RFC 8878), through libzstd, with the 8 MiB window limit RFC 8878 sets for HTTP.
    CCODECS_CODING_ZSTD = 4,
    /// Raw deflate (RFC 1951, no header or checksum) with a 32 KiB window: WebSocket
    /// permessage-deflate (RFC 7692), whose messages end in a sync flush rather than a final block.
    CCODECS_CODING_RAW_DEFLATE = 5,
} ccodecs_coding;

/// What one ccodecs_decoder_run() call ended with.
typedef enum ccodecs_decode_status {
    /// Progress was made; the decoder wants more input or more output room (see ccodecs_decoder_run()).
    CCODECS_DECODE_OK = 0,
    /// The coded stream ended (its checksum, if any, verified); bytes after it were not consumed.
    CCODECS_DECODE_END = 1,
    /// The input is not valid for the coding; ccodecs_decoder_message() says why.
    CCODECS_DECODE_ERROR = 2,
} ccodecs_decode_status;

/// A decoder for one coded stream.
typedef struct ccodecs_decoder ccodecs_decoder;

/// 1 when `coding`'s library loads and has what the decoder needs, 0 otherwise. Thread-safe.
int ccodecs_decoder_available(ccodecs_coding coding);

/// A new decoder, or NULL when the coding is unavailable or memory ran out.
ccodecs_decoder *ccodecs_decoder_create(ccodecs_coding coding);

/// Decodes from `input` (`input_length` bytes) into `output` (room for `output_capacity` bytes),
/// setting `*consumed` and `*produced`. It stops when the output is full, the input is used up
/// (then everything the input allows has been produced), or the stream ends. A call that returns
/// CCODECS_DECODE_OK with room left in `output` has used up its input. Call it again with no input
/// to take output the decoder still holds after a call that filled `output`.
ccodecs_decode_status ccodecs_decoder_run(ccodecs_decoder *decoder, const void *input, size_t input_length, size_t *consumed,
                                      void *output, size_t output_capacity, size_t *produced);

/// Why the last call failed (a static or decoder-owned string; valid until the next call).
const char *ccodecs_decoder_message(const ccodecs_decoder *decoder);

/// Releases the decoder. NULL is ignored.
void ccodecs_decoder_destroy(ccodecs_decoder *decoder);

/// A raw deflate compressor (RFC 1951) for WebSocket permessage-deflate (RFC 7692 §7.2.1): every
/// call ends in a sync flush, so its output so far is a complete run of blocks ending in
/// 00 00 FF FF. Used by one thread at a time.
typedef struct ccodecs_deflater ccodecs_deflater;

/// 1 when zlib loads with its compressor, 0 otherwise. Thread-safe.
int ccodecs_deflater_available(void);

/// A new compressor with a window of 2^window_bits bytes (9...15), or NULL when unavailable,
/// out of memory or window_bits is out of range.
ccodecs_deflater *ccodecs_deflater_create(int window_bits);

/// Compresses `input` into `output`, setting `*consumed` and `*produced`; 0 on success, -1 on a
/// zlib error. The message is complete once all input is consumed and a call leaves room in
/// `output`; until then call again with the rest of the input (or none) and more room.
int ccodecs_deflater_run(ccodecs_deflater *deflater, const void *input, size_t input_length, size_t *consumed, void *output,
                       size_t output_capacity, size_t *produced);

/// Forgets the window (client_no_context_takeover): the next message refers to nothing before it.
int ccodecs_deflater_reset(ccodecs_deflater *deflater);

/// Releases the compressor. NULL is ignored.
void ccodecs_deflater_destroy(ccodecs_deflater *deflater);

#ifdef __cplusplus
}
#endif

#endif
