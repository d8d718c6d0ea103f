// SHA-256 from libcrypto (OpenSSL 3, Debian's libssl3), loaded on first use rather than linked.
//
// Why: libcrypto has about 21,000 relocations. Linked, the dynamic loader processes them in every hubhost
// process (2–3 ms of each start) though only `--trusted-hashes` uses it. Loaded on first use, it costs a start-up
// only to the runs that check digests. No development headers are needed: the two functions are declared here.
#ifndef HUB_CCRYPTO_H
#define HUB_CCRYPTO_H

#include <stddef.h>

/// Writes the SHA-256 digest of `count` bytes at `data` into `digest` and returns 1; returns 0 with the reason in
/// `error` (NUL-terminated, at most `size` bytes) when libcrypto cannot be loaded or the digest fails.
/// Thread-safe.
int hub_sha256(const void *data, size_t count, unsigned char digest[32], char *error, size_t size);

#endif
