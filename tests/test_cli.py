"The agentforge command: help lists built and coming commands; errors exit 2 with a message."
import json
import pytest
from pathlib import Path
from typer.testing import CliRunner
from agentforge.cli import app

R = CliRunner()

def test_help_lists_commands():
    r = R.invoke(app, ['--help'])
    assert r.exit_code == 0
    for c in ('families', 'brief', 'student', 'grade', 'demo', 'validate', 'train', 'pool', 'outer', 'transfer'):
        assert c in r.output

def test_families_json():
    r = R.invoke(app, ['families', '--json'])
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert len(data) == 6 and data['customer_support']['multi_turn'] is True

def test_brief_and_unknown_brief():
    r = R.invoke(app, ['brief', 'arithmetic', '--n', '2'])
    assert r.exit_code == 0 and 'answer:' in r.output
    r = R.invoke(app, ['brief', 'poetry'])
    assert r.exit_code == 2 and 'accepted' in r.output

def test_grade_values_and_errors():
    r = R.invoke(app, ['grade', '--attempt', '1', '--pre', '0.5', '--post', '0.75', '--train-seconds', '900'])
    out = json.loads(r.output)
    assert r.exit_code == 0 and out['uplift'] == 0.25 and out['quality'] == 0.25 * 0.75 + 0.75 * 0.25   # raw gain
    assert abs(out['total'] - (0.35 + 0.6 * out['quality'] + 0.05 * 0.5)) < 1e-9
    r = R.invoke(app, ['grade', '--attempt', '1', '--pre', '0.5', '--post', '0.75', '--train-seconds', '30',
                       '--budget-seconds', '60', '--weights', 'v0'])
    out = json.loads(r.output)
    assert r.exit_code == 0 and out['uplift'] == 0.5 and abs(out['total'] - (0.35 + 0.6 * 0.5 + 0.05 * 0.5)) < 1e-9
    r = R.invoke(app, ['grade', '--attempt', '1', '--pre', '0.5', '--post', '0.7', '--weights', 'generous'])
    assert r.exit_code == 2 and 'reference' in r.output

def test_two_loop_commands_refuse_bad_input(tmp_path):
    "transfer on a folder that is not a run, an unknown holdout, and a run folder holding another configuration: exit 2."
    r = R.invoke(app, ['transfer', '--out', str(tmp_path / 'none')])
    assert r.exit_code == 2 and 'not a run folder' in r.output
    r = R.invoke(app, ['outer', '--out', str(tmp_path / 'run'), '--holdout', 'chess'])
    assert r.exit_code == 2 and 'customer_support' in r.output  # the message lists the accepted ids
    from agentforge.config import RunConfig, freeze
    freeze(RunConfig(holdout='date_math'), tmp_path / 'run2')
    r = R.invoke(app, ['demo', '--out', str(tmp_path / 'run2')])
    assert r.exit_code == 2 and 'different configuration' in r.output
    r = R.invoke(app, ['demo', '--out', str(tmp_path / 'run3'), '--eval-temperature', '0'])
    assert r.exit_code == 2 and 'eval_temperature must be > 0' in r.output and not (tmp_path / 'run3').exists()
    r = R.invoke(app, ['demo', '--out', str(tmp_path / 'run2'), '--holdout', 'date_math', '--eval-temperature', '0.7'])
    assert r.exit_code == 2 and 'eval_temperature' in r.output   # the folder froze 0.3: a changed setting is named

def test_episode_command(tmp_path):
    "One scripted episode without training: the record is written and the reward is the first-try validation score."
    r = R.invoke(app, ['episode', 'string_ops', '--no-train', '--out', str(tmp_path)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout[r.stdout.index('{'):])
    assert out['ended'] == 'validated' and out['validated_on'] == 1 and out['reward']['total'] == 1.0  # 'mock' weights
    assert Path(out['record']).exists()
    r = R.invoke(app, ['episode', 'string_ops', '--agent', 'gpt'])
    assert r.exit_code == 2 and 'scripted-random' in r.output
    r = R.invoke(app, ['episode', 'string_ops', '--no-train', '--students', 'tiny-student'])
    assert r.exit_code == 2 and 'tiny-student-large' in r.output   # names the students it could offer
    r = R.invoke(app, ['episode', 'string_ops', '--no-train', '--agent', 'scripted-random', '--seed', '3',
                       '--students', 'tiny-student-large', '--out', str(tmp_path / 'offer')])
    rec = json.loads(Path(json.loads(r.stdout[r.stdout.index('{'):])['record']).read_text())
    assert rec['messages'][1]['content'].endswith('student: tiny-student (or: tiny-student-large)')
    assert 'student: tiny-student-large\n' in rec['tool_calls'][1]['arguments']['content']   # this seed drew it

def test_pool_commands(tmp_path):
    "status on a missing pool is a usage error; a queued inner job shows up; a worker --until-idle runs a queue to empty."
    r = R.invoke(app, ['pool', 'status', '--root', str(tmp_path / 'none')])
    assert r.exit_code == 2 and 'no pool' in r.output
    from agentforge.pool import Pool
    p = Pool(tmp_path / 'p', capacity={'inner': 1})
    jid = p.submit('json:dumps', dict(obj=1), key='k')  # a stdlib function is still fn(job_dir, **args): it fails
    r = R.invoke(app, ['pool', 'status', '--root', str(tmp_path / 'p')])
    assert r.exit_code == 0 and 'inner' in r.output and 'queued' in r.output
    r = R.invoke(app, ['pool', 'worker', '--root', str(tmp_path / 'p'), '--until-idle', '--lease-s', '5'])
    job = p.get(jid)
    assert r.exit_code == 0 and (job.state, job.attempts) == ('dead', 3) and 'TypeError' in job.error, (job.state, job.error)
    r = R.invoke(app, ['pool', 'worker', '--root', str(tmp_path / 'p'), '--backend', 'slurm'])
    assert r.exit_code == 2 and 'local' in r.output


def test_validate_exit_codes_and_json(tmp_path, monkeypatch):
    from agentforge.spec import QUOTAS
    from agentforge.rows import example_spec
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(tmp_path / 'platform'))
    r = R.invoke(app, ['validate', '--help'])
    assert r.exit_code == 0 and 'max_files' in r.output and str(QUOTAS['max_files']) in r.output
    assert R.invoke(app, ['validate', str(tmp_path / 'missing')]).exit_code == 2
    spec = example_spec('string_ops', tmp_path / 'spec', hidden_root=tmp_path / 'platform')
    assert R.invoke(app, ['validate', str(spec), '--brief', 'poetry']).exit_code == 2
    r = R.invoke(app, ['validate', str(spec), '--brief', 'arithmetic', '--json'])
    assert r.exit_code == 1 and json.loads(r.output)['reason'] == 'BRIEF_MISMATCH'
    (spec / 'task.yaml').write_text('spec_version: 1\nname: x\n')
    r = R.invoke(app, ['validate', str(spec), '--json'])
    out = json.loads(r.output)
    assert r.exit_code == 1 and out['validated'] is False and out['checks'][0]['id'] == 'schema'


def test_validate_says_what_was_not_checked(tmp_path, monkeypatch):
    "A gate that could not run is shown as SKIP and warned about; the JSON says complete: false."
    from agentforge.rows import example_spec
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(tmp_path / 'platform')); monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    spec = example_spec('string_ops', tmp_path / 'spec', student='qwen3-0.6b', hidden_root=tmp_path / 'platform')
    r = R.invoke(app, ['validate', str(spec)])
    assert r.exit_code == 0 and 'SKIP saturation' in r.output and 'saturation NOT CHECKED' in r.stderr, r.output
    r = R.invoke(app, ['validate', str(spec), '--json'])
    assert r.exit_code == 0 and json.loads(r.stdout)['complete'] is False


def test_train_without_weights_fails_at_once_saying_where_they_go(tmp_path, monkeypatch):
    "A qwen3-0.6b spec on a machine with no weights and no hub: exit 2 with where to put them, before any job starts."
    from agentforge.presets import in_hub_cache
    from agentforge.rows import example_spec
    if in_hub_cache('Qwen/Qwen3-0.6B'): pytest.skip('this machine has the real weights in its hub cache')
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(tmp_path / 'platform'))
    monkeypatch.setenv('HF_HUB_OFFLINE', '0'); monkeypatch.setenv('HF_ENDPOINT', 'http://127.0.0.1:9')  # refused at once
    spec = example_spec('string_ops', tmp_path / 'spec', student='qwen3-0.6b', hidden_root=tmp_path / 'platform')
    for extra in ([], ['--skip-probe']):
        r = R.invoke(app, ['train', str(spec), *extra])
        assert r.exit_code == 2 and 'the hub is not reachable from here' in r.stderr, r.output
        assert 'hf download Qwen/Qwen3-0.6B' in r.stderr and 'Traceback' not in r.output


def test_demo_that_stops_exits_2_with_the_reason(tmp_path, monkeypatch):
    "Too many dead inner jobs: `demo` exits 2 and prints the error (first failure, its log), not a traceback."
    import agentforge.experiments as experiments, agentforge.run as run
    from agentforge.episode import InnerJobsFailed
    monkeypatch.setattr(experiments, '_demo_header', lambda cfg, out: None)
    def stop(cfg, out, *a, **kw): raise InnerJobsFailed('2 of 2 inner jobs died in step 0 ... Its log: /x/attempt-3/log.txt')
    monkeypatch.setattr(run, 'two_loop', stop)
    monkeypatch.chdir(tmp_path)
    r = R.invoke(app, ['demo', '--out', 'runs/x', '--steps', '1'])
    assert r.exit_code == 2 and '2 of 2 inner jobs died' in r.output and 'Traceback' not in r.output
    assert (tmp_path / 'runs' / 'x' / 'config.yaml').is_file()   # the relative --out, resolved against the cwd

def test_draft_runs_one_episode_with_a_trained_checkpoint_and_trains_nothing(tmp_path):
    "adapter:RUN/checkpoints/step-N loads a verified outer checkpoint; a run folder means its newest; a bad one exits 2."
    import torch
    from agentforge.cloning import load_tiny_agent
    from agentforge.outer import save_state
    agent = load_tiny_agent(progress=False)
    opt = torch.optim.AdamW([p for p in agent.model.parameters() if p.requires_grad], lr=1e-4)
    ck = save_state(tmp_path / 'run', 3, agent, opt, meta={})
    for where in (ck, tmp_path / 'run'):
        r = CliRunner().invoke(app, ['draft', 'string_ops', '--agent', f'adapter:{where}', '--out', str(tmp_path / 'd')])
        assert r.exit_code in (0, 1) and 'nothing was trained' in r.output and 'attempt 1:' in r.output, r.output
        rec = json.loads((tmp_path / 'd' / 'episodes' / 'adapter-string_ops-0.json').read_text())
        assert rec['inner'] is None and rec['job'] is None and rec['agent'] == 'adapter'   # no inner job ran
    (ck / 'state.json').write_text('{}')   # the manifest no longer matches
    r = CliRunner().invoke(app, ['draft', 'string_ops', '--agent', f'adapter:{ck}', '--out', str(tmp_path / 'd')])
    assert r.exit_code == 2 and 'not a verified checkpoint' in r.output and 'sha256 mismatch' in r.output, r.output


def test_train_report_shows_harm_and_its_noise():
    "What `agentforge train` prints: a harmful job's loss signed (a gain clipped at 0 read it as nothing), its SE beside it."
    from types import SimpleNamespace
    from agentforge.cli import _train_report
    r = SimpleNamespace(spec='harm', brief='unit_conversion', student='tiny-student', seed=0, cached=False, pre=0.3,
                        post=0.0, samples=0, uplift_se=0.0144, steps=48, train_seconds=20.0, stopped_early=False,
                        metrics={'reward': {'first': 0.3, 'last': 0.0}}, model_dir='m', uplift=0.0)
    text = _train_report(r)
    assert '(greedy)' in text and 'post − pre -0.300 ± 0.014 SE' in text and 'normalised gain -0.429' in text, text
    assert 'SE not measured' in _train_report(SimpleNamespace(**{**vars(r), 'uplift_se': None, 'samples': 4}))
