// Content-coding decoders on zlib, brotli and zstd loaded at run time. See ccodecs_decoder.h.
//
// The declarations below copy the parts of each library's stable ABI that are used: zlib's
// z_stream (unchanged since zlib 1.0), brotli's decoder API (1.0) and zstd's streaming API (1.3,
// ZSTD_DCtx_setParameter 1.4).

#include "ccodecs_decoder.h"
#include "ccodecs_encoder.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__APPLE__)
#define CCODER_ZLIB_NAME "libz.1.dylib"
#define CCODER_BROTLI_NAME "libbrotlidec.1.dylib"
#define CCODER_ZSTD_NAME "libzstd.1.dylib"
#else
#define CCODER_ZLIB_NAME "libz.so.1"
#define CCODER_BROTLI_NAME "libbrotlidec.so.1"
#define CCODER_ZSTD_NAME "libzstd.so.1"
#endif

// MARK: - zlib

typedef struct ccoder_z_stream {
    const unsigned char *next_in;
    unsigned int avail_in;
    unsigned long total_in;
    unsigned char *next_out;
    unsigned int avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *zalloc;
    void *zfree;
    void *opaque;
    int data_type;
    unsigned long adler;
    unsigned long reserved;
} ccoder_z_stream;

#define CZ_NO_FLUSH 0
#define CZ_OK 0
#define CZ_STREAM_END 1
#define CZ_NEED_DICT 2
#define CZ_DATA_ERROR (-3)
#define CZ_MEM_ERROR (-4)
#define CZ_BUF_ERROR (-5)
#define CZ_MAX_WBITS 15

static struct {
    const char *(*version)(void);
    int (*inflate_init2)(ccoder_z_stream *, int, const char *, int);
    int (*inflate)(ccoder_z_stream *, int);
    int (*inflate_end)(ccoder_z_stream *);
    // The compressor, for WebSocket permessage-deflate only (loaded apart: decoding needs none of it).
    int (*deflate_init2)(ccoder_z_stream *, int, int, int, int, int, const char *, int);
    int (*deflate)(ccoder_z_stream *, int);
    int (*deflate_reset)(ccoder_z_stream *);
    int (*deflate_end)(ccoder_z_stream *);
} zlib;

#define CZ_SYNC_FLUSH 2
#define CZ_FINISH 4
#define CZ_DEFAULT_COMPRESSION (-1)
#define CZ_DEFLATED 8
#define CZ_DEFAULT_STRATEGY 0

// MARK: - brotli

#define CBROTLI_RESULT_ERROR 0
#define CBROTLI_RESULT_SUCCESS 1
#define CBROTLI_RESULT_NEEDS_MORE_INPUT 2
#define CBROTLI_RESULT_NEEDS_MORE_OUTPUT 3

static struct {
    void *(*create)(void *, void *, void *);
    void (*destroy)(void *);
    int (*decompress_stream)(void *, size_t *, const uint8_t **, size_t *, uint8_t **, size_t *);
    int (*error_code)(const void *);
    const char *(*error_string)(int);
} brotli;

// MARK: - zstd

typedef struct { const void *src; size_t size; size_t pos; } ccoder_zstd_in;
typedef struct { void *dst; size_t size; size_t pos; } ccoder_zstd_out;
#define CZSTD_D_WINDOW_LOG_MAX 100
// RFC 8878 §3.1.1.1.2: HTTP decoders need not accept windows over 8 MiB (2^23).
#define CZSTD_HTTP_WINDOW_LOG 23

static struct {
    void *(*create)(void);
    size_t (*free)(void *);
    size_t (*init)(void *);
    size_t (*set_parameter)(void *, int, int);
    size_t (*decompress_stream)(void *, ccoder_zstd_out *, ccoder_zstd_in *);
    unsigned (*is_error)(size_t);
    const char *(*error_name)(size_t);
} zstd;

// MARK: - Loading

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int zlib_loaded, zlib_deflate_loaded, brotli_loaded, zstd_loaded; // written once inside pthread_once

// Resolves every name into the slots in order; all or nothing.
static int resolve_all(void *library, const char *const *names, void **slots[], int count) {
    for (int index = 0; index < count; index++) {
        *slots[index] = dlsym(library, names[index]);
        if (*slots[index] == NULL) return 0;
    }
    return 1;
}

static void load_libraries(void) {
    void *library = dlopen(CCODER_ZLIB_NAME, RTLD_NOW | RTLD_LOCAL);
    if (library != NULL) {
        const char *names[] = {"zlibVersion", "inflateInit2_", "inflate", "inflateEnd"};
        void **slots[] = {(void **)&zlib.version, (void **)&zlib.inflate_init2, (void **)&zlib.inflate,
                          (void **)&zlib.inflate_end};
        zlib_loaded = resolve_all(library, names, slots, 4);
        if (zlib_loaded) {
            const char *deflate_names[] = {"deflateInit2_", "deflate", "deflateReset", "deflateEnd"};
            void **deflate_slots[] = {(void **)&zlib.deflate_init2, (void **)&zlib.deflate, (void **)&zlib.deflate_reset,
                                      (void **)&zlib.deflate_end};
            zlib_deflate_loaded = resolve_all(library, deflate_names, deflate_slots, 4);
        } else {
            dlclose(library);
        }
    }
    library = dlopen(CCODER_BROTLI_NAME, RTLD_NOW | RTLD_LOCAL);
    if (library != NULL) {
        const char *names[] = {"BrotliDecoderCreateInstance", "BrotliDecoderDestroyInstance",
                               "BrotliDecoderDecompressStream", "BrotliDecoderGetErrorCode", "BrotliDecoderErrorString"};
        void **slots[] = {(void **)&brotli.create, (void **)&brotli.destroy, (void **)&brotli.decompress_stream,
                          (void **)&brotli.error_code, (void **)&brotli.error_string};
        brotli_loaded = resolve_all(library, names, slots, 5);
        if (!brotli_loaded) dlclose(library);
    }
    library = dlopen(CCODER_ZSTD_NAME, RTLD_NOW | RTLD_LOCAL);
    if (library != NULL) {
        const char *names[] = {"ZSTD_createDStream", "ZSTD_freeDStream", "ZSTD_initDStream", "ZSTD_DCtx_setParameter",
                               "ZSTD_decompressStream", "ZSTD_isError", "ZSTD_getErrorName"};
        void **slots[] = {(void **)&zstd.create, (void **)&zstd.free, (void **)&zstd.init, (void **)&zstd.set_parameter,
                          (void **)&zstd.decompress_stream, (void **)&zstd.is_error, (void **)&zstd.error_name};
        zstd_loaded = resolve_all(library, names, slots, 7);
        if (!zstd_loaded) dlclose(library);
    }
}

int ccodecs_decoder_available(ccodecs_coding coding) {
    pthread_once(&load_once, load_libraries);
    switch (coding) {
    case CCODECS_CODING_GZIP:
    case CCODECS_CODING_DEFLATE:
    case CCODECS_CODING_RAW_DEFLATE: return zlib_loaded;
    case CCODECS_CODING_BROTLI: return brotli_loaded;
    case CCODECS_CODING_ZSTD: return zstd_loaded;
    }
    return 0;
}

// MARK: - Decoders

struct ccodecs_decoder {
    ccodecs_coding coding;
    const char *message;
    // zlib
    ccoder_z_stream z;
    int z_open;
    int z_raw_tried;           // "deflate": already fell back to raw deflate
    unsigned long consumed;    // input bytes taken by earlier calls
    // brotli and zstd
    void *state;
};

static int zlib_open(ccodecs_decoder *decoder, int window_bits) {
    memset(&decoder->z, 0, sizeof decoder->z);
    if (zlib.inflate_init2(&decoder->z, window_bits, zlib.version(), (int)sizeof decoder->z) != CZ_OK) return 0;
    decoder->z_open = 1;
    return 1;
}

ccodecs_decoder *ccodecs_decoder_create(ccodecs_coding coding) {
    if (!ccodecs_decoder_available(coding)) return NULL;
    ccodecs_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) return NULL;
    decoder->coding = coding;
    decoder->message = "";
    int opened = 0;
    switch (coding) {
    case CCODECS_CODING_GZIP:
        // 32 + 15: gzip or zlib header, detected automatically (libcurl does the same).
        opened = zlib_open(decoder, 32 + CZ_MAX_WBITS);
        break;
    case CCODECS_CODING_DEFLATE:
        opened = zlib_open(decoder, CZ_MAX_WBITS);
        break;
    case CCODECS_CODING_RAW_DEFLATE:
        opened = zlib_open(decoder, -CZ_MAX_WBITS);
        break;
    case CCODECS_CODING_BROTLI:
        decoder->state = brotli.create(NULL, NULL, NULL);
        opened = decoder->state != NULL;
        break;
    case CCODECS_CODING_ZSTD:
        decoder->state = zstd.create();
        opened = decoder->state != NULL && !zstd.is_error(zstd.init(decoder->state))
            && !zstd.is_error(zstd.set_parameter(decoder->state, CZSTD_D_WINDOW_LOG_MAX, CZSTD_HTTP_WINDOW_LOG));
        break;
    }
    if (!opened) {
        ccodecs_decoder_destroy(decoder);
        return NULL;
    }
    return decoder;
}

static ccodecs_decode_status run_zlib(ccodecs_decoder *decoder, const void *input, size_t input_length, size_t *consumed,
                                    void *output, size_t output_capacity, size_t *produced) {
    unsigned int in = input_length > UINT_MAX ? UINT_MAX : (unsigned int)input_length;
    unsigned int room = output_capacity > UINT_MAX ? UINT_MAX : (unsigned int)output_capacity;
    ccoder_z_stream *z = &decoder->z;
    z->next_in = input;
    z->avail_in = in;
    z->next_out = output;
    z->avail_out = room;
    int status = zlib.inflate(z, CZ_NO_FLUSH);
    if (status == CZ_DATA_ERROR && decoder->coding == CCODECS_CODING_DEFLATE && !decoder->z_raw_tried
        && decoder->consumed == 0 && z->total_out == 0) {
        // Some servers send raw deflate as "deflate": start again without the zlib header.
        decoder->z_raw_tried = 1;
        zlib.inflate_end(z);
        decoder->z_open = 0;
        if (!zlib_open(decoder, -CZ_MAX_WBITS)) {
            decoder->message = "zlib could not restart for raw deflate";
            return CCODECS_DECODE_ERROR;
        }
        z->next_in = input;
        z->avail_in = in;
        z->next_out = output;
        z->avail_out = room;
        status = zlib.inflate(z, CZ_NO_FLUSH);
    }
    *consumed = in - z->avail_in;
    *produced = room - z->avail_out;
    decoder->consumed += *consumed;
    switch (status) {
    case CZ_OK:
    case CZ_BUF_ERROR: // no progress possible with this input and room: not an error
        return CCODECS_DECODE_OK;
    case CZ_STREAM_END:
        return CCODECS_DECODE_END;
    case CZ_NEED_DICT:
        decoder->message = "the stream needs a preset dictionary";
        return CCODECS_DECODE_ERROR;
    case CZ_MEM_ERROR:
        decoder->message = "zlib ran out of memory";
        return CCODECS_DECODE_ERROR;
    default:
        decoder->message = z->msg != NULL ? z->msg : "invalid compressed data";
        return CCODECS_DECODE_ERROR;
    }
}

static ccodecs_decode_status run_brotli(ccodecs_decoder *decoder, const void *input, size_t input_length, size_t *consumed,
                                      void *output, size_t output_capacity, size_t *produced) {
    size_t available_in = input_length, available_out = output_capacity;
    const uint8_t *next_in = input;
    uint8_t *next_out = output;
    int result = brotli.decompress_stream(decoder->state, &available_in, &next_in, &available_out, &next_out, NULL);
    *consumed = input_length - available_in;
    *produced = output_capacity - available_out;
    switch (result) {
    case CBROTLI_RESULT_SUCCESS:
        return CCODECS_DECODE_END;
    case CBROTLI_RESULT_NEEDS_MORE_INPUT:
    case CBROTLI_RESULT_NEEDS_MORE_OUTPUT:
        return CCODECS_DECODE_OK;
    default:
        decoder->message = brotli.error_string(brotli.error_code(decoder->state));
        if (decoder->message == NULL) decoder->message = "invalid brotli data";
        return CCODECS_DECODE_ERROR;
    }
}

static ccodecs_decode_status run_zstd(ccodecs_decoder *decoder, const void *input, size_t input_length, size_t *consumed,
                                    void *output, size_t output_capacity, size_t *produced) {
    ccoder_zstd_in in = {input, input_length, 0};
    ccoder_zstd_out out = {output, output_capacity, 0};
    size_t result = zstd.decompress_stream(decoder->state, &out, &in);
    *consumed = in.pos;
    *produced = out.pos;
    if (zstd.is_error(result)) {
        decoder->message = zstd.error_name(result);
        if (decoder->message == NULL) decoder->message = "invalid zstd data";
        return CCODECS_DECODE_ERROR;
    }
    // 0: a frame ended and is flushed. Frames may follow one another, so the stream goes on; the
    // caller checks ccodecs_decoder_run's END only for the other codings.
    return result == 0 ? CCODECS_DECODE_END : CCODECS_DECODE_OK;
}

ccodecs_decode_status ccodecs_decoder_run(ccodecs_decoder *decoder, const void *input, size_t input_length, size_t *consumed,
                                      void *output, size_t output_capacity, size_t *produced) {
    *consumed = 0;
    *produced = 0;
    if (input == NULL) input_length = 0;
    if (input_length == 0) input = "";
    switch (decoder->coding) {
    case CCODECS_CODING_GZIP:
    case CCODECS_CODING_DEFLATE:
    case CCODECS_CODING_RAW_DEFLATE:
        return run_zlib(decoder, input, input_length, consumed, output, output_capacity, produced);
    case CCODECS_CODING_BROTLI:
        return run_brotli(decoder, input, input_length, consumed, output, output_capacity, produced);
    case CCODECS_CODING_ZSTD:
        return run_zstd(decoder, input, input_length, consumed, output, output_capacity, produced);
    }
    decoder->message = "unknown coding";
    return CCODECS_DECODE_ERROR;
}

const char *ccodecs_decoder_message(const ccodecs_decoder *decoder) {
    return decoder->message;
}

void ccodecs_decoder_destroy(ccodecs_decoder *decoder) {
    if (decoder == NULL) return;
    switch (decoder->coding) {
    case CCODECS_CODING_GZIP:
    case CCODECS_CODING_DEFLATE:
    case CCODECS_CODING_RAW_DEFLATE:
        if (decoder->z_open) zlib.inflate_end(&decoder->z);
        break;
    case CCODECS_CODING_BROTLI:
        if (decoder->state != NULL) brotli.destroy(decoder->state);
        break;
    case CCODECS_CODING_ZSTD:
        if (decoder->state != NULL) zstd.free(decoder->state);
        break;
    }
    free(decoder);
}

// MARK: - Raw deflate compressor (WebSocket permessage-deflate)

struct ccodecs_deflater {
    ccoder_z_stream z;
};

int ccodecs_deflater_available(void) {
    pthread_once(&load_once, load_libraries);
    return zlib_deflate_loaded;
}

ccodecs_deflater *ccodecs_deflater_create(int window_bits) {
    if (!ccodecs_deflater_available() || window_bits < 9 || window_bits > CZ_MAX_WBITS) return NULL;
    ccodecs_deflater *deflater = calloc(1, sizeof *deflater);
    if (deflater == NULL) return NULL;
    // Memory level 8 is zlib's default; negative window bits: raw deflate, no header or checksum.
    if (zlib.deflate_init2(&deflater->z, CZ_DEFAULT_COMPRESSION, CZ_DEFLATED, -window_bits, 8, CZ_DEFAULT_STRATEGY,
                           zlib.version(), (int)sizeof deflater->z) != CZ_OK) {
        free(deflater);
        return NULL;
    }
    return deflater;
}

int ccodecs_deflater_run(ccodecs_deflater *deflater, const void *input, size_t input_length, size_t *consumed, void *output,
                       size_t output_capacity, size_t *produced) {
    unsigned int in = input_length > UINT_MAX ? UINT_MAX : (unsigned int)input_length;
    unsigned int room = output_capacity > UINT_MAX ? UINT_MAX : (unsigned int)output_capacity;
    ccoder_z_stream *z = &deflater->z;
    z->next_in = in > 0 ? input : (const unsigned char *)"";
    z->avail_in = in;
    z->next_out = output;
    z->avail_out = room;
    int status = zlib.deflate(z, CZ_SYNC_FLUSH);
    *consumed = in - z->avail_in;
    *produced = room - z->avail_out;
    return status == CZ_OK || status == CZ_BUF_ERROR ? 0 : -1;
}

int ccodecs_deflater_reset(ccodecs_deflater *deflater) {
    return zlib.deflate_reset(&deflater->z) == CZ_OK ? 0 : -1;
}

void ccodecs_deflater_destroy(ccodecs_deflater *deflater) {
    if (deflater == NULL) return;
    zlib.deflate_end(&deflater->z);
    free(deflater);
}

// MARK: - One-shot compressor (request bodies; see ccodecs_encoder.h), on the same zlib

int ccodecs_compressor_available(void) {
    return ccodecs_deflater_available();
}

size_t ccodecs_compress_bound(size_t input_length) {
    // zlib's compressBound(), plus room for the gzip header and trailer and a zlib header.
    return input_length + (input_length >> 12) + (input_length >> 14) + (input_length >> 25) + 13 + 32;
}

long ccodecs_compress(int gzip, const void *input, size_t input_length, void *output, size_t output_capacity) {
    if (!ccodecs_compressor_available()) return -1;
    // z_stream counts in unsigned int: larger bodies are not compressed in one call.
    if (input_length > UINT_MAX || output_capacity > UINT_MAX) return -1;
    ccoder_z_stream stream;
    memset(&stream, 0, sizeof stream);
    // 15 window bits: a zlib stream (HTTP's "deflate"); + 16: gzip. Memory level 8 is zlib's default.
    int window_bits = gzip ? CZ_MAX_WBITS + 16 : CZ_MAX_WBITS;
    if (zlib.deflate_init2(&stream, CZ_DEFAULT_COMPRESSION, CZ_DEFLATED, window_bits, 8, CZ_DEFAULT_STRATEGY,
                           zlib.version(), (int)sizeof stream) != CZ_OK) {
        return -1;
    }
    stream.next_in = (const unsigned char *)input;
    stream.avail_in = (unsigned int)input_length;
    stream.next_out = (unsigned char *)output;
    stream.avail_out = (unsigned int)output_capacity;
    int result = zlib.deflate(&stream, CZ_FINISH);
    long produced = (long)stream.total_out;
    zlib.deflate_end(&stream);
    return result == CZ_STREAM_END ? produced : -1;
}
