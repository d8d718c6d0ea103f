#include "ccrypto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// The libcrypto ABI hubhost calls (openssl/evp.h); EVP_MD and ENGINE stay opaque.
typedef const void *(*evp_sha256_fn)(void);
typedef int (*evp_digest_fn)(const void *data, size_t count, unsigned char *md, unsigned int *size,
                             const void *type, void *engine);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static evp_sha256_fn evp_sha256;
static evp_digest_fn evp_digest;

// Loads libcrypto once; 0 with the reason in `error` when it or a function is missing.
static int load(char *error, size_t size) {
    pthread_mutex_lock(&lock);
    if (!evp_digest) {
        // The versioned name first (the run-time package); the bare name only exists with the -dev package.
        void *handle = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
        if (!handle) handle = dlopen("libcrypto.so", RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *reason = dlerror();
            snprintf(error, size, "cannot load libcrypto (Debian's libssl3): %s", reason ? reason : "not found");
            pthread_mutex_unlock(&lock);
            return 0;
        }
        evp_sha256 = (evp_sha256_fn)dlsym(handle, "EVP_sha256");
        evp_digest_fn digest = (evp_digest_fn)dlsym(handle, "EVP_Digest");
        if (!evp_sha256 || !digest) {
            snprintf(error, size, "libcrypto has no %s", evp_sha256 ? "EVP_Digest" : "EVP_sha256");
            pthread_mutex_unlock(&lock);
            return 0;
        }
        evp_digest = digest;  // last: a non-NULL evp_digest means both are set
    }
    pthread_mutex_unlock(&lock);
    return 1;
}

int hub_sha256(const void *data, size_t count, unsigned char digest[32], char *error, size_t size) {
    if (!load(error, size)) return 0;
    unsigned int length = 0;
    if (evp_digest(data, count, digest, &length, evp_sha256(), NULL) != 1 || length != 32) {
        snprintf(error, size, "EVP_Digest failed");
        return 0;
    }
    return 1;
}
