/* builder/image/image_zfs_src.c: the recipe's "zfs_source" checked, and the two identities computed
 * from content (a throw-away git checkout and tarball): the build tree's identity ignores the
 * patches and a dirty tree's diff, the key does not; neither depends on the path. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "image/image_zfs_src.h"

static const struct {
	const char *json;
	int ok;
	const char *msg; /* a part of the error */
} load_cases[] = {
	{ "{\"kind\": \"debian\"}", 1, NULL },
	{ "{\"kind\": \"debian\", \"package\": \"zfs-linux\", \"version\": \"2.1.11-1+deb12u1\","
	  " \"patches\": [\"p.patch\"], \"configure\": [\"--enable-debug\", \"--with-x=y z\"]}",
	  1, NULL },
	{ "{\"kind\": \"debian\", \"version\": \"1:2.1\", \"sha256\": "
	  "\"0709c2160cc8a428c55657251eb345aade4496596eefcdb8c5e66716319db3bb\"}",
	  1, NULL },
	{ "{\"kind\": \"debian\", \"sha256\": "
	  "\"0709c2160cc8a428c55657251eb345aade4496596eefcdb8c5e66716319db3bb\"}",
	  0, "with a \"version\"" },
	{ "{\"kind\": \"debian\", \"version\": \"2\", \"sha256\": \"abc\"}", 0, "SHA-256" },
	{ "{\"kind\": \"tarball\", \"path\": \"zfs.tar.gz\"}", 1, NULL },
	{ "{\"kind\": \"dir\", \"path\": \"/src/zfs\"}", 1, NULL },
	{ "{\"kind\": \"svn\"}", 0, "must be 'debian', 'tarball' or 'dir'" },
	{ "{\"kind\": \"dir\"}", 0, "takes a \"path\"" },
	{ "{\"kind\": \"debian\", \"path\": \"x\"}", 0, "no \"path\"" },
	{ "{\"kind\": \"debian\", \"package\": \"-oDir=/tmp\"}", 0, "plain" },
	{ "{\"kind\": \"debian\", \"version\": \"1 2\"}", 0, "plain" },
	{ "{\"kind\": \"debian\", \"configure\": [\"CFLAGS=-O0\"]}", 0, "option" },
	{ "{\"kind\": \"debian\", \"configure\": [\"--x\\n--y\"]}", 0, "control" },
	{ "{\"kind\": \"debian\", \"configure\": \"--x\"}", 0, "must be an array" },
	{ "{\"kind\": \"debian\", \"patches\": [\"\"]}", 0, "file name" },
	{ "{\"kind\": \"debian\", \"patches\": [1]}", 0, "file name" },
	{ "{\"kind\": \"debian\", \"extra\": 1}", 0, "extra" },
};

static void test_load(void)
{
	for (size_t i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
		json_t *j = json_loads(load_cases[i].json, 0, NULL);
		struct zfs_src zs;
		struct zb_error err = { 0 };
		int rc = zfs_src_load("images/r.json", j, &zs, &err);

		CHECK((rc == 0) == load_cases[i].ok);
		if (!load_cases[i].ok && !strstr(err.msg, load_cases[i].msg))
			fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i, err.msg,
				load_cases[i].msg);
		CHECK(load_cases[i].ok || strstr(err.msg, load_cases[i].msg));
		if (rc == 0 && zs.n_patches)
			CHECK_STR(zs.patches[0].path, "images/p.patch");
		zfs_src_release(&zs);
		json_decref(j);
	}
}

static int sh(const char *cmd)
{
	return system(cmd);
}

/* Identities of `text` (a "zfs_source" object; freed) for root "r". */
static int key_of(char *text, struct zfs_src *zs)
{
	json_t *j = json_loads(text, 0, NULL);
	struct zb_error err = { 0 };
	int rc = zfs_src_load("/recipe.json", j, zs, &err);

	if (rc == 0)
		rc = zfs_src_key(zs, "r", &err);
	if (rc < 0)
		fprintf(stderr, "key: %s\n", err.msg);
	zs->configure = NULL; /* borrowed from j */
	json_decref(j);
	free(text);
	return rc;
}

static void test_dir_key(const char *tmp)
{
#define DIR_SPEC(tmp) xasprintf("{\"kind\": \"dir\", \"path\": \"%s/repo\"}", (tmp))
	struct zfs_src clean, dirty, moved, patched;
	char *cmd = xasprintf(
	    "cd %s && git init -q repo && cd repo && echo 'int x = 1;' > a.c && git add a.c && "
	    "git -c user.name=t -c user.email=t@t commit -qm one && cp -r ../repo ../moved && "
	    "echo 'diff' > ../p.patch",
	    tmp);

	CHECK(sh(cmd) == 0);
	free(cmd);
	CHECK(key_of(DIR_SPEC(tmp), &clean) == 0);
	CHECK(!clean.dirty && strlen(clean.commit) == 40);
	/* the same commit at another path: the same identities */
	CHECK(key_of(xasprintf("{\"kind\": \"dir\", \"path\": \"%s/moved\"}", tmp), &moved) == 0);
	CHECK_STR(moved.key, clean.key);
	CHECK_STR(moved.build_id, clean.build_id);
	/* someone else's checkout, named through "..": git's ownership check passes for it */
	if (geteuid() == 0) {
		struct zfs_src other;

		cmd = xasprintf("chown -R 65534:65534 %s/moved", tmp);
		CHECK(sh(cmd) == 0);
		free(cmd);
		CHECK(key_of(xasprintf("{\"kind\": \"dir\", \"path\": \"%s/repo/../moved\"}", tmp),
			     &other) == 0);
		CHECK_STR(other.key, clean.key);
		zfs_src_release(&other);
	}
	/* a one-line change: dirty, another key, the same build tree */
	cmd = xasprintf("echo 'int x = 2;' > %s/repo/a.c", tmp);
	CHECK(sh(cmd) == 0);
	free(cmd);
	/* the checkout's own configuration runs nothing of its author's (git runs as root) */
	cmd = xasprintf("cd %s/repo && git config core.fsmonitor 'touch %s/ran-fsmonitor' && "
			"git config diff.external 'touch %s/ran-diff'",
			tmp, tmp, tmp);
	CHECK(sh(cmd) == 0);
	free(cmd);
	CHECK(key_of(DIR_SPEC(tmp), &dirty) == 0);
	cmd = xasprintf("test ! -e %s/ran-fsmonitor && test ! -e %s/ran-diff", tmp, tmp);
	CHECK(sh(cmd) == 0);
	free(cmd);
	CHECK(dirty.dirty && strstr(dirty.diff, "+int x = 2;"));
	CHECK(strcmp(dirty.key, clean.key) != 0);
	CHECK_STR(dirty.build_id, clean.build_id);
	/* a patch: another key, the same build tree */
	CHECK(key_of(xasprintf("{\"kind\": \"dir\", \"path\": \"%s/repo\", \"patches\": "
			       "[\"%s/p.patch\"]}",
			       tmp, tmp),
		     &patched) == 0);
	CHECK(strcmp(patched.key, dirty.key) != 0);
	CHECK_STR(patched.build_id, clean.build_id);
	CHECK(strlen(patched.patches[0].sha) == 64);
	zfs_src_release(&clean);
	zfs_src_release(&dirty);
	zfs_src_release(&moved);
	zfs_src_release(&patched);
}

static void test_tarball_key(const char *tmp)
{
#define TAR_SPEC(tmp) xasprintf("{\"kind\": \"tarball\", \"path\": \"%s/z.tar\"}", (tmp))
	struct zfs_src a, b;
	char *cmd =
	    xasprintf("cd %s && mkdir -p t/zfs && echo 1 > t/zfs/f && tar -cf z.tar -C t zfs", tmp);
	char sha[65];
	struct zb_error err = { 0 };
	char *tar = xasprintf("%s/z.tar", tmp);

	CHECK(sh(cmd) == 0);
	free(cmd);
	CHECK(key_of(TAR_SPEC(tmp), &a) == 0);
	CHECK(sha256_file_hex(tar, sha, &err) == 0);
	CHECK_STR(a.source_sha, sha);
	cmd = xasprintf("cd %s && echo 2 > t/zfs/f && tar -cf z.tar -C t zfs", tmp);
	CHECK(sh(cmd) == 0);
	free(cmd);
	CHECK(key_of(TAR_SPEC(tmp), &b) == 0);
	CHECK(strcmp(a.build_id, b.build_id) != 0 && strcmp(a.key, b.key) != 0);
	free(tar);
	zfs_src_release(&a);
	zfs_src_release(&b);
}

/* The record's "zfs_build" from a source image's manifest: what was built, by hash, no host
 * path; a packaged module's version; nothing for a manifest without ZFS. */
static void test_record(void)
{
	json_t *m = json_loads(
	    "{\"zfs_version\": \"2.1.11-1+deb12u1\", \"zfs_source\": {\"kind\": \"debian\", "
	    "\"build_tree\": \"bt\", \"key\": \"k1\", \"dirty\": false, \"configure\": [], "
	    "\"build_seconds\": 12.5, \"package\": {\"name\": \"zfs-linux\", \"version\": "
	    "\"2.1.11-1+deb12u1\", \"dsc\": \"zfs-linux_2.1.11-1+deb12u1.dsc\"}, "
	    "\"sha256\": \"s1\", \"patches\": [{\"path\": \"/home/u/p/one.patch\", "
	    "\"sha256\": \"p1\"}], \"script_sha256\": \"x\", \"module_version\": "
	    "\"2.1.11-1+deb12u1\"}}",
	    0, NULL);
	json_t *r = zfs_src_record(m);
	json_t *p;
	char *text;

	CHECK(r != NULL);
	if (!r) {
		json_decref(m);
		return;
	}
	CHECK_STR(json_string_value(json_object_get(r, "kind")), "debian");
	CHECK_STR(json_string_value(json_object_get(r, "sha256")), "s1");
	CHECK_STR(json_string_value(json_object_get(r, "key")), "k1");
	CHECK_STR(json_string_value(json_object_get(r, "version")), "2.1.11-1+deb12u1");
	CHECK_STR(json_string_value(json_object_get(r, "module_version")), "2.1.11-1+deb12u1");
	CHECK(json_is_false(json_object_get(r, "dirty")));
	p = json_array_get(json_object_get(r, "patches"), 0);
	CHECK_STR(json_string_value(json_object_get(p, "name")), "one.patch");
	CHECK_STR(json_string_value(json_object_get(p, "sha256")), "p1");
	text = json_dumps(r, 0);
	CHECK(text && !strstr(text, "/home/u")); /* never a host path */
	CHECK(!json_object_get(r, "build_seconds"));
	free(text);
	json_decref(r);
	json_decref(m);

	/* a checkout: the commit and the dirty diff's hash */
	m = json_loads("{\"zfs_source\": {\"kind\": \"dir\", \"path\": \"/src/zfs\", \"commit\": "
		       "\"c1\", \"dirty\": true, \"diff_sha256\": \"d1\", \"patches\": []}}",
		       0, NULL);
	r = zfs_src_record(m);
	CHECK(r != NULL);
	CHECK_STR(json_string_value(json_object_get(r, "commit")), "c1");
	CHECK(json_is_true(json_object_get(r, "dirty")));
	CHECK_STR(json_string_value(json_object_get(r, "diff_sha256")), "d1");
	CHECK(!json_object_get(r, "path"));
	json_decref(r);
	json_decref(m);

	/* a packaged module (zfs-dkms, a cloud image) */
	m = json_loads("{\"zfs_version\": \"2.1.11-1+deb12u1\"}", 0, NULL);
	r = zfs_src_record(m);
	CHECK_STR(json_string_value(json_object_get(r, "kind")), "package");
	CHECK_STR(json_string_value(json_object_get(r, "module_version")), "2.1.11-1+deb12u1");
	json_decref(r);
	json_decref(m);

	m = json_loads("{}", 0, NULL);
	CHECK(zfs_src_record(m) == NULL);
	json_decref(m);
}

/* "Racy git": an edit to the same size in the second the index was written looks clean by
 * its stat data alone; git re-reads such entries only while they are not older than the index
 * file. zbench reads a copy of the index, which must keep the index's times, or a copy made a
 * second later calls the tree clean (the sanitizer lane, slower, hit it). */
static void test_racy_dirty(const char *tmp)
{
	struct zfs_src racy;
	int same = 0;
	char *cmd;

	for (int attempt = 0; attempt < 5 && !same; attempt++) {
		cmd = xasprintf("cd %s && rm -rf racy && git init -q racy && cd racy && "
				"echo 'int x = 1;' > a.c && git add a.c && "
				"git -c user.name=t -c user.email=t@t commit -qm one && "
				"echo 'int y = 3;' > a.c && "
				"test \"$(stat -c %%Y .git/index)\" = \"$(stat -c %%Z a.c)\"",
				tmp);
		same = sh(cmd) == 0;
		free(cmd);
	}
	CHECK(same); /* five tries, each a few ms: one lands in a single second */
	sleep(2);    /* the copy is made seconds after the index */
	CHECK(key_of(xasprintf("{\"kind\": \"dir\", \"path\": \"%s/racy\"}", tmp), &racy) ==
	      0);
	CHECK(racy.dirty && racy.diff && strstr(racy.diff, "+int y = 3;"));
	zfs_src_release(&racy);
}

int main(void)
{
	char tmp[] = "/tmp/zbench-zfs-src-XXXXXX";
	char *rm;

	/* the script the key hashes: the repository's, whatever the test binary's directory */
	setenv("ZBENCH_ZFS_BUILD", "builder/image/image_zfs_build.sh", 1);
	test_load();
	test_record();
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_dir_key(tmp);
	test_racy_dirty(tmp);
	test_tarball_key(tmp);
	rm = xasprintf("rm -rf %s", tmp);
	sh(rm);
	free(rm);
	return check_summary("zfs_src");
}
