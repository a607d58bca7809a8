/* The agent's channel to the host: the virtio-serial port "org.zbench.0" and the messages on it
 * (docs/protocol.md). The guest speaks first ("hello"), then waits for the one "job" message;
 * from then on a heartbeat thread says which step runs every HEARTBEAT_SEC and a control thread
 * serves the host's requests ("dump") and answers ("limits"). Everything the host sends is
 * checked here: frames by the bounded decoder (guest/proto.c), the job's type, and control
 * messages by type. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "proto.h"

#define HEARTBEAT_SEC	2
#define JOB_WAIT_SEC	120
#define LIMITS_WAIT_SEC 60

/* The host's answer to our "limits" (await_disk_limits), set by the control thread. */
static pthread_mutex_t limits_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t limits_cond = PTHREAD_COND_INITIALIZER;
static int limits_asked, limits_set;

int send_msg(json_t *msg)
{
	char *text;
	int rc = -1, heartbeat;

	heartbeat = !strcmp(json_string_value(json_object_get(msg, "type")) ?: "", "heartbeat");
	json_object_set_new(msg, "v", json_integer(1));
	json_object_set_new(msg, "t", json_real(mono_now()));
	text = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (!text)
		return -1;
	pthread_mutex_lock(&agent.tx_lock);
	/* parked is set under this lock (warm_park): no heartbeat follows "parked" */
	if (agent.port >= 0 && !(heartbeat && agent.parked))
		rc = proto_write_frame(agent.port, text, strlen(text));
	pthread_mutex_unlock(&agent.tx_lock);
	free(text);
	return rc;
}

json_t *job_config(const char *key)
{
	return json_object_get(json_object_get(agent.job, "config"), key);
}

const char *job_pool_name(void)
{
	return json_string_value(json_object_get(job_config("pool"), "name"));
}

const char *job_target_name(void)
{
	return json_string_value(json_object_get(job_config("workload"), "target"));
}

/* Find /dev/vportNpM whose /sys/class/virtio-ports/vportNpM/name is the zbench port (udev's
 * /dev/virtio-ports/NAME link first, where there is a udev). */
void step_port(void)
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

static void *heartbeat_main(void *arg)
{
	for (;;) {
		sleep(HEARTBEAT_SEC);
		send_msg(json_pack("{s:s, s:s}", "type", "heartbeat", "step", agent.step));
	}
	return NULL;
}

void send_hello(void)
{
	struct utsname u;

	uname(&u);
	send_msg(json_pack("{s:s, s:s, s:i, s:s, s:s}", "type", "hello", "agent", AGENT_VERSION,
			   "proto", 1, "kernel", u.release, "machine", u.machine));
}

/* "hello" is the first message; the heartbeats start after it. */
void step_hello(void)
{
	static pthread_t heartbeat;

	send_hello();
	pthread_create(&heartbeat, NULL, heartbeat_main, NULL);
}

static int job_frame(void *arg, const char *payload, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(payload, len, JSON_REJECT_DUPLICATES, &jerr);
	const char *type;

	if (!msg)
		fail_step(NULL, "job message is not JSON: %s", jerr.text);
	type = json_string_value(json_object_get(msg, "type"));
	if (type && !strcmp(type, "park")) { /* a warm snapshot is being made: agent_warm.c */
		json_decref(msg);
		warm_park();
		*(double *)arg = mono_now() + JOB_WAIT_SEC; /* the wait starts again at the wake */
		return 0;
	}
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

	if (type && !strcmp(type, "limits")) {
		pthread_mutex_lock(&limits_lock);
		limits_set = 1;
		pthread_cond_signal(&limits_cond);
		pthread_mutex_unlock(&limits_lock);
	} else if (type && !strcmp(type, "dump")) {
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

void await_disk_limits(void)
{
	struct timespec until;
	double t0 = mono_now();
	int rc = 0;

	if (limits_asked)
		return;
	limits_asked = 1;
	if (send_msg(json_pack("{s:s}", "type", "limits")) < 0)
		fail_step(NULL, "asking the host for the disks' limits: the port is gone");
	clock_gettime(CLOCK_REALTIME, &until); /* pthread_cond_timedwait's clock */
	until.tv_sec += LIMITS_WAIT_SEC;
	pthread_mutex_lock(&limits_lock);
	while (!limits_set && rc == 0)
		rc = pthread_cond_timedwait(&limits_cond, &limits_lock, &until);
	pthread_mutex_unlock(&limits_lock);
	if (!limits_set)
		fail_step(NULL, "the host did not give the disks their limits within %d s",
			  LIMITS_WAIT_SEC);
	logf_console("the disks have their limits (%.3f s)", mono_now() - t0);
}

/* Wait for the job (JOB_WAIT_SEC at most); from then on the control thread reads the port. */
void step_job(void)
{
	static pthread_t control;
	struct proto_decoder dec;
	char buf[4096];
	double deadline = mono_now() + JOB_WAIT_SEC;

	proto_decoder_init(&dec, PROTO_MAX_PAYLOAD);
	while (!agent.job) {
		struct pollfd pfd = { .fd = agent.port, .events = POLLIN };
		int left = (int)((deadline - mono_now()) * 1000);
		ssize_t r;

		if (left <= 0)
			fail_step(NULL, "no job from the host within %d s", JOB_WAIT_SEC);
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
		if (proto_decoder_feed(&dec, buf, (size_t)r, job_frame, &deadline) < 0)
			fail_step(NULL, "bad frame from the host: %s", dec.err);
	}
	proto_decoder_release(&dec);
	pthread_create(&control, NULL, control_main, NULL);
}
