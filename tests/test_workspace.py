"""The agent's workspace tools (`agentforge.workspace`) under attack: traversal, links, special files, quotas, limits.

After each test the `guard` fixture checks that the planted hidden split is unchanged, that no tool result carries its
canary, and that no temp dir was left behind.
"""
import hashlib, json, os, time
from pathlib import Path
import pytest
from agentforge.grading import MAX_ATTEMPTS
from agentforge.spec import QUOTAS, check_tree
from agentforge.tasks import CANARY_PREFIX, hidden_path, hidden_split
from agentforge.families import get_family
from agentforge.workspace import TOOL_NAMES, TOOL_SCHEMAS, Workspace, check_path


@pytest.fixture(scope='module')
def hidden(tmp_path_factory):
    root = tmp_path_factory.mktemp('af-platform')
    fam = get_family('arithmetic')
    items = hidden_split(fam, root=root)
    path = hidden_path(fam, root)
    return dict(path=path, sha=hashlib.sha256(path.read_bytes()).hexdigest(), canaries=[i.canary for i in items])


class Recorder:
    "A workspace whose every tool result is recorded, to check later that no canary leaked into one."
    def __init__(self, ws): self.ws, self.results = ws, []
    def __getattr__(self, name):
        fn = getattr(self.ws, name)
        if name not in TOOL_NAMES + ['call_tool']: return fn
        def rec(*a, **kw):
            r = fn(*a, **kw); self.results.append(r); json.dumps(r); return r   # every result is JSON-able
        return rec


@pytest.fixture
def guard(hidden, tmp_path):
    before = {e for e in os.listdir('/tmp') if e.startswith('af-')}
    ws = Recorder(Workspace(tmp_path / 'ep' / 'workspace', 'arithmetic', score=lambda b: 0.4167,
                            levels=lambda b: {1: 0.613, 2: 0.9, 3: 0.104}, submissions=tmp_path / 'ep' / 'submissions'))
    yield ws
    assert hashlib.sha256(hidden['path'].read_bytes()).hexdigest() == hidden['sha']
    text = json.dumps(ws.results)
    assert CANARY_PREFIX not in text and not any(c in text for c in hidden['canaries'])
    assert {e for e in os.listdir('/tmp') if e.startswith('af-')} <= before


# ---------------------------------------------------------------- schemas and dispatch
def test_schemas_are_openai_function_tools():
    assert TOOL_NAMES == ['list_files', 'read_file', 'write_file', 'baseline', 'submit']
    for t in TOOL_SCHEMAS:
        f = t['function']
        assert t['type'] == 'function' and f['description'] and f['parameters']['type'] == 'object'
        assert set(f['parameters']['required']) <= set(f['parameters']['properties'])
    json.dumps(TOOL_SCHEMAS)


def test_schemas_render_in_the_chat_template():
    from agentforge.models import build_tokenizer
    tok = build_tokenizer()
    text = tok.apply_chat_template([dict(role='user', content='go')], tools=TOOL_SCHEMAS, add_generation_prompt=True, tokenize=False)
    assert all(n in text for n in TOOL_NAMES) and '"path"' in text


@pytest.mark.parametrize('name,args,code', [
    ('rm_rf', {}, 'UNKNOWN_TOOL'), ('read_file', '{not json', 'BAD_ARGUMENTS'), ('read_file', [], 'BAD_ARGUMENTS'),
    ('read_file', {}, 'BAD_ARGUMENTS'), ('read_file', {'path': 'task.yaml', 'mode': 'rb'}, 'BAD_ARGUMENTS'),
    ('read_file', {'path': ['task.yaml']}, 'BAD_ARGUMENTS'), ('read_file', {'path': 'x', 'offset': True}, 'BAD_ARGUMENTS'),
    ('write_file', {'path': 'task.yaml'}, 'BAD_ARGUMENTS'), ('write_file', {'path': 'task.yaml', 'content': 3}, 'BAD_ARGUMENTS'),
])
def test_bad_tool_calls(guard, name, args, code):
    r = guard.call_tool(name, args)
    assert (r['ok'], r['error']) == (False, code) and r['message']


def test_json_arguments_as_a_model_emits_them(guard):
    assert guard.call_tool('write_file', json.dumps({'path': 'task.yaml', 'content': 'a: 1\n'}))['ok']
    assert guard.call_tool('read_file', '{"path": "task.yaml", "offset": 3, "limit": 1}')['content'] == '1'
    assert guard.call_tool('list_files')['files'] == [dict(path='task.yaml', kind='file', bytes=5)]


# ---------------------------------------------------------------- path traversal
TRAVERSALS = [('../x', 'PATH_TRAVERSAL'), ('data/../../hidden/arithmetic.jsonl', 'PATH_TRAVERSAL'), ('..', 'PATH_TRAVERSAL'),
              ('/etc/passwd', 'PATH_ABSOLUTE'), ('//etc/passwd', 'PATH_ABSOLUTE'), ('a\x00b', 'PATH_BAD_CHAR'),
              ('notes\n.md', 'PATH_BAD_CHAR'), ('notes\u202emd.py', 'PATH_BAD_CHAR'), ('x' * 300, 'PATH_TOO_LONG'),
              ('./task.yaml', 'PATH_INVALID'), ('data//t.jsonl', 'PATH_INVALID'), ('', 'PATH_INVALID'),
              ('a/' * 20 + 'b', 'PATH_TOO_LONG')]

@pytest.mark.parametrize('path,code', TRAVERSALS)
def test_path_traversal_refused_by_every_tool(guard, path, code):
    for r in (guard.read_file(path), guard.write_file(path, 'x')):
        assert (r['ok'], r['error']) == (False, code), (path, r)
    assert guard.list_files()['files'] == []


@pytest.mark.parametrize('path', ['scratch.py', 'data/x.txt', 'data/sub/t.jsonl', 'other/t.jsonl', 'reward.pyc', 'data/.hidden.jsonl'])
def test_writes_only_where_a_spec_may_hold_files(guard, path):
    r = guard.write_file(path, 'x')
    assert (r['ok'], r['error']) == (False, 'PATH_NOT_ALLOWED') and 'allowed' in r['message']
    assert guard.list_files()['files'] == []


# ---------------------------------------------------------------- symlinks, hard links, FIFOs
def test_symlink_to_hidden_file(guard, hidden):
    root = guard.ws.root
    os.symlink(hidden['path'], root / 'notes.md')
    assert guard.read_file('notes.md')['error'] == 'SYMLINK'
    lst = guard.list_files()
    assert lst['files'] == [dict(path='notes.md', kind='symlink', bytes=len(os.readlink(root / 'notes.md')))]
    assert any(p['code'] == 'SYMLINK' for p in lst['problems'])
    sub = guard.submit()
    assert (sub['ok'], sub['attempt']) == (False, 1) and 'SYMLINK' in [p['code'] for p in sub['problems']]
    assert list(guard.ws.submissions.iterdir()) == []                        # the rejected copy (and its link) is gone
    assert guard.write_file('notes.md', 'mine')['ok']                          # replaces the link, never writes through it
    assert not (root / 'notes.md').is_symlink() and (root / 'notes.md').read_text() == 'mine'


def test_symlinked_folder_to_root(guard, hidden):
    os.symlink('/', guard.ws.root / 'data')
    for r in (guard.read_file('data/etc/passwd'), guard.read_file('data/x.jsonl'), guard.write_file('data/x.jsonl', 'pwned')):
        assert (r['ok'], r['error']) == (False, 'SYMLINK'), r
    assert not os.path.exists('/x.jsonl')
    os.unlink(guard.ws.root / 'data')
    os.symlink(hidden['path'].parent, guard.ws.root / 'data')               # a link to the hidden folder itself
    assert guard.read_file('data/arithmetic.jsonl')['error'] == 'SYMLINK'
    assert guard.write_file('data/arithmetic.jsonl', 'overwrite')['error'] == 'SYMLINK'
    sub = guard.submit()
    assert sub['ok'] is False and 'SYMLINK' in [p['code'] for p in sub['problems']]


def test_hard_link_rejected_at_submit(guard, hidden, tmp_path):
    outside = tmp_path / 'outside.jsonl'
    outside.write_text('{}\n')
    guard.write_file('task.yaml', 'spec_version: 1\n')
    os.makedirs(guard.ws.root / 'data', exist_ok=True)
    os.link(outside, guard.ws.root / 'data' / 'train.jsonl')
    sub = guard.submit()
    assert sub['ok'] is False and [p['code'] for p in sub['problems']] == ['HARDLINK']
    assert guard.write_file('data/train.jsonl', '{"x": 1}\n')['ok']          # atomic replace: the other name is untouched
    assert outside.read_text() == '{}\n'


def test_fifo_never_opened(guard):
    os.mkfifo(guard.ws.root / 'notes.md')
    t0 = time.monotonic()
    assert guard.read_file('notes.md')['error'] == 'NOT_A_FILE'            # O_NONBLOCK: no hang waiting for a writer
    sub = guard.submit()
    assert sub['ok'] is False and 'SPECIAL_FILE' in [p['code'] for p in sub['problems']]
    assert guard.write_file('notes.md', 'text')['ok']
    assert time.monotonic() - t0 < 5


# ---------------------------------------------------------------- quotas
def test_too_large_refused_before_writing(guard, tmp_path):
    r = guard.write_file('data/big.jsonl', 'x' * (QUOTAS['max_file_bytes'] + 1))
    assert (r['ok'], r['error']) == (False, 'QUOTA_FILE_BYTES')
    assert not (guard.ws.root / 'data' / 'big.jsonl').exists()
    ws = Workspace(tmp_path / 'small', 'arithmetic', score=lambda b: 0.5, quotas=dict(max_total_bytes=1000))
    assert ws.write_file('data/a.jsonl', 'x' * 600)['ok']
    assert ws.write_file('data/b.jsonl', 'x' * 600)['error'] == 'QUOTA_TOTAL_BYTES'
    assert ws.write_file('data/a.jsonl', 'x' * 900)['ok']                   # overwriting counts the new size only


def test_one_gigabyte_file_is_never_read(guard):
    big = guard.ws.root / 'notes.md'
    with open(big, 'wb') as f: f.truncate(1 << 30)                          # sparse: 1 GB apparent, no disk used
    t0 = time.monotonic()
    r = guard.read_file('notes.md', limit=10)
    assert r['ok'] and r['chars'] == QUOTAS['max_file_bytes'] and r['truncated']
    sub = guard.submit()
    assert sub['ok'] is False and 'QUOTA_EXCEEDED' in [p['code'] for p in sub['problems']]
    assert guard.write_file('task.yaml', 'x')['error'] == 'QUOTA_TOTAL_BYTES'
    assert time.monotonic() - t0 < 5


def test_too_many_files_stops_early(guard):
    for i in range(QUOTAS['max_files']):
        assert guard.write_file(f'data/f{i}.jsonl', '{}\n')['ok']
    r = guard.write_file('data/one-more.jsonl', '{}\n')
    assert (r['ok'], r['error']) == (False, 'QUOTA_FILES')
    assert guard.write_file('data/f0.jsonl', '{"a": 1}\n')['ok']              # overwriting is fine
    d = guard.ws.root / 'data'
    for i in range(20_000): (d / f'seed{i}.jsonl').touch()                   # a flood planted behind the tools' back
    t0 = time.monotonic()
    lst = guard.list_files()
    assert lst['truncated'] and len(lst['files']) <= 4 * QUOTAS['max_files']
    assert guard.write_file('task.yaml', 'x')['error'] == 'QUOTA_FILES'
    sub = guard.submit()
    assert sub['ok'] is False and 'QUOTA_EXCEEDED' in [p['code'] for p in sub['problems']]
    assert time.monotonic() - t0 < 5


# ---------------------------------------------------------------- baseline and submit
def test_baseline_rounded_dev_only_and_limited(guard):
    got = [guard.baseline() for _ in range(4)]
    assert got[0] == dict(ok=True, brief='arithmetic', split='dev', score=0.42, calls_left=2, eval_level=2,
                          levels={'1': 0.61, '2': 0.42, '3': 0.1})   # the eval's level is the dev score itself
    assert [g['ok'] for g in got] == [True, True, True, False] and got[3]['error'] == 'BASELINE_LIMIT'


def test_baseline_default_reads_the_student_manifest(tmp_path, monkeypatch):
    import agentforge.student as student
    monkeypatch.setattr(student, 'student_manifest', lambda recipe=None: {'dev_scores': {'arithmetic': 0.3349}})
    ws = Workspace(tmp_path / 'w', 'arithmetic', levels=None)
    assert ws.baseline()['score'] == 0.33 and 'levels' not in ws.baseline()
    ws2 = Workspace(tmp_path / 'w2', 'no_such_brief', levels=None)
    r = ws2.baseline()
    assert (r['ok'], r['error'], ws2.baseline_left) == (False, 'BASELINE_UNAVAILABLE', 3)


def test_baseline_levels_score_the_real_student_per_level(tmp_path):
    from agentforge.workspace import student_level_scores
    got = Workspace(tmp_path / 'w', 'unit_conversion').baseline()
    lv = student_level_scores('unit_conversion')
    assert got['eval_level'] == 2 and set(got['levels']) == {'1', '2', '3'} and got['levels']['2'] == got['score']
    assert got['levels']['1'] == round(lv[1], 2) and got['levels']['3'] == round(lv[3], 2)
    assert lv[3] < lv[2]   # level 3 (values up to 300, not 100) is harder for the untrained student


def test_submit_copies_counts_and_freezes(guard):
    guard.write_file('task.yaml', 'spec_version: 1\n')
    guard.write_file('reward.py', 'def f(completions, **kw): return [0.0 for _ in completions]\n')
    guard.write_file('data/train.jsonl', '{"prompt": "p", "answer": "a"}\n')
    s1 = guard.submit()
    assert (s1['ok'], s1['attempt'], s1['attempts_left']) == (True, 1, MAX_ATTEMPTS - 1)
    assert s1['files'] == ['data/train.jsonl', 'reward.py', 'task.yaml']
    sub = Path(s1['submission'])
    assert sub.parent == guard.ws.submissions and check_tree(sub) == []
    guard.write_file('task.yaml', 'changed\n')                               # the submission is a copy
    assert (sub / 'task.yaml').read_text() == 'spec_version: 1\n'
    rest = [guard.submit() for _ in range(MAX_ATTEMPTS)]
    assert [r.get('attempt') for r in rest[:-1]] == list(range(2, MAX_ATTEMPTS + 1))
    assert rest[-1]['error'] == 'ATTEMPTS_EXHAUSTED'
    assert len({r['submission'] for r in [s1] + rest[:-1]}) == MAX_ATTEMPTS   # a fresh folder each time


def test_check_path_is_pure():
    assert check_path('data/train.jsonl', for_write=True) == ['data', 'train.jsonl']
    assert check_path('anything/deep.txt') == ['anything', 'deep.txt']      # readable names need not be spec files
