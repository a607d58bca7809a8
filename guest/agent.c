/* zbench-agent: PID 1 of the guest appliance.
 *
 * It brings the minimal system up, talks to the host over the virtio-serial port
 * "org.zbench.0" (docs/protocol.md), builds exactly the pool the job asks for, reports what the
 * guest really has, runs the workload engine, sends the result and powers off.
 *
 * The setup is a tagged list of steps run in order by one loop (agent_steps[] below). Every
 * failure becomes an "error" message to the host naming the step, then a deliberate power off:
 * if PID 1 exits the kernel panics, which the host would misread as a kernel bug.
 *
 * With --service it runs as a systemd service instead (the cloud flavor, docs/images.md): the
 * steps that bring a bare system up (marked pid1_only) are systemd's job there and are skipped;
 * the port is found through udev's /dev/virtio-ports link; the rest, and the power off at the
 * end or on failure, are the same.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "telemetry.h"
#include "units.h"

#define AGENT_VERSION  "0.1.0"
#define CMD_OUTPUT_MAX (64 * 1024)
#define HEARTBEAT_SEC  2
#define ENGINE_PATH    "/bin/zbench-engine"
#define RESULT_PATH    "/tmp/zbench-result.json"
#define TELEMETRY_SEC  1

/* Fault injection for zbench's own tests (docs/protocol.md): `zbench.fault=NAME` on the kernel
 * command line, set through the matrix's vm.kernel_args. Each makes the guest fail the way a
 * real one can, so the host's deadlines and classification are tested against the real thing. */
enum fault {
	FAULT_NONE,
	FAULT_SILENT, /* the agent never opens the port: the host must see boot-fail */
	FAULT_PANIC,  /* the kernel crashes (sysrq c) as the workload starts: panic */
	FAULT_STALL,  /* the engine is stopped (SIGSTOP) after its first sample: timeout */
};

struct agent {
	int port;		 /* virtio-serial port, O_RDWR, blocking */
	pthread_mutex_t tx_lock; /* one writer at a time on the port */
	const char *step;	 /* the step running now, for heartbeats and errors */
	json_t *job;		 /* the job the host sent (owned) */
	char target_path[512];	 /* what the workload runs against: a directory or a zvol */
	int target_is_dev;
	json_t *disk_devs; /* disk name -> kernel device name ("d0" -> "sdb"), from step disks */
	json_t *disk_info; /* what the guest sees of each disk, for the report */
	enum fault fault;
	int service; /* --service: a systemd unit on a full system, not PID 1 */
};

static struct agent agent = { .port = -1, .tx_lock = PTHREAD_MUTEX_INITIALIZER };

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Console log: everything the agent does goes to the serial console too, so the host's console
 * log holds the evidence even when the port is dead. */
static void logf_console(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_console(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "zbench-agent: [%.3f] ", mono_now());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	/* Not reached unless reboot() failed; PID 1 must not exit. */
	for (;;)
		pause();
}

/* Send one message (steals `msg`). Adds "v", "t" (guest monotonic seconds). */
static int send_msg(json_t *msg)
{
	char *text;
	int rc = -1;

	json_object_set_new(msg, "v", json_integer(1));
	json_object_set_new(msg, "t", json_real(mono_now()));
	text = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (!text)
		return -1;
	pthread_mutex_lock(&agent.tx_lock);
	if (agent.port >= 0)
		rc = proto_write_frame(agent.port, text, strlen(text));
	pthread_mutex_unlock(&agent.tx_lock);
	free(text);
	return rc;
}

/* ZFS's kernel debug log says what the ioctl behind a failing zpool/zfs command tripped on (a
 * vdev's "open error=2 timeout=..." behind "no such pool or dataset"): its last lines go to the
 * console when a step fails after the module is loaded, before the failure itself. */
static void zfs_dbgmsg_to_console(void)
{
	char buf[8192], *line, *save = NULL;
	size_t len = 0, keep = 1536; /* the tail kept: about 15 lines */
	ssize_t n;
	int fd = open("/proc/spl/kstat/zfs/dbgmsg", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += (size_t)n;
		if (len > keep) { /* keep only the tail, from a line start */
			char *nl = memchr(buf + len - keep, '\n', keep);
			size_t from = nl ? (size_t)(nl + 1 - buf) : len - keep;

			memmove(buf, buf + from, len - from);
			len -= from;
		}
	}
	close(fd);
	buf[len] = '\0';
	if (!len)
		return;
	fprintf(stderr, "zbench-agent: ZFS debug log (last lines):\n");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "  %s\n", line);
}

/* Report a failure of the current step and power off. `output` is a command's output or NULL. */
static void fail_step(const char *output, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
static void fail_step(const char *output, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	zfs_dbgmsg_to_console(); /* first: the host's console_tail keeps the last 4 KiB */
	logf_console("step '%s' failed: %s", agent.step, msg);
	if (output && *output)
		fprintf(stderr, "%s\n", output);
	send_msg(json_pack("{s:s, s:s, s:s, s:s?}", "type", "error", "step", agent.step, "message",
			   msg, "output", output));
	power_off();
	__builtin_unreachable();
}

static void *heartbeat_main(void *arg)
{
	for (;;) {
		sleep(HEARTBEAT_SEC);
		send_msg(json_pack("{s:s, s:s}", "type", "heartbeat", "step", agent.step));
	}
	return NULL;
}

/* Run argv, capturing stdout+stderr (bounded) into *out (caller frees). Returns the exit status,
 * or -1 if it could not run or died of a signal. */
static int run_cmd(char *const argv[], char **out)
{
	char *buf = malloc(CMD_OUTPUT_MAX + 1);
	size_t n = 0;
	int fds[2], status;
	pid_t pid;
	ssize_t r;

	if (!buf)
		return -1;
	if (pipe(fds) < 0) {
		free(buf);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		free(buf);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		char sink[4096];

		if (n < CMD_OUTPUT_MAX)
			r = read(fds[0], buf + n, CMD_OUTPUT_MAX - n);
		else
			r = read(fds[0], sink, sizeof(sink));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (n < CMD_OUTPUT_MAX)
			n += (size_t)r;
	}
	close(fds[0]);
	buf[n] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (out)
		*out = buf;
	else
		free(buf);
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The last non-empty line of a command's output, at most 300 bytes (static buffer). */
static const char *last_line(const char *out)
{
	static char line[300];
	const char *end = out + strlen(out), *start;

	while (end > out && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > out && start[-1] != '\n')
		start--;
	snprintf(line, sizeof(line), "%.*s", (int)(end - start), start);
	return line;
}

/* Run argv and fail the step with its output unless it exits 0. */
static char *must_run(char *const argv[])
{
	char *out = NULL;
	int rc = run_cmd(argv, &out);

	if (rc != 0) {
		char cmd[512] = "";

		for (int i = 0; argv[i] && strlen(cmd) < sizeof(cmd) - 64; i++) {
			if (i)
				strcat(cmd, " ");
			strncat(cmd, argv[i], sizeof(cmd) - strlen(cmd) - 2);
		}
		/* The last line of a failing zpool/zfs command names the culprit ("cannot create
		 * 'tank': feature 'blake3' unsupported by kernel"): put it in the message. */
		fail_step(out, "'%s' exited with status %d%s%s", cmd, rc, out ? ": " : "",
			  out ? last_line(out) : "");
	}
	return out;
}

/* A command started now and waited for later, its stdout+stderr in a file under /run (tmpfs):
 * how the agent overlaps slow steps (loading zfs.ko, udev's coldplug) with the rest. */
struct bg_cmd {
	pid_t pid; /* 0: not started */
	char log[64];
	char what[256]; /* the command line, for messages */
};

static void bg_start(struct bg_cmd *c, char *const argv[], const char *log)
{
	int fd;

	snprintf(c->log, sizeof(c->log), "%s", log);
	c->what[0] = '\0';
	for (int i = 0; argv[i] && strlen(c->what) < sizeof(c->what) - 64; i++) {
		if (i)
			strcat(c->what, " ");
		strncat(c->what, argv[i], sizeof(c->what) - strlen(c->what) - 2);
	}
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail_step(NULL, "creating '%s': %s", log, strerror(errno));
	c->pid = fork();
	if (c->pid < 0)
		fail_step(NULL, "fork: %s", strerror(errno));
	if (c->pid == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd);
}

/* Wait for a command from bg_start(); its output (bounded, caller frees), or the step fails
 * with it unless the command exited 0. */
static char *bg_wait(struct bg_cmd *c)
{
	char *out = calloc(1, CMD_OUTPUT_MAX + 1);
	int status = 0, fd;
	ssize_t n = 0;

	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	c->pid = 0;
	if (!out)
		fail_step(NULL, "'%s': out of memory", c->what);
	fd = open(c->log, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, out, CMD_OUTPUT_MAX);
		out[n > 0 ? n : 0] = '\0';
	}
	if (fd >= 0)
		close(fd);
	unlink(c->log);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_step(out, "'%s' %s %d%s%s", c->what,
			  WIFEXITED(status) ? "exited with status" : "was killed by signal",
			  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
			  *out ? ": " : "", last_line(out));
	return out;
}

static struct bg_cmd zfs_preload;  /* `modprobe zfs` from boot, if the host asked for it */
static struct bg_cmd udev_trigger; /* udev's coldplug trigger, from boot */

/* A growable argv. */
struct argv_buf {
	char *v[512];
	int n;
};

static void argv_add(struct argv_buf *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void argv_add(struct argv_buf *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (a->n >= (int)(sizeof(a->v) / sizeof(a->v[0])) - 1)
		fail_step(NULL, "command line too long");
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fail_step(NULL, "out of memory");
	va_end(ap);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static void argv_free(struct argv_buf *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
}

/* A JSON scalar as the string a command line wants ("4k", "12", "on"). */
static const char *scalar_str(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_true(v))
		snprintf(buf, len, "1");
	else if (json_is_false(v))
		snprintf(buf, len, "0");
	else if (json_is_real(v))
		snprintf(buf, len, "%g", json_real_value(v));
	else
		snprintf(buf, len, "?");
	return buf;
}

static char *read_small(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strdup(buf);
}

/* ---- steps --------------------------------------------------------------------------------- */

static void read_faults(void)
{
	static const struct {
		const char *arg;
		enum fault f;
	} faults[] = {
		{ "zbench.fault=silent", FAULT_SILENT },
		{ "zbench.fault=panic", FAULT_PANIC },
		{ "zbench.fault=stall", FAULT_STALL },
	};
	char *cmdline = read_small("/proc/cmdline");

	for (size_t i = 0; cmdline && i < sizeof(faults) / sizeof(faults[0]); i++) {
		if (strstr(cmdline, faults[i].arg))
			agent.fault = faults[i].f;
	}
	free(cmdline);
	if (agent.fault == FAULT_SILENT) {
		/* Say nothing anywhere, ever. */
		for (;;)
			pause();
	}
}

static void step_mounts(void)
{
	static const struct {
		const char *src, *dst, *type;
		unsigned long flags;
	} mounts[] = {
		{ "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC },
		{ "sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC },
		{ "devtmpfs", "/dev", "devtmpfs", MS_NOSUID },
		{ "tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV },
		{ "tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV },
	};

	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		mkdir(mounts[i].dst, 0755);
		if (mount(mounts[i].src, mounts[i].dst, mounts[i].type, mounts[i].flags, NULL) <
			0 &&
		    errno != EBUSY)
			fail_step(NULL, "mounting %s on %s: %s", mounts[i].type, mounts[i].dst,
				  strerror(errno));
	}
	mkdir("/dev/pts", 0755);
	mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, NULL);
	mkdir("/dev/shm", 01777);
	mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, NULL);
	mkdir("/run/udev", 0755);
	mkdir("/etc", 0755);
	mkdir("/etc/zfs", 0755); /* zpool.cache */
	symlink("/proc/self/mounts", "/etc/mtab");
	read_faults();
}

/* The host puts the job's module parameters on the kernel command line as MODULE.PARAM=VALUE
 * (kmod's modprobe applies them when it loads MODULE) and adds zbench.preload=zfs, so zfs.ko,
 * the slowest thing the agent waits for, loads while the rest boots, the host answers hello and
 * udev's coldplug runs; step_zfs_module waits for it and checks the parameters against the job.
 * It starts after the virtio modules, not before: started first, it held the virtio modprobe
 * (and so the port and hello) back for most of its own load, and a busy host then missed the
 * boot deadline, which is about the guest reaching the port (docs/performance.md). */
static void start_zfs_preload(void)
{
	static char *const argv[] = { "/sbin/modprobe", "zfs", NULL };
	char *cmdline = read_small("/proc/cmdline");

	if (cmdline && strstr(cmdline, "zbench.preload=zfs")) {
		logf_console("loading zfs in the background (parameters from the command line)");
		bg_start(&zfs_preload, argv, "/run/zbench-preload.log");
	}
	free(cmdline);
}

static void step_base_modules(void)
{
	/* modprobe resolves dependencies (virtio_ring, virtio, virtio_pci_modern_dev, ...) from
	 * modules.dep. A module that is built in or absent for a bus is not an error here: the
	 * disks the job needs are checked when the pool is created. */
	static char *const argv[] = {
		"/sbin/modprobe", "-a",		 "-q",	   "virtio_pci", "virtio_console",
		"virtio_blk",	  "virtio_scsi", "sd_mod", NULL
	};
	char *out = NULL;

	if (run_cmd(argv, &out) != 0)
		logf_console("modprobe of virtio modules reported: %s", out ? out : "");
	start_zfs_preload();
	free(out);
}

/* Find /dev/vportNpM whose /sys/class/virtio-ports/vportNpM/name is the zbench port (udev's
 * /dev/virtio-ports/NAME link first, where there is a udev). */
static void step_port(void)
{
	double deadline = mono_now() + 30;

	while (mono_now() < deadline) {
		DIR *d;
		struct dirent *de;

		agent.port = open("/dev/virtio-ports/" PROTO_PORT_NAME, O_RDWR | O_CLOEXEC);
		if (agent.port >= 0)
			return;
		d = opendir("/sys/class/virtio-ports");

		while (d && (de = readdir(d))) {
			char path[300], name[64] = "";
			FILE *f;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", de->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (!fgets(name, sizeof(name), f))
				name[0] = '\0';
			fclose(f);
			name[strcspn(name, "\n")] = '\0';
			if (strcmp(name, PROTO_PORT_NAME))
				continue;
			snprintf(path, sizeof(path), "/dev/%s", de->d_name);
			agent.port = open(path, O_RDWR | O_CLOEXEC);
			if (agent.port >= 0) {
				closedir(d);
				return;
			}
		}
		if (d)
			closedir(d);
		usleep(50 * 1000);
	}
	/* No port: nobody to tell. The console says why; the host sees boot-fail or timeout. */
	fail_step(NULL, "virtio-serial port '%s' not found", PROTO_PORT_NAME);
}

static void step_hello(void)
{
	struct utsname u;

	uname(&u);
	send_msg(json_pack("{s:s, s:s, s:i, s:s, s:s}", "type", "hello", "agent", AGENT_VERSION,
			   "proto", 1, "kernel", u.release, "machine", u.machine));
}

static int job_frame(void *arg, const char *payload, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(payload, len, JSON_REJECT_DUPLICATES, &jerr);
	const char *type;

	if (!msg)
		fail_step(NULL, "job message is not JSON: %s", jerr.text);
	type = json_string_value(json_object_get(msg, "type"));
	if (!type || strcmp(type, "job"))
		fail_step(NULL, "expected a 'job' message, got '%s'", type ? type : "(none)");
	agent.job = msg;
	return 0;
}

/* After the job, the host may send control messages: "dump" asks for the blocked tasks' stacks
 * on the console (the host sends it when a deadline is missed, before it stops the VM). */
static int control_frame(void *arg, const char *payload, size_t len)
{
	json_t *msg = json_loadb(payload, len, 0, NULL);
	const char *type = json_string_value(json_object_get(msg, "type"));

	if (type && !strcmp(type, "dump")) {
		int fd = open("/proc/sys/kernel/printk", O_WRONLY);

		/* sysrq output is printed at the console's level: raise it so it is seen */
		if (fd >= 0) {
			if (write(fd, "7", 1) < 0)
				logf_console("raising the console log level: %s", strerror(errno));
			close(fd);
		}
		logf_console("host asked for a stack dump (step '%s')", agent.step);
		fd = open("/proc/sysrq-trigger", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "w", 1) < 0)
				logf_console("sysrq: %s", strerror(errno));
			close(fd);
		}
	}
	json_decref(msg);
	return 0;
}

static void *control_main(void *arg)
{
	struct proto_decoder dec;
	char buf[4096];

	proto_decoder_init(&dec, 64 * 1024);
	for (;;) {
		ssize_t r = read(agent.port, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			usleep(100 * 1000);
			continue;
		}
		if (proto_decoder_feed(&dec, buf, (size_t)r, control_frame, NULL) < 0) {
			logf_console("bad control frame from the host: %s", dec.err);
			break;
		}
	}
	proto_decoder_release(&dec);
	return NULL;
}

static void step_job(void)
{
	struct proto_decoder dec;
	char buf[4096];
	double deadline = mono_now() + 120;

	proto_decoder_init(&dec, PROTO_MAX_PAYLOAD);
	while (!agent.job) {
		struct pollfd pfd = { .fd = agent.port, .events = POLLIN };
		int left = (int)((deadline - mono_now()) * 1000);
		ssize_t r;

		if (left <= 0)
			fail_step(NULL, "no job from the host within 120 s");
		if (poll(&pfd, 1, left) <= 0)
			continue;
		r = read(agent.port, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail_step(NULL, "reading the port: %s", strerror(errno));
		if (r == 0) { /* host not connected yet: virtio-serial reports EOF; wait */
			usleep(20 * 1000);
			continue;
		}
		if (proto_decoder_feed(&dec, buf, (size_t)r, job_frame, NULL) < 0)
			fail_step(NULL, "bad frame from the host: %s", dec.err);
	}
	proto_decoder_release(&dec);
}

/* No inotify watch on block devices (60-block.rules sets one). With it, zpool create's closing of
 * each disk it has just labelled makes udevd re-read the partition table a second time; udevd,
 * seconds behind the kernel under TCG, then removes the disk's by-id "-part1" link after zpool
 * saw it and waited, and the kernel's 1 s open of the vdev fails: "cannot create 'tank': no such
 * pool or dataset" (docs/disks.md, "Partition links and udev's watch"). */
static const char udev_nowatch_rule[] =
    "# zbench agent: no inotify watch on block devices (docs/disks.md)\n"
    "ACTION!=\"remove\", SUBSYSTEM==\"block\", OPTIONS+=\"nowatch\"\n";

static void write_nowatch_rule(void)
{
	const char *rule = "/run/udev/rules.d/99-zbench-nowatch.rules";
	size_t len = strlen(udev_nowatch_rule);
	int fd;

	mkdir("/run/udev", 0755);
	mkdir("/run/udev/rules.d", 0755);
	fd = open(rule, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, udev_nowatch_rule, len) != (ssize_t)len)
		fail_step(NULL, "writing '%s': %s", rule, strerror(errno));
	close(fd);
}

/* udevd starts before the host is even asked for the job, so the coldplug events are processed
 * while the guest waits for the job and loads ZFS (docs/performance.md); the trigger runs in the
 * background too, and step_udev waits for it, then for the queue to drain before the disks are
 * used. */
static void step_udevd(void)
{
	static char *const udevd[] = { "/lib/systemd/systemd-udevd", "--daemon", NULL };
	/* Only what the pool needs: block devices (the by-id links the job's guest_path names) and
	 * PCI devices (their modalias loads the drivers the agent does not: nvme, ahci, xhci...;
	 * the disks behind them then appear as live events). The other subsystems (ttys, memory
	 * blocks, input, ...) serve nothing here, and their events cost seconds under TCG
	 * (docs/performance.md). */
	static char *const trigger[] = { "/bin/udevadm",	  "trigger",
					 "--action=add",	  "--subsystem-match=block",
					 "--subsystem-match=pci", NULL };

	write_nowatch_rule();
	free(must_run(udevd));
	bg_start(&udev_trigger, trigger, "/run/zbench-trigger.log");
}

static void step_udev(void)
{
	static char *const settle[] = { "/bin/udevadm", "settle", "--timeout=60", NULL };
	/* --service: systemd's udevd processed the disks at boot, with 60-block.rules' watch; the
	 * rule is loaded now and a change event on every block device drops the watches. */
	static char *const reload[] = { "/bin/udevadm", "control", "--reload", NULL };
	static char *const change[] = { "/bin/udevadm", "trigger", "--action=change",
					"--subsystem-match=block", NULL };

	if (agent.service) {
		write_nowatch_rule();
		free(must_run(reload));
		free(must_run(change));
	}
	/* settle waits for the events queued so far: the trigger must have queued them all */
	if (udev_trigger.pid)
		free(bg_wait(&udev_trigger));
	free(must_run(settle));
}

/* Does a parameter's sysfs text say what the job asked for? Numbers compare as numbers
 * (sysfs prints an int -1 as "-1", a ulong as its digits), booleans as Y/N, strings as they
 * are or as the selected "[choice]" of a list (zfs_vdev_raidz_impl prints every choice). */
static int param_matches(const char *have, const char *want)
{
	unsigned long long h, w;
	char *he, *we, sel[96];

	if (!strcmp(have, want))
		return 1;
	errno = 0;
	h = strtoull(have, &he, 0);
	w = strtoull(want, &we, 0);
	if (!errno && he != have && !*he && we != want && !*we)
		return h == w;
	if (!strcmp(have, "Y") || !strcmp(have, "N")) {
		int wb = !strcmp(want, "1") || !strcasecmp(want, "y") || !strcasecmp(want, "yes") ||
			 !strcasecmp(want, "on") || !strcasecmp(want, "true");
		int wn = !strcmp(want, "0") || !strcasecmp(want, "n") || !strcasecmp(want, "no") ||
			 !strcasecmp(want, "off") || !strcasecmp(want, "false");

		return (wb || wn) && (have[0] == 'Y') == wb;
	}
	snprintf(sel, sizeof(sel), "[%s]", want);
	return strstr(have, sel) != NULL;
}

/* The job's module_params are the source of truth: every parameter it names must read back
 * from /sys/module/MODULE/parameters as asked. The kernel only warns about a parameter the
 * module does not have, and a value on the command line could be lost on the way: both fail
 * the step here instead of running the cell with a configuration nobody asked for. */
static void check_module_params(json_t *params)
{
	const char *mod, *k;
	json_t *kv, *v;

	json_object_foreach (params, mod, kv) {
		json_object_foreach (kv, k, v) {
			char path[300], tmp[64], *have;
			const char *want = scalar_str(v, tmp, sizeof(tmp));

			snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", mod, k);
			have = read_small(path);
			if (!have)
				fail_step(NULL, "module '%s' has no parameter '%s' (no %s)", mod, k,
					  path);
			if (!param_matches(have, want)) {
				char msg[256];

				snprintf(msg, sizeof(msg), "%s", have);
				free(have);
				fail_step(NULL,
					  "module parameter %s.%s is '%s', the job asked for '%s'",
					  mod, k, msg, want);
			}
			free(have);
		}
	}
}

/* Load every module named in job.config.module_params with its parameters, dependencies first
 * (zfs last, so spl's parameters apply), then zfs itself even if no parameter was given. When
 * zfs was preloaded from boot (start_zfs_preload) with the parameters from the command line,
 * wait for it and load only the named modules that are not there yet. Then check every
 * parameter against the job. */
static void step_zfs_module(void)
{
	json_t *params = json_object_get(json_object_get(agent.job, "config"), "module_params");
	const char *mod;
	json_t *kv;

	if (zfs_preload.pid) {
		char *out = bg_wait(&zfs_preload);

		logf_console("zfs loaded in the background");
		free(out);
	}
	for (int pass = 0; pass < 2; pass++) {
		json_object_foreach (params, mod, kv) {
			struct argv_buf a = { 0 };
			const char *k;
			json_t *v;
			char *out, sys[160];

			if ((pass == 0) == !strcmp(mod, "zfs"))
				continue;
			snprintf(sys, sizeof(sys), "/sys/module/%s", mod);
			if (access(sys, F_OK) == 0)
				continue; /* loaded: modprobe would not apply parameters anyway */
			argv_add(&a, "/sbin/modprobe");
			argv_add(&a, "%s", mod);
			json_object_foreach (kv, k, v) {
				char tmp[64];

				argv_add(&a, "%s=%s", k, scalar_str(v, tmp, sizeof(tmp)));
			}
			out = must_run(a.v);
			free(out);
			argv_free(&a);
		}
	}
	if (access("/sys/module/zfs", F_OK) < 0) {
		static char *const argv[] = { "/sbin/modprobe", "zfs", NULL };

		free(must_run(argv));
	}
	check_module_params(params);
}

/* Guest device path of a disk by name, from the job's disk table (the host knows the bus). */
static const char *disk_path(const char *name)
{
	json_t *disks = json_object_get(agent.job, "disks");
	size_t i;
	json_t *d;

	json_array_foreach (disks, i, d) {
		if (!strcmp(json_string_value(json_object_get(d, "name")), name))
			return json_string_value(json_object_get(d, "guest_path"));
	}
	fail_step(NULL, "disk '%s' is not in the job's disk table", name);
}

static void wait_for_path(const char *path, double seconds)
{
	double deadline = mono_now() + seconds;

	while (access(path, F_OK) < 0) {
		if (mono_now() > deadline)
			fail_step(NULL, "'%s' did not appear within %.0f s", path, seconds);
		usleep(20 * 1000);
	}
}

static void add_vdev_group(struct argv_buf *a, json_t *vdev)
{
	const char *type = json_string_value(json_object_get(vdev, "type"));
	size_t i;
	json_t *d;

	if (type && strcmp(type, "stripe"))
		argv_add(a, "%s", type);
	json_array_foreach (json_object_get(vdev, "disks"), i, d) {
		const char *p = disk_path(json_string_value(d));

		wait_for_path(p, 30);
		argv_add(a, "%s", p);
	}
}

static void step_pool(void)
{
	json_t *cfg = json_object_get(agent.job, "config");
	json_t *pool = json_object_get(cfg, "pool");
	const char *pname = json_string_value(json_object_get(pool, "name"));
	struct argv_buf a = { 0 };
	const char *k;
	json_t *v, *vdev;
	size_t i;

	argv_add(&a, "/sbin/zpool");
	argv_add(&a, "create");
	argv_add(&a, "-f");
	json_object_foreach (json_object_get(pool, "properties"), k, v) {
		char tmp[64];

		argv_add(&a, "-o");
		argv_add(&a, "%s=%s", k, scalar_str(v, tmp, sizeof(tmp)));
	}
	argv_add(&a, "%s", pname);
	json_array_foreach (json_object_get(pool, "vdevs"), i, vdev)
		add_vdev_group(&a, vdev);
	if (json_array_size(json_object_get(pool, "log"))) {
		argv_add(&a, "log");
		json_array_foreach (json_object_get(pool, "log"), i, vdev)
			add_vdev_group(&a, vdev);
	}
	if (json_array_size(json_object_get(pool, "special"))) {
		argv_add(&a, "special");
		json_array_foreach (json_object_get(pool, "special"), i, vdev)
			add_vdev_group(&a, vdev);
	}
	if (json_array_size(json_object_get(pool, "cache"))) {
		argv_add(&a, "cache");
		json_array_foreach (json_object_get(pool, "cache"), i, v)
			argv_add(&a, "%s", disk_path(json_string_value(v)));
	}
	logf_console("creating pool '%s' (%d arguments)", pname, a.n);
	free(must_run(a.v));
	argv_free(&a);
}

static void create_dataset(const char *pool, json_t *ds, int zvol)
{
	const char *name = json_string_value(json_object_get(ds, "name"));
	struct argv_buf a = { 0 };
	const char *k;
	json_t *v;

	argv_add(&a, "/sbin/zfs");
	argv_add(&a, "create");
	if (zvol) {
		argv_add(&a, "-V");
		argv_add(&a, "%s", json_string_value(json_object_get(ds, "size")));
	}
	json_object_foreach (json_object_get(ds, "properties"), k, v) {
		char tmp[64];

		argv_add(&a, "-o");
		argv_add(&a, "%s=%s", k, scalar_str(v, tmp, sizeof(tmp)));
	}
	argv_add(&a, "%s/%s", pool, name);
	free(must_run(a.v));
	argv_free(&a);
}

/* Where the zfs file system `name` ("tank/bench") is mounted, from /proc/self/mounts: 1 and
 * the path in buf, or 0 if it is not mounted. */
static int zfs_mount_point(const char *name, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char line[1024];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char src[512], dst[512], type[32];

		/* "tank/bench /tank/bench zfs rw,... 0 0"; spaces in paths are octal escapes */
		if (sscanf(line, "%511s %511s %31s", src, dst, type) == 3 && !strcmp(type, "zfs") &&
		    !strcmp(src, name) && !strchr(dst, '\\')) {
			snprintf(buf, len, "%s", dst);
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void step_datasets(void)
{
	json_t *cfg = json_object_get(agent.job, "config");
	const char *pname =
	    json_string_value(json_object_get(json_object_get(cfg, "pool"), "name"));
	const char *target =
	    json_string_value(json_object_get(json_object_get(cfg, "workload"), "target"));
	json_t *ds;
	size_t i;

	json_array_foreach (json_object_get(cfg, "datasets"), i, ds) {
		const char *name = json_string_value(json_object_get(ds, "name"));

		create_dataset(pname, ds, 0);
		if (target && !strcmp(name, target)) {
			char path[512], *mnt;
			char *const argv[] = { "/sbin/zfs", "get",	  "-Hp", "-o",
					       "value",	    "mountpoint", path,	 NULL };

			snprintf(path, sizeof(path), "%s/%s", pname, name);
			/* the kernel's mount table says where it is without starting zfs(8) */
			if (zfs_mount_point(path, agent.target_path, sizeof(agent.target_path)))
				continue;
			mnt = must_run(argv);
			mnt[strcspn(mnt, "\n")] = '\0';
			snprintf(agent.target_path, sizeof(agent.target_path), "%s", mnt);
			free(mnt);
		}
	}
	json_array_foreach (json_object_get(cfg, "zvols"), i, ds) {
		const char *name = json_string_value(json_object_get(ds, "name"));

		create_dataset(pname, ds, 1);
		if (target && !strcmp(name, target)) {
			snprintf(agent.target_path, sizeof(agent.target_path), "/dev/zvol/%s/%s",
				 pname, name);
			agent.target_is_dev = 1;
			wait_for_path(agent.target_path, 60);
		}
	}
	if (!agent.target_path[0])
		fail_step(NULL, "workload target '%s' is neither a dataset nor a zvol of the job",
			  target ? target : "(none)");
}

/* "property\tvalue\tsource" lines into {"property": {"value": v, "source": s}}. */
static json_t *parse_get(char *out)
{
	json_t *obj = json_object();
	char *save = NULL;

	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[4] = { 0 };
		int n = 0;

		for (char *p = line; n < 4; n++) {
			f[n] = p;
			p = strchr(p, '\t');
			if (!p) {
				n++;
				break;
			}
			*p++ = '\0';
		}
		if (n >= 3)
			json_object_set_new(obj, f[0],
					    json_pack("{s:s, s:s}", "value", f[1], "source", f[2]));
	}
	return obj;
}

static json_t *module_parameters(const char *mod)
{
	char dir[128];
	json_t *obj = json_object();
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof(dir), "/sys/module/%s/parameters", mod);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		char path[400];
		char *v;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		v = read_small(path);
		if (v)
			json_object_set_new(obj, de->d_name, json_string(v));
		free(v);
	}
	if (d)
		closedir(d);
	return obj;
}

/* What the guest sees of each disk of the job (sysfs of the whole disk its by-id path names):
 * kernel name, size, sector sizes, rotational, write cache, discard. Records the kernel names
 * for telemetry. */
static json_t *disk_report(void)
{
	static const char *const queue[] = { "rotational", "logical_block_size",
					     "physical_block_size", "write_cache",
					     "discard_max_bytes" };
	json_t *disks = json_object_get(agent.job, "disks"), *out = json_object(), *d;
	size_t i;

	agent.disk_devs = json_object();
	json_array_foreach (disks, i, d) {
		const char *name = json_string_value(json_object_get(d, "name"));
		const char *gp = json_string_value(json_object_get(d, "guest_path"));
		char real[512], path[600], *v;
		const char *dev;
		json_t *o;

		if (!name || !gp || !realpath(gp, real))
			continue;
		dev = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
		o = json_pack("{s:s, s:s}", "guest_path", gp, "dev", dev);
		json_object_set_new(agent.disk_devs, name, json_string(dev));
		for (size_t q = 0; q < sizeof(queue) / sizeof(queue[0]); q++) {
			snprintf(path, sizeof(path), "/sys/block/%s/queue/%s", dev, queue[q]);
			v = read_small(path);
			if (v && q == 3) /* "write back" or "write through" */
				json_object_set_new(o, queue[q], json_string(v));
			else if (v)
				json_object_set_new(o, queue[q],
						    json_integer(strtoll(v, NULL, 10)));
			free(v);
		}
		snprintf(path, sizeof(path), "/sys/block/%s/size", dev);
		v = read_small(path);
		if (v)
			json_object_set_new(o, "size", json_integer(strtoll(v, NULL, 10) * 512));
		free(v);
		/* udevd (systemd 252) keeps /run/udev/watch/bMAJ:MIN for a device it watches. */
		snprintf(path, sizeof(path), "/sys/block/%s/dev", dev);
		v = read_small(path);
		if (v) {
			struct stat st;

			snprintf(path, sizeof(path), "/run/udev/watch/b%s", v);
			json_object_set_new(o, "udev_watch", json_boolean(lstat(path, &st) == 0));
		}
		free(v);
		snprintf(path, sizeof(path), "/sys/block/%s/device/model", dev);
		v = read_small(path);
		if (v)
			json_object_set_new(o, "model", json_string(v));
		free(v);
		{
			char *line = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);

			logf_console("disk %s: %s", name, line ? line : "");
			free(line);
		}
		json_object_set_new(out, name, o);
	}
	return out;
}

/* Before the pool: each disk's by-id path must be there, and the console keeps what the guest
 * saw of it even if the pool step fails. */
static void step_disks(void)
{
	json_t *d;
	size_t i;

	json_array_foreach (json_object_get(agent.job, "disks"), i, d) {
		const char *gp = json_string_value(json_object_get(d, "guest_path"));

		if (gp)
			wait_for_path(gp, 30);
	}
	agent.disk_info = disk_report();
}

/* Tell the host what the guest really has: pool and target properties, layout, module
 * parameters, versions, disks. */
static void step_report(void)
{
	json_t *cfg = json_object_get(agent.job, "config");
	const char *pname =
	    json_string_value(json_object_get(json_object_get(cfg, "pool"), "name"));
	const char *target =
	    json_string_value(json_object_get(json_object_get(cfg, "workload"), "target"));
	char ds[512];
	char *zpool_get, *zfs_get, *status, *zfs_version;
	char *const a_pool[] = { "/sbin/zpool",		  "get", "-Hp",		"-o",
				 "property,value,source", "all", (char *)pname, NULL };
	char *const a_ds[] = { "/sbin/zfs", "get", "-Hp", "-o", "property,value,source",
			       "all",	    ds,	   NULL };
	char *const a_status[] = { "/sbin/zpool", "status", "-P", (char *)pname, NULL };
	json_t *params = json_object();
	const char *mod;
	json_t *v;
	struct utsname u;

	snprintf(ds, sizeof(ds), "%s/%s", pname, target);
	zpool_get = must_run(a_pool);
	zfs_get = must_run(a_ds);
	status = must_run(a_status);
	zfs_version = read_small("/sys/module/zfs/version");
	uname(&u);
	json_object_set_new(params, "zfs", module_parameters("zfs"));
	json_object_foreach (json_object_get(cfg, "module_params"), mod, v) {
		if (strcmp(mod, "zfs"))
			json_object_set_new(params, mod, module_parameters(mod));
	}
	send_msg(json_pack("{s:s, s:o, s:o, s:s, s:o, s:s?, s:s, s:s, s:o}", "type", "effective",
			   "pool", parse_get(zpool_get), "target", parse_get(zfs_get),
			   "zpool_status", status, "module_params", params, "zfs_version",
			   zfs_version, "kernel", u.release, "target_path", agent.target_path,
			   "disks", json_incref(agent.disk_info)));
	free(zpool_get);
	free(zfs_get);
	free(status);
	free(zfs_version);
}

/* Relay the engine's per-second status lines (one JSON object each) as "sample" messages. */
static void relay_status(int fd, char *acc, size_t *len, size_t cap)
{
	ssize_t r = read(fd, acc + *len, cap - *len - 1);
	char *nl;

	if (r <= 0)
		return;
	*len += (size_t)r;
	acc[*len] = '\0';
	while ((nl = strchr(acc, '\n'))) {
		json_t *line;

		*nl = '\0';
		line = json_loads(acc, 0, NULL);
		if (json_is_object(line)) {
			json_object_set_new(line, "type", json_string("sample"));
			send_msg(line);
		} else {
			json_decref(line);
		}
		*len -= (size_t)(nl + 1 - acc);
		memmove(acc, nl + 1, *len + 1);
	}
	if (*len == cap - 1) /* a line longer than the buffer: drop it */
		*len = 0;
}

static const char *pool_name(void)
{
	const char *p = json_string_value(
	    json_object_get(json_object_get(json_object_get(agent.job, "config"), "pool"), "name"));

	return p ? p : "";
}

/* One "telemetry" message (steals `t`; NULL sends nothing): an interval's figures, or with
 * summary true the whole workload's. */
static void send_telemetry(json_t *t, int summary)
{
	if (!t)
		return;
	json_object_set_new(t, "type", json_string("telemetry"));
	if (summary)
		json_object_set_new(t, "summary", json_true());
	send_msg(t);
}

static void step_workload(void)
{
	json_t *w = json_object_get(json_object_get(agent.job, "config"), "workload");
	const char *name = json_string_value(json_object_get(agent.job, "cell"));
	struct argv_buf a = { 0 };
	int status_pipe[2], out_pipe[2], status;
	char acc[8192], *errout;
	json_error_t jerr;
	size_t acc_len = 0, err_len = 0;
	const char *k;
	json_t *v, *fio;
	pid_t pid;
	struct telemetry *tm;
	double next_tick;

	if (agent.fault == FAULT_PANIC) {
		int fd = open("/proc/sysrq-trigger", O_WRONLY);

		logf_console("fault injection: crashing the kernel");
		if (fd >= 0 && write(fd, "c", 1) < 0)
			logf_console("sysrq: %s", strerror(errno));
	}
	argv_add(&a, ENGINE_PATH);
	argv_add(&a, "--output-format=json");
	argv_add(&a, "--output=" RESULT_PATH);
	argv_add(&a, "--status-fd=3");
	argv_add(&a, "--name=%s", name ? name : "zbench");
	argv_add(&a, agent.target_is_dev ? "--filename=%s" : "--directory=%s", agent.target_path);
	json_object_foreach (w, k, v) {
		char tmp[64];

		if (!strcmp(k, "target"))
			continue;
		argv_add(&a, "--%s=%s", k, scalar_str(v, tmp, sizeof(tmp)));
	}
	if (pipe(status_pipe) < 0 || pipe(out_pipe) < 0)
		fail_step(NULL, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		fail_step(NULL, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(out_pipe[1], 1);
		dup2(out_pipe[1], 2);
		dup2(status_pipe[1], 3);
		execv(a.v[0], a.v);
		fprintf(stderr, "cannot run %s: %s\n", a.v[0], strerror(errno));
		_exit(127);
	}
	close(status_pipe[1]);
	close(out_pipe[1]);
	errout = calloc(1, CMD_OUTPUT_MAX + 1);
	tm = telemetry_start(pool_name(), agent.disk_devs, mono_now());
	next_tick = mono_now() + TELEMETRY_SEC;
	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd pfd[2] = { { status_pipe[0], POLLIN, 0 },
					 { out_pipe[0], POLLIN, 0 } };
		double now = mono_now();
		int rc;

		if (now >= next_tick) {
			send_telemetry(telemetry_sample(tm, now), 0);
			next_tick += TELEMETRY_SEC * (1 + (int)((now - next_tick) / TELEMETRY_SEC));
		}
		rc = poll(pfd, 2, (int)((next_tick - now) * 1000) + 1);
		if (rc == 0)
			continue;
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents & POLLIN) {
			relay_status(status_pipe[0], acc, &acc_len, sizeof(acc));
			if (agent.fault == FAULT_STALL) {
				logf_console("fault injection: stopping the engine");
				kill(pid, SIGSTOP);
			}
		} else if (pfd[0].revents & (POLLHUP | POLLERR)) {
			if (pfd[0].fd >= 0)
				open_fds--;
			close(status_pipe[0]);
			status_pipe[0] = -1;
		}
		if (pfd[1].revents & POLLIN) {
			char tmp[4096];
			ssize_t r = read(out_pipe[0], tmp, sizeof(tmp));

			if (r > 0) {
				fwrite(tmp, 1, (size_t)r, stderr); /* the console keeps it too */
				if (err_len + (size_t)r <= CMD_OUTPUT_MAX) {
					memcpy(errout + err_len, tmp, (size_t)r);
					err_len += (size_t)r;
				}
			}
		} else if (pfd[1].revents & (POLLHUP | POLLERR)) {
			open_fds--;
			close(out_pipe[0]);
			out_pipe[0] = -1;
		}
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	argv_free(&a);
	send_telemetry(telemetry_summary(tm, mono_now()), 1);
	telemetry_free(tm);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFSIGNALED(status))
			fail_step(errout, "the workload engine was killed by signal %d",
				  WTERMSIG(status));
		fail_step(errout, "the workload engine exited with status %d", WEXITSTATUS(status));
	}
	fio = json_load_file(RESULT_PATH, 0, &jerr);
	if (!fio)
		fail_step(errout, "the engine's result is not JSON: %s (line %d)", jerr.text,
			  jerr.line);
	free(errout);
	send_msg(json_pack("{s:s, s:o}", "type", "result", "fio", fio));
}

static const struct step {
	const char *name;
	void (*run)(void);
	int to_host;   /* announced with a "phase" message (only after hello: it must come first) */
	int pid1_only; /* brings a bare system up: systemd's job under --service, skipped there */
} agent_steps[] = {
	{ "mounts", step_mounts, 0, 1 },	 { "modules", step_base_modules, 0, 1 },
	{ "udevd", step_udevd, 0, 1 },		 { "port", step_port, 0, 0 },
	{ "hello", step_hello, 0, 0 },		 { "job", step_job, 1, 0 },
	{ "zfs-module", step_zfs_module, 1, 0 }, { "udev", step_udev, 1, 0 },
	{ "disks", step_disks, 1, 0 },		 { "pool", step_pool, 1, 0 },
	{ "datasets", step_datasets, 1, 0 },	 { "report", step_report, 1, 0 },
	{ "workload", step_workload, 1, 0 },
};

/* Orphans (udevd's workers, say) are not reaped: the machine lives for one cell, a few zombies
 * cost nothing, and a reaper thread calling waitpid(-1) would steal the exit statuses that
 * run_cmd() waits for. */
int main(int argc, char **argv)
{
	pthread_t hb, ctl;
	int console;

	agent.service = argc == 2 && !strcmp(argv[1], "--service");
	if (argc > 1 && !agent.service) {
		fprintf(stderr, "usage: zbench-agent [--service]\n");
		return 2;
	}
	if (agent.service)
		read_faults(); /* step_mounts reads them on the appliance */
	if (getpid() != 1 && !agent.service) {
		fprintf(stderr,
			"zbench-agent: this is the guest appliance's init (PID 1); it "
			"powers the machine off when done, so it refuses to run as PID %d "
			"(a systemd guest runs it with --service)\n",
			(int)getpid());
		return 2;
	}
	setenv("PATH", "/sbin:/bin:/usr/sbin:/usr/bin", 1);
	for (size_t i = 0; i < sizeof(agent_steps) / sizeof(agent_steps[0]); i++) {
		agent.step = agent_steps[i].name;
		if (agent.service && agent_steps[i].pid1_only)
			continue;
		if (agent_steps[i].to_host)
			send_msg(json_pack("{s:s, s:s}", "type", "phase", "name", agent.step));
		logf_console("step %s", agent.step);
		agent_steps[i].run();
		if (!strcmp(agent.step, "mounts")) {
			console = open("/dev/console", O_RDWR | O_NOCTTY);
			if (console >= 0) {
				dup2(console, 1);
				dup2(console, 2);
				if (console > 2)
					close(console);
			}
		}
		if (!strcmp(agent.step, "hello"))
			pthread_create(&hb, NULL, heartbeat_main, NULL);
		if (!strcmp(agent.step, "job"))
			pthread_create(&ctl, NULL, control_main, NULL);
	}
	agent.step = "poweroff";
	send_msg(json_pack("{s:s}", "type", "bye"));
	logf_console("done, powering off");
	power_off();
	return 0;
}
