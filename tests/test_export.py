"spec init writes a spec the probe validates; an exported script trains with agentforge unimportable, reward.py too."
import json, subprocess, sys
import yaml
from typer.testing import CliRunner
from agentforge.cli import app
from agentforge.rows import example_spec

R = CliRunner()
BLOCKED = ("import runpy, sys; sys.modules['agentforge'] = None; sys.argv = sys.argv[1:]; "
           "runpy.run_path(sys.argv[0], run_name='__main__')")

def test_spec_init_validates_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = R.invoke(app, ['spec', 'init', 'string_ops', 'mine'])
    assert r.exit_code == 0 and 'agentforge validate mine' in r.output, r.output
    assert '# ' in (tmp_path / 'mine' / 'task.yaml').read_text()   # commented
    r = R.invoke(app, ['validate', 'mine', '--json'])
    assert r.exit_code == 0 and json.loads(r.stdout)['validated'] is True, r.output
    r = R.invoke(app, ['spec', 'init', 'string_ops', 'mine'])
    assert r.exit_code == 2 and 'exists' in r.stderr

def test_exported_script_runs_reward_py_without_agentforge(tmp_path):
    "A spec with a reward.py function: the script copies it, checks its values, and trains with no agentforge import."
    spec = example_spec('arithmetic', tmp_path / 'spec')
    doc = yaml.safe_load((spec / 'task.yaml').read_text())
    doc['rewards'].append(dict(use='reward.py:short', weight=0.5))
    doc['grpo']['max_steps'] = 2
    (spec / 'task.yaml').write_text(yaml.safe_dump(doc, sort_keys=False))
    (spec / 'reward.py').write_text('def short(prompts, completions, answer, **kw):\n'
                                    '    return [1.0 if len(str(c)) < 40 else 0.0 for c in completions]\n')
    r = R.invoke(app, ['export', str(spec), str(tmp_path / 'out' / 'train_arith.py')])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in (tmp_path / 'out').iterdir())
    assert names == ['train_arith.py', 'train_arith.rows.jsonl', 'train_arith_reward.py'], names
    assert 'runs in this process: read it first' in (tmp_path / 'out' / 'train_arith.py').read_text()
    p = subprocess.run([sys.executable, '-c', BLOCKED, 'train_arith.py', '--out', 'model'], cwd=tmp_path / 'out',
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout.splitlines()[-1])['steps'] == 2
    assert (tmp_path / 'out' / 'model' / 'config.json').is_file()

def test_export_errors_say_what_to_do(tmp_path):
    r = R.invoke(app, ['export', str(tmp_path / 'nope'), str(tmp_path / 'x.py')])
    assert r.exit_code == 2 and 'is not a folder' in r.stderr
    spec = example_spec('arithmetic', tmp_path / 'spec')
    r = R.invoke(app, ['export', str(spec), str(tmp_path / 'x.txt')])
    assert r.exit_code == 2 and "must end in .py" in r.stderr
    r = R.invoke(app, ['export', str(spec), '--to', 'onnx', str(tmp_path / 'x.py')])
    assert r.exit_code == 2 and 'the only target is trl' in r.stderr
