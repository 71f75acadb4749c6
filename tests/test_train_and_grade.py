"""A SIGTERM while a step's inner jobs run stops the run before grading (retro 2026-11-30-sigterm-graded-as-failed-jobs),
whether this process serves the pool for the batch or from a thread for the whole run (lesson 08c `serving`); a fixed
evaluation a stop cut short is graded from what it played (lesson 13 `deferred_eval`)."""
import json, signal, subprocess, sys, textwrap, time
import pytest
from agentforge.pool import Pool

SCRIPT = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    from agentforge.agents import ScriptedAgent
    from contextlib import nullcontext
    from agentforge.episode import inner_served, play, train_and_grade
    run = Path(sys.argv[1])
    rec = play(ScriptedAgent('heuristic'), 'string_ops', 0, run / 'work' / 'ep', saturation=False)
    try:
        with inner_served(run, slots=1) if sys.argv[3] == 'served' else nullcontext():
            train_and_grade([rec], run, seed=int(sys.argv[2]), slots=1)  # an unused inner seed: the job must run
    except KeyboardInterrupt as e:
        print(json.dumps(dict(interrupted=str(e), reward=rec.reward, inner=rec.inner))); sys.exit(3)
    print(json.dumps(dict(interrupted=None, reward=rec.reward, inner=rec.inner)))
''')

@pytest.mark.slow
@pytest.mark.parametrize('served', ['per-batch', 'served'])
def test_sigterm_during_inner_jobs_stops_before_grading(tmp_path, served):
    "SIGTERM once the job runs: the caller gets KeyboardInterrupt, the record is not graded, and the job is released."
    seed = int(time.time()) % 100_000 + 1000 + (served == 'served')
    p = subprocess.Popen([sys.executable, '-c', SCRIPT, str(tmp_path), str(seed), served], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    pool, t0 = Pool(tmp_path / 'pool'), time.monotonic()
    while time.monotonic() - t0 < 120:  # wait for the inner job to start running
        if (tmp_path / 'pool' / 'queue.db').exists() and pool.counts().get('inner', {}).get('running'): break
        assert p.poll() is None, p.communicate()
        time.sleep(0.5)
    else: pytest.fail('the inner job never started')
    time.sleep(3); p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 3, (out, err[-2000:])
    res = json.loads(out.strip().splitlines()[-1])
    assert 'SIGTERM' in res['interrupted'] and res['reward'] == {} and res['inner'] is None  # nothing graded
    counts = pool.counts()['inner']
    assert counts.get('done', 0) == 0 and counts.get('queued', 0) == 1  # released, not charged: the next run redoes it


@pytest.mark.slow
def test_an_evaluation_cut_short_is_graded_from_what_it_played(tmp_path, private_cache):
    "deferred_eval keeps what it played: resuming grades those episodes, the same jobs; nothing kept: None, said by train."
    from agentforge.agents import ScriptedAgent
    from agentforge.config import RunConfig
    from agentforge.curve import curve_jobs
    from agentforge.episode import inner_served
    from agentforge.families import FAMILIES
    from agentforge.run import _env, deferred_eval
    cfg, out, agent = RunConfig(curve_seeds=1), tmp_path / 'run', ScriptedAgent('heuristic')
    with inner_served(out, _env(cfg, out)):
        cut = deferred_eval(cfg, out, agent, 0)  # played and queued; then the run "stops" before its row
        assert not cut.ended()  # a private cache: its jobs really run
        resumed = deferred_eval(cfg, out, agent, 0, play=False)  # what a resumed run does: no adapter, what was kept
        row = resumed.finish()
        assert deferred_eval(cfg, out, agent, 5, play=False) is None  # never played: nothing to grade
    assert [(e['brief'], e['seed']) for e in row['episodes']] == curve_jobs(FAMILIES, 1, cfg.outer.seed)
    assert row['counts']['graded'] == row['counts']['episodes'] == len(FAMILIES) and row['seconds'] is None
    assert cut.ended() and cut.finish()['episodes'] == row['episodes']  # the same jobs graded the same
    jobs = Pool(out / 'pool').jobs()
    assert jobs and all(j.state == 'done' and j.attempts == 1 and j.priority < 0 for j in jobs)  # each ran once


BUSY = textwrap.dedent('''
    import json, sys, time
    from pathlib import Path
    from agentforge.pool import Pool
    from agentforge.runner import serving
    try:
        with serving(Pool(Path(sys.argv[1]) / 'pool'), slots=1):
            print('ready', flush=True)
            t = time.monotonic()
            while time.monotonic() - t < 90: sum(range(10_000))  # the caller works and never waits on the pool
    except KeyboardInterrupt as e:
        print(json.dumps(dict(interrupted=str(e)))); sys.exit(3)
    print(json.dumps(dict(interrupted=None)))
''')

def test_sigterm_stops_a_served_block_that_never_waits(tmp_path):
    """SIGTERM while the caller works without waiting on the pool (a step whose inner results were all cached): the
    block is interrupted at once, as by Ctrl-C (retro 2026-12-06-sigterm-ignored-between-waits); it used to run on."""
    p = subprocess.Popen([sys.executable, '-c', BUSY, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline().strip() == 'ready', p.communicate()
    time.sleep(0.5); p.send_signal(signal.SIGTERM)
    try: out, err = p.communicate(timeout=45)  # the loop runs 90 s: only an interrupt ends it before this
    except subprocess.TimeoutExpired:
        p.kill(); pytest.fail('SIGTERM did not stop the block: it ran on')
    assert p.returncode == 3, (out, err[-2000:])
    assert 'SIGTERM' in json.loads(out.strip().splitlines()[-1])['interrupted']
