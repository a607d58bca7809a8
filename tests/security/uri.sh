#!/bin/sh
# Hostile libvirt URIs from files (docs/security.md, docs/libvirt.md "URIs from files"): a
# matrix's libvirt_uri, a run manifest's options.libvirt_uri and hosts on --resume, and the
# matrix inside a manifest on replay may not choose a connection that runs a program
# (qemu+ext:///system?command=PROG, ?command=/?netcat= on ssh), reads host files (?socket=,
# ?keyfile=) or writes under a root (qemu:///embed?root=/). Each is refused before anything is
# created, with the URI named and the command line named as the one that may choose it, and
# PROG never runs. The command line may still choose them (checked without connecting: `matrix
# check` does not connect). No VM boots: the refusals come before the image is looked up, and
# the recipe named is missing, so a regression fails on the image, never boots.
# Prints "uri: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=${ZBENCH:-$(pwd)/zbench}
t=$(mktemp -d /tmp/zbench-sec-uri.XXXXXX)
. tests/check.inc

# refused RC WANT ERRFILE TEXT [REGEX]: exit status WANT, TEXT (and REGEX) in ERRFILE
refused() {
	[ "$1" -eq "$2" ] && grep -qF -- "$4" "$3" && { [ $# -lt 5 ] || grep -q -- "$5" "$3"; }
}

# PROG: leaves a mark if anything ever runs it
prog=$t/prog
printf '#!/bin/sh\ntouch %s/ran\n' "$t" >"$prog"
chmod +x "$prog"

matrix() { # URI -> a matrix on stdout
	python3 - "$1" <<'EOF'
import json, sys
m = json.load(open("matrices/quick.json"))
m["backend"] = "libvirt"
m["libvirt_uri"] = sys.argv[1]
print(json.dumps(m, indent=2))
EOF
}

# matrix check: every hostile URI refused at its line and column, the URI and the reason named
n=0
for case in \
	"qemu+ext:///system?command=$prog|transport 'ext'" \
	"qemu+ssh://h/system?command=$prog|parameter 'command'" \
	"qemu+ssh://h/system?netcat=$prog|parameter 'netcat'" \
	"qemu+ssh://h/system?no_tty=1;command=$prog|parameter 'command'" \
	"qemu+ssh://h/system?c%6fmmand=$prog|'%'" \
	"qemu+unix:///system?socket=/run/x.sock|parameter 'socket'" \
	"qemu+ssh://h/system?keyfile=/root/.ssh/id_rsa|parameter 'keyfile'" \
	"qemu+tls://h/system?no_verify=1|parameter 'no_verify'" \
	"qemu:///embed?root=/|embedded driver" \
	"qemu+ssh://-oProxyCommand=touch/system|not a plain host name"; do
	uri=${case%|*} why=${case##*|}
	n=$((n + 1))
	matrix "$uri" >"$t/m$n.json"
	"$ZBENCH" matrix check "$t/m$n.json" >/dev/null 2>"$t/m$n.err"
	check "matrix check refuses '$uri': exit 2, $why, at FILE:LINE:COL" \
		refused $? 2 "$t/m$n.err" "$why" \
		"^zbench: $t/m$n.json:[0-9]*:[0-9]*: libvirt_uri: .*only the command line"
done
matrix "qemu+ssh://me@bench-1:2222/system?no_tty=1" >"$t/ok.json"
check "matrix check accepts a plain remote URI (qemu+ssh://me@bench-1:2222/system?no_tty=1)" \
	"$ZBENCH" matrix check "$t/ok.json" >/dev/null 2>&1

# --resume: the manifest's options.libvirt_uri and options.hosts are from a file
rundir() { # DIR KEY VALUE: a run directory whose manifest says options.KEY = VALUE
	mkdir -p "$1"
	: >"$1/cells.jsonl"
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
d, key, value = sys.argv[1:]
m = json.load(open("matrices/quick.json"))
man = {"zbench": "0.1.0", "status": "interrupted", "backend": "libvirt",
       "matrix": {"path": "matrices/quick.json", "content": m, "sha256": "0" * 64},
       "image": {"recipe": "images/no-such-recipe.json", "hash": "0" * 64},
       "options": {key: value}}
json.dump(man, open(d + "/manifest.json", "w"), indent=2)
EOF
}
rundir "$t/r1" libvirt_uri "qemu+ext:///system?command=$prog"
"$ZBENCH" run --resume "$t/r1" >/dev/null 2>"$t/r1.err"
check "--resume: options.libvirt_uri qemu+ext:///...?command=PROG refused (exit 2, 'ext' named)" \
	refused $? 2 "$t/r1.err" "from a file: the transport 'ext'"
rundir "$t/r2" hosts "qemu:///system=2,qemu+ext:///system?command=$prog"
"$ZBENCH" run --resume "$t/r2" >/dev/null 2>"$t/r2.err"
check "--resume: options.hosts with an ext host refused (exit 2, the run named)" \
	refused $? 2 "$t/r2.err" "transport 'ext'" "run '$t/r2': --hosts: "
rundir "$t/r3" hosts "qemu:///embed?root=/"
"$ZBENCH" run --resume "$t/r3" >/dev/null 2>"$t/r3.err"
check "--resume: options.hosts qemu:///embed?root=/ refused" \
	refused $? 2 "$t/r3.err" "embedded driver writes under its root"

# replay: the manifest's matrix is a matrix from a file
python3 - "$t" "$prog" <<'EOF'
import json, sys
t, prog = sys.argv[1:]
m = json.load(open("matrices/quick.json"))
m["backend"] = "libvirt"
m["libvirt_uri"] = "qemu+ext:///system?command=" + prog
man = {"zbench": "0.1.0", "status": "complete", "backend": "libvirt",
       "matrix": {"path": "matrices/quick.json", "content": m, "sha256": "0" * 64},
       "image": {"recipe": t + "/no-such-recipe.json", "hash": "0" * 64}, "options": {}}
json.dump(man, open(t + "/replay.json", "w"), indent=2)
EOF
"$ZBENCH" replay -o "$t/replayed" "$t/replay.json" >/dev/null 2>"$t/replay.err"
rc=$?
check "replay: the manifest's matrix with an ext libvirt_uri refused (exit 2, nothing created)" \
	refused $rc 2 "$t/replay.err" "transport 'ext'"
check "replay: nothing created" [ ! -e "$t/replayed" ]

check "PROG never ran" [ ! -e "$t/ran" ]

echo "uri: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$t"; else echo "  kept: $t"; fi
[ "$failed" -eq 0 ]
