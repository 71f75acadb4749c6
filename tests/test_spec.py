"""The task spec loader under honest and adversarial specs: every field, paths, links, special files, quotas, YAML bombs, reward.py never imported, fuzzing."""
import copy
import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from agentforge.families import FAMILIES, get_family
from agentforge.schema import GRPO_DEFAULTS, GRPO_RANGES, STUDENTS, RewardEntry, Spec, check_task, load_spec
from agentforge.spec import PROBLEM_CODES, Problem, SpecError, check_tree, parse_task_yaml, read_spec_file
from agentforge.rows import example_spec, load_rows
from agentforge.tasks import CANARY_PREFIX, hidden_keys, hidden_path, hidden_split, prompt_key

FAMS = sorted(FAMILIES)
DELETE = object()


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path, monkeypatch):
    "Never touch the user's data dir: the default platform dir is a temp folder."
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(tmp_path / 'platform'))


@pytest.fixture
def platform(tmp_path):
    return tmp_path / 'platform'


def codes(exc_info) -> list:
    return [p.code for p in exc_info.value.problems]


def write_doc(folder:Path, doc:dict) -> Path:
    (folder / 'task.yaml').write_text(yaml.safe_dump(doc, sort_keys=False))
    return folder


def base_doc(family='arithmetic') -> dict:
    return dict(spec_version=1, name='demo-spec', brief=family, student='tiny-student',
                data=dict(generate=dict(n=16, seed=3)), rewards=[dict(use='exact_match', weight=1.0)],
                grpo=dict(max_steps=10, learning_rate=5e-4, num_generations=4, per_device_train_batch_size=8,
                          max_completion_length=16), resources=dict(pool='inner', gpus=0, max_minutes=5))


def mutate(doc:dict, path:str, value) -> dict:
    "A copy of `doc` with the dotted `path` (list items as [i]) set to `value` (or deleted)."
    doc, keys = copy.deepcopy(doc), path.replace('[', '.[').split('.')
    node = doc
    for k in keys[:-1]: node = node[int(k[1:-1])] if k.startswith('[') else node[k]
    last = int(keys[-1][1:-1]) if keys[-1].startswith('[') else keys[-1]
    if value is DELETE: del node[last]
    else: node[last] = value
    return doc


# ---------------------------------------------------------------- honest specs
@pytest.mark.parametrize('family', FAMS)
@pytest.mark.parametrize('mode', ['generate', 'train'])
def test_example_specs_load(family, mode, tmp_path, platform):
    folder = example_spec(family, tmp_path / 'spec', mode=mode, n=24, hidden_root=platform)
    spec = load_spec(folder)
    assert isinstance(spec, Spec) and spec.brief == family and spec.spec_version == 1
    assert check_tree(folder) == [] and check_task(parse_task_yaml((folder / 'task.yaml').read_text())) == []
    rows = load_rows(spec, hidden_root=platform)
    assert len(rows) == 24 and all(set(r) == {'prompt', 'answer'} for r in rows)
    assert CANARY_PREFIX not in json.dumps(rows)
    assert not {prompt_key(r['prompt']) for r in rows} & hidden_keys(get_family(family), root=platform)
    assert len(spec.digest()) == 64 and spec.digest() == load_spec(folder).digest()


@pytest.mark.parametrize('family', FAMS)
def test_train_and_generate_give_the_same_rows(family, tmp_path, platform):
    gen = load_rows(load_spec(example_spec(family, tmp_path / 'g', n=12, hidden_root=platform)), hidden_root=platform)
    tr = load_rows(load_spec(example_spec(family, tmp_path / 't', 'train', n=12, hidden_root=platform)))
    assert gen == tr


def test_example_spec_rewards():
    assert STUDENTS.keys() == {'tiny-student', 'tiny-student-large', 'qwen3-0.6b', 'qwen3-1.7b'}
    want = dict(arithmetic=('numeric_match', {'tolerance': 0, 'strict': True}),
                unit_conversion=('numeric_match', {'tolerance': 0, 'strict': True}),
                string_ops=('exact_match', {'case_sensitive': True}))
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for fam in FAMS:
            spec = load_spec(example_spec(fam, Path(d) / fam, n=4))
            assert (spec.rewards[0].use, spec.rewards[0].options) == want.get(fam, ('exact_match', {'case_sensitive': False}))
        hub = load_spec(example_spec('arithmetic', Path(d) / 'hub', student='qwen3-0.6b', n=4))
        assert hub.grpo['lora'] == dict(r=16, alpha=32) and hub.resources['gpus'] == 1


def test_spec_checking_imports_no_torch():
    import subprocess, sys
    code = "import sys, agentforge.schema; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.strip() == 'False'


def test_spec_values_are_normalised(tmp_path):
    doc = base_doc('multihop_lookup')
    doc['data']['generate']['params'] = dict(hops=3)
    doc['rewards'] = [dict(use='exact_match', weight=1), dict(use='format_regex', pattern='[A-Za-z ]+', weight=0.2)]
    spec = load_spec(write_doc(tmp_path, doc))
    assert spec.data == dict(generate=dict(n=16, seed=3, params={**get_family('multihop_lookup').eval_params, 'hops': [3]}))
    assert spec.rewards == (RewardEntry('exact_match', 1.0, {'case_sensitive': False}),
                            RewardEntry('format_regex', 0.2, {'pattern': '[A-Za-z ]+'}))
    assert spec.grpo['temperature'] == 1.0 and spec.grpo['beta'] == 0.0 and 'lora' not in spec.grpo
    assert spec.custom_functions() == []


# ---------------------------------------------------------------- every field
BAD = [  # (dotted path, bad value, expected code)
    ('spec_version', 2, 'SCHEMA_BAD_VALUE'), ('spec_version', '1', 'SCHEMA_BAD_VALUE'), ('spec_version', True, 'SCHEMA_BAD_VALUE'),
    ('name', 'ab', 'SCHEMA_BAD_VALUE'), ('name', 'Has-Caps', 'SCHEMA_BAD_VALUE'), ('name', 'a' * 65, 'SCHEMA_BAD_VALUE'),
    ('name', '-lead', 'SCHEMA_BAD_VALUE'), ('name', 'ok-name\n', 'SCHEMA_BAD_VALUE'), ('name', 1234, 'SCHEMA_BAD_VALUE'),
    ('brief', 'chess', 'SCHEMA_BAD_VALUE'), ('brief', ['arithmetic'], 'SCHEMA_BAD_VALUE'),
    ('student', 'tiny-agent', 'SCHEMA_BAD_VALUE'), ('student', 'qwen3-8b', 'SCHEMA_BAD_VALUE'),
    ('system_prompt', 5, 'SCHEMA_BAD_VALUE'), ('system_prompt', 'x' * 5000, 'SCHEMA_BAD_VALUE'),
    ('data', 'data/train.jsonl', 'SCHEMA_BAD_VALUE'), ('data', {}, 'SCHEMA_MISSING_FIELD'),
    ('data', {'train': 5}, 'SCHEMA_BAD_VALUE'), ('data.generate.n', 0, 'SCHEMA_BAD_VALUE'),
    ('data.generate.n', 10**6, 'SCHEMA_BAD_VALUE'), ('data.generate.n', 1.5, 'SCHEMA_BAD_VALUE'),
    ('data.generate.n', True, 'SCHEMA_BAD_VALUE'), ('data.generate.seed', -1, 'SCHEMA_BAD_VALUE'),
    ('data.generate.seed', 'x', 'SCHEMA_BAD_VALUE'), ('data.generate.params', [1], 'SCHEMA_BAD_VALUE'),
    ('data.generate.params', {'digits': 9}, 'SCHEMA_BAD_VALUE'), ('data.generate.params', {'ops': ['/']}, 'SCHEMA_BAD_VALUE'),
    ('data.generate.n', DELETE, 'SCHEMA_MISSING_FIELD'), ('data.generate.seed', DELETE, 'SCHEMA_MISSING_FIELD'),
    ('rewards', [], 'SCHEMA_BAD_VALUE'), ('rewards', 'exact_match', 'SCHEMA_BAD_VALUE'),
    ('rewards[0].use', 'nope', 'SCHEMA_BAD_VALUE'), ('rewards[0].use', 'reward.py:1bad', 'SCHEMA_BAD_VALUE'),
    ('rewards[0].use', 'reward.py:class', 'SCHEMA_BAD_VALUE'), ('rewards[0].use', 'reward.py:os.system', 'SCHEMA_BAD_VALUE'),
    ('rewards[0].use', ['exact_match'], 'SCHEMA_BAD_VALUE'), ('rewards[0].use', DELETE, 'SCHEMA_MISSING_FIELD'),
    ('rewards[0].weight', 0, 'SCHEMA_BAD_VALUE'), ('rewards[0].weight', -1.0, 'SCHEMA_BAD_VALUE'),
    ('rewards[0].weight', float('nan'), 'SCHEMA_BAD_VALUE'), ('rewards[0].weight', float('inf'), 'SCHEMA_BAD_VALUE'),
    ('rewards[0].weight', True, 'SCHEMA_BAD_VALUE'), ('rewards[0].weight', 10**400, 'SCHEMA_BAD_VALUE'),
    ('grpo.learning_rate', 10**400, 'SCHEMA_BAD_VALUE'), ('grpo.max_steps', 10**400, 'SCHEMA_BAD_VALUE'), ('rewards[0].weight', '1', 'SCHEMA_BAD_VALUE'),
    ('rewards[0].weight', DELETE, 'SCHEMA_MISSING_FIELD'), ('rewards[0].case_sensitive', 'yes', 'SCHEMA_BAD_VALUE'),
    ('rewards[0]', 'exact_match', 'SCHEMA_BAD_VALUE'),
    ('grpo', 'fast', 'SCHEMA_BAD_VALUE'), ('grpo.lora', [16, 32], 'SCHEMA_BAD_VALUE'),
    ('grpo.lora', {'r': 0, 'alpha': 32}, 'SCHEMA_BAD_VALUE'), ('grpo.lora', {'r': 16, 'alpha': 2000}, 'SCHEMA_BAD_VALUE'),
    ('grpo.lora', {'r': 16}, 'SCHEMA_MISSING_FIELD'),
    ('resources', DELETE, 'SCHEMA_MISSING_FIELD'), ('resources.pool', 'Bad Pool', 'SCHEMA_BAD_VALUE'),
    ('resources.pool', '', 'SCHEMA_BAD_VALUE'), ('resources.gpus', 65, 'SCHEMA_BAD_VALUE'), ('resources.gpus', -1, 'SCHEMA_BAD_VALUE'),
    ('resources.gpus', 1.0, 'SCHEMA_BAD_VALUE'), ('resources.max_minutes', 0, 'SCHEMA_BAD_VALUE'),
    ('resources.max_minutes', 24 * 60 + 1, 'SCHEMA_BAD_VALUE'), ('resources.gpus', DELETE, 'SCHEMA_MISSING_FIELD'),
] + [(f"grpo.{k}", v, 'SCHEMA_BAD_VALUE') for k, r in GRPO_RANGES.items() if not isinstance(r, dict)
     for v in (r.lo - (1 if r.kind is int else r.lo / 2 or 0.01), r.hi * 2, 'x', True, float('nan'))] \
  + [(f"grpo.{k}", DELETE, 'SCHEMA_MISSING_FIELD') for k in GRPO_RANGES if k not in GRPO_DEFAULTS] \
  + [(k, DELETE, 'SCHEMA_MISSING_FIELD') for k in ('spec_version', 'name', 'brief', 'student', 'data', 'rewards', 'grpo')]


@pytest.mark.parametrize('path,value,code', BAD, ids=[f"{p}={v!r:.20}" for p, v, _ in BAD])
def test_each_field_violation(path, value, code):
    doc = mutate(base_doc(), path, value)
    probs = check_task(doc)
    hit = [p for p in probs if p.code == code]
    assert hit, probs
    assert any(p.field == path or p.field.startswith(path + '.') or path.startswith(p.field) for p in hit), hit
    assert all(p.code in PROBLEM_CODES for p in probs)
    if value is not DELETE and isinstance(value, (int, float, str)) and not isinstance(value, bool) and len(repr(value)) < 40:
        assert any(repr(value) in p.message or str(value) in p.message for p in hit), hit  # the message shows the bad value


def test_learning_rate_without_a_dot_is_explained():
    probs = check_task(parse_task_yaml(yaml.safe_dump(base_doc()).replace('0.0005', '5e-4')))
    assert [p.field for p in probs] == ['grpo.learning_rate'] and 'with a dot' in probs[0].message


def test_batch_must_divide_by_generations():
    probs = check_task(mutate(base_doc(), 'grpo.per_device_train_batch_size', 6))
    assert [(p.field, p.code) for p in probs] == [('grpo.per_device_train_batch_size', 'SCHEMA_BAD_VALUE')]
    assert 'num_generations=4' in probs[0].message


def test_data_needs_exactly_one_mode():
    doc = mutate(base_doc(), 'data', dict(train='data/t.jsonl', generate=dict(n=1, seed=1)))
    assert [p.field for p in check_task(doc)] == ['data']


@pytest.mark.parametrize('where,key', [('', 'colour'), ('grpo', 'lr'), ('grpo.lora', 'dropout'), ('resources', 'priority'),
                                       ('data', 'eval'), ('data.generate', 'split'), ('data.generate.params', 'colour'),
                                       ('rewards[0]', 'patern')])
def test_unknown_fields_rejected(where, key):
    doc = base_doc()
    doc['grpo']['lora'] = dict(r=8, alpha=16)
    doc['data']['generate']['params'] = {}
    node = doc
    for k in filter(None, where.replace('[', '.[').split('.')): node = node[int(k[1:-1])] if k.startswith('[') else node[k]
    node[key] = 1
    probs = check_task(doc)
    dotted = f"{where}.{key}" if where else key
    assert [(p.field, p.code) for p in probs] == [(dotted, 'SCHEMA_UNKNOWN_FIELD')]
    assert 'accepted:' in probs[0].message and repr(key) in probs[0].message


@pytest.mark.parametrize('use,opts,field', [
    ('format_regex', {}, 'rewards[0].pattern'), ('format_regex', {'pattern': '('}, 'rewards[0].pattern'),
    ('format_regex', {'pattern': '(a+)+$'}, 'rewards[0].pattern'), ('format_regex', {'pattern': 'x' * 400}, 'rewards[0].pattern'),
    ('numeric_match', {'tolerance': -1}, 'rewards[0].tolerance'), ('numeric_match', {'tolerance': 'small'}, 'rewards[0].tolerance'),
    ('choice_match', {'choices': ['a']}, 'rewards[0].choices'), ('choice_match', {'choices': [True, False]}, 'rewards[0].choices'),
    ('choice_match', {'choices': ['A', 'a']}, 'rewards[0].choices'), ('choice_match', {}, 'rewards[0].choices'),
    ('length_penalty', {'target': 0}, 'rewards[0].target'), ('length_penalty', {}, 'rewards[0].target'),
    ('contains_answer', {'pattern': 'x'}, 'rewards[0].pattern'), ('reward.py:f', {'pattern': 'x'}, 'rewards[0].pattern'),
])
def test_component_options_checked(use, opts, field):
    doc = mutate(base_doc(), 'rewards', [dict(use=use, weight=1.0, **opts)])
    probs = check_task(doc)
    assert [p.field for p in probs] == [field], probs


def test_duplicate_component_rejected():
    doc = mutate(base_doc(), 'rewards', [dict(use='exact_match', weight=1.0), dict(use='exact_match', weight=0.5)])
    assert [(p.field, p.code) for p in check_task(doc)] == [('rewards[1].use', 'SCHEMA_BAD_VALUE')]


def test_every_problem_reported_at_once():
    doc = mutate(mutate(mutate(base_doc(), 'name', 'X'), 'grpo.lr', 1), 'resources.gpus', 99)
    with pytest.raises(SpecError) as e: raise SpecError(check_task(doc))
    assert sorted(p.field for p in e.value.problems) == ['grpo.lr', 'name', 'resources.gpus']
    assert all(p.field in str(e.value) for p in e.value.problems) and str(e.value).startswith('3 problems')


# ---------------------------------------------------------------- paths
@pytest.mark.parametrize('bad', ['../../etc/passwd', '/etc/passwd', 'data/../task.yaml', '~/x.jsonl', 'C:/x.jsonl',
                                 'task.yaml', 'other/x.jsonl', '..\\..\\x.jsonl'])
def test_train_path_outside_spec(bad, tmp_path):
    doc = mutate(base_doc(), 'data', dict(train=bad))
    with pytest.raises(SpecError) as e: load_spec(write_doc(tmp_path, doc))
    assert codes(e) == ['PATH_OUTSIDE_SPEC'] and e.value.problems[0].field == 'data.train'


@pytest.mark.parametrize('bad', ['data/sub/x.jsonl', 'data/x.json', 'data/.x.jsonl', 'data/', 'data/x\n.jsonl'])
def test_train_path_bad_shape(bad):
    assert [p.code for p in check_task(mutate(base_doc(), 'data', dict(train=bad)))] == ['SCHEMA_BAD_VALUE']


def test_train_file_must_exist(tmp_path):
    with pytest.raises(SpecError) as e: load_spec(write_doc(tmp_path, mutate(base_doc(), 'data', dict(train='data/t.jsonl'))))
    assert codes(e) == ['MISSING_FILE'] and e.value.problems[0].field == 'data.train'


# ---------------------------------------------------------------- links and special files
@pytest.fixture
def hidden_file(platform):
    hidden_split(get_family('arithmetic'), root=platform)
    path = hidden_path(get_family('arithmetic'), platform)
    return path, path.read_bytes()


def assert_no_leak(exc, hidden):
    path, raw = hidden
    assert path.read_bytes() == raw
    assert CANARY_PREFIX not in str(exc.value) and CANARY_PREFIX not in repr(exc.value.problems)


def train_spec(tmp_path) -> Path:
    folder = example_spec('arithmetic', tmp_path / 'spec', 'train', n=8, hidden_root=tmp_path / 'platform')
    (folder / 'data' / 'train.jsonl').unlink()
    return folder


def test_symlink_to_hidden_file(tmp_path, hidden_file):
    folder = train_spec(tmp_path)
    os.symlink(hidden_file[0], folder / 'data' / 'train.jsonl')
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['SYMLINK'] and e.value.problems[0].field == 'data/train.jsonl'
    assert_no_leak(e, hidden_file)


@pytest.mark.parametrize('name', ['notes.md', 'data', 'reward.py'])
def test_symlink_to_root(name, tmp_path):
    folder = example_spec('arithmetic', tmp_path / 'spec')
    os.symlink('/', folder / name)
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['SYMLINK']


def test_symlink_inside_spec(tmp_path):
    folder = example_spec('arithmetic', tmp_path / 'spec')
    shutil.move(folder / 'task.yaml', folder / 'notes.md')
    os.symlink('notes.md', folder / 'task.yaml')  # relative, stays inside the spec: still refused
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['SYMLINK'] and e.value.problems[0].field == 'task.yaml'


def test_data_folder_is_a_link_to_hidden_dir(tmp_path, hidden_file):
    folder = train_spec(tmp_path)
    (folder / 'data').rmdir()
    os.symlink(hidden_file[0].parent, folder / 'data')
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['SYMLINK'] and e.value.problems[0].field == 'data'
    assert_no_leak(e, hidden_file)


def test_spec_folder_itself_a_link(tmp_path):
    folder = example_spec('arithmetic', tmp_path / 'spec')
    os.symlink(folder, tmp_path / 'alias')
    with pytest.raises(SpecError) as e: load_spec(tmp_path / 'alias')
    assert codes(e) == ['SYMLINK']


def test_read_refuses_links_swapped_in_after_the_scan(tmp_path, hidden_file):
    folder = train_spec(tmp_path)
    os.symlink(hidden_file[0], folder / 'data' / 'train.jsonl')
    with pytest.raises(SpecError) as e: read_spec_file(folder, 'data/train.jsonl', 10**6)
    assert codes(e) == ['SYMLINK']
    (folder / 'data' / 'train.jsonl').unlink(); (folder / 'data').rmdir()
    os.symlink(hidden_file[0].parent, folder / 'data')
    with pytest.raises(SpecError) as e: read_spec_file(folder, 'data/arithmetic.jsonl', 10**6)
    assert codes(e) == ['SYMLINK'] and e.value.problems[0].field == 'data'
    assert_no_leak(e, hidden_file)


def test_hard_link_rejected(tmp_path, hidden_file):
    folder = train_spec(tmp_path)
    os.link(hidden_file[0], folder / 'data' / 'train.jsonl')
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['HARDLINK']
    with pytest.raises(SpecError) as e2: read_spec_file(folder, 'data/train.jsonl', 10**6)
    assert codes(e2) == ['HARDLINK']
    assert_no_leak(e, hidden_file)


def test_hard_link_inside_spec(tmp_path):
    folder = example_spec('arithmetic', tmp_path / 'spec')
    os.link(folder / 'task.yaml', folder / 'notes.md')
    assert sorted(p.code for p in check_tree(folder)) == ['HARDLINK', 'HARDLINK']


def test_fifo_rejected_without_blocking(tmp_path):
    folder = train_spec(tmp_path)
    os.mkfifo(folder / 'data' / 'train.jsonl')
    t0 = time.perf_counter()
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['SPECIAL_FILE']
    with pytest.raises(SpecError) as e: read_spec_file(folder, 'data/train.jsonl', 100)  # the open itself must not block
    assert codes(e) == ['SPECIAL_FILE'] and time.perf_counter() - t0 < 2


def test_socket_rejected(tmp_path):
    import socket
    folder = example_spec('arithmetic', tmp_path / 'spec')
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(folder / 'notes.md'))
        assert [p.code for p in check_tree(folder)] == ['SPECIAL_FILE']
    finally: s.close()


@pytest.mark.parametrize('rel,code', [('evil.py', 'DISALLOWED_FILE'), ('Task.yaml', 'DISALLOWED_FILE'),
                                      ('data/x.txt', 'DISALLOWED_FILE'), ('data/sub/x.jsonl', 'DISALLOWED_FILE'),
                                      ('cache/x', 'DISALLOWED_FILE'), ('a\nb', 'BAD_NAME'), ('x' * 150, 'BAD_NAME'),
                                      ('data/\u202etxt.jsonl', 'BAD_NAME'), ('.hidden', 'DISALLOWED_FILE')])
def test_disallowed_entries(rel, code, tmp_path):
    folder = example_spec('arithmetic', tmp_path / 'spec')
    (folder / rel).parent.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_text('x')
    probs = check_tree(folder)
    assert [p.code for p in probs] == [code]
    assert '\n' not in str(probs[0])  # names are shown escaped: no fake log lines


def test_missing_task_yaml_and_missing_folder(tmp_path):
    (tmp_path / 'spec').mkdir()
    assert [p.code for p in check_tree(tmp_path / 'spec')] == ['MISSING_FILE']
    with pytest.raises(SpecError) as e: load_spec(tmp_path / 'nope')
    assert codes(e) == ['MISSING_FILE']
    (tmp_path / 'file').write_text('x')
    assert [p.code for p in check_tree(tmp_path / 'file')] == ['DISALLOWED_FILE']


# ---------------------------------------------------------------- quotas
def test_many_files_rejected_quickly(tmp_path):
    folder = example_spec('arithmetic', tmp_path / 'spec')
    (folder / 'data').mkdir()
    for i in range(2000): (folder / 'data' / f"f{i}.jsonl").touch()
    t0 = time.perf_counter()
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert time.perf_counter() - t0 < 1
    assert codes(e) == ['QUOTA_EXCEEDED'] and 'stopped counting' in str(e.value)


def test_big_file_rejected(tmp_path):
    folder = train_spec(tmp_path)
    with open(folder / 'data' / 'train.jsonl', 'wb') as f: f.write(b'{"prompt": "p", "answer": "a"}\n' * (5_000_000 // 31 + 1))
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['QUOTA_EXCEEDED'] and e.value.problems[0].field == 'data/train.jsonl'


def test_total_bytes_quota(tmp_path):
    folder = example_spec('arithmetic', tmp_path / 'spec')
    (folder / 'data').mkdir()
    for i in range(3):
        with open(folder / 'data' / f"d{i}.jsonl", 'wb') as f: f.truncate(1_500_000)  # sparse: cheap to make
    assert [p.code for p in check_tree(folder)] == ['QUOTA_EXCEEDED']


def test_row_quota(tmp_path):
    folder = example_spec('arithmetic', tmp_path / 'spec', 'train', n=12, hidden_root=tmp_path / 'platform')
    with pytest.raises(SpecError) as e: load_rows(load_spec(folder), quotas=dict(max_rows=10))
    assert codes(e) == ['QUOTA_EXCEEDED']
    assert len(load_rows(load_spec(folder))) == 12


# ---------------------------------------------------------------- YAML
LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + ''.join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip('abcdefgh', 'bcdefghi'))


def test_billion_laughs_rejected_fast(tmp_path):
    folder = example_spec('arithmetic', tmp_path / 'spec')
    (folder / 'task.yaml').write_text((folder / 'task.yaml').read_text() + LAUGHS.replace('a:', 'x:', 1))
    t0 = time.perf_counter()
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert time.perf_counter() - t0 < 0.5 and codes(e) == ['YAML_ALIAS']


@pytest.mark.parametrize('text,code', [
    ('a: &x 1\nb: *x', 'YAML_ALIAS'), ('a: &x 1', 'YAML_ALIAS'), ('base: &b {x: 1}\nc: {<<: *b}', 'YAML_ALIAS'),
    ('a: 1\na: 2', 'YAML_DUPLICATE_KEY'), ('a: [1\n', 'YAML_INVALID'), ('a: !!python/object:os.system x', 'YAML_INVALID'),
    ('[' * 200 + ']' * 200, 'YAML_INVALID'), ('{a: ' * 50 + '1' + '}' * 50, 'YAML_INVALID'), ('a: ' + '9' * 5000, 'YAML_INVALID'),
    ('- 1\n- 2', 'SCHEMA_BAD_VALUE'), ('', 'SCHEMA_BAD_VALUE'), ('just text', 'SCHEMA_BAD_VALUE'),
    ('a: "' + 'x' * 70_000 + '"', 'QUOTA_EXCEEDED'), ('a: "\x00"', 'YAML_INVALID'), ('a: \x07', 'YAML_INVALID'),
])
def test_bad_yaml(text, code):
    with pytest.raises(SpecError) as e: parse_task_yaml(text)
    assert codes(e) == [code]
    assert '\n' not in e.value.problems[0].message


def test_yaml_bytes_and_utf8():
    assert parse_task_yaml('name: "caf\u00e9"'.encode()) == {'name': 'caf\u00e9'}
    with pytest.raises(SpecError) as e: parse_task_yaml(b'name: \xff\xfe\xfa')
    assert codes(e) == ['YAML_INVALID']


# ---------------------------------------------------------------- reward.py is never run
REWARD_PY = """import pathlib
pathlib.Path({marker!r}).write_text('imported')

def partial(prompts, completions, answer, **kwargs):
    return [0.5 for _ in completions]

class Helper:
    def method(self): pass

lam = lambda *a: 1
"""


def reward_spec(tmp_path, uses) -> tuple:
    folder, marker = example_spec('date_math', tmp_path / 'spec'), tmp_path / 'marker'
    (folder / 'reward.py').write_text(REWARD_PY.format(marker=str(marker)))
    doc = yaml.safe_load((folder / 'task.yaml').read_text())
    doc['rewards'] += [dict(use=u, weight=0.5) for u in uses]
    write_doc(folder, doc)
    return folder, marker


def test_reward_py_never_imported(tmp_path):
    folder, marker = reward_spec(tmp_path, ['reward.py:partial'])
    before = set(sys.modules)
    spec = load_spec(folder)
    assert spec.custom_functions() == ['partial'] and not marker.exists()
    assert spec.digest() and load_rows(spec, hidden_root=tmp_path / 'platform') and not marker.exists()
    assert not {m for m in set(sys.modules) - before if 'reward' in m}


@pytest.mark.parametrize('name', ['method', 'lam', 'Helper', 'missing'])
def test_reward_function_must_be_a_top_level_def(name, tmp_path):
    folder, marker = reward_spec(tmp_path, [f"reward.py:{name}"])
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['REWARD_FN_MISSING'] and e.value.problems[0].field == 'rewards[1].use' and not marker.exists()


def test_reward_py_syntax_error_and_absence(tmp_path):
    folder, marker = reward_spec(tmp_path, ['reward.py:partial'])
    (folder / 'reward.py').write_text('def partial(:\n')
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['REWARD_PY_INVALID']
    (folder / 'reward.py').write_text('x = (' * 300 + ')' * 300)
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['REWARD_PY_INVALID']
    (folder / 'reward.py').unlink()
    with pytest.raises(SpecError) as e: load_spec(folder)
    assert codes(e) == ['MISSING_FILE'] and e.value.problems[0].field == 'reward.py'


# ---------------------------------------------------------------- rows
GOOD = {'prompt': 'What is 2 + 3?', 'answer': '5'}
MSGS = [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'hi'}]


@pytest.mark.parametrize('line', [
    'not json', '[1, 2]', '"text"', json.dumps({'prompt': 'p'}), json.dumps({'prompt': 'p', 'answer': 5}),
    json.dumps({'prompt': '  ', 'answer': 'a'}), json.dumps({'prompt': [], 'answer': 'a'}),
    json.dumps({'prompt': [{'role': 'tool', 'content': 'x'}], 'answer': 'a'}),
    json.dumps({'prompt': [{'role': 'user', 'content': 'x', 'extra': 1}], 'answer': 'a'}),
    json.dumps({'prompt': [{'role': 'user', 'content': 'x'}, {'role': 'assistant', 'content': 'y'}], 'answer': 'a'}),
    json.dumps({**GOOD, 'meta': {'a': 1}}), json.dumps({**GOOD, 'completions': 'x'}), json.dumps({**GOOD, 'images': []}),
    json.dumps({**GOOD, 'bad-name': 1}), json.dumps({**GOOD, 'class': 1}), '{"prompt": "p", "answer": "a", "x": NaN}',
    '{"prompt": "p", "answer": "a", "x": Infinity}', '[' * 100_000, '{"prompt": "p", "answer": "a", "n": ' + '9' * 5000 + '}',
])
def test_bad_rows(line, tmp_path):
    folder = train_spec(tmp_path)
    (folder / 'data' / 'train.jsonl').write_text(json.dumps(GOOD) + '\n' + line + '\n')
    with pytest.raises(SpecError) as e: load_rows(load_spec(folder))
    assert codes(e) == ['DATA_BAD_ROW']
    assert e.value.problems[0].field == 'data/train.jsonl:2' and 'line 2' in e.value.problems[0].message


def test_rows_with_extra_columns_and_messages(tmp_path):
    folder = train_spec(tmp_path)
    rows = [{**GOOD, 'difficulty': 2, 'tags': ['a', 'b']}, {'prompt': MSGS, 'answer': 'hello', 'difficulty': None, 'tags': []}]
    (folder / 'data' / 'train.jsonl').write_text('\n'.join(json.dumps(r) for r in rows) + '\n\n')
    assert load_rows(load_spec(folder)) == rows


def test_inconsistent_columns_empty_file_and_encoding(tmp_path):
    folder = train_spec(tmp_path)
    path = folder / 'data' / 'train.jsonl'
    path.write_text(json.dumps(GOOD) + '\n' + json.dumps({**GOOD, 'extra': 1}) + '\n')
    with pytest.raises(SpecError) as e: load_rows(load_spec(folder))
    assert codes(e) == ['DATA_BAD_ROW'] and 'same columns' in str(e.value)
    path.write_text('\n \n')
    with pytest.raises(SpecError) as e: load_rows(load_spec(folder))
    assert codes(e) == ['DATA_BAD_ROW'] and 'no rows' in str(e.value)
    path.write_bytes(b'{"prompt": "\xff", "answer": "a"}\n')
    with pytest.raises(SpecError) as e: load_rows(load_spec(folder))
    assert codes(e) == ['DATA_BAD_ROW']


def test_many_bad_rows_are_capped(tmp_path):
    folder = train_spec(tmp_path)
    (folder / 'data' / 'train.jsonl').write_text('x\n' * 1000)
    with pytest.raises(SpecError) as e: load_rows(load_spec(folder))
    assert len(e.value.problems) == 21


def test_generate_failure_is_a_problem(tmp_path):
    doc = base_doc()
    for digits in ([1], 1):  # 1: a scalar the Param accepts but the generator may not
        doc['data']['generate'] = dict(n=500, seed=1, params=dict(digits=digits, ops=['+']))
        (tmp_path / 'spec').mkdir(exist_ok=True)
        spec = load_spec(write_doc(tmp_path / 'spec', doc))
        with pytest.raises(SpecError) as e: load_rows(spec, hidden_root=tmp_path / 'platform')
        assert codes(e) == ['DATA_GENERATE_FAILED']


# ---------------------------------------------------------------- digest
def test_digest_tracks_every_byte_and_path(tmp_path):
    a = example_spec('date_math', tmp_path / 'a', 'train', n=8, hidden_root=tmp_path / 'platform')
    b = shutil.copytree(a, tmp_path / 'b')
    da = load_spec(a).digest()
    assert load_spec(b).digest() == da                                   # relative paths: location does not matter
    (b / 'notes.md').write_text('hello')
    assert load_spec(b).digest() != da
    (b / 'notes.md').unlink()
    raw = (b / 'data' / 'train.jsonl').read_bytes()
    (b / 'data' / 'train.jsonl').write_bytes(raw.replace(b'2', b'3', 1))
    assert load_spec(b).digest() != da
    (b / 'data' / 'train.jsonl').write_bytes(raw)
    os.rename(b / 'data' / 'train.jsonl', b / 'data' / 'rows.jsonl')
    (b / 'task.yaml').write_text((b / 'task.yaml').read_text().replace('train.jsonl', 'rows.jsonl'))
    assert load_spec(b).digest() != da


# ---------------------------------------------------------------- fuzz: no crash, only problems
def _single_line(probs):
    return all(isinstance(p, Problem) and '\n' not in p.message and '\n' not in p.field and p.code in PROBLEM_CODES for p in probs)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=400), st.binary(max_size=400),
                 st.text(alphabet=':-[]{}&*!|>\'"#%@`, \n\tabc019.', max_size=200)))
def test_fuzz_parse_task_yaml(text):
    try: doc = parse_task_yaml(text)
    except SpecError as e: assert e.problems and _single_line(e.problems)
    else:
        assert isinstance(doc, dict)
        assert _single_line(check_task(doc))


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-10, 10**20), st.integers(10**300, 10**500), st.floats(),
                    st.text(max_size=30), st.sampled_from(['exact_match', 'reward.py:f', 'data/t.jsonl', '../x', 'inner',
                                                           'arithmetic', 'tiny-student', 'format_regex', '(a+)+']))
YAMLISH = st.recursive(SCALARS, lambda kids: st.one_of(
    st.lists(kids, max_size=4),
    st.dictionaries(st.one_of(st.text(max_size=12), st.sampled_from(['use', 'weight', 'pattern', 'n', 'seed', 'params', 'r', 'alpha',
                                                                     'train', 'generate', 'choices', 'target', 'hops']), st.integers(0, 3)),
                    kids, max_size=5)), max_leaves=20)
PATHS = ['spec_version', 'name', 'brief', 'student', 'system_prompt', 'data', 'data.generate', 'data.generate.n',
         'data.generate.params', 'rewards', 'rewards[0]', 'rewards[0].use', 'rewards[0].weight', 'grpo', 'grpo.lora',
         'grpo.learning_rate', 'grpo.num_generations', 'resources', 'resources.pool']


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(YAMLISH, st.dictionaries(st.sampled_from(PATHS[:9] + ['rewards', 'grpo', 'resources']), YAMLISH, max_size=8)))
def test_fuzz_check_task_arbitrary(doc):
    assert _single_line(check_task(doc))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PATHS), YAMLISH), min_size=1, max_size=3),
       st.sampled_from(['arithmetic', 'multihop_lookup', 'customer_support']))
def test_fuzz_check_task_mutations(edits, family):
    doc = base_doc(family)
    doc['grpo']['lora'] = dict(r=8, alpha=16)
    doc['data']['generate']['params'] = {}
    for path, value in edits:
        try: doc = mutate(doc, path, value)
        except (KeyError, IndexError, TypeError): pass
    probs = check_task(doc)
    assert _single_line(probs)
    try: text = yaml.safe_dump(doc)
    except yaml.YAMLError: return
    try: assert _single_line(check_task(parse_task_yaml(text)))
    except SpecError as e: assert _single_line(e.problems)
