"""The inner job: TRL GRPOTrainer on the tiny student, rewards across the sandbox wall, atomic checkpoints and resume,
hidden scoring in an isolated process, the result cache, the CLI, and jobs killed on the pool.

Real parts throughout: TRL's GRPOTrainer, the tiny student built by `agentforge student`, bubblewrap for reward.py,
real SQLite and real child processes for the pool, SIGKILL for kills.
"""
import errno, gc, json, os, shutil, signal, statistics, sys, threading, time
from pathlib import Path
import pytest, torch, yaml
from safetensors.torch import load_file
from transformers import TrainerCallback
from typer.testing import CliRunner
from agentforge.cli import app
from agentforge.families import FAMILIES
from agentforge.inner import (RewardFailed, grpo_args, grpo_config, inner_outcome, kind_scores, load_student_model,
                              run_inner, submit_inner, train_spec, training_dataset)
from agentforge.scoring import result_key, result_path, score_hidden
from agentforge.pool import Pool
import agentforge.runner as runner
from agentforge.durable import ResumeMismatch
from agentforge.schema import load_spec
from agentforge.rows import example_spec, load_rows
from agentforge.tasks import HIDDEN_SIZE

@pytest.fixture(scope='module')
def platform(tmp_path_factory): return tmp_path_factory.mktemp('platform')

def spec_dir(where:Path, family:str, platform:Path, n:int=32, rewards=None, reward_py:str|None=None, **grpo) -> Path:
    "An example spec for `family`, with grpo fields and rewards overridden and an optional reward.py."
    d = example_spec(family, where, n=n, hidden_root=platform)
    doc = yaml.safe_load((d / 'task.yaml').read_text()); doc['grpo'].update(grpo)
    if rewards is not None: doc['rewards'] = rewards
    (d / 'task.yaml').write_text(yaml.safe_dump(doc, sort_keys=False))
    if reward_py is not None: (d / 'reward.py').write_text(reward_py)
    return d

def weights(folder:Path) -> dict: return load_file(Path(folder) / 'model.safetensors')

def test_dataset_is_conversational_with_system_prompt_and_extra_columns(tmp_path, platform):
    d = spec_dir(tmp_path / 's', 'customer_support', platform, n=8)
    doc = yaml.safe_load((d / 'task.yaml').read_text()); doc['system_prompt'] = 'Be brief.'
    (d / 'task.yaml').write_text(yaml.safe_dump(doc))
    spec = load_spec(d)
    rows = [dict(r, level=i) for i, r in enumerate(load_rows(spec, hidden_root=platform))]
    ds = training_dataset(spec, rows)
    assert ds[0]['prompt'][0] == {'role': 'system', 'content': 'Be brief.'} and ds[0]['prompt'][-1]['role'] == 'user'
    assert len(ds[0]['prompt']) > 2 and ds['level'] == list(range(8)) and ds['answer'] == [r['answer'] for r in rows]

def test_configs_for_cpu_and_gpu(tmp_path, platform):
    spec = load_spec(spec_dir(tmp_path / 's', 'arithmetic', platform, max_steps=7, beta=0.04))
    cpu, gpu = grpo_config(spec, tmp_path / 'o', seed=5), grpo_args(spec, tmp_path / 'o', device='cuda')
    assert (cpu.use_cpu, cpu.bf16, cpu.max_steps, cpu.beta, cpu.seed, cpu.reward_weights) == (True, False, 7, 0.04, 5, [1.0])
    assert (gpu.get('use_cpu'), gpu['bf16'], gpu['vllm_mode'], gpu['max_steps']) == (None, True, 'colocate', 7)
    assert cpu.gradient_checkpointing is False and gpu['gradient_checkpointing'] is False  # TRL's default is True
    with pytest.raises(ValueError, match='device'): grpo_args(spec, tmp_path / 'o', device='tpu')

REWARD_PY = '''
import os
open('/tmp/AGENT_WAS_HERE', 'w').write('x')  # inside the sandbox /tmp is a private tmpfs
def length(prompts, completions, answer, **kw):
    return [min(1.0, len(c[0]['content']) / 8) for c in completions]
def breaks(prompts, completions, answer, **kw):
    return [float('nan')] * len(completions)
'''

def test_custom_reward_runs_in_the_sandbox_and_changes_every_parameter(tmp_path, platform):
    "Full fine-tune: after training with a reward that varies, every trainable tensor moved; reward.py never ran here."
    d = spec_dir(tmp_path / 's', 'arithmetic', platform, max_steps=3, reward_py=REWARD_PY,
                 rewards=[dict(use='reward.py:length', weight=1.0)])
    before, _ = load_student_model('tiny-student')
    before = {k: v.clone() for k, v in before.state_dict().items()}
    Path('/tmp/AGENT_WAS_HERE').unlink(missing_ok=True)  # a weak-mode run before may have left it
    t = train_spec(load_spec(d), load_rows(load_spec(d), hidden_root=platform), tmp_path / 'w', save_steps=0)
    after = weights(t.model_dir)
    assert t.steps == 3 and t.reward_calls['reward.py:length'][0] == 3
    changed = [k for k in after if not torch.equal(after[k], before[k])]
    assert sorted(changed) == sorted(after), f"unchanged: {set(after) - set(changed)}"
    assert not any('reward' == m for m in sys.modules)  # reward.py never ran in this process
    if shutil.which('bwrap'):  # the sandbox kept the agent's write out (CI refuses the weak mode: always checked there)
        assert not Path('/tmp/AGENT_WAS_HERE').exists()

def test_failing_custom_reward_stops_training_with_its_reason(tmp_path, platform):
    d = spec_dir(tmp_path / 's', 'arithmetic', platform, max_steps=3, reward_py=REWARD_PY,
                 rewards=[dict(use='reward.py:breaks', weight=1.0)])
    with pytest.raises(RewardFailed) as e: train_spec(load_spec(d), load_rows(load_spec(d), hidden_root=platform), tmp_path / 'w')
    assert e.value.reason == 'REWARD_BAD_VALUE' and not e.value.infra and 'nan' in str(e.value).lower()

def test_all_equal_rewards_give_zero_gradient(tmp_path, platform):
    "A reward that is 0 for every completion: zero advantage, zero gradient, the weights do not move."
    d = spec_dir(tmp_path / 's', 'arithmetic', platform, max_steps=2, rewards=[dict(use='format_regex', pattern='ZZZ', weight=1.0)])
    before, _ = load_student_model('tiny-student')
    t = train_spec(load_spec(d), load_rows(load_spec(d), hidden_root=platform), tmp_path / 'w', save_steps=0)
    after = weights(t.model_dir)
    assert all(torch.equal(after[k], v) for k, v in before.state_dict().items() if k in after)
    assert all(h['reward_std'] == 0 and h['frac_reward_zero_std'] == 1 for h in t.history)

def test_lora_moves_only_the_adapter_and_scores_merged(tmp_path, platform):
    d = spec_dir(tmp_path / 's', 'string_ops', platform, max_steps=2, lora=dict(r=4, alpha=8), learning_rate=1.0e-2,
                 rewards=[dict(use='length_penalty', target=3, weight=1.0)])
    base, _ = load_student_model('tiny-student')
    base_sd = {k: v.clone() for k, v in base.state_dict().items()}
    t = train_spec(load_spec(d), load_rows(load_spec(d), hidden_root=platform), tmp_path / 'w', save_steps=0)
    adapter = load_file(t.model_dir / 'adapter_model.safetensors')
    assert (t.model_dir / 'adapter_config.json').exists() and not (t.model_dir / 'model.safetensors').exists()
    assert any(k.endswith('lora_B.weight') and v.abs().sum() > 0 for k, v in adapter.items())  # B starts at zero
    again, _ = load_student_model('tiny-student')
    assert all(torch.equal(v, base_sd[k]) for k, v in again.state_dict().items())  # the cached base is untouched
    assert 0 <= score_hidden(t.model_dir, 'string_ops', hidden_root=platform)['score'] <= 1

class StopAt(TrainerCallback):
    "Stop training after `step` (a graceful stand-in for a kill; the SIGKILL test below is the real one)."
    def __init__(self, step): self.step = step
    def on_step_end(self, args, state, control, **kw):
        if state.global_step == self.step: control.should_training_stop = True

def test_resume_at_and_past_an_epoch_boundary_is_exact(tmp_path, platform):
    "32 rows, 8 prompts a step: 4 steps an epoch. Resuming inside epoch 1, at its end and inside epoch 2 is bit-exact."
    spec = load_spec(spec_dir(tmp_path / 's', 'string_ops', platform, max_steps=8))
    rows = load_rows(spec, hidden_root=platform)
    ref = weights(train_spec(spec, rows, tmp_path / 'ref', save_steps=2).model_dir)
    for stop in (2, 4, 6):
        train_spec(spec, rows, tmp_path / f'k{stop}', save_steps=2, callbacks=(StopAt(stop),))
        t = train_spec(spec, rows, tmp_path / f'k{stop}', save_steps=2)
        got = weights(t.model_dir)
        assert t.resumed_from == stop and all(torch.equal(got[k], ref[k]) for k in ref), stop

def test_resume_after_sigkill_on_the_pool_matches_uninterrupted(tmp_path, platform):
    "An inner job SIGKILLed after its step-4 checkpoint is retried by the pool, resumes from it, ends on the same weights."
    d = spec_dir(tmp_path / 's', 'string_ops', platform, max_steps=8)
    ref = train_spec(load_spec(d), load_rows(load_spec(d), hidden_root=platform), tmp_path / 'ref', save_steps=2)
    pool = Pool(tmp_path / 'pool', capacity={'inner': 1}, backoff_s=0.1)
    jid = pool.submit('agentforge.inner:inner_job', dict(spec_dir=str(d), hidden_root=str(platform), save_steps=2,
                                                          cache_root=str(tmp_path / 'results')), key='k1')
    worker = threading.Thread(target=runner.work, args=(pool,), kwargs=dict(pool='inner', lease_s=5)); worker.start()
    ckpt, deadline = pool.job_dir(jid) / 'checkpoints' / 'step-4', time.monotonic() + 300
    while not ckpt.exists() and time.monotonic() < deadline: time.sleep(0.05)
    pid = Pool(tmp_path / 'pool').get(jid).pid
    assert ckpt.exists() and pid, 'the job never reached its step-4 checkpoint'
    os.killpg(pid, signal.SIGKILL)
    worker.join(600)
    job = pool.get(jid)
    assert job.state == 'done' and job.attempts == 2, (job.state, job.error)
    assert job.result['resumed_from'] >= 4 and job.result['steps'] == 8
    got, want = weights(job.result['model_dir']), weights(ref.model_dir)
    assert all(torch.equal(got[k], want[k]) for k in want)
    assert [e['event'] for e in pool.events(jid)].count('done') == 1

def test_corrupt_newest_checkpoint_falls_back_and_changed_config_refuses(tmp_path, platform):
    d = spec_dir(tmp_path / 's', 'string_ops', platform, max_steps=4)
    spec, work = load_spec(d), tmp_path / 'w'
    rows = load_rows(spec, hidden_root=platform)
    train_spec(spec, rows, work, save_steps=2)
    newest = work / 'checkpoints' / 'step-4' / 'optimizer.pt'
    data = bytearray(newest.read_bytes()); data[len(data) // 2] ^= 0xFF; newest.write_bytes(bytes(data))
    t = train_spec(spec, rows, work, save_steps=2)
    assert t.resumed_from == 2 and t.steps == 4 and any('step-4/optimizer.pt' in s for s in t.skipped), t.skipped
    doc = yaml.safe_load((d / 'task.yaml').read_text()); doc['grpo']['learning_rate'] = 1.0e-3
    (d / 'task.yaml').write_text(yaml.safe_dump(doc))
    with pytest.raises(ResumeMismatch, match='config'): train_spec(load_spec(d), rows, work, save_steps=2)

def test_disk_full_on_checkpoint_is_an_error_and_commits_nothing_partial(tmp_path, platform):
    """A full disk while writing a checkpoint stops training with an error, never a silent success, and leaves only
    checkpoints that verify. Where this test can mount (root, as in CI) the job folder is a real 8 MiB tmpfs: one
    checkpoint (~5 MB: weights, optimizer state, RNG) fits, the second hits ENOSPC. Elsewhere it is skipped with the
    reason (a simulated ENOSPC inside torch.save would test a different code path)."""
    import subprocess
    from agentforge.durable import latest_checkpoint, verify_checkpoint
    work = tmp_path / 'w'; work.mkdir()
    if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', str(work)], capture_output=True).returncode:
        pytest.skip('cannot mount a tmpfs here (not root): the real disk-full test needs one')
    try:
        spec = load_spec(spec_dir(tmp_path / 's', 'string_ops', platform, max_steps=6))
        with pytest.raises(OSError) as e:  # torch.save itself raises RuntimeError('... unexpected pos ...'): translated
            train_spec(spec, load_rows(spec, hidden_root=platform), work, save_steps=2)
        code, msg = e.value.errno, str(e.value)
        del e; gc.collect()  # the traceback's frames hold the trainer and its open checkpoint file
        assert code == errno.ENOSPC and 'is full' in msg and str(work) in msg, msg
        assert not (work / 'model').exists()  # no final model: the run did not finish
        steps = sorted(p.name for p in (work / 'checkpoints').glob('step-*'))
        assert steps == ['step-2'] and latest_checkpoint(work / 'checkpoints') == work / 'checkpoints' / 'step-2'
        verify_checkpoint(work / 'checkpoints' / 'step-2')
    finally:
        gc.collect()
        if subprocess.run(['umount', str(work)], capture_output=True).returncode:  # still busy: detach it
            subprocess.run(['umount', '-l', str(work)], check=True)

def test_scoring_process_is_isolated_from_the_callers_path(tmp_path, platform, monkeypatch):
    "PYTHONPATH and the current folder cannot put code into the scorer (python -I): a planted sitecustomize never runs."
    evil = tmp_path / 'evil'; evil.mkdir()
    (evil / 'sitecustomize.py').write_text(f"open({str(tmp_path / 'PWNED')!r}, 'w').write('x')\n")
    monkeypatch.setenv('PYTHONPATH', str(evil)); monkeypatch.chdir(evil)
    res = score_hidden('tiny-student', 'arithmetic', hidden_root=platform)
    assert res['items'] == HIDDEN_SIZE and 0 <= res['score'] < 1 and len(res['per_item']) == HIDDEN_SIZE and not (tmp_path / 'PWNED').exists()

def test_result_cache_is_keyed_by_content(tmp_path, platform):
    d = spec_dir(tmp_path / 's', 'arithmetic', platform, max_steps=2)
    a = run_inner(d, hidden_root=platform, cache_root=tmp_path / 'c')
    b = run_inner(d, hidden_root=platform, cache_root=tmp_path / 'c')
    assert (a.cached, b.cached) == (False, True) and a.to_json() == {**b.to_json(), 'cached': False}
    assert b.pre == a.pre and set(a.metrics) >= {'reward', 'reward_std', 'frac_reward_zero_std', 'completion_length', 'clipped_ratio'}
    assert sum(v['n'] for v in a.kinds.values()) == HIDDEN_SIZE and len(a.kinds) > 1  # arithmetic: op x size
    assert abs(sum(v['n'] * v['post'] for v in a.kinds.values()) / HIDDEN_SIZE - a.post) < 1e-3  # the same items
    assert all(v['post_free'] >= v['post'] for v in a.kinds.values())  # cutting the habit never loses a right answer
    k1 = result_key(load_spec(d), 'tiny-student', 0, 2)
    (d / 'notes.md').write_text('a changed byte anywhere in the spec is a different spec\n')
    assert result_key(load_spec(d), 'tiny-student', 0, 2) != k1 and result_key(load_spec(d), 'tiny-student', 1, 2) != k1

def test_kind_scores_pairs_the_kinds_scored_before_and_after():
    pre = dict(kinds={'0': dict(n=3, score=.2, habit_free=.5), '1': dict(n=1, score=0., habit_free=1.)})
    post = dict(kinds={'0': dict(n=3, score=.6, habit_free=.7)})
    assert kind_scores(pre, post) == {'0': dict(n=3, pre=.2, post=.6, pre_free=.5, post_free=.7)}  # '1' unscored after
    assert kind_scores({'score': .2}, post) == {} and kind_scores(pre, {}) == {}  # a result from before kinds: none

def test_a_queued_job_writes_its_result_to_the_cache_it_was_submitted_with(tmp_path, platform):
    """submit_inner(cache_root=C): the job's result lands in C (it once went to the default cache: bench/warm.py timed
    cached results as jobs), and the same job asked again is answered from C without queueing."""
    d = spec_dir(tmp_path / 's', 'arithmetic', platform, max_steps=2)
    pool, cache = Pool(tmp_path / 'pool', capacity={'inner': 1}), tmp_path / 'c'
    job = submit_inner(pool, d, hidden_root=platform, cache_root=cache)
    assert pool.get(job.id).args['cache_root'] == str(cache)
    runner.work(pool, 'inner', until_idle=True)
    out = inner_outcome(pool, job, cache)
    assert out['state'] == 'done', out['error']
    assert result_path(job.key, cache).exists() and not result_path(job.key).exists()
    again = submit_inner(pool, d, hidden_root=platform, cache_root=cache)
    assert again.id is None and inner_outcome(pool, again, cache)['result']['post'] == out['result']['post']
    assert out['result']['score_seconds'] > 0  # the hidden scoring's wall time, reported by every new result

def test_cli_train_json_and_refusals(tmp_path, platform, monkeypatch):
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(platform))
    d = spec_dir(tmp_path / 's', 'arithmetic', platform, max_steps=2)
    r = CliRunner().invoke(app, ['train', str(d), '--json', '--no-cache'])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)  # stdout holds exactly one JSON object (progress goes to stderr)
    assert {'pre', 'post', 'uplift', 'train_seconds', 'steps'} <= set(out) and out['steps'] == 2
    bad = spec_dir(tmp_path / 'bad', 'arithmetic', platform, rewards=[dict(use='contains_answer', weight=1.0)])
    r = CliRunner().invoke(app, ['train', str(bad)])
    assert r.exit_code == 1 and 'not validated' in r.output
    r = CliRunner().invoke(app, ['train', str(tmp_path / 'nope')])
    assert r.exit_code == 2

def test_cli_submit_then_pool_worker_runs_it_once(tmp_path, platform, monkeypatch):
    "train --submit queues an inner job keyed by its result key (twice: one job); pool worker --until-idle runs it."
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(platform))
    d = spec_dir(tmp_path / 's', 'arithmetic', platform, max_steps=2)
    root = tmp_path / 'pool'
    subs = [json.loads(CliRunner().invoke(app, ['train', str(d), '--submit', str(root)]).stdout) for _ in range(2)]
    assert subs[0] == subs[1] and subs[0]['pool'] == 'inner'
    r = CliRunner().invoke(app, ['pool', 'worker', '--root', str(root), '--until-idle'])
    assert r.exit_code == 0, r.output
    job = Pool(root, capacity={'inner': 1}).get(subs[0]['job'])
    assert (job.state, job.attempts, job.result['steps']) == ('done', 1, 2) and len(Pool(root).jobs()) == 1

# Measured with bench/inner.py on three fresh platforms (each its own hidden split): mean post - pre over the six
# families of +0.040 with these example settings (5 of 6 families up); the per-family standard error of post - pre is
# about 0.04 (2 x 128 hidden samples each side), so the mean over six has a standard error of about 0.016.
MARGIN = 0.01

@pytest.mark.slow
def test_post_beats_pre_on_average(tmp_path):
    "One example spec per family, trained end to end (seed 0, a fixed platform secret): mean(post - pre) > MARGIN."
    platform = tmp_path / 'platform'; platform.mkdir()
    (platform / 'secret.key').write_text('5eed' * 16)  # a fixed hidden split, so the test is repeatable
    res = {f: run_inner(example_spec(f, tmp_path / f, n=256, hidden_root=platform), hidden_root=platform,
                        cache_root=tmp_path / 'c') for f in sorted(FAMILIES)}
    gains = {f: round(r.post - r.pre, 4) for f, r in res.items()}
    print('post - pre per family:', gains, 'mean', round(statistics.mean(gains.values()), 4))
    assert all(r.steps == 100 and not r.stopped_early for r in res.values())
    assert statistics.mean(gains.values()) > MARGIN, gains
