#!/bin/sh
# docs/github-actions.yml, parsed (python3-yaml): every actions/cache save and restore names the
# same path and the same key once ${{ env.X }} and ${{ needs.J.outputs.K }} are resolved (the
# cache's version hashes the path: a restore to another path always misses), that path is the
# ZBENCH_CACHE_DIR the job's zbench uses, and zbench is never run in a nested container (whose
# mounts would move the cache), and the report job writes a job summary. Prints
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
print("workflow: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY
