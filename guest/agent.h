/* zbench-agent: the guest's side of a cell, shared by its rooms. Read in the order a cell runs:
 *
 *   agent.c           main: the step table, the one loop that runs it, failure and power off
 *   agent_boot.c      a bare system brought up: mounts, fault flags, virtio modules, udev
 *   agent_channel.c   the virtio-serial port: finding it, messages, hello, the job, heartbeats,
 *                     the host's control messages
 *   agent_zfs.c       the zfs module and its parameters, the pool, datasets and zvols
 *   agent_report.c    what the guest really has: its disks, the effective configuration
 *   agent_workload.c  the engine's run, its status lines and the telemetry relayed to the host
 *   agent_fio.c       real fio as the engine ("engine": "fio"): job file, JSON stream, result
 *   agent_warm.c      a warm snapshot: "park" instead of a job, then "wake" in every restored
 *                     cell (reseed, clock, hello again)
 *   agent_cmd.c       running commands (captured, in the background), argv building, small files
 *
 * Every step is a `void step_NAME(void)`: it returns when done or fails through fail_step(),
 * which never returns. The agent is single-threaded but for the heartbeat and control threads
 * (agent_channel.c), which only send through send_msg() and read `agent.step`.
 */
#ifndef ZB_AGENT_H
#define ZB_AGENT_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#define AGENT_VERSION  "0.1.0"
#define CMD_OUTPUT_MAX (64 * 1024) /* bytes of a command's output kept */

/* Fault injection for zbench's own tests (docs/protocol.md): `zbench.fault=NAME` on the kernel
 * command line, set through the matrix's vm.kernel_args. Each makes the guest fail the way a
 * real one can, so the host's deadlines and classification are tested against the real thing. */
enum fault {
	FAULT_NONE,
	FAULT_SILENT, /* the agent never opens the port: the host must see boot-fail */
	FAULT_PANIC,  /* the kernel crashes (sysrq c) as the workload starts: panic */
	FAULT_STALL,  /* the engine is stopped (SIGSTOP) after its first sample: timeout */
};

/* The agent's state: one per guest, defined in agent.c. Each field is written by one step and
 * read by the later ones. */
struct agent {
	int port;		 /* virtio-serial port, O_RDWR, blocking (step port) */
	pthread_mutex_t tx_lock; /* one writer at a time on the port */
	const char *step;	 /* the step running now, for heartbeats and errors */
	json_t *job;		 /* the job the host sent (owned; step job) */
	char target_path[512];	 /* what the workload runs against: a directory or a zvol */
	int target_is_dev;
	/* a target zvol with a file system (zvols[].filesystem): its type ("ext4", "xfs") and
	 * device; target_path is then where it is mounted. "" otherwise. */
	char target_fs[8];
	char target_fs_dev[512];
	json_t *disk_devs; /* disk name -> kernel device name ("d0" -> "sdb"), from step disks */
	json_t *disk_info; /* what the guest sees of each disk, for the report */
	enum fault fault;
	volatile int parked; /* saved as a warm snapshot: the heartbeat thread stays silent */
	int woken;	     /* restored from a warm snapshot (zfs.ko loaded before the job) */
	int service;	     /* --service: a systemd unit on a full system, not PID 1 */
};

extern struct agent agent;

/* ---- agent.c: time, the console, failure ---- */

/* CLOCK_MONOTONIC in seconds: the clock of every message's "t". */
double mono_now(void);
/* One line on the console (stderr), prefixed with the agent's name and mono_now(): the host's
 * console log holds the evidence even when the port is dead. */
void logf_console(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Fail the current step: ZFS's debug log and the message to the console, an "error" message to
 * the host naming the step (with `output`, a command's output, or NULL), then power off. */
void fail_step(const char *output, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));

/* ---- the steps, in the order of agent.c's table ---- */

void step_mounts(void);	      /* agent_boot.c: /proc, /sys, /dev, /run, /tmp; then the console */
void step_base_modules(void); /* agent_boot.c: virtio modules, then zfs preloaded */
void step_udevd(void);	      /* agent_boot.c: udevd and its coldplug trigger, in the background */
void step_port(void);	      /* agent_channel.c: open the virtio-serial port */
void step_hello(void);	      /* agent_channel.c: "hello", then heartbeats */
void step_job(void);	      /* agent_channel.c: wait for the job, then control messages */
void step_zfs_module(void);   /* agent_zfs.c: zfs and the job's modules, parameters checked */
void step_udev(void);	      /* agent_boot.c: the coldplug done and the queue drained */
void step_disks(void);	      /* agent_report.c: every disk there, and what the guest sees */
void step_pool(void);	      /* agent_zfs.c: zpool create */
void step_datasets(void);     /* agent_zfs.c: zfs create; the workload's target found */
void step_report(void);	      /* agent_report.c: the "effective" message */
void step_workload(void);     /* agent_workload.c: the engine, samples, telemetry, "result" */

/* agent_warm.c: the host answered hello with "park": make the state every cell shares (zfs
 * loaded, udev settled), say "parked", wait for "wake" (a restored cell), reseed and set the
 * clock from it, say hello again. Returns to the wait for the job; fails the step otherwise. */
void warm_park(void);
/* In a restored guest, write the job's module parameters to /sys/module/M/parameters (the
 * host restores only cells whose parameters are all writable there); else nothing. */
void warm_set_params(json_t *params);

/* ---- agent_boot.c ---- */

/* Read zbench.fault=NAME from /proc/cmdline into agent.fault; with "silent", never return. */
void read_faults(void);

/* ---- agent_channel.c: the host ---- */

/* Send one message (steals `msg`), adding "v" and "t" (mono_now()). Thread-safe. -1 when it
 * could not be encoded or written (no port yet, or the host went away). */
int send_msg(json_t *msg);
/* The "hello" message (agent, kernel, machine). */
void send_hello(void);
/* Before the first phase that is not an unmeasured prefill: ask the host for the disks' I/O
 * limits, which it lifts while the guest sets up (pool, datasets, prefills: docs/disks.md), and
 * wait until it says they are in place (a step failure after LIMITS_WAIT_SEC). Once per job. */
void await_disk_limits(void);
/* The job's config.KEY (borrowed), or NULL. */
json_t *job_config(const char *key);
/* The job's config.pool.name and config.workload.target, or NULL. */
const char *job_pool_name(void);
const char *job_target_name(void);

/* ---- agent_zfs.c ---- */

/* The last lines of ZFS's kernel debug log to the console (nothing before the module loads). */
void zfs_dbgmsg_to_console(void);
/* `modprobe zfs` in the background when the command line says zbench.preload=zfs. */
void zfs_preload_start(void);
/* Export and import the pool, so the ARC holds none of its data (a phase action); the target
 * is found again: its device node waited for, its file system mounted again. */
void target_export_import(void);
/* Wait for zfs_preload_start()'s modprobe, if one runs (the step fails if it failed). */
void zfs_preload_wait(void);

/* ---- agent_cmd.c: commands ---- */

/* Run argv (argv[0] an absolute path), capturing stdout+stderr (CMD_OUTPUT_MAX bytes kept) into
 * *out (caller frees; NULL: discarded). Returns the exit status, or -1 if it could not run or
 * died of a signal. */
int run_cmd(char *const argv[], char **out);
/* Run argv and fail the step with its output unless it exits 0; its output (caller frees). */
char *must_run(char *const argv[]);
/* In a forked child whose descriptors are set up: exec argv, or say why not and _exit(127). */
void cmd_exec(char *const argv[]) __attribute__((noreturn));

/* A command started now and waited for later, its stdout+stderr in a file under /run (tmpfs):
 * how the agent overlaps slow steps (loading zfs.ko, udev's coldplug) with the rest. */
struct bg_cmd {
	pid_t pid; /* 0: not started (or waited for) */
	char log[64];
	char what[256]; /* the command line, for messages */
	double t0;	/* when it started (mono_now) */
};

/* Start argv with its output in `log`; the step fails if it cannot be started. */
void bg_start(struct bg_cmd *c, char *const argv[], const char *log);
/* Wait for a command from bg_start(); its output (bounded, caller frees), or the step fails
 * with it unless the command exited 0. */
char *bg_wait(struct bg_cmd *c);

/* A growable argv: zero it, argv_add() each word (the step fails when it is full), run a.v,
 * argv_free(). */
struct argv_buf {
	char *v[512];
	int n;
};

void argv_add(struct argv_buf *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void argv_free(struct argv_buf *a);
/* A JSON scalar as the string a command line wants ("4k", "12", "on"): a string as it is, or
 * printed into buf. */
const char *scalar_str(const json_t *v, char *buf, size_t len);

/* ---- agent_fio.c: fio as the engine (agent_workload.c runs it like zbench-engine) ---- */

/* Whether the job's config says "engine": "fio". */
int agent_engine_is_fio(void);
/* fio's command line, after writing the workload as its job file (the step fails on an option
 * fio cannot take). fio's JSON then goes to fd 3, the engine's status descriptor. */
void fio_argv(struct argv_buf *a, const json_t *opts);
/* Read what fio wrote on fd 3: each whole JSON document goes to the host as a "sample"; the last
 * one is kept. Text between documents (fio's messages and errors) goes to the console and is
 * appended to errout[*err_len..CMD_OUTPUT_MAX) (the engine's output kept for an error). */
void fio_relay(int fd, char *errout, size_t *err_len);
/* fio's last document, its result (the caller owns it); the step fails (with `errout`, fio's
 * output) when there is none. */
json_t *fio_result(const char *errout);

/* ---- agent_cmd.c: files ---- */

/* The first line of a small file (4 KiB at most; caller frees), or NULL. */
char *read_small(const char *path);
/* Wait until `path` exists; the step fails after `seconds`. */
void wait_for_path(const char *path, double seconds);

#endif
