/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Running a command inside a cgroup v2 folder with a time limit, for the
 * programs that load a cgroup BPF program around it (bench/rcvbuf_cap.c,
 * tests/progs/bpf_rcvbuf.c). Header-only; builds on util.h.
 */
#ifndef RCVFIX_LIB_CGROUP_H
#define RCVFIX_LIB_CGROUP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

static volatile sig_atomic_t run_timed_out __attribute__((unused));

static inline void run_on_alarm(int sig)
{
	(void)sig;
	run_timed_out = 1;
}

/*
 * Run @argv in its own process group inside the cgroup v2 folder @cgroup
 * and wait for it; after @timeout seconds kill the group. Returns the
 * command's exit status (128 + N for signal N), 124 (as timeout(1)) if it
 * was killed at the timeout. Dies with @setup_code if it cannot start it.
 */
static inline int run_in_cgroup(const char *cgroup, char **argv, int timeout,
				int setup_code)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die(setup_code, "fork: %s", strerror(errno));
	if (pid == 0) {
		char path[PATH_MAX], buf[32];
		int fd, n;

		setpgid(0, 0);
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, buf, n) != n)
			die(setup_code, "cannot join %s: %s", path,
			    strerror(errno));
		close(fd);
		execvp(argv[0], argv);
		die(127, "cannot run %s: %s", argv[0], strerror(errno));
	}
	/* No SA_RESTART (signal() sets it): the alarm must end waitpid(). */
	sigaction(SIGALRM, &(struct sigaction){ .sa_handler = run_on_alarm },
		  NULL);
	alarm(timeout);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			die(setup_code, "waitpid: %s", strerror(errno));
		if (run_timed_out) {
			fprintf(stderr,
				"%s: %s still running after %d s, killing it\n",
				prog, argv[0], timeout);
			kill(-pid, SIGKILL);
			run_timed_out = 0;
			timeout = -1;
		}
	}
	alarm(0);
	if (timeout < 0)
		return 124;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

#endif /* RCVFIX_LIB_CGROUP_H */
