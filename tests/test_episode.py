"""agentforge.episode: every way an episode ends and the reward it gets, retries that read the probe's report, the
record's JSON, the served path (an OpenAI client against our own chat server on loopback), and identical specs
sharing one inner job. Real workspace, real probe (bubblewrap sandbox), real pool."""
import json
from dataclasses import asdict
from pathlib import Path
import pytest
from agentforge.agents import Agent, HEURISTIC, LMAgent, ScriptedAgent, ToolCall, Turn, parse_tool_calls, write_spec
from agentforge.episode import Budgets, EpisodeRecord, play, play_all, run_episodes, train_and_grade
from agentforge.families import get_family
from agentforge.grading import episode_reward
from agentforge.tasks import hidden_split

pytestmark = pytest.mark.usefixtures('one_thread')  # tests/conftest.py

@pytest.fixture(scope='module')
def platform(tmp_path_factory):
    "A private platform data dir (secret and hidden splits) for the probe's leakage gate."
    root = tmp_path_factory.mktemp('platform')
    for f in ('arithmetic', 'string_ops', 'date_math'): hidden_split(get_family(f), root=root)
    return root

def _play(agent, brief, seed, where:Path, platform, **kw) -> EpisodeRecord:
    return play(agent, brief, seed, where / f'{brief}-{seed}', hidden_root=platform, **{'saturation': False, **kw})

class Crashing(Agent):
    name = 'crashing'
    def act(self, messages, tools, seed): raise RuntimeError('CUDA out of memory (pretend)')

class Chatty(Agent):
    name = 'chatty'
    def act(self, messages, tools, seed): return Turn('I would use exact_match.', [], tokens=7)

class Stubborn(Agent):
    "Writes and submits the same invalid spec (16 rows) every turn."
    name = 'stubborn'
    def act(self, messages, tools, seed):
        spec = write_spec('arithmetic', dict(HEURISTIC, rows=16))  # not an option of CHOICES: the probe rejects it
        return Turn('', [ToolCall('write_file', dict(path='task.yaml', content=spec)), ToolCall('submit', {})], tokens=3)

class Browsing(Agent):
    "Lists the files forever, 3 tokens a turn."
    name = 'browsing'
    def act(self, messages, tools, seed): return Turn('', [ToolCall('list_files', {})], tokens=3)

class EagerThenHeuristic(Agent):
    "Submits before writing anything (the package is rejected), then behaves like the heuristic agent."
    name = 'eager-then-heuristic'
    def act(self, messages, tools, seed):
        if any(m['role'] == 'assistant' for m in messages): return ScriptedAgent('heuristic').act(messages, tools, seed)
        return Turn('', [ToolCall('submit', {})], tokens=1)

class BrokenThenHeuristic(Agent):
    "First a tool call with broken JSON, then the heuristic agent."
    name = 'broken-then-heuristic'
    def act(self, messages, tools, seed):
        if any(m['role'] == 'assistant' for m in messages): return ScriptedAgent('heuristic').act(messages, tools, seed)
        text = '<tool_call>{"name": "submit", "arguments": {</tool_call>'
        calls, err = parse_tool_calls(text)
        return Turn(text, calls, 9, err)

class Corrects(Agent):
    "Submits a spec with too few rows; after the probe's report names the rows, submits the heuristic spec."
    name = 'corrects'
    def act(self, messages, tools, seed):
        report = [json.loads(m['content']) for m in messages if m['role'] == 'tool' and m['name'] == 'submit']
        rows = 256 if report and report[-1]['reason'] == 'DATASET_TOO_SMALL' else 16
        spec = write_spec('date_math', dict(HEURISTIC, rows=rows))
        return Turn('', [ToolCall('write_file', dict(path='task.yaml', content=spec)), ToolCall('submit', {})], tokens=3)

# ---------------------------------------------------------------- endings and rewards

def test_failing_agents_end_with_their_reason_and_zero_reward(tmp_path, platform):
    recs = {a.name: _play(a, 'arithmetic', 0, tmp_path, platform) for a in (Crashing(), Chatty(), Stubborn())}
    train_and_grade(list(recs.values()), tmp_path / 'run', weights='reference')
    got = {k: (r.ended, r.attempts, r.validated_on, r.reward['total'], r.reward['weights']) for k, r in recs.items()}
    assert got == {'crashing': ('agent_error', 0, None, 0.0, 'reference'), 'chatty': ('no_submit', 0, None, 0.0, 'reference'),
                   'stubborn': ('retries_exhausted', 3, None, 0.0, 'reference')}
    assert recs['crashing'].error == 'RuntimeError: CUDA out of memory (pretend)' and recs['chatty'].error is None
    assert [p['reason'] for p in recs['stubborn'].probe_reports] == ['DATASET_TOO_SMALL'] * 3 and len(recs['stubborn'].turns) == 3
    assert all(r.inner is None for r in recs.values()) and not (tmp_path / 'run' / 'pool').exists()   # nothing trained

def test_heuristic_validates_first_try_with_mock_weights(tmp_path, platform):
    # saturation gate on (the default): the probe samples the real tiny student
    rec = play(ScriptedAgent('heuristic'), 'string_ops', 0, tmp_path / 'ep', hidden_root=platform)
    train_and_grade([rec], tmp_path / 'run', weights='mock')
    assert (rec.ended, rec.attempts, rec.validated_on, len(rec.turns)) == ('validated', 1, 1, 1)
    assert rec.reward == dict(validation=1.0, uplift=0.0, speed=0.0, tokens=0.0, weights='mock', total=1.0, post=0.0, quality=0.0)
    assert [c['id'] for c in rec.probe_reports[0]['checks']][-1] == 'saturation'
    assert Path(rec.submission).is_dir() and (Path(rec.submission) / 'task.yaml').read_text() == rec.tool_calls[0]['arguments']['content']
    assert [m['role'] for m in rec.messages] == ['system', 'user', 'assistant', 'tool', 'tool']
    assert [m['tool_call_id'] for m in rec.messages[3:]] == ['call_0_0', 'call_0_1']

def test_unusable_turns_past_the_budget_end_the_episode(tmp_path, platform):
    "No loop after unreadable turns: at max_unusable of them the episode ends 'unparsable', graded as never validated."
    rec = _play(BrokenThenHeuristic(), 'string_ops', 0, tmp_path, platform, budgets=Budgets(max_unusable=1))
    assert (rec.ended, len(rec.turns), rec.attempts, rec.validated_on, rec.tokens) == ('unparsable', 1, 0, None, 9)
    assert rec.messages[-1] == dict(role='assistant', content='')   # nothing answered after it: the episode is over
    train_and_grade([rec], tmp_path / 'run', weights='reference')
    assert rec.reward == asdict(episode_reward(None, weights='reference')) and rec.reward['total'] == 0.0

def test_broken_tool_call_gets_the_error_back_and_play_goes_on(tmp_path, platform):
    "By default (max_unusable=2) one unreadable turn is answered with its parse error and the agent tries again."
    assert Budgets().max_unusable == 2
    rec = _play(BrokenThenHeuristic(), 'string_ops', 0, tmp_path, platform)
    assert (rec.ended, len(rec.turns), rec.attempts, rec.validated_on, rec.tokens) == ('validated', 2, 1, 1, 9)
    err = rec.turns[0]['error']
    assert err.startswith('tool call 1 is not valid JSON')
    assert rec.messages[2] == dict(role='assistant', content='')   # markup stripped, no parsed call
    assert rec.messages[3]['role'] == 'user' and f'Your tool call could not be used: {err}.' in rec.messages[3]['content']
    assert [m['role'] for m in rec.messages[4:]] == ['assistant', 'tool', 'tool']

@pytest.mark.parametrize('budgets, ended', [(Budgets(max_turns=2), 'turn_budget'), (Budgets(max_tokens=5), 'token_budget')])
def test_budgets_end_the_episode(tmp_path, platform, budgets, ended):
    rec = _play(Browsing(), 'arithmetic', 0, tmp_path, platform, budgets=budgets)
    assert (rec.ended, len(rec.turns), rec.tokens, rec.attempts) == (ended, 2, 6, 0)
    assert [c['name'] for c in rec.tool_calls] == ['list_files'] * 2 and all(c['result']['ok'] for c in rec.tool_calls)
    train_and_grade([rec], tmp_path / 'run', weights='reference')
    assert rec.reward['total'] == 0.0

def test_one_attempt_counter_a_rejected_package_counts(tmp_path, platform):
    "The workspace's counter is the only one: the agent is told 'attempt 2' and the reward credits attempt 2."
    rec = _play(EagerThenHeuristic(), 'string_ops', 0, tmp_path, platform)
    told = [json.loads(m['content']) for m in rec.messages if m['role'] == 'tool' and m['name'] == 'submit']
    assert [t.get('attempt') for t in told] == [1, 2] and told[0]['error'] == 'SUBMISSION_REJECTED' and told[1]['validated']
    assert (rec.ended, rec.attempts, rec.validated_on) == ('validated', 2, 2)
    assert [p['attempt'] for p in rec.probe_reports] == [2]   # the probe ran once, on attempt 2
    train_and_grade([rec], tmp_path / 'run', weights='mock')
    assert rec.reward['validation'] == 0.8

def test_probe_that_cannot_run_ends_ungraded(tmp_path, platform, monkeypatch):
    "A probe infrastructure failure ends the episode as infra_error and leaves it ungraded: no reward from failed work."
    import agentforge.episode as ep
    from agentforge.gates import Check, Report
    monkeypatch.setattr(ep, 'validate', lambda *a, **kw: Report(False, 'INFRA_START_FAILED',
                        [Check('rewards', False, 'the sandbox could not start', 'INFRA_START_FAILED')], 0.0, kw.get('attempt')))
    rec = _play(ScriptedAgent('heuristic'), 'string_ops', 0, tmp_path, platform)
    assert rec.ended == 'infra_error' and rec.error.startswith('ProbeUnavailable: INFRA_START_FAILED')
    train_and_grade([rec], tmp_path / 'run', weights='reference')
    assert (rec.reward, rec.graded, rec.job) == ({}, False, None)

# ---------------------------------------------------------------- lockstep play

@pytest.mark.parametrize('agent,brief', [(Crashing(), 'arithmetic'), (Chatty(), 'arithmetic'), (Stubborn(), 'arithmetic'),
                                         (Corrects(), 'date_math'), (ScriptedAgent('random'), 'string_ops')],
                         ids=lambda x: getattr(x, 'name', x))
def test_play_all_plays_each_episode_as_play_would(tmp_path, platform, agent, brief):
    "Misbehaving, looping, retrying and validating agents: two episodes in lockstep end as each does alone."
    recs = play_all(agent, [(brief, s, tmp_path / 'all' / str(s)) for s in (0, 1)], hidden_root=platform, saturation=False)
    alone = [_play(agent, brief, s, tmp_path / 'alone', platform) for s in (0, 1)]
    see = lambda r: (r.ended, r.attempts, r.validated_on, r.error, [c['arguments'] for c in r.tool_calls])
    assert [see(r) for r in recs] == [see(r) for r in alone]

def test_play_all_batches_an_lm_agents_turns_into_one_call(tmp_path, platform):
    from agentforge.models import build_tokenizer, tiny_model
    tok = build_tokenizer()
    lm = LMAgent(tiny_model('agent', seed=0, tok=tok), tok, max_new_tokens=12)
    calls = []
    real = lm.act_batch
    lm.act_batch = lambda convs, tools, seeds: calls.append(len(convs)) or real(convs, tools, seeds)
    recs = play_all(lm, [('arithmetic', s, tmp_path / f'lm-{s}') for s in range(3)], budgets=Budgets(max_turns=2),
                    hidden_root=platform, saturation=False)
    assert calls[0] == 3 and sum(calls) == sum(len(r.turns) for r in recs)   # every live episode in each round's batch
    alone = [_play(LMAgent(lm.model, tok, max_new_tokens=12), 'arithmetic', s, tmp_path / 'one', platform,
                   budgets=Budgets(max_turns=2)) for s in range(3)]
    assert [[t['completion_ids'] for t in r.turns] for r in recs] == [[t['completion_ids'] for t in r.turns] for r in alone]

# ---------------------------------------------------------------- a retry that reads the report

@pytest.fixture(scope='module')
def second_try(tmp_path_factory, platform):
    "An episode on date_math that fails once (16 rows), reads the report and validates on attempt 2."
    return _play(Corrects(), 'date_math', 0, tmp_path_factory.mktemp('scan'), platform)

def test_validated_on_second_attempt_scores_0_8(second_try, tmp_path):
    rec = second_try
    assert (rec.ended, rec.attempts) == ('validated', 2)
    assert [p['validated'] for p in rec.probe_reports] == [False, True] and rec.probe_reports[0]['reason']
    submit = [json.loads(m['content']) for m in rec.messages if m['role'] == 'tool' and m['name'] == 'submit']
    assert submit[0]['reason'] == rec.probe_reports[0]['reason'] and submit[0]['attempts_left'] == 2   # the report the agent read
    train_and_grade([rec], tmp_path / 'run', weights='mock')
    assert rec.reward['validation'] == 0.8 and rec.reward['total'] == 0.8
    assert rec.reward == asdict(episode_reward(2, weights='mock'))

def test_episode_record_json_round_trip(second_try, tmp_path, platform):
    from agentforge.models import build_tokenizer, tiny_model
    tok = build_tokenizer()
    lm = LMAgent(tiny_model('agent', seed=0, tok=tok), tok, max_new_tokens=12)
    lm_rec = _play(lm, 'arithmetic', 5, tmp_path, platform, budgets=Budgets(max_turns=2), step=4)
    assert lm_rec.turns[0]['completion_ids'] and len(lm_rec.turns[0]['logprobs']) == len(lm_rec.turns[0]['completion_ids'])
    for rec in (second_try, lm_rec):
        p = rec.save(tmp_path / 'episodes')
        assert p == tmp_path / 'episodes' / f'{rec.id}.json'
        back = EpisodeRecord.from_json(json.loads(p.read_text()))
        assert back == rec and back.to_json() == rec.to_json()
    assert sorted(q.name for q in (tmp_path / 'episodes').iterdir()) == sorted(f'{r.id}.json' for r in (second_try, lm_rec))  # no temp left

# ---------------------------------------------------------------- the served path

def test_served_agent_plays_a_full_episode(tmp_path, platform):
    from agentforge.served import ChatServer, OpenAIAgent
    with ChatServer.from_agent(ScriptedAgent('heuristic')) as srv:
        agent = OpenAIAgent(srv.url, srv.model, backoff=0.01, timeout=30)
        rec = _play(agent, 'string_ops', 0, tmp_path, platform)
        assert len(srv.requests) == 1 and srv.requests[0]['body']['tools'][0]['type'] == 'function'
    train_and_grade([rec], tmp_path / 'run', weights='mock')
    assert (rec.ended, rec.validated_on, rec.reward['total'], rec.agent) == ('validated', 1, 1.0, 'openai:scripted-heuristic')
    direct = _play(ScriptedAgent('heuristic'), 'string_ops', 0, tmp_path / 'direct', platform)
    assert [c['arguments'] for c in rec.tool_calls] == [c['arguments'] for c in direct.tool_calls]   # the same spec over HTTP
    # the server is gone: the agent is unavailable, and the episode says where it tried
    gone = OpenAIAgent(srv.url, srv.model, backoff=0.01, timeout=5, retries=1)
    rec = _play(gone, 'string_ops', 0, tmp_path / 'gone', platform)
    assert (rec.ended, rec.attempts, len(rec.turns)) == ('agent_error', 0, 0)
    assert rec.error.startswith('AgentUnavailable: ') and f'{srv.url}/chat/completions' in rec.error

# ---------------------------------------------------------------- identical specs, one inner job

@pytest.mark.slow
def test_identical_specs_share_one_inner_job(tmp_path, monkeypatch):
    "Two heuristic episodes write the same spec: one pool job trains it, both records read its result."
    from agentforge.scoring import result_path
    from agentforge.pool import Pool
    from agentforge.tasks import cache_dir
    cache = tmp_path / 'cache'; cache.mkdir()   # a private result cache, so the job runs even if this spec was trained before
    if (cache_dir() / 'students').is_dir(): (cache / 'students').symlink_to(cache_dir() / 'students', target_is_directory=True)
    monkeypatch.setenv('AGENTFORGE_CACHE_DIR', str(cache))
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(tmp_path / 'platform'))
    run = tmp_path / 'run'
    recs = run_episodes(ScriptedAgent('heuristic'), [('string_ops', 0), ('string_ops', 1)], run, weights='reference')
    jobs = Pool(run / 'pool').jobs()
    assert len(jobs) == 1 and jobs[0].state == 'done', [(j.state, j.error) for j in jobs]
    key = jobs[0].key
    assert [r.inner['key'] for r in recs] == [key, key] and all('error' not in r.inner for r in recs)
    assert result_path(key).exists() and str(result_path(key)).startswith(str(cache))
    assert [p.name for p in (run / 'pool' / 'specs').iterdir()] == [Path(jobs[0].args['spec_dir']).name]   # one copy
    assert all(Path(v).is_absolute() for k, v in jobs[0].args.items() if k in ('spec_dir',))
    assert [r.job['state'] for r in recs] == ['done', 'done'] and all(r.graded for r in recs)
    for r in recs:
        want = episode_reward(1, r.inner['pre'], r.inner['post'], r.inner['train_seconds'], 60.0, weights='reference')
        assert r.reward == asdict(want) and r.reward['validation'] == 1.0
    assert sorted(p.name for p in (run / 'episodes').glob('*.json')) == sorted(f'{r.id}.json' for r in recs)

# ---------------------------------------------------------------- a spec chooses its student among those offered

class PicksLarge(Agent):
    "Writes the heuristic spec for the larger student (lesson 03b) and submits it."
    name = 'picks-large'
    def act(self, messages, tools, seed):
        spec = write_spec('string_ops', HEURISTIC).replace('student: tiny-student\n', 'student: tiny-student-large\n')
        return Turn('', [ToolCall('write_file', dict(path='task.yaml', content=spec)), ToolCall('submit', {})], tokens=3)

def test_a_student_the_brief_does_not_offer_is_refused(tmp_path, platform):
    "Not offered: the probe says so (never a silent swap to the brief's student), and nothing trains."
    rec = _play(PicksLarge(), 'string_ops', 0, tmp_path, platform)
    assert rec.ended == 'retries_exhausted' and not rec.validated_on
    assert {r['reason'] for r in rec.probe_reports} == {'STUDENT_NOT_OFFERED'}
    assert 'student: tiny-student\n' in rec.messages[1]['content'] + '\n' and '(or:' not in rec.messages[1]['content']

@pytest.mark.slow
def test_an_offered_student_is_the_one_that_trains(tmp_path, monkeypatch):
    "Offered: the brief names it, the spec validates, and its inner job trains and scores that student, not the default."
    from agentforge.pool import Pool
    from agentforge.tasks import cache_dir
    cache = tmp_path / 'cache'; cache.mkdir()
    if (cache_dir() / 'students').is_dir(): (cache / 'students').symlink_to(cache_dir() / 'students', target_is_directory=True)
    monkeypatch.setenv('AGENTFORGE_CACHE_DIR', str(cache))
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(tmp_path / 'platform'))
    run = tmp_path / 'run'
    [rec] = run_episodes(PicksLarge(), [('string_ops', 0)], run, weights='reference', students=('tiny-student-large',))
    assert 'student: tiny-student (or: tiny-student-large)' in rec.messages[1]['content']
    assert rec.validated_on == 1 and rec.graded, (rec.ended, rec.error, rec.job)
    [job] = Pool(run / 'pool').jobs()
    assert job.args['student'] == 'tiny-student-large' and rec.inner['student'] == 'tiny-student-large'
    want = episode_reward(1, rec.inner['pre'], rec.inner['post'], rec.inner['train_seconds'], 60.0, weights='reference')
    assert rec.reward == asdict(want)

class LooksFirst(Agent):
    "Calls `baseline` once, then stops without a spec."
    def act(self, messages, tools, seed):
        return Turn('', [ToolCall('baseline', {})], 0) if len(messages) == 2 else Turn('I stop here.', [], 0)

@pytest.mark.slow
def test_baseline_reports_every_offered_student_and_cloning_asks_for_none(tmp_path):
    "Offered: one `baseline` call gives both students' dev scores (each from its own manifest); baselines=False: one."
    from agentforge.student import RECIPES, student_manifest
    large = student_manifest(RECIPES['tiny-student-large'])['dev_scores']['date_math']   # builds it the first time
    rec = play(LooksFirst(), 'date_math', 0, tmp_path / 'a', saturation=False, students=('tiny-student-large',))
    res = rec.tool_calls[0]['result']
    assert res['ok'] and res['score'] == round(student_manifest()['dev_scores']['date_math'], 2)
    assert res['students']['tiny-student-large']['score'] == round(large, 2)
    assert set(res['students']['tiny-student-large']['levels']) == {'1', '2', '3'}
    plain = play(LooksFirst(), 'date_math', 0, tmp_path / 'b', saturation=False, students=('tiny-student-large',),
                 baselines=False).tool_calls[0]['result']
    assert 'students' not in plain and plain['score'] == res['score']
