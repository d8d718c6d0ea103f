// libcrypto (OpenSSL, Debian's libssl-dev): SHA-256 for --trusted-hashes.
#include <openssl/evp.h>
