"""A run never reports what did not happen: an inner job that dies is a failure the run shows and, past a quarter of
a batch, stops the run loudly; the outer stage and the transfer stage share inner jobs by content. Real episodes,
real probe, real pool, real inner jobs; the scorer is killed for real (SIGKILL, as the OOM killer would)."""
import json, os, signal, threading, time
from pathlib import Path
import pytest
from agentforge.agents import ScriptedAgent
from agentforge.episode import InnerJobsFailed, job_stats, run_episodes
from agentforge.families import FAMILIES
from agentforge.pool import Pool


class ScorerKiller:
    """A thread that SIGKILLs every hidden-scoring process of this test's cache: `python -I -m agentforge.scoring score ...`,
    or a warm worker's fork named `af:hidden_score` (`agentforge.warm`)."""
    def __init__(self, cache:Path):  # only scorers started with this cache: never a developer's run next door
        self.mine, self.killed, self.stop = f'AGENTFORGE_CACHE_DIR={cache}'.encode(), [], threading.Event()
    def __enter__(self): self.t = threading.Thread(target=self._run, daemon=True); self.t.start(); return self
    def __exit__(self, *exc): self.stop.set(); self.t.join()
    def _run(self):
        while not self.stop.is_set():
            for d in Path('/proc').iterdir():
                if not d.name.isdigit(): continue
                try:
                    argv, env = (d / 'cmdline').read_bytes().split(b'\0'), (d / 'environ').read_bytes().split(b'\0')
                    comm = (d / 'comm').read_bytes().strip()
                except OSError: continue
                if (comm == b'af:hidden_score' or b'agentforge.scoring' in argv and b'score' in argv) and self.mine in env:
                    try: os.kill(int(d.name), signal.SIGKILL); self.killed.append(int(d.name))
                    except ProcessLookupError: pass
            time.sleep(0.02)


@pytest.mark.slow
def test_killed_scorer_stops_the_batch_loudly(tmp_path, private_cache):
    "Every scorer dies: the job is dead after its attempts, the episode is ungraded, and run_episodes raises naming why."
    with ScorerKiller(private_cache) as k, pytest.raises(InnerJobsFailed) as e:
        run_episodes(ScriptedAgent('heuristic'), [('string_ops', 0), ('string_ops', 1)], tmp_path / 'run', step=0, slots=1)
    msg = str(e.value)
    assert k.killed and '1 of 1 inner jobs died in step 0' in msg and 'exited -9' in msg, msg
    log = Path(msg.split('Its log: ')[1].split('\n')[0])
    assert log.is_file() and 'ScoringFailed' in log.read_text()   # the log it names is the one that says what happened
    recs = [json.loads(p.read_text()) for p in sorted((tmp_path / 'run' / 'episodes').glob('*.json'))]
    assert len(recs) == 2 and all(r['reward'] == {} and r['job']['state'] == 'dead' and r['inner'] is None for r in recs)
    assert all(r['error'].startswith('inner job ') and 'exited -9' in r['error'] for r in recs)
    jobs = Pool(tmp_path / 'run' / 'pool').jobs()
    assert [(j.state, j.attempts) for j in jobs] == [('dead', 3)]


@pytest.mark.slow
def test_outer_then_transfer_share_one_job(tmp_path, private_cache):
    "The transfer stage asks for a spec the outer stage trained: the same job (same key, same arguments), no crash."
    run = tmp_path / 'run'
    outer = run_episodes(ScriptedAgent('heuristic'), [('string_ops', 0)], run, pool_root=run / 'pool', step=0)
    (private_cache / 'inner').rename(private_cache / 'inner-moved')  # forget the cached result: the pool job is asked again
    transfer = run_episodes(ScriptedAgent('heuristic'), [('string_ops', 10**6)], run / 'transfer', pool_root=run / 'pool',
                            tag='scripted-heuristic')
    jobs = Pool(run / 'pool').jobs()
    assert len(jobs) == 1 and jobs[0].state == 'done' and jobs[0].attempts == 1
    assert outer[0].job['id'] == transfer[0].job['id'] == jobs[0].id and transfer[0].job['state'] == 'done'
    assert outer[0].reward == transfer[0].reward and outer[0].graded
    st = job_stats(outer + transfer)
    assert (st['jobs'], st['done'], st['dead']) == (1, 1, 0)


def test_two_loop_stops_and_the_report_says_why(tmp_path, monkeypatch):
    "InnerJobsFailed in a stage: an event, a report that opens with the error, and the error raised to the caller."
    import agentforge.run as run
    why = 'InnerJobsFailed: 4 of 4 inner jobs died in step 3 (more than 25%): ... Its log: /x/log.txt'
    def failing_stage(cfg, out, *a, **kw):
        (Path(out) / 'metrics.jsonl').write_text(json.dumps(dict(step=0, reward_mean=0.2, episodes=4, graded=4,
                                                                 jobs=dict(jobs=2, done=2, cached=0, dead=0, retried=0))) + '\n')
        raise InnerJobsFailed(why)
    monkeypatch.setattr(run, 'train_stage', failing_stage)
    cfg = run.RunConfig.of(steps=4, group_size=2, briefs_per_step=1, eval_per_family=2)
    with pytest.raises(InnerJobsFailed, match='4 of 4'): run.two_loop(cfg, tmp_path / 'r', progress=False)
    events = [json.loads(l) for l in (tmp_path / 'r' / 'events.jsonl').read_text().splitlines()]
    assert [e['event'] for e in events][-1] == 'run_failed' and events[-1]['error'] == why
    report = (tmp_path / 'r' / 'report.md').read_text()
    assert report.startswith('# agentforge two-loop run (STOPPED)') and '## THE RUN STOPPED' in report and why in report
    assert report.index('THE RUN STOPPED') < report.index('## Summary') and 'Episodes graded: 4 of 4' in report
    # a later attempt that finishes clears the banner: only the last attempt's ending counts
    with open(tmp_path / 'r' / 'events.jsonl', 'a') as f:
        f.write(json.dumps(dict(event='run_start')) + '\n' + json.dumps(dict(event='run_end')) + '\n')
    from agentforge.report import write_report
    assert 'THE RUN STOPPED' not in write_report(tmp_path / 'r').read_text()


def test_a_stopped_run_says_what_was_saved_and_how_to_resume(tmp_path, monkeypatch, capsys):
    "Ctrl-C (or SIGTERM) in a stage: an event with the steps saved, a line that says so, the interrupt raised on."
    import agentforge.run as run
    def stopped_stage(cfg, out, *a, **kw):
        (Path(out) / 'metrics.jsonl').write_text(json.dumps(dict(step=0, reward_mean=0.2)) + '\n')
        raise KeyboardInterrupt
    monkeypatch.setattr(run, 'train_stage', stopped_stage)
    cfg = run.RunConfig.of(steps=4, group_size=2, briefs_per_step=1, eval_per_family=2)
    with pytest.raises(KeyboardInterrupt): run.two_loop(cfg, tmp_path / 'r')
    events = [json.loads(l) for l in (tmp_path / 'r' / 'events.jsonl').read_text().splitlines()]
    assert events[-1]['event'] == 'run_stopped' and events[-1]['steps_saved'] == 1
    assert 'STOPPED (Ctrl-C or SIGTERM): 1 of 4 outer steps saved' in capsys.readouterr().err
    assert not (tmp_path / 'r' / 'report.md').exists()   # no report of a run that did not end

def test_report_counts_what_did_not_run(tmp_path):
    "A step with a dead job: its row says so, the summary says so in bold, and the mean is over graded episodes."
    from agentforge.report import write_report
    rows = [dict(step=0, reward_mean=0.4, validation_mean=1.0, uplift_mean=0.1, speed_mean=0.9, episodes=4, graded=3,
                 jobs=dict(jobs=2, done=1, cached=0, dead=1, retried=1), seconds=10.0)]
    (tmp_path / 'metrics.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    md = write_report(tmp_path).read_text()
    assert '| 0 | 3/4 | 2 (1 DIED) |' in md and '**Not everything ran: 1 inner jobs died and 1 episodes could not be graded.**' in md


@pytest.mark.slow
def test_transfer_trains_every_agents_specs_in_one_batch(tmp_path, private_cache, monkeypatch):
    """The transfer stage plays its four agents first, then queues all their specs at once: no agent's jobs start
    before every agent's jobs are queued (one agent's slow last job no longer idles a slot). Real probe, pool and
    inner jobs; the two tiny agents are scripted stand-ins here (building the cloned agent base is lesson 10a's)."""
    import agentforge.run as run
    monkeypatch.setattr(run, 'load_tiny_agent', lambda *a, **kw: ScriptedAgent('random'))  # the 'untrained' agent
    cfg = run.RunConfig.of(holdout='string_ops', eval_per_family=2, eval_trained=())
    out = tmp_path / 'r'
    out.mkdir()
    v = run.transfer_stage(cfg, out, ScriptedAgent('heuristic'), progress=False)
    jobs = Pool(out / 'pool').jobs()
    assert len(jobs) >= 2 and all(j.state == 'done' for j in jobs)
    assert max(j.created for j in jobs) <= min(j.started for j in jobs)   # one batch: all queued, then run
    recs = [json.loads(p.read_text()) for p in sorted((out / 'transfer' / 'episodes').glob('*.json'))]
    sampled = [r for r in recs if '-mode-' not in r['id']]
    assert sorted({r['id'].split('-0')[0] for r in sampled}) == ['scripted-heuristic', 'scripted-random', 'trained',
                                                                 'untrained'] and len(sampled) == 8
    modes = [r for r in recs if '-mode-' in r['id']]   # one episode per family of every agent but the random one
    assert sorted({r['id'].split('-mode-')[0] for r in modes}) == ['scripted-heuristic', 'trained', 'untrained']
    assert len(modes) == 3 * 6 and {r['brief'] for r in modes} == set(FAMILIES)
    assert all(r['reward'] for r in recs if r['validated_on']) and v['held'] == ['string_ops']
    mode = json.loads((out / 'transfer.json').read_text())['mode']   # the trained stand-in is the heuristic: same specs
    by = {(m['agent'], m['brief']): m for m in mode}
    assert len(mode) == 18 and mode[0]['brief'] == 'string_ops' and mode[0]['held']
    assert all(by[('trained', f)]['decision'] == by[('scripted-heuristic', f)]['decision'] is not None and
               by[('trained', f)]['decision']['max_steps'] == 48 for f in FAMILIES)


def test_baselines_play_before_training_and_the_transfer_reads_them_back(tmp_path, monkeypatch):
    """`queue_baselines` plays the untrained and scripted agents (and their modes) before the outer stage and keeps what
    they played; the transfer stage reads that back and plays only the trained agent; a second call plays nothing.
    Validation-only weights: nothing trains here (the jobs' queueing is `test_truth`'s slow tests' and lesson 13's)."""
    import agentforge.run as run
    monkeypatch.setattr(run, 'load_tiny_agent', lambda *a, **kw: ScriptedAgent('random'))  # the 'untrained' agent
    cfg = run.RunConfig.of(holdout='string_ops', eval_per_family=2, eval_trained=(), weights='mock')
    out = tmp_path / 'r'
    out.mkdir()
    assert run.queue_baselines(cfg, out) == (3 * 2 + 2 * 6, 0)  # three agents x 2 episodes, two modes x 6; none trains
    kept = sorted(p.stem for p in (out / 'transfer' / 'played').glob('*.json'))
    assert kept == ['scripted-heuristic', 'scripted-heuristic-mode', 'scripted-random', 'untrained', 'untrained-mode']
    assert run.queue_baselines(cfg, out) == (0, 0)  # kept: a resumed run does not play them again
    work = out / 'transfer' / 'work'
    before = {p.name: p.stat().st_mtime_ns for p in work.iterdir()}
    run.transfer_stage(cfg, out, ScriptedAgent('heuristic'), progress=False)
    after = {p.name: p.stat().st_mtime_ns for p in work.iterdir()}
    assert all(after[n] == t for n, t in before.items())  # nothing the baselines played was played again
    assert {n.split('-0')[0].split('-mode')[0] for n in set(after) - set(before)} == {'trained'}
    recs = [json.loads(p.read_text()) for p in (out / 'transfer' / 'episodes').glob('*.json')]
    assert len(recs) == 4 * 2 + 3 * 6 and all(r['reward'] for r in recs)  # every agent's episodes, all graded


def test_an_evaluation_temperature_is_reported_beside_the_sampling_one(tmp_path, monkeypatch):
    """`eval_temperature`: the verdict compares trained and untrained sampling there, and the same pair at the outer
    loop's temperature (`trained@0.7`, held-out jobs only) is played too and reported, never left out. Stand-ins: a
    scripted agent with a `temperature` attribute, as an LM agent has (hub weights are not here)."""
    import agentforge.run as run
    def lm(policy):  # a scripted agent that carries a temperature, so `at_temperature` copies it as it does an LM agent
        a = ScriptedAgent(policy)
        a.temperature = 0.7
        return a
    monkeypatch.setattr(run, 'load_tiny_agent', lambda *a, **kw: lm('random'))  # the 'untrained' agent
    cfg = run.RunConfig.of(holdout='string_ops', eval_per_family=2, eval_trained=('arithmetic',), weights='mock',
                           eval_temperature=0.3)
    agents, modes = run.transfer_agents(cfg, run.clone_for(cfg), lm('heuristic'))
    assert {n: a.temperature for n, a in agents.items() if hasattr(a, 'temperature')} == {
        'trained': 0.3, 'untrained': 0.3, 'trained@0.7': 0.7, 'untrained@0.7': 0.7}
    assert sorted(modes) == ['scripted-heuristic', 'trained', 'untrained'] and modes['trained'].temperature == 0
    out = tmp_path / 'r'
    out.mkdir()
    assert run.queue_baselines(cfg, out) == (3 * 4 + 2 + 2 * 6, 0)  # the @0.7 copy plays the held-out family only
    v = run.transfer_stage(cfg, out, lm('heuristic'), progress=False)
    t = json.loads((out / 'transfer.json').read_text())
    assert v['temperature'] == 0.3 and v['at_sampling']['temperature'] == 0.7
    assert v['at_sampling']['trained'] == 'trained@0.7' and v['at_sampling']['diff']['n'] == 2
    assert {(r['agent'], r['split']) for r in t['table'] if '@' in r['agent']} == {('trained@0.7', 'held-out'),
                                                                                 ('untrained@0.7', 'held-out')}
    assert v['summary'].startswith('Both agents sampling at temperature 0.3, on the held-out family')
    assert "outer loop's temperature 0.7" in v['summary']
    assert run.RunConfig().eval_temperature == 0.3                      # the default; None: one temperature, as before it
    assert 'eval_temperature' not in run.RunConfig(eval_temperature=None).to_json()  # an older folder's hash holds
    with pytest.raises(ValueError, match='eval_temperature'): run.RunConfig(eval_temperature=0)
