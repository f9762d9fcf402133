// Request-body compression on zlib loaded at run time. See ccurl_encoder.h.
//
// The z_stream declaration copies zlib's stable ABI (unchanged since zlib 1.0), as decoder.c does.

#include "ccurl_encoder.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#if defined(__APPLE__)
#define CENCODER_ZLIB_NAME "libz.1.dylib"
#else
#define CENCODER_ZLIB_NAME "libz.so.1"
#endif

typedef struct cencoder_z_stream {
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
} cencoder_z_stream;

#define CZ_FINISH 4
#define CZ_OK 0
#define CZ_STREAM_END 1
#define CZ_DEFLATED 8
#define CZ_DEFAULT_COMPRESSION (-1)
#define CZ_DEFAULT_STRATEGY 0
#define CZ_MAX_WBITS 15
#define CZ_MEM_LEVEL 8

static struct {
    const char *(*version)(void);
    int (*deflate_init2)(cencoder_z_stream *, int, int, int, int, int, const char *, int);
    int (*deflate)(cencoder_z_stream *, int);
    int (*deflate_end)(cencoder_z_stream *);
} zlib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int zlib_loaded; // written once inside pthread_once

static void load_zlib(void) {
    void *library = dlopen(CENCODER_ZLIB_NAME, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    zlib.version = (const char *(*)(void))dlsym(library, "zlibVersion");
    zlib.deflate_init2 = (int (*)(cencoder_z_stream *, int, int, int, int, int, const char *, int))dlsym(library, "deflateInit2_");
    zlib.deflate = (int (*)(cencoder_z_stream *, int))dlsym(library, "deflate");
    zlib.deflate_end = (int (*)(cencoder_z_stream *))dlsym(library, "deflateEnd");
    zlib_loaded = zlib.version != NULL && zlib.deflate_init2 != NULL && zlib.deflate != NULL && zlib.deflate_end != NULL;
    if (!zlib_loaded) dlclose(library);
}

int ccurl_compressor_available(void) {
    pthread_once(&load_once, load_zlib);
    return zlib_loaded;
}

size_t ccurl_compress_bound(size_t input_length) {
    // zlib's compressBound(), plus room for the gzip header and trailer and a zlib header.
    return input_length + (input_length >> 12) + (input_length >> 14) + (input_length >> 25) + 13 + 32;
}

long ccurl_compress(int gzip, const void *input, size_t input_length, void *output, size_t output_capacity) {
    if (!ccurl_compressor_available()) return -1;
    // z_stream counts in unsigned int: larger bodies are not compressed in one call.
    if (input_length > UINT_MAX || output_capacity > UINT_MAX) return -1;
    cencoder_z_stream stream;
    memset(&stream, 0, sizeof stream);
    int window_bits = gzip ? CZ_MAX_WBITS + 16 : CZ_MAX_WBITS;
    if (zlib.deflate_init2(&stream, CZ_DEFAULT_COMPRESSION, CZ_DEFLATED, window_bits, CZ_MEM_LEVEL, CZ_DEFAULT_STRATEGY,
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
