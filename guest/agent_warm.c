/* The guest's half of a warm snapshot (docs/performance.md, "Warm snapshots").
 *
 * The host boots a guest with no disk and, instead of a job, answers its hello with "park". The
 * agent then finishes everything that is the same in every cell (zfs.ko loaded, udev's coldplug
 * done), stops its heartbeats, says "parked" and waits on the port; the host stops the machine
 * there and saves it to a file. Every cell restored from that file resumes here: the host sends
 * "wake" with fresh randomness and the time, the agent mixes the bytes into the kernel's pool
 * and reseeds its generator (every restored guest starts from the same bytes, so without this
 * they would all draw the same "random" numbers), sets the clock, says hello again and waits
 * for the job as a cold guest does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "agent.h"
#include "proto.h"

#define WARM_SEED_MAX 64 /* bytes of randomness a wake carries at most */

/* The modules whose runtime-writable parameters a restored cell may set. */
static const char *const warm_modules[] = { "zfs", "spl" };

/* {module: [parameter, ...]}: the parameters of warm_modules that can be written once loaded
 * (mode with the owner's write bit); the others are read when the module loads, so a cell that
 * sets one must boot cold (the host decides from this list). */
static json_t *writable_params(void)
{
	json_t *all = json_object();

	for (size_t m = 0; m < sizeof(warm_modules) / sizeof(warm_modules[0]); m++) {
		char dir[128];
		json_t *names = json_array();
		DIR *d;
		struct dirent *de;

		snprintf(dir, sizeof(dir), "/sys/module/%s/parameters", warm_modules[m]);
		d = opendir(dir);
		while (d && (de = readdir(d))) {
			char path[512];
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (de->d_name[0] != '.' && stat(path, &st) == 0 && (st.st_mode & S_IWUSR))
				json_array_append_new(names, json_string(de->d_name));
		}
		if (d)
			closedir(d);
		json_object_set_new(all, warm_modules[m], names);
	}
	return all;
}

/* Mix the wake's seed (hex) into the kernel's pool, credited, and force a reseed of the
 * generator, so that nothing drawn after the wake follows from the snapshot's state. */
static void reseed(const char *hex)
{
	struct {
		struct rand_pool_info info;
		unsigned char buf[WARM_SEED_MAX];
	} r;
	size_t n = hex ? strlen(hex) / 2 : 0;
	int fd;

	if (n < 16 || n > WARM_SEED_MAX || strspn(hex, "0123456789abcdef") != strlen(hex))
		fail_step(NULL, "the wake's seed is not 32 to %d hex digits", 2 * WARM_SEED_MAX);
	for (size_t i = 0; i < n; i++) {
		char byte[3] = { hex[2 * i], hex[2 * i + 1], 0 };

		r.buf[i] = (unsigned char)strtoul(byte, NULL, 16);
	}
	r.info.entropy_count = (int)(n * 8);
	r.info.buf_size = (int)n;
	fd = open("/dev/urandom", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, RNDADDENTROPY, &r) < 0 || ioctl(fd, RNDRESEEDCRNG) < 0)
		fail_step(NULL, "reseeding the kernel's random generator: %s", strerror(errno));
	close(fd);
}

static void set_clock(const json_t *t)
{
	struct timeval tv;
	double now = json_number_value(t);

	if (!json_is_number(t) || now <= 0)
		return; /* keep the snapshot's clock: only log timestamps use it */
	tv.tv_sec = (time_t)now;
	tv.tv_usec = (suseconds_t)((now - (double)tv.tv_sec) * 1e6);
	if (settimeofday(&tv, NULL) < 0)
		logf_console("setting the clock: %s", strerror(errno));
}

static int wake_frame(void *arg, const char *payload, size_t len)
{
	json_t **wake = arg;
	json_t *msg = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL);
	const char *type = json_string_value(json_object_get(msg, "type"));

	if (!type || strcmp(type, "wake"))
		fail_step(NULL, "parked: expected 'wake', got '%s'", type ? type : "(none)");
	*wake = msg;
	return 0;
}

/* Block on the port until the host's "wake" (the restored guest resumes inside this loop). */
static json_t *wait_wake(void)
{
	struct proto_decoder dec;
	json_t *wake = NULL;
	char buf[4096];

	proto_decoder_init(&dec, 64 * 1024);
	while (!wake) {
		struct pollfd pfd = { .fd = agent.port, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, -1) <= 0)
			continue;
		r = read(agent.port, buf, sizeof(buf));
		if (r < 0 && errno != EINTR && errno != EAGAIN)
			fail_step(NULL, "parked: reading the port: %s", strerror(errno));
		if (r == 0) /* no host on the port (between save and restore): wait */
			usleep(5 * 1000);
		if (r > 0 && proto_decoder_feed(&dec, buf, (size_t)r, wake_frame, &wake) < 0)
			fail_step(NULL, "parked: bad frame from the host: %s", dec.err);
	}
	proto_decoder_release(&dec);
	return wake;
}

/* The pools the kernel has imported, comma-separated (static buffer; "none" without any): the
 * directories of /proc/spl/kstat/zfs that have a "state" file, one per imported pool. Read here
 * rather than with `zpool list`, whose start (libzfs and its libraries linked under TCG) the
 * restored cell waited for before its hello. */
static const char *imported_pools(void)
{
	static char names[512];
	DIR *d = opendir("/proc/spl/kstat/zfs");
	struct dirent *de;

	names[0] = '\0';
	while (d && (de = readdir(d))) {
		char path[320];

		snprintf(path, sizeof(path), "/proc/spl/kstat/zfs/%s/state", de->d_name);
		if (de->d_name[0] == '.' || access(path, F_OK) < 0)
			continue;
		if (strlen(names) + strlen(de->d_name) + 2 >= sizeof(names))
			break;
		if (names[0])
			strcat(names, ",");
		strcat(names, de->d_name);
	}
	if (d)
		closedir(d);
	else
		return "(no /proc/spl/kstat/zfs)";
	return names[0] ? names : "none";
}

/* One console line for tests/integration/warm.sh: the boot id (the same in every cell restored
 * from one snapshot: their memory is the same bytes), a UUID drawn after the reseed (different
 * in each), and the pools the guest knows of before the job (none: the disks are the cell's). */
static void witness(void)
{
	char *boot_id = read_small("/proc/sys/kernel/random/boot_id");
	char *uuid = read_small("/proc/sys/kernel/random/uuid");

	logf_console("woken from a warm snapshot: boot_id %s, random uuid %s, pools at start: %s",
		     boot_id ? boot_id : "?", uuid ? uuid : "?", imported_pools());
	free(boot_id);
	free(uuid);
}

void warm_set_params(json_t *params)
{
	const char *mod, *k;
	json_t *kv, *v;

	if (!agent.woken)
		return;
	json_object_foreach (params, mod, kv) {
		json_object_foreach (kv, k, v) {
			char path[300], tmp[64];
			const char *val = scalar_str(v, tmp, sizeof(tmp));
			int fd;

			snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", mod, k);
			fd = open(path, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, val, strlen(val)) != (ssize_t)strlen(val))
				fail_step(NULL, "setting %s.%s to '%s' after the restore: %s", mod,
					  k, val, strerror(errno));
			close(fd);
		}
	}
}

void warm_park(void)
{
	static int parked_once;
	json_t *wake;

	if (parked_once++)
		fail_step(NULL, "a second 'park' from the host");
	agent.step = "park";
	zfs_preload_wait();
	step_udev();
	/* no heartbeat may sit in the port's queue when the machine is saved (send_msg) */
	pthread_mutex_lock(&agent.tx_lock);
	agent.parked = 1;
	pthread_mutex_unlock(&agent.tx_lock);
	send_msg(json_pack("{s:s, s:o}", "type", "parked", "writable", writable_params()));
	logf_console("parked: waiting for a wake");
	wake = wait_wake();
	reseed(json_string_value(json_object_get(wake, "seed")));
	set_clock(json_object_get(wake, "time"));
	json_decref(wake);
	witness();
	agent.woken = 1;
	agent.step = "hello";
	/* hello first, then the heartbeats again: the heartbeat thread slept through the save and
	 * may wake at any moment after the restore, and a heartbeat before hello is a protocol
	 * error the host stops the cell for (tests/integration/engines.sh saw it once) */
	send_hello();
	pthread_mutex_lock(&agent.tx_lock);
	agent.parked = 0;
	pthread_mutex_unlock(&agent.tx_lock);
	agent.step = "job";
}
