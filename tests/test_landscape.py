"The landscape (issue 11): every planned spec is probed, trained once if valid, shown next to the scoring noise."
import json
from pathlib import Path
import pytest
from typer.testing import CliRunner
from agentforge.cli import app
from agentforge.grading import uplift
from agentforge.landscape import KINDS, format_landscape, plan, plot_landscape, verdicts

def test_plan_writes_every_kind_and_the_same_knobs_on_every_family():
    kinds = [k for k, _ in plan('arithmetic', n_random=3)]
    assert kinds[:4] == ['heuristic', 'example', 'lazy', 'harmful'] and kinds.count('random') == 3
    assert set(kinds) | {'best'} == set(KINDS)
    grid = lambda b: [t.split('grpo: ')[1].split(', num_generations')[0] for k, t in plan(b) if k == 'grid']
    assert grid('arithmetic') == grid('string_ops') and len(grid('arithmetic')) == 8   # 2 step counts x 4 rates
    assert plan('date_math', seed=1) != plan('date_math', seed=2)                        # random draws follow the seed

def test_the_harmful_spec_is_reckless_and_validates_on_every_family(tmp_path):
    """The reckless writer takes the largest learning rate the contract accepts for the design space's longest run, with
    a reward that also pays long answers (outside the agents' knobs); the probe accepts it on every family."""
    from agentforge.agents import HEURISTIC, KNOBS, write_spec
    from agentforge.families import FAMILIES
    from agentforge.landscape import HARMFUL
    from agentforge.probe import validate
    from agentforge.schema import GRPO_RANGES
    assert float(HARMFUL['learning_rate']) == GRPO_RANGES['learning_rate'].hi
    assert HARMFUL['max_steps'] == max(KNOBS['max_steps']) and HARMFUL['reward'] not in KNOBS['reward']
    assert HARMFUL == dict(HEURISTIC, reward='verbose', max_steps=96, learning_rate=HARMFUL['learning_rate'])  # the rest
    for family in FAMILIES:
        spec = write_spec(family, HARMFUL)
        assert '{use: "length_penalty", target: 48, weight: 0.3}' in spec and 'weight: 0.7}' in spec, spec
        (tmp_path / family).mkdir()
        (tmp_path / family / 'task.yaml').write_text(spec)
        r = validate(tmp_path / family, brief=family, saturation=False)
        assert r.validated, (family, r.reason, r.failure())

def _row(kind, gain, reward, validated=True, seconds=10.0):
    return dict(brief='b', kind=kind, validated=validated, gain=gain, reward=reward, seconds=seconds, pre=.2, post=.3)

def test_verdicts_measure_what_ran_and_say_not_measured_otherwise():
    land = dict(noise={'b': 0.05}, rows=[_row('heuristic', .30, .55), _row('lazy', .01, .42), _row('harmful', -.5, .30),
                                          _row('random', .02, .42), _row('random', .10, .45),
                                          _row('random', None, 0.0, validated=False), {**_row('best', .30, .55), 'of': 'heuristic'}])
    v = verdicts(land)[0]
    assert v['random_median'] == pytest.approx(.06) and v['random_valid'] == '2/3' and v['worst_valid_reward'] == .30
    t = v['targets']
    assert t['harmful reward < lazy'] is True and t['lazy gain <= 0.05'] is True and t['best gain >= 0.4'] is False
    assert t['best gain >= 4 SD'] is True and t['example gain >= 0.15'] is None          # 0.30 >= 4 x 0.05; no example row
    land['noise']['b'] = None
    assert verdicts(land)[0]['targets']['best gain >= 4 SD'] is None                       # no noise measured: not met
    assert v['uplift_se'] is None and t['uplift SE <= 0.02'] is None                       # no row carried its SE

def test_the_uplift_se_target_is_the_largest_paired_se_of_any_trained_row():
    "Issue 11, item 4: every uplift's own paired SE (raw post - pre) at most 0.02; one noisy row misses it for the brief."
    rows = [{**_row('heuristic', .30, .55), 'uplift_se': .016}, {**_row('lazy', .01, .42), 'uplift_se': .003},
            _row('random', None, 0.0, validated=False)]
    assert verdicts(dict(noise={'b': .01}, rows=rows))[0]['targets']['uplift SE <= 0.02'] is True
    rows.append({**_row('grid', .60, .70), 'uplift_se': .0215})
    v = verdicts(dict(noise={'b': .01}, rows=rows))[0]
    assert v['uplift_se'] == .0215 and v['targets']['uplift SE <= 0.02'] is False

def test_the_training_noise_is_stated_beside_the_scoring_noise_and_absent_from_old_records():
    "A landscape that trained the heuristic with several seeds states their gains and SD; one recorded before does not."
    rows = [{**_row('heuristic', .80, .70), 'uplift_se': .015}]
    land = dict(noise={'b': .01}, rows=rows, train_sd={'b': dict(gains=[.80, .75, .88, None], sd=.0656)})
    assert verdicts(land)[0]['train_sd'] == .0656
    assert 'training noise: the heuristic over 4 training seeds gains +0.800 +0.750 +0.880 — (SD 0.066)' \
        in format_landscape(land)
    old = dict(noise={'b': .01}, rows=rows)                                            # before 2026-12-06: no field
    assert verdicts(old)[0]['train_sd'] is None and 'training noise' not in format_landscape(old)

def test_landscape_cli_refuses_no_training_seed_before_training_anything(tmp_path):
    r = CliRunner().invoke(app, ['landscape', '--brief', 'string_ops', '--train-seeds', '0', '--out', str(tmp_path)])
    assert r.exit_code != 0 and '--train-seeds must be at least 1' in r.output
    assert not (tmp_path / 'landscape.json').exists()

def test_knob_rows_refuses_an_unknown_knob_before_training_anything(tmp_path):
    from agentforge.landscape import knob_rows
    with pytest.raises(ValueError, match=r"unknown knobs \['steps'\]; known: \['reward'"):
        knob_rows('arithmetic', work=tmp_path, knobs=['steps'])
    assert not list(tmp_path.iterdir())

def test_a_spec_recorded_in_two_knob_tables_counts_once_per_seed():
    "Tables written with different --knobs both train the heuristic; merged, its seeds are not counted twice."
    from agentforge.landscape import knob_effects, train_sd
    row = lambda knob, option, gain, seed: dict(brief='b', knob=knob, option=option, seed=seed, validated=True,
                                                gain=gain, gain_se=.01)
    a = [row(None, None, g, s) for s, g in enumerate((.80, .70))] + [row('rows', 64, g, s) for s, g in enumerate((.5, .6))]
    b = [row(None, None, .80, 0), row('temperature', 0.7, .79, 0)]
    assert train_sd(a + b, 'b') == train_sd(a, 'b') == pytest.approx(.0707, abs=1e-4)
    assert set(knob_effects(a + b)) == {'rows', 'temperature'}

def test_knob_rows_refuses_an_unknown_base_knob_before_training_anything(tmp_path):
    from agentforge.landscape import knob_rows
    with pytest.raises(ValueError, match=r"unknown knobs \['steps'\]"):
        knob_rows('arithmetic', work=tmp_path, knobs=['temperature'], base={'steps': 16})
    assert not list(tmp_path.iterdir())

def test_knob_effects_judge_each_base_against_its_own_heuristic_and_noise():
    "Rows trained around two bases: each option is compared with the heuristic of its own base, with that base's SD."
    from agentforge.landscape import format_knobs, knob_effects, train_sd
    def row(knob, option, gain, seed, base=None):
        return dict(brief='b', **({'base': base} if base else {}), knob=knob, option=option, seed=seed,
                    validated=True, gain=gain, gain_se=.01)
    plain = [row(None, None, g, s) for s, g in enumerate((.80, .78, .82))] + \
            [row('temperature', 0.7, g, s) for s, g in enumerate((.79, .81, .80))]
    short = [row(None, None, g, s, {'max_steps': 16}) for s, g in enumerate((.30, .33, .32))] + \
            [row('temperature', 0.7, g, s, {'max_steps': 16}) for s, g in enumerate((.40, .41, .39))]
    rows = plain + short
    assert knob_effects(rows, base={}) == {'temperature': {'b': False}}
    assert knob_effects(rows, base={'max_steps': 16}) == {'temperature': {'b': True}}
    assert knob_effects(rows) == {'temperature': {'b': True}}      # moves uplift around some base
    assert train_sd(rows, 'b') == train_sd(plain, 'b') == pytest.approx(.0158, abs=1e-4)
    assert train_sd(rows, 'b', {'max_steps': 16}) == pytest.approx(.0129, abs=1e-4)
    table = format_knobs(rows)
    first, second = table.split('Around the heuristic with max_steps: 16:')
    assert '| temperature | 0.7 | +0.800 | 0 of 1 |' in first and '| (heuristic) | | +0.800 |' in first
    assert '| temperature | 0.7 | +0.400 | 1 of 1 |' in second and '| (heuristic) | | +0.317 |' in second

def test_knob_tables_of_two_students_are_not_judged_together():
    "A row names its student when it is not the default; rows of two students are refused, each judged alone."
    from agentforge.landscape import format_knobs, knob_effects, train_sd
    def row(knob, option, gain, seed, student=None):
        return dict(brief='b', knob=knob, option=option, seed=seed, **({'student': student} if student else {}),
                    validated=True, gain=gain, gain_se=.01)
    ours = [row(None, None, g, s) for s, g in enumerate((.80, .78))] + \
           [row('rows', 64, g, s) for s, g in enumerate((.5, .52))]
    other = [row(None, None, g, s, '7191ee7131239f6f') for s, g in enumerate((.50, .52))]
    assert knob_effects(ours) == {'rows': {'b': True}} and knob_effects(other) == {}
    for f in (knob_effects, format_knobs, lambda rs: train_sd(rs, 'b')):
        with pytest.raises(ValueError, match="students \\['7191ee7131239f6f', 'tiny-student'\\]"): f(ours + other)

def test_the_space_is_every_spec_the_random_agent_can_write_and_holds_the_grid():
    "The `space` rows are the random agent's whole uniform space, each spec once; the grid and the draws lie inside it."
    from agentforge.agents import CHOICES, choices_of
    p = plan('date_math')
    space = [t for k, t in p if k == 'space']
    assert len(space) == len(set(space)) == 24 and len(space) == len(CHOICES['level']) * 2 * 4
    assert {tuple(sorted(choices_of(t, 'date_math').items())) for t in space} == {
        (('learning_rate', r), ('level', lv), ('max_steps', s))
        for lv in CHOICES['level'] for s in CHOICES['max_steps'] for r in CHOICES['learning_rate']}
    assert {t for k, t in p if k in ('grid', 'random')} <= set(space)          # draws and grid: a subset, trained once

def test_the_random_median_is_the_whole_spaces_when_it_was_trained():
    "Four draws estimate the median random spec; the space the random agent samples uniformly measures it."
    rows = [_row('random', .5, .6), _row('random', .4, .6)] + [_row('space', g, .5) for g in (.0, .0, .1, .5)] \
        + [_row('space', None, 0.0, validated=False)]
    v = verdicts(dict(noise={'b': .01}, rows=rows))[0]
    assert (v['random_median'], v['random_valid'], v['random_over']) == (pytest.approx(.05), '4/5', 'space')
    assert v['targets']['median random valid gain <= 0.15'] is True
    v = verdicts(dict(noise={'b': .01}, rows=rows[:2]))[0]                          # no space trained: the draws
    assert (v['random_median'], v['random_valid'], v['random_over']) == (pytest.approx(.45), '2/2', 'random')

def test_the_habit_cut_is_stated_where_measured_and_absent_where_not(tmp_path):
    "A landscape states what cutting the habit alone would give (lesson 03b); one recorded before 2026-12-05 says nothing."
    kinds = {'0': dict(n=3, score=.1, habit_free=.9), '1': dict(n=5, score=0.0, habit_free=.25)}
    land = dict(noise={'b': .05}, rows=[_row('heuristic', .3, .55), {**_row('best', .3, .55), 'of': 'heuristic'}],
                habit_free={'b': dict(pre=.2, score=.5, gain=.375, kinds=kinds)}, student='tiny-student')
    assert verdicts(land)[0]['habit_free_gain'] == .375
    assert 'habit cut, nothing else taught: score 0.500, gain +0.375 (by kind of item 0.25–0.90)' in format_landscape(land)
    assert plot_landscape(land, tmp_path / 'l.png').read_bytes()[:4] == b'\x89PNG'
    del land['habit_free']
    assert verdicts(land)[0]['habit_free_gain'] is None and 'habit cut' not in format_landscape(land)

def test_pre_scores_carry_the_habit_cut_by_kind_and_refresh_an_older_cache(tmp_path):
    "The untrained student's hidden answers scored again with its chatter cut: never lower, every item in one kind."
    "A pre score cached before the field existed is computed again, not read as a landscape without it."
    from agentforge.scoring import pre_scores
    from agentforge.tasks import HIDDEN_SIZE
    res = pre_scores('tiny-student', 'arithmetic', cache_root=tmp_path)
    assert res['habit_free'] >= res['score'] and sum(k['n'] for k in res['kinds'].values()) == res['items'] == HIDDEN_SIZE
    assert all(k['habit_free'] >= k['score'] for k in res['kinds'].values()) and len(res['kinds']) > 1
    [cached] = (tmp_path / 'pre').glob('*.json')
    cached.write_text(json.dumps({k: v for k, v in res.items() if k not in ('habit_free', 'kinds')}))
    again = pre_scores('tiny-student', 'arithmetic', cache_root=tmp_path)
    assert again['habit_free'] == res['habit_free'] and 'habit_free' in json.loads(cached.read_text())

@pytest.mark.slow
def test_landscape_cli_json_trains_valid_specs_once_and_grades_invalid_ones_zero(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                                                            # a relative --out, as a user types it
    r = CliRunner().invoke(app, ['landscape', '--brief', 'string_ops', '--kinds', 'lazy,random,best', '--random', '3',
                                 '--noise-seeds', '2', '--json', '--out', 'land'])
    assert r.exit_code == 0, r.output[-3000:]
    land = json.loads(r.stdout.strip().splitlines()[-1])
    assert land['noise']['string_ops'] > 0
    rows = land['rows']
    assert [x['kind'] for x in rows] == ['lazy', 'random', 'random', 'random', 'best']
    for x in rows:
        assert {'brief', 'kind', 'pre', 'post', 'gain', 'reward', 'seconds'} <= set(x)
        if x['validated']:
            assert 0 <= x['pre'] <= 1 and 0 <= x['post'] <= 1 and x['seconds'] > 0 and x['gain_sd'] > 0
            assert x['gain'] == uplift(x['pre'], x['post'], 'normalized', floor=-1.0)
        else: assert x['reward'] == 0 and x['pre'] is None and x['reason']                  # never trained, graded 0
    valid = [x for x in rows[:-1] if x['validated']]
    assert rows[-1]['gain'] == max(x['gain'] for x in valid) and rows[-1]['of'] in ('lazy', 'random')
    assert verdicts(land)[0]['targets']['harmful reward < lazy'] is None                 # no harmful row ran
    assert json.loads((tmp_path / 'land' / 'landscape.json').read_text())['rows'] == rows
    assert (tmp_path / 'land' / 'landscape.png').read_bytes()[:4] == b'\x89PNG'
    specs = {x['spec'] for x in rows[:-1]}                                                # one folder per distinct spec
    assert len({(Path(s) / 'task.yaml').read_text() for s in specs}) == len(specs)

def test_scoring_noise_is_never_zero_when_every_item_scored_alike(monkeypatch):
    "CI, fresh platform: the student was right on none of 512 string-ops items, the plug-in SE was 0 and the landscape"
    "claimed noiseless scoring. The SE of a mean over n items is floored at one item in n + 2 apart (scoring.se_floor)."
    import agentforge.landscape as land
    from agentforge.scoring import mean_se, paired_se, se_floor
    # pre_scores is replaced by its result on such a split: which secret draws one cannot be chosen in a test
    monkeypatch.setattr(land, 'pre_scores', lambda *a, **kw: dict(score=0.0, per_item=[0.0] * 512))
    n = land.score_noise('string_ops')
    assert n['sd'] == round(se_floor(512), 4) > 0 and n['over'] == 'items'
    assert paired_se([0.0] * 512, [0.0] * 512) == n['sd'] and paired_se([1.0] * 8, [1.0] * 8) > 0
    assert mean_se([0.0, 1.0] * 256) == round((0.25 / 511) ** 0.5, 4)   # above the floor: the plain SE

def test_a_probe_that_could_not_run_is_an_error_not_a_zero(tmp_path, monkeypatch):
    "An INFRA_ report (the sandbox could not start) must stop the landscape, never become an 'invalid spec' row."
    import agentforge.landscape as land
    from agentforge.gates import Check, Report
    # the probe's report is faked (as in test_episode): a real sandbox start failure cannot be provoked on demand
    monkeypatch.setattr(land, 'validate', lambda *a, **kw: Report(False, 'INFRA_START_FAILED',
                        [Check('rewards', False, 'the sandbox could not start', 'INFRA_START_FAILED')], 0.0, 1))
    folder = land._spec_folder(tmp_path, 'arithmetic', plan('arithmetic')[0][1])
    with pytest.raises(RuntimeError, match='could not judge .*INFRA_START_FAILED'):
        land.evaluate_spec(folder, 'arithmetic')


def test_kind_posts_reads_one_arm_once_per_seed():
    "The recorded level-3 table: string ops' `last` kind is what groups of 16 lose (lesson 12b); no such arm: an error."
    from agentforge.landscape import kind_posts
    lv = [r for p in sorted((Path(__file__).resolve().parents[1] / 'results/knobs/level-3').glob('knobs-*.json')) for r in json.loads(p.read_text())]
    h, x = kind_posts(lv, 'string_ops', base={'level': 3}), kind_posts(lv, 'string_ops', 'num_generations', 16,
                                                                         {'level': 3})
    assert h.keys() == x.keys() and h['3'] - x['3'] > 0.3, (h, x)
    with pytest.raises(ValueError, match='no rows of string_ops with rows=7'): kind_posts(lv, 'string_ops', 'rows', 7)
