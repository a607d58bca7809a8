/* Disk servers: an nbdkit with the disk-model filter per modelled disk (disk_server.h). */
#include "disk_server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "guest/units.h"

#define HANDSHAKE_SECONDS 20 /* nbdkit loads the filter and opens the file in well under 1 s */
#define STOP_GRACE_MS	  2000
#define LOG_TAIL_BYTES	  600
#define NBD_MAGIC	  "NBDMAGIC" /* the first bytes a newstyle NBD server sends */

char *disk_server_filter_path(void)
{
	return self_file("ZBENCH_DISKMODEL", "build/zbench-diskmodel.so");
}

/* The last bytes of the server's log, on one line, into buf ("" if there is none). */
static void log_tail(const char *path, char *buf, size_t len)
{
	char raw[LOG_TAIL_BYTES + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	off_t end = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
	ssize_t n = 0;
	size_t o = 0;

	buf[0] = '\0';
	if (end > 0) {
		off_t from = end > LOG_TAIL_BYTES ? end - LOG_TAIL_BYTES : 0;

		n = pread(fd, raw, (size_t)(end - from), from);
	}
	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; i < n && o + 3 < len; i++) {
		unsigned char c = (unsigned char)raw[i];

		if (c == '\n') {
			if (o && i + 1 < n) {
				buf[o++] = ';';
				buf[o++] = ' ';
			}
		} else {
			buf[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
		}
	}
	buf[o] = '\0';
}

/* The nbdkit command line of one disk: the filter over the file plugin, the model and every
 * figure of the resolved disk (NULL-terminated, malloc'd strings). */
static char **server_argv(const struct vm_disk *vd, const json_t *d, const char *stats)
{
	const json_t *params = json_object_get(d, "model_params");
	size_t n = 0, cap = 16 + json_object_size(params);
	char **argv = xcalloc(cap, sizeof(*argv)), *so = disk_server_filter_path();
	uint64_t bytes = 0;
	const char *k;
	json_t *v;

	units_parse_size(json_string_value(json_object_get(d, "size")), &bytes);
	argv[n++] = xstrdup("nbdkit");
	argv[n++] = xstrdup("--single");
	argv[n++] = xstrdup("--exit-with-parent");
	/* the contract's: nbdkit's default of 16 threads would cut an NCQ queue of 32 to 16 */
	argv[n++] = xstrdup("--threads=64");
	argv[n++] = xasprintf("--filter=%s", so);
	argv[n++] = xstrdup("file");
	argv[n++] = xasprintf("file=%s", vd->path);
	argv[n++] = xasprintf("dm_model=%s", json_string_value(json_object_get(d, "model")));
	argv[n++] = xasprintf("dm_size=%llu", (unsigned long long)bytes);
	argv[n++] = xasprintf("dm_stats=%s", stats);
	json_object_foreach ((json_t *)params, k, v)
		argv[n++] = xasprintf("dm_%s=%.17g", k, json_number_value(v));
	argv[n] = NULL;
	free(so);
	return argv;
}

static void argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* Fork and exec nbdkit with `sock` as its stdin and stdout and its log as stderr. */
static int server_spawn(struct disk_server *s, char **argv, int sock, struct zb_error *err)
{
	int logfd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	pid_t pid;

	if (logfd < 0)
		return error_sys(err, errno, "creating '%s'", s->log);
	pid = fork();
	if (pid < 0) {
		close(logfd);
		return error_sys(err, errno, "forking nbdkit");
	}
	if (pid == 0) {
		/* its own process group: a Ctrl-C at the terminal is zbench's to handle */
		setpgid(0, 0);
		if (dup2(sock, 0) < 0 || dup2(sock, 1) < 0 || dup2(logfd, 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		dprintf(2, "zbench: cannot run nbdkit: %s (builder/install-deps.sh installs it)\n",
			strerror(errno));
		_exit(127);
	}
	close(logfd);
	s->pid = pid;
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

/* Wait until the server greets on `ours` (left unread for QEMU), or has exited. */
static int server_handshake(struct disk_server *s, int ours, struct zb_error *err)
{
	double end = now_monotonic() + HANDSHAKE_SECONDS;
	char magic[sizeof(NBD_MAGIC) - 1], tail[LOG_TAIL_BYTES + 32];
	ssize_t n = 0;

	while (now_monotonic() < end) {
		struct pollfd p = { ours, POLLIN, 0 };

		if (poll(&p, 1, 100) < 0 && errno != EINTR)
			break;
		n = recv(ours, magic, sizeof(magic), MSG_PEEK | MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(magic) || n == 0)
			break;
		if (waitpid(s->pid, &s->status, WNOHANG) == s->pid) {
			s->pid = -1;
			break;
		}
	}
	if (n == (ssize_t)sizeof(magic) && !memcmp(magic, NBD_MAGIC, sizeof(magic)))
		return 0;
	/* let it finish writing why */
	if (s->pid > 0 && n == 0)
		usleep(100 * 1000);
	log_tail(s->log, tail, sizeof(tail));
	return error_set(
	    err, EIO, "disk '%s' (model %s): nbdkit %s; its log (%s) ends: %s", s->name, s->model,
	    n == 0 || s->pid < 0 ? "exited before serving" : "did not answer within 20 s", s->log,
	    tail[0] ? tail : "(empty)");
}

static int server_start(struct disk_server *s, struct vm_disk *vd, const json_t *d, const char *dir,
			struct zb_error *err)
{
	int sv[2];
	char **argv;
	int rc;

	s->log = xasprintf("%s/%s.nbdkit.log", dir, vd->name);
	s->stats = xasprintf("%s/%s.dmstats", dir, vd->name);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return error_sys(err, errno, "socketpair for nbdkit");
	argv = server_argv(vd, d, s->stats);
	rc = server_spawn(s, argv, sv[1], err);
	argv_free(argv);
	close(sv[1]);
	if (rc == 0)
		rc = server_handshake(s, sv[0], err);
	if (rc < 0) {
		close(sv[0]);
		return -1;
	}
	vd->nbd_fd = sv[0];
	return 0;
}

int disk_servers_start(struct disk_servers *sv, struct disk_set *ds, const json_t *config,
		       const char *dir, struct zb_error *err)
{
	const json_t *disks = json_object_get(config, "disks");

	memset(sv, 0, sizeof(*sv));
	sv->s = xcalloc((size_t)ds->n + 1, sizeof(*sv->s));
	for (int i = 0; i < ds->n; i++) {
		const json_t *d = json_array_get(disks, (size_t)i);
		struct disk_server *s = &sv->s[sv->n];

		if (!disk_model_is_modelled(d) || ds->disks[i].passthrough)
			continue;
		/* copies: the record is written after the disk set and the config are gone */
		*s = (struct disk_server){ .disk = i,
					   .name = xstrdup(ds->disks[i].name),
					   .model = xstrdup(
					       json_string_value(json_object_get(d, "model"))),
					   .pid = -1,
					   .pidfd = -1 };
		sv->n++;
		if (server_start(s, &ds->disks[i], d, dir, err) < 0) {
			disk_servers_stop(sv);
			return -1;
		}
	}
	return 0;
}

int disk_servers_exited(struct disk_servers *sv)
{
	for (int i = 0; i < sv->n && !sv->stopped; i++) {
		struct disk_server *s = &sv->s[i];

		if (s->pid > 0 && waitpid(s->pid, &s->status, WNOHANG) == s->pid)
			s->pid = -1;
		if (s->pid < 0)
			return i;
	}
	return -1;
}

void disk_server_describe_exit(const struct disk_server *s, char *buf, size_t len)
{
	char how[64], tail[LOG_TAIL_BYTES + 32];

	if (WIFSIGNALED(s->status))
		snprintf(how, sizeof(how), "was killed by signal %d", WTERMSIG(s->status));
	else
		snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(s->status));
	log_tail(s->log, tail, sizeof(tail));
	snprintf(
	    buf, len,
	    "disk '%s' (model %s): its disk-model server (nbdkit) %s mid-cell; its log ends: %s",
	    s->name, s->model, how, tail[0] ? tail : "(empty)");
}

void disk_servers_mark(struct disk_servers *sv, enum disk_mark m)
{
	char why[256];

	for (int i = 0; i < sv->n; i++) {
		struct disk_server *s = &sv->s[i];

		if (!s->marked[m] && dm_stats_read(s->stats, &s->mark[m], why, sizeof(why)) == 0)
			s->marked[m] = 1;
	}
}

json_t *disk_servers_record(const struct disk_servers *sv)
{
	json_t *rec;

	if (!sv->n)
		return NULL;
	rec = json_object();
	for (int i = 0; i < sv->n; i++) {
		const struct disk_server *s = &sv->s[i];
		json_t *o;

		if (s->marked[DISK_MARK_START] && s->marked[DISK_MARK_END]) {
			struct dm_stats w;

			dm_stats_diff(&w, &s->mark[DISK_MARK_END], &s->mark[DISK_MARK_START]);
			o = dm_stats_to_json(&w);
		} else {
			o = json_object();
		}
		json_object_set_new(o, "model", json_string(s->model));
		if (s->marked[DISK_MARK_TOTAL])
			json_object_set_new(o, "total",
					    dm_stats_to_json(&s->mark[DISK_MARK_TOTAL]));
		json_object_set_new(rec, s->name, o);
	}
	return rec;
}

/* Wait up to `ms` for the server to exit; 1 if it did (reaped). */
static int server_wait(struct disk_server *s, int ms)
{
	for (int t = 0; t <= ms; t += 20) {
		if (waitpid(s->pid, &s->status, WNOHANG) == s->pid) {
			s->pid = -1;
			return 1;
		}
		usleep(20 * 1000);
	}
	return 0;
}

void disk_servers_stop(struct disk_servers *sv)
{
	disk_servers_mark(sv, DISK_MARK_TOTAL);
	sv->stopped = 1;
	for (int i = 0; i < sv->n; i++) {
		struct disk_server *s = &sv->s[i];

		if (s->pid > 0) {
			kill(s->pid, SIGTERM);
			if (!server_wait(s, STOP_GRACE_MS)) {
				kill(s->pid, SIGKILL);
				server_wait(s, STOP_GRACE_MS);
			}
		}
		if (s->pidfd >= 0)
			close(s->pidfd);
		s->pidfd = -1;
		if (s->stats)
			unlink(s->stats);
	}
}

void disk_servers_release(struct disk_servers *sv)
{
	for (int i = 0; i < sv->n; i++) {
		free(sv->s[i].log);
		free(sv->s[i].stats);
		free(sv->s[i].name);
		free(sv->s[i].model);
	}
	free(sv->s);
	memset(sv, 0, sizeof(*sv));
}

int disk_servers_reap(const char *run_dir)
{
	return vm_reap_processes(run_dir, "nbdkit");
}
