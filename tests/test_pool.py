"""The GPU pool (`agentforge.pool`) under faults and load, on both backends.

Real child processes, a real SQLite file, a real local Ray cluster; nothing of the pool is mocked. The job functions
live in `tests/pool_jobs.py` and are imported by the pool's child processes by name. Leases are 1–2 s so that expiry
tests stay short. Every local-backend test runs twice: with a fresh interpreter per attempt (`cold`) and with attempts
forked from a warm process (`warm`, `agentforge.warm`), the way inner jobs run.
"""
import json, os, secrets, shutil, signal, subprocess, sys, tempfile, threading, time
from pathlib import Path
import pytest
from agentforge.pool import Pool
import agentforge.runner as runner
from agentforge.runner import drain, status_table
from agentforge.durable import CheckpointCorrupt, ResumeMismatch, latest_checkpoint, save_checkpoint, verify_checkpoint
import pool_jobs

TESTS = Path(__file__).parent
# An orchestrator in its own process: argv = root, until_idle (0/1), lease_s, worker name.
ORCH = ("import sys; from agentforge.pool import Pool; from agentforge.runner import work; "
        "p = Pool(sys.argv[1], capacity={'inner': 2}, backoff_s=0.05, cwd=sys.argv[5]); "
        "print(work(p, 'inner', until_idle=sys.argv[2] == '1', lease_s=float(sys.argv[3]), grace_s=1.0, name=sys.argv[4], "
        "warm=('json',) if sys.argv[6] == 'warm' else None), flush=True)")
MODE = {'warm': False}  # set per test by the `mode` fixture


@pytest.fixture(params=['cold', 'warm'], autouse=True)
def mode(request, monkeypatch):
    "Run the test with cold attempts, then with warm ones (every runner.work call in this process, and the orchestrators)."
    if request.param == 'warm':
        if 'ray' in request.node.name: pytest.skip('the Ray backend runs attempts cold in either mode')
        work = runner.work
        monkeypatch.setattr(runner, 'work', lambda p, *a, **kw: work(p, *a, **{'warm': ('json',), **kw}))
    monkeypatch.setitem(MODE, 'warm', request.param == 'warm')
    return request.param


def alive(pid) -> bool:
    "True if `pid` is a live process (a zombie counts as gone)."
    try: return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] not in 'ZX'
    except (FileNotFoundError, ProcessLookupError): return False


def wait_for(cond, timeout=20.0, what='condition'):
    end = time.monotonic() + timeout
    while not (v := cond()):
        if time.monotonic() > end: raise AssertionError(f'timed out waiting for {what}')
        time.sleep(0.02)
    return v


def mkpool(tmp_path, **kw) -> Pool:
    return Pool(tmp_path / 'q', **{'capacity': {'inner': 2}, 'backoff_s': 0.05, 'cwd': TESTS, **kw})


def in_thread(pool, **kw):
    "Run runner.work on pool in a thread; return (thread, stats dict filled when it ends)."
    out = {}
    t = threading.Thread(target=lambda: out.update(runner.work(pool, 'inner', **kw)), daemon=True); t.start()
    return t, out


def orchestrator(pool, name, until_idle=False, lease_s=2.0):
    return subprocess.Popen([sys.executable, '-c', ORCH, str(pool.root), '1' if until_idle else '0', str(lease_s), name, str(TESTS),
                             'warm' if MODE['warm'] else 'cold'],
                            cwd=TESTS, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def ledger_lines(path) -> list:
    return path.read_text().splitlines() if path.exists() else []


def done_events(pool, jid) -> int:
    return sum(e['event'] == 'done' for e in pool.events(jid))


# 1 ------------------------------------------------------------------------------------------------------------------
def test_round_trip(tmp_path):
    "submit -> work -> result: Job fields filled, the child ran in cwd with job_dir = jobs/<id>/work, committed once."
    pool = mkpool(tmp_path)
    jid = pool.submit('pool_jobs:echo', {'a': 1, 'b': [2, 3]}, key='rt', priority=3, max_attempts=2, time_limit_s=60)
    job = pool.get(jid)
    assert (job.state, job.attempts, job.key, job.priority, job.max_attempts, job.time_limit_s) == ('queued', 0, 'rt', 3, 2, 60)
    stats = runner.work(pool, 'inner', lease_s=5)
    job = pool.get(jid)
    assert stats == {'done': 1}
    assert job.state == 'done' and job.attempts == 1 and job.error is None and job.worker and job.pid
    assert job.result == {'args': {'a': 1, 'b': [2, 3]}, 'attempt': 1, 'cwd': str(TESTS), 'job_dir': str(pool.job_dir(jid))}
    assert job.created <= job.started <= job.finished and job.lease is None
    assert done_events(pool, jid) == 1 and [e['event'] for e in pool.events(jid)] == ['submitted', 'claimed', 'done']
    assert (pool.root / 'jobs' / jid / 'attempt-1' / 'result.json').exists()
    assert pool.counts() == {'inner': {'done': 1}}
    assert 'done' in status_table(pool.root)
    with pytest.raises(ValueError, match='unknown pool'): pool.submit('pool_jobs:noop', pool='gpu-x')
    with pytest.raises(ValueError, match='module:function'): pool.submit('pool_jobs.noop')


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason='one core: torch uses one thread anyway, so this check could not fail')
def test_attempts_run_with_the_pools_torch_threads(tmp_path, monkeypatch):
    """Warm or cold, an attempt runs torch with the pool's OMP_NUM_THREADS. A warm process imported torch once: if it
    did so with the machine's default (all cores), two forked jobs on two cores each ran two threads, and the demo's
    inner jobs trained several times slower (retros/2026-12-01-warm-jobs-ran-every-core.md)."""
    monkeypatch.delenv('OMP_NUM_THREADS', raising=False)                        # the warm process's own default: all cores
    pool = mkpool(tmp_path, env={'OMP_NUM_THREADS': '1'})
    jid = pool.submit('pool_jobs:threads', {})
    runner.work(pool, 'inner', lease_s=10, warm=('torch',) if MODE['warm'] else None)
    assert pool.get(jid).result == {'torch': 1, 'omp': '1'}


def test_a_warm_child_sets_torch_threads_from_its_env_whatever_the_warm_process_had(tmp_path, monkeypatch):
    "The second guard on its own: a warm process started with all cores, a job asking for one thread gets one."
    if (os.cpu_count() or 1) < 2: pytest.skip('one core: torch uses one thread anyway, so this check could not fail')
    from agentforge.warm import Warm
    monkeypatch.delenv('OMP_NUM_THREADS', raising=False)
    w = Warm(('torch',), cwd=str(TESTS))
    try:
        pool = mkpool(tmp_path, env={'OMP_NUM_THREADS': '1'})
        jid = pool.submit('pool_jobs:threads', {})
        monkeypatch.setattr('agentforge.runner._start_warm', lambda preload, env=None: w)   # this warm process, not the pool's
        runner.work(pool, 'inner', lease_s=10, warm=('torch',))
        assert pool.get(jid).result == {'torch': 1, 'omp': '1'}
    finally: w.close()


def test_a_kept_warm_process_serves_the_next_call_and_a_dead_one_is_replaced(tmp_path):
    """work(keep_warm=True), as an outer run calls it once per step: the second call's attempts fork from the first
    call's warm process (no second 4-7 s start); a kept process that died is replaced; close_kept stops it. Without
    keep_warm each call starts and stops its own."""
    pool = mkpool(tmp_path)
    def served(**kw):
        jid = pool.submit('pool_jobs:parent', {}, key=secrets.token_hex(4))
        runner.work(pool, 'inner', lease_s=10, warm=('json',), **kw)
        return pool.get(jid).result['ppid']
    try:
        a, b = served(keep_warm=True), served(keep_warm=True)
        kept = list(runner._KEPT.values())
        assert a == b != os.getpid() and len(kept) == 1 and kept[0].p.pid == a and kept[0].alive()
        kept[0].p.kill(); kept[0].p.wait()
        c = served(keep_warm=True)
        assert c not in (a, os.getpid()) and alive(c) and not kept[0].dir.exists()
    finally: runner.close_kept()
    assert not runner._KEPT and not alive(c)
    d, e = served(), served()
    assert d != e and not alive(d) and not alive(e)


# 2 ------------------------------------------------------------------------------------------------------------------
def test_same_key_from_10_threads(tmp_path):
    "10 threads submit the same key at once (released by a barrier): one id, one row, and the job runs once."
    pool, ledger = mkpool(tmp_path), tmp_path / 'ledger'
    barrier, ids, errors = threading.Barrier(10), [], []
    def submit():
        try: barrier.wait(); ids.append(pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': 'once'}, key='episode-7'))
        except Exception as e: errors.append(e)
    threads = [threading.Thread(target=submit) for _ in range(10)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert errors == [] and len(ids) == 10 and len(set(ids)) == 1
    assert pool.db.execute('SELECT count(*) FROM jobs').fetchone()[0] == 1
    runner.work(pool, 'inner', lease_s=5)
    pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': 'once'}, key='episode-7')   # a late retry: still no new job
    runner.work(pool, 'inner', lease_s=5)
    assert ledger_lines(ledger) == ['start once 1', 'done once']
    with pytest.raises(ValueError, match='already submitted'): pool.submit('pool_jobs:noop', key='episode-7')


# 3 ------------------------------------------------------------------------------------------------------------------
def test_kill_child_mid_job(tmp_path):
    "SIGKILL the job's process mid-run: the attempt is counted as failed, retried, and done once."
    pool, ledger = mkpool(tmp_path), tmp_path / 'ledger'
    jid = pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': 'k', 'sleep': 1.0})
    t, stats = in_thread(pool, lease_s=2)
    wait_for(lambda: 'start k 1' in ledger_lines(ledger), what='job start')
    pid = pool.get(jid).pid
    os.kill(pid, signal.SIGKILL)
    t.join(30); assert not t.is_alive()
    job = pool.get(jid)
    assert (job.state, job.attempts) == ('done', 2) and job.result == {'name': 'k', 'attempt': 2}
    failed = [e for e in pool.events(jid) if e['event'] == 'failed']
    assert len(failed) == 1 and 'killed by signal SIGKILL' in failed[0]['detail']
    assert ledger_lines(ledger) == ['start k 1', 'start k 2', 'done k'] and done_events(pool, jid) == 1
    assert stats == {'failed': 1, 'done': 1} and not alive(pid)


# 4 ------------------------------------------------------------------------------------------------------------------
def test_kill_mid_checkpoint_resumes_from_last_verified(tmp_path):
    "Kill while step 3's checkpoint is half written: the retry resumes from step-2; the result equals an uninterrupted run."
    pool = mkpool(tmp_path)
    meta = {'config': 'c1'}
    jid = pool.submit('pool_jobs:ckpt_train', {'steps': 5, 'slow_write': 0.4, 'meta': meta})
    ref = pool.submit('pool_jobs:ckpt_train', {'steps': 5, 'meta': meta}, key='uninterrupted')
    jd = pool.job_dir(jid)
    t, _ = in_thread(pool, lease_s=2)
    wait_for(lambda: (jd / 'writing-3').exists(), what='checkpoint 3 being written')
    os.kill(pool.get(jid).pid, signal.SIGKILL)
    t.join(60); assert not t.is_alive()
    job, clean = pool.get(jid), pool.get(ref)
    assert (job.state, job.attempts, clean.attempts) == ('done', 2, 1)
    assert job.result['state'] == clean.result['state'] == pool_jobs.ckpt_state(5)
    assert job.result['resumed_from'] == 'step-2' and clean.result['resumed_from'] is None
    assert any('.tmp-' in s and 'unfinished' in s for s in job.result['skipped'])   # the half-written one, named
    assert [verify_checkpoint(jd / 'ckpt' / f'step-{s}')['step'] for s in range(1, 6)] == [1, 2, 3, 4, 5]


def test_corrupt_newest_checkpoint_falls_back_and_says_which_file(tmp_path):
    "A flipped byte in the newest checkpoint: the job resumes from the previous one and names the file in its log and result."
    pool, meta = mkpool(tmp_path), {'config': 'c1'}
    jid = pool.submit('pool_jobs:ckpt_train', {'steps': 4, 'meta': meta})
    ck = pool.job_dir(jid) / 'ckpt'
    for s in (1, 2): save_checkpoint(ck, s, {'state.json': json.dumps({'state': pool_jobs.ckpt_state(s)}).encode()}, meta)
    bad = ck / 'step-2' / 'state.json'; bad.write_text(json.dumps({'state': 12345}))
    runner.work(pool, 'inner', lease_s=5)
    job = pool.get(jid)
    assert job.state == 'done' and job.result['state'] == pool_jobs.ckpt_state(4)
    assert job.result['resumed_from'] == 'step-1' and job.result['skipped'] == [f'{bad}: sha256 mismatch']
    log = (pool.root / 'jobs' / jid / 'attempt-1' / 'log.txt').read_text()
    assert 'skipping checkpoint' in log and 'step-2/state.json: sha256 mismatch' in log


def test_checkpoint_helpers_and_changed_config(tmp_path):
    "Manifest checks (missing file, bad manifest), and a changed config refuses to resume, in-process and as a job."
    ck = tmp_path / 'ck'
    assert latest_checkpoint(ck) is None
    for s in (1, 2, 3): save_checkpoint(ck, s, lambda d: (d / 'w.bin').write_bytes(bytes([s]) * 100), {'config': 'a', 'lr': 0.1})
    (ck / 'step-3' / 'w.bin').unlink(); (ck / 'step-2' / 'manifest.json').write_text('{not json')
    skipped = []
    assert latest_checkpoint(ck, skipped=skipped).name == 'step-1'
    assert 'step-3/w.bin: missing' in skipped[0] and 'unreadable manifest' in skipped[1]
    with pytest.raises(CheckpointCorrupt, match='missing'): verify_checkpoint(ck / 'step-3')
    with pytest.raises(ResumeMismatch, match='config, lr'): latest_checkpoint(ck, meta={'config': 'b', 'lr': 0.2})
    assert latest_checkpoint(ck, meta={'config': 'a', 'lr': 0.1}).name == 'step-1'
    with pytest.raises(OSError): save_checkpoint(ck, 4, lambda d: (d / 'x' / 'y').write_bytes(b''))   # a failing writer
    assert sorted(p.name for p in ck.iterdir()) == ['step-1', 'step-2', 'step-3']                  # leaves nothing behind
    pool = mkpool(tmp_path)                              # as a job: the changed config is a failed attempt, not a resume
    jid = pool.submit('pool_jobs:ckpt_train', {'steps': 2, 'meta': {'config': 'c2'}}, max_attempts=1)
    save_checkpoint(pool.job_dir(jid) / 'ckpt', 1, {'state.json': b'{"state": 1}'}, {'config': 'c1'})
    runner.work(pool, 'inner', lease_s=5)
    job = pool.get(jid)
    assert job.state == 'dead' and 'ResumeMismatch' in job.error and "config: 'c1' then, 'c2' now" in job.error


# 5 ------------------------------------------------------------------------------------------------------------------
def test_sigterm_then_sigkill_orchestrator_then_restart(tmp_path):
    """SIGTERM an orchestrator process (graceful: its 2 running jobs are killed and released, attempt not counted, so a
    new one takes them at once), SIGKILL the next one (its children die with it via PDEATHSIG; their leases expire),
    then a third finishes everything: all 6 jobs done, each completion committed and ledgered exactly once.
    Starts may repeat (killed attempts really started); completions may not."""
    pool, ledger = mkpool(tmp_path), tmp_path / 'ledger'
    ids = [pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': f'j{i}', 'sleep': 0.8}, key=f'k{i}') for i in range(6)]
    running = lambda: [j for j in pool.jobs(state='running') if j.pid]
    a = orchestrator(pool, 'A')
    first = wait_for(lambda: len(running()) == 2 and running(), what='A running 2 jobs')
    a.send_signal(signal.SIGTERM); out_a = a.communicate(timeout=20)[0]
    assert a.returncode == 0, out_a
    assert pool.counts() == {'inner': {'queued': 6}} and all(pool.get(j.id).attempts == 0 for j in first)
    assert not any(alive(j.pid) for j in first)
    assert sum(e['event'] == 'released' for e in pool.events()) == 2
    b = orchestrator(pool, 'B')
    second = wait_for(lambda: len(running()) == 2 and running(), what='B running 2 jobs')
    assert {j.id for j in second} == {j.id for j in first}      # the released jobs come first, with no lease wait
    b.kill(); b.wait(10)
    wait_for(lambda: not any(alive(j.pid) for j in second), timeout=5, what='B children to die with B (PDEATHSIG)')
    assert {j.state for j in pool.jobs() if j.id in {s.id for s in second}} == {'running'}   # until their lease expires
    c = orchestrator(pool, 'C', until_idle=True)
    out_c = c.communicate(timeout=60)[0]
    assert c.returncode == 0, out_c
    jobs = [pool.get(i) for i in ids]
    assert {j.state for j in jobs} == {'done'}
    assert all(done_events(pool, i) == 1 for i in ids)
    lines = ledger_lines(ledger)
    assert sorted(l for l in lines if l.startswith('done')) == [f'done j{i}' for i in range(6)]   # none run twice to completion
    assert sum(j.attempts for j in jobs) == 6 + 2          # SIGKILLed attempts count, released ones don't
    assert any(e['event'] == 'lease expired' for e in pool.events())


# 6 ------------------------------------------------------------------------------------------------------------------
def test_hung_orchestrator_loses_its_lease(tmp_path):
    """SIGSTOP an orchestrator and its job: the lease expires, another worker requeues and completes the job; after
    SIGCONT the stopped one finds its lease lost, kills its attempt and commits nothing. (A lease guards the commit,
    not side effects: a stale attempt that wakes first may still finish its function; see the ledger assertion.)"""
    pool, ledger = mkpool(tmp_path), tmp_path / 'ledger'
    jid = pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': 'h', 'sleep': 1.0})
    a = orchestrator(pool, 'A', lease_s=1.0)
    try:
        child = wait_for(lambda: 'start h 1' in ledger_lines(ledger) and pool.get(jid).pid, what='A running the job')
        os.kill(a.pid, signal.SIGSTOP); os.kill(child, signal.SIGSTOP)
        stats = runner.work(pool, 'inner', lease_s=1.0, name='B')       # waits for A's lease to expire, then runs it
        job = pool.get(jid)
        assert stats == {'done': 1} and (job.state, job.worker, job.attempts) == ('done', 'B', 2)
        os.kill(child, signal.SIGCONT); os.kill(a.pid, signal.SIGCONT)
        wait_for(lambda: any(e['worker'] == 'A' and 'lease lost' in e['event'] for e in pool.events(jid)), what='A lease lost')
        wait_for(lambda: not alive(child), timeout=5, what='A to kill its stale attempt')
        time.sleep(0.3)
        job = pool.get(jid)
        assert (job.state, job.worker, job.result) == ('done', 'B', {'name': 'h', 'attempt': 2}) and done_events(pool, jid) == 1
        # The stale attempt was resumed first here: its sleep had already run out, so its function may finish (a second
        # 'done h' line) before A notices; what the lease guarantees is that its result is never committed.
        assert ledger_lines(ledger).count('done h') in (1, 2) and ledger_lines(ledger).count('start h 2') == 1
    finally:
        for sig in (signal.SIGCONT, signal.SIGTERM): a.send_signal(sig)
        a.communicate(timeout=20)


# 7 ------------------------------------------------------------------------------------------------------------------
def test_poison_job_goes_dead_others_flow(tmp_path):
    "A job that always raises is dead after max_attempts with its error; 5 jobs submitted alongside are all done."
    pool, ledger = mkpool(tmp_path), tmp_path / 'ledger'
    poison = pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': 'p', 'fail': True}, max_attempts=3, priority=1)
    ok = [pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': f'ok{i}'}) for i in range(5)]
    stats = runner.work(pool, 'inner', lease_s=5)
    job = pool.get(poison)
    assert (job.state, job.attempts) == ('dead', 3) and job.error.strip().endswith('ValueError: poison p')
    assert [e['event'] for e in pool.events(poison)].count('failed') == 2
    assert {pool.get(i).state for i in ok} == {'done'} and stats == {'failed': 2, 'dead': 1, 'done': 5}
    assert ledger_lines(ledger).count('start p 3') == 1


def test_dead_job_stays_dead_unless_resubmitted_with_retry_dead(tmp_path):
    "Resubmitting a dead job's key returns it dead; retry_dead=True queues it again with its attempts reset."
    pool, ledger = mkpool(tmp_path), tmp_path / 'ledger'
    args = {'ledger': str(ledger), 'name': 'p', 'fail': True}
    jid = pool.submit('pool_jobs:record', args, key='poison', max_attempts=2)
    runner.work(pool, 'inner', lease_s=5)
    assert pool.submit('pool_jobs:record', args, key='poison') == jid and pool.get(jid).state == 'dead'
    assert pool.submit('pool_jobs:record', args, key='poison', retry_dead=True) == jid
    job = pool.get(jid)
    assert (job.state, job.attempts, job.error) == ('queued', 0, None)
    assert [e['event'] for e in pool.events(jid)][-1] == 'resubmitted'
    runner.work(pool, 'inner', lease_s=5)
    assert (pool.get(jid).state, ledger_lines(ledger).count('start p 2')) == ('dead', 2)   # two more real attempts


def test_root_is_absolute_whatever_the_working_directory(tmp_path, monkeypatch):
    "A relative root becomes absolute at once: job folders are handed to processes that run elsewhere."
    monkeypatch.chdir(tmp_path)
    pool = Pool('runs/q', capacity={'inner': 1}, cwd=TESTS)
    assert pool.root == tmp_path / 'runs' / 'q' and pool.job_dir('x').is_absolute()
    jid = pool.submit('pool_jobs:echo', {})
    runner.work(pool, 'inner', lease_s=5)
    assert Path(pool.get(jid).result['job_dir']) == tmp_path / 'runs' / 'q' / 'jobs' / jid / 'work'


# 8 ------------------------------------------------------------------------------------------------------------------
def test_time_limit_kills_the_process_group(tmp_path):
    "A job past time_limit_s is killed with everything it started (a grandchild `sleep`), counted, then dead."
    pool = mkpool(tmp_path)
    jid = pool.submit('pool_jobs:sleeper', {'seconds': 30}, time_limit_s=0.6, max_attempts=2)
    t0 = time.monotonic(); runner.work(pool, 'inner', lease_s=5)
    job = pool.get(jid)
    assert (job.state, job.attempts) == ('dead', 2) and job.error == 'time limit: killed after 0.6 s'
    assert time.monotonic() - t0 < 10
    grandchildren = [int(p) for p in (pool.job_dir(jid) / 'grandchildren').read_text().split()]
    assert len(grandchildren) == 2
    wait_for(lambda: not any(alive(p) for p in grandchildren + [job.pid]), timeout=5, what='process groups gone')


# 9 ------------------------------------------------------------------------------------------------------------------
def test_cancel_queued_and_running(tmp_path):
    "A queued job is cancelled at once and never runs; a running one is killed (with its group) by its worker."
    pool, ledger = mkpool(tmp_path), tmp_path / 'ledger'
    q = pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': 'q'})
    assert pool.cancel(q) == 'cancelled' and pool.cancel(q) == 'cancelled'
    r = pool.submit('pool_jobs:sleeper', {'seconds': 30})
    t, stats = in_thread(pool, lease_s=1.0)
    pid = wait_for(lambda: (pool.job_dir(r) / 'grandchildren').exists() and pool.get(r).pid, what='running')
    assert pool.cancel(r) == 'running'
    assert pool.wait(r, timeout=10).state == 'cancelled'
    t.join(10); assert not t.is_alive()
    gc = int((pool.job_dir(r) / 'grandchildren').read_text())
    wait_for(lambda: not alive(pid) and not alive(gc), timeout=5, what='cancelled job killed')
    assert ledger_lines(ledger) == [] and stats == {'cancelled': 1} and pool.get(q).attempts == 0
    with pytest.raises(TimeoutError): pool.wait(pool.submit('pool_jobs:noop'), timeout=0.1)


# 10 -----------------------------------------------------------------------------------------------------------------
def test_priorities_then_fifo(tmp_path):
    "With one slot, jobs start by priority (higher first), FIFO among equals."
    pool, ledger = mkpool(tmp_path), tmp_path / 'ledger'
    for i, p in enumerate([0, 5, 1, 5, -1, 1]): pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': f'p{i}'}, priority=p)
    runner.work(pool, 'inner', slots=1, lease_s=5)
    assert [l.split()[1] for l in ledger_lines(ledger) if l.startswith('start')] == ['p1', 'p3', 'p2', 'p5', 'p0', 'p4']


# 11 -----------------------------------------------------------------------------------------------------------------
def _mount_tmpfs(path, size) -> bool:
    "Mount a size-capped tmpfs on `path` (needs root / CAP_SYS_ADMIN); False if we can't."
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', f'size={size}', 'tmpfs', str(path)], capture_output=True)
    return r.returncode == 0


def test_disk_full_on_result_and_log(tmp_path):
    """A full disk while writing the result or the log is a failed attempt with a clear error, never 'done'.

    Where this test can mount (root), `jobs/` is a real 256 KiB tmpfs and the job writes ~1 MB: a real ENOSPC. Where it
    can't, the job replaces os.write in its own process with one raising OSError(ENOSPC) (a simulation); the test
    prints which mode it used."""
    root = tmp_path / 'q'; (root / 'jobs').mkdir(parents=True)
    real = _mount_tmpfs(root / 'jobs', '256k')
    print('disk-full mode:', 'real tmpfs (256 KiB)' if real else 'simulated (os.write raises ENOSPC in the child)')
    try:
        pool = mkpool(tmp_path)
        res = pool.submit('pool_jobs:huge_result', {'nbytes': 1_000_000, 'fake_enospc': not real}, max_attempts=1, priority=1)
        logj = pool.submit('pool_jobs:spam_log', {'nbytes': 1_000_000, 'fake_enospc': not real}, max_attempts=1)
        runner.work(pool, 'inner', slots=1, lease_s=5)
        a, b = pool.get(res), pool.get(logj)
        assert a.state == 'dead' and a.result is None and 'could not write the result' in a.error
        if real: assert 'No space left on device' in a.error
        assert b.state == 'dead' and b.result is None and 'could not write the job log' in b.error
        assert not (pool.root / 'jobs' / res / 'attempt-1' / 'result.json').exists()
    finally:
        if real: subprocess.run(['umount', str(root / 'jobs')], check=True)


# 12 -----------------------------------------------------------------------------------------------------------------
def test_sqlite_queue_under_8_writer_threads(tmp_path):
    """4 threads submit 150 keys each (the same 150 keys, so 3 of 4 submissions are duplicates) while 4 threads claim,
    heartbeat and commit: 150 jobs, each done exactly once, no lost or duplicate job, no 'database is locked'."""
    pool, keys, errors, commits = mkpool(tmp_path), [f'key-{i}' for i in range(150)], [], []
    stop = threading.Event()
    def submitter(seed):
        try:
            for k in (keys if seed % 2 else keys[::-1]): pool.submit('pool_jobs:noop', {'k': k}, key=k, priority=seed)
        except Exception as e: errors.append(repr(e))
    def worker(name):
        try:
            while not stop.is_set():
                for job in pool.claim('inner', 3, name, lease_s=60):
                    assert pool.heartbeat(job, 60) == 'ok'
                    if pool.finish(job, 'done', {'by': name}): commits.append(job.id)
                time.sleep(0.001)
        except Exception as e: errors.append(repr(e))
    threads = [threading.Thread(target=submitter, args=(i,)) for i in range(4)] + [threading.Thread(target=worker, args=(f'w{i}',)) for i in range(4)]
    for t in threads: t.start()
    for t in threads[:4]: t.join()
    wait_for(lambda: pool.counts()['inner'].get('done', 0) == 150, timeout=60, what='150 done')
    stop.set()
    for t in threads[4:]: t.join()
    assert errors == []
    assert len(commits) == len(set(commits)) == 150 and pool.counts() == {'inner': {'done': 150}}
    assert all(j.attempts == 1 for j in pool.jobs())
    assert sum(e['event'] == 'submitted' for e in pool.events()) == 150


def test_drain_and_status(tmp_path):
    "drain() stops claiming and waits for the running job; the worker exits; status shows the running job while it runs."
    pool, ledger = mkpool(tmp_path), tmp_path / 'ledger'
    ids = [pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': f'd{i}', 'sleep': 0.6}) for i in range(3)]
    t, stats = in_thread(pool, slots=1, until_idle=False, lease_s=2)
    wait_for(lambda: pool.get(ids[0]).pid, what='first job running')
    assert ids[0] in status_table(pool.root)
    assert drain(pool.root, 'inner', timeout=20) == {'done': 1, 'queued': 2}
    t.join(5); assert not t.is_alive() and stats == {'done': 1}
    assert 'paused (draining): inner' in status_table(pool.root)
    pool.resume('inner'); runner.work(pool, 'inner', lease_s=5)
    assert {pool.get(i).state for i in ids} == {'done'}


# 13 -----------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope='module')
def ray_cluster():
    """One local Ray for all Ray tests (it takes ~10-15 s to start): 2 CPUs, no dashboard, its temp dir a short path
    under /tmp (unix-socket paths are limited to ~107 bytes), with token authentication (Ray >= 2.52; RAY_AUTH_MODE=token)
    and the token in that dir, not in ~/.ray. Removed at the end."""
    d = tempfile.mkdtemp(prefix='ray', dir='/tmp')
    (Path(d) / 'auth_token').write_text(secrets.token_hex(32))
    saved = {k: os.environ.get(k) for k in ('RAY_AUTH_MODE', 'RAY_AUTH_TOKEN_PATH', 'RAY_AUTH_TOKEN')}
    os.environ.update(RAY_AUTH_MODE='token', RAY_AUTH_TOKEN_PATH=f'{d}/auth_token'); os.environ.pop('RAY_AUTH_TOKEN', None)
    already = 'ray' in sys.modules
    import ray
    if already: ray._raylet.Config.initialize('')        # Ray reads RAY_AUTH_MODE once: refresh it (as Ray itself does)
    ray.init(num_cpus=2, include_dashboard=False, _temp_dir=d, log_to_driver=False)
    try: yield ray
    finally:
        ray.shutdown()
        for k, v in saved.items():
            if v is None: os.environ.pop(k, None)
            else: os.environ[k] = v
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.slow
def test_ray_backend_same_results_kill_and_poison(tmp_path, ray_cluster):
    """The Ray backend: the same jobs give the same results as the local backend; a job whose process is SIGKILLed
    mid-run is retried and done once; a poison job goes dead after max_attempts while the others are done."""
    assert ray_cluster.is_initialized()
    jobs = [('pool_jobs:square', {'x': x}) for x in range(3)] + [('pool_jobs:ckpt_train', {'steps': 3})]
    results = {}
    for backend in ('local', 'ray'):
        pool = Pool(tmp_path / backend, capacity={'inner': 2}, backoff_s=0.05, cwd=TESTS)
        ids = [pool.submit(fn, args) for fn, args in jobs]
        runner.work(pool, 'inner', backend=backend, lease_s=5)
        results[backend] = [pool.get(i).result for i in ids]
        assert {pool.get(i).state for i in ids} == {'done'}
    assert results['ray'] == results['local'] and results['ray'][1] == {'y': 1}

    pool, ledger = Pool(tmp_path / 'rayfaults', capacity={'inner': 2}, backoff_s=0.05, cwd=TESTS), tmp_path / 'ledger'
    k = pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': 'k', 'sleep': 1.5})
    p = pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': 'p', 'fail': True}, max_attempts=2)
    ok = pool.submit('pool_jobs:record', {'ledger': str(ledger), 'name': 'ok'})
    t, stats = in_thread(pool, backend='ray', lease_s=1.5)
    pid = wait_for(lambda: 'start k 1' in ledger_lines(ledger) and pool.get(k).pid, what='ray job running with its pid')
    os.kill(pid, signal.SIGKILL)
    t.join(60); assert not t.is_alive()
    jk, jp = pool.get(k), pool.get(p)
    assert (jk.state, jk.attempts, jk.result) == ('done', 2, {'name': 'k', 'attempt': 2}) and done_events(pool, k) == 1
    assert (jp.state, jp.attempts) == ('dead', 2) and 'ValueError: poison p' in jp.error
    assert pool.get(ok).state == 'done' and ledger_lines(ledger).count('done k') == 1
    assert stats == {'failed': 2, 'dead': 1, 'done': 2}
