"""Edge cases and hand-computed totals for agentforge.grading (the episode reward)."""
import json
import math
from dataclasses import FrozenInstanceError, asdict
from pathlib import Path

import pytest
import yaml

from agentforge.grading import (MAX_ATTEMPTS, WEIGHTS, EpisodeReward, Weights, episode_reward, get_weights,
                                token_efficiency, train_speed_score, uplift, validation_score)

QUIZ = Path(__file__).resolve().parents[1] / 'nbs' / 'quizzes' / '01_grading.yaml'


# validation
@pytest.mark.parametrize('attempt,expected', [(1, 1.0), (2, 0.8), (3, 0.6), (None, 0.0)])
def test_validation_score(attempt, expected):
    assert validation_score(attempt) == pytest.approx(expected)


def test_validation_past_limit_is_an_error():
    assert MAX_ATTEMPTS == 3
    with pytest.raises(ValueError, match='max_attempts=3'): validation_score(4)


def test_validation_clamps_to_zero_with_a_long_limit():
    assert validation_score(4, max_attempts=10) == pytest.approx(0.4)
    assert [validation_score(a, max_attempts=10) for a in (6, 7, 10)] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize('attempt', [0, -1, True, 1.5, '1'])
def test_validation_bad_attempt(attempt):
    with pytest.raises(ValueError, match='attempt'): validation_score(attempt)


def test_validation_bad_limit():
    with pytest.raises(ValueError, match='max_attempts'): validation_score(1, max_attempts=0)


# uplift
def test_uplift_kinds():
    assert uplift(0.2, 0.6) == pytest.approx(0.5)
    assert uplift(0.2, 0.6, 'raw') == pytest.approx(0.4)
    assert uplift(0.2, 0.6, 'post') == pytest.approx(0.6)
    assert uplift(None, 0.6, 'post') == pytest.approx(0.6)


def test_uplift_at_ceiling_is_zero():
    assert uplift(1.0, 1.0) == 0.0
    assert uplift(1.0, 1.0, 'raw') == 0.0


def test_uplift_regression_clips_to_the_floor():
    assert uplift(0.5, 0.3) == 0.0 and uplift(0.5, 0.3, 'raw') == 0.0   # floor 0 (the default): harm is invisible
    assert uplift(0.5, 0.3, 'raw', floor=-0.25) == pytest.approx(-0.2)
    assert uplift(0.9, 0.0, 'raw', floor=-0.25) == -0.25 and uplift(0.5, 0.0, floor=-1.0) == -1.0
    with pytest.raises(ValueError, match='floor'): uplift(0.5, 0.3, floor=0.2)
    with pytest.raises(ValueError, match='floor'): uplift(0.5, 0.3, floor=-2)


@pytest.mark.parametrize('pre,post,name', [(-0.1, 0.5, 'pre'), (1.2, 0.5, 'pre'), (0.2, 1.01, 'post'),
                                           (0.2, float('nan'), 'post'), ('0.2', 0.5, 'pre'), (0.2, None, 'post')])
def test_uplift_invalid_scores(pre, post, name):
    with pytest.raises(ValueError, match=name): uplift(pre, post)


def test_uplift_needs_pre_and_a_known_kind():
    with pytest.raises(ValueError, match='pre is required'): uplift(None, 0.5)
    with pytest.raises(ValueError, match='normalized, raw, post'): uplift(0.2, 0.5, kind='log')


# speed and tokens
def test_speed_gated_on_failure():
    assert train_speed_score(10, 1800, succeeded=False) == 0.0
    assert train_speed_score(None, 1800, succeeded=False) == 0.0
    assert train_speed_score(180, 1800, succeeded=True) == pytest.approx(0.9)
    assert train_speed_score(2400, 1800, succeeded=True) == 0.0


def test_speed_and_tokens_bad_inputs():
    with pytest.raises(ValueError, match='budget_seconds'): train_speed_score(10, 0, True)
    with pytest.raises(ValueError, match='train_seconds'): train_speed_score(-1, 100, True)
    with pytest.raises(ValueError, match='token_budget'): token_efficiency(10, 0)
    assert token_efficiency(3000, 4000) == pytest.approx(0.25)
    assert token_efficiency(5000, 4000) == 0.0


# weights
@pytest.mark.parametrize('kw,match', [(dict(validation=0.5, uplift=0.6, speed=-0.1), 'speed=-0.1'),
                                      (dict(validation=0.5, uplift=0.6, speed=0.1), 'sum to 1'),
                                      (dict(validation=float('nan'), uplift=0.5, speed=0.5), 'validation=nan'),
                                      (dict(validation=0.5, uplift=0.5, speed=math.inf), 'speed=inf')])
def test_bad_weights(kw, match):
    with pytest.raises(ValueError, match=match): Weights(**kw)


def test_weights_presets_and_resolution():
    ref = WEIGHTS['reference']   # 0.35 validation + 0.60 (0.25 post + 0.75 uplift) + 0.05 speed, raw uplift floored
    assert (ref.validation, ref.uplift, ref.post, ref.speed, ref.tokens) == (0.35, 0.45, 0.15, 0.05, 0.0)
    assert (ref.quality, ref.uplift_kind, ref.floor) == (pytest.approx(0.60), 'raw', -0.25)
    assert WEIGHTS['v0'] == Weights(0.35, 0.60, 0.05, 0.0) and WEIGHTS['v0'].uplift_kind == 'normalized'
    assert WEIGHTS['mock'] == Weights(1.0, 0.0, 0.0, 0.0)
    assert get_weights('mock') is WEIGHTS['mock']
    assert get_weights({'validation': 0.5, 'uplift': 0.5, 'speed': 0.0}) == Weights(0.5, 0.5, 0.0)
    assert Weights(0.35, 0.60, 0.05 + 5e-7) is not None  # within 1e-6 of 1
    with pytest.raises(FrozenInstanceError): WEIGHTS['reference'].speed = 0.5


def test_unknown_preset_lists_accepted():
    with pytest.raises(ValueError, match='reference, v0, mock'): get_weights('fast')
    with pytest.raises(ValueError, match='accepted: validation'): get_weights({'validation': 1.0, 'gain': 0.0})
    with pytest.raises(TypeError): get_weights(0.5)


# episode reward
def test_mock_preset_ignores_uplift():
    flat = episode_reward(2, pre=0.3, post=0.3, train_seconds=60, weights='mock')
    gain = episode_reward(2, pre=0.3, post=0.9, train_seconds=60, weights='mock')
    assert flat.total == gain.total == pytest.approx(0.8)
    assert gain.uplift == pytest.approx(0.6 / 0.7) and gain.weights == 'mock'


def test_never_validated_scores_zero_and_cannot_have_post():
    r = episode_reward(None, pre=0.3, tokens_used=100, token_budget=1000)
    assert (r.validation, r.uplift, r.speed, r.tokens, r.total) == (0.0, 0.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match='never validated'): episode_reward(None, pre=0.3, post=0.5)


def test_harmful_scores_below_lazy_under_reference_only():
    lazy, harm = dict(attempt=1, pre=0.3, post=0.3, train_seconds=180), dict(attempt=1, pre=0.3, post=0.1, train_seconds=180)
    assert episode_reward(**harm).total < episode_reward(**lazy).total - 0.1
    assert episode_reward(**harm, weights='v0').total == episode_reward(**lazy, weights='v0').total


def test_quality_mixes_post_and_uplift_by_their_weights():
    r = episode_reward(1, pre=0.2, post=0.6, train_seconds=0)
    assert r.quality == pytest.approx(0.25 * 0.6 + 0.75 * 0.4) and r.post == 0.6
    assert episode_reward(1, pre=0.2, post=0.6, weights='v0').quality == pytest.approx(0.5)   # no post term: uplift


def test_failed_job_keeps_validation_only():
    r = episode_reward(1, pre=0.3, post=None, train_seconds=100)
    assert (r.validation, r.uplift, r.speed) == (1.0, 0.0, 0.0)
    assert r.total == pytest.approx(0.35)


@pytest.mark.parametrize('kw,total', [
    # reference: validated first try, 0.30 -> 0.51 (raw 0.21), half the budget: 0.35 + 0.45*0.21 + 0.15*0.51 + 0.05*0.5
    (dict(attempt=1, pre=0.30, post=0.51, train_seconds=900), 0.35 + 0.0945 + 0.0765 + 0.025),
    # third try, same job: 0.35*0.6 + ...
    (dict(attempt=3, pre=0.30, post=0.51, train_seconds=900), 0.21 + 0.0945 + 0.0765 + 0.025),
    # fast but flat, 10% of the budget: 0.35 + 0 + 0.15*0.3 + 0.05*0.9
    (dict(attempt=1, pre=0.30, post=0.30, train_seconds=180), 0.44),
    # harmful, 0.30 -> 0.05: raw -0.25 (at the floor): 0.35 - 0.1125 + 0.0075 + 0.045
    (dict(attempt=1, pre=0.30, post=0.05, train_seconds=180), 0.29),
    # v0 (normalised, clipped at 0), the same jobs: 0.35 + 0.6*0.3 + 0.025; 0.395; and harm scores like the flat job
    (dict(attempt=1, pre=0.30, post=0.51, train_seconds=900, weights='v0'), 0.35 + 0.18 + 0.025),
    (dict(attempt=1, pre=0.30, post=0.30, train_seconds=180, weights='v0'), 0.395),
    (dict(attempt=1, pre=0.30, post=0.05, train_seconds=180, weights='v0'), 0.395),
    # custom weights with tokens: 0.4*0.8 + 0.4*0.5 + 0.1*0.75 + 0.1*0.25
    (dict(attempt=2, pre=0.2, post=0.6, train_seconds=450, tokens_used=3000, token_budget=4000,
          weights=Weights(0.4, 0.4, 0.1, 0.1)), 0.32 + 0.2 + 0.075 + 0.025),
])
def test_hand_computed_totals(kw, total):
    assert episode_reward(**kw).total == pytest.approx(total)


def test_fast_but_flat_pilot_finding():
    a = dict(attempt=1, pre=0.30, post=0.30, train_seconds=180, budget_seconds=1800)
    b = dict(attempt=1, pre=0.30, post=0.38, train_seconds=1710, budget_seconds=1800)
    pilot = Weights(0.35, 0.55, 0.10)
    assert episode_reward(**a, weights=pilot).total > episode_reward(**b, weights=pilot).total
    assert episode_reward(**b).total > episode_reward(**a).total


def test_episode_reward_is_json_friendly():
    r = episode_reward(2, pre=0.2, post=0.6, train_seconds=900)
    d = json.loads(json.dumps(asdict(r)))
    assert d == {'validation': 0.8, 'uplift': 0.4, 'speed': 0.5, 'tokens': 0.0, 'weights': 'reference', 'total': 0.575,
                 'post': 0.6, 'quality': 0.45}
    assert EpisodeReward(**d) == r
    assert episode_reward(1, pre=0.2, post=0.6, weights=Weights(0.5, 0.5, 0.0)).weights == 'custom'


# quiz bank
def test_quiz_bank_shape_and_numeric_answers():
    bank = yaml.safe_load(QUIZ.read_text())
    assert len(bank) >= 5 and len({q['id'] for q in bank}) == len(bank)
    for q in bank:
        assert q['type'] in ('single', 'multi', 'numeric') and q['question']
        if q['type'] == 'numeric':
            assert {'answer', 'tolerance', 'feedback'} <= set(q)
        else:
            assert all({'text', 'correct', 'feedback'} <= set(a) for a in q['answers'])
            n_correct = sum(a['correct'] for a in q['answers'])
            assert n_correct == 1 if q['type'] == 'single' else n_correct >= 1
    by_id = {q['id']: q for q in bank}
    computed = {
        'grading-total-second-try': episode_reward(2, pre=0.2, post=0.6, train_seconds=900, budget_seconds=1800).total,
        'grading-normalised-gain': uplift(0.90, 0.95),
        'grading-job-quality': episode_reward(1, pre=0.3, post=0.5).quality,
        'grading-fast-but-flat': episode_reward(1, pre=0.3, post=0.3, train_seconds=180, budget_seconds=1800,
                                                weights=Weights(0.35, 0.55, 0.10)).total,
    }
    for qid, value in computed.items():
        assert by_id[qid]['answer'] == pytest.approx(value, abs=by_id[qid]['tolerance'])
