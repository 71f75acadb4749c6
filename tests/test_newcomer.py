"""The README's demo path as a newcomer meets it: a fresh copy of the repository in a new folder, run from there with
relative paths everywhere (`--out runs/smoke`, a relative AGENTFORGE_DATA_DIR that starts empty), a miniature
configuration. It must exit 0 with zero dead inner jobs and write metrics.jsonl, transfer.json and report.md, all of
whose numbers come from jobs that ran. Every defect of the first newcomer's `make demo` (relative paths handed to a
scorer in another folder, a crash in the transfer stage, dead jobs reported as rewards, a banner per process) fails
one of these assertions. The tiny models come from the shared cache (CI builds them earlier in the same run)."""
import json, os, shutil, sqlite3, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).parent / 'agentforge'


def fresh_copy(dest:Path) -> Path:
    "The repository's tracked and untracked-but-not-ignored files, copied as a fresh clone would have them."
    files = subprocess.run(['git', 'ls-files', '-co', '--exclude-standard', '-z'], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split('\0')
    for f in filter(None, files):
        if (ROOT / f).is_file(): (dest / f).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(ROOT / f, dest / f)
    return dest


@pytest.mark.slow
def test_demo_from_a_fresh_folder_with_relative_paths(tmp_path):
    repo = fresh_copy(tmp_path / 'clone')
    from agentforge.tasks import cache_dir
    env = {**os.environ, 'AGENTFORGE_CACHE_DIR': str(cache_dir()), 'AGENTFORGE_DATA_DIR': 'platform-data',
           'PYTHONUNBUFFERED': '1'}
    env.pop('AGENTFORGE_WEAK_SANDBOX_SAID', None)
    cmd = [str(CLI), 'demo', '--out', 'runs/smoke', '--steps', '1', '--group-size', '2', '--briefs-per-step', '1',
           '--eval-per-family', '2', '--holdout', 'string_ops', '--eval-trained', 'none',   # string_ops: quick jobs
           '--curve-seeds', '1']   # the fixed evaluation: one episode per family before step 0 and after step 1
    p = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    log = p.stdout + p.stderr
    assert p.returncode == 0, log[-4000:]
    run = repo / 'runs' / 'smoke'
    for f in ('config.yaml', 'metrics.jsonl', 'transfer.json', 'report.md', 'events.jsonl'): assert (run / f).is_file(), f
    assert (repo / 'platform-data' / 'secret.key').is_file()   # the relative data dir, resolved against the clone
    states = dict(sqlite3.connect(run / 'pool' / 'queue.db').execute('select state, count(*) from jobs group by state').fetchall())
    assert set(states) <= {'done'}, states   # zero dead, failed or stuck jobs
    rows = [json.loads(l) for l in (run / 'metrics.jsonl').read_text().splitlines()]
    assert len(rows) == 1 and rows[0]['graded'] == rows[0]['episodes'] == 2 and rows[0]['jobs']['dead'] == 0
    t = json.loads((run / 'transfer.json').read_text())
    assert all(r['ungraded'] == 0 for r in t['table'])
    records = [json.loads(q.read_text()) for q in run.glob('**/episodes/*.json')]
    assert len(t['mode']) == 3 * 6 and all(m['total'] is not None for m in t['mode'])   # the modes: 3 agents, 6 families
    assert {r['agent'] for r in t['table'] if '@' in r['agent']} == {'trained@0.7', 'untrained@0.7'}  # eval_temperature
    assert len(records) == 2 + 4 * 2 + 2 * 2 + 3 * 6 + 2 * 6 and all(r['reward'] for r in records)   # every one graded
    curve = [json.loads(l) for l in (run / 'curve.jsonl').read_text().splitlines()]
    assert [c['step'] for c in curve] == [0, 1] and all(c['counts']['graded'] == c['counts']['episodes'] == 6 for c in curve)
    for r in records:   # a validated episode's reward comes from a job that finished
        if r['validated_on']: assert r['job']['state'] in ('done', 'cached') and r['inner']['post'] is not None
    report = (run / 'report.md').read_text()
    assert 'STOPPED' not in report and 'DIED' not in report and 'Episodes graded: 2 of 2' in report
    assert '## Fixed evaluation' in report and 'could not be graded' not in report
    assert 'preflight' in log and 'estimate' in log and log.count('WEAK mode') <= 1
