#!/bin/sh
# docs/github-actions.yml, parsed (python3-yaml): every actions/cache save and restore names the
# same path and the same key once ${{ env.X }} and ${{ needs.J.outputs.K }} are resolved (the
# cache's version hashes the path: a restore to another path always misses), that path is the
# ZBENCH_CACHE_DIR the job's zbench uses, and zbench is never run in a nested container (whose
# mounts would move the cache), and the report job writes a job summary. Then the pull-request
# job `pr`, step by step, locally: its merge base and the two recipes in a scratch OpenZFS git
# repository, the recipes parsed by zbench, the image and run steps naming them (not run: they
# build OpenZFS and boot VMs), and its gate step on recorded interleaved runs (10 pairs, decided:
# no VM), which must pass one and fail the other with the job summary written. Prints
# "workflow: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
WORKFLOW=${WORKFLOW:-docs/github-actions.yml}
exec python3 - "$WORKFLOW" <<'PY'
import re, sys
try:
    import yaml
except ImportError:
    print("workflow: python3-yaml is missing (make deps installs it)")
    print("workflow: 0 passed, 1 failed")
    sys.exit(1)

passed = failed = 0
def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("  ok   " + what)
    else:
        failed += 1
        print("  FAIL " + what + (": " + detail if detail else ""))

wf = yaml.safe_load(open(sys.argv[1]))
jobs = wf.get("jobs", {})
top_env = wf.get("env", {}) or {}

def resolve(text, env, job_name, depth=0):
    """Expand ${{ env.X }} and ${{ needs.J.outputs.K }} (recursively); other expressions stay."""
    if not isinstance(text, str) or depth > 5:
        return text
    def sub(m):
        expr = m.group(1).strip()
        e = re.fullmatch(r"env\.(\w+)", expr)
        if e and e.group(1) in env:
            return str(env[e.group(1)])
        n = re.fullmatch(r"needs\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if n and n.group(1) in jobs:
            out = (jobs[n.group(1)].get("outputs") or {}).get(n.group(2))
            if out is not None:
                return resolve(out, job_env(n.group(1)), n.group(1), depth + 1)
        s = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if s:
            for st in jobs[job_name].get("steps", []):
                if st.get("id") == s.group(1):
                    # a key computed by a step: "key=VALUE" written to $GITHUB_OUTPUT
                    km = re.search(s.group(2) + r"=(.*?)\"?\s*>>\s*\"?\$GITHUB_OUTPUT", st.get("run", ""))
                    if km:
                        return resolve(km.group(1), job_env(job_name), job_name, depth + 1)
        return m.group(0)
    return re.sub(r"\$\{\{(.*?)\}\}", sub, text)

def job_env(name):
    env = dict(top_env)
    env.update(jobs[name].get("env") or {})
    return env

def pr_job(job, check):
    """Run the pull-request job's steps that need no VM, in a scratch workspace."""
    import json, os, shutil, subprocess, tempfile
    if not job:
        check("a pull-request job 'pr'", False)
        return
    steps = {st.get("id"): st for st in job.get("steps", []) if st.get("id")}
    for sid in ("merge-base", "recipes", "images", "run", "gate"):
        check("pr: has step %s" % sid, sid in steps)
    if any(s not in steps for s in ("merge-base", "recipes", "images", "run", "gate")):
        return
    check("pr: runs on pull requests only", "pull_request" in str(job.get("if", "")))
    root = os.getcwd()
    ws = tempfile.mkdtemp(prefix="zbench-workflow.")
    env = dict(os.environ, **{k: str(v) for k, v in (job.get("env") or {}).items()})
    env.update(BASE_REF="main", GITHUB_OUTPUT=os.path.join(ws, "output"),
               GITHUB_STEP_SUMMARY=os.path.join(ws, "summary"), HOME=ws,
               GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    def sh(script, cwd=ws):
        return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env,
                              capture_output=True, text=True)
    try:
        # zbench/ as the job has it: a directory (so its .. is the workspace) with what the
        # steps use
        os.mkdir(os.path.join(ws, "zbench"))
        for name in ("zbench", "images", "bench"):
            os.symlink(os.path.join(root, name), os.path.join(ws, "zbench", name))
        z = os.path.join(ws, "zfs")
        r = sh("git init -q -b main zfs && cd zfs && echo a > f && git add f && git commit -qm base"
               " && git update-ref refs/remotes/origin/main HEAD && git checkout -qb pr"
               " && echo b >> f && git commit -qam change")
        check("pr: a scratch OpenZFS repository with a PR branch", r.returncode == 0, r.stderr)
        base = sh("git -C zfs rev-parse main").stdout.strip()
        r = sh(steps["merge-base"]["run"])
        out = open(env["GITHUB_OUTPUT"]).read() if os.path.exists(env["GITHUB_OUTPUT"]) else ""
        check("pr/merge-base: names the merge base and checks it out beside the PR",
              r.returncode == 0 and ("base=%s" % base) in out and
              open(os.path.join(ws, "zfs-base", "f")).read() == "a\n", r.stderr + out)
        r = sh(steps["recipes"]["run"])
        ok = r.returncode == 0
        for side, d in (("base", "zfs-base"), ("pr", "zfs")):
            p = os.path.join(ws, "recipes", side + ".json")
            try:
                rec = json.load(open(p))
                ok = ok and rec["zfs_source"] == {"kind": "dir", "path": os.path.join(ws, d),
                                                  "configure": []}
            except (OSError, ValueError, KeyError):
                ok = False
        check("pr/recipes: base and PR recipes build OpenZFS from the two trees", ok, r.stderr)
        for side in ("base", "pr"):
            r = subprocess.run([os.path.join(root, "zbench"), "image", "path",
                                os.path.join(ws, "recipes", side + ".json")],
                               capture_output=True, text=True, env=env)
            check("pr/recipes: zbench reads recipe %s (image path: 0 or 1, not 2)" % side,
                  r.returncode in (0, 1), r.stderr)
        img, run = steps["images"]["run"], steps["run"]["run"]
        check("pr/images, pr/run: build both recipes and run them interleaved, base as A",
              "recipes/base.json" in img and "recipes/pr.json" in img and
              run.index("recipes/base.json") < run.index("recipes/pr.json") and " -i " in run)
        # the gate step on recorded interleaved runs: decided in 10 pairs, so --adaptive boots
        # nothing
        g = os.path.join(root, "tests/golden/compare-gate")
        for case, want, word in (("tiers-pass", 0, "passed"), ("count-fail", 3, "FAILED")):
            rd = os.path.join(ws, "runs", "pr")
            shutil.rmtree(rd, ignore_errors=True)
            os.makedirs(rd)
            shutil.copy(os.path.join(g, "run-fail/rundir/manifest.json"), rd)
            with open(os.path.join(rd, "cells.jsonl"), "w") as f:
                for side in ("a", "b"):
                    for line in open(os.path.join(g, case, side, "cells.jsonl")):
                        rec = json.loads(line)
                        rec["side"] = side.upper()
                        f.write(json.dumps(rec) + "\n")
            open(env["GITHUB_STEP_SUMMARY"], "w").close()
            r = sh(steps["gate"]["run"])
            summ = open(env["GITHUB_STEP_SUMMARY"]).read()
            check("pr/gate on %s: exit %d and the verdict in the job summary" % (case, want),
                  r.returncode == want and ("zbench compare: " + word) in summ,
                  "exit %d, summary %r, %s" % (r.returncode, summ[:200], r.stderr[-300:]))
    finally:
        shutil.rmtree(ws, ignore_errors=True)

caches = []  # (job, kind, path, key)
for name, job in jobs.items():
    env = job_env(name)
    for st in job.get("steps", []):
        uses = st.get("uses", "")
        m = re.match(r"actions/cache(/save|/restore)?@", uses)
        if not m:
            continue
        w = st.get("with") or {}
        kind = {"/save": "save", "/restore": "restore", None: "restore+save"}[m.group(1)]
        path = resolve(str(w.get("path", "")).strip(), env, name)
        key = resolve(str(w.get("key", "")).strip(), env, name)
        caches.append((name, kind, path, key))
        cache_dir = resolve(str(env.get("ZBENCH_CACHE_DIR", "")), env, name)
        check("%s: the cache path is the job's ZBENCH_CACHE_DIR" % name,
              path == cache_dir, "path %r, ZBENCH_CACHE_DIR %r" % (path, cache_dir))

check("some step saves the image cache", any("save" in c[1] for c in caches))
check("some step restores the image cache", any("restore" in c[1] for c in caches))
paths = {c[2] for c in caches}
keys = {c[3] for c in caches}
check("every save and restore names one path", len(paths) == 1, repr(sorted(paths)))
check("every save and restore names one key", len(keys) == 1, repr(sorted(keys)))

for name, job in jobs.items():
    for st in job.get("steps", []):
        run = st.get("run", "") or ""
        if "zbench run" in run or "zbench image build" in run:
            check("%s: zbench runs in the job's own container, not a nested docker run" % name,
                  "docker run" not in run)
summary = [n for n, j in jobs.items()
           for st in j.get("steps", []) if "GITHUB_STEP_SUMMARY" in (st.get("run") or "")]
check("a job writes the report to $GITHUB_STEP_SUMMARY", bool(summary))
pr_job(jobs.get("pr"), check)
print("workflow: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY
