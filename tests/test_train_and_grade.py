"""A SIGTERM while a step's inner jobs run stops the run before grading (retro 2026-11-30-sigterm-graded-as-failed-jobs)."""
import json, signal, subprocess, sys, textwrap, time
import pytest
from agentforge.pool import Pool

SCRIPT = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    from agentforge.agents import ScriptedAgent
    from agentforge.episode import play, train_and_grade
    run = Path(sys.argv[1])
    rec = play(ScriptedAgent('heuristic'), 'string_ops', 0, run / 'work' / 'ep', saturation=False)
    try:
        train_and_grade([rec], run, seed=int(sys.argv[2]), slots=1)  # an unused inner seed: the job must really run
    except KeyboardInterrupt as e:
        print(json.dumps(dict(interrupted=str(e), reward=rec.reward, inner=rec.inner))); sys.exit(3)
    print(json.dumps(dict(interrupted=None, reward=rec.reward, inner=rec.inner)))
''')

@pytest.mark.slow
def test_sigterm_during_inner_jobs_stops_before_grading(tmp_path):
    "SIGTERM once the job runs: the caller gets KeyboardInterrupt, the record is not graded, and the job is released."
    seed = int(time.time()) % 100_000 + 1000
    p = subprocess.Popen([sys.executable, '-c', SCRIPT, str(tmp_path), str(seed)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
