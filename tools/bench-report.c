// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix-bench's reports of one connection: the figures both ends know as
 * named fields, printed as tcp_mmap-style human lines, as one JSON object
 * or as a CSV row (header once), strings through tools/lib/strout.h.
 */
#include <stdio.h>

#include "lib/strout.h"
#include "rcvfix-bench.h"

static const double mb = 1048576.0; /* "MB" in every per-MB figure */
static const char *const where_name[] = { "none", "listener", "accepted",
					  "client" };

enum ftype { F_INT, F_DBL, F_STR };

struct field {
	const char *name;
	enum ftype type;
	bool known;
	long long i;
	double d;
	const char *s;
};

#define MAX_FIELDS 48

struct report {
	struct field f[MAX_FIELDS];
	size_t n;
};

static void add_int(struct report *r, const char *name, long long v, bool known)
{
	r->f[r->n++] = (struct field){ name, F_INT, known, v, 0, NULL };
}

static void add_dbl(struct report *r, const char *name, double v, bool known)
{
	r->f[r->n++] = (struct field){ name, F_DBL, known, 0, v, NULL };
}

static void add_str(struct report *r, const char *name, const char *v)
{
	r->f[r->n++] = (struct field){ name, F_STR, v != NULL, 0, 0, v };
}

/* rx and tx hold -1 for what this end does not know. */
static void build_report(struct report *r, const char *role,
			 const char *receiver, const int64_t *rx,
			 const int64_t *tx)
{
	bool rk = rx[RX_BYTES] >= 0, tk = tx[TX_BYTES] >= 0;
	double secs = rx[RX_USEC] / 1e6, mbytes = rx[RX_BYTES] / mb;
	long long cpu = rx[RX_UTIME_US] + rx[RX_STIME_US];
	int on = rx[RX_RCVBUF_ON] >= 0 && rx[RX_RCVBUF_ON] <= ON_CLIENT ?
			 (int)rx[RX_RCVBUF_ON] :
			 ON_NONE;

	r->n = 0;
	add_str(r, "role", role);
	add_str(r, "receiver", receiver);
	add_int(r, "bytes", rx[RX_BYTES], rk);
	add_dbl(r, "seconds", secs, rk);
	add_dbl(r, "gbit_s",
		rx[RX_USEC] > 0 ? rx[RX_BYTES] * 8e-3 / rx[RX_USEC] : 0, rk);
	add_int(r, "rcv_wscale", rx[RX_RCV_WSCALE], rx[RX_RCV_WSCALE] >= 0);
	add_int(r, "snd_wscale", rx[RX_SND_WSCALE], rx[RX_SND_WSCALE] >= 0);
	add_int(r, "wscale_ok", rx[RX_WSCALE_OK], rx[RX_WSCALE_OK] >= 0);
	add_int(r, "rcvbuf_req", rx[RX_RCVBUF_REQ], rx[RX_RCVBUF_REQ] >= 0);
	add_str(r, "rcvbuf_on", rk ? where_name[on] : NULL);
	add_int(r, "rcvbuf_start", rx[RX_RCVBUF_START],
		rx[RX_RCVBUF_START] >= 0);
	add_int(r, "rcvbuf_end", rx[RX_RCVBUF_END], rx[RX_RCVBUF_END] >= 0);
	add_int(r, "rcvbuf_locked", !!(rx[RX_BUF_LOCK] & BUF_LOCK_RCV),
		rx[RX_BUF_LOCK] >= 0);
	add_int(r, "buf_lock", rx[RX_BUF_LOCK], rx[RX_BUF_LOCK] >= 0);
	add_int(r, "rcvlowat", rx[RX_RCVLOWAT] > 0 ? rx[RX_RCVLOWAT] : 0, rk);
	add_int(r, "rcvlowat_eff", rx[RX_RCVLOWAT_EFF],
		rx[RX_RCVLOWAT_EFF] >= 0);
	add_int(r, "wakeups", rx[RX_WAKEUPS], rk);
	add_dbl(r, "wakeups_per_mb", mbytes > 0 ? rx[RX_WAKEUPS] / mbytes : 0,
		rk);
	add_int(r, "reads", rx[RX_READS], rk);
	add_int(r, "nvcsw", rx[RX_NVCSW], rk);
	add_int(r, "nivcsw", rx[RX_NIVCSW], rk);
	add_dbl(r, "csw_per_mb", mbytes > 0 ? rx[RX_NVCSW] / mbytes : 0, rk);
	add_dbl(r, "user_s", rx[RX_UTIME_US] / 1e6, rk);
	add_dbl(r, "sys_s", rx[RX_STIME_US] / 1e6, rk);
	add_int(r, "cpu_usec", cpu, rk);
	add_dbl(r, "cpu_usec_per_mb", mbytes > 0 ? cpu / mbytes : 0, rk);
	add_int(r, "rcv_rtt_us", rx[RX_RCV_RTT_US], rx[RX_RCV_RTT_US] >= 0);
	add_int(r, "rcv_space", rx[RX_RCV_SPACE], rx[RX_RCV_SPACE] >= 0);
	add_int(r, "sent_bytes", tx[TX_BYTES], tk);
	add_dbl(r, "send_seconds", tx[TX_USEC] / 1e6, tk);
	add_int(r, "sender_snd_wscale", tx[TX_SND_WSCALE],
		tx[TX_SND_WSCALE] >= 0);
	add_int(r, "sender_rcv_wscale", tx[TX_RCV_WSCALE],
		tx[TX_RCV_WSCALE] >= 0);
	add_int(r, "rtt_us", tx[TX_RTT_US], tx[TX_RTT_US] >= 0);
	add_int(r, "retrans", tx[TX_RETRANS], tx[TX_RETRANS] >= 0);
	add_int(r, "sndbuf_end", tx[TX_SNDBUF_END], tx[TX_SNDBUF_END] >= 0);
	add_int(r, "rate_bps", tx[TX_RATE_BPS], tx[TX_RATE_BPS] >= 0);
	add_int(r, "write_size", tx[TX_WRITE_SIZE], tx[TX_WRITE_SIZE] >= 0);
}

static void print_value(FILE *f, const struct field *x, bool json)
{
	if (!x->known) {
		fputs(json ? "null" : "", f);
		return;
	}
	switch (x->type) {
	case F_INT:
		fprintf(f, "%lld", x->i);
		break;
	case F_DBL:
		fprintf(f, "%.6g", x->d);
		break;
	case F_STR:
		if (json)
			json_write_str(f, x->s);
		else
			csv_write_str(f, x->s);
		break;
	}
}

static void print_machine(const struct report *r)
{
	static bool csv_header_done;
	size_t i;

	if (cfg.json) {
		putchar('{');
		for (i = 0; i < r->n; i++) {
			printf("%s\"%s\":", i ? "," : "", r->f[i].name);
			print_value(stdout, &r->f[i], true);
		}
		printf("}\n");
	}
	if (cfg.csv) {
		if (!csv_header_done) {
			for (i = 0; i < r->n; i++)
				printf("%s%s", i ? "," : "", r->f[i].name);
			putchar('\n');
			csv_header_done = true;
		}
		for (i = 0; i < r->n; i++) {
			if (i)
				putchar(',');
			print_value(stdout, &r->f[i], false);
		}
		putchar('\n');
	}
	fflush(stdout);
}

/* tcp_mmap's two lines, extended with what rcvfix is about. */
static void print_human(const int64_t *rx, const int64_t *tx)
{
	FILE *f = cfg.json || cfg.csv ? stderr : stdout;
	double mbytes = rx[RX_BYTES] / mb, secs = rx[RX_USEC] / 1e6;
	char lowat[64] = "not set";

	if (cfg.quiet)
		return;
	if (rx[RX_BYTES] >= 0) {
		if (rx[RX_RCVLOWAT] > 0)
			snprintf(lowat, sizeof(lowat), "%lld (effective %lld)",
				 (long long)rx[RX_RCVLOWAT],
				 (long long)rx[RX_RCVLOWAT_EFF]);
		fprintf(f,
			"received %.6g MB in %.6g s, %.6g Gbit/s; window scale: receiver %lld, sender %lld\n"
			"  rcvbuf %lld -> %lld%s, SO_RCVBUF request %lld on %s, rcvlowat %s\n"
			"  cpu usage user:%.6g sys:%.6g, %.6g usec per MB, %lld c-switches (%.4g per MB), %lld wakeups\n",
			mbytes, secs,
			secs > 0 ? rx[RX_BYTES] * 8 / secs / 1e9 : 0.0,
			(long long)rx[RX_RCV_WSCALE],
			(long long)rx[RX_SND_WSCALE],
			(long long)rx[RX_RCVBUF_START],
			(long long)rx[RX_RCVBUF_END],
			rx[RX_BUF_LOCK] < 0	       ? " (lock unknown)" :
			rx[RX_BUF_LOCK] & BUF_LOCK_RCV ? " (locked)" :
							 " (not locked)",
			(long long)rx[RX_RCVBUF_REQ],
			rx[RX_RCVBUF_REQ] > 0 ?
				where_name[rx[RX_RCVBUF_ON] & 3] :
				"none",
			lowat, rx[RX_UTIME_US] / 1e6, rx[RX_STIME_US] / 1e6,
			mbytes > 0 ?
				(rx[RX_UTIME_US] + rx[RX_STIME_US]) / mbytes :
				0.0,
			(long long)rx[RX_NVCSW],
			mbytes > 0 ? rx[RX_NVCSW] / mbytes : 0.0,
			(long long)rx[RX_WAKEUPS]);
	}
	if (tx[TX_BYTES] >= 0)
		fprintf(f,
			"  sent %lld bytes in %.6g s%s, rtt %.6g ms, %lld retransmits, sndbuf %lld\n",
			(long long)tx[TX_BYTES], tx[TX_USEC] / 1e6,
			tx[TX_RATE_BPS] > 0 ? " rate-limited" : "",
			tx[TX_RTT_US] / 1e3, (long long)tx[TX_RETRANS],
			(long long)tx[TX_SNDBUF_END]);
	fflush(f);
}

void report(const char *role, const char *receiver, const int64_t *rx,
	    const int64_t *tx)
{
	struct report r;

	build_report(&r, role, receiver, rx, tx);
	print_human(rx, tx);
	if (cfg.json || cfg.csv)
		print_machine(&r);
}
