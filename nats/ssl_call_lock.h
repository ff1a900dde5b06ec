// Serialised use of one OpenSSL connection from several threads.
//
// OpenSSL allows an `SSL` object to be used by one thread at a time only. nats.c releases
// without the fix below (Debian 12 ships 3.4.1) break that rule on TLS connections: the
// reader thread calls SSL_read while the flusher thread, or a publishing thread, calls
// SSL_write on the same object, with no lock in common. The nats.c project fixed it by
// holding a per-connection mutex around SSL_read, SSL_write and the SSL_get_error that
// follows them (nats-io/nats.c pull request 913, September 2025); the packaged library has
// no such lock, and ThreadSanitizer reports the race inside libssl.
//
// This unit adds the same lock from outside: every binary that links agentckpt_common and
// calls SslCallsAreSerialized() defines SSL_read, SSL_write, SSL_read_ex, SSL_write_ex and
// SSL_get_error itself. The dynamic linker binds the calls that libnats (and libcpprest)
// make to these definitions, which take a lock chosen by the SSL object's address, call
// libssl's function (found with dlsym(RTLD_NEXT)) and, for a failed read or write, record
// SSL_get_error's answer under the same lock, so the SSL_get_error call the caller makes next
// returns what the object said at that moment.
//
// No lock is held while a call waits for the network. nats.c 3.4 leaves its TLS socket in
// blocking mode, so a reader blocked in SSL_read would otherwise keep every writer out. On a
// blocking socket the wrapper switches the socket to non-blocking for the duration of the
// libssl call (under the lock, so no other call on it sees the switch), and waits with poll()
// outside the lock when libssl wants to read or write, then calls again: the caller still
// sees a blocking call. Non-blocking sockets and memory BIOs (cpprestsdk's Asio engine) get
// one call under the lock, and the want-read/want-write answer is theirs to handle.
//
// The locks are striped (a fixed table, no state per object), so an SSL object freed and a
// new one at the same address need nothing.
#pragma once

namespace agentckpt {

// True if the SSL_read/SSL_write/SSL_get_error that the process resolves are the serialising
// ones above, i.e. libnats' calls go through the lock. Calling it also makes sure the linker
// keeps this unit in the binary. Thread-safe; never fails (false means the binary was linked
// without exporting the definitions, which the build does not do).
bool SslCallsAreSerialized();

}  // namespace agentckpt
