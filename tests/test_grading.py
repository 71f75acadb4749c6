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


def test_uplift_regression_clips_to_zero():
    assert uplift(0.5, 0.3) == 0.0
    assert uplift(0.5, 0.3, 'raw') == 0.0


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
    assert WEIGHTS['reference'] == Weights(0.35, 0.60, 0.05, 0.0)
    assert WEIGHTS['mock'] == Weights(1.0, 0.0, 0.0, 0.0)
    assert get_weights('mock') is WEIGHTS['mock']
    assert get_weights({'validation': 0.5, 'uplift': 0.5, 'speed': 0.0}) == Weights(0.5, 0.5, 0.0)
    assert Weights(0.35, 0.60, 0.05 + 5e-7) is not None  # within 1e-6 of 1
    with pytest.raises(FrozenInstanceError): WEIGHTS['reference'].speed = 0.5


def test_unknown_preset_lists_accepted():
    with pytest.raises(ValueError, match='reference, mock'): get_weights('fast')
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


def test_failed_job_keeps_validation_only():
    r = episode_reward(1, pre=0.3, post=None, train_seconds=100)
    assert (r.validation, r.uplift, r.speed) == (1.0, 0.0, 0.0)
    assert r.total == pytest.approx(0.35)


@pytest.mark.parametrize('kw,total', [
    # validated first try, 0.30 -> 0.51 (g = 0.3), half the budget: 0.35 + 0.6*0.3 + 0.05*0.5
    (dict(attempt=1, pre=0.30, post=0.51, train_seconds=900), 0.35 + 0.18 + 0.025),
    # third try, same job: 0.35*0.6 + 0.18 + 0.025
    (dict(attempt=3, pre=0.30, post=0.51, train_seconds=900), 0.21 + 0.18 + 0.025),
    # fast but flat, 10% of the budget: 0.35 + 0 + 0.05*0.9
    (dict(attempt=1, pre=0.30, post=0.30, train_seconds=180), 0.395),
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
    assert d == {'validation': 0.8, 'uplift': 0.5, 'speed': 0.5, 'tokens': 0.0, 'weights': 'reference', 'total': 0.605}
    assert EpisodeReward(**d) == r
    assert episode_reward(1, pre=0.2, post=0.6, weights=Weights(0.5, 0.5, 0.0)).weights == 'custom'


# quiz bank
def test_quiz_bank_shape_and_numeric_answers():
    bank = yaml.safe_load(QUIZ.read_text())
    assert 4 <= len(bank) <= 6 and len({q['id'] for q in bank}) == len(bank)
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
        'grading-fast-but-flat': episode_reward(1, pre=0.3, post=0.3, train_seconds=180, budget_seconds=1800,
                                                weights=Weights(0.35, 0.55, 0.10)).total,
    }
    for qid, value in computed.items():
        assert by_id[qid]['answer'] == pytest.approx(value, abs=by_id[qid]['tolerance'])
