/* Disk servers: the nbdkit process of each modelled disk of a cell (docs/disks.md, "Modelled
 * disks").
 *
 * A modelled disk (disk_model_is_modelled(): a built-in service-time model on an image file) is
 * served by its own nbdkit, started here per cell, with zbench's disk-model filter
 * (build/zbench-diskmodel.so, builder/diskmodel/) over the file plugin on the disk's image. It
 * serves one NBD connection on a socketpair (nbdkit --single): our end goes to QEMU as the
 * disk's vm_disk.nbd_fd, so QEMU, which runs as the unprivileged zbench-qemu, needs no path to
 * reach it, and no socket file exists to be left behind. nbdkit runs in its own process group
 * (a Ctrl-C at the terminal reaches zbench, which ends the cell, not the disk under a running
 * guest) with --exit-with-parent: when zbench dies it gets SIGTERM and exits once its one
 * connection closes, that is with its QEMU (which a resumed run's reaper kills, with any nbdkit
 * still there). The filter publishes its
 * counters in NAME.dmstats in the cell directory (diskmodel/dm_stats.h), read at the measured
 * window's start and end; its messages go to NAME.nbdkit.log there, whose tail explains a
 * server that failed.
 */
#ifndef ZB_DISK_SERVER_H
#define ZB_DISK_SERVER_H

#include <jansson.h>
#include <sys/types.h>

#include "core/error.h"
#include "disk.h"
#include "diskmodel/dm_stats.h"

enum disk_mark { DISK_MARK_START, DISK_MARK_END, DISK_MARK_TOTAL };

struct disk_server {
	int disk;	   /* index into the disk set */
	char *name;	   /* the disk's */
	char *model;	   /* its model's */
	pid_t pid;	   /* -1 once reaped */
	int pidfd;	   /* readable when the process exits; -1 if pidfd_open is unavailable */
	int status;	   /* its wait status, once reaped */
	char *log, *stats; /* paths in the cell directory */
	/* DISK_MARK_START, DISK_MARK_END: the measured window's; DISK_MARK_TOTAL: the last
	 * reading, when the server stops */
	struct dm_stats mark[3];
	int marked[3];
};

struct disk_servers {
	struct disk_server *s;
	int n;
	int stopped; /* disk_servers_stop() ran: their ends are ours, not a failure */
};

/* Where the filter is: $ZBENCH_DISKMODEL, else build/zbench-diskmodel.so beside the zbench
 * executable (malloc'd). */
char *disk_server_filter_path(void);

/* Start a server for every modelled disk of `config` (the disk set's, in its order) in `dir`,
 * each answering the NBD handshake before this returns; sets each such disk's nbd_fd. On a
 * failure (nbdkit missing, the filter refusing a figure, no handshake within 20 s) every
 * server started is stopped and -1 returned with err saying which disk and the tail of its log.
 * A cell without modelled disks starts nothing (sv->n 0). */
int disk_servers_start(struct disk_servers *sv, struct disk_set *ds, const json_t *config,
		       const char *dir, struct zb_error *err);
/* The index of a server that has exited (reaped: its status kept), or -1 if all run. After
 * disk_servers_stop() none counts as exited. */
int disk_servers_exited(struct disk_servers *sv);
/* "disk 'd0' (model hdd-7200): nbdkit exited with status 1; its log ends: ..." into buf. */
void disk_server_describe_exit(const struct disk_server *s, char *buf, size_t len);
/* Read each server's counters as mark `m` (once: a later call keeps the first reading). A
 * server whose file cannot be read keeps that mark unset. */
void disk_servers_mark(struct disk_servers *sv, enum disk_mark m);
/* The record's "disk_model" object (docs/results.md): per disk name the model's name, the
 * counters over the window (end minus start) with their means, and "total" (the whole cell);
 * NULL when the cell had no modelled disk. */
json_t *disk_servers_record(const struct disk_servers *sv);
/* Read the totals, then stop every server (SIGTERM, then SIGKILL after a grace), reap it,
 * remove its counters' file; the log stays in the cell directory. Safe to call twice. */
void disk_servers_stop(struct disk_servers *sv);
void disk_servers_release(struct disk_servers *sv);
/* For a resumed run: SIGKILL every nbdkit whose command line names a file under RUN_DIR/cells/
 * (vm_reap_processes()), the servers of a killed zbench's orphaned VMs. How many. */
int disk_servers_reap(const char *run_dir);

#endif
