/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rcvfix-bench's pieces and what they share: its configuration (filled by
 * the command line, rcvfix-bench.c), the wire protocol (bench-wire.c),
 * socket options (bench-sockopt.c), the transfer loops (bench-xfer.c), the
 * two roles' connections (bench-conn.c) and the reports (bench-report.c).
 */
#ifndef RCVFIX_BENCH_H
#define RCVFIX_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/sock.h"
#include "lib/util.h"

/* Exit codes, documented in --help. */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,
	EXIT_FAIL = 2,
	EXIT_TIMEOUT = 3,
};

/* Where --rcvbuf is applied. */
enum where { ON_NONE, ON_LISTENER, ON_ACCEPTED, ON_CLIENT };

/* Client options the server needs, sent in the hello (u64, big endian). */
enum hello_field {
	H_FLAGS, /* bit 0: reverse, the server sends; bit 1: TCP_NODELAY;
		  * bit 2: --verify */
	H_DURATION_US,
	H_BYTES,
	H_RATE_BPS,
	H_WRITE_SIZE,
	H_RCVLOWAT, /* 0: the server's own */
	H_RCVBUF_ACCEPTED, /* 0: the server's own */
	H_N
};

/* The receiver's measurements, sent back to the sender. -1: unknown. */
enum rx_field {
	RX_BYTES,
	RX_USEC,
	RX_RCV_WSCALE, /* the receiver's announced shift */
	RX_SND_WSCALE, /* the sender's announced shift */
	RX_WSCALE_OK, /* both sides agreed on window scaling */
	RX_RCVBUF_REQ, /* --rcvbuf value on the receiving side, 0 if none */
	RX_RCVBUF_ON, /* enum where */
	RX_RCVBUF_START,
	RX_RCVBUF_END,
	RX_BUF_LOCK, /* SO_BUF_LOCK bits at the end, -1 if unsupported */
	RX_RCVLOWAT, /* requested */
	RX_RCVLOWAT_EFF, /* SO_RCVLOWAT read back */
	RX_WAKEUPS, /* poll() returns with data */
	RX_READS,
	RX_NVCSW,
	RX_NIVCSW,
	RX_UTIME_US,
	RX_STIME_US,
	RX_RCV_RTT_US,
	RX_RCV_SPACE,
	RX_N
};

/* The sender's own view. */
enum tx_field {
	TX_BYTES,
	TX_USEC,
	TX_SND_WSCALE, /* tcpi_snd_wscale on the sending socket */
	TX_RCV_WSCALE,
	TX_RTT_US,
	TX_RETRANS,
	TX_SNDBUF_END,
	TX_RATE_BPS,
	TX_WRITE_SIZE,
	TX_N
};

struct cfg {
	bool server;
	const char *host;
	const char *bind;
	int port;
	long long rcvbuf;
	enum where rcvbuf_on;
	long long rcvlowat;
	double seconds;
	long long bytes;
	long long rate;
	long long write_size;
	long long read_size;
	bool reverse;
	bool once;
	bool json;
	bool csv;
	bool quiet;
	bool nodelay;
	bool verify;
	double timeout;
	double wait;
};

/* Set by the command line (rcvfix-bench.c) before anything else runs. */
extern struct cfg cfg;

/* bench-wire.c: the hello, the results, and the bytes under them */
extern const char hello_magic[8];
extern const char result_magic[8];
int io_all(int fd, void *buf, size_t len, bool out);
int send_block(int fd, const char *magic, const int64_t *v, size_t n);
int recv_block(int fd, const char *magic, int64_t *v, size_t n);
const char *io_error(int err);
int exit_for(int err);

/* bench-sockopt.c */
int get_int(int fd, int level, int opt);
int set_int(int fd, int level, int opt, long long v, const char *name);
void set_timeouts(int fd);
int set_blocking(int fd, bool blocking);
int apply_rcvbuf(int fd, enum where here);

/* bench-xfer.c: one end's transfer, h the client's hello */
int run_receiver(int fd, const int64_t *h, int64_t *rx);
int run_sender(int fd, const int64_t *h, int64_t *rx, int64_t *tx);

/* bench-report.c: the human lines, JSON and CSV of one connection */
void report(const char *role, const char *receiver, const int64_t *rx,
	    const int64_t *tx);

/* bench-conn.c: the two roles */
int run_server(void);
int run_client(void);

#endif /* RCVFIX_BENCH_H */
