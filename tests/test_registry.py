"Your own JSONL family: rows checked line by line, the eval file as a canaried hidden split, seen by every process."
import json, os, subprocess, sys, tempfile, warnings
import pytest
from typer.testing import CliRunner
from agentforge.cli import app
from agentforge.families import FAMILIES, family_names, get_family, is_family
from agentforge.registry import FamilyFileError, add_family, family_dir, read_rows, registered, remove_family
from agentforge.tasks import CANARY_PREFIX, dev_split, generate, hidden_keys, hidden_path, hidden_split, prompt_key

R = CliRunner()

@pytest.fixture
def data(tmp_path, monkeypatch):
    "A private platform data dir (what every child process inherits), and a helper that writes JSONL files."
    monkeypatch.setenv('AGENTFORGE_DATA_DIR', str(tmp_path / 'data'))
    def jsonl(name, rows):
        (tmp_path / name).write_text(''.join((r if isinstance(r, str) else json.dumps(r)) + '\n' for r in rows))
        return tmp_path / name
    return jsonl

def arith_rows(n, seed=3):
    return [dict(prompt=i.prompt, answer=i.answer) for i in generate(FAMILIES['arithmetic'], n, seed)]

@pytest.mark.parametrize('row, says', [
    ('{"prompt": "hi"', 'line 2: not JSON'),
    (dict(prompt='hi', anwser='x'), "line 2: unknown field 'anwser'"),
    (dict(prompt='hi'), "line 2: missing field 'answer'"),
    (dict(prompt='hi', answer=''), 'line 2: answer: expected non-empty text'),
    (dict(prompt='hi', answer=True), 'line 2: answer: expected non-empty text'),
    (dict(messages=[dict(role='bot', content='x'), dict(role='assistant', content='y')]), "messages[0].role: got 'bot'"),
    (dict(messages=[dict(role='user', content='x')]), "the last message must be the assistant's"),
    (dict(messages=[dict(role='system', content='s'), dict(role='assistant', content='y')]), 'must answer a user turn'),
    (dict(prompt=[dict(role='user', content='x'), dict(role='assistant', content='y')], answer='z'),
     "the last message must be the user's"),
    (dict(prompt='a', answer='b', messages=[]), 'not both'),
    ([1, 2], 'expected a JSON object'),
])
def test_a_bad_row_is_refused_naming_its_file_line_and_field(data, row, says):
    path = data('rows.jsonl', [dict(prompt='fine', answer='ok'), row])
    with pytest.raises(FamilyFileError) as e: read_rows(path)
    assert 'rows.jsonl' in str(e.value) and says in str(e.value), str(e.value)

def test_chat_rows_become_prompt_and_answer(data):
    chat = dict(messages=[dict(role='user', content='Charged twice.'), dict(role='assistant', content='Which date?'),
                          dict(role='user', content='May 3.'), dict(role='assistant', content='Refunded.')], id='T1')
    [(n, r)] = read_rows(data('c.jsonl', ['', chat]))   # blank lines are skipped but counted
    assert n == 2 and r['answer'] == 'Refunded.' and r['prompt'][-1] == dict(role='user', content='May 3.')
    assert r['meta'] == {'source_id': 'T1'}
    [(_, one)] = read_rows(data('o.jsonl', [dict(messages=chat['messages'][:2])]))
    assert one['prompt'] == 'Charged twice.'   # a single user turn is plain text, like a single-turn family

def test_registered_family_is_a_family_everywhere(data):
    rows = arith_rows(100)
    fam = add_family('acme_sums', data('tr.jsonl', rows[:70]), data('ev.jsonl', rows[70:]), scorer='numeric',
                     system_prompt='Answer with the number only.')
    assert is_family('acme_sums') and 'acme_sums' in family_names() and not is_family('acme_other')
    assert get_family('acme_sums').size == 70 and fam.info['eval_rows'] == 30
    hid = hidden_split(get_family('acme_sums'))
    assert len(hid) == 30 and all(i.canary.startswith(CANARY_PREFIX) for i in hid)   # all 30, not 512 drawn
    assert hid[0].prompt[0] == dict(role='system', content='Answer with the number only.')
    assert oct(hidden_path('acme_sums').stat().st_mode & 0o777) == '0o600'
    assert len(dev_split(fam)) == 64 and not {prompt_key(i.prompt) for i in dev_split(fam)} & hidden_keys(fam)
    with pytest.raises(ValueError, match='gave only 70 distinct items'): generate(fam, 71, 0)
    assert fam.score('42', '42') == 1.0 and fam.score('42 apples', '42') == 0.0   # numeric: the number alone
    with pytest.raises(ValueError, match="accepted: \\['arithmetic'"): get_family('acme_other')

def test_registration_refuses_what_would_make_uplift_dishonest(data):
    rows = arith_rows(60)
    tr, ev = data('tr.jsonl', rows[:40]), data('ev.jsonl', rows[40:])
    with pytest.raises(FamilyFileError, match='leak.jsonl line 40: the same prompt as ev.jsonl line 5'):
        add_family('acme_leak', data('leak.jsonl', rows[:39] + [rows[44]]), ev)
    with pytest.raises(FamilyFileError, match='ev2.jsonl line 20: the same prompt as line 1'):
        add_family('acme_dup', tr, data('ev2.jsonl', rows[40:59] + [rows[40]]))
    with pytest.raises(FamilyFileError, match='has no number, and the scorer is numeric'):
        add_family('acme_num', tr, data('ev3.jsonl', rows[40:59] + [dict(prompt='What?', answer='none')]),
                   scorer='numeric')
    with pytest.raises(FamilyFileError, match='at least 2 distinct answers'):
        add_family('acme_one', data('t1.jsonl', [dict(prompt=f'q{i}', answer='yes') for i in range(10)]),
                   data('e1.jsonl', [dict(prompt=f'r{i}', answer='yes') for i in range(10)]), scorer='choice')
    with pytest.raises(FamilyFileError, match='a family needs at least 10 eval rows'):
        add_family('acme_few', tr, data('e4.jsonl', rows[40:49]))
    for bad, says in (('arithmetic', 'built-in family'), ('Acme', 'expected 3-40 of a-z'), ('x/y', 'expected 3-40')):
        with pytest.raises(ValueError, match=says): add_family(bad, tr, ev)
    with pytest.raises(ValueError, match="scorer 'fuzzy'"): add_family('acme_fz', tr, ev, scorer='fuzzy')
    assert registered() == {}                                    # nothing half-registered by any refusal
    add_family('acme_ok', tr, ev)
    with pytest.raises(FileExistsError, match='--replace'): add_family('acme_ok', tr, ev)

def test_replacing_and_removing_are_seen_at_once_and_leave_nothing(data):
    rows = arith_rows(80)
    ev = data('ev.jsonl', rows[60:])
    add_family('acme_sums', data('tr.jsonl', rows[:40]), ev)
    assert get_family('acme_sums').size == 40
    add_family('acme_sums', data('tr2.jsonl', rows[:60]), ev, replace=True)
    assert get_family('acme_sums').size == 60                    # the files changed: read again
    d = family_dir('acme_sums')
    remove_family('acme_sums')
    assert not d.exists() and not hidden_path('acme_sums').exists() and not is_family('acme_sums')
    with pytest.raises(ValueError, match='no family'): remove_family('acme_sums')

def test_a_damaged_registration_is_loud_not_skipped(data):
    rows = arith_rows(60)
    add_family('acme_sums', data('tr.jsonl', rows[:40]), data('ev.jsonl', rows[40:]))
    (family_dir('acme_sums') / 'family.json').write_text('{"name": "acme_sums"')
    with pytest.raises(ValueError, match='is damaged .* agentforge family remove acme_sums'): get_family('acme_sums')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        assert registered() == {}
    assert any('damaged' in str(x.message) for x in w)
    hidden_path('acme_sums').unlink(); (family_dir('acme_sums') / 'family.json').unlink()
    add_family('acme_sums', data('tr.jsonl', rows[:40]), data('ev.jsonl', rows[40:]))
    hidden_path('acme_sums').unlink()                            # the eval split gone: said, never re-drawn
    with pytest.raises(FileNotFoundError, match='its eval split .* is missing'): hidden_split(get_family('acme_sums'))

def test_an_isolated_process_given_only_the_data_dir_finds_the_family(data):
    rows = arith_rows(60)
    add_family('acme_sums', data('tr.jsonl', rows[:40]), data('ev.jsonl', rows[40:]), scorer='numeric')
    code = ("from agentforge.families import get_family; from agentforge.tasks import hidden_split; "
            "f = get_family('acme_sums'); print(f.size, len(hidden_split(f)), f.scorer)")
    p = subprocess.run([sys.executable, '-I', '-c', code], capture_output=True, text=True, cwd=tempfile.gettempdir(),
                       env={**os.environ})
    assert p.returncode == 0, p.stderr[-1500:]
    assert p.stdout.split() == ['40', '20', 'numeric']

def test_spec_schema_knows_your_family_and_its_row_count(data, tmp_path):
    from agentforge.schema import load_spec
    from agentforge.spec import SpecError
    from agentforge.rows import example_doc
    import yaml
    rows = arith_rows(60)
    add_family('acme_sums', data('tr.jsonl', rows[:40]), data('ev.jsonl', rows[40:]), scorer='numeric')
    doc = example_doc('acme_sums')
    assert doc['brief'] == 'acme_sums' and doc['data']['generate']['n'] == 40   # at most its rows
    (tmp_path / 'spec').mkdir()
    (tmp_path / 'spec' / 'task.yaml').write_text(yaml.safe_dump(doc))
    assert load_spec(tmp_path / 'spec').brief == 'acme_sums'
    doc['data']['generate']['n'] = 41
    (tmp_path / 'spec' / 'task.yaml').write_text(yaml.safe_dump(doc))
    with pytest.raises(SpecError, match='has 40 training rows, so at most 40'): load_spec(tmp_path / 'spec')

def test_your_family_decides_its_completion_length(data, tmp_path):
    "A spec for your family that leaves grpo.max_completion_length out gets room for your longest training answer."
    from agentforge.schema import load_spec
    from agentforge.rows import example_doc
    import yaml
    rows = [dict(prompt=f'Spell {i} in words.', answer=('one ' * (i % 12 + 1)).strip()) for i in range(60)]  # up to 47 bytes
    add_family('acme_words', data('tr.jsonl', rows[:40]), data('ev.jsonl', rows[40:]))
    doc = example_doc('acme_words')
    del doc['grpo']['max_completion_length']
    (tmp_path / 'spec').mkdir()
    (tmp_path / 'spec' / 'task.yaml').write_text(yaml.safe_dump(doc))
    longest = max(len(r['answer'].encode()) for r in rows[:40])
    assert load_spec(tmp_path / 'spec').grpo['max_completion_length'] == 16 * -(-(longest + 8) // 16) == 64

def test_cli_family_add_list_show_brief_remove(data, tmp_path):
    rows = arith_rows(60)
    tr, ev = data('tr.jsonl', rows[:40]), data('ev.jsonl', rows[40:] + ['{"prompt": "x", "answer": 5, "note": 1}'])
    r = R.invoke(app, ['family', 'add', 'acme_sums', '--train', str(tr), '--eval', str(ev)])
    assert r.exit_code == 2 and "ev.jsonl line 21: unknown field 'note'" in r.stderr and 'Traceback' not in r.output
    ev = data('ev.jsonl', rows[40:])
    r = R.invoke(app, ['family', 'add', 'acme_sums', '--train', str(tr), '--eval', str(ev), '--scorer', 'numeric'])
    assert r.exit_code == 0 and '40 train rows' in r.stdout and '20 eval rows' in r.stdout, r.output
    assert json.loads(R.invoke(app, ['family', 'list', '--json']).stdout)['yours']['acme_sums']['eval_rows'] == 20
    assert json.loads(R.invoke(app, ['families', '--json']).stdout)['acme_sums']['yours'] is True
    assert R.invoke(app, ['brief', 'acme_sums']).exit_code == 0
    assert json.loads(R.invoke(app, ['family', 'show', 'acme_sums']).stdout)['scorer'] == 'numeric'
    r = R.invoke(app, ['family', 'remove', 'acme_sums'])
    assert r.exit_code == 0 and 'would remove' in r.stdout and is_family('acme_sums')
    assert R.invoke(app, ['family', 'remove', 'acme_sums', '--yes']).exit_code == 0 and not is_family('acme_sums')
    assert R.invoke(app, ['family', 'show', 'acme_sums']).exit_code == 2
