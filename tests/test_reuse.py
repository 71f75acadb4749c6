"""Reuse (lesson 09c): which library specs an episode is offered, how they sit in the workspace, and CopyBest.

The libraries here are real (SQLite, stored spec folders); the reports passed to `add` are stand-ins that say
validated, and the results carry chosen pre/post numbers, because what is tested is the ranking and the workspace
rules, not the probe or training (lessons 09b and 09c record real ones)."""
import json, os, stat
from pathlib import Path
import pytest
from agentforge.agents import HEURISTIC, ScriptedAgent, _product, write_spec
from agentforge.library import Library
from agentforge.reuse import CopyBest, PREVIEW_ROWS, examples_note, knobs_of, offer_examples, pick_examples
from agentforge.workspace import EXAMPLES, Workspace

OK = dict(validated=True, attempt=1, checks=[])

def _spec(tmp:Path, name:str, brief:str, choices:dict, rows:int=0) -> Path:
    d = tmp / name
    d.mkdir()
    (d / 'task.yaml').write_text(write_spec(brief, choices).replace(f"name: {brief.replace('_', '-')}-task", f'name: {name}'))
    if rows:
        (d / 'data').mkdir()
        (d / 'data' / 'extra.jsonl').write_text(''.join(json.dumps(dict(prompt=f'q{i}', answer=str(i))) + '\n'
                                                        for i in range(rows)))
    return d

def _result(key:str, pre:float, post:float) -> dict:
    return dict(key=key, student='tiny-student', seed=0, samples=0, pre=pre, post=post, uplift=0.0, uplift_se=None,
                train_seconds=10.0, steps=16)

@pytest.fixture
def lib(tmp_path):
    lib = Library(tmp_path / 'lib')
    lib.add(_spec(tmp_path, 'arith-low', 'arithmetic', dict(level=1)), OK, _result('a', 0.10, 0.12), 'scripted', 'r')
    lib.add(_spec(tmp_path, 'arith-high', 'arithmetic', dict(level=3, max_steps=16)), OK, _result('b', 0.10, 0.30),
            'scripted', 'r')
    lib.add(_spec(tmp_path, 'arith-untrained', 'arithmetic', dict(level=2, max_steps=16)), OK, None, 'person', 'ada')
    lib.add(_spec(tmp_path, 'units-best', 'unit_conversion', dict(learning_rate='1.0e-4'), rows=50), OK,
            _result('c', 0.0, 0.5), 'scripted', 'r')
    return lib

def test_same_brief_first_by_uplift_untrained_last(lib):
    picks = pick_examples(lib, 'arithmetic')
    assert [e.name for _, e in picks] == ['arith-high', 'arith-low', 'arith-untrained']
    assert all(why == 'same brief' for why, _ in picks)
    assert [e.name for _, e in pick_examples(lib, 'arithmetic', k=5)][-1] == 'units-best'  # other briefs after
    assert [e.name for _, e in pick_examples(lib, 'arithmetic', scope='others')] == ['units-best']
    assert pick_examples(lib, 'unit_conversion', scope='same')[0][1].name == 'units-best'
    with pytest.raises(ValueError, match='expected one of'): pick_examples(lib, 'arithmetic', scope='all')

def test_offered_read_only_with_readme_and_previews(lib, tmp_path):
    ws = tmp_path / 'ws'
    picks = pick_examples(lib, 'unit_conversion', k=4)
    digests = offer_examples(ws, picks)
    assert digests == [e.digest for _, e in picks] and len(digests) == 4
    rows = (ws / EXAMPLES / '1' / 'data' / 'extra.jsonl').read_text().splitlines()
    assert len(rows) == PREVIEW_ROWS                                      # data cut to a preview ...
    readme = (ws / EXAMPLES / 'README.md').read_text()
    assert f'first {PREVIEW_ROWS} of 50 rows' in readme                  # ... and the README says so
    assert 'uplift +0.500' in readme and 'never trained' in readme
    assert stat.S_IMODE(os.stat(ws / EXAMPLES / '1' / 'task.yaml').st_mode) == 0o444
    assert offer_examples(ws, []) == [] and not (ws / EXAMPLES).exists()  # offering none removes old ones
    assert examples_note([]) == '' and 'examples/' in examples_note(picks)

def test_workspace_never_writes_counts_or_submits_examples(lib, tmp_path):
    ws = Workspace(tmp_path / 'ep' / 'workspace', 'arithmetic', score=lambda b: 0.1, levels=None,
                   quotas=dict(max_files=3))
    offer_examples(ws.root, pick_examples(lib, 'arithmetic'))             # 3 examples: 4 files with the README
    r = ws.write_file(f'{EXAMPLES}/1/task.yaml', 'x')
    assert r['error'] == 'READ_ONLY' and 'task.yaml' in r['message']
    assert ws.read_file(f'{EXAMPLES}/README.md')['ok']
    for name in ('task.yaml', 'notes.md', 'reward.py'):                   # the agent's 3 files fit its quota of 3
        assert ws.write_file(name, write_spec('arithmetic', {}) if name == 'task.yaml' else '# x\n')['ok'], name
    listing = ws.list_files()
    assert listing['problems'] == []
    assert listing['total_bytes'] == sum((ws.root / n).stat().st_size for n in ('task.yaml', 'notes.md', 'reward.py'))
    assert {f['path'] for f in listing['files'] if f.get('read_only')} >= {f'{EXAMPLES}/README.md'}
    sub = ws.submit()
    assert sub['ok'] and sorted(sub['files']) == ['notes.md', 'reward.py', 'task.yaml']

def test_knobs_round_trip_over_the_design_space():
    for c in _product():
        for brief in ('arithmetic', 'string_ops'):
            k = knobs_of(write_spec(brief, c))
            assert write_spec(brief, k) == write_spec(brief, c), (brief, c)
    assert knobs_of('not: [valid') is None and knobs_of('a: 1') is None
    for o in ('answer', 'double', 40):  # a length by the knob's name, the same on every family; any other number as is
        assert knobs_of(write_spec('date_math', dict(completion_length=o)))['completion_length'] == o
    assert knobs_of(write_spec('date_math', {}))['completion_length'] == 'room'  # left out: the family's room
    assert knobs_of(write_spec('date_math', {}).replace('temperature:', 'max_completion_length: 32, temperature:')
                    ) == knobs_of(write_spec('date_math', {}))  # date math's room written out: the same knobs

def test_copy_best_reads_then_writes_the_best_knobs_for_this_brief(lib, tmp_path):
    from agentforge.episode import brief_messages
    agent = CopyBest(ScriptedAgent('heuristic'))
    assert agent.name == 'scripted-heuristic+reuse'
    plain = brief_messages('arithmetic')
    assert agent.act(plain, [], 0).tool_calls[0].name == 'write_file'      # no examples: the wrapped agent plays
    picks = pick_examples(lib, 'unit_conversion', scope='others')          # an arithmetic spec, for unit_conversion
    msgs = brief_messages('unit_conversion', examples=examples_note(picks))
    t0 = agent.act(msgs, [], 0)
    assert [(c.name, c.arguments) for c in t0.tool_calls] == [('read_file', {'path': f'{EXAMPLES}/1/task.yaml'})]
    text = (picks[0][1].folder / 'task.yaml').read_text()
    msgs += [dict(role='assistant', content=''), dict(role='tool', content=json.dumps(dict(ok=True, content=text)))]
    t1 = agent.act(msgs, [], 0)
    assert [c.name for c in t1.tool_calls] == ['write_file', 'submit']
    written = t1.tool_calls[0].arguments['content']
    assert 'brief: unit_conversion' in written and knobs_of(written) == knobs_of(text)
    assert written == write_spec('unit_conversion', knobs_of(text))       # this family's matcher, the example's knobs
    bad = msgs[:-1] + [dict(role='tool', content=json.dumps(dict(ok=False, error='NOT_FOUND')))]
    assert agent.act(bad, [], 0).tool_calls[0].arguments['content'] == write_spec('unit_conversion', HEURISTIC)

def test_episode_offers_records_and_validates(lib, tmp_path):
    from agentforge.episode import play
    rec = play(CopyBest(ScriptedAgent('random')), 'arithmetic', 3, tmp_path / 'ep', reuse=lib.root, weights='mock',
               saturation=False)
    assert rec.examples == [e.digest for _, e in pick_examples(lib, 'arithmetic')]
    assert 'examples/' in rec.messages[1]['content']
    assert rec.validated_on == 1 and sorted(p.name for p in Path(rec.submission).iterdir()) == ['task.yaml']
    assert knobs_of((Path(rec.submission) / 'task.yaml').read_text()) == knobs_of(
        (lib.get(rec.examples[0]).folder / 'task.yaml').read_text())
    none = play(ScriptedAgent('heuristic'), 'arithmetic', 3, tmp_path / 'ep2', weights='mock', saturation=False)
    assert none.examples == [] and 'examples' not in none.messages[1]['content']

def test_cli_reuse_needs_an_existing_library(tmp_path):
    from typer.testing import CliRunner
    from agentforge.cli import app
    r = CliRunner().invoke(app, ['draft', 'arithmetic', '--reuse', str(tmp_path / 'nothing-here')])
    assert r.exit_code == 2 and 'no experience library' in r.output
    assert not (tmp_path / 'nothing-here').exists()                         # nothing made up on the way
