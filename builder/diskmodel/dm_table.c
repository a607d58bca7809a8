/* THE table of disk models: one row per drive, each figure with its source.
 *
 * A figure's source is a datasheet of a drive of the class or a published measurement of one.
 * "calibrated" figures were fitted so that the model, run in virtual time under the loads of
 * bench/disk-models.sh, lands on the published measurement named there (tests/unit/
 * test_dm_calib.c holds those measurements and fails beyond 15%); "assumed" ones have no source
 * and matter little to the calibrated rows (docs/disks.md, "Service-time models"). */
#include "dm_int.h"

#define P(id) [DM_P_##id]

/* sources, named once */
#define SATA_LINK   "SATA 6 Gb/s: 600 MB/s line rate, about 550 MB/s after framing"
#define NCQ	    "Serial ATA NCQ: 32 command tags"
#define AF_512E	    "Advanced Format 512e: 4096-byte physical, 512-byte logical sectors (IDEMA)"
#define WCE_ON	    "ATA/SCSI drives ship with the volatile write cache enabled"
#define FLUSH_IDLE  "assumed: a FLUSH with nothing to destage"
#define VNAND_PAGE  "16 KiB V-NAND page"
#define CLIENT_PLP  "client drive: no power-loss protection"
#define FRESH	    "fresh out of the box (set >1 for a written-over drive)"
#define NO_CACHE    "no volatile cache: SYNCHRONIZE CACHE costs only its command"
#define SECTORS_512 "reports 512-byte sectors"
#define BOT	    "USB Mass Storage Class Bulk-Only Transport 1.0: one command (CBW, data, CSW) at a time"
#define ST1000DM010 "Seagate BarraCuda ST1000DM010 datasheet"
#define WD40EFRX    "WD Red WD40EFRX datasheet (2879-800002)"
#define HDD_CLASS                                                                                  \
	"class figure: desktop 3.5\" datasheets give about 1 ms track-to-track, 16-20 ms full "    \
	"stroke"
#define ZONES	"zoned recording: the inner tracks hold about half the outer tracks' sectors"
#define RA_SEGS "assumed: drives of the class split their buffer into 8-32 read segments"
#define PRO850	"Samsung SSD 850 PRO datasheet (2014)"
#define S980	"Samsung 980 1TB specifications (guru3d review, 2021)"
#define CEPH980                                                                                    \
	"calibrated: fio -fsync=1 4k QD1 on a Samsung 980, 574 IOPS (igene.tw, Choosing SSDs for " \
	"Ceph)"
#define CRUZER                                                                                     \
	"calibrated: SanDisk Cruzer 16GB, CrystalDiskMark seq read 23.8, write 4.4 MB/s "          \
	"(hardcoregames.biz roundup); Cruzer Blade 16GB 4K reads 4.19 MB/s, 256K random writes "   \
	"0.51 MB/s (davidsommers.com)"
#define LEXAR                                                                                      \
	"calibrated: Lexar JumpDrive S75 128GB, CrystalDiskMark 5.2 (acex.com.au, 2017): seq "     \
	"136/98 MB/s, 4KiB Q1T1 1010 read / 141 write IOPS"

const struct dm_model dm_models[] = {
	{ .name = "hdd-7200",
	  .description = "7200 rpm 3.5\" SATA disk, 512e (Seagate BarraCuda ST1000DM010 class)",
	  .cls = DM_CLASS_HDD,
	  .bus = "virtio-scsi",
	  .logical_block_size = 512,
	  .v = { P(WRITE_CACHE) = 1, P(CACHE_MB) = 64, P(QUEUE_DEPTH) = 32, P(BUS_MBS) = 550,
		 P(CMD_US) = 300, P(FLUSH_US) = 100, P(PHYSICAL_BLOCK) = 4096, P(RPM) = 7200,
		 P(SEEK_TRACK_MS) = 1, P(SEEK_AVG_MS) = 8.5, P(SEEK_FULL_MS) = 18,
		 P(XFER_OUTER_MBS) = 210, P(XFER_INNER_MBS) = 105, P(READAHEAD_KB) = 2048,
		 P(RA_SEGMENTS) = 16 },
	  .src = { P(WRITE_CACHE) = WCE_ON,
		   P(CACHE_MB) = ST1000DM010 ": 64 MB multisegmented cache", P(QUEUE_DEPTH) = NCQ,
		   P(BUS_MBS) = SATA_LINK,
		   P(CMD_US) =
		       "calibrated: 4k QD1 random reads at 73 IOPS (Hitachi Deskstar 7K80 "
		       "spec 4.5.5.2: 4096 random reads in 55.9 s, command overhead included)",
		   P(FLUSH_US) = FLUSH_IDLE,
		   P(PHYSICAL_BLOCK) = AF_512E, P(RPM) = ST1000DM010 ": 7200 rpm",
		   P(SEEK_TRACK_MS) = HDD_CLASS,
		   P(SEEK_AVG_MS) =
		       "Seagate Barracuda 7200.14 datasheet: average seek, read <8.5 ms",
		   P(SEEK_FULL_MS) = HDD_CLASS,
		   P(XFER_OUTER_MBS) = ST1000DM010 ": 210 MB/s max. sustained data rate, OD read",
		   P(XFER_INNER_MBS) = ZONES, P(READAHEAD_KB) = RA_SEGS,
		   P(RA_SEGMENTS) = RA_SEGS } },
	{ .name = "hdd-5400",
	  .description = "5400 rpm class 3.5\" SATA disk, 512e (WD Red WD40EFRX class)",
	  .cls = DM_CLASS_HDD,
	  .bus = "virtio-scsi",
	  .logical_block_size = 512,
	  .v = { P(WRITE_CACHE) = 1, P(CACHE_MB) = 64, P(QUEUE_DEPTH) = 32, P(BUS_MBS) = 550,
		 P(CMD_US) = 300, P(FLUSH_US) = 100, P(PHYSICAL_BLOCK) = 4096, P(RPM) = 5400,
		 P(SEEK_TRACK_MS) = 1.5, P(SEEK_AVG_MS) = 12, P(SEEK_FULL_MS) = 24,
		 P(XFER_OUTER_MBS) = 150, P(XFER_INNER_MBS) = 75, P(READAHEAD_KB) = 2048,
		 P(RA_SEGMENTS) = 16 },
	  .src = { P(WRITE_CACHE) = WCE_ON, P(CACHE_MB) = WD40EFRX ": 64 MB cache",
		   P(QUEUE_DEPTH) = NCQ, P(BUS_MBS) = SATA_LINK,
		   P(CMD_US) = "calibrated: 4k QD1 random reads at 57 IOPS (superuser.com, 'very "
			       "slow random read/write on HDD', a 5400 rpm disk: 17.6 ms a read)",
		   P(FLUSH_US) = FLUSH_IDLE,
		   P(PHYSICAL_BLOCK) = AF_512E, P(RPM) = WD40EFRX ": 5400 rpm class",
		   P(SEEK_TRACK_MS) = HDD_CLASS,
		   P(SEEK_AVG_MS) =
		       "superuser.com, same answer: that 5400 rpm disk's 12 ms average "
		       "seek",
		   P(SEEK_FULL_MS) = HDD_CLASS,
		   P(XFER_OUTER_MBS) = WD40EFRX ": 150 MB/s host to/from drive, sustained",
		   P(XFER_INNER_MBS) = ZONES, P(READAHEAD_KB) = RA_SEGS,
		   P(RA_SEGMENTS) = RA_SEGS } },
	{ .name = "sata-ssd",
	  .description = "SATA SSD without power-loss protection (Samsung 850 PRO class)",
	  .cls = DM_CLASS_SSD,
	  .bus = "virtio-scsi",
	  .logical_block_size = 512,
	  .v = { P(WRITE_CACHE) = 1, P(CACHE_MB) = 512, P(BUS_MBS) = 550, P(CMD_US) = 10,
		 P(FLUSH_US) = 1100, P(PHYSICAL_BLOCK) = 4096, P(READ_US) = 70, P(PROGRAM_US) = 600,
		 P(WRITE_US) = 1, P(WRITE_MBS) = 520, P(PAGE_KB) = 16, P(CHANNELS) = 8, P(DIES) = 4,
		 P(PLP) = 0, P(STEADY_WA) = 1 },
	  .src = { P(WRITE_CACHE) = WCE_ON,
		   P(CACHE_MB) = PRO850 ": 512 MB LPDDR2 cache (256/512 GB models)",
		   P(BUS_MBS) = SATA_LINK,
		   P(CMD_US) = "calibrated: QD32 random reads at 100,000 IOPS (Tom's Hardware 850 "
			       "Pro review, 2014) and QD1 writes at 36,000 (" PRO850 ")",
		   P(FLUSH_US) = "assumed equal to the Samsung 980's (" CEPH980 ")",
		   P(PHYSICAL_BLOCK) = "4 KiB flash mapping unit",
		   P(READ_US) = "calibrated: QD1 random reads at about 10,000 IOPS (Tom's Hardware "
				"850 Pro review, 2014)",
		   P(PROGRAM_US) = "assumed: a V-NAND page program, 0.5-1 ms",
		   P(WRITE_US) = "calibrated with cmd_us",
		   P(WRITE_MBS) = PRO850 ": sequential write 520 MB/s",
		   P(PAGE_KB) = VNAND_PAGE,
		   P(CHANNELS) = "Samsung MEX controller: 8 channels",
		   P(DIES) = "assumed: 4 dies a channel (256 GB of 86 Gbit dies)",
		   P(PLP) = CLIENT_PLP,
		   P(STEADY_WA) = FRESH } },
	{ .name = "nvme",
	  .description = "NVMe SSD, PCIe 3.0 x4, no power-loss protection (Samsung 980 1TB class)",
	  .cls = DM_CLASS_SSD,
	  .bus = "nvme",
	  .logical_block_size = 512,
	  .v = { P(WRITE_CACHE) = 1, P(CACHE_MB) = 1024, P(BUS_MBS) = 3940, P(CMD_US) = 2,
		 P(FLUSH_US) = 1100, P(PHYSICAL_BLOCK) = 512, P(READ_US) = 45, P(PROGRAM_US) = 600,
		 P(WRITE_US) = 4, P(WRITE_MBS) = 3000, P(PAGE_KB) = 16, P(CHANNELS) = 8,
		 P(DIES) = 16, P(PLP) = 0, P(STEADY_WA) = 1 },
	  .src = { P(WRITE_CACHE) = "NVMe volatile write cache present and enabled",
		   P(CACHE_MB) = "assumed: the part of the SLC cache a cell's disk can fill",
		   P(BUS_MBS) = "PCIe 3.0 x4: 3.94 GB/s",
		   P(CMD_US) = "calibrated: QD32 random reads at 500K IOPS (" S980 ")",
		   P(FLUSH_US) = CEPH980,
		   P(PHYSICAL_BLOCK) = "formatted with 512-byte LBAs (the default LBA format)",
		   P(READ_US) = "calibrated: QD1 random reads at 17,000 IOPS (" S980 ")",
		   P(PROGRAM_US) = "assumed: a TLC page program, 0.5-1 ms",
		   P(WRITE_US) = "calibrated: QD1 random writes at 54,000 IOPS (" S980 ")",
		   P(WRITE_MBS) = S980 ": sequential write 3000 MB/s",
		   P(PAGE_KB) = VNAND_PAGE,
		   P(CHANNELS) = "Samsung Pablo controller: 8 channels",
		   P(DIES) =
		       "calibrated: QD32 random reads at 500K IOPS (" S980 "): 16 read units a "
		       "channel (dies x planes)",
		   P(PLP) = CLIENT_PLP,
		   P(STEADY_WA) = FRESH } },
	{ .name = "usb2-stick",
	  .description = "USB 2.0 flash stick, Bulk-Only Transport (SanDisk Cruzer Blade class)",
	  .cls = DM_CLASS_USB,
	  .bus = "virtio-scsi",
	  .logical_block_size = 512,
	  .v = { P(QUEUE_DEPTH) = 1, P(BUS_MBS) = 24.5, P(CMD_US) = 500, P(FLUSH_US) = 0,
		 P(PHYSICAL_BLOCK) = 512, P(READ_US) = 300, P(WRITE_MBS) = 4.4,
		 P(ERASE_BLOCK_KB) = 4096, P(MERGE_MS) = 450, P(OPEN_BLOCKS) = 2 },
	  .src = { P(QUEUE_DEPTH) = BOT, P(BUS_MBS) = CRUZER,
		   P(CMD_US) = "assumed: a BOT command's three transfers on a 480 Mb/s bus, about "
			       "half a millisecond (with read_us, calibrated to " CRUZER ")",
		   P(FLUSH_US) = NO_CACHE,
		   P(PHYSICAL_BLOCK) = SECTORS_512, P(READ_US) = CRUZER,
		   P(WRITE_MBS) = CRUZER,
		   P(ERASE_BLOCK_KB) = "assumed: 4 MiB MLC erase block (allocation unit)",
		   P(MERGE_MS) = CRUZER,
		   P(OPEN_BLOCKS) = "assumed: cheap controllers keep 1-4 blocks open" } },
	{ .name = "usb3-stick",
	  .description = "USB 3.0 flash stick, Bulk-Only Transport (Lexar JumpDrive S75 class)",
	  .cls = DM_CLASS_USB,
	  .bus = "virtio-scsi",
	  .logical_block_size = 512,
	  .v = { P(QUEUE_DEPTH) = 1, P(BUS_MBS) = 164, P(CMD_US) = 400, P(FLUSH_US) = 0,
		 P(PHYSICAL_BLOCK) = 512, P(READ_US) = 550, P(WRITE_MBS) = 107,
		 P(ERASE_BLOCK_KB) = 4096, P(MERGE_MS) = 6.6, P(OPEN_BLOCKS) = 4 },
	  .src = { P(QUEUE_DEPTH) = BOT, P(BUS_MBS) = LEXAR,
		   P(CMD_US) = "assumed: a BOT command's three transfers (with read_us, calibrated "
			       "to " LEXAR ")",
		   P(FLUSH_US) = NO_CACHE,
		   P(PHYSICAL_BLOCK) = SECTORS_512, P(READ_US) = LEXAR,
		   P(WRITE_MBS) = LEXAR,
		   P(ERASE_BLOCK_KB) = "assumed: 4 MiB erase block (allocation unit)",
		   P(MERGE_MS) = LEXAR,
		   P(OPEN_BLOCKS) = "assumed: controllers of the class keep a few blocks open" } },
};

const size_t dm_model_count = sizeof(dm_models) / sizeof(dm_models[0]);

int dm_model_physical_block(const struct dm_model *m)
{
	return m->v[DM_P_PHYSICAL_BLOCK] > 0 ? (int)m->v[DM_P_PHYSICAL_BLOCK] : 512;
}

int dm_model_rotation_rate(const struct dm_model *m)
{
	return m->v[DM_P_RPM] > 0 ? (int)m->v[DM_P_RPM] : 1;
}
