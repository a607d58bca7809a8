/* zbench-diskmodel: an nbdkit filter that makes a disk file answer like a real drive.
 *
 *   nbdkit --foreground --unix SOCK --threads 64 --filter=build/zbench-diskmodel.so \
 *     file file=DISK dm_model=NAME [dm_size=BYTES] [dm_stats=PATH] [dm_FIGURE=VALUE ...]
 *
 * Every request is queued in the model's virtual time (dm_sched.c) under one mutex; the thread
 * then does the real I/O on the file and waits until the completion time the model gave, so the
 * host's own time is part of the service time, not added on top. Virtual time is CLOCK_MONOTONIC
 * since the filter got ready. The model is one per process (one disk per nbdkit), shared by its
 * connections.
 *
 * A request whose completion the queue cannot tell yet (it waits behind others on a serial
 * drive) waits on its own condition variable. One waiter at a time holds the timer: it sleeps
 * until the queue's next decision, advances it, wakes the waiters whose requests got decided,
 * and hands the timer on when its own is decided. So a decision wakes the threads it concerns,
 * not all 32 of a queue.
 *
 * Waiting for the completion time is most of the filter's host CPU: a timed sleep costs about
 * 30 us of CPU on a nested VM (arming the timer and taking its interrupt leave the guest), a
 * wake-up through a condition variable about 3 (bench/filter-cost.sh). So the waits share timers:
 * the requests waiting for their completion times are a list in deadline order (its own mutex,
 * not the model's); the first sleeps until its deadline with clock_nanosleep(TIMER_ABSTIME),
 * then releases everyone whose deadline has passed and hands the timer to the next. At queue
 * depth 32 one timer completes several requests. A wait shorter than dm_spin_us (30 us: cheaper
 * than a timer) spins with sched_yield(), and a request already past its deadline (the host was
 * slower than the model) waits not at all. The model's answers do not depend on any of this.
 *
 * The filter advertises FLUSH and native FUA and models them; it does not pass them to the file
 * (the cell's disk file is scratch: a host fsync would only add the host's disk to the model).
 * nbdkit's --threads bounds the queue depth the model can see (default 16: pass 64). The unix
 * socket appears a moment before nbdkit accepts on it: wait for --pidfile, or retry connect(). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-filter.h>

#include "diskmodel.h"
#include "dm_stats.h"

#define MAX_OVERRIDES 64
/* A timed sleep costs about 30 us of host CPU here (a nested VM: arming the timer and taking its
 * interrupt leave the guest), a spin with sched_yield() about what it waits: waits up to this
 * long spin (dm_spin_us=) */
#define DM_SPIN_NS 30000

static struct {
	const char *model, *stats_path;
	uint64_t size;
	/* a wait up to this long spins instead of taking a timer */
	uint64_t spin_ns;
	struct {
		const char *name, *value;
	} over[MAX_OVERRIDES];
	int nover;
	struct dm_params params;
	struct dm_disk *disk;
	struct dm_stats_file *stats;
	pthread_mutex_t lock;
	struct timespec t0;
	/* the filter's own counters (the model's are in the disk); inflight and late_ns are
	 * atomics, the rest under the lock */
	uint64_t inflight, qd_sum, qd_max, late_ns, cpu_ns;
	/* requests waiting for the queue to decide them */
	struct waiter *waiters;
	int timer_held;
} dm = { .lock = PTHREAD_MUTEX_INITIALIZER, .spin_ns = DM_SPIN_NS };

struct waiter {
	struct dm_req *r;
	pthread_cond_t cond;
	struct waiter *next;
};

/* A request waiting for its completion time: the list is in deadline order, and the first holds
 * the timer (timed) while the rest wait on their condition variables. */
struct sleeper {
	uint64_t deadline;
	pthread_cond_t cond;
	int timed, released;
	struct sleeper *next;
};

static struct {
	pthread_mutex_t lock;
	struct sleeper *head;
} clk = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int dm_config(nbdkit_next_config *next, nbdkit_backend *nxdata, const char *key,
		     const char *value)
{
	if (strncmp(key, "dm_", 3))
		return next(nxdata, key, value);
	if (!strcmp(key, "dm_model")) {
		dm.model = value;
	} else if (!strcmp(key, "dm_stats")) {
		dm.stats_path = value;
	} else if (!strcmp(key, "dm_spin_us")) {
		char *end;
		double us = strtod(value, &end);

		if (end == value || *end || !(us >= 0 && us <= 1000)) {
			nbdkit_error("dm_spin_us: '%s' is not a number of us from 0 to 1000",
				     value);
			return -1;
		}
		dm.spin_ns = (uint64_t)(us * 1000);
	} else if (!strcmp(key, "dm_size")) {
		int64_t n = nbdkit_parse_size(value);

		if (n <= 0) {
			nbdkit_error("dm_size: '%s' is not a size", value);
			return -1;
		}
		dm.size = (uint64_t)n;
	} else {
		if (dm.nover == MAX_OVERRIDES) {
			nbdkit_error("%s: more than %d figures overridden", key, MAX_OVERRIDES);
			return -1;
		}
		dm.over[dm.nover].name = key + 3;
		dm.over[dm.nover++].value = value;
	}
	return 0;
}

static int dm_config_complete(nbdkit_next_config_complete *next, nbdkit_backend *nxdata)
{
	const struct dm_model *m = dm_model_find(dm.model);
	char why[256];

	if (!m) {
		nbdkit_error("dm_model: %s '%s'", dm.model ? "no disk model named" : "missing",
			     dm.model ? dm.model : "");
		return -1;
	}
	dm_params_from_model(&dm.params, m);
	for (int i = 0; i < dm.nover; i++) {
		if (dm_params_set(&dm.params, dm.over[i].name, dm.over[i].value, why, sizeof(why)) <
		    0) {
			nbdkit_error("dm_%s: %s", dm.over[i].name, why);
			return -1;
		}
	}
	if (dm_params_check(&dm.params, dm.size, why, sizeof(why)) < 0) {
		nbdkit_error("model '%s': %s", m->name, why);
		return -1;
	}
	return next(nxdata);
}

static int dm_get_ready(int thread_model)
{
	char why[256];

	if (dm.stats_path) {
		dm.stats = dm_stats_create(dm.stats_path, why, sizeof(why));
		if (!dm.stats) {
			nbdkit_error("dm_stats: %s", why);
			return -1;
		}
	}
	/* nanosleep may wake up to the timer slack late (50 us by default): a flash model's
	 * whole service time */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &dm.t0);
	return 0;
}

static void dm_unload(void)
{
	dm_disk_free(dm.disk);
	dm_stats_close(dm.stats);
}

/* The disk is made at the first connection when dm_size was not given (the file's size). */
static int dm_prepare(nbdkit_next *next, void *handle, int readonly)
{
	char why[256];
	int rc = 0;

	pthread_mutex_lock(&dm.lock);
	if (!dm.disk) {
		uint64_t size = dm.size;

		if (!size) {
			int64_t s = next->get_size(next);

			size = s > 0 ? (uint64_t)s : 0;
		}
		dm.disk = dm_disk_new(&dm.params, size, why, sizeof(why));
		if (!dm.disk) {
			nbdkit_error("model '%s': %s", dm.model, why);
			rc = -1;
		}
	}
	pthread_mutex_unlock(&dm.lock);
	return rc;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - dm.t0.tv_sec) * 1000000000ull + (uint64_t)t.tv_nsec -
	       (uint64_t)dm.t0.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t vt)
{
	struct timespec t;
	uint64_t ns = (uint64_t)dm.t0.tv_nsec + vt;

	t.tv_sec = dm.t0.tv_sec + (time_t)(ns / 1000000000ull);
	t.tv_nsec = (long)(ns % 1000000000ull);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

/* Wait until deadline by spinning: sched_yield() lets any other runnable thread (another
 * request's, fio's, QEMU's) have the core meanwhile. */
static void spin_until(uint64_t deadline)
{
	while (now_ns() < deadline)
		sched_yield();
}

/* Wait until vt: at once if it has passed, spinning if it is near (cheaper than a timer), else
 * sleeping. */
static void pause_until(uint64_t vt)
{
	uint64_t now = now_ns();

	if (now >= vt)
		return;
	if (vt - now <= dm.spin_ns)
		spin_until(vt);
	else
		sleep_until(vt);
}

static void publish(void)
{
	struct dm_stats s = *dm_disk_stats(dm.disk);

	if (!dm.stats)
		return;
	s.queue_depth_sum = dm.qd_sum;
	s.queue_depth_max = dm.qd_max;
	s.late_ns_sum = __atomic_load_n(&dm.late_ns, __ATOMIC_RELAXED);
	s.host_cpu_ns = dm.cpu_ns;
	dm_stats_publish(dm.stats, &s);
}

/* Wake the waiters the queue has decided (lock held). */
static void wake_decided(void)
{
	for (struct waiter *w = dm.waiters; w; w = w->next) {
		if (w->r->done_set)
			pthread_cond_signal(&w->cond);
	}
}

/* Wait until the queue decides w's request (lock held; see the comment at the top). */
static void wait_decided(struct waiter *w)
{
	struct waiter **pp;

	w->next = dm.waiters;
	dm.waiters = w;
	while (!w->r->done_set) {
		if (dm.timer_held) {
			pthread_cond_wait(&w->cond, &dm.lock);
			continue;
		}
		dm.timer_held = 1;
		while (!w->r->done_set) {
			uint64_t ev = dm_disk_next_event(dm.disk);

			pthread_mutex_unlock(&dm.lock);
			pause_until(ev + 1);
			pthread_mutex_lock(&dm.lock);
			dm_disk_advance(dm.disk, now_ns());
			wake_decided();
		}
		dm.timer_held = 0;
	}
	for (pp = &dm.waiters; *pp != w; pp = &(*pp)->next)
		;
	*pp = w->next;
	/* hand the timer to a waiter still undecided */
	for (struct waiter *o = dm.waiters; o; o = o->next) {
		if (!o->r->done_set) {
			pthread_cond_signal(&o->cond);
			break;
		}
	}
}

/* Queue the request in virtual time; its completion deadline. */
static int dm_begin(uint8_t op, uint64_t offset, uint32_t len, uint32_t flags, uint64_t *deadline)
{
	struct dm_req r = { .offset = offset, .len = len, .op = op };
	struct waiter w = { .r = &r, .cond = PTHREAD_COND_INITIALIZER };
	uint64_t c0 = cpu_ns(), inflight;

	if (flags & NBDKIT_FLAG_FUA)
		r.flags |= DM_REQ_FUA;
	pthread_mutex_lock(&dm.lock);
	r.arrival = now_ns();
	inflight = __atomic_load_n(&dm.inflight, __ATOMIC_RELAXED);
	dm.qd_sum += inflight;
	if (inflight > dm.qd_max)
		dm.qd_max = inflight;
	if (dm_disk_submit(dm.disk, &r) < 0) {
		pthread_mutex_unlock(&dm.lock);
		nbdkit_error("disk model: more than 1024 requests queued");
		return -1;
	}
	__atomic_add_fetch(&dm.inflight, 1, __ATOMIC_RELAXED);
	/* this arrival may have decided others' requests */
	wake_decided();
	if (!r.done_set)
		wait_decided(&w);
	dm.cpu_ns += cpu_ns() - c0;
	publish();
	pthread_mutex_unlock(&dm.lock);
	pthread_cond_destroy(&w.cond);
	*deadline = r.done;
	return 0;
}

/* Release the sleepers whose deadlines have passed, and make sure the earliest one left holds a
 * timer (clk.lock held). */
static void release_due(void)
{
	uint64_t now = now_ns();

	while (clk.head && clk.head->deadline <= now) {
		struct sleeper *s = clk.head;

		clk.head = s->next;
		s->released = 1;
		pthread_cond_signal(&s->cond);
	}
	if (clk.head && !clk.head->timed)
		pthread_cond_signal(&clk.head->cond);
}

/* Wait until the deadline (the comment at the top: one timer for the sleepers, not one each). */
static void wait_deadline(uint64_t deadline)
{
	struct sleeper s = { .deadline = deadline, .cond = PTHREAD_COND_INITIALIZER };
	struct sleeper **pp;
	uint64_t now = now_ns();

	/* a host behind the model answers at once */
	if (now >= deadline)
		return;
	/* a wait shorter than a timer's cost: spin */
	if (deadline - now <= dm.spin_ns) {
		spin_until(deadline);
		return;
	}
	pthread_mutex_lock(&clk.lock);
	for (pp = &clk.head; *pp && (*pp)->deadline <= deadline; pp = &(*pp)->next)
		;
	s.next = *pp;
	*pp = &s;
	while (!s.released) {
		if (clk.head != &s || s.timed) {
			pthread_cond_wait(&s.cond, &clk.lock);
			continue;
		}
		/* the earliest: sleep on the timer, then release everyone due */
		s.timed = 1;
		pthread_mutex_unlock(&clk.lock);
		pause_until(deadline);
		pthread_mutex_lock(&clk.lock);
		s.timed = 0;
		release_due();
	}
	pthread_mutex_unlock(&clk.lock);
	pthread_cond_destroy(&s.cond);
}

/* Complete at the deadline. No model lock: the two counters are atomics (publish() reads them). */
static void dm_end(uint64_t deadline)
{
	uint64_t now;

	wait_deadline(deadline);
	now = now_ns();
	__atomic_sub_fetch(&dm.inflight, 1, __ATOMIC_RELAXED);
	/* more than a scheduler tick behind: the host was slower than the model */
	if (now > deadline + 50000)
		__atomic_add_fetch(&dm.late_ns, now - deadline, __ATOMIC_RELAXED);
}

static int dm_pread(nbdkit_next *next, void *handle, void *buf, uint32_t count, uint64_t offset,
		    uint32_t flags, int *err)
{
	uint64_t deadline;
	int rc;

	if (dm_begin(DM_OP_READ, offset, count, 0, &deadline) < 0)
		return *err = EIO, -1;
	rc = next->pread(next, buf, count, offset, flags, err);
	dm_end(deadline);
	return rc;
}

static int dm_pwrite(nbdkit_next *next, void *handle, const void *buf, uint32_t count,
		     uint64_t offset, uint32_t flags, int *err)
{
	uint64_t deadline;
	int rc;

	if (dm_begin(DM_OP_WRITE, offset, count, flags, &deadline) < 0)
		return *err = EIO, -1;
	rc = next->pwrite(next, buf, count, offset, flags & ~NBDKIT_FLAG_FUA, err);
	dm_end(deadline);
	return rc;
}

static int dm_flush(nbdkit_next *next, void *handle, uint32_t flags, int *err)
{
	uint64_t deadline;

	if (dm_begin(DM_OP_FLUSH, 0, 0, 0, &deadline) < 0)
		return *err = EIO, -1;
	dm_end(deadline);
	return 0;
}

static int dm_trim(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset, uint32_t flags,
		   int *err)
{
	uint64_t deadline;
	int rc;

	if (dm_begin(DM_OP_TRIM, offset, count, flags, &deadline) < 0)
		return *err = EIO, -1;
	rc = next->trim(next, count, offset, flags & ~NBDKIT_FLAG_FUA, err);
	dm_end(deadline);
	return rc;
}

static int dm_zero(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset, uint32_t flags,
		   int *err)
{
	uint64_t deadline;
	int rc;

	if (dm_begin(DM_OP_ZERO, offset, count, flags, &deadline) < 0)
		return *err = EIO, -1;
	rc = next->zero(next, count, offset, flags & ~NBDKIT_FLAG_FUA, err);
	dm_end(deadline);
	return rc;
}

static int dm_can_flush(nbdkit_next *next, void *handle)
{
	return 1;
}

static int dm_can_fua(nbdkit_next *next, void *handle)
{
	return NBDKIT_FUA_NATIVE;
}

static int dm_is_rotational(nbdkit_next *next, void *handle)
{
	return dm.params.cls == DM_CLASS_HDD;
}

static int dm_can_cache(nbdkit_next *next, void *handle)
{
	return NBDKIT_CACHE_NONE;
}

static int dm_thread_model(void)
{
	return NBDKIT_THREAD_MODEL_PARALLEL;
}

static struct nbdkit_filter filter = {
	.name = "zbench-diskmodel",
	.longname = "zbench disk service-time model",
	.config = dm_config,
	.config_complete = dm_config_complete,
	.config_help = "dm_model=NAME       a row of zbench's disk-model table (required)\n"
		       "dm_size=BYTES       the disk's size (default: the file's)\n"
		       "dm_spin_us=US       waits up to this long spin, not sleep (default 30)\n"
		       "dm_stats=PATH       publish the model's counters there\n"
		       "dm_FIGURE=VALUE     override one figure of the model",
	.thread_model = dm_thread_model,
	.get_ready = dm_get_ready,
	.unload = dm_unload,
	.prepare = dm_prepare,
	.can_flush = dm_can_flush,
	.can_fua = dm_can_fua,
	.is_rotational = dm_is_rotational,
	.can_cache = dm_can_cache,
	.pread = dm_pread,
	.pwrite = dm_pwrite,
	.flush = dm_flush,
	.trim = dm_trim,
	.zero = dm_zero,
};

NBDKIT_REGISTER_FILTER(filter)
