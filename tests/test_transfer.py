"""agentforge.transfer: family split, fresh eval seeds, bootstrap intervals, the transfer table and verdict.

Records here are hand-built stand-ins (SimpleNamespace with the fields an EpisodeRecord has) with made-up rewards:
they test the arithmetic and the wording, they are not results.
"""
import json
import os
from types import SimpleNamespace

import numpy as np
import pytest

from agentforge.families import FAMILIES
from agentforge.config import split_families
from agentforge.transfer import (EVAL_BLOCK, EVAL_SEED_OFFSET, REFERENCE_TRANSFER, bootstrap_ci, eval_jobs, evaluate,
                                 mode_rows, mode_text, paired_diff_ci, plot_transfer, transfer_table, verdict,
                                 write_transfer)

PNG = b'\x89PNG\r\n\x1a\n'


def rec(agent, brief, seed, total, validated_on=1, uplift=None):
    return SimpleNamespace(agent=agent, brief=brief, seed=seed, attempts=validated_on or 3, validated_on=validated_on,
                           reward=dict(total=total, validation=1.0 if validated_on else 0.0,
                                       uplift=total if uplift is None else uplift, speed=0.5), inner=None)


# bootstrap_ci
def test_bootstrap_constant_values_give_a_point_interval():
    for v in (0.4, 0.1, 0.0, 1.0):
        assert bootstrap_ci([v] * 9) == dict(mean=v, lo=v, hi=v, n=9)
    assert bootstrap_ci([0.3]) == dict(mean=0.3, lo=0.3, hi=0.3, n=1)


def test_bootstrap_large_sample_covers_the_true_mean():
    x = np.random.default_rng(7).normal(0.3, 0.1, size=2000)
    ci = bootstrap_ci(x)
    assert ci['lo'] < 0.3 < ci['hi'] and ci['lo'] < ci['mean'] < ci['hi']
    assert ci['hi'] - ci['lo'] == pytest.approx(2 * 1.96 * 0.1 / np.sqrt(2000), rel=0.15)   # ≈ the normal-theory width


def test_bootstrap_interval_narrows_with_alpha():
    x = np.random.default_rng(1).uniform(size=50)
    wide, narrow = bootstrap_ci(x, alpha=0.01), bootstrap_ci(x, alpha=0.3)
    assert wide['lo'] < narrow['lo'] < narrow['hi'] < wide['hi']


def test_bootstrap_is_seeded():
    x = [0.0, 0.2, 0.9, 0.4, 0.55, 0.1]
    assert bootstrap_ci(x, seed=3) == bootstrap_ci(x, seed=3)
    assert bootstrap_ci(x, seed=3) != bootstrap_ci(x, seed=4)
    assert bootstrap_ci(x)['mean'] == pytest.approx(np.mean(x))


@pytest.mark.parametrize('bad,match', [([], 'non-empty'), ([0.1, float('nan')], 'finite'), ([[0.1, 0.2]], '1-d')])
def test_bootstrap_rejects_bad_values(bad, match):
    with pytest.raises(ValueError, match=match): bootstrap_ci(bad)


def test_bootstrap_rejects_bad_settings():
    with pytest.raises(ValueError, match='alpha'): bootstrap_ci([0.1, 0.2], alpha=1.0)
    with pytest.raises(ValueError, match='n_boot'): bootstrap_ci([0.1, 0.2], n_boot=0)


# paired_diff_ci
def test_paired_diff_of_a_constant_shift_is_exact():
    a = [0.5, 0.6, 0.4, 0.7]
    d = paired_diff_ci(a, [x - 0.1 for x in a])
    assert d['mean'] == pytest.approx(0.1) and d['lo'] == pytest.approx(0.1) and d['hi'] == pytest.approx(0.1) and d['n'] == 4


def test_paired_diff_hand_computed_mean():
    assert paired_diff_ci([0.5, 0.6, 0.4, 0.7], [0.3, 0.5, 0.4, 0.4])['mean'] == pytest.approx(0.15)


def test_pairing_cancels_job_difficulty():
    rng = np.random.default_rng(0)
    job = rng.uniform(0, 0.8, 40)
    a, b = job + 0.05 + rng.normal(0, 0.01, 40), job + rng.normal(0, 0.01, 40)
    d, ca, cb = paired_diff_ci(a, b), bootstrap_ci(a), bootstrap_ci(b)
    assert ca['lo'] < cb['hi']                       # unpaired: the two intervals overlap
    assert d['lo'] > 0 and (d['hi'] - d['lo']) < (ca['hi'] - ca['lo']) / 5


def test_paired_diff_needs_equal_lengths():
    with pytest.raises(ValueError, match='same length'): paired_diff_ci([0.1, 0.2], [0.1])


# split_families / eval_jobs
def test_split_families_holds_one_out():
    train, held = split_families('customer_support')
    assert held == ['customer_support'] and len(train) == len(FAMILIES) - 1 == 5
    assert 'customer_support' not in train and train == [f for f in FAMILIES if f != 'customer_support']


def test_split_families_errors_name_the_accepted_ids():
    with pytest.raises(ValueError, match='accepted: multihop_lookup, arithmetic'): split_families('date-math')
    with pytest.raises(ValueError, match='unknown task families'): split_families('arithmetic', ['arithmetic', 'chess'])
    with pytest.raises(ValueError, match='accepted: arithmetic, string_ops'): split_families('date_math', ['arithmetic', 'string_ops'])
    with pytest.raises(ValueError, match='no family to train on'): split_families('arithmetic', ['arithmetic'])


def test_eval_jobs_are_fresh_deterministic_and_disjoint():
    jobs = eval_jobs(['date_math', 'arithmetic'], 4, seed=2)
    assert jobs == eval_jobs(['date_math', 'arithmetic'], 4, seed=2)
    assert len(jobs) == 8 and len(set(jobs)) == 8 and [b for b, _ in jobs[:4]] == ['date_math'] * 4
    assert all(s >= EVAL_SEED_OFFSET >= 10**6 for _, s in jobs)
    assert jobs[0] == ('date_math', EVAL_SEED_OFFSET + 2 * EVAL_BLOCK)
    assert not set(eval_jobs(['arithmetic'], EVAL_BLOCK, seed=0)) & set(eval_jobs(['arithmetic'], EVAL_BLOCK, seed=1))


@pytest.mark.parametrize('args,match', [((['chess'], 2), 'unknown'), ((['arithmetic'], 0), 'n_per_family'),
                                        ((['arithmetic'], EVAL_BLOCK + 1), 'n_per_family'), ((['arithmetic'], 2, -1), 'seed')])
def test_eval_jobs_errors(args, match):
    with pytest.raises(ValueError, match=match): eval_jobs(*args)


# evaluate
def test_evaluate_runs_every_agent_on_the_same_jobs():
    seen = []
    def run_fn(agent, jobs):
        seen.append((agent, list(jobs)))
        return [rec(agent, b, s, 0.5) for b, s in reversed(jobs)]   # order does not matter, coverage does
    jobs = eval_jobs(['date_math'], 3)
    out = evaluate({'a': 'agent-a', 'b': 'agent-b'}, jobs, run_fn)
    assert list(out) == ['a', 'b'] and [len(v) for v in out.values()] == [3, 3]
    assert seen == [('agent-a', jobs), ('agent-b', jobs)]


def test_evaluate_refuses_missing_or_extra_records():
    jobs = eval_jobs(['date_math'], 3)
    with pytest.raises(ValueError, match='missing'): evaluate({'a': 1}, jobs, lambda a, j: [rec('a', *j[0], 0.1)])
    with pytest.raises(ValueError, match='extra'):
        evaluate({'a': 1}, jobs, lambda a, j: [rec('a', b, s, 0.1) for b, s in j] + [rec('a', 'arithmetic', 5, 0.1)])
    with pytest.raises(ValueError, match='duplicates'): evaluate({'a': 1}, jobs + jobs[:1], lambda a, j: [])


# transfer_table / verdict
def hand_results():
    "Held-out family date_math, trained family arithmetic; totals chosen so the means are easy to check by hand."
    jobs = [('date_math', 1), ('date_math', 2), ('date_math', 3), ('date_math', 4), ('arithmetic', 1), ('arithmetic', 2)]
    untrained = [0.2, 0.4, 0.3, 0.5, 0.6, 0.6]
    trained = [0.5, 0.6, 0.6, 0.7, 0.7, 0.9]          # held-out diffs: 0.3, 0.2, 0.3, 0.2 -> mean 0.25
    scripted = [0.1, 0.1, 0.0, 0.2, 0.3, 0.3]
    mk = lambda name, xs: [rec(name, b, s, x, validated_on=None if x == 0 else 1) for (b, s), x in zip(jobs, xs)]
    return dict(untrained=mk('u', untrained), trained=mk('t', trained), scripted=mk('s', scripted))


def test_transfer_table_hand_built():
    rows = transfer_table(hand_results(), ['date_math'])
    assert [(r['agent'], r['split'], r['n']) for r in rows] == [
        ('untrained', 'held-out', 4), ('untrained', 'trained', 2), ('trained', 'held-out', 4), ('trained', 'trained', 2),
        ('scripted', 'held-out', 4), ('scripted', 'trained', 2)]
    by = {(r['agent'], r['split']): r for r in rows}
    assert by['untrained', 'held-out']['mean'] == pytest.approx(0.35)
    assert by['trained', 'held-out']['mean'] == pytest.approx(0.6)
    assert by['trained', 'trained']['mean'] == pytest.approx(0.8)
    assert by['scripted', 'held-out']['validation_rate'] == pytest.approx(0.75)   # one episode never validated
    assert by['scripted', 'held-out']['not_validated'] == {'unknown': 1}   # these records do not say how they ended
    assert by['trained', 'held-out']['not_validated'] == {}
    assert by['trained', 'held-out']['uplift_mean'] == pytest.approx(0.6)
    for r in rows: assert r['lo'] <= r['mean'] <= r['hi']
    assert set(rows[0]) == {'agent', 'split', 'n', 'ungraded', 'mean', 'lo', 'hi', 'validation_rate', 'uplift_mean',
                            'not_validated'}
    assert all(r['ungraded'] == 0 for r in rows)


def test_transfer_table_skips_an_empty_split():
    res = {'a': [rec('a', 'date_math', 1, 0.4)]}
    assert [r['split'] for r in transfer_table(res, ['date_math'])] == ['held-out']


def test_ungraded_episodes_are_counted_never_averaged():
    "An episode whose inner job died (reward {}) is left out of means and pairs, and counted in the table."
    dead = lambda a, s: SimpleNamespace(agent=a, brief='date_math', seed=s, attempts=1, validated_on=1, reward={}, inner=None)
    res = {'trained': [rec('trained', 'date_math', 0, 0.6), rec('trained', 'date_math', 1, 0.8), dead('trained', 2)],
           'untrained': [rec('untrained', 'date_math', 0, 0.2), dead('untrained', 1), rec('untrained', 'date_math', 2, 0.4)]}
    rows = {r['agent']: r for r in transfer_table(res, ['date_math'])}
    assert (rows['trained']['n'], rows['trained']['ungraded'], rows['trained']['mean']) == (2, 1, pytest.approx(0.7))
    v = verdict(res, ['date_math'], 'trained', 'untrained')
    assert v['diff']['n'] == 1 and v['diff']['mean'] == pytest.approx(0.4)   # only seed 0 is graded on both sides


def test_verdict_hand_built():
    res = hand_results()
    res['trained'] = list(reversed(res['trained']))    # pairing is by job, not by list order
    v = verdict(res, ['date_math'], 'trained', 'untrained', baselines=['scripted'])
    assert v['diff']['mean'] == pytest.approx(0.25) and v['diff']['n'] == 4
    assert 0.2 - 1e-9 <= v['diff']['lo'] <= v['diff']['hi'] <= 0.3 + 1e-9 and v['improved'] is True
    assert v['trained_ci']['mean'] == pytest.approx(0.6) and v['untrained_ci']['mean'] == pytest.approx(0.35)
    s = v['baselines']['scripted']
    assert s['ci']['mean'] == pytest.approx(0.1) and s['overlap'] is False and s['trained_above'] is True
    assert v['reference']['diff'] == REFERENCE_TRANSFER['diff'] == 0.146
    assert v['reference']['in_ci'] is False and v['reference']['diff_minus_reference'] == pytest.approx(0.104)
    assert 'above 0' in v['summary'] and '+0.250' in v['summary'] and 'outside this interval' in v['summary']
    json.dumps(v)                                        # plain JSON types only


def test_verdict_does_not_claim_an_improvement_it_cannot_show():
    res = hand_results()
    v = verdict({'t': res['untrained'], 'u': res['untrained'], 's': res['untrained']}, ['date_math'], 't', 'u', ['s'])
    assert v['diff'] == dict(mean=0.0, lo=0.0, hi=0.0, n=4) and v['improved'] is False
    assert v['baselines']['s']['overlap'] is True and 'does not show' in v['summary'] and 'overlap' in v['summary']
    noisy = {'t': [rec('t', 'date_math', i, x) for i, x in enumerate([0.9, 0.1, 0.8, 0.2])],
             'u': [rec('u', 'date_math', i, 0.5) for i in range(4)]}
    v = verdict(noisy, ['date_math'], 't', 'u')
    assert v['diff']['lo'] < 0 < v['diff']['hi'] and not v['improved'] and 'includes 0' in v['summary']


def test_verdict_errors():
    res = hand_results()
    with pytest.raises(ValueError, match='no results'): verdict(res, ['date_math'], 'trained', 'nobody')
    with pytest.raises(ValueError, match='share no held-out job'): verdict(res, ['string_ops'], 'trained', 'untrained')
    res['trained'].append(res['trained'][0])
    with pytest.raises(ValueError, match='appears twice'): verdict(res, ['date_math'], 'trained', 'untrained')


# plot / write
def test_plot_transfer_writes_a_png(tmp_path):
    p = plot_transfer(transfer_table(hand_results(), ['date_math']), tmp_path / 'sub' / 'transfer.png')
    assert p.read_bytes()[:8] == PNG and p.stat().st_size > 1000


def test_write_transfer_round_trips_atomically(tmp_path):
    res = hand_results()
    table, v = transfer_table(res, ['date_math']), verdict(res, ['date_math'], 'trained', 'untrained')
    p = write_transfer(tmp_path, table, v)
    assert p == tmp_path / 'transfer.json'
    assert json.loads(p.read_text()) == dict(table=table, verdict=v)
    assert sorted(x.name for x in tmp_path.iterdir()) == ['transfer.json']   # no temp file left behind


def test_write_transfer_keeps_the_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    (tmp_path / 'transfer.json').write_text('{"old": true}')
    def boom(*a): raise OSError('disk full')
    monkeypatch.setattr(os, 'replace', boom)
    with pytest.raises(OSError, match='disk full'): write_transfer(tmp_path, [], {})
    assert (tmp_path / 'transfer.json').read_text() == '{"old": true}'
    assert sorted(x.name for x in tmp_path.iterdir()) == ['transfer.json']


# the modes: one greedy episode per agent and family
def _modes(trained_arith=0.6, trained_cs=0.77, cs_graded=True):
    knobs = lambda steps: dict(level=2, max_steps=steps, learning_rate='3.0e-4')
    t = [rec('trained', 'arithmetic', 5, trained_arith), rec('trained', 'customer_support', 5, trained_cs)]
    h = [rec('h', 'arithmetic', 5, 0.85), rec('h', 'customer_support', 5, 0.78)]
    t[0].knobs, t[1].knobs, h[0].knobs, h[1].knobs = knobs(16), knobs(48), knobs(48), knobs(48)
    if not cs_graded: t[1].reward = {}
    return {'trained': t, 'scripted-heuristic': h}


def test_mode_rows_put_the_held_out_family_first_and_read_each_decision():
    rows = mode_rows(_modes(), ['customer_support'], decision=lambda r: r.knobs)
    assert [(r['brief'], r['agent'], r['held']) for r in rows] == [
        ('customer_support', 'trained', True), ('customer_support', 'scripted-heuristic', True),
        ('arithmetic', 'trained', False), ('arithmetic', 'scripted-heuristic', False)]
    assert rows[0]['decision'] == dict(level=2, max_steps=48, learning_rate='3.0e-4') and rows[2]['total'] == 0.6
    assert all(r['decision'] is None for r in mode_rows(_modes(), ['customer_support']))   # no reader: not read


def test_mode_text_counts_same_decisions_and_wins_and_names_the_held_out_family():
    text = mode_text(mode_rows(_modes(), ['customer_support'], decision=lambda r: r.knobs))
    assert 'same decision as scripted-heuristic on 1 of 2 families and earned at least as much on 0.' in text
    assert 'Held out, customer_support: trained 0.770 against scripted-heuristic 0.780' in text
    even = mode_text(mode_rows(_modes(trained_arith=0.85), ['customer_support'], decision=lambda r: r.knobs))
    assert 'at least as much on 1.' in even
    assert text.endswith('It makes that decision on no trained family.')       # held out 48 steps, arithmetic 16
    twin = _modes()
    twin['trained'][0].knobs = dict(twin['trained'][1].knobs)
    assert mode_text(mode_rows(twin, ['customer_support'], decision=lambda r: r.knobs)).endswith(
        'Its decision there is the one it makes on arithmetic.')


def test_mode_text_says_what_could_not_be_graded():
    "An ungraded mode episode is not counted as a loss or a win: the sentence says it was not graded."
    text = mode_text(mode_rows(_modes(cs_graded=False), ['customer_support'], decision=lambda r: r.knobs))
    assert 'on 0 of 1 families and earned at least as much on 0 (1 not graded).' in text and 'Held out' not in text
    none = {a: [r for r in rs if r.brief == 'customer_support'] for a, rs in _modes(cs_graded=False).items()}
    assert mode_text(mode_rows(none, ['customer_support'])).startswith('No family has a graded mode episode')


def test_write_transfer_keeps_the_mode_rows_when_given(tmp_path):
    recs = {'trained': [rec('t', 'date_math', 1, 0.5)], 'untrained': [rec('u', 'date_math', 1, 0.4)]}
    v = verdict(recs, ['date_math'], 'trained', 'untrained')
    assert 'mode' not in json.loads(write_transfer(tmp_path, transfer_table(recs, ['date_math']), v).read_text())
    mode = mode_rows(recs, ['date_math'])
    saved = json.loads(write_transfer(tmp_path, transfer_table(recs, ['date_math']), v, mode).read_text())
    assert saved['mode'] == mode
