// The OpenSSL the loaded libcurl calls, and what Courier does with it: reading a connection's TLS
// version and cipher, and building one trust store for every connection. See ccurl.h.
//
// A process can hold two OpenSSLs with the same symbol names and versions: the system's (loaded
// for FoundationNetworking's libcurl) and one a chosen libcurl brought beside it (a wheel's
// libssl-<hash>.so.3). Objects of one must never reach the other. So the library is not found by
// name: Courier reads, in libcurl's own relocations, where libcurl's calls to SSL_CTX_get_cert_store
// (libssl) and X509_STORE_set_flags (libcrypto) were bound, and takes every function from those
// two files, checking that each one is defined there. Where that cannot be read (not ELF, OpenSSL
// linked into libcurl statically, a relocation type this file does not know) nothing is shared:
// libcurl gets the CA files instead.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE // dladdr, dlinfo, RTLD_DEFAULT
#endif

#include "ccurl.h"
#include "ccurl_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__) && defined(__ELF__)
#include <elf.h>
#include <link.h>
#define CCURL_READS_RELOCATIONS 1
#endif

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
static char libssl_path[4096];

#if CCURL_READS_RELOCATIONS

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Dyn elf_dyn;
typedef Elf64_Sym elf_sym;
typedef Elf64_Rela elf_rela;
typedef Elf64_Rel elf_rel;
#define CCURL_R_SYM(info) ELF64_R_SYM(info)
#define CCURL_R_TYPE(info) ELF64_R_TYPE(info)
#else
typedef Elf32_Dyn elf_dyn;
typedef Elf32_Sym elf_sym;
typedef Elf32_Rela elf_rela;
typedef Elf32_Rel elf_rel;
#define CCURL_R_SYM(info) ELF32_R_SYM(info)
#define CCURL_R_TYPE(info) ELF32_R_TYPE(info)
#endif

// Relocation types whose slot holds the bound symbol's address once relocated.
static int holds_address(unsigned long type) {
#if defined(__x86_64__)
    return type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
    return type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_GLOB_DAT;
#elif defined(__i386__)
    return type == R_386_JMP_SLOT || type == R_386_GLOB_DAT;
#elif defined(__arm__)
    return type == R_ARM_JUMP_SLOT || type == R_ARM_GLOB_DAT;
#elif defined(__s390x__)
    return type == R_390_JMP_SLOT || type == R_390_GLOB_DAT;
#else
    (void)type;
    return 0;
#endif
}

// A dynamic-section address: glibc rewrites these in place to run-time addresses on most
// architectures, musl leaves them relative to the load address.
static uintptr_t run_time_address(const struct link_map *map, uintptr_t value) {
    return value < (uintptr_t)map->l_addr ? value + (uintptr_t)map->l_addr : value;
}

// The value in the slot of `map`'s first relocation against `name` that holds an address, or
// NULL when the object has none (it does not import `name`).
static void *slot_value(const struct link_map *map, const char *name) {
    const elf_sym *symbols = NULL;
    const char *strings = NULL;
    uintptr_t tables[2] = { 0, 0 }, sizes[2] = { 0, 0 };
    int rela[2] = { 0, 0 };
    long plt_kind = DT_RELA;
    for (const elf_dyn *entry = (const elf_dyn *)map->l_ld; entry->d_tag != DT_NULL; entry++) {
        switch (entry->d_tag) {
        case DT_SYMTAB: symbols = (const elf_sym *)run_time_address(map, entry->d_un.d_ptr); break;
        case DT_STRTAB: strings = (const char *)run_time_address(map, entry->d_un.d_ptr); break;
        case DT_JMPREL: tables[0] = run_time_address(map, entry->d_un.d_ptr); break;
        case DT_PLTRELSZ: sizes[0] = entry->d_un.d_val; break;
        case DT_PLTREL: plt_kind = (long)entry->d_un.d_val; break;
        case DT_RELA: tables[1] = run_time_address(map, entry->d_un.d_ptr); rela[1] = 1; break;
        case DT_RELASZ: if (rela[1]) sizes[1] = entry->d_un.d_val; break;
        case DT_REL: if (!rela[1]) tables[1] = run_time_address(map, entry->d_un.d_ptr); break;
        case DT_RELSZ: if (!rela[1]) sizes[1] = entry->d_un.d_val; break;
        default: break;
        }
    }
    rela[0] = plt_kind == DT_RELA;
    if (symbols == NULL || strings == NULL) return NULL;
    for (int t = 0; t < 2; t++) {
        if (tables[t] == 0) continue;
        size_t entry_size = rela[t] ? sizeof(elf_rela) : sizeof(elf_rel);
        for (size_t offset = 0; offset + entry_size <= sizes[t]; offset += entry_size) {
            // Rel and Rela begin alike: r_offset, then r_info.
            const elf_rel *relocation = (const elf_rel *)(tables[t] + offset);
            unsigned long symbol = (unsigned long)CCURL_R_SYM(relocation->r_info);
            if (symbol == 0 || !holds_address((unsigned long)CCURL_R_TYPE(relocation->r_info))) continue;
            if (strcmp(strings + symbols[symbol].st_name, name) != 0) continue;
            return *(void *const *)((uintptr_t)map->l_addr + relocation->r_offset);
        }
    }
    return NULL;
}

// The file libcurl's calls to `name` go to, opened (RTLD_NOLOAD) so that its symbols can be looked
// up; its Dl_info in `owner`. NULL when that cannot be told.
static void *bound_library(void *curl, const struct link_map *map, const void *curl_base, const char *name,
                           Dl_info *owner) {
    void *address = slot_value(map, name);
    if (address == NULL || dladdr(address, owner) == 0) return NULL;
    if (owner->dli_fbase == curl_base) {
        // Still libcurl's own PLT stub: bound lazily and not called yet. The dynamic linker will
        // look in the global scope first, then in libcurl's own.
        address = dlsym(RTLD_DEFAULT, name);
        if (address == NULL) address = dlsym(curl, name);
        if (address == NULL || dladdr(address, owner) == 0 || owner->dli_fbase == curl_base) return NULL;
    }
    if (owner->dli_fname == NULL || owner->dli_fname[0] == '\0') return NULL;
    return dlopen(owner->dli_fname, RTLD_LAZY | RTLD_NOLOAD);
}

// `name` from `library`, provided `library`'s own file (`owner`) defines it.
static void *symbol_in(void *library, const Dl_info *owner, const char *name) {
    void *address = dlsym(library, name);
    Dl_info found;
    if (address == NULL || dladdr(address, &found) == 0 || found.dli_fbase != owner->dli_fbase) return NULL;
    return address;
}

static void load_openssl(void) {
    void *curl = ccurl_library_handle();
    ccurl_library_info info = ccurl_library();
    if (curl == NULL || info.ssl_version == NULL || strncmp(info.ssl_version, "OpenSSL/", 8) != 0) return;
    struct link_map *map = NULL;
    Dl_info curl_info;
    void *version_info = dlsym(curl, "curl_version_info");
    if (dlinfo(curl, RTLD_DI_LINKMAP, &map) != 0 || map == NULL || version_info == NULL
        || dladdr(version_info, &curl_info) == 0) return;
    Dl_info ssl_owner, crypto_owner;
    void *ssl = bound_library(curl, map, curl_info.dli_fbase, "SSL_CTX_get_cert_store", &ssl_owner);
    void *crypto = bound_library(curl, map, curl_info.dli_fbase, "X509_STORE_set_flags", &crypto_owner);
    // The handles stay open for the process's life, as libcurl keeps both libraries loaded.
    if (ssl == NULL || crypto == NULL) return;
    snprintf(libssl_path, sizeof libssl_path, "%s", ssl_owner.dli_fname);
    openssl.get_version = (const char *(*)(const void *))symbol_in(ssl, &ssl_owner, "SSL_get_version");
    openssl.get_current_cipher = (const void *(*)(const void *))symbol_in(ssl, &ssl_owner, "SSL_get_current_cipher");
    openssl.cipher_get_name = (const char *(*)(const void *))symbol_in(ssl, &ssl_owner, "SSL_CIPHER_get_name");
    openssl.ctx_set_cert_store = (void (*)(void *, void *))symbol_in(ssl, &ssl_owner, "SSL_CTX_set_cert_store");
    openssl.store_new = (void *(*)(void))symbol_in(crypto, &crypto_owner, "X509_STORE_new");
    openssl.store_free = (void (*)(void *))symbol_in(crypto, &crypto_owner, "X509_STORE_free");
    openssl.store_up_ref = (int (*)(void *))symbol_in(crypto, &crypto_owner, "X509_STORE_up_ref");
    openssl.store_load_locations =
        (int (*)(void *, const char *, const char *))symbol_in(crypto, &crypto_owner, "X509_STORE_load_locations");
    openssl.store_set_flags = (int (*)(void *, unsigned long))symbol_in(crypto, &crypto_owner, "X509_STORE_set_flags");
    if (!openssl.get_version || !openssl.get_current_cipher || !openssl.cipher_get_name) {
        openssl.get_version = NULL;
    }
    if (!openssl.store_new || !openssl.store_free || !openssl.store_up_ref || !openssl.store_load_locations
        || !openssl.store_set_flags || !openssl.ctx_set_cert_store) {
        openssl.store_new = NULL;
    }
}

#else

static void load_openssl(void) {}

#endif

const char *ccurl_openssl_path(void) {
    if (ccurl_library_handle() == NULL) return NULL;
    pthread_once(&openssl_once, load_openssl);
    return libssl_path[0] != '\0' ? libssl_path : NULL;
}

// MARK: - TLS details

// CURLINFO_TLS_SSL_PTR (7.48.0) and CURLSSLBACKEND_OPENSSL (7.34.0).
#define CCURLINFO_TLS_SSL_PTR 0x40002D
#define CCURLSSLBACKEND_OPENSSL 1

typedef struct ccurl_tls_session_info {
    int backend;
    void *internals;
} ccurl_tls_session_info;

int ccurl_tls_details(ccurl_easy *handle, const char **version, const char **cipher) {
    ccurl_tls_session_info *info = NULL;
    if (ccurl_easy_getinfo_ptr(handle, CCURLINFO_TLS_SSL_PTR, (void **)&info) != CCURLE_OK || info == NULL
        || info->backend != CCURLSSLBACKEND_OPENSSL || info->internals == NULL) return -1;
    pthread_once(&openssl_once, load_openssl);
    if (!openssl.get_version) return -1;
    const void *cipher_object = openssl.get_current_cipher(info->internals);
    *version = openssl.get_version(info->internals);
    *cipher = cipher_object != NULL ? openssl.cipher_get_name(cipher_object) : NULL;
    return *version != NULL ? 0 : -1;
}

// MARK: - Shared trust store

// CURLOPT_SSL_CTX_DATA (7.10.6); X509_V_FLAG_TRUSTED_FIRST and X509_V_FLAG_PARTIAL_CHAIN
// (OpenSSL 1.1.0), the flags libcurl sets on a store it fills itself.
#define CCURLOPT_SSL_CTX_DATA 10109
#define CCX509_V_FLAG_TRUSTED_FIRST 0x8000UL
#define CCX509_V_FLAG_PARTIAL_CHAIN 0x80000UL

struct ccurl_trust_store {
    void *store; // X509_STORE *, one reference owned here
};

ccurl_trust_store *ccurl_trust_store_create(const char *const *files, int file_count,
                                            const char *directory) {
    if (ccurl_library_handle() == NULL) return NULL;
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
    if (openssl.store_up_ref(trust->store) != 1) return CCURLE_OUT_OF_MEMORY;
    openssl.ctx_set_cert_store(ssl_ctx, trust->store);
    return CCURLE_OK;
}

int ccurl_easy_use_trust_store(ccurl_easy *handle, ccurl_trust_store *trust) {
    int code = ccurl_easy_setopt_ptr(handle, CCURLOPT_SSL_CTX_DATA, (void *)trust);
    if (code != CCURLE_OK) return code;
    return ccurl_easy_setopt_ssl_ctx_function(handle, trust != NULL ? use_trust_store : NULL);
}
