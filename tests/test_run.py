"""agentforge.run: the run configuration (frozen, hashed, only `steps` may change) and the real outer path — a cloned
tiny agent playing real episodes through the real probe, LoRA-GRPO updates, checkpoints — resuming after a SIGKILL
to exactly the metrics and adapter of an uninterrupted run."""
import dataclasses, json, os, subprocess, sys
import pytest, torch, yaml
from agentforge import episode, outer
from agentforge.agents import TinyAgent
from agentforge.cloning import CloneRecipe, build_agent_base
from agentforge.families import FAMILIES
from agentforge.config import RunConfig, freeze

# ---------------------------------------------------------------- configuration

def test_unknown_holdout_lists_the_accepted_ids():
    with pytest.raises(ValueError) as e: RunConfig(holdout='poetry')
    assert "'poetry'" in str(e.value) and all(f in str(e.value) for f in FAMILIES)

@pytest.mark.parametrize('bad', [dict(eval_per_family=1), dict(eval_per_family=0), dict(steps=0), dict(slots=0)])
def test_bad_sizes_are_refused(bad):
    with pytest.raises(ValueError, match='eval_per_family >= 2'): RunConfig.of(**bad)
    RunConfig.of(**{k: 2 if k == 'eval_per_family' else 1 for k in bad})   # the smallest accepted values

def test_outer_config_trains_on_every_family_but_the_holdout():
    cfg = RunConfig.of(holdout='date_math', steps=3, learning_rate=1e-2).outer
    assert cfg.families == tuple(f for f in FAMILIES if f != 'date_math') and (cfg.steps, cfg.learning_rate) == (3, 1e-2)

def test_offered_students_are_checked_frozen_and_read_back(tmp_path):
    from agentforge.config import load_config
    for bad in (('tiny-student',), ('gpt-2',), ('tiny-student-large', 'tiny-student-large')):
        with pytest.raises(ValueError, match='students'): RunConfig(students=bad)
    cfg = RunConfig(students=['tiny-student-large'])
    assert RunConfig(students='tiny-student-large') == cfg   # one name, not its characters
    assert cfg.students == ('tiny-student-large',) and cfg.hash() != RunConfig().hash()
    freeze(cfg, tmp_path)
    assert yaml.safe_load((tmp_path / 'config.yaml').read_text())['config']['students'] == ['tiny-student-large']
    assert load_config(tmp_path) == cfg
    with pytest.raises(ValueError, match="'students'"): freeze(RunConfig(), tmp_path)

def test_freeze_refuses_a_different_config_and_allows_more_steps(tmp_path):
    cfg = RunConfig.of(eval_trained=('string_ops', 'arithmetic'), learning_rate=1e-3, steps=4)
    p = freeze(cfg, tmp_path)
    assert yaml.safe_load(p.read_text())['config']['eval_trained'] == ['string_ops', 'arithmetic']
    more = lambda cfg, **o: dataclasses.replace(cfg, outer=dataclasses.replace(cfg.outer, **o))   # outer settings
    assert freeze(more(cfg, steps=20), tmp_path) == p   # extending a run is allowed
    assert yaml.safe_load(p.read_text())['config']['outer']['steps'] == 20
    before = p.read_text()
    with pytest.raises(ValueError, match='different configuration') as e: freeze(more(cfg, steps=20, learning_rate=5e-4), tmp_path)
    assert "'learning_rate': (0.001, 0.0005)" in str(e.value) and "'steps'" not in str(e.value)
    with pytest.raises(ValueError, match='eval_trained'): freeze(dataclasses.replace(cfg, eval_trained=('string_ops',)), tmp_path)
    assert p.read_text() == before   # a refused freeze leaves the run's config alone
    assert RunConfig(eval_trained=['string_ops']).hash() == RunConfig(eval_trained=('string_ops',)).hash() != RunConfig(eval_trained=('arithmetic',)).hash()

def test_a_run_is_scored_on_one_install_s_hidden_splits_and_refuses_another_s(tmp_path, monkeypatch):
    """Two installs draw their hidden splits from their own secret.key (two fresh `make demo` runs of the same code
    began 0.486 and 0.596 for that reason: retros/2026-12-07-two-installs-two-demos.md). A run folder records its
    splits; resuming it on another install's is refused before anything runs, and the report names them."""
    from agentforge.report import write_report
    from agentforge.run import freeze_hidden, two_loop
    from agentforge.scoring import hidden_digest
    a, b, out = tmp_path / 'install-a', tmp_path / 'install-b', tmp_path / 'run'
    first = freeze_hidden(out, ['arithmetic'], root=a)
    assert first == dict(data_dir=str(a), digests={'arithmetic': hidden_digest('arithmetic', a)})
    assert hidden_digest('arithmetic', b) != first['digests']['arithmetic']  # another secret, other items
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(b))
    with pytest.raises(ValueError, match=f'AGENTFORGE_DATA_DIR={a}'): two_loop(RunConfig.of(steps=1), out, progress=False)
    assert not (out / 'events.jsonl').exists()  # refused before the run started
    (out / 'metrics.jsonl').write_text(json.dumps(dict(step=0, episodes=2, graded=2, reward_mean=0.5)) + '\n')
    assert f"this install's (`{a}`, 1 family)" in write_report(out).read_text()

# ---------------------------------------------------------------- the real outer path, killed and resumed

pytestmark = pytest.mark.usefixtures('one_thread')  # tests/conftest.py

# A miniature clone trained long enough to reproduce its few scripted turns (a give-up, specs that fail, a fix that
# validates on attempt 2): its episodes get different rewards within a group, so some outer updates are real.
RECIPE = CloneRecipe(episodes_per_family=3, families=('string_ops', 'arithmetic'), steps=100, batch=8, lr=5e-3, vocab_size=1024)
# The reward is the validation score ('mock' weights) plus a tie-breaker from each episode's own token count, so groups
# are (almost) never tied whatever this miniature clone writes: the resumed run must restore an adapter that has
# moved and the optimizer's moments to reproduce the later steps. (Relying on a lucky seed broke when the scripted
# agent's seeding changed and every step of the clone's episodes tied at 0.)
# seed 26 of the independent draw ('iid') gives briefs whose groups differ, so an update happens; the balanced default
# draws others, all tied here (resume of that schedule: tests/test_outer.py, a pure function of seed and step)
CFG = outer.OuterConfig(steps=3, group_size=2, briefs_per_step=1, families=('string_ops', 'arithmetic'), learning_rate=1e-2, seed=26,
                        schedule='iid')
MAX_NEW = 160   # the clone's turns are < 100 tokens; a babbling turn stops here instead of at 640

@pytest.fixture(scope='module')
def base(tmp_path_factory): return build_agent_base(RECIPE, progress=False, root=tmp_path_factory.mktemp('agent-bases'))

def tiebreak(records:list) -> list:
    "Add tokens / 10,000 to each episode's total: a deterministic test reward computed from the real episode."
    for r in records: r.reward = {**r.reward, 'total': r.reward['total'] + r.tokens / 10_000}
    return records

def rollout_in(run_dir):
    return lambda a, jobs, step: tiebreak(episode.run_episodes(a, jobs, run_dir, weights='mock', step=step))

def fresh_agent(base) -> TinyAgent:
    # TinyAgent adds a *fresh* LoRA whose A matrices are randomly initialised (B is zero): seed torch right before
    # constructing it, so the uninterrupted run and the resumed one (and the child) start from the same adapter.
    torch.manual_seed(0)
    return TinyAgent(base, max_new_tokens=MAX_NEW)

def _lora(agent) -> dict: return {n: p.detach().clone() for n, p in agent.model.named_parameters() if 'lora_' in n}
def _no_seconds(rows) -> list: return [{k: v for k, v in r.items() if not k.startswith('seconds')} for r in rows]

CHILD = r'''
import json, os, signal, sys, torch
torch.set_num_threads(1)
from agentforge import episode, outer
from agentforge.agents import TinyAgent
base, run_dir, cfg, max_new = sys.argv[1], sys.argv[2], outer.OuterConfig(**json.loads(sys.argv[3])), int(sys.argv[4])
def rollout(a, jobs, step):
    if step == 2:   # killed mid-step: step 1's checkpoint exists, step 2 has played (and saved) one of its episodes
        episode.run_episodes(a, jobs[:1], run_dir, weights='mock', step=step)
        os.kill(os.getpid(), signal.SIGKILL)
    recs = episode.run_episodes(a, jobs, run_dir, weights='mock', step=step)
    for r in recs: r.reward = {**r.reward, 'total': r.reward['total'] + r.tokens / 10_000}   # as tiebreak() in the parent
    return recs
torch.manual_seed(0)   # the fresh LoRA's A matrices are random: seeded as in the parent
outer.train(TinyAgent(base, max_new_tokens=max_new), cfg, run_dir, rollout, progress=False)
'''

@pytest.mark.slow
def test_killed_outer_run_resumes_to_the_uninterrupted_result(tmp_path, base, monkeypatch):
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(tmp_path / 'platform'))   # a private platform (hidden splits), child included
    run_a, run_b = tmp_path / 'a', tmp_path / 'b'
    a = fresh_agent(base)
    init = _lora(a)
    rows_a = outer.train(a, CFG, run_a, rollout_in(run_a), progress=False)
    assert [r['step'] for r in rows_a] == [0, 1, 2]
    # require at least one real update, or the test proves little
    assert any(not r['skipped'] for r in rows_a), f"every step tied: {[(r['skipped'], r['reward_mean']) for r in rows_a]}"
    lora_a = _lora(a)
    assert any(not torch.equal(lora_a[n], init[n]) for n in init)   # the adapter learned something
    assert (tmp_path / 'platform' / 'hidden').is_dir()

    p = subprocess.run([sys.executable, '-c', CHILD, str(base), str(run_b), json.dumps(CFG.to_json()), str(MAX_NEW)], capture_output=True,
                       text=True, timeout=600, env={**os.environ, 'OMP_NUM_THREADS': '1'})
    assert p.returncode == -9, p.stderr[-3000:]
    assert sorted(q.name for q in (run_b / 'checkpoints').glob('step-*')) == ['step-0', 'step-1']
    assert [r['step'] for r in outer.read_metrics(run_b)] == [0, 1]
    assert len(list((run_b / 'episodes').glob('*-s002-*.json'))) == 1   # step 2 was under way when it died

    b = fresh_agent(base)
    rows_b = outer.train(b, CFG, run_b, rollout_in(run_b), progress=False)
    assert [r['step'] for r in rows_b] == [0, 1, 2]
    keys = ('reward_mean', 'validation_first_try_rate', 'loss', 'samples')
    assert [[r[k] for k in keys] for r in rows_b] == [[r[k] for k in keys] for r in rows_a]
    assert _no_seconds(rows_b) == _no_seconds(rows_a)
    lora_b = _lora(b)
    assert lora_b.keys() == lora_a.keys() and all(torch.equal(lora_b[n], lora_a[n]) for n in lora_a)
    ids = lambda run: sorted(q.name for q in (run / 'episodes').glob('*.json'))
    assert ids(run_b) == ids(run_a) and len(ids(run_a)) == 6
    turns = lambda run, name: json.loads((run / 'episodes' / name).read_text())['turns']
    assert all(turns(run_a, n) == turns(run_b, n) for n in ids(run_a))   # the same tokens sampled, the same log-probs


def test_the_preflight_prices_a_shipped_build_as_a_copy_and_any_other_recipe_as_its_build(tmp_path, monkeypatch):
    "Both default models ship with the package (lessons 03b, 10a); a run that offers the larger student clones its own."
    from agentforge.cloning import BUNDLED as AGENTS
    from agentforge.config import RunConfig
    from agentforge.run import COSTS_S, build_cost, clone_for, preflight
    from agentforge.student import BUNDLED as STUDENTS, LARGE, StudentRecipe
    assert build_cost('student', StudentRecipe(), STUDENTS) == (COSTS_S['student'], 'copied from the shipped build')
    assert build_cost('agent_base', CloneRecipe(), AGENTS) == (COSTS_S['agent_base'], 'copied from the shipped build')
    offered = clone_for(RunConfig.of(students=('tiny-student-large',)))
    assert build_cost('agent_base', offered, AGENTS) == (COSTS_S['agent_base_clone'], 'built')
    assert build_cost('tiny-student-large', LARGE, STUDENTS) == (COSTS_S['tiny-student-large'], 'built')
    assert COSTS_S['student'] < 10 and COSTS_S['agent_base'] < 10 < COSTS_S['agent_base_clone'] < COSTS_S['student_pretrain']
    monkeypatch.setenv('AGENTFORGE_CACHE_DIR', str(tmp_path / 'empty-cache'))   # nothing built here yet
    said = []
    pre = preflight(RunConfig.of(steps=1), tmp_path / 'run', say=said.append)
    text = '\n'.join(said)
    assert pre['builds'] == dict(student=False, agent_base=False)
    assert 'student    not here yet: copied from the shipped build first, once' in text
    assert 'agent_base not here yet: copied from the shipped build first, once' in text


def test_progress_summary_counts_what_never_validated():
    "The demo's last progress line says how many episodes' specs never validated and why (lesson 10's why_not)."
    from agentforge.run import progress_summary
    rows = [dict(episodes=16, graded=16, jobs=dict(jobs=5), not_validated={'no_submit': 2}),
            dict(episodes=16, graded=15, jobs=dict(jobs=4, dead=1), not_validated={'MISSING_FILE': 3, 'no_submit': 1}),
            dict(episodes=16, graded=16, jobs=dict(jobs=3))]  # a row from before the counts: nothing to add
    assert progress_summary(rows) == ('3 steps, 47/48 episodes graded, 12 inner jobs (1 DIED); 6 never validated '
                                      '(no_submit 3, MISSING_FILE 3)')
    assert 'never validated' not in progress_summary(rows[2:])
