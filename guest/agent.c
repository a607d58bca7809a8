/* zbench-agent: PID 1 of the guest appliance.
 *
 * It brings the minimal system up, talks to the host over the virtio-serial port
 * "org.zbench.0" (docs/protocol.md), builds exactly the pool the job asks for, reports what the
 * guest really has, runs the workload engine, sends the result and powers off.
 *
 * The setup is a tagged list of steps run in order by one loop (agent_steps[] below); agent.h
 * says which file holds each. Every failure becomes an "error" message to the host naming the
 * step, then a deliberate power off: if PID 1 exits the kernel panics, which the host would
 * misread as a kernel bug.
 *
 * With --service it runs as a systemd service instead (the cloud flavor, docs/images.md): the
 * steps that bring a bare system up (marked pid1_only) are systemd's job there and are skipped;
 * the port is found through udev's /dev/virtio-ports link; the rest, and the power off at the
 * end or on failure, are the same.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

struct agent agent = { .port = -1, .tx_lock = PTHREAD_MUTEX_INITIALIZER };

double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void logf_console(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "zbench-agent: [%.3f] ", mono_now());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void power_off(void) __attribute__((noreturn));
static void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	/* Not reached unless reboot() failed; PID 1 must not exit. */
	for (;;)
		pause();
}

void fail_step(const char *output, const char *fmt, ...)
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
	}
	agent.step = "poweroff";
	send_msg(json_pack("{s:s}", "type", "bye"));
	logf_console("done, powering off");
	power_off();
}
