"The experience library: validated specs only, content-addressed, concurrent writers lose nothing, runs record."
import json, subprocess, sys
import pytest, yaml
from typer.testing import CliRunner
from agentforge.cli import app
from agentforge.library import Library, similarity
from agentforge.spec import folder_digest
from agentforge.rows import example_spec

OK = dict(validated=True, checks=[])   # a stand-in report: the recording paths of the platform pass the probe's own

def specs(tmp_path, family, n, seed0=0):
    return [example_spec(family, tmp_path / f'{family}-{seed0 + k}', seed=seed0 + k) for k in range(n)]

WRITER = '''
import sys
from agentforge.library import Library
lib = Library(sys.argv[1])
for d in sys.argv[3:]: lib.add(d, dict(validated=True, checks=[]), source='person', who=sys.argv[2])
'''

def test_two_processes_adding_at_once_lose_nothing(tmp_path):
    a, b, same = specs(tmp_path, 'arithmetic', 15), specs(tmp_path, 'date_math', 15), specs(tmp_path, 'string_ops', 1)
    lib = tmp_path / 'lib'
    procs = [subprocess.Popen([sys.executable, '-c', WRITER, str(lib), who, *map(str, mine + same)])
             for who, mine in (('a', a), ('b', b))]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    entries = Library(lib).entries()
    assert len(entries) == 31                                            # 15 + 15 + the one both wrote
    both = [e for e in entries if e.brief == 'string_ops'][0]
    assert sorted(s['who'] for s in both.sources) == ['a', 'b']          # one entry, two sources
    assert sorted(p.name for p in (lib / 'specs').iterdir()) == sorted(e.digest for e in entries)   # no temp left

def test_only_validated_specs_and_known_sources_go_in(tmp_path):
    [d] = specs(tmp_path, 'arithmetic', 1)
    lib = Library(tmp_path / 'lib')
    for bad in (dict(validated=False, checks=[]), {}, None):
        with pytest.raises(ValueError, match='validated specs only'): lib.add(d, bad)
    with pytest.raises(ValueError, match="source 'oracle'"): lib.add(d, OK, source='oracle')
    assert lib.entries() == []

def test_a_result_is_recorded_once_and_the_mean_uplift_is_raw(tmp_path):
    [d] = specs(tmp_path, 'arithmetic', 1)
    lib = Library(tmp_path / 'lib')
    r = dict(key='k1', student='tiny-student', seed=0, samples=0, pre=0.2, post=0.5, uplift=0.375, uplift_se=0.02,
             train_seconds=10.0, steps=48)
    for _ in range(2): digest = lib.add(d, OK, r)
    lib.add(d, OK, dict(r, key='k2', seed=1, post=0.3))
    e = lib.get(digest[:6])
    assert len(e.results) == 2 and e.uplift == pytest.approx((0.3 + 0.1) / 2)
    assert digest == folder_digest(d) and (e.folder / 'task.yaml').read_bytes() == (d / 'task.yaml').read_bytes()

def test_search_by_text_brief_and_outcome(tmp_path):
    lib = Library(tmp_path / 'lib')
    r = dict(key='', student='tiny-student', seed=0, samples=0, pre=0.1, post=0.1, uplift=0.0, uplift_se=None,
             train_seconds=1.0, steps=1)
    for k, d in enumerate(specs(tmp_path, 'unit_conversion', 2) + specs(tmp_path, 'arithmetic', 2)):
        lib.add(d, OK, dict(r, key=f'k{k}', post=0.1 + 0.1 * k))
    hits = lib.search('convert a measurement between units')
    assert [e.brief for _, e in hits] == ['unit_conversion'] * 2     # arithmetic's brief shares no word
    assert hits[0][1].uplift >= hits[1][1].uplift                     # equal similarity: higher uplift first
    assert [e.brief for _, e in lib.search(brief='arithmetic', min_uplift=0.25)] == ['arithmetic']
    assert similarity('route billing tickets', 'route billing tickets') == 1.0 and similarity('', '') == 0.0
    with pytest.raises(KeyError, match='no spec'): lib.get('abcdef')

def test_export_copies_exactly_what_was_recorded_and_refuses_a_changed_copy(tmp_path):
    [d] = specs(tmp_path, 'arithmetic', 1)
    lib = Library(tmp_path / 'lib')
    digest = lib.add(d, OK)
    assert folder_digest(lib.export(digest, tmp_path / 'copy')) == digest
    with pytest.raises(FileExistsError): lib.export(digest, tmp_path / 'copy')
    p = lib.get(digest).folder / 'task.yaml'
    p.write_text(p.read_text() + '# edited\n')
    with pytest.raises(RuntimeError, match='changed after it was recorded'): lib.export(digest, tmp_path / 'copy2')

def test_episodes_record_themselves_when_their_env_names_a_library(tmp_path):
    from agentforge.agents import ScriptedAgent
    from agentforge.episode import run_episodes
    [rec] = run_episodes(ScriptedAgent('heuristic'), [('string_ops', 0)], tmp_path / 'run', weights='mock',
                         library=tmp_path / 'lib')
    [e] = Library(tmp_path / 'lib').entries()
    assert rec.validated_on == 1 and e.brief == 'string_ops' and e.results == []   # mock: validated, not trained
    assert e.sources[0]['kind'] == 'scripted' and e.sources[0]['detail']['episode'] == rec.id
    assert e.report['validated'] is True and e.report == rec.probe_reports[-1]

def test_cli_train_records_its_result_and_refuses_what_it_cannot_record(tmp_path):
    d = example_spec('string_ops', tmp_path / 'spec')
    doc = yaml.safe_load((d / 'task.yaml').read_text()); doc['grpo']['max_steps'] = 4
    (d / 'task.yaml').write_text(yaml.safe_dump(doc, sort_keys=False))
    R = CliRunner()
    r = R.invoke(app, ['train', str(d), '--skip-probe', '--library', str(tmp_path / 'lib')])
    assert r.exit_code == 2 and 'drop --skip-probe' in r.output
    r = R.invoke(app, ['train', str(d), '--samples', '0', '--json', '--library', str(tmp_path / 'lib')])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout.strip().splitlines()[-1])
    [e] = Library(tmp_path / 'lib').entries()
    assert e.results[0]['key'] == res['key'] and e.results[0]['post'] == res['post']
    assert e.sources[0]['kind'] == 'person'
    r = R.invoke(app, ['library', 'show', e.digest[:10], '--library', str(tmp_path / 'lib')])  # the uplift, signed,
    assert r.exit_code == 0 and res['uplift_se'] is not None, r.output  # its scoring SE beside it (grading.uplift_text)
    assert f"post − pre {res['post'] - res['pre']:+.3f} ± {res['uplift_se']:.3f} SE" in r.output, r.output

def test_export_to_another_brief_rewrites_the_brief_and_refuses_own_rows(tmp_path):
    """`library export --brief`: the next client's job starts from this spec; a spec with its own rows would carry the
    first client's rows, so it is refused and nothing is left behind."""
    [d] = specs(tmp_path, 'arithmetic', 1)
    lib = Library(tmp_path / 'lib'); dig = lib.add(d, OK)
    r = CliRunner().invoke(app, ['library', 'export', dig[:10], str(tmp_path / 'next'), '--library',
                                 str(tmp_path / 'lib'), '--brief', 'date_math'])
    assert r.exit_code == 0, r.output
    assert yaml.safe_load((tmp_path / 'next' / 'task.yaml').read_text())['brief'] == 'date_math'
    assert folder_digest(lib.get(dig).folder) == dig                       # the recorded copy is untouched
    own = tmp_path / 'own'; own.mkdir(); (own / 'data').mkdir()
    doc = yaml.safe_load((d / 'task.yaml').read_text())
    doc['data'] = dict(train='data/train.jsonl')
    (own / 'data' / 'train.jsonl').write_text('{"prompt": "1+1?", "answer": "2"}\n')
    (own / 'task.yaml').write_text(yaml.safe_dump(doc))
    dig2 = lib.add(own, OK)
    r = CliRunner().invoke(app, ['library', 'export', dig2[:10], str(tmp_path / 'next2'), '--library',
                                 str(tmp_path / 'lib'), '--brief', 'date_math'])
    assert r.exit_code == 2 and 'its own rows' in r.output and not (tmp_path / 'next2').exists()
