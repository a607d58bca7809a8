#!/bin/sh
# Hostile qcow2 files for `zbench image import` and `zbench run -i FILE.qcow2` (docs/security.md,
# docs/images.md "Importing a cloud image"): a qcow2 may name host files that QEMU would read as
# the disk (an external data file: incompatible feature bit 2 and the data-file header
# extension; a backing file and its format extension). Each is refused by the header check
# (builder/image/qcow2.c) before anything else opens the file: no hashing, no overlay, no libguestfs,
# nothing in the cache. The fixtures are made with qemu-img and by patching header bytes.
# libguestfs is pointed at a QEMU that does not exist (LIBGUESTFS_HV), so a regression fails
# fast instead of booting its appliance. Prints "qcow2: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=${ZBENCH:-$(pwd)/zbench}
t=$(mktemp -d /tmp/zbench-sec-qcow2.XXXXXX)
. tests/check.inc
if ! command -v qemu-img >/dev/null; then
	echo "qcow2: qemu-img missing (builder/install-deps.sh installs it)"
	echo "qcow2: 0 passed, 1 failed"
	exit 1
fi
export LIBGUESTFS_BACKEND=direct LIBGUESTFS_HV=$t/no-such-qemu

# patch FILE OFFSET HEXBYTES: write bytes into the header
patch() {
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); f.write(bytes.fromhex(sys.argv[3]))' "$@"
}

# The host file a hostile image would copy into the cache: a secret of our own.
printf 'SECRET-%s\n' "$$" >"$t/secret"
cp "$t/secret" "$t/secret.orig"
# qemu-img creates (truncates) the data file it is given: make it name a scratch file, then
# point the name at the secret by patching the extension (same length).
(
	cd "$t" || exit 1
	: >scratch
	qemu-img create -q -f qcow2 clean.qcow2 64M &&
		qemu-img create -q -f qcow2 -o data_file="$t/scratch",data_file_raw=on df.qcow2 64M &&
		python3 - "$t" <<'EOF'
import sys
t = sys.argv[1]
b = open(t + "/df.qcow2", "rb").read()
old, new = (t + "/scratch").encode(), (t + "/secret\0").encode()
assert b.count(old) == 1 and len(old) == len(new)
open(t + "/df.qcow2", "wb").write(b.replace(old, new))
EOF
	# the data-file bit cleared, the extension left
	cp df.qcow2 df-ext-only.qcow2 && patch df-ext-only.qcow2 79 00 &&
		# the bit set on a clean image, no extension
		cp clean.qcow2 df-bit-only.qcow2 && patch df-bit-only.qcow2 79 04 &&
		# a backing file, from qemu-img
		qemu-img create -q -f qcow2 -b "$t/secret" -F raw back.qcow2 64M &&
		# a backing-format extension alone (type 0xe2792aca, 3 bytes "raw") after the header
		cp clean.qcow2 backfmt.qcow2 && patch backfmt.qcow2 112 e2792aca00000003726177000000000000000000 &&
		# an incompatible feature bit from the future
		cp clean.qcow2 future.qcow2 && patch future.qcow2 78 01 &&
		# a version 2 image with a data-file extension
		qemu-img create -q -f qcow2 -o compat=0.10 v2.qcow2 64M &&
		cp v2.qcow2 v2-df.qcow2 && patch v2-df.qcow2 72 4441544100000008"$(printf '/etc/pwd' | od -An -tx1 | tr -d ' \n')"00000000
) || { echo "qcow2: cannot make the fixtures"; echo "qcow2: 0 passed, 1 failed"; exit 1; }
check "fixtures: qemu-img sees the data file (the attack is real)" \
	sh -c "qemu-img info -U --output=json -f qcow2 '$t/df.qcow2' | grep -q '\"data-file\": \"$t/secret\"'"

refused_early() { # NAME TEXT: import of NAME refused with TEXT, before anything else ran
	f=$t/$1
	timeout 120 "$ZBENCH" image import --cache-dir "$t/cache" "$f" >"$t/$1.out" 2>"$t/$1.err"
	rc=$?
	[ "$rc" -eq 2 ] || { echo "    exit $rc"; cat "$t/$1.err"; return 1; }
	grep -qF "$2" "$t/$1.err" || { cat "$t/$1.err"; return 1; }
	grep -qF "'$f'" "$t/$1.err" || return 1
	! grep -q "^hashing\|as image\|libguestfs\|overlay on" "$t/$1.err" || { cat "$t/$1.err"; return 1; }
	[ -z "$(ls "$t/cache/images" 2>/dev/null)" ]
}
check "data file (bit 2 + extension naming a host file): refused first" \
	refused_early df.qcow2 "external data file (incompatible feature bit 2)"
check "data-file extension without the bit: refused first" \
	refused_early df-ext-only.qcow2 "external data file (header extension 0x44415441)"
check "data-file bit without the extension: refused first" \
	refused_early df-bit-only.qcow2 "incompatible feature bit 2"
check "backing file: refused first" refused_early back.qcow2 "it has a backing file"
check "backing-format extension alone: refused first" \
	refused_early backfmt.qcow2 "backing file format (header extension 0xe2792aca)"
check "an unknown incompatible feature bit: refused first" \
	refused_early future.qcow2 "incompatible features zbench does not know (0x100)"
check "version 2 with a data-file extension: refused first" \
	refused_early v2-df.qcow2 "external data file (header extension"
check "the clean fixtures pass the header check (qemu-img info agrees)" \
	sh -c "qemu-img info -U -f qcow2 '$t/clean.qcow2' >/dev/null && qemu-img info -U -f qcow2 '$t/v2.qcow2' >/dev/null"

# zbench run -i FILE.qcow2 looks the import up through the same check
timeout 120 "$ZBENCH" run -i "$t/df.qcow2" -o "$t/run" matrices/quick.json >/dev/null 2>"$t/run.err"
rc=$?
check "run -i df.qcow2: refused (exit 2) by the same check, nothing created" \
	[ "$rc" -eq 2 -a ! -e "$t/run" ]
check "run -i df.qcow2: the refusal names the data file" \
	grep -q "external data file" "$t/run.err"
check "the secret is unchanged and nowhere in the cache" \
	sh -c "cmp -s '$t/secret' '$t/secret.orig' && ! grep -rqs SECRET- '$t/cache'"

echo "qcow2: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$t"; else echo "  kept: $t"; fi
[ "$failed" -eq 0 ]
