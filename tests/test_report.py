"""agentforge.report: reading metrics.jsonl, the plots, the summary wording and report.md.

Every metrics row here is synthetic, made up to exercise the report's reading and formatting; none is a result.
"""
import json
import math
from types import SimpleNamespace

import pytest
from agentforge.grading import get_weights

from agentforge.outer import read_metrics
from agentforge.report import (METRIC_COLUMNS, REFERENCE_PEAK, md_table, plot_attempts, plot_policy, plot_reward,
                               plot_uplift_by_family, reward_components, summarize, write_report)
from agentforge.transfer import transfer_table, verdict, write_transfer

PNG = b'\x89PNG\r\n\x1a\n'


def synthetic_rows(n=6, peak=0.5):
    "Synthetic metrics rows for the report's formatting, not results: reward rises linearly to `peak`."
    rows = []
    for s in range(n):
        f = s / max(1, n - 1)
        v, u, sp = 0.2 + 0.8 * f, peak * f, 0.5
        p = 0.3 + u   # the post score moves with the raw gain
        rows.append(dict(step=s, reward_mean=0.35 * v + 0.45 * u + 0.15 * p + 0.05 * sp, validation_mean=v, uplift_mean=u,
                         post_mean=p, speed_mean=sp,
                         validation_first_try_rate=round(0.1 + 0.6 * f, 3), attempts_mean=2.5 - f,
                         reward_std_group=0.0 if s == 0 else 0.12,
                         uplift_by_family={'arithmetic': u, 'unit_conversion': None if s == 2 else u / 2}, seconds=30.0 + s))
    return rows


def make_run(tmp_path, rows, tail=''):
    run = tmp_path / 'run-1'; run.mkdir()
    (run / 'metrics.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows) + tail)
    return run


# read_metrics
def test_read_metrics_reads_every_row(tmp_path):
    rows = synthetic_rows()
    assert read_metrics(make_run(tmp_path, rows)) == rows


def test_read_metrics_skips_a_torn_last_line_with_a_warning(tmp_path):
    run = make_run(tmp_path, synthetic_rows(), tail='{"step": 6, "reward_me')
    with pytest.warns(UserWarning, match='torn last line'): rows = read_metrics(run)
    assert [r['step'] for r in rows] == list(range(6))


def test_read_metrics_torn_multibyte_tail(tmp_path):
    run = make_run(tmp_path, synthetic_rows(2))
    with open(run / 'metrics.jsonl', 'ab') as f: f.write('{"note": "é'.encode()[:-1])   # cut inside a UTF-8 character
    with pytest.warns(UserWarning, match='torn'): assert len(read_metrics(run)) == 2


def test_read_metrics_refuses_a_corrupt_middle_line(tmp_path):
    rows = synthetic_rows(3)
    run = tmp_path / 'r'; run.mkdir()
    (run / 'metrics.jsonl').write_text(json.dumps(rows[0]) + '\n{garbage\n' + json.dumps(rows[1]) + '\n')
    with pytest.raises(ValueError, match=r'metrics.jsonl:2: .*only the last line may be torn'): read_metrics(run)
    (run / 'metrics.jsonl').write_text('[1, 2]\n')
    with pytest.raises(ValueError, match='expected a JSON object'): read_metrics(run)


def test_read_metrics_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match='metrics.jsonl'): read_metrics(tmp_path)


# components and plots
def test_reward_components_use_the_reference_weights():
    row = dict(validation_mean=0.8, uplift_mean=0.5, post_mean=0.7, speed_mean=0.2)
    c = reward_components([row, dict(validation_mean=None)])
    assert c['validation'][0] == pytest.approx(0.35 * 0.8) and c['uplift'][0] == pytest.approx(0.45 * 0.5)
    assert c['post'][0] == pytest.approx(0.15 * 0.7) and c['speed'][0] == pytest.approx(0.01)
    assert reward_components([row], 'v0')['uplift'] == [pytest.approx(0.30)] and 'post' not in reward_components([row], 'v0')
    assert all(math.isnan(c[k][1]) for k in c)          # missing means are gaps, never zeros
    assert reward_components([row], 'mock')['validation'] == [0.8]


def test_components_add_up_to_the_reward():
    rows = synthetic_rows()
    c = reward_components(rows)
    for i, r in enumerate(rows): assert sum(c[k][i] for k in c) == pytest.approx(r['reward_mean'])


@pytest.mark.parametrize('plot', [plot_reward, plot_attempts, plot_uplift_by_family])
def test_plots_write_pngs(tmp_path, plot):
    rows = synthetic_rows()
    rows[3]['reward_mean'] = None; rows[4]['attempts_mean'] = None
    p = plot(rows, tmp_path / 'plots' / f'{plot.__name__}.png')
    assert p.read_bytes()[:8] == PNG and p.stat().st_size > 1000


def test_uplift_plot_with_no_families(tmp_path):
    p = plot_uplift_by_family([dict(step=0), dict(step=1, uplift_by_family={})], tmp_path / 'u.png')
    assert p.read_bytes()[:8] == PNG


# table and summary
def test_md_table_formats_and_aligns():
    t = md_table([dict(a='x', b=1, c=0.12345, d=None), dict(a='y', b=2, c=1, d={'agent': 1.0, 'inner': 2.5})],
                 dict(a='A', b='B', c='C', d='D'), digits={'d': 1})
    assert t.splitlines() == ['| A | B | C | D |', '|:---|---:|---:|---:|', '| x | 1 | 0.123 | — |', '| y | 2 | 1.000 | 3.5 |']


def test_summary_reports_numbers_and_which_side_of_the_reference():
    s = summarize(synthetic_rows(6, peak=0.5))
    assert s[0] == '- Outer steps recorded: 6 (step 0 to 5).'
    assert 'at step 0: 0.140' in s[1] and 'at step 5: 0.720' in s[1]
    assert 'Peak mean reward: 0.720 at step 5' in s[2] and 'at or above that line' in s[2]
    low = summarize(synthetic_rows(6, peak=0.2))
    assert 'Peak mean reward: 0.540 at step 5' in low[2] and 'below that line' in low[2] and REFERENCE_PEAK == 0.63
    assert '0.100 at step 0, 0.700 at step 5' in s[3] and '1 of 6' in s[4]
    with pytest.raises(ValueError, match='no metrics rows'): summarize([])


def test_summary_words_contain_no_unearned_claims():
    text = ' '.join(summarize(synthetic_rows(6, peak=0.2))).lower()
    for word in ('success', 'converged', 'matches the reference', 'reproduced', 'target'): assert word not in text


# write_report
def test_write_report_without_transfer(tmp_path):
    run = make_run(tmp_path, synthetic_rows(), tail='{"torn')
    with pytest.warns(UserWarning, match='torn'): p = write_report(run, title='Synthetic report')
    text = p.read_text()
    assert p == run / 'report.md' and text.startswith('# Synthetic report\n')
    for name in ('reward', 'attempts', 'uplift_by_family'):
        assert (run / 'plots' / f'{name}.png').read_bytes()[:8] == PNG
        assert f'](plots/{name}.png)' in text
    assert str(tmp_path) not in text                     # links are relative: the folder can move
    assert '## Transfer' not in text and not (run / 'plots' / 'transfer.png').exists()
    assert '- Outer steps recorded: 6 (step 0 to 5).' in text
    w = get_weights('reference')                         # every weighted component named, the post score included
    assert (f'{w.validation:.2f} × validation + {w.uplift:.2f} × uplift + {w.post:.2f} × post-training score + '
            f'{w.speed:.2f} × speed') in text and w.validation + w.uplift + w.post + w.speed == 1.0
    assert '| ' + ' | '.join(METRIC_COLUMNS.values()) + ' |' in text and '| 5 | — | — | 0.720 |' in text   # no job counts in these rows: shown as missing
    assert text.count('\n| ') == 1 + 6                   # header + one row per step (the separator starts with '|-' or '|:')


def test_write_report_shows_the_policy_probe_when_rows_have_it(tmp_path):
    rows = synthetic_rows()
    for i, r in enumerate(rows):   # illustrative probe values, not results
        r['policy'] = {b: {'learning_rate': {'1.0e-5': 1 - i / 10, '3.0e-4': i / 10}, 'level': {'1': .5, '2': .5}}
                       for b in ('date_math', 'arithmetic')}
    run = make_run(tmp_path, rows)
    text = write_report(run).read_text()
    assert '## Policy probe' in text and '](plots/policy.png)' in text
    assert (run / 'plots' / 'policy.png').read_bytes()[:8] == PNG
    (tmp_path / 'plain').mkdir()
    assert '## Policy probe' not in write_report(make_run(tmp_path / 'plain', synthetic_rows())).read_text()


def test_plot_policy_without_probe_rows_says_so(tmp_path):
    assert plot_policy([dict(step=0)], tmp_path / 'p.png').read_bytes()[:8] == PNG


def test_write_report_with_transfer(tmp_path):
    run = make_run(tmp_path, synthetic_rows())
    mk = lambda a, xs: [SimpleNamespace(agent=a, brief='date_math', seed=i, validated_on=1, attempts=1, inner=None,
                                        reward=dict(total=x, validation=1.0, uplift=x, speed=0.5)) for i, x in enumerate(xs)]
    res = dict(untrained=mk('u', [0.3, 0.4, 0.5]), trained=mk('t', [0.35, 0.5, 0.5]))
    v = verdict(res, ['date_math'], 'trained', 'untrained')
    write_transfer(run, transfer_table(res, ['date_math']), v)
    text = write_report(run).read_text()
    assert '## Transfer' in text and '](plots/transfer.png)' in text and (run / 'plots' / 'transfer.png').read_bytes()[:8] == PNG
    assert '| trained | held-out | 3 |' in text and v['summary'] in text
    assert text.index('## Transfer') < text.index('## Metrics')
    assert "the 'trained' rows" not in text  # no config.yaml: nothing to name

def test_transfer_section_shows_the_modes_when_the_run_played_them(tmp_path):
    "One row per family (held out first, marked), a cell per agent with its reward and decision, then the sentence."
    from agentforge.transfer import mode_rows, mode_text
    run = make_run(tmp_path, synthetic_rows())
    mk = lambda a, b, x, steps: SimpleNamespace(agent=a, brief=b, seed=0, validated_on=1 if x else None, attempts=1,
                                                inner=None, reward=dict(total=x, validation=1.0, uplift=x, speed=0.5),
                                                knobs=dict(level=2, max_steps=steps, learning_rate='3.0e-4') if x else None)
    res = dict(trained=[mk('t', 'string_ops', 0.7, 16), mk('t', 'date_math', 0.0, 0)],
               untrained=[mk('u', 'string_ops', 0.5, 16), mk('u', 'date_math', 0.6, 48)])
    v = verdict(res, ['date_math'], 'trained', 'untrained')
    mode = mode_rows(res, ['date_math'], decision=lambda r: r.knobs)
    write_transfer(run, transfer_table(res, ['date_math']), v, mode)
    text = write_report(run).read_text()
    assert '### The modes: what each agent decides' in text and mode_text(mode) in text
    assert '| date_math (held out) | 0.000 (no valid spec) | 0.600 (level 2, 48 steps at 3.0e-4) |' in text
    assert '| string_ops | 0.700 (level 2, 16 steps at 3.0e-4) | 0.500 (level 2, 16 steps at 3.0e-4) |' in text
    assert text.index('## Transfer') < text.index('### The modes') < text.index('## Metrics')


def test_transfer_section_names_the_trained_families_it_evaluated(tmp_path):
    "The 'trained' rows are the config's eval_trained (string_ops by default), not all five: the report says which."
    from agentforge.config import RunConfig, freeze
    run = make_run(tmp_path, synthetic_rows())
    freeze(RunConfig(eval_trained=('string_ops', 'arithmetic')), run)
    mk = lambda a, b, xs: [SimpleNamespace(agent=a, brief=b, seed=i, validated_on=1, attempts=1, inner=None,
                                           reward=dict(total=x, validation=1.0, uplift=x, speed=0.5)) for i, x in enumerate(xs)]
    res = dict(untrained=mk('u', 'customer_support', [0.3, 0.4]) + mk('u', 'string_ops', [0.5]),
               trained=mk('t', 'customer_support', [0.4, 0.5]) + mk('t', 'string_ops', [0.6]))
    write_transfer(run, transfer_table(res, ['customer_support']), verdict(res, ['customer_support'], 'trained', 'untrained'))
    assert "Held out of outer-loop training: customer_support; the 'trained' rows: string_ops, arithmetic." in write_report(run).read_text()


def test_write_report_unreadable_transfer_is_named_not_fatal(tmp_path):
    run = make_run(tmp_path, synthetic_rows(2))
    (run / 'transfer.json').write_text('{"table": [')
    with pytest.warns(UserWarning, match='transfer.json'): text = write_report(run).read_text()
    assert 'could not be read' in text


def test_write_report_long_run_table_is_compact(tmp_path):
    rows = synthetic_rows(60)
    rows[17]['reward_mean'] = 0.99                       # the peak must be one of the rows shown
    text = write_report(make_run(tmp_path, rows), max_rows=10).read_text()
    table = text[text.index('## Metrics'):]
    assert 'of 60 steps shown' in table and table.count('\n| ') - 1 <= 10
    assert '| 17 | — | — | 0.990 |' in table and '\n| 0 |' in table and '\n| 59 |' in table


def test_write_report_needs_rows(tmp_path):
    run = make_run(tmp_path, [], tail='{"torn')
    with pytest.warns(UserWarning), pytest.raises(ValueError, match='no complete rows'): write_report(run)


def test_report_draws_the_best_seen_lines_and_bounds_the_peak(tmp_path):
    "With episodes on disk, the report states each pool's best-seen line, the share of the gap closed, and the most a "
    "step can score: the numbers follow from the synthetic records below (made up, not results)."
    from agentforge.config import RunConfig, freeze
    from agentforge.curve import curve_row
    rows = synthetic_rows()
    run = make_run(tmp_path, rows)
    freeze(RunConfig(), run)                              # holdout customer_support, 2 briefs per step
    lines = dict(arithmetic=0.50, string_ops=0.70, date_math=0.60, customer_support=0.80)
    for i, (brief, total) in enumerate(lines.items()):   # one record per family at its line, one below it
        for sub, t, v in (('episodes', total - 0.35 * 0.5, 0.5), ('transfer/episodes', total - 0.2, 1.0)):
            (run / sub).mkdir(parents=True, exist_ok=True)
            (run / sub / f'e{i}.json').write_text(json.dumps(dict(
                id=f'{sub}-{i}', brief=brief, reward=dict(total=t, validation=v, weights='reference'))))
    ep = lambda b, s, t: SimpleNamespace(brief=b, seed=s, reward=dict(total=t), validated_on=1, inner=None, job=None)
    first = [ep(b, 0, 0.30) for b in ('arithmetic', 'string_ops', 'customer_support')]
    last = [ep('arithmetic', 0, 0.40), ep('string_ops', 0, 0.60), ep('customer_support', 0, 0.80)]
    (run / 'curve.jsonl').write_text(''.join(json.dumps(curve_row(s, r)) + '\n' for s, r in ((0, first), (5, last))))
    text = write_report(run).read_text()
    # a step draws two trained families: at most the mean of the two best trained lines (customer_support is held out)
    assert 'here at most 0.650 (string_ops and date_math)' in text
    assert 'Best seen (dashed) 0.600: from 0.300 to 0.500 it closed 67% of the gap.' in text   # trained: (0.5+0.7)/2
    assert 'Best seen (dashed) 0.800: from 0.300 to 0.800 it closed 100% of the gap.' in text  # held out
    assert (run / 'plots' / 'curve.png').read_bytes()[:8] == PNG
