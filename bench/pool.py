"""Benchmark the GPU pool (`agentforge.pool`): scheduling overhead, slot utilisation, Ray vs local.

Run: .venv/bin/python bench/pool.py [--quick] [--n N] [--util-jobs M] [--no-ray]

(a) per-job scheduling overhead, local backend, 1 slot: (wall of N no-op jobs through the pool - wall of the same N
    no-op child processes launched directly, one after another) / N; target <= 50 ms. Rounds alternate direct and pool
    runs so that both see the same machine load. The direct child imports the job module only; the pool's child also
    imports agentforge.attempt (its runner), shown separately.
(b) slot utilisation: M queued jobs that each sleep 0.2 s, on 2 slots: sum(busy) / (2 x wall), target >= 95 %, with busy
    measured two ways: slot occupancy (claim -> commit, from the queue) and the job function's own run time.
(c) Ray backend vs local: the same N no-op jobs on 2 slots each; (wall_ray - wall_local) / N, and Ray's start time.
Prints figures; asserts nothing (these machines are shared and noisy: targets live here, not in unit tests).
"""
import argparse, os, secrets, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / 'tests'
sys.path.insert(0, str(TESTS))
from agentforge.pool import Pool   # noqa: E402
from agentforge.runner import work   # noqa: E402


def direct(n:int, code:str) -> float:
    "Wall seconds to run `n` children `python -c code` one after another (cwd = tests/)."
    t = time.perf_counter()
    for _ in range(n): subprocess.run([sys.executable, '-c', code], cwd=TESTS, check=True)
    return time.perf_counter() - t


def through_pool(n:int, slots:int=1, backend:str='local', fn:str='pool_jobs:noop', args=None) -> tuple:
    "Wall seconds to run `n` jobs through a fresh pool (submit excluded); returns (wall, pool)."
    root = Path(tempfile.mkdtemp(prefix='bench-pool-'))
    pool = Pool(root, capacity={'inner': slots}, cwd=TESTS)
    for i in range(n): pool.submit(fn, args(i) if args else {})
    t = time.perf_counter(); stats = work(pool, 'inner', slots=slots, backend=backend, lease_s=30)
    wall = time.perf_counter() - t
    assert stats == {'done': n}, stats
    return wall, pool


def overhead(n:int, rounds:int):
    print(f'(a) scheduling overhead, local backend, 1 slot, {n} no-op jobs x {rounds} rounds')
    plain = 'import pool_jobs; pool_jobs.noop(None)'
    runner = 'import agentforge.attempt, pool_jobs'
    per = []
    for r in range(rounds):
        d = direct(n, plain); w, pool = through_pool(n); i = direct(n, runner)
        per.append((w - d) / n)
        print(f'    round {r + 1}: direct {d / n * 1e3:6.1f} ms/job   pool {w / n * 1e3:6.1f} ms/job   '
              f'overhead {(w - d) / n * 1e3:5.1f} ms/job   (of which the runner import: {(i - d) / n * 1e3:4.1f} ms)')
        shutil.rmtree(pool.root)
    print(f'    median overhead: {statistics.median(per) * 1e3:.1f} ms/job (target <= 50 ms)\n')


def utilisation(m:int, seconds:float=0.2, slots:int=2):
    print(f'(b) slot utilisation: {m} jobs sleeping {seconds} s on {slots} slots')
    ledger = Path(tempfile.mkdtemp(prefix='bench-util-')) / 'ledger'
    wall, pool = through_pool(m, slots, fn='pool_jobs:busy', args=lambda i: {'seconds': seconds, 'ledger': str(ledger)})
    occ = sum(j.finished - j.started for j in pool.jobs())
    fn_busy = sum(float(b) - float(a) for a, b in (l.split() for l in ledger.read_text().splitlines()))
    print(f'    wall {wall:.2f} s (ideal {m * seconds / slots:.2f} s)')
    print(f'    slot occupancy (claim -> commit): {occ / (slots * wall) * 100:5.1f} %  (target >= 95 %)')
    print(f'    job-function time only          : {fn_busy / (slots * wall) * 100:5.1f} %  '
          f'(the rest of each slot: a fresh interpreter per attempt, ~{(occ - fn_busy) / m * 1e3:.0f} ms/job)\n')
    shutil.rmtree(pool.root); shutil.rmtree(ledger.parent)


def ray_vs_local(n:int):
    print(f'(c) Ray backend vs local, {n} no-op jobs on 2 slots')
    d = tempfile.mkdtemp(prefix='ray', dir='/tmp')            # short: Ray's unix-socket paths are limited
    (Path(d) / 'auth_token').write_text(secrets.token_hex(32))
    os.environ.update(RAY_AUTH_MODE='token', RAY_AUTH_TOKEN_PATH=f'{d}/auth_token')   # before importing Ray
    import ray
    t = time.perf_counter(); ray.init(num_cpus=2, include_dashboard=False, _temp_dir=d, log_to_driver=False)
    print(f'    ray.init (local, token auth): {time.perf_counter() - t:.1f} s')
    try:
        through_pool(2, 2, 'ray')                            # warm the Ray workers
        wl, pl = through_pool(n, 2, 'local'); wr, pr = through_pool(n, 2, 'ray')
        print(f'    local {wl / n * 1e3:6.1f} ms/job   ray {wr / n * 1e3:6.1f} ms/job   '
              f'ray overhead {(wr - wl) / n * 1e3:5.1f} ms/job\n')
        shutil.rmtree(pl.root); shutil.rmtree(pr.root)
    finally:
        ray.shutdown(); shutil.rmtree(d, ignore_errors=True)


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true', help='smaller run: N=20, M=40, 2 rounds')
    ap.add_argument('--n', type=int, default=None, help='no-op jobs for (a) and (c) (default 100)')
    ap.add_argument('--util-jobs', type=int, default=None, help='0.2 s jobs for (b) (default 200)')
    ap.add_argument('--rounds', type=int, default=3, help='alternating rounds for (a)')
    ap.add_argument('--no-ray', action='store_true', help='skip (c)')
    a = ap.parse_args()
    n, m, rounds = a.n or (20 if a.quick else 100), a.util_jobs or (40 if a.quick else 200), 2 if a.quick else a.rounds
    print(f'python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}\n')
    overhead(n, rounds)
    utilisation(m)
    if not a.no_ray: ray_vs_local(n)
