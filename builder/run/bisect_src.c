/* The checkout a bisect made (builder/run/bisect_src.h). */
#include "bisect_src.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/util.h"

void bisect_src_from_state(const char *text, struct bisect_src *id)
{
	cleanup_json json_t *st = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	json_t *src = json_object_get(st, "src");
	json_t *dev = json_object_get(src, "dev"), *ino = json_object_get(src, "ino");

	id->made = json_is_integer(dev) && json_is_integer(ino);
	id->dev = id->made ? json_integer_value(dev) : 0;
	id->ino = id->made ? json_integer_value(ino) : 0;
}

json_t *bisect_src_json(const struct bisect_src *id)
{
	return id->made
		   ? json_pack("{s:I, s:I}", "dev", (json_int_t)id->dev, "ino", (json_int_t)id->ino)
		   : NULL;
}

int bisect_src_create(int dirfd, const char *name, const char *shown, struct bisect_src *id,
		      struct zb_error *err)
{
	cleanup_close int fd = -1;
	struct stat st;

	if (mkdirat(dirfd, name, 0700) < 0)
		return error_sys(err, errno, "creating '%s'", shown);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* the umask may only have taken bits away: set exactly 0700 */
	if (fd < 0 || fchmod(fd, 0700) < 0 || fstat(fd, &st) < 0)
		return error_sys(err, errno, "'%s'", shown);
	id->made = 1;
	id->dev = (long long)st.st_dev;
	id->ino = (long long)st.st_ino;
	return 0;
}

int bisect_src_check(int dirfd, const char *name, const char *shown, const struct bisect_src *id,
		     struct zb_error *err)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return error_sys(err, errno, "'%s'", shown);
	if (!S_ISDIR(st.st_mode))
		return error_set(err, EINVAL, "'%s' is not a directory (a symlink?)", shown);
	if (!id->made || (long long)st.st_dev != id->dev || (long long)st.st_ino != id->ino ||
	    st.st_uid != geteuid() || (st.st_mode & 07777) != 0700)
		return error_set(err, EPERM,
				 "'%s' is not the checkout this bisect made (recorded in its "
				 "state, yours, mode 0700): git does not run in it; remove it or "
				 "choose another -o",
				 shown);
	return 0;
}
