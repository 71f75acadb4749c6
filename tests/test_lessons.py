"""Every lesson states its cost, and what it states is what `results/lessons/times.json` measured.

The figures are written by `bench/lessons.py headers`; this file only checks that the lessons, the README and the
measurement file agree (and that lesson text quoting a default quotes the code's).
"""
import ast, importlib.util, re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location('bench_lessons', ROOT / 'bench' / 'lessons.py')
bl = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(bl)
LESSONS = bl.lessons()
TIMES = bl.read_times()
READING = re.compile(r'Reading: about (\d+) min \(([\d,]+) words, ([\d,]+) lines of code\)\. ')

def test_every_lesson_is_measured():
    warm = TIMES.get('warm', {}).get('lessons', {})
    missing = [n for n in LESSONS if not warm.get(n, {}).get('ok')]
    assert not missing, f'no passing warm run recorded for {missing}: run `python bench/lessons.py warm {" ".join(missing)}`'
    for section in ('warm', 'cold'):
        if section in TIMES: assert {'tool', 'commit', 'date'} <= set(TIMES[section]['how']), section
    ci = TIMES.get('ci', {}).get('lessons', {})
    missing = [n for n in LESSONS if n not in ci]
    assert not missing, (f'no CI time recorded for {missing}: run `make test` from a fresh clone (fresh-run --keep) and '
                         f'`python bench/lessons.py from-log LOG`')
    assert {'tool', 'date'} <= set(TIMES['ci']['how'])

def test_a_cold_figure_not_timed_is_warm_plus_the_measured_builds():
    "Where a cold run was not timed, the header adds `run.COSTS_S`'s measured builds to the warm time, and says so."
    k = dict(warm=30.0, cold=None, builds=None, reads=['student', 'agent'], bwrap=0, slow=None, ci=3.0)
    from agentforge.run import COSTS_S
    text = bl._cold_text(k)
    assert bl.fmt_s(30 + COSTS_S['student'] + COSTS_S['agent_base']) in text and 'COSTS_S' in text
    assert bl._cold_text({**k, 'reads': []}).startswith('a cold run builds nothing first')

@pytest.mark.parametrize('name', LESSONS)
def test_cost_cell_matches_the_measurements(name):
    nb = bl.load_nb(name)
    assert len(nb['cells']) > 1 and bl.is_cost_cell(nb['cells'][1]), \
        f'{name}: the cell after the title is not the cost cell; run `python bench/lessons.py headers`'
    have, want = bl._src(nb['cells'][1]), bl.header(name, nb, TIMES)
    if have == want: return
    # the run-time figures must match exactly; reading time may drift a little as the lesson is edited
    h, w = READING.search(have), READING.search(want)
    assert h and w, (have, want)
    assert READING.sub('', have) == READING.sub('', want), \
        f'{name}: the cost cell disagrees with results/lessons/times.json; run `python bench/lessons.py headers`'
    hm, wm = int(h.group(1)), int(w.group(1))
    assert abs(hm - wm) <= max(2, 0.25 * wm), \
        f'{name}: reading time {hm} min stated, {wm} min now; run `python bench/lessons.py headers`'

def test_readme_table_matches_the_measurements():
    text = (ROOT / 'README.md').read_text()
    block = re.search(re.escape(bl.README_START) + '.*?' + re.escape(bl.README_END), text, re.S)
    assert block, 'README.md has no lesson-costs block'
    assert block.group(0) == bl.readme_table(TIMES), 'README lesson table is stale: run `python bench/lessons.py headers`'

def test_what_a_cold_run_builds_agrees_with_what_the_warm_run_read():
    "A lesson whose warm run read the student (or the agent base) must have built it when it ran cold, and vice versa."
    warm, cold = TIMES.get('warm', {}).get('lessons', {}), TIMES.get('cold', {}).get('lessons', {})
    checked = [n for n in cold if cold[n].get('ok') and warm.get(n, {}).get('reads') is not None]
    for n in checked: assert sorted(cold[n]['builds']) == sorted(warm[n]['reads']), (n, cold[n]['builds'], warm[n]['reads'])
    assert checked or not cold

def test_ci_prints_each_lessons_time():
    "`make test` runs nbdev-test with --timing, so a CI log has the per-lesson times `bench/lessons.py check` reads."
    rule = re.search(r'^test-nbs:.*\n\t(.*)$', (ROOT / 'Makefile').read_text(), re.M).group(1)
    assert 'nbdev-test' in rule and '--timing' in rule.split()
    log = 'Success.\n07_inner.ipynb: 98 secs\n01_grading.ipynb: 2 secs\n'
    assert bl.ci_times(log) == {'07_inner': 98.0, '01_grading': 2.0}
    assert bl.ratio(98, 150) > 1.5 and bl.ratio(2, 4) == 1.0  # tiny lessons compare at a 5 s floor

def _quoted_defaults(text:str) -> dict:
    "Defaults the prose states: `name='v'` next to 'default', `OuterConfig.name` (default v), `name`, default v."
    found = {}
    for m in re.finditer(r"`(?:OuterConfig\.)?(\w+)='?([\w.-]+?)'?`(?=[^.;\n]{0,30}\bdefault\b)|"
                         r"\bdefault,?\s*`(?:OuterConfig\.)?(\w+)='?([\w.-]+?)'?`|"
                         r"`(?:OuterConfig\.)?(\w+)`,? \(?default ([\w.-]+)\)?", text):
        k, v = next((m.group(i), m.group(i + 1)) for i in (1, 3, 5) if m.group(i))
        found.setdefault(k, set()).add(v)
    return found

def _code_defaults(module:Path, cls:str, fn:str, fn_module:Path|None=None) -> tuple:
    "Defaults of dataclass `cls`'s fields and of function `fn`'s keyword arguments (in `fn_module`), from the source."
    tree = ast.parse(module.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    fields = {a.target.id: ast.literal_eval(a.value) for a in node.body
              if isinstance(a, ast.AnnAssign) and a.value is not None and isinstance(a.target, ast.Name)
              and not isinstance(a.value, ast.Call)}
    tree = ast.parse(fn_module.read_text()) if fn_module else tree
    f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn)
    args = f.args.args[len(f.args.args) - len(f.args.defaults):]
    return fields, {a.arg: ast.literal_eval(d) for a, d in zip(args, f.args.defaults)}

def test_outer_lesson_quotes_the_codes_defaults():
    "11_outer teaches the per-episode loss as the default: every default it quotes is OuterConfig's."
    defaults, tw = _code_defaults(ROOT / 'agentforge' / 'config.py', 'OuterConfig', 'token_weights',
                                  ROOT / 'agentforge' / 'grpo.py')   # OuterConfig lives in lesson 10b
    nb = bl.load_nb('11_outer')
    text = '\n'.join(bl._src(c) for c in nb['cells'] if c['cell_type'] == 'markdown')
    quoted = {k: v for k, v in _quoted_defaults(text).items() if k in defaults}
    assert 'loss_agg' in quoted, 'the lesson no longer names the default loss aggregation'
    for k, vs in quoted.items():
        for v in vs:
            d = defaults[k]
            assert (float(v) == float(d)) if isinstance(d, (int, float)) and not isinstance(d, bool) else v == str(d), \
                f'11_outer says {k} defaults to {v!r}; OuterConfig says {d!r}'
    assert defaults['loss_agg'] == tw['agg'], (defaults['loss_agg'], tw['agg'])
    assert 'token-level mean over the step' not in text, 'the recap once taught the token mean as what pg_loss does'
